#include "sim/common/queues.h"

#include <fmt/format.h>

namespace tessel::sim {

using isa::Module;
using isa::TokenQueue;

std::optional<TokenQueue> pop_queue(Module m, bool prev) {
  switch (m) {
    case Module::kLoad:
      if (prev) return std::nullopt;
      return TokenQueue::kG2L;
    case Module::kCompute:
      return prev ? TokenQueue::kL2G : TokenQueue::kS2G;
    case Module::kStore:
      if (!prev) return std::nullopt;
      return TokenQueue::kG2S;
  }
  return std::nullopt;
}

std::optional<TokenQueue> push_queue(Module m, bool prev) {
  switch (m) {
    case Module::kLoad:
      if (prev) return std::nullopt;
      return TokenQueue::kL2G;
    case Module::kCompute:
      return prev ? TokenQueue::kG2L : TokenQueue::kG2S;
    case Module::kStore:
      if (!prev) return std::nullopt;
      return TokenQueue::kS2G;
  }
  return std::nullopt;
}

namespace {

const char* module_name(Module m) {
  switch (m) {
    case Module::kLoad: return "load";
    case Module::kCompute: return "compute";
    case Module::kStore: return "store";
  }
  return "?";
}

[[noreturn]] void illegal_flag(const isa::Instruction& insn, uint32_t insn_index, const char* flag) {
  Module m = insn.module();
  throw SimError(fmt::format(
      "{} module: insn {} ({}) sets {}, which the {} module does not have (it has no {} module)",
      module_name(m), insn_index, describe(insn), flag, module_name(m),
      m == Module::kLoad ? "previous" : "next"));
}

}  // namespace

TokenPorts token_ports(const isa::Instruction& insn, uint32_t insn_index) {
  TokenPorts p;
  Module m = insn.module();
  const isa::DepFlags& d = insn.dep;
  if (d.pop_prev) {
    auto q = pop_queue(m, true);
    if (!q) illegal_flag(insn, insn_index, "pop_prev");
    p.pops[p.n_pops++] = *q;
  }
  if (d.pop_next) {
    auto q = pop_queue(m, false);
    if (!q) illegal_flag(insn, insn_index, "pop_next");
    p.pops[p.n_pops++] = *q;
  }
  if (d.push_prev) {
    auto q = push_queue(m, true);
    if (!q) illegal_flag(insn, insn_index, "push_prev");
    p.pushes[p.n_pushes++] = *q;
  }
  if (d.push_next) {
    auto q = push_queue(m, false);
    if (!q) illegal_flag(insn, insn_index, "push_next");
    p.pushes[p.n_pushes++] = *q;
  }
  return p;
}

std::string describe(const isa::Instruction& insn) {
  static const char* const kMem[] = {"UOP", "WGT", "INP", "ACC", "OUT", "ACC_8BIT"};
  static const char* const kAlu[] = {"MIN", "MAX", "ADD", "SHR", "MUL"};
  auto mem = [&] {
    unsigned t = unsigned(insn.mem_type);
    return t < 6 ? kMem[t] : "?";
  };
  switch (insn.opcode) {
    case isa::Opcode::kLoad: return fmt::format("LOAD {}", mem());
    case isa::Opcode::kStore: return fmt::format("STORE {}", mem());
    case isa::Opcode::kGemm: return insn.reset ? "GEMM reset" : "GEMM";
    case isa::Opcode::kFinish: return "FINISH";
    case isa::Opcode::kAlu: {
      unsigned a = unsigned(insn.alu_op);
      return fmt::format("ALU {}", a < 5 ? kAlu[a] : "?");
    }
  }
  return "?";
}

}  // namespace tessel::sim
