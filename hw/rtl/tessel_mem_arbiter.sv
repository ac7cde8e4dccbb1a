// tessel_mem_arbiter: the four master ports of the accelerator onto its one AXI4 master port
// (docs/microarchitecture.md sections 2.2 and 8.1).
//
// Masters (index = AXI ID): 0 fetch, 1 load, 2 compute, 3 store (the only writer). Each presents
// the bursts of a sequence (req_valid, req_last on the last burst, req_write for an AW burst).
// One burst is granted per cycle, on AR or AW; the grant is the AXI handshake
// (ARVALID && ARREADY, or AWVALID && AWREADY):
//  * while a master holds the lock only it is presented, until the last burst of its sequence is
//    granted (the lock is released in that cycle; another master can win in the next one);
//  * otherwise the lowest-index (highest-priority: fetch > load > compute > store) requesting
//    master is presented, and takes the lock when its granted burst is not the last one.
// Read beats go to the master named by RID (RREADY is always 1). W beats come from the writer
// (store); a write response (BVALID, BREADY always 1) is its wr_resp.
//
// Units: addresses in bytes, lengths in beats - 1, size = log2 bus bytes, burst type INCR.
module tessel_mem_arbiter
  import tessel_isa_pkg::*;
#(
    localparam int N = 4,                  // masters
    localparam int WRITER = 3,             // the master that owns the W channel
    localparam int WB = BUS_WIDTH / 8      // bus bytes
) (
    input  logic                         clk,
    input  logic                         rst_n,
    // master ports (section 8.1)
    input  logic [N-1:0]                 req_valid,
    input  logic [N-1:0]                 req_last,
    input  logic [N-1:0]                 req_write,
    input  logic [N-1:0][63:0]           req_addr,
    input  logic [N-1:0][7:0]            req_len,
    output logic [N-1:0]                 req_grant,
    output logic [N-1:0]                 rd_valid,
    output logic [BUS_WIDTH-1:0]         rd_data,
    // the writer's W channel and write responses
    input  logic                         wr_valid,
    input  logic                         wr_last,
    input  logic [BUS_WIDTH-1:0]         wr_data,
    input  logic [WB-1:0]                wr_strb,
    output logic                         wr_ready,
    output logic                         wr_resp,
    // AXI4 master
    output logic                         arvalid,
    input  logic                         arready,
    output logic [63:0]                  araddr,
    output logic [1:0]                   arid,
    output logic [7:0]                   arlen,
    output logic [2:0]                   arsize,
    output logic [1:0]                   arburst,
    input  logic                         rvalid,
    output logic                         rready,
    input  logic [BUS_WIDTH-1:0]         rdata,
    input  logic [1:0]                   rid,
    input  logic                         rlast,
    input  logic [1:0]                   rresp,
    output logic                         awvalid,
    input  logic                         awready,
    output logic [63:0]                  awaddr,
    output logic [1:0]                   awid,
    output logic [7:0]                   awlen,
    output logic [2:0]                   awsize,
    output logic [1:0]                   awburst,
    output logic                         wvalid,
    input  logic                         wready,
    output logic [BUS_WIDTH-1:0]         wdata,
    output logic [WB-1:0]                wstrb,
    output logic                         wlast,
    input  logic                         bvalid,
    output logic                         bready,
    input  logic [1:0]                   bid,
    input  logic [1:0]                   bresp
);
  localparam logic [1:0] BURST_INCR = 2'b01;

  logic       lock_q;    // a master holds the lock
  logic [1:0] lock_id_q; // ... this one
  logic [1:0] sel;       // the master presented in this cycle
  logic       sel_valid; // it has a burst
  logic       granted;

  always_comb begin
    sel = lock_id_q;
    if (!lock_q) begin
      sel = 2'(N - 1);
      for (int m = N - 1; m >= 0; m--) begin
        if (req_valid[m]) sel = 2'(m);
      end
    end
    sel_valid = req_valid[sel];
    arvalid = sel_valid && !req_write[sel];
    awvalid = sel_valid && req_write[sel];
    granted = (arvalid && arready) || (awvalid && awready);
    req_grant = '0;
    req_grant[sel] = granted;
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      lock_q <= 1'b0;
      lock_id_q <= '0;
    end else if (granted) begin
      lock_q <= !req_last[sel];
      lock_id_q <= sel;
    end
  end

  // AR / AW: the presented master's burst.
  assign araddr = req_addr[sel];
  assign arlen = req_len[sel];
  assign arid = sel;
  assign arsize = 3'($clog2(WB));
  assign arburst = BURST_INCR;
  assign awaddr = req_addr[sel];
  assign awlen = req_len[sel];
  assign awid = sel;
  assign awsize = 3'($clog2(WB));
  assign awburst = BURST_INCR;

  // R: routed by ID.
  assign rready = 1'b1;
  assign rd_data = rdata;
  always_comb begin
    for (int m = 0; m < N; m++) rd_valid[m] = rvalid && rid == 2'(m);
  end

  // W / B: the writer's.
  assign wvalid = wr_valid;
  assign wdata = wr_data;
  assign wstrb = wr_strb;
  assign wlast = wr_last;
  assign wr_ready = wready;
  assign bready = 1'b1;
  assign wr_resp = bvalid && bid == 2'(WRITER);

  // Beat boundaries (rlast) and response codes are not needed: lengths are known, and the DRAM
  // model reports errors itself.
  logic unused_axi;
  assign unused_axi = ^{rlast, rresp, bresp};
endmodule
