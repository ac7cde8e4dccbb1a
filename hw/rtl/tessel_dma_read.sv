// tessel_dma_read: the DMA read engine of a LOAD (docs/microarchitecture.md sections 5.1, 2.1,
// 8.2). It requests the bursts of the instruction on its master port (section 8.1, read side),
// writes every arriving beat into the scratchpad in the cycle it arrives, and writes the zero
// padding one element per cycle in the cycles without a beat.
//
// Timing (S = the cycle `start` is high, insn valid in that cycle only):
//  * x_size == 0, or y_size == 0 without pads: `done` in S (combinational from start), no writes.
//  * y_size == 0 with P pads: pads in S+1 .. S+P, done in S+P.
//  * otherwise: `req_valid` from S+1; bursts presented one after another (the next one in the cycle
//    after each grant), every row as its own bursts of at most 256 beats; each beat written in
//    the cycle it arrives (rd_valid); pads in every cycle from S+1 without a beat; `done` in the
//    cycle of the last beat or the last pad, whichever is later.
//  * `busy` is high in S+1 .. D.
//
// Units: insn.dram_base and insn.x_stride in elements of ELEM_BITS / 8 bytes; insn.sram_base and
// waddr in scratchpad rows (elements); req_addr in bytes (bus aligned); req_len in beats - 1.
//
// Element sizes (all powers of two, as are bus widths):
//  * ELEM_BITS >= BUS_WIDTH: every row start is bus aligned; an element takes ELEM_BITS/BUS_WIDTH
//    beats (the first beat is the least significant part) and is written on lane 0 at its last
//    beat. LANES = 1.
//  * ELEM_BITS < BUS_WIDTH: a beat carries up to LANES = BUS_WIDTH/ELEM_BITS elements; lane k of a
//    beat is bits [k*ELEM_BITS +: ELEM_BITS]. A row may start in the middle of a beat (lane
//    dram_base mod LANES) and end in the middle of one. The lanes of one beat write consecutive
//    rows (the tessel_sram write-lane contract).
// Pads are written on lane 0 with zero data; the consumer widens (ACC_8BIT sign-extension).
module tessel_dma_read
  import tessel_isa_pkg::*;
#(
    parameter  int ELEM_BITS = INP_ELEM_BITS,  // DRAM bits of one element (E * 8)
    parameter  int LOG_DEPTH = LOG_INP_DEPTH,  // scratchpad index bits
    localparam int LANES     = ELEM_BITS < BUS_WIDTH ? BUS_WIDTH / ELEM_BITS : 1
) (
    input  logic                                clk,
    input  logic                                rst_n,
    input  logic                                start,      // cycle S
    input  mem_insn_t                           insn,       // valid in cycle S only
    // master port (section 8.1), read side
    output logic                                req_valid,  // a burst is presented
    output logic                                req_last,   // last burst of the instruction
    output logic                                req_write,  // always 0 (reads only)
    output logic [63:0]                         req_addr,   // bus-aligned byte address
    output logic [7:0]                          req_len,    // beats - 1
    input  logic                                req_grant,  // the burst is accepted
    input  logic                                rd_valid,   // a read beat for this master
    input  logic [BUS_WIDTH-1:0]                rd_data,
    // scratchpad write lanes
    output logic [LANES-1:0]                    we,
    output logic [LANES-1:0][LOG_DEPTH-1:0]     waddr,
    output logic [LANES-1:0][ELEM_BITS-1:0]     wdata,
    output logic                                done,       // cycle D
    output logic                                busy        // S+1 .. D
);
  // ---- sizes ----
  localparam int LOG_W = $clog2(BUS_WIDTH / 8);    // log2 bus bytes
  localparam int LOG_E = $clog2(ELEM_BITS / 8);    // log2 element bytes
  localparam bit NARROW = ELEM_BITS < BUS_WIDTH;
  localparam int LOG_LANES = NARROW ? LOG_W - LOG_E : 0;
  localparam int LOG_BPE = NARROW ? 0 : LOG_E - LOG_W;  // log2 beats per element
  localparam int LW = LOG_LANES > 0 ? LOG_LANES : 1;    // width of a lane index
  localparam int SUBW = LOG_BPE > 0 ? LOG_BPE : 1;      // width of a beat-in-element index
  localparam int CW = 40;  // element counters: rows * columns < 2^34
  localparam int XW = MEM_X_SIZE_WIDTH;
  localparam int YW = MEM_Y_SIZE_WIDTH;

  // Elaboration-time check: elements are a power-of-two number of bytes.
  if ((8 << LOG_E) != ELEM_BITS || ELEM_BITS < 8) begin : g_bad_elem
    $error("tessel_dma_read: ELEM_BITS %0d is not a power-of-two number of bytes", ELEM_BITS);
  end

  // ---- instruction decode in cycle S (combinational from insn) ----
  logic [CW-1:0] s_cols, s_rows, s_pads, s_data_start, s_first_len, s_last_len, s_mid0, s_last_addr;
  logic [CW-1:0] s_mid_len;
  logic          s_has_data, s_zero;
  always_comb begin
    s_cols = CW'(insn.x_pad_0) + CW'(insn.x_size) + CW'(insn.x_pad_1);
    s_rows = CW'(insn.y_pad_0) + CW'(insn.y_size) + CW'(insn.y_pad_1);
    s_pads = s_rows * s_cols - CW'(insn.y_size) * CW'(insn.x_size);
    s_has_data = insn.x_size != '0 && insn.y_size != '0;
    s_zero = insn.x_size == '0 || (insn.y_size == '0 && s_pads == '0);
    // Pad positions form runs: first = the y_pad_0 rows and the x_pad_0 of data row 0; mid k =
    // x_pad_1 of data row k and x_pad_0 of data row k+1; last = x_pad_1 of the last data row and
    // the y_pad_1 rows. Without data rows the whole rectangle is one run.
    s_data_start = CW'(insn.sram_base) + CW'(insn.y_pad_0) * s_cols + CW'(insn.x_pad_0);
    s_first_len = insn.y_size == '0 ? s_pads : CW'(insn.y_pad_0) * s_cols + CW'(insn.x_pad_0);
    s_mid_len = CW'(insn.x_pad_0) + CW'(insn.x_pad_1);
    s_mid0 = s_data_start + CW'(insn.x_size);
    s_last_len = CW'(insn.x_pad_1) + CW'(insn.y_pad_1) * s_cols;
    s_last_addr = CW'(insn.sram_base) + (CW'(insn.y_pad_0) + CW'(insn.y_size)) * s_cols
                  - CW'(insn.x_pad_1);
  end

  // Lane of the first element of a row from the low bits of its element address (0 for wide
  // elements).
  function automatic logic [LW-1:0] row_lane(logic [LW-1:0] elem_low);
    return elem_low & LW'(LANES - 1);
  endfunction

  // ---- state ----
  logic busy_q;
  // instruction constants
  logic [XW-1:0]     x_size_q;
  logic [LW-1:0]     stride_low_q; // low bits of x_stride (the lane of the next row)
  logic [CW-1:0]     mid_len_q;    // x_pad_0 + x_pad_1: the pads between two data rows
  logic [CW-1:0]     last_addr_q, last_len_q;
  // beat side
  logic [YW-1:0]     bt_rows_left; // data rows not completely received
  logic [XW-1:0]     bt_x_left;    // elements of the current row not yet written
  logic [CW-1:0]     bt_addr;      // scratchpad row of the next data element
  logic [LW-1:0]     bt_row_low;   // low bits of the current row's element address
  logic [LW-1:0]     bt_lane;      // first lane of the next beat that holds data
  logic [SUBW-1:0]   bt_sub;       // beat inside the element (wide elements)
  // pads
  logic [CW-1:0]     pd_left;      // pads still to write
  logic [CW-1:0]     pd_run_left;  // pads left in the current run
  logic [YW-1:0]     pd_mids_left; // mid runs not started
  logic [CW-1:0]     pd_addr;

  assign busy = busy_q;
  // The opcode, dependency flags and memory type are the caller's business.
  logic unused_insn;
  assign unused_insn = ^{insn.opcode, insn.pop_prev_dep, insn.pop_next_dep, insn.push_prev_dep,
                         insn.push_next_dep, insn.memory_type, insn.pad_58};

  // ---- request side (sections 2.1, 8.1): the bursts from S+1, the next after every grant ----
  tessel_row_bursts #(
      .ELEM_BITS(ELEM_BITS)
  ) u_bursts (
      .clk,
      .rst_n,
      .start    (start),
      .dram_base(insn.dram_base),
      .y_size   (insn.y_size),
      .x_size   (insn.x_size),
      .x_stride (insn.x_stride),
      .valid    (req_valid),
      .last     (req_last),
      .addr     (req_addr),
      .len      (req_len),
      .next     (req_grant)
  );
  assign req_write = 1'b0;

  // ---- beat side ----
  logic          beat;          // a beat for this instruction in this cycle
  logic [LW:0]   bt_n;          // data elements in this beat (narrow)
  logic          elem_done;     // an element completes in this beat
  logic          row_end;       // the current row completes in this beat
  logic          data_finished; // every data row received before this cycle
  assign beat = busy_q && rd_valid;
  assign data_finished = bt_rows_left == '0;

  always_comb begin
    logic [LW:0] avail;
    avail = (LW + 1)'(LANES) - (LW + 1)'(bt_lane);
    if (NARROW) bt_n = 32'(bt_x_left) < 32'(avail) ? (LW + 1)'(bt_x_left) : avail;
    else bt_n = (LW + 1)'(1);
    elem_done = beat && (NARROW || bt_sub == SUBW'((1 << LOG_BPE) - 1));
    row_end = elem_done && 32'(bt_x_left) == 32'(bt_n);
  end

  // ---- pads ----
  logic pad_now, pad_last, pads_finished;
  assign pad_now = busy_q && pd_left != '0 && !rd_valid;
  assign pad_last = pad_now && pd_left == CW'(1);
  assign pads_finished = pd_left == '0;

  // ---- done ----
  logic data_last;
  assign data_last = row_end && bt_rows_left == YW'(1);
  assign done = (start && s_zero) ||
                (busy_q && (data_finished || data_last) && (pads_finished || pad_last));

  // ---- scratchpad writes ----
  if (NARROW) begin : g_narrow
    always_comb begin
      for (int k = 0; k < LANES; k++) begin
        we[k] = beat && 32'(k) >= 32'(bt_lane) && 32'(k) < 32'(bt_lane) + 32'(bt_n);
        waddr[k] = LOG_DEPTH'(bt_addr + CW'(k) - CW'(bt_lane));
        wdata[k] = rd_data[k*ELEM_BITS+:ELEM_BITS];
      end
      if (pad_now) begin
        we[0] = 1'b1;
        waddr[0] = LOG_DEPTH'(pd_addr);
        wdata[0] = '0;
      end
    end
    logic unused_sub;
    assign unused_sub = ^bt_sub;
  end else begin : g_wide
    logic [ELEM_BITS-1:0] cat;
    if (LOG_BPE > 0) begin : g_asm
      // Earlier beats of the element, the oldest in the least significant bits.
      logic [ELEM_BITS-BUS_WIDTH-1:0] asm_q;
      assign cat = {rd_data, asm_q};
      always_ff @(posedge clk) begin
        if (beat) asm_q <= cat[ELEM_BITS-1:BUS_WIDTH];
      end
    end else begin : g_one
      assign cat = rd_data;
    end
    always_comb begin
      we[0] = elem_done || pad_now;
      waddr[0] = LOG_DEPTH'(pad_now ? pd_addr : bt_addr);
      wdata[0] = pad_now ? '0 : cat;
    end
    logic unused_lane;
    assign unused_lane = ^bt_lane;
  end

  // ---- sequential ----
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      busy_q <= 1'b0;
      bt_rows_left <= '0;
      pd_left <= '0;
    end else if (start) begin
      busy_q <= !s_zero;
      x_size_q <= insn.x_size;
      stride_low_q <= LW'(insn.x_stride);
      mid_len_q <= s_mid_len;
      last_addr_q <= s_last_addr;
      last_len_q <= s_last_len;
      // beats
      bt_rows_left <= s_has_data ? insn.y_size : '0;
      bt_x_left <= insn.x_size;
      bt_addr <= s_data_start;
      bt_row_low <= LW'(insn.dram_base);
      bt_lane <= row_lane(LW'(insn.dram_base));
      bt_sub <= '0;
      // pads: start at the first non-empty run
      pd_left <= s_zero ? '0 : s_pads;
      if (s_first_len != '0) begin
        pd_addr <= CW'(insn.sram_base);
        pd_run_left <= s_first_len;
        pd_mids_left <= insn.y_size != '0 ? insn.y_size - YW'(1) : '0;
      end else if (s_mid_len != '0 && insn.y_size > YW'(1)) begin
        pd_addr <= s_mid0;
        pd_run_left <= s_mid_len;
        pd_mids_left <= insn.y_size - YW'(2);
      end else begin
        pd_addr <= s_last_addr;
        pd_run_left <= s_last_len;
        pd_mids_left <= '0;
      end
    end else begin
      if (done) busy_q <= 1'b0;
      // beat side
      if (beat) begin
        bt_sub <= elem_done ? '0 : bt_sub + SUBW'(1);
        if (elem_done) begin
          bt_lane <= '0;
          if (row_end) begin
            bt_rows_left <= bt_rows_left - YW'(1);
            bt_x_left <= x_size_q;
            bt_addr <= bt_addr + CW'(bt_n) + mid_len_q;
            bt_row_low <= bt_row_low + stride_low_q;
            bt_lane <= row_lane(bt_row_low + stride_low_q);
          end else begin
            bt_x_left <= bt_x_left - XW'(bt_n);
            bt_addr <= bt_addr + CW'(bt_n);
          end
        end
      end
      // pads
      if (pad_now) begin
        pd_left <= pd_left - CW'(1);
        if (pd_run_left == CW'(1)) begin
          if (pd_mids_left != '0 && mid_len_q != '0) begin
            pd_addr <= pd_addr + CW'(1) + CW'(x_size_q);
            pd_run_left <= mid_len_q;
            pd_mids_left <= pd_mids_left - YW'(1);
          end else begin
            pd_addr <= last_addr_q;
            pd_run_left <= last_len_q;
            pd_mids_left <= '0;
          end
        end else begin
          pd_addr <= pd_addr + CW'(1);
          pd_run_left <= pd_run_left - CW'(1);
        end
      end
    end
  end
endmodule
