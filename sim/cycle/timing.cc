#include "sim/cycle/timing.h"

#include <algorithm>

#include "isa/program.h"

namespace tessel::sim::cycle {

uint64_t row_beats(const isa::HwConfig& cfg, uint64_t row_bytes) {
  const uint64_t bus = uint64_t(cfg.bus_bytes());
  return (row_bytes + bus - 1) / bus;
}

uint64_t transfer_beats(const isa::HwConfig& cfg, const isa::Instruction& insn) {
  if (insn.x_size == 0 || insn.y_size == 0) return 0;
  const uint64_t row_bytes = uint64_t(insn.x_size) * isa::dram_elem_bytes(cfg, insn.mem_type);
  return uint64_t(insn.y_size) * row_beats(cfg, row_bytes);
}

uint64_t pad_rows(const isa::Instruction& insn) {
  if (insn.x_size == 0) return 0;
  const uint64_t rows = uint64_t(insn.y_pad_0) + insn.y_size + insn.y_pad_1;
  const uint64_t cols = uint64_t(insn.x_pad_0) + insn.x_size + insn.x_pad_1;
  return rows * cols - uint64_t(insn.y_size) * insn.x_size;
}

uint64_t loop_uops(const isa::Instruction& insn) {
  if (insn.uop_end <= insn.uop_bgn) return 0;
  return uint64_t(insn.iter_out) * insn.iter_in * (insn.uop_end - insn.uop_bgn);
}

uint64_t compute_cycles(const isa::Instruction& insn) {
  const uint64_t n = loop_uops(insn);
  if (n == 0) return kIssueCycles;
  uint64_t fill = 0;
  if (insn.opcode == isa::Opcode::kGemm) {
    fill = insn.reset ? kResetFillCycles : kGemmFillCycles;
  } else if (insn.opcode == isa::Opcode::kAlu) {
    fill = kAluFillCycles;
  }
  return std::max(kIssueCycles, n + fill);
}

uint64_t fetch_beats(const isa::HwConfig& cfg, uint32_t insns) {
  return row_beats(cfg, uint64_t(insns) * 16);
}

}  // namespace tessel::sim::cycle
