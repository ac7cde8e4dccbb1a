// Micro-op kernels and their place in the UOP buffer, shared by every accelerator lowering (the
// TIR backend's emit_instructions and the conv2d loop-IR path): a GEMM or ALU instruction runs the
// micro-ops uop_bgn..uop_end-1 of the UOP buffer (../shared/reference/isa.md), so each distinct
// kernel gets one copy in the Program's micro-op table in DRAM and is brought into the UOP buffer
// by a LOAD UOP (compute module) before the first instruction that needs it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "isa/config.h"
#include "isa/instruction.h"

namespace tessel::compiler::accel {

/// Distinct micro-op kernels in first-use order. Two kernels are the same when their (dst, src,
/// wgt) sequences are equal.
class UopKernelTable {
 public:
  /// The id (0, 1, ... in first-intern order) of `k`, adding it if no equal kernel exists.
  int intern(const std::vector<isa::Uop>& k);
  /// The kernels by id.
  const std::vector<std::vector<isa::Uop>>& kernels() const { return kernels_; }
  /// Forgets every kernel.
  void clear();

 private:
  std::vector<std::vector<isa::Uop>> kernels_;
  std::map<std::vector<uint32_t>, int> ids_;
};

/// Places micro-op kernels in the UOP buffer (cfg.uop_depth() micro-ops). The micro-op table in
/// DRAM is the kernels concatenated in id order, starting at DRAM element `uop_base` (UOP
/// elements). When the whole table fits the buffer, initial_load() is one LOAD UOP of all of it
/// to row 0 (issued before anything else) and every kernel stays at its table offset; otherwise
/// place() loads each kernel right before an instruction that needs it when it is not resident,
/// allocating rows sequentially from 0 and wrapping to 0 when the next kernel does not fit,
/// evicting the kernels it overlaps.
class UopPlacer {
 public:
  /// `kernels` must outlive the placer. `what` names the layer or function in errors.
  UopPlacer(const isa::HwConfig& cfg, const std::vector<std::vector<isa::Uop>>& kernels, uint64_t uop_base,
            std::string what);
  /// The micro-op table in DRAM order (kernels concatenated in id order).
  const std::vector<isa::Uop>& table() const { return table_; }
  /// Per kernel id: its first micro-op's index in table().
  const std::vector<int64_t>& table_offsets() const { return offset_; }
  /// The LOAD UOP of the whole table when it fits the UOP buffer (and is not empty).
  const std::optional<isa::Instruction>& initial_load() const { return initial_; }
  /// Sets insn.uop_bgn / uop_end to kernel `kernel`'s rows, and returns the LOAD UOP that must run
  /// right before `insn` when the kernel is not resident. Throws UserError naming `what` when the
  /// kernel alone exceeds the UOP buffer, InternalError for an unknown kernel id.
  std::optional<isa::Instruction> place(int kernel, isa::Instruction& insn);

 private:
  const isa::HwConfig& cfg_;
  const std::vector<std::vector<isa::Uop>>& kernels_;
  uint64_t uop_base_;
  std::string what_;
  std::vector<isa::Uop> table_;
  std::vector<int64_t> offset_, resident_;
  int64_t cursor_ = 0;
  std::optional<isa::Instruction> initial_;
};

}  // namespace tessel::compiler::accel
