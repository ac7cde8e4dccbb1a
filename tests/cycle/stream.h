// Test helper: places a hand-written instruction stream (and its micro-ops) in a Dram, for the
// cycle-model tests. Layout: micro-ops at byte 0 (UOP elements, dram_base = index), free data
// from byte kDataBase, instructions at kInsnAddr.
#pragma once

#include <cstdint>
#include <vector>

#include "isa/config.h"
#include "isa/instruction.h"
#include "isa/spec.h"
#include "sim/common/simulator.h"

namespace tessel::sim::cycle_test {

inline constexpr uint64_t kDataBase = 4096;    ///< first byte tests may use for data
inline constexpr uint64_t kInsnAddr = 65536;   ///< byte address of instruction 0
inline constexpr uint64_t kDramBytes = 131072; ///< DRAM size of a test stream

/// Writes `uops` at byte 0 and `insns` at kInsnAddr of a fresh Dram of kDramBytes.
inline Dram make_dram(const isa::HwConfig& cfg, const std::vector<isa::Instruction>& insns,
                      const std::vector<isa::Uop>& uops = {}) {
  Dram dram(kDramBytes);
  const isa::IsaSpec spec(cfg);
  for (size_t i = 0; i < uops.size(); ++i) {
    const uint32_t bits = spec.encode_uop(uops[i]);
    dram.write(i * 4, &bits, 4);
  }
  for (size_t i = 0; i < insns.size(); ++i) {
    uint8_t bytes[16];
    isa::IsaSpec::to_bytes(spec.encode(insns[i]), bytes);
    dram.write(kInsnAddr + i * 16, bytes, 16);
  }
  return dram;
}

/// `insn` with the given dependency flags.
inline isa::Instruction with_dep(isa::Instruction insn, bool pop_prev, bool pop_next,
                                 bool push_prev, bool push_next) {
  insn.dep = isa::DepFlags{pop_prev, pop_next, push_prev, push_next};
  return insn;
}

/// A GEMM (or ALU when alu) over uops [bgn, end) with the loop nest iter_out x iter_in and all
/// factors zero.
inline isa::Instruction make_loop(isa::Opcode op, uint32_t bgn, uint32_t end, uint32_t iter_out,
                                  uint32_t iter_in) {
  isa::Instruction insn;
  insn.opcode = op;
  insn.uop_bgn = bgn;
  insn.uop_end = end;
  insn.iter_out = iter_out;
  insn.iter_in = iter_in;
  return insn;
}

}  // namespace tessel::sim::cycle_test
