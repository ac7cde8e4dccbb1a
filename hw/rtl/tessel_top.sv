// tessel_top: the accelerator (docs/microarchitecture.md, section 8 for the structure, 8.4 for
// the ports).
//
// Contents: fetch (section 3), the three command queues and the four dependency-token queues
// (tessel_fifo, section 1), the load, compute and store modules (sections 4 and 5), the INP and
// WGT scratchpads (written by load, read by compute), the memory arbiter with the AXI4 master
// port (section 2.2), the FINISH drain counters and the trace outputs.
//
// Run protocol: the host sets insn_base (16-byte aligned DRAM byte address), insn_count
// (instructions) and the run-time queue limits (cmd_queue_limit 1 .. CMD_QUEUE_DEPTH,
// token_queue_limit 1 .. TOKEN_QUEUE_DEPTH entries) and pulses `launch` in cycle -1. `launch`
// also empties every queue and returns every module to idle (scratchpads keep their contents).
// Fetch makes its first bus request in cycle 0. `done` rises in the cycle after FINISH's done
// cycle and stays high until the next launch.
//
// FINISH drain (section 4): registered counters of the instructions fetch dispatched to load and
// store and of those load and store have done; `drained` (to compute) is their equality.
//
// Trace: dbg_fetch_dispatch pulses in every dispatch cycle, dbg_<module>_start / _done in the
// start (S) and done (D) cycles of every instruction of that module (one pulse each when S = D).
//
// AXI4 master: IDs are the master numbers (0 fetch, 1 load, 2 compute, 3 store); every burst is
// INCR with size log2(bus bytes); RREADY and BREADY are always 1.
module tessel_top
  import tessel_isa_pkg::*;
#(
    localparam int WB = BUS_WIDTH / 8  // bus bytes
) (
    input  logic                 clk,
    input  logic                 rst_n,
    input  logic                 launch,             // one-cycle pulse in cycle -1
    input  logic [63:0]          insn_base,          // bytes, 16-byte aligned
    input  logic [31:0]          insn_count,         // instructions
    input  logic [31:0]          cmd_queue_limit,    // 1 .. CMD_QUEUE_DEPTH
    input  logic [31:0]          token_queue_limit,  // 1 .. TOKEN_QUEUE_DEPTH
    output logic                 done,               // from FINISH's D + 1 until the next launch
    // AXI4 master: read address / data
    output logic                 arvalid,
    input  logic                 arready,
    output logic [63:0]          araddr,
    output logic [1:0]           arid,
    output logic [7:0]           arlen,
    output logic [2:0]           arsize,
    output logic [1:0]           arburst,
    input  logic                 rvalid,
    output logic                 rready,
    input  logic [BUS_WIDTH-1:0] rdata,
    input  logic [1:0]           rid,
    input  logic                 rlast,
    input  logic [1:0]           rresp,
    // AXI4 master: write address / data / response
    output logic                 awvalid,
    input  logic                 awready,
    output logic [63:0]          awaddr,
    output logic [1:0]           awid,
    output logic [7:0]           awlen,
    output logic [2:0]           awsize,
    output logic [1:0]           awburst,
    output logic                 wvalid,
    input  logic                 wready,
    output logic [BUS_WIDTH-1:0] wdata,
    output logic [WB-1:0]        wstrb,
    output logic                 wlast,
    input  logic                 bvalid,
    output logic                 bready,
    input  logic [1:0]           bid,
    input  logic [1:0]           bresp,
    // trace
    output logic                 dbg_fetch_dispatch,
    output logic                 dbg_load_start,
    output logic                 dbg_load_done,
    output logic                 dbg_compute_start,
    output logic                 dbg_compute_done,
    output logic                 dbg_store_start,
    output logic                 dbg_store_done
);
  localparam int M_FETCH = 0, M_LOAD = 1, M_COMPUTE = 2, M_STORE = 3;  // master numbers = AXI IDs
  localparam int Q_LOAD = 0, Q_COMPUTE = 1, Q_STORE = 2;              // tessel_fetch queue order
  localparam int INP_LANES = INP_ELEM_BITS < BUS_WIDTH ? BUS_WIDTH / INP_ELEM_BITS : 1;
  localparam int WGT_LANES = WGT_ELEM_BITS < BUS_WIDTH ? BUS_WIDTH / WGT_ELEM_BITS : 1;
  localparam int OUT_RLANES = OUT_ELEM_BITS < BUS_WIDTH ? BUS_WIDTH / OUT_ELEM_BITS : 1;

  // Everything but fetch restarts with the run: launch empties the queues and idles the modules.
  logic run_rst_n;
  assign run_rst_n = rst_n && !launch;

  // ---- master ports ----
  logic [3:0]                 m_req_valid, m_req_last, m_req_write, m_req_grant, m_rd_valid;
  logic [3:0][63:0]           m_req_addr;
  logic [3:0][7:0]            m_req_len;
  logic [BUS_WIDTH-1:0]       m_rd_data;
  logic                       st_wr_valid, st_wr_last, st_wr_ready, st_wr_resp;
  logic [BUS_WIDTH-1:0]       st_wr_data;
  logic [WB-1:0]              st_wr_strb;

  // ---- fetch and the command queues ----
  logic [2:0]                 q_push, q_room, q_valid, q_pop;
  logic [INS_WIDTH-1:0]       fetch_insn;
  logic [2:0][INS_WIDTH-1:0]  q_head;

  tessel_fetch u_fetch (
      .clk,
      .rst_n,
      .launch,
      .insn_base,
      .insn_count,
      .req_valid(m_req_valid[M_FETCH]),
      .req_last (m_req_last[M_FETCH]),
      .req_write(m_req_write[M_FETCH]),
      .req_addr (m_req_addr[M_FETCH]),
      .req_len  (m_req_len[M_FETCH]),
      .req_grant(m_req_grant[M_FETCH]),
      .rd_valid (m_rd_valid[M_FETCH]),
      .rd_data  (m_rd_data),
      .room     (q_room),
      .push     (q_push),
      .push_insn(fetch_insn),
      .dispatch (dbg_fetch_dispatch)
  );

  for (genvar q = 0; q < 3; q++) begin : g_cmdq
    tessel_fifo #(
        .WIDTH(INS_WIDTH),
        .DEPTH(CMD_QUEUE_DEPTH)
    ) u_q (
        .clk,
        .rst_n    (run_rst_n),
        .limit    (cmd_queue_limit),
        .push     (q_push[q]),
        .push_data(fetch_insn),
        .pop      (q_pop[q]),
        .head     (q_head[q]),
        .room     (q_room[q]),
        .nonempty (q_valid[q])
    );
  end

  // ---- dependency-token queues ----
  logic l2g_push, l2g_pop, l2g_room, l2g_nonempty;
  logic g2l_push, g2l_pop, g2l_room, g2l_nonempty;
  logic g2s_push, g2s_pop, g2s_room, g2s_nonempty;
  logic s2g_push, s2g_pop, s2g_room, s2g_nonempty;
  logic [3:0] t_push, t_pop, t_room, t_nonempty;
  assign t_push = {s2g_push, g2s_push, g2l_push, l2g_push};
  assign t_pop = {s2g_pop, g2s_pop, g2l_pop, l2g_pop};
  assign {s2g_room, g2s_room, g2l_room, l2g_room} = t_room;
  assign {s2g_nonempty, g2s_nonempty, g2l_nonempty, l2g_nonempty} = t_nonempty;

  logic [3:0] unused_token_head;  // tokens carry no data
  for (genvar q = 0; q < 4; q++) begin : g_tokq
    tessel_fifo #(
        .WIDTH     (1),
        .DEPTH     (TOKEN_QUEUE_DEPTH),
        .STORE_DATA(1'b0)
    ) u_q (
        .clk,
        .rst_n    (run_rst_n),
        .limit    (token_queue_limit),
        .push     (t_push[q]),
        .push_data(1'b0),
        .pop      (t_pop[q]),
        .head     (unused_token_head[q]),
        .room     (t_room[q]),
        .nonempty (t_nonempty[q])
    );
  end

  // ---- INP and WGT scratchpads ----
  logic [INP_LANES-1:0]                    inp_we;
  logic [INP_LANES-1:0][LOG_INP_DEPTH-1:0] inp_waddr;
  logic [INP_LANES-1:0][INP_ELEM_BITS-1:0] inp_wdata;
  logic [WGT_LANES-1:0]                    wgt_we;
  logic [WGT_LANES-1:0][LOG_WGT_DEPTH-1:0] wgt_waddr;
  logic [WGT_LANES-1:0][WGT_ELEM_BITS-1:0] wgt_wdata;
  logic                                    inp_ren, wgt_ren;
  logic [LOG_INP_DEPTH-1:0]                inp_raddr;
  logic [LOG_WGT_DEPTH-1:0]                wgt_raddr;
  logic [INP_ELEM_BITS-1:0]                inp_rdata;
  logic [WGT_ELEM_BITS-1:0]                wgt_rdata;

  tessel_sram #(
      .WIDTH (INP_ELEM_BITS),
      .DEPTH (INP_DEPTH),
      .WLANES(INP_LANES)
  ) u_inp (
      .clk,
      .we   (inp_we),
      .waddr(inp_waddr),
      .wdata(inp_wdata),
      .re   (inp_ren),
      .raddr(inp_raddr),
      .rdata(inp_rdata)
  );

  tessel_sram #(
      .WIDTH (WGT_ELEM_BITS),
      .DEPTH (WGT_DEPTH),
      .WLANES(WGT_LANES)
  ) u_wgt (
      .clk,
      .we   (wgt_we),
      .waddr(wgt_waddr),
      .wdata(wgt_wdata),
      .re   (wgt_ren),
      .raddr(wgt_raddr),
      .rdata(wgt_rdata)
  );

  // ---- load ----
  tessel_load u_load (
      .clk,
      .rst_n       (run_rst_n),
      .cmd_valid   (q_valid[Q_LOAD]),
      .cmd_insn    (q_head[Q_LOAD]),
      .cmd_pop     (q_pop[Q_LOAD]),
      .g2l_nonempty,
      .g2l_pop,
      .l2g_room,
      .l2g_push,
      .req_valid   (m_req_valid[M_LOAD]),
      .req_last    (m_req_last[M_LOAD]),
      .req_write   (m_req_write[M_LOAD]),
      .req_addr    (m_req_addr[M_LOAD]),
      .req_len     (m_req_len[M_LOAD]),
      .req_grant   (m_req_grant[M_LOAD]),
      .rd_valid    (m_rd_valid[M_LOAD]),
      .rd_data     (m_rd_data),
      .inp_we,
      .inp_waddr,
      .inp_wdata,
      .wgt_we,
      .wgt_waddr,
      .wgt_wdata,
      .dbg_start   (dbg_load_start),
      .dbg_done    (dbg_load_done)
  );

  // ---- compute ----
  logic                                    drained, finish;
  logic                                    out_ren;
  logic [LOG_OUT_DEPTH-1:0]                out_raddr;
  logic [OUT_RLANES-1:0][OUT_ELEM_BITS-1:0] out_rdata;
  logic                                    cp_wr_valid, cp_wr_last;
  logic [BUS_WIDTH-1:0]                    cp_wr_data;
  logic [WB-1:0]                           cp_wr_strb;

  tessel_compute u_compute (
      .clk,
      .rst_n       (run_rst_n),
      .cmd_valid   (q_valid[Q_COMPUTE]),
      .cmd_insn    (q_head[Q_COMPUTE]),
      .cmd_pop     (q_pop[Q_COMPUTE]),
      .l2g_nonempty,
      .l2g_pop,
      .s2g_nonempty,
      .s2g_pop,
      .g2l_room,
      .g2l_push,
      .g2s_room,
      .g2s_push,
      .drained,
      .finish,
      .dbg_start   (dbg_compute_start),
      .dbg_done    (dbg_compute_done),
      .req_valid   (m_req_valid[M_COMPUTE]),
      .req_last    (m_req_last[M_COMPUTE]),
      .req_write   (m_req_write[M_COMPUTE]),
      .req_addr    (m_req_addr[M_COMPUTE]),
      .req_len     (m_req_len[M_COMPUTE]),
      .req_grant   (m_req_grant[M_COMPUTE]),
      .rd_valid    (m_rd_valid[M_COMPUTE]),
      .rd_data     (m_rd_data),
      .wr_ready    (1'b0),
      .wr_valid    (cp_wr_valid),
      .wr_last     (cp_wr_last),
      .wr_data     (cp_wr_data),
      .wr_strb     (cp_wr_strb),
      .wr_resp     (1'b0),
      .inp_ren,
      .inp_raddr,
      .inp_rdata,
      .wgt_ren,
      .wgt_raddr,
      .wgt_rdata,
      .out_ren,
      .out_raddr,
      .out_rdata
  );

  // ---- store ----
  tessel_store u_store (
      .clk,
      .rst_n       (run_rst_n),
      .cmd_valid   (q_valid[Q_STORE]),
      .cmd_insn    (q_head[Q_STORE]),
      .cmd_pop     (q_pop[Q_STORE]),
      .g2s_nonempty,
      .g2s_pop,
      .s2g_room,
      .s2g_push,
      .req_valid   (m_req_valid[M_STORE]),
      .req_last    (m_req_last[M_STORE]),
      .req_write   (m_req_write[M_STORE]),
      .req_addr    (m_req_addr[M_STORE]),
      .req_len     (m_req_len[M_STORE]),
      .req_grant   (m_req_grant[M_STORE]),
      .wr_ready    (st_wr_ready),
      .wr_valid    (st_wr_valid),
      .wr_last     (st_wr_last),
      .wr_data     (st_wr_data),
      .wr_strb     (st_wr_strb),
      .wr_resp     (st_wr_resp),
      .out_ren,
      .out_raddr,
      .out_rdata,
      .dbg_start   (dbg_store_start),
      .dbg_done    (dbg_store_done)
  );

  // ---- memory arbiter and AXI4 master port ----
  tessel_mem_arbiter u_arbiter (
      .clk,
      .rst_n    (run_rst_n),
      .req_valid(m_req_valid),
      .req_last (m_req_last),
      .req_write(m_req_write),
      .req_addr (m_req_addr),
      .req_len  (m_req_len),
      .req_grant(m_req_grant),
      .rd_valid (m_rd_valid),
      .rd_data  (m_rd_data),
      .wr_valid (st_wr_valid),
      .wr_last  (st_wr_last),
      .wr_data  (st_wr_data),
      .wr_strb  (st_wr_strb),
      .wr_ready (st_wr_ready),
      .wr_resp  (st_wr_resp),
      .arvalid,
      .arready,
      .araddr,
      .arid,
      .arlen,
      .arsize,
      .arburst,
      .rvalid,
      .rready,
      .rdata,
      .rid,
      .rlast,
      .rresp,
      .awvalid,
      .awready,
      .awaddr,
      .awid,
      .awlen,
      .awsize,
      .awburst,
      .wvalid,
      .wready,
      .wdata,
      .wstrb,
      .wlast,
      .bvalid,
      .bready,
      .bid,
      .bresp
  );

  // ---- FINISH drain counters and done ----
  logic [31:0] load_dispatched, load_done_count, store_dispatched, store_done_count;
  logic        done_q;
  always_ff @(posedge clk) begin
    if (!run_rst_n) begin
      load_dispatched <= '0;
      load_done_count <= '0;
      store_dispatched <= '0;
      store_done_count <= '0;
      done_q <= 1'b0;
    end else begin
      if (q_push[Q_LOAD]) load_dispatched <= load_dispatched + 32'd1;
      if (dbg_load_done) load_done_count <= load_done_count + 32'd1;
      if (q_push[Q_STORE]) store_dispatched <= store_dispatched + 32'd1;
      if (dbg_store_done) store_done_count <= store_done_count + 32'd1;
      if (finish) done_q <= 1'b1;
    end
  end
  assign drained = load_dispatched == load_done_count && store_dispatched == store_done_count;
  assign done = done_q;

  // The compute module never writes (its W outputs are constant 0).
  logic unused_compute_w;
  assign unused_compute_w = ^{cp_wr_valid, cp_wr_last, cp_wr_data, cp_wr_strb};
endmodule
