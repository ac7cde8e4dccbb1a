// tessel_compute_pipe: the GEMM / ALU execution pipeline of the compute module
// (docs/microarchitecture.md section 5.3; semantics docs/isa.md section "GEMM" and "ALU",
// sim/common/datapath.cc Datapath::gemm and Datapath::alu).
//
// `start` comes in cycle S of a GEMM or ALU instruction whose loop nest is not empty
// (n = iter_out * iter_in * (uop_end - uop_bgn) > 0). The loop nest
//
//   for i_out < iter_out, for i_in < iter_in, for u in [uop_bgn, uop_end):
//     dst = uop[u].dst + i_out * dst_factor_out + i_in * dst_factor_in      (ACC row)
//     src = uop[u].src + i_out * src_factor_out + i_in * src_factor_in      (INP row: GEMM,
//                                                                              ACC row: ALU)
//     wgt = uop[u].wgt + i_out * wgt_factor_out + i_in * wgt_factor_in      (WGT row, GEMM)
//
// Row arithmetic is modulo 2^(index bits of the scratchpad); the static checks (isa/verifier.h,
// Datapath::check_nest) guarantee every true index of a run is below the depth, so the truncated
// sums are exact. The offsets i_out * f_out + i_in * f_in are kept incrementally (no multiplier).
//
// The nest issues uop i (in that order) in cycle I = S + 1 + i through five stages, one uop per
// cycle and no stall:
//
//   stage 0  I    uop read        uop buffer address = u; loop counters and row offsets advance
//   stage 1  I+1  index gen       uop arrives; dst / src / wgt rows = uop fields + offsets
//   stage 2  I+2  scratchpad read INP + WGT (GEMM without reset), ACC dst (GEMM without reset,
//                                 ALU) and ACC src (ALU without immediate) addresses
//   stage 3  I+3  execute         read data arrive; ACC rows forwarded; multiply + adder tree
//                                 (tessel_compute_gemm) or ALU op (tessel_compute_alu)
//   stage 4  I+4  write-back      ACC row (and, by the caller, OUT row) written; `done` with the
//                                 last uop, i.e. in D = S + n + 4
//
// Forwarding: the ACC row read in stage 2 of uop i misses the writes of uops i-1 (written in I+3,
// while uop i is in stage 3) and i-2 (written in I+2, the cycle of the read). Stage 3 therefore
// takes a row from the stage-4 result (uop i-1) if the row numbers match, else from the copy of
// the previous cycle's write (stage 5, uop i-2), else from the scratchpad; uop i-3 wrote in I+1
// and is in the scratchpad by the read. Both ALU operands (dst and src) are forwarded, so any
// chain of uops on the same rows gives the results of the sequential loop in datapath.cc.
// Instructions do not overlap (the next one starts at D+1 or later), so the pipeline is empty
// at every `start`.
module tessel_compute_pipe
  import tessel_isa_pkg::*;
(
  input  logic                     clk,
  input  logic                     rst_n,
  input  logic                     start,   // cycle S of a GEMM / ALU with a non-empty nest
  input  logic [INS_WIDTH-1:0]     insn,    // the instruction, valid with `start`
  output logic                     done,    // cycle D = S + n + 4
  // uop buffer read port (data the next cycle)
  output logic                     uop_ren,
  output logic [LOG_UOP_DEPTH-1:0] uop_raddr,
  input  logic [UOP_ELEM_BITS-1:0] uop_rdata,
  // INP and WGT scratchpad read ports (data the next cycle)
  output logic                     inp_ren,
  output logic [LOG_INP_DEPTH-1:0] inp_raddr,
  input  logic [INP_ELEM_BITS-1:0] inp_rdata,
  output logic                     wgt_ren,
  output logic [LOG_WGT_DEPTH-1:0] wgt_raddr,
  input  logic [WGT_ELEM_BITS-1:0] wgt_rdata,
  // ACC read ports: dst row and (ALU) src row (data the next cycle)
  output logic                     acc_dst_ren,
  output logic [LOG_ACC_DEPTH-1:0] acc_dst_raddr,
  input  logic [ACC_ELEM_BITS-1:0] acc_dst_rdata,
  output logic                     acc_src_ren,
  output logic [LOG_ACC_DEPTH-1:0] acc_src_raddr,
  input  logic [ACC_ELEM_BITS-1:0] acc_src_rdata,
  // ACC write-back (stage 4); the caller mirrors it into OUT
  output logic                     acc_we,
  output logic [LOG_ACC_DEPTH-1:0] acc_waddr,
  output logic [ACC_ELEM_BITS-1:0] acc_wdata
);
  // Row index widths: ACC (dst), the wider of INP and ACC (src), WGT.
  localparam int DST_W = LOG_ACC_DEPTH;
  localparam int SRC_W = LOG_INP_DEPTH > LOG_ACC_DEPTH ? LOG_INP_DEPTH : LOG_ACC_DEPTH;
  localparam int WGT_W = LOG_WGT_DEPTH;
  localparam int UW = GEMM_UOP_END_WIDTH;   // uop counter (uop_end is one past the last uop)
  localparam int IOW = GEMM_ITER_OUT_WIDTH;
  localparam int IIW = GEMM_ITER_IN_WIDTH;

  // Views of the instruction as GEMM and ALU; each uses only some of its fields.
  /* verilator lint_off UNUSEDSIGNAL */
  gemm_insn_t gi;
  alu_insn_t ai;
  uop_t uop;  // unused pad bits in configurations with narrow indices
  /* verilator lint_on UNUSEDSIGNAL */
  assign gi = gemm_insn_t'(insn);
  assign ai = alu_insn_t'(insn);
  assign uop = uop_t'(uop_rdata[$bits(uop_t)-1:0]);

  // ---- per-instruction registers (stable from S+1 to D) ----
  logic                       is_alu, zero_res;  // zero_res: GEMM with reset_reg
  logic [ALU_ALU_OPCODE_WIDTH-1:0] alu_op;
  logic                       use_imm;
  logic [ALU_IMM_WIDTH-1:0]   imm;
  logic [UW-1:0]              uop_bgn, uop_last;
  logic [IOW-1:0]             iter_out_last;
  logic [IIW-1:0]             iter_in_last;
  logic [DST_W-1:0]           dst_f_out, dst_f_in;
  logic [SRC_W-1:0]           src_f_out, src_f_in;
  logic [WGT_W-1:0]           wgt_f_out, wgt_f_in;

  // ---- stage 0: loop counters ----
  logic                       issuing;  // stage 0 holds a uop this cycle (S+1 .. S+n)
  logic [UW-1:0]              u;
  logic [IOW-1:0]             i_out;
  logic [IIW-1:0]             i_in;
  logic [DST_W-1:0]           dst_base, dst_off;  // i_out * f_out, + i_in * f_in
  logic [SRC_W-1:0]           src_base, src_off;
  logic [WGT_W-1:0]           wgt_base, wgt_off;
  logic                       u_wrap, in_wrap, last0;

  assign u_wrap = u == uop_last;
  assign in_wrap = i_in == iter_in_last;
  assign last0 = u_wrap && in_wrap && i_out == iter_out_last;

  always_ff @(posedge clk) begin
    if (start) begin
      is_alu <= gi.opcode == OPCODE_ALU;
      zero_res <= gi.opcode != OPCODE_ALU && gi.reset_reg;
      alu_op <= ai.alu_opcode;
      use_imm <= ai.use_imm;
      imm <= ai.imm;
      uop_bgn <= UW'(gi.uop_bgn);
      uop_last <= gi.uop_end - 1'b1;
      iter_out_last <= gi.iter_out - 1'b1;
      iter_in_last <= gi.iter_in - 1'b1;
      if (gi.opcode == OPCODE_ALU) begin
        dst_f_out <= DST_W'(ai.dst_factor_out);
        dst_f_in <= DST_W'(ai.dst_factor_in);
        src_f_out <= SRC_W'(ai.src_factor_out);
        src_f_in <= SRC_W'(ai.src_factor_in);
        wgt_f_out <= '0;
        wgt_f_in <= '0;
      end else begin
        dst_f_out <= DST_W'(gi.dst_factor_out);
        dst_f_in <= DST_W'(gi.dst_factor_in);
        src_f_out <= SRC_W'(gi.src_factor_out);
        src_f_in <= SRC_W'(gi.src_factor_in);
        wgt_f_out <= WGT_W'(gi.wgt_factor_out);
        wgt_f_in <= WGT_W'(gi.wgt_factor_in);
      end
      u <= UW'(gi.uop_bgn);
      i_out <= '0;
      i_in <= '0;
      dst_base <= '0;
      dst_off <= '0;
      src_base <= '0;
      src_off <= '0;
      wgt_base <= '0;
      wgt_off <= '0;
    end else if (issuing) begin
      if (!u_wrap) begin
        u <= u + 1'b1;
      end else begin
        u <= uop_bgn;
        if (!in_wrap) begin
          i_in <= i_in + 1'b1;
          dst_off <= dst_off + dst_f_in;
          src_off <= src_off + src_f_in;
          wgt_off <= wgt_off + wgt_f_in;
        end else begin
          i_in <= '0;
          i_out <= i_out + 1'b1;
          dst_base <= dst_base + dst_f_out;
          dst_off <= dst_base + dst_f_out;
          src_base <= src_base + src_f_out;
          src_off <= src_base + src_f_out;
          wgt_base <= wgt_base + wgt_f_out;
          wgt_off <= wgt_base + wgt_f_out;
        end
      end
    end
  end

  always_ff @(posedge clk) begin
    if (!rst_n) issuing <= 1'b0;
    else if (start) issuing <= 1'b1;
    else if (issuing && last0) issuing <= 1'b0;
  end

  assign uop_ren = issuing;
  assign uop_raddr = LOG_UOP_DEPTH'(u);

  // ---- stage 1: index generation ----
  logic             v1, last1;
  logic [DST_W-1:0] dst_off1;
  logic [SRC_W-1:0] src_off1;
  logic [WGT_W-1:0] wgt_off1;
  // ---- stage 2: scratchpad reads ----
  logic             v2, last2;
  logic [DST_W-1:0] dst2;
  logic [SRC_W-1:0] src2;
  logic [WGT_W-1:0] wgt2;
  // ---- stage 3: execute ----
  logic             v3, last3;
  logic [DST_W-1:0] dst3, src3;
  // ---- stage 4: write-back; stage 5: the previous cycle's write, kept for forwarding ----
  logic             v4, last4, v5;
  logic [DST_W-1:0] dst4, dst5;
  logic [ACC_ELEM_BITS-1:0] wdata4, wdata5;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      v1 <= 1'b0;
      v2 <= 1'b0;
      v3 <= 1'b0;
      v4 <= 1'b0;
      v5 <= 1'b0;
    end else begin
      v1 <= issuing;
      v2 <= v1;
      v3 <= v2;
      v4 <= v3;
      v5 <= v4;
    end
  end

  always_ff @(posedge clk) begin
    if (issuing) begin
      last1 <= last0;
      dst_off1 <= dst_off;
      src_off1 <= src_off;
      wgt_off1 <= wgt_off;
    end
    if (v1) begin
      last2 <= last1;
      dst2 <= DST_W'(uop.dst_idx) + dst_off1;
      src2 <= SRC_W'(uop.src_idx) + src_off1;
      wgt2 <= WGT_W'(uop.wgt_idx) + wgt_off1;
    end
    if (v2) begin
      last3 <= last2;
      dst3 <= dst2;
      src3 <= DST_W'(src2);
    end
    if (v3) begin
      last4 <= last3;
      dst4 <= dst3;
    end
    if (v4) begin
      dst5 <= dst4;
      wdata5 <= wdata4;
    end
  end

  // Stage 2 read addresses; a GEMM with reset_reg and an ALU with immediate skip the reads
  // they do not need.
  assign inp_ren = v2 && !is_alu && !zero_res;
  assign inp_raddr = LOG_INP_DEPTH'(src2);
  assign wgt_ren = v2 && !is_alu && !zero_res;
  assign wgt_raddr = wgt2;
  assign acc_dst_ren = v2 && !zero_res;
  assign acc_dst_raddr = dst2;
  assign acc_src_ren = v2 && is_alu && !use_imm;
  assign acc_src_raddr = DST_W'(src2);

  // Stage 3: newest value of the dst and src ACC rows.
  logic [ACC_ELEM_BITS-1:0] acc_x, acc_y;
  always_comb begin
    if (v4 && dst4 == dst3) acc_x = wdata4;
    else if (v5 && dst5 == dst3) acc_x = wdata5;
    else acc_x = acc_dst_rdata;
    if (v4 && dst4 == src3) acc_y = wdata4;
    else if (v5 && dst5 == src3) acc_y = wdata5;
    else acc_y = acc_src_rdata;
  end

  logic [ACC_ELEM_BITS-1:0] gemm_res, alu_res;

  tessel_compute_gemm u_gemm (
    .clk,
    .en (v3 && !is_alu && !zero_res),
    .inp(inp_rdata),
    .wgt(wgt_rdata),
    .acc(acc_x),
    .res(gemm_res)
  );

  tessel_compute_alu u_alu (
    .clk,
    .en     (v3 && is_alu),
    .op     (alu_op),
    .use_imm,
    .imm,
    .x      (acc_x),
    .y      (acc_y),
    .res    (alu_res)
  );

  // Stage 4: write-back.
  always_comb begin
    if (zero_res) wdata4 = '0;
    else if (is_alu) wdata4 = alu_res;
    else wdata4 = gemm_res;
  end

  assign acc_we = v4;
  assign acc_waddr = dst4;
  assign acc_wdata = wdata4;
  assign done = v4 && last4;
endmodule
