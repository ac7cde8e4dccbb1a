// Lint harness for the generated tessel_isa_pkg: unpacks one instruction of every format and one
// micro-op through the package's structs and field positions, so Verilator checks that the
// package parses and that struct widths agree with INS_WIDTH/UOP_WIDTH and the _LSB/_WIDTH values.
module sv_pkg_lint_top
  import tessel_isa_pkg::*;
(
  input  logic [INS_WIDTH-1:0] insn,
  input  logic [UOP_WIDTH-1:0] uop,
  output logic [2:0]           opcode,
  output logic                 widths_ok,
  output logic [LOG_ACC_DEPTH-1:0] dst_idx,
  output logic [15:0]          imm
);
  mem_insn_t    mem;
  gemm_insn_t   gemm;
  alu_insn_t    alu;
  finish_insn_t fin;
  uop_t         u;
  assign mem = insn;
  assign gemm = insn;
  assign alu = insn;
  assign fin = insn;
  assign u = uop;
  assign opcode = fin.opcode;
  assign dst_idx = u.dst_idx;
  assign imm = alu.imm;
  assign widths_ok = ($bits(mem_insn_t) == INS_WIDTH) && ($bits(gemm_insn_t) == INS_WIDTH) &&
                     ($bits(alu_insn_t) == INS_WIDTH) && ($bits(finish_insn_t) == INS_WIDTH) &&
                     ($bits(uop_t) == UOP_WIDTH) && (GEMM_UOP_BGN_WIDTH == LOG_UOP_DEPTH) &&
                     (insn[MEM_SRAM_BASE_MSB:MEM_SRAM_BASE_LSB] == mem.sram_base) &&
                     (gemm.dst_factor_out == insn[GEMM_DST_FACTOR_OUT_MSB:GEMM_DST_FACTOR_OUT_LSB]) &&
                     (mem.memory_type != MEM_ID_OUT || opcode == OPCODE_STORE);
endmodule
