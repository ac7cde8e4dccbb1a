// The architectural state of the accelerator (UOP, INP, WGT, ACC and OUT scratchpads) and the
// functional semantics of each instruction on it (../shared/reference/isa.md section 3). Shared by
// fsim and the cycle-level model, which adds timing around it; the RTL is an independent
// implementation checked against it.
#pragma once

#include <cstdint>
#include <vector>

#include "isa/config.h"
#include "isa/instruction.h"
#include "sim/common/simulator.h"

namespace tessel::sim {

/// Scratchpads and instruction semantics. Every method checks SRAM bounds over the whole loop
/// nest / rectangle before touching state and throws SimError naming `insn_index` and the
/// buffer, so a failing instruction changes nothing.
class Datapath {
 public:
  explicit Datapath(const isa::HwConfig& cfg);
  const isa::HwConfig& config() const { return cfg_; }

  /// Zeroes every scratchpad (power-on state).
  void reset();

  /// LOAD of UOP, INP, WGT, ACC or ACC_8BIT from `dram` (addresses relative to byte 0 of dram,
  /// dram_base in elements of the memory type). Zero padding as isa.md; ACC/ACC_8BIT loads also
  /// update OUT (low 8 bits). x_size == 0 does nothing.
  void load(const isa::Instruction& insn, const Dram& dram, uint32_t insn_index, Counters& c);
  /// STORE of OUT rows to dram. x_size == 0 does nothing.
  void store(const isa::Instruction& insn, Dram& dram, uint32_t insn_index, Counters& c);
  /// GEMM (or reset when insn.reset).
  void gemm(const isa::Instruction& insn, uint32_t insn_index, Counters& c);
  /// ALU (MIN, MAX, ADD, SHR with negative amounts, MUL); updates ACC and OUT.
  void alu(const isa::Instruction& insn, uint32_t insn_index, Counters& c);

  // ---- state access for tests and tools (element = one row; lane = one value in it) ----
  const isa::Uop& uop(uint32_t idx) const { return uop_[idx]; }
  /// INP row `idx`, lanes [b*BLOCK_IN + c].
  const int8_t* inp_row(uint32_t idx) const { return &inp_[size_t(idx) * cfg_.batch() * cfg_.block_in()]; }
  /// WGT row `idx`, lanes [o*BLOCK_IN + c].
  const int8_t* wgt_row(uint32_t idx) const { return &wgt_[size_t(idx) * cfg_.block_out() * cfg_.block_in()]; }
  /// ACC row `idx`, lanes [b*BLOCK_OUT + o].
  const int32_t* acc_row(uint32_t idx) const { return &acc_[size_t(idx) * cfg_.batch() * cfg_.block_out()]; }
  /// OUT row `idx`, lanes [b*BLOCK_OUT + o].
  const int8_t* out_row(uint32_t idx) const { return &out_[size_t(idx) * cfg_.batch() * cfg_.block_out()]; }

 private:
  isa::HwConfig cfg_;
  std::vector<isa::Uop> uop_;
  std::vector<int8_t> inp_, wgt_, out_;
  std::vector<int32_t> acc_;
};

}  // namespace tessel::sim
