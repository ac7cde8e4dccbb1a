// tessel_load: the load module (docs/microarchitecture.md sections 4, 5.1 and 8.3): runs the
// load command queue (LOAD INP and LOAD WGT) in order.
//
// Start rule (section 4, on visible state): idle (the previous instruction's D has passed), the
// command queue is not empty, g2l is not empty if the head has pop_next_dep, l2g has room if it
// has push_next_dep. In that cycle S the command and the g2l token are popped and the DMA engine
// of the memory type starts; in its done cycle D the l2g token is pushed. dbg_start / dbg_done
// pulse in S / D. A LOAD with x_size 0 is done in S.
//
// Two tessel_dma_read engines (INP and WGT elements differ in size) share the master port; only
// one runs at a time. Load has no prev module: pop_prev_dep / push_prev_dep are ignored (the
// static checks reject them).
//
// Units: scratchpad addresses in rows; see tessel_dma_read for the master port.
module tessel_load
  import tessel_isa_pkg::*;
#(
    localparam int INP_LANES = INP_ELEM_BITS < BUS_WIDTH ? BUS_WIDTH / INP_ELEM_BITS : 1,
    localparam int WGT_LANES = WGT_ELEM_BITS < BUS_WIDTH ? BUS_WIDTH / WGT_ELEM_BITS : 1
) (
    input  logic                                       clk,
    input  logic                                       rst_n,
    // command queue head
    input  logic                                       cmd_valid,
    input  logic [INS_WIDTH-1:0]                       cmd_insn,
    output logic                                       cmd_pop,
    // token queues: g2l (popped), l2g (pushed)
    input  logic                                       g2l_nonempty,
    output logic                                       g2l_pop,
    input  logic                                       l2g_room,
    output logic                                       l2g_push,
    // master port (section 8.1), read side
    output logic                                       req_valid,
    output logic                                       req_last,
    output logic                                       req_write,
    output logic [63:0]                                req_addr,
    output logic [7:0]                                 req_len,
    input  logic                                       req_grant,
    input  logic                                       rd_valid,
    input  logic [BUS_WIDTH-1:0]                       rd_data,
    // INP and WGT scratchpad write lanes
    output logic [INP_LANES-1:0]                       inp_we,
    output logic [INP_LANES-1:0][LOG_INP_DEPTH-1:0]    inp_waddr,
    output logic [INP_LANES-1:0][INP_ELEM_BITS-1:0]    inp_wdata,
    output logic [WGT_LANES-1:0]                       wgt_we,
    output logic [WGT_LANES-1:0][LOG_WGT_DEPTH-1:0]    wgt_waddr,
    output logic [WGT_LANES-1:0][WGT_ELEM_BITS-1:0]    wgt_wdata,
    // trace
    output logic                                       dbg_start,
    output logic                                       dbg_done
);
  mem_insn_t insn;
  assign insn = mem_insn_t'(cmd_insn);

  logic inp_busy, wgt_busy, inp_done, wgt_done;
  logic start, done, is_wgt, push_next_q;
  logic inp_req_valid, inp_req_last, inp_req_write, wgt_req_valid, wgt_req_last, wgt_req_write;
  logic [63:0] inp_req_addr, wgt_req_addr;
  logic [7:0] inp_req_len, wgt_req_len;

  assign is_wgt = insn.memory_type == MEM_ID_WGT;
  assign start = !inp_busy && !wgt_busy && cmd_valid &&
                 (!insn.pop_next_dep || g2l_nonempty) && (!insn.push_next_dep || l2g_room);
  assign done = inp_done || wgt_done;
  assign cmd_pop = start;
  assign g2l_pop = start && insn.pop_next_dep;
  // D = S (zero-size load): push with the flag of the head; otherwise the flag latched in S.
  assign l2g_push = done && (start ? insn.push_next_dep : push_next_q);
  assign dbg_start = start;
  assign dbg_done = done;

  always_ff @(posedge clk) begin
    if (start) push_next_q <= insn.push_next_dep;
  end

  tessel_dma_read #(
      .ELEM_BITS(INP_ELEM_BITS),
      .LOG_DEPTH(LOG_INP_DEPTH)
  ) u_dma_inp (
      .clk,
      .rst_n,
      .start    (start && !is_wgt),
      .insn,
      .req_valid(inp_req_valid),
      .req_last (inp_req_last),
      .req_write(inp_req_write),
      .req_addr (inp_req_addr),
      .req_len  (inp_req_len),
      .req_grant(req_grant && inp_req_valid),
      .rd_valid,
      .rd_data,
      .we       (inp_we),
      .waddr    (inp_waddr),
      .wdata    (inp_wdata),
      .done     (inp_done),
      .busy     (inp_busy)
  );

  tessel_dma_read #(
      .ELEM_BITS(WGT_ELEM_BITS),
      .LOG_DEPTH(LOG_WGT_DEPTH)
  ) u_dma_wgt (
      .clk,
      .rst_n,
      .start    (start && is_wgt),
      .insn,
      .req_valid(wgt_req_valid),
      .req_last (wgt_req_last),
      .req_write(wgt_req_write),
      .req_addr (wgt_req_addr),
      .req_len  (wgt_req_len),
      .req_grant(req_grant && wgt_req_valid),
      .rd_valid,
      .rd_data,
      .we       (wgt_we),
      .waddr    (wgt_waddr),
      .wdata    (wgt_wdata),
      .done     (wgt_done),
      .busy     (wgt_busy)
  );

  // The master port carries the running engine's bursts (the other one is idle).
  assign req_valid = inp_req_valid || wgt_req_valid;
  assign req_last = wgt_req_valid ? wgt_req_last : inp_req_last;
  assign req_write = wgt_req_valid ? wgt_req_write : inp_req_write;
  assign req_addr = wgt_req_valid ? wgt_req_addr : inp_req_addr;
  assign req_len = wgt_req_valid ? wgt_req_len : inp_req_len;
endmodule
