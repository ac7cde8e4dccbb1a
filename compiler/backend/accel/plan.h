// The requantisation plan of a layer: how the integer semantics of runtime/qnn.h map onto ACC
// initialisation (bias, zero-point correction) and a chain of ALU instructions with immediates or
// per-channel constant rows (docs/accel-backend.md section 3).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "isa/instruction.h"
#include "runtime/qnn.h"

namespace tessel::compiler::accel {

/// One ALU step of the requantisation chain: `op` with an immediate or with the per-channel
/// constant row `const_row` (index into LayerPlan::const_rows) as vector source.
struct AluStep {
  isa::AluOp op = isa::AluOp::kAdd;
  bool use_imm = true;
  int32_t imm = 0;
  int64_t const_row = -1;
  std::string what;  ///< e.g. "round pre_shift", "multiplier"
};

/// How the layer's integer semantics map to ACC initialisation and ALU ops.
struct LayerPlan {
  /// Per-channel constant rows: values[row][o] for o < OC (padded channels hold 0).
  std::vector<std::vector<int32_t>> const_rows;
  std::vector<std::string> const_row_names;
  bool acc_init_tensor = false;  ///< in_zero_point != 0: LOAD ACC of bias + correction per tile
  int64_t bias_row = -1;         ///< otherwise: the bias row added by ALU ADD (-1: all zero)
  /// The per-channel addend of the accumulators [OC]: the bias plus, when folded, the first
  /// rounding constant of the chain (see `folded_round`). Feeds the bias row or the init tensor.
  std::vector<int32_t> bias;
  std::string folded_round;      ///< name of the rounding step folded into `bias` ("" if none)
  std::vector<AluStep> requant;  ///< in order
};

/// Builds the plan from the layer and its bias [OC] (validates Requant: sizes 1 or OC, shifts in
/// [0, 31], -128 <= clip_lo <= clip_hi <= 127; throws UserError naming the layer and the value).
/// Steps: ADD/SHR for pre_shift, MUL (skipped when every multiplier is 1), ADD/SHR for shift
/// (per-channel rows when shifts differ), ADD out_zero_point (skipped when 0), MAX, MIN. Values
/// use the 16-bit signed immediate when one value serves every channel and fits; otherwise a
/// constant row. When the accumulators get a bias row or an init tensor, the first rounding ADD
/// (if no other step precedes it) is folded into `bias` instead of being an ALU op.
LayerPlan make_plan(const std::string& layer, const runtime::QConv2dParams& p,
                    const std::vector<int32_t>& bias);

}  // namespace tessel::compiler::accel
