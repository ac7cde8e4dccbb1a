// tessel_sram: a scratchpad of DEPTH rows of WIDTH bits (docs/microarchitecture.md section 8).
//
// * Writes: WLANES write lanes. Lane l writes row waddr[l] with wdata[l] at the end of a cycle in
//   which we[l] is high. The lanes enabled in one cycle must address distinct rows that are
//   consecutive (any start row): this is how a DMA beat that carries several elements narrower
//   than the bus is written in one cycle (tessel_dma_read, LANES).
// * Reads: RPORTS synchronous read ports. Port p reads, in a cycle in which re[p] is high, the
//   RLANES consecutive rows raddr[p] .. raddr[p] + RLANES - 1 (row indices wrap at DEPTH);
//   rdata[p][i] holds row raddr[p] + i from the next cycle on, and keeps it while re[p] is low.
//   A read of a row that is written in the same cycle returns the row's old contents.
//
// Structure: the rows are interleaved over BANKS = max(WLANES, RLANES) single-write-port banks
// (row r lives in bank r mod BANKS at index r / BANKS), so consecutive rows never meet in one bank.
// Each bank has one write port (fed by the lane that addresses it) and one read port per
// read port of the scratchpad. DEPTH must be a multiple of BANKS; BANKS a power of two.
//
// Units: addresses are row indices (elements of the scratchpad), data is bits.
module tessel_sram #(
    parameter  int WIDTH  = 8,      // bits per row
    parameter  int DEPTH  = 16,     // rows
    parameter  int WLANES = 1,      // write lanes (consecutive rows per cycle)
    parameter  int RPORTS = 1,      // independent synchronous read ports
    parameter  int RLANES = 1,      // consecutive rows returned by one read
    localparam int AW     = DEPTH > 1 ? $clog2(DEPTH) : 1
) (
    input  logic                                clk,
    input  logic [WLANES-1:0]                   we,
    input  logic [WLANES-1:0][AW-1:0]           waddr,
    input  logic [WLANES-1:0][WIDTH-1:0]        wdata,
    input  logic [RPORTS-1:0]                   re,
    input  logic [RPORTS-1:0][AW-1:0]           raddr,
    output logic [RPORTS-1:0][RLANES-1:0][WIDTH-1:0] rdata
);
  localparam int BANKS = WLANES > RLANES ? WLANES : RLANES;
  localparam int LB = $clog2(BANKS);  // bank-select bits (0 for one bank)
  localparam int BDEPTH = DEPTH / BANKS;

  // Elaboration-time check of the parameters.
  if (BANKS != (1 << LB) || DEPTH % BANKS != 0 || DEPTH < 1 || WIDTH < 1) begin : g_bad_params
    $error("tessel_sram: DEPTH %0d must be a positive multiple of the power-of-two bank count %0d",
           DEPTH, BANKS);
  end

  if (BANKS == 1) begin : g_flat
    logic [WIDTH-1:0] mem[DEPTH];
    always_ff @(posedge clk) begin
      if (we[0]) mem[waddr[0]] <= wdata[0];
    end
    for (genvar p = 0; p < RPORTS; p++) begin : g_rd
      always_ff @(posedge clk) begin
        if (re[p]) rdata[p][0] <= mem[raddr[p]];
      end
    end
  end else begin : g_banked
    localparam int BAW = AW - LB > 0 ? AW - LB : 1;  // index bits inside one bank
    // bank_q[p][b]: the row bank b read for port p in the previous read cycle.
    logic [RPORTS-1:0][BANKS-1:0][WIDTH-1:0] bank_q;
    logic [RPORTS-1:0][LB-1:0] rot_q;  // raddr mod BANKS of the previous read, per port

    for (genvar b = 0; b < BANKS; b++) begin : g_bank
      logic [WIDTH-1:0] mem[BDEPTH];
      always_ff @(posedge clk) begin
        for (int l = 0; l < WLANES; l++) begin
          if (we[l] && waddr[l][LB-1:0] == LB'(b)) mem[BAW'(waddr[l] >> LB)] <= wdata[l];
        end
      end
      for (genvar p = 0; p < RPORTS; p++) begin : g_rd
        // The row of raddr .. raddr + RLANES - 1 that lives in this bank: raddr + i with
        // i = (b - raddr) mod BANKS; read only when i < RLANES.
        logic [LB-1:0] i;
        logic [AW-1:0] row;
        assign i = LB'(b) - raddr[p][LB-1:0];
        assign row = raddr[p] + AW'(i);
        always_ff @(posedge clk) begin
          if (re[p] && 32'(i) < RLANES) bank_q[p][b] <= mem[BAW'(row >> LB)];
        end
      end
    end

    for (genvar p = 0; p < RPORTS; p++) begin : g_out
      always_ff @(posedge clk) begin
        if (re[p]) rot_q[p] <= raddr[p][LB-1:0];
      end
      for (genvar i = 0; i < RLANES; i++) begin : g_lane
        logic [LB-1:0] bank;
        assign bank = rot_q[p] + LB'(i);
        assign rdata[p][i] = bank_q[p][bank];
      end
    end
  end
endmodule
