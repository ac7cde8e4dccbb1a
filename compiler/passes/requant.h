// Graph pass 'requant' (see compiler/passes/pass.h for the pipeline).
//
// Derives the runtime::Requant of every qconv2d from the scales of its input (s_in), weights
// (s_w[c]) and output (s_out): M[c] = s_in * s_w[c] / s_out, formed in float32 as ONNX
// Runtime's QLinearConv / QLinearMatMul do (float(float(s_in * s_w[c]) / s_out)), and from the
// exact range [lo[c], hi[c]] of channel c's accumulator over all int8 inputs: with
// d = x - zp in [-128 - zp, 127 - zp] (padding taps give 0, inside that range),
// lo[c] = bias[c] + sum_k min(w_k * dlo, w_k * dhi) and hi[c] = bias[c] + sum_k max(...).
// The clip bounds are those already on the node (fuse_activation runs first), else
// [-128, 127].
//
// What the derivation guarantees, for every accumulator acc in [lo[c], hi[c]] (the chain is
// runtime/qnn.h's Requant; tests/compiler/test_requant.cc and test_requant_property.cc check it
// against exact integer arithmetic, on random layers and on every layer of the bundled models,
// exhaustively on ranges of up to 2^22 values and at every rounding boundary of M otherwise):
//  (1) One rounding: the result is clip(floor(a * M'[c] + 1/2) + zp) exactly, M'[c] = m / 2^S
//      the whole multiplier (its limbs combined), a = acc clamped to saturation points (below),
//      ties toward +infinity. No step of the 32-bit chain wraps (neither a product nor a sum).
//  (2) Exactness: the result is clip(floor(acc * M[c] + 1/2) + zp), round(acc * M) with the
//      one tie rule, for every channel whose M is a float32 value (what this pass hands over;
//      24-bit mantissa) and whose unsaturated accumulators, min(hi - lo, (clip_hi - clip_lo +
//      2) / M), span at most 2^27 values; otherwise too whenever a chain of at most
//      runtime::kMaxLowLimbs + 1 limbs fits, and else the channel is listed in
//      RequantFigures::inexact_channels with its worst-case error (max_error_lsb). (A 32-bit
//      accumulator with M of 2^-19 or more always falls in the first case.)
// How (per layer, then per channel):
//  - Power-of-two scales (every M[c] = 2^-k, k >= 0, and hi[c] + 2^(k-1) < 2^31):
//    multiplier 1, shift k, no clamp, no offset: add-round, arithmetic shift, clip (Tessel's own
//    quantisation; these Programs are unchanged). A channel with k >= 32 (every |acc * M| < 1/2)
//    gets shift 31, whose results are the same zero point when its range lies in
//    [-2^30, 2^30), which Tessel's weight-scale floor guarantees (integerize.h).
//  - Otherwise, per channel, the largest shift s <= 31 (multiplier m = round(M * 2^s) <= 2^31 - 1)
//    for which nothing wraps, in one of three forms, per layer the first whose worst-case
//    error (below) is at most kNegligibleErrorLsb, else the one with the least:
//      plain:   x = acc (the product spans the whole accumulator range);
//      clamp:   x = clamp(acc, L, U) where L (U) is the largest (smallest) accumulator whose
//               result is clip_lo (clip_hi) exactly, computed in integers from m, s, zp and the
//               clip: every accumulator beyond them saturates anyway, so no result changes, and
//               the product only spans the unsaturated range (about (clip_hi - clip_lo) / M
//               instead of the accumulator range; when the whole range saturates to one side,
//               one saturating point of least magnitude);
//      centred: the clamp, and an acc_offset chosen so that the 32-bit product (its rounding
//               term included) is centred on 0: for an asymmetric range (zero point -128: the
//               unsaturated accumulators are [0.5 / M, 255.5 / M]) that halves its magnitude,
//               one more bit of m.
//    A clip of one value gives multiplier 0 (the output is that value). A scale below 2^-32
//    (0 included: a float32 product that underflows) gives multiplier 0 (every |acc * M| < 1/2:
//    the output is the zero point, which is also round(acc * M)); one of 2^30 or more gives
//    multiplier 2^30, shift 0 and the clamp [-1, 1] (every accumulator but 0 saturates, with M'
//    as with M).
//    Worst-case error (in output LSBs, before rounding): max |a| * |M' - M| over the
//    accumulators a in the clamped range; an output differs from round(acc * M) only where
//    acc * M lies within that distance of a rounding boundary.
//  - Exactness check: both the chain and round(acc * M) are non-decreasing step functions of
//    acc, so they are equal iff they first reach each output level v in (clip_lo, clip_hi] at
//    the same accumulator: the smallest acc with acc * M >= v - zp - 1/2 is computed exactly
//    from M's binary value (128-bit integers) and the chain is evaluated there and one below -
//    about 512 evaluations per channel.
//  - A channel that fails it gets, first, another 32-bit multiplier: for each shift, every level
//    bounds the multipliers that place its boundary right (t m >= b and (t - 1) m < b for the
//    threshold t), an interval; the one nearest M * 2^s in it, in the first form that fits.
//  - Else low limbs: the multiplier is M itself (m = M's odd mantissa, S its exponent), split
//    into limbs of nearly equal width after the clamp and centring, the fewest limbs (and then
//    the smallest total low shift) for which no step wraps at either end of the clamped range
//    (each step is non-decreasing in x). Each low limb costs six ALU instructions per tile on
//    the accelerator (copy, multiply, add the previous limb, round digit, shift; add to the
//    top limb) and one or two scratch copies of the tile's accumulators (plan.h). On the
//    bundled QDQ models every one of the 76 layers has a channel that needs low limbs: one (two
//    limbs in all) for 75 of them, two for mobilenetv2's classifier (Gemm_104, 1000 channels);
//    mobilenetv2-12-int8: 7.09 M -> 9.83 M cycles.
// Stores the result in the node's attrs["requant"] (runtime/cpu/kernels.h format).
#pragma once

#include "compiler/ir/graph.h"
#include "compiler/passes/pass.h"
#include "runtime/qnn.h"

#include <string>
#include <vector>

namespace tessel::compiler::passes {

/// Worst-case errors at or below this many output LSBs count as none when choosing the form:
/// the float32 arithmetic of ONNX Runtime's own requantisation is off by up to 255 * 2^-24 =
/// 1.5e-5 LSB.
inline constexpr double kNegligibleErrorLsb = 1.0 / 65536;

/// Runs the 'requant' pass on `g` in place.
/// Throws UserError naming the node for negative or non-finite scales, and for an
/// accumulator range that does not fit 32 bits (the layer's int32 accumulation would wrap).
void requant(ir::Graph& g, PassContext& ctx);

/// The exact range of one output channel's int32 accumulator: every value the layer can
/// produce lies in [lo, hi].
struct AccRange {
  int64_t lo = 0, hi = 0;
};

/// Per-channel figures of one derivation (for reports and tests), one entry per channel.
struct RequantFigures {
  std::vector<double> scale;          ///< M'[c] = multiplier / 2^shift
  std::vector<double> rel_error;      ///< |M' - M| / M
  std::vector<double> max_error_lsb;  ///< worst |a * (M' - M)| over the clamped range, in LSBs
  std::vector<int> multiplier_bits;   ///< bits of the whole multiplier (0 for multiplier 0)
  std::vector<int> limbs;             ///< limbs of the multiplier (1: no low limbs)
  /// "power of two", "plain", "clamp" or "centred" (the one-limb form of the layer), or
  /// "wide" when some channel has low limbs
  std::string form;
  /// Channels whose results may differ from round(acc * M) (no chain of at most
  /// runtime::kMaxLowLimbs + 1 limbs fits 32 bits; see above); empty for every layer of the
  /// bundled models and the tests.
  std::vector<int> inexact_channels;
};

/// The derivation above for one layer: `m` holds M[c] per output channel, `acc` the range of
/// its accumulator (same length); out_zero_point, clip_lo and clip_hi go to the Requant as
/// they are (-128 <= clip_lo <= clip_hi <= 127). Per-channel fields collapse to one entry when
/// all channels agree. `where` names the layer in errors; `figures` (may be null) receives the
/// figures. M[c] = 0 (a float32 product that underflows) gives the zero point. `exact` false
/// (tessel --approximate-requant) stops after the one-limb chain: the channels that do not round
/// exactly like M are listed in RequantFigures::inexact_channels. Throws
/// UserError for M[c] < 0, non-finite M[c], lo > hi, or a range outside
/// [-2^31, 2^31 - 1].
runtime::Requant derive_requant(const std::vector<double>& m, const std::vector<AccRange>& acc,
                                int32_t out_zero_point, const std::string& where, int32_t clip_lo = -128,
                                int32_t clip_hi = 127, RequantFigures* figures = nullptr, bool exact = true);

/// The range of one output channel's accumulator bias + sum_k w[k] * d_k over all
/// d_k in [dlo, dhi] (dlo <= 0 <= dhi; with in_zero_point zp, dlo = -128 - zp and dhi = 127 - zp),
/// for `w` its weights (all taps): [bias + sum min(w dlo, w dhi), bias + sum max(w dlo, w dhi)].
AccRange channel_acc_range(const std::vector<int64_t>& w, int64_t bias, int64_t dlo, int64_t dhi);

/// The accumulator range of every output channel of qconv2d node `n` (inputs x, int8 weights
/// [OC, ...] and int32 bias [OC]) over all int8 inputs, as defined above.
std::vector<AccRange> qconv2d_acc_ranges(const ir::Graph& g, const ir::Node& n);

/// M[c] of qconv2d node `n` as defined above.
std::vector<double> qconv2d_scales(const ir::Graph& g, const ir::Node& n);

}  // namespace tessel::compiler::passes
