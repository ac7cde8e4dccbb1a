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

/// One ALU step of the requantisation chain on one region of the tile's accumulators
/// (`dst_region`: 0 the tile itself, k >= 1 scratch region k - 1, LayerPlan::scratch_regions):
/// `op` with an immediate, with the per-channel constant row `const_row` (index into
/// LayerPlan::const_rows) as vector source, or with region `src_region` (same numbering) as
/// vector source, element by element.
struct AluStep {
  isa::AluOp op = isa::AluOp::kAdd;
  bool use_imm = true;
  int32_t imm = 0;
  int64_t const_row = -1;
  int dst_region = 0;
  int src_region = -1;  ///< -1: no region source (immediate or const_row)
  std::string what;     ///< e.g. "clamp lo", "multiplier"
};

/// How the layer's integer semantics map to ACC initialisation and ALU ops.
struct LayerPlan {
  /// Per-channel constant rows: values[row][o] for o < OC (padded channels hold 0).
  std::vector<std::vector<int32_t>> const_rows;
  std::vector<std::string> const_row_names;
  /// in_zero_point != 0 and some output window touches the padding: the tiles holding such
  /// outputs start from a LOAD ACC of the position-dependent rest of the zero-point correction
  /// (in_zero_point * sum of w over the taps in the padding; segment acc_init) instead of a GEMM
  /// reset. The constant part is in `bias`.
  bool acc_init_tensor = false;
  /// With acc_init_tensor: every tile loads the init tensor, which then holds the whole addend
  /// `bias[o] - in_zero_point * (sum of w over the taps inside the input)` (with the folded
  /// rounding); there is no bias row. Chosen by lower_conv2d when the cost model prefers it (a
  /// layer whose tiles all touch the padding saves the bias row's ALU ADD).
  bool init_every_tile = false;
  int64_t bias_row = -1;  ///< the row of `bias`, added by ALU ADD (-1: all zero, no ADD)
  /// The per-channel addend of the accumulators [OC]: the bias, minus in_zero_point * sum(w[o])
  /// (wrapping int32), plus, when folded, the leading ADD constants of the chain (see
  /// `folded_round`). Feeds the bias row (or, with init_every_tile, the init tensor; the
  /// zero-point correction is then not in `bias`).
  std::vector<int32_t> bias;
  std::string folded_round;      ///< names of the ADD steps folded into `bias` ("" if none)
  std::vector<AluStep> requant;  ///< in order
  /// Scratch copies of the tile's accumulators the chain needs (0, or 1 or 2 for the low limbs
  /// of runtime/qnn.h: limb j works on scratch region j mod 2 and reads limb j - 1's result)
  int scratch_regions = 0;
};

/// Builds the plan from the layer, its bias [OC], the wrapping int32 sums of each output
/// channel's weights over all its taps `weight_sums` [OC] (used only when in_zero_point != 0;
/// may be empty otherwise) and `border_correction`: whether some output window touches the
/// padding (layer_touches_padding in schedule.h); `init_every_tile` selects
/// LayerPlan::init_every_tile (used only with a zero point and border_correction). Validates
/// the Requant (runtime::requant_problem) and the sizes of bias and weight sums; throws
/// UserError naming the layer and the value.
/// Steps, in the order of runtime/qnn.h's chain, each omitted when it does nothing for every
/// channel: ADD acc_offset, MAX acc_min / MIN acc_max (the clamp); per low limb j, on scratch
/// region j mod 2: MUL 0 and ADD the tile (the copy of x), MUL the limb's multiplier, ADD the
/// previous limb's scratch region (j > 0), ADD its rounding digit, SHR its shift; then on the
/// tile MUL multiplier, ADD the last limb's scratch region, ADD round, SHR shift, ADD
/// out_offset + out_zero_point, MAX clip_lo, MIN clip_hi. A clip bound is also
/// omitted when the clamp provably keeps every channel's result inside it (both clamp bounds
/// set, no step wrapping at them: the chain is monotone between them). Values use the 16-bit
/// signed immediate when one value serves every channel and fits; otherwise a constant row.
/// When the accumulators get a bias row or an every-tile init tensor, the leading ADD steps
/// (those before any other op) are folded into `bias` instead of being ALU ops.
LayerPlan make_plan(const std::string& layer, const runtime::QConv2dParams& p,
                    const std::vector<int32_t>& bias, const std::vector<int32_t>& weight_sums,
                    bool border_correction, bool init_every_tile = false);

}  // namespace tessel::compiler::accel
