// Names of the ISA enums, the module dispatch rule and the instruction builders.
#include "isa/instruction.h"

#include "support/error.h"

namespace tessel::isa {

std::string_view to_string(Opcode op) {
  switch (op) {
    case Opcode::kLoad: return "LOAD";
    case Opcode::kStore: return "STORE";
    case Opcode::kGemm: return "GEMM";
    case Opcode::kFinish: return "FINISH";
    case Opcode::kAlu: return "ALU";
  }
  return "INVALID";
}

std::string_view to_string(MemType m) {
  switch (m) {
    case MemType::kUop: return "UOP";
    case MemType::kWgt: return "WGT";
    case MemType::kInp: return "INP";
    case MemType::kAcc: return "ACC";
    case MemType::kOut: return "OUT";
    case MemType::kAcc8: return "ACC_8BIT";
  }
  return "INVALID";
}

std::string_view to_string(AluOp op) {
  switch (op) {
    case AluOp::kMin: return "MIN";
    case AluOp::kMax: return "MAX";
    case AluOp::kAdd: return "ADD";
    case AluOp::kShr: return "SHR";
    case AluOp::kMul: return "MUL";
  }
  return "INVALID";
}

std::string_view to_string(Module m) {
  switch (m) {
    case Module::kLoad: return "load";
    case Module::kCompute: return "compute";
    case Module::kStore: return "store";
  }
  return "invalid";
}

uint64_t loop_uops(const Instruction& insn) {
  if (insn.uop_end <= insn.uop_bgn) return 0;
  return uint64_t{insn.iter_out} * insn.iter_in * (insn.uop_end - insn.uop_bgn);
}

std::string_view to_string(TokenQueue q) {
  switch (q) {
    case TokenQueue::kL2G: return "l2g";
    case TokenQueue::kG2L: return "g2l";
    case TokenQueue::kG2S: return "g2s";
    case TokenQueue::kS2G: return "s2g";
  }
  return "invalid";
}

std::string_view token_queue_route(TokenQueue q) {
  switch (q) {
    case TokenQueue::kL2G: return "load->compute";
    case TokenQueue::kG2L: return "compute->load";
    case TokenQueue::kG2S: return "compute->store";
    case TokenQueue::kS2G: return "store->compute";
  }
  return "invalid";
}

std::optional<TokenQueue> dep_pop_queue(Module m, bool prev) {
  switch (m) {
    case Module::kLoad: return prev ? std::nullopt : std::optional(TokenQueue::kG2L);
    case Module::kCompute: return prev ? TokenQueue::kL2G : TokenQueue::kS2G;
    case Module::kStore: return prev ? std::optional(TokenQueue::kG2S) : std::nullopt;
  }
  return std::nullopt;
}

std::optional<TokenQueue> dep_push_queue(Module m, bool prev) {
  switch (m) {
    case Module::kLoad: return prev ? std::nullopt : std::optional(TokenQueue::kL2G);
    case Module::kCompute: return prev ? TokenQueue::kG2L : TokenQueue::kG2S;
    case Module::kStore: return prev ? std::optional(TokenQueue::kS2G) : std::nullopt;
  }
  return std::nullopt;
}

Module Instruction::module() const {
  if (opcode == Opcode::kStore) return Module::kStore;
  if (opcode == Opcode::kLoad && (mem_type == MemType::kInp || mem_type == MemType::kWgt)) {
    return Module::kLoad;
  }
  return Module::kCompute;
}

Instruction make_mem(Opcode op, MemType type, uint32_t sram_base, uint32_t dram_base,
                     uint32_t y_size, uint32_t x_size, uint32_t x_stride, uint32_t y_pad_0,
                     uint32_t y_pad_1, uint32_t x_pad_0, uint32_t x_pad_1) {
  if (op != Opcode::kLoad && op != Opcode::kStore) {
    throw_user_error("make_mem: opcode {} is not LOAD or STORE", to_string(op));
  }
  Instruction in;
  in.opcode = op;
  in.mem_type = type;
  in.sram_base = sram_base;
  in.dram_base = dram_base;
  in.y_size = y_size;
  in.x_size = x_size;
  in.x_stride = x_stride;
  in.y_pad_0 = y_pad_0;
  in.y_pad_1 = y_pad_1;
  in.x_pad_0 = x_pad_0;
  in.x_pad_1 = x_pad_1;
  return in;
}

Instruction make_noop(Module m, DepFlags dep) {
  Instruction in;
  switch (m) {
    case Module::kLoad: in = make_mem(Opcode::kLoad, MemType::kInp, 0, 0, 0, 0, 0); break;
    case Module::kCompute: in = make_mem(Opcode::kLoad, MemType::kUop, 0, 0, 0, 0, 0); break;
    case Module::kStore: in = make_mem(Opcode::kStore, MemType::kOut, 0, 0, 0, 0, 0); break;
    default: throw_user_error("make_noop: module {} does not exist", static_cast<int>(m));
  }
  in.dep = dep;
  return in;
}

Instruction make_finish(DepFlags dep) {
  Instruction in;
  in.opcode = Opcode::kFinish;
  in.dep = dep;
  return in;
}

Instruction make_gemm(uint32_t uop_bgn, uint32_t uop_end, uint32_t iter_out, uint32_t iter_in,
                      uint32_t dst_factor_out, uint32_t dst_factor_in, uint32_t src_factor_out,
                      uint32_t src_factor_in, uint32_t wgt_factor_out, uint32_t wgt_factor_in,
                      bool reset, DepFlags dep) {
  Instruction in;
  in.opcode = Opcode::kGemm;
  in.dep = dep;
  in.reset = reset;
  in.uop_bgn = uop_bgn;
  in.uop_end = uop_end;
  in.iter_out = iter_out;
  in.iter_in = iter_in;
  in.dst_factor_out = dst_factor_out;
  in.dst_factor_in = dst_factor_in;
  in.src_factor_out = src_factor_out;
  in.src_factor_in = src_factor_in;
  in.wgt_factor_out = wgt_factor_out;
  in.wgt_factor_in = wgt_factor_in;
  return in;
}

Instruction make_alu(AluOp op, uint32_t uop_bgn, uint32_t uop_end, uint32_t iter_out,
                     uint32_t iter_in, uint32_t dst_factor_out, uint32_t dst_factor_in,
                     uint32_t src_factor_out, uint32_t src_factor_in, bool use_imm, int32_t imm,
                     DepFlags dep) {
  Instruction in;
  in.opcode = Opcode::kAlu;
  in.dep = dep;
  in.alu_op = op;
  in.uop_bgn = uop_bgn;
  in.uop_end = uop_end;
  in.iter_out = iter_out;
  in.iter_in = iter_in;
  in.dst_factor_out = dst_factor_out;
  in.dst_factor_in = dst_factor_in;
  in.src_factor_out = src_factor_out;
  in.src_factor_in = src_factor_in;
  in.use_imm = use_imm;
  in.imm = imm;
  return in;
}

}  // namespace tessel::isa
