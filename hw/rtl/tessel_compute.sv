// tessel_compute: the compute module of the accelerator (docs/microarchitecture.md sections 4, 5.1,
// 5.3, 5.4 and 8.3; instruction semantics docs/isa.md and sim/common/datapath.cc).
//
// It runs the compute command queue in order: LOAD UOP / ACC / ACC_8BIT, GEMM, ALU and FINISH.
// It owns the uop buffer (UOP_DEPTH rows of UOP_ELEM_BITS), the ACC buffer (ACC_DEPTH rows of
// BATCH*BLOCK_OUT lanes of ACC_WIDTH bits) and the OUT buffer (OUT_DEPTH rows of the same lanes
// narrowed to OUT_WIDTH bits), reads the INP and WGT scratchpads of tessel_top, and serves the
// store module through the OUT read port.
//
// Start rule (section 4), all on visible state: the module is idle (the previous instruction's
// done cycle D has passed), the command queue is not empty, every token queue the head pops
// (pop_prev_dep: l2g, pop_next_dep: s2g) is not empty, every token queue it pushes
// (push_prev_dep: g2l, push_next_dep: g2s) has room, and for FINISH `drained` is high. In that
// cycle S the command and the tokens are popped (dbg_start); in its done cycle D the tokens are
// pushed (dbg_done). An instruction with D = S pops and pushes in the same cycle, and the next
// one can start in D + 1.
//
//   instruction                     | S      | S+1 ..                          | D
//   --------------------------------+--------+---------------------------------+-------------------
//   LOAD UOP / ACC / ACC_8BIT       | pop    | tessel_dma_read: bursts, beats, | last beat or pad
//   (section 5.1)                   |        | pads written into UOP / ACC+OUT | (S if nothing)
//   GEMM / ALU, n uops (5.3)        | pop    | uop i issued in S+1+i,          | S+n+4 (S if n==0)
//                                   |        | written back in S+1+i+4         |
//   FINISH (5.4), needs `drained`   | pop    |                                 | S, `finish` pulse
//   LOAD of x_size 0 (no-op)        | pop    |                                 | S
//
// One tessel_dma_read per memory type (UOP, ACC, ACC_8BIT: each with its element size) shares the
// one master port; only one runs at a time, so the timing is that of section 5.1's single engine
// with one scratchpad write port. ACC_8BIT sign-extends each int8 into its ACC lane, and every
// ACC write (LOAD data and pads, GEMM, ALU) writes the OUT row with the low OUT_WIDTH bits of
// every lane. The GEMM / ALU pipeline is tessel_compute_pipe. The master port never writes (wr_*
// outputs are 0). A LOAD of another memory type or an unknown opcode (both rejected by the static
// checks before a run) completes in S without effect.
//
// Read enables (an addition to the port list of section 8.3): inp_ren / wgt_ren are high in the
// cycles the pipeline reads INP / WGT (address valid then); out_ren is the store module's read
// enable for out_raddr (out_rdata holds the OUT_RLANES rows read in the last cycle out_ren was
// high).
module tessel_compute
  import tessel_isa_pkg::*;
#(
  // Rows returned by one OUT read: the OUT elements of one bus beat (tessel_store).
  localparam int OUT_RLANES = OUT_ELEM_BITS < BUS_WIDTH ? BUS_WIDTH / OUT_ELEM_BITS : 1
) (
  input  logic                       clk,
  input  logic                       rst_n,
  // command queue head
  input  logic                       cmd_valid,
  input  logic [INS_WIDTH-1:0]       cmd_insn,
  output logic                       cmd_pop,
  // dependency-token queues
  input  logic                       l2g_nonempty,
  output logic                       l2g_pop,
  input  logic                       s2g_nonempty,
  output logic                       s2g_pop,
  input  logic                       g2l_room,
  output logic                       g2l_push,
  input  logic                       g2s_room,
  output logic                       g2s_push,
  // FINISH
  input  logic                       drained,   // load and store completed every dispatched insn
  output logic                       finish,    // pulse in FINISH's D
  // trace
  output logic                       dbg_start,
  output logic                       dbg_done,
  // master port (section 8.1), reads only
  output logic                       req_valid,
  output logic                       req_last,
  output logic                       req_write,
  output logic [63:0]                req_addr,
  output logic [7:0]                 req_len,
  input  logic                       req_grant,
  input  logic                       rd_valid,
  input  logic [BUS_WIDTH-1:0]       rd_data,
  input  logic                       wr_ready,
  output logic                       wr_valid,
  output logic                       wr_last,
  output logic [BUS_WIDTH-1:0]       wr_data,
  output logic [BUS_WIDTH/8-1:0]     wr_strb,
  input  logic                       wr_resp,
  // INP and WGT scratchpad read ports (data the next cycle)
  output logic                       inp_ren,
  output logic [LOG_INP_DEPTH-1:0]   inp_raddr,
  input  logic [INP_ELEM_BITS-1:0]   inp_rdata,
  output logic                       wgt_ren,
  output logic [LOG_WGT_DEPTH-1:0]   wgt_raddr,
  input  logic [WGT_ELEM_BITS-1:0]   wgt_rdata,
  // OUT read port for the store module: rows out_raddr .. out_raddr + OUT_RLANES - 1, data the
  // next cycle, held while out_ren is low
  input  logic                       out_ren,
  input  logic [LOG_OUT_DEPTH-1:0]   out_raddr,
  output logic [OUT_RLANES-1:0][OUT_ELEM_BITS-1:0] out_rdata
);
  // ---- sizes ----
  localparam int LANES = BATCH * BLOCK_OUT;     // ACC / OUT lanes per row
  localparam int A8_LANE_BITS = 8;              // ACC_8BIT: one int8 per lane in DRAM
  localparam int A8_ELEM_BITS = LANES * A8_LANE_BITS;
  // Write lanes of each DMA engine (elements per beat when narrower than the bus).
  localparam int UOP_WL = UOP_ELEM_BITS < BUS_WIDTH ? BUS_WIDTH / UOP_ELEM_BITS : 1;
  localparam int ACC_WL = ACC_ELEM_BITS < BUS_WIDTH ? BUS_WIDTH / ACC_ELEM_BITS : 1;
  localparam int A8_WL = A8_ELEM_BITS < BUS_WIDTH ? BUS_WIDTH / A8_ELEM_BITS : 1;
  localparam int AWL = ACC_WL > A8_WL ? ACC_WL : A8_WL;  // ACC / OUT write lanes

  // ---- command decode (cycle S) ----
  // Views of the head command in each format; each view uses only some of its fields.
  /* verilator lint_off UNUSEDSIGNAL */
  finish_insn_t hdr;   // the header common to every format
  mem_insn_t    mi;
  gemm_insn_t   gi;    // the loop fields (bits 63:0) are common to GEMM and ALU
  /* verilator lint_on UNUSEDSIGNAL */
  assign hdr = finish_insn_t'(cmd_insn);
  assign mi = mem_insn_t'(cmd_insn);
  assign gi = gemm_insn_t'(cmd_insn);

  logic is_load, is_exec, is_finish, ld_uop, ld_acc, ld_a8, nest_empty, instant;
  always_comb begin
    is_load = hdr.opcode == OPCODE_LOAD;
    is_exec = hdr.opcode == OPCODE_GEMM || hdr.opcode == OPCODE_ALU;
    is_finish = hdr.opcode == OPCODE_FINISH;
    ld_uop = is_load && mi.memory_type == MEM_ID_UOP;
    ld_acc = is_load && mi.memory_type == MEM_ID_ACC;
    ld_a8 = is_load && mi.memory_type == MEM_ID_ACC_8BIT;
    // GEMM and ALU share the loop fields (bits 63:0).
    nest_empty = gi.iter_out == '0 || gi.iter_in == '0 ||
                 GEMM_UOP_END_WIDTH'(gi.uop_bgn) >= gi.uop_end;
    // Done in S without the DMA engines (an empty LOAD is the engines' own D = S).
    instant = !(ld_uop || ld_acc || ld_a8) && !(is_exec && !nest_empty);
  end

  logic busy_q;          // S+1 .. D of an instruction with D > S
  logic push_prev_q, push_next_q;
  logic start, done;
  logic dma_done_uop, dma_done_acc, dma_done_a8, pipe_done;

  assign start = !busy_q && cmd_valid &&
                 (!hdr.pop_prev_dep || l2g_nonempty) && (!hdr.pop_next_dep || s2g_nonempty) &&
                 (!hdr.push_prev_dep || g2l_room) && (!hdr.push_next_dep || g2s_room) &&
                 (!is_finish || drained);
  assign done = (start && instant) || dma_done_uop || dma_done_acc || dma_done_a8 || pipe_done;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      busy_q <= 1'b0;
    end else if (done) begin
      busy_q <= 1'b0;
    end else if (start) begin
      busy_q <= 1'b1;
    end
    if (start) begin
      push_prev_q <= hdr.push_prev_dep;
      push_next_q <= hdr.push_next_dep;
    end
  end

  assign cmd_pop = start;
  assign l2g_pop = start && hdr.pop_prev_dep;
  assign s2g_pop = start && hdr.pop_next_dep;
  assign g2l_push = done && (start ? hdr.push_prev_dep : push_prev_q);
  assign g2s_push = done && (start ? hdr.push_next_dep : push_next_q);
  assign finish = start && is_finish;
  assign dbg_start = start;
  assign dbg_done = done;

  // ---- DMA engines (section 5.1) and the master port ----
  logic                               uop_req_valid, uop_req_last, uop_req_write;
  logic [63:0]                        uop_req_addr;
  logic [7:0]                         uop_req_len;
  logic [UOP_WL-1:0]                  uop_dma_we;
  logic [UOP_WL-1:0][LOG_UOP_DEPTH-1:0] uop_dma_waddr;
  logic [UOP_WL-1:0][UOP_ELEM_BITS-1:0] uop_dma_wdata;
  logic                               acc_req_valid, acc_req_last, acc_req_write;
  logic [63:0]                        acc_req_addr;
  logic [7:0]                         acc_req_len;
  logic [ACC_WL-1:0]                  acc_dma_we;
  logic [ACC_WL-1:0][LOG_ACC_DEPTH-1:0] acc_dma_waddr;
  logic [ACC_WL-1:0][ACC_ELEM_BITS-1:0] acc_dma_wdata;
  logic                               a8_req_valid, a8_req_last, a8_req_write;
  logic [63:0]                        a8_req_addr;
  logic [7:0]                         a8_req_len;
  logic [A8_WL-1:0]                   a8_dma_we;
  logic [A8_WL-1:0][LOG_ACC_DEPTH-1:0] a8_dma_waddr;
  logic [A8_WL-1:0][A8_ELEM_BITS-1:0] a8_dma_wdata;
  logic                               uop_dma_busy, acc_dma_busy, a8_dma_busy;

  tessel_dma_read #(.ELEM_BITS(UOP_ELEM_BITS), .LOG_DEPTH(LOG_UOP_DEPTH)) u_dma_uop (
    .clk, .rst_n,
    .start    (start && ld_uop),
    .insn     (mi),
    .req_valid(uop_req_valid), .req_last(uop_req_last), .req_write(uop_req_write),
    .req_addr (uop_req_addr), .req_len(uop_req_len),
    .req_grant(req_grant && uop_req_valid),
    .rd_valid, .rd_data,
    .we       (uop_dma_we), .waddr(uop_dma_waddr), .wdata(uop_dma_wdata),
    .done     (dma_done_uop), .busy(uop_dma_busy)
  );

  tessel_dma_read #(.ELEM_BITS(ACC_ELEM_BITS), .LOG_DEPTH(LOG_ACC_DEPTH)) u_dma_acc (
    .clk, .rst_n,
    .start    (start && ld_acc),
    .insn     (mi),
    .req_valid(acc_req_valid), .req_last(acc_req_last), .req_write(acc_req_write),
    .req_addr (acc_req_addr), .req_len(acc_req_len),
    .req_grant(req_grant && acc_req_valid),
    .rd_valid, .rd_data,
    .we       (acc_dma_we), .waddr(acc_dma_waddr), .wdata(acc_dma_wdata),
    .done     (dma_done_acc), .busy(acc_dma_busy)
  );

  tessel_dma_read #(.ELEM_BITS(A8_ELEM_BITS), .LOG_DEPTH(LOG_ACC_DEPTH)) u_dma_a8 (
    .clk, .rst_n,
    .start    (start && ld_a8),
    .insn     (mi),
    .req_valid(a8_req_valid), .req_last(a8_req_last), .req_write(a8_req_write),
    .req_addr (a8_req_addr), .req_len(a8_req_len),
    .req_grant(req_grant && a8_req_valid),
    .rd_valid, .rd_data,
    .we       (a8_dma_we), .waddr(a8_dma_waddr), .wdata(a8_dma_wdata),
    .done     (dma_done_a8), .busy(a8_dma_busy)
  );

  // At most one engine runs (instructions do not overlap), so the port is an OR of the three.
  always_comb begin
    req_valid = uop_req_valid || acc_req_valid || a8_req_valid;
    req_write = 1'b0;
    if (acc_req_valid) begin
      req_last = acc_req_last;
      req_addr = acc_req_addr;
      req_len = acc_req_len;
    end else if (a8_req_valid) begin
      req_last = a8_req_last;
      req_addr = a8_req_addr;
      req_len = a8_req_len;
    end else begin
      req_last = uop_req_last;
      req_addr = uop_req_addr;
      req_len = uop_req_len;
    end
  end
  assign wr_valid = 1'b0;
  assign wr_last = 1'b0;
  assign wr_data = '0;
  assign wr_strb = '0;

  // ---- GEMM / ALU pipeline (section 5.3) ----
  logic                     pipe_uop_ren;
  logic [LOG_UOP_DEPTH-1:0] pipe_uop_raddr;
  logic [UOP_ELEM_BITS-1:0] uop_rdata;
  logic                     acc_dst_ren, acc_src_ren;
  logic [LOG_ACC_DEPTH-1:0] acc_dst_raddr, acc_src_raddr;
  logic [ACC_ELEM_BITS-1:0] acc_dst_rdata, acc_src_rdata;
  logic                     pipe_we;
  logic [LOG_ACC_DEPTH-1:0] pipe_waddr;
  logic [ACC_ELEM_BITS-1:0] pipe_wdata;

  tessel_compute_pipe u_pipe (
    .clk, .rst_n,
    .start        (start && is_exec && !nest_empty),
    .insn         (cmd_insn),
    .done         (pipe_done),
    .uop_ren      (pipe_uop_ren),
    .uop_raddr    (pipe_uop_raddr),
    .uop_rdata,
    .inp_ren, .inp_raddr, .inp_rdata,
    .wgt_ren, .wgt_raddr, .wgt_rdata,
    .acc_dst_ren, .acc_dst_raddr, .acc_dst_rdata,
    .acc_src_ren, .acc_src_raddr, .acc_src_rdata,
    .acc_we       (pipe_we),
    .acc_waddr    (pipe_waddr),
    .acc_wdata    (pipe_wdata)
  );

  // ---- uop buffer ----
  tessel_sram #(.WIDTH(UOP_ELEM_BITS), .DEPTH(UOP_DEPTH), .WLANES(UOP_WL), .RPORTS(1)) u_uop_buf (
    .clk,
    .we   (uop_dma_we),
    .waddr(uop_dma_waddr),
    .wdata(uop_dma_wdata),
    .re   (pipe_uop_ren),
    .raddr(pipe_uop_raddr),
    .rdata(uop_rdata)
  );

  // ---- ACC and OUT write lanes: pipeline write-back, ACC load, ACC_8BIT load ----
  logic [AWL-1:0]                    acc_we;
  logic [AWL-1:0][LOG_ACC_DEPTH-1:0] acc_waddr;
  logic [AWL-1:0][ACC_ELEM_BITS-1:0] acc_wdata;
  logic [AWL-1:0][OUT_ELEM_BITS-1:0] out_wdata;

  for (genvar k = 0; k < AWL; k++) begin : g_wlane
    // Lane k of each source, or nothing when that source has fewer lanes.
    logic                     p_we, a_we, b_we;
    logic [LOG_ACC_DEPTH-1:0] a_waddr, b_waddr;
    logic [ACC_ELEM_BITS-1:0] a_wdata, b_wdata;
    if (k == 0) begin : g_pipe
      assign p_we = pipe_we;
    end else begin : g_nopipe
      assign p_we = 1'b0;
    end
    if (k < ACC_WL) begin : g_acc
      assign a_we = acc_dma_we[k];
      assign a_waddr = acc_dma_waddr[k];
      assign a_wdata = acc_dma_wdata[k];
    end else begin : g_noacc
      assign a_we = 1'b0;
      assign a_waddr = '0;
      assign a_wdata = '0;
    end
    if (k < A8_WL) begin : g_a8
      assign b_we = a8_dma_we[k];
      assign b_waddr = a8_dma_waddr[k];
      // Sign-extend every int8 lane into its ACC lane.
      for (genvar l = 0; l < LANES; l++) begin : g_sext
        assign b_wdata[l * ACC_WIDTH +: ACC_WIDTH] =
            ACC_WIDTH'($signed(a8_dma_wdata[k][l * A8_LANE_BITS +: A8_LANE_BITS]));
      end
    end else begin : g_noa8
      assign b_we = 1'b0;
      assign b_waddr = '0;
      assign b_wdata = '0;
    end
    always_comb begin
      acc_we[k] = p_we || a_we || b_we;
      if (p_we) begin
        acc_waddr[k] = pipe_waddr;
        acc_wdata[k] = pipe_wdata;
      end else if (a_we) begin
        acc_waddr[k] = a_waddr;
        acc_wdata[k] = a_wdata;
      end else begin
        acc_waddr[k] = b_waddr;
        acc_wdata[k] = b_wdata;
      end
    end
    // OUT = the low OUT_WIDTH bits of every ACC lane.
    for (genvar l = 0; l < LANES; l++) begin : g_narrow
      assign out_wdata[k][l * OUT_WIDTH +: OUT_WIDTH] = acc_wdata[k][l * ACC_WIDTH +: OUT_WIDTH];
    end
  end

  // ---- ACC buffer: read port 0 = dst row, 1 = ALU src row ----
  logic [1:0][ACC_ELEM_BITS-1:0] acc_rdata;
  tessel_sram #(.WIDTH(ACC_ELEM_BITS), .DEPTH(ACC_DEPTH), .WLANES(AWL), .RPORTS(2)) u_acc_buf (
    .clk,
    .we   (acc_we),
    .waddr(acc_waddr),
    .wdata(acc_wdata),
    .re   ({acc_src_ren, acc_dst_ren}),
    .raddr({acc_src_raddr, acc_dst_raddr}),
    .rdata(acc_rdata)
  );
  assign acc_dst_rdata = acc_rdata[0];
  assign acc_src_rdata = acc_rdata[1];

  // ---- OUT buffer (same rows as ACC), read by the store module ----
  tessel_sram #(
    .WIDTH(OUT_ELEM_BITS), .DEPTH(OUT_DEPTH), .WLANES(AWL), .RPORTS(1), .RLANES(OUT_RLANES)
  ) u_out_buf (
    .clk,
    .we   (acc_we),
    .waddr(acc_waddr),  // OUT shares the ACC row index space
    .wdata(out_wdata),
    .re   (out_ren),
    .raddr(out_raddr),
    .rdata(out_rdata)
  );

  // Inputs and engine outputs this module does not need.
  logic unused;
  assign unused = ^{wr_ready, wr_resp, uop_req_write, acc_req_write, a8_req_write, uop_dma_busy,
                    acc_dma_busy, a8_dma_busy};
endmodule
