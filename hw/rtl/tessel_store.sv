// tessel_store: the store module (docs/microarchitecture.md sections 4, 5.2, 2.1 and 8.3): runs
// the store command queue (STORE OUT) in order.
//
// Start rule (section 4, on visible state): idle, command queue not empty, g2s not empty if the
// head has pop_prev_dep, s2g has room if it has push_prev_dep. In S the command and the g2s token
// are popped; in D the s2g token is pushed; dbg_start / dbg_done pulse in S / D.
//
// Timing of a STORE (S = start cycle):
//  * x_size == 0 or y_size == 0: D = S.
//  * otherwise: the AW bursts (every row its own bursts of at most 256 beats, section 2.1) are
//    presented from S+1, the next one in the cycle after each grant. W beats are taken by the
//    DRAM in its reserved cycles (wr_ready); the store has WVALID and the data of the next beat
//    ready in every cycle from S+1 until the last beat is taken, so it never misses one. D is the
//    cycle of the last burst's write response (wr_resp): F + B + L.
// Data path: OUT is read through the compute module's OUT read port (1-cycle latency, the data
// held while out_ren is low). In S the first OUT row of the instruction is read; in every cycle
// in which the beat finishing the current rows is taken, the rows of the next beat are read, so
// out_rdata always holds the rows of the beat on W.
//  * OUT element >= bus: an element is OUT_ELEM_BITS/BUS_WIDTH beats, least significant first;
//    every row start is bus aligned; WSTRB all ones.
//  * OUT element < bus: a beat carries up to OUT_RLANES elements; a row may start and end inside
//    a beat (WSTRB marks its elements). The OUT read port returns OUT_RLANES consecutive rows
//    (out_rdata[i] = row out_raddr + i, tessel_sram RLANES), the rows of one beat.
//
// Units: sram_base in OUT rows, dram_base / x_stride in OUT elements (OUT_ELEM_BITS/8 bytes),
// addresses on the master port in bytes.
module tessel_store
  import tessel_isa_pkg::*;
#(
    localparam int OUT_RLANES = OUT_ELEM_BITS < BUS_WIDTH ? BUS_WIDTH / OUT_ELEM_BITS : 1
) (
    input  logic                                     clk,
    input  logic                                     rst_n,
    // command queue head
    input  logic                                     cmd_valid,
    input  logic [INS_WIDTH-1:0]                     cmd_insn,
    output logic                                     cmd_pop,
    // token queues: g2s (popped), s2g (pushed)
    input  logic                                     g2s_nonempty,
    output logic                                     g2s_pop,
    input  logic                                     s2g_room,
    output logic                                     s2g_push,
    // master port (section 8.1), writer
    output logic                                     req_valid,
    output logic                                     req_last,
    output logic                                     req_write,
    output logic [63:0]                              req_addr,
    output logic [7:0]                               req_len,
    input  logic                                     req_grant,
    input  logic                                     wr_ready,
    output logic                                     wr_valid,
    output logic                                     wr_last,
    output logic [BUS_WIDTH-1:0]                     wr_data,
    output logic [BUS_WIDTH/8-1:0]                   wr_strb,
    input  logic                                     wr_resp,
    // OUT read port of the compute module (data the next cycle, held while out_ren is low)
    output logic                                     out_ren,
    output logic [LOG_OUT_DEPTH-1:0]                 out_raddr,
    input  logic [OUT_RLANES-1:0][OUT_ELEM_BITS-1:0] out_rdata,
    // trace
    output logic                                     dbg_start,
    output logic                                     dbg_done
);
  localparam int LOG_W = $clog2(BUS_WIDTH / 8);
  localparam int LOG_E = $clog2(OUT_ELEM_BITS / 8);
  localparam bit NARROW = OUT_ELEM_BITS < BUS_WIDTH;
  localparam int LOG_LANES = NARROW ? LOG_W - LOG_E : 0;
  localparam int LANES = 1 << LOG_LANES;
  localparam int LOG_BPE = NARROW ? 0 : LOG_E - LOG_W;
  localparam int LW = LOG_LANES > 0 ? LOG_LANES : 1;
  localparam int SUBW = LOG_BPE > 0 ? LOG_BPE : 1;
  localparam int XW = MEM_X_SIZE_WIDTH;
  localparam int EB = OUT_ELEM_BITS / 8;

  mem_insn_t insn;
  assign insn = mem_insn_t'(cmd_insn);

  // The opcode and memory type are fetch's business; pads are illegal on stores.
  logic unused_insn;
  assign unused_insn = ^{insn.opcode, insn.memory_type, insn.pop_next_dep, insn.push_next_dep,
                         insn.pad_58, insn.y_pad_0, insn.y_pad_1, insn.x_pad_0, insn.x_pad_1};

  function automatic logic [LW-1:0] row_lane(logic [LW-1:0] elem_low);
    return elem_low & LW'(LANES - 1);
  endfunction

  // ---- start / done (section 4) ----
  logic busy_q, start, done, zero, push_prev_q;
  assign zero = insn.x_size == '0 || insn.y_size == '0;
  assign start = !busy_q && cmd_valid &&
                 (!insn.pop_prev_dep || g2s_nonempty) && (!insn.push_prev_dep || s2g_room);
  assign cmd_pop = start;
  assign g2s_pop = start && insn.pop_prev_dep;
  assign s2g_push = done && (start ? insn.push_prev_dep : push_prev_q);
  assign dbg_start = start;
  assign dbg_done = done;

  // ---- AW: the bursts from S+1, the next one after every grant (section 2.1) ----
  logic aw_valid;
  tessel_row_bursts #(
      .ELEM_BITS(OUT_ELEM_BITS)
  ) u_aw (
      .clk,
      .rst_n,
      .start    (start),
      .dram_base(insn.dram_base),
      .y_size   (insn.y_size),
      .x_size   (insn.x_size),
      .x_stride (insn.x_stride),
      .valid    (aw_valid),
      .last     (req_last),
      .addr     (req_addr),
      .len      (req_len),
      .next     (req_grant)
  );
  assign req_valid = aw_valid;
  assign req_write = 1'b1;

  // ---- write responses: D is the response of the last burst ----
  logic [31:0] outstanding;  // bursts granted whose response has not arrived
  assign done = (start && zero) ||
                (busy_q && !aw_valid && wr_resp && outstanding == 32'd1);

  // ---- W: the same bursts, walked beat by beat; WVALID from S+1 until the last beat ----
  logic        w_valid;   // beats remain
  logic [7:0]  w_len;     // beats - 1 of the current W burst
  logic [7:0]  w_beat;    // beat of the current W burst on W
  logic        taken;     // the beat on W is taken in this cycle
  logic        advance;   // ... and it finishes the OUT rows read for it
  logic        unused_w_last;  // the W side needs only the burst lengths
  logic [63:0] unused_w_addr;
  tessel_row_bursts #(
      .ELEM_BITS(OUT_ELEM_BITS)
  ) u_w (
      .clk,
      .rst_n,
      .start    (start),
      .dram_base(insn.dram_base),
      .y_size   (insn.y_size),
      .x_size   (insn.x_size),
      .x_stride (insn.x_stride),
      .valid    (w_valid),
      .last     (unused_w_last),
      .addr     (unused_w_addr),
      .len      (w_len),
      .next     (taken && wr_last)
  );
  assign wr_valid = w_valid;
  assign wr_last = w_beat == w_len;
  assign taken = w_valid && wr_ready;

  // OUT element tracking: rd_addr_q is the OUT row of the data on out_rdata (lane 0 of it).
  logic [LOG_OUT_DEPTH-1:0] rd_addr_q;
  logic [LOG_OUT_DEPTH-1:0] rd_step;   // rows consumed by the current beat group

  assign out_ren = start || advance;
  assign out_raddr = start ? LOG_OUT_DEPTH'(insn.sram_base) : rd_addr_q + rd_step;

  if (NARROW) begin : g_narrow
    logic [LW-1:0] lane_q;    // lane of the first element of the current beat
    logic [LW-1:0] row_q;     // low bits of the current row's element address
    logic [LW-1:0] stride_q;  // low bits of x_stride
    logic [XW-1:0] x_size_q;
    logic [XW-1:0] x_left;    // elements of the current row not yet on W
    logic [LW:0] n;           // elements in the current beat
    always_comb begin
      logic [LW:0] avail;
      avail = (LW + 1)'(LANES) - (LW + 1)'(lane_q);
      n = 32'(x_left) < 32'(avail) ? (LW + 1)'(x_left) : avail;
      rd_step = LOG_OUT_DEPTH'(n);
      advance = taken;
      for (int k = 0; k < LANES; k++) begin
        logic [LW-1:0] src;
        logic on;
        src = LW'(k) - lane_q;
        on = 32'(k) >= 32'(lane_q) && 32'(k) < 32'(lane_q) + 32'(n);
        wr_data[k*OUT_ELEM_BITS+:OUT_ELEM_BITS] = out_rdata[src];
        wr_strb[k*EB+:EB] = on ? '1 : '0;
      end
    end
    always_ff @(posedge clk) begin
      if (start) begin
        lane_q <= row_lane(LW'(insn.dram_base));
        row_q <= LW'(insn.dram_base);
        stride_q <= LW'(insn.x_stride);
        x_size_q <= insn.x_size;
        x_left <= insn.x_size;
      end else if (taken) begin
        if (32'(x_left) == 32'(n)) begin  // the row ends in this beat
          x_left <= x_size_q;
          row_q <= row_q + stride_q;
          lane_q <= row_lane(row_q + stride_q);
        end else begin
          x_left <= x_left - XW'(n);
          lane_q <= '0;
        end
      end
    end
  end else begin : g_wide
    logic [SUBW-1:0] part_q;  // beat of the current element
    assign rd_step = LOG_OUT_DEPTH'(1);
    assign advance = taken && part_q == SUBW'((1 << LOG_BPE) - 1);
    if (LOG_BPE > 0) begin : g_parts
      assign wr_data = out_rdata[0][part_q*BUS_WIDTH+:BUS_WIDTH];
    end else begin : g_whole
      assign wr_data = out_rdata[0];
    end
    assign wr_strb = '1;
    always_ff @(posedge clk) begin
      if (start) part_q <= '0;
      else if (taken) part_q <= advance ? '0 : part_q + SUBW'(1);
    end
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      busy_q <= 1'b0;
      outstanding <= '0;
    end else if (start) begin
      busy_q <= !zero;
      push_prev_q <= insn.push_prev_dep;
      rd_addr_q <= LOG_OUT_DEPTH'(insn.sram_base);
      w_beat <= '0;
      outstanding <= '0;
    end else begin
      if (done) busy_q <= 1'b0;
      outstanding <= outstanding + 32'(aw_valid && req_grant) - 32'(wr_resp);
      if (advance) rd_addr_q <= rd_addr_q + rd_step;
      if (taken) w_beat <= wr_last ? '0 : w_beat + 8'd1;
    end
  end
endmodule
