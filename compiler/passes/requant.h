// Graph pass 'requant' (see compiler/passes/pass.h for the pipeline).
//
// Derives the runtime::Requant of every qconv2d from the scales of its input (s_in), weights
// (s_w[c]) and output (s_out): M[c] = s_in * s_w[c] / s_out.
//  - If every M[c] is an exact power of two 2^-k with 0 <= k <= 31: pre_shift 0,
//    multiplier 1, shift k (add-round, arithmetic shift, clip).
//  - Otherwise: a common pre_shift p is the smallest p >= 0 with (B[c] >> p) * 2^14 < 2^31 for
//    every channel, where B[c] = |bias[c]| + sum over the channel's weights of |w| * max|x - zp|
//    (max|x - zp| = max(127 - zp, zp + 128)) bounds |acc|; then per channel the multiplier has
//    14 significant bits, m[c] = round(M[c] * 2^(p + shift[c])) in [2^13, 2^14), with shift[c]
//    clamped to [0, 31] (fewer bits when the clamp applies). So |acc >> p| * m < 2^31.
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
