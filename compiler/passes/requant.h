// Graph pass 'requant' (see compiler/passes/pass.h for the pipeline).
//
// Derives the runtime::Requant of every qconv2d from the scales of its input (s_in), weights
// (s_w[c]) and output (s_out): M[c] = s_in * s_w[c] / s_out.
//  - If every M[c] is an exact power of two 2^-k with 0 <= k <= 31: pre_shift 0,
//    multiplier 1, shift k (add-round, arithmetic shift, clip).
//  - Otherwise: every common pre_shift p in [0, 31] is tried (those where acc + 2^(p-1) could
//    wrap are skipped) and the one with the least worst-case error over the channels is kept
//    (ties: the smaller p). For a given p, channel c gets the largest shift[c] in [0, 31] whose
//    multiplier m[c] = round(M[c] * 2^(p + shift[c])) keeps hb[c] * m[c] + 2^(shift[c]-1) below
//    2^31, where hb[c] = (B[c] >> p) + 1 bounds |acc >> p| after rounding, so neither the MUL
//    nor the rounding ADD wraps. Its error, in output LSBs against round(acc * M[c]), is
//    2^(p-1) * M[c] (the pre_shift rounding, 0 for p = 0) plus 16 * |m[c] / 2^(p+shift[c]) -
//    M[c]| / M[c] (the multiplier's relative error at a typical output magnitude of 16 LSBs).
//    When no shift fits, M * 2^(p+31) < 1/2 gives multiplier 1, shift 31; otherwise (M * 2^p *
//    hb >= 2^31, outputs saturate) shift 0 and the largest multiplier that does not wrap.
//    B[c] bounds |acc| of channel c exactly over all int8 inputs: with d = x - zp in
//    [-128 - zp, 127 - zp] (padding taps give 0, inside that range), B[c] = max(|bias[c] +
//    sum_k max(w_k * dlo, w_k * dhi)|, |bias[c] + sum_k min(w_k * dlo, w_k * dhi)|).
//    M[c] is formed in float32 as ONNX Runtime's QLinearConv/QLinearMatMul do:
//    float(float(s_in * s_w[c]) / s_out).
//    The former derivation (14-bit multipliers, the least p that fits) lost up to 0.1 LSB in the
//    pre_shift; see tests/compiler/test_layer_agreement.cc for the per-layer agreement with the
//    reference this gives.
// Stores the result in the node's attrs["requant"] (runtime/cpu/kernels.h format).
#pragma once

#include "compiler/ir/graph.h"
#include "compiler/passes/pass.h"
#include "runtime/qnn.h"

#include <string>
#include <vector>

namespace tessel::compiler::passes {

/// Runs the 'requant' pass on `g` in place.
/// Throws UserError naming the node for non-positive or non-finite scales.
void requant(ir::Graph& g, PassContext& ctx);

/// The derivation above for one layer: `m` holds M[c] per output channel, `acc_bound` the bound
/// B[c] of |acc| (same length); out_zero_point goes to Requant::out_zero_point, the clip stays
/// [-128, 127]. multiplier/shift collapse to one entry when all channels agree. `where` names the
/// layer in errors. Throws UserError for M[c] <= 0, non-finite M[c] or B[c] >= 2^31.
runtime::Requant derive_requant(const std::vector<double>& m, const std::vector<int64_t>& acc_bound,
                                int32_t out_zero_point, const std::string& where);

}  // namespace tessel::compiler::passes
