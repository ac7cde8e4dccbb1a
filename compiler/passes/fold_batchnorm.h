// Graph pass 'fold_batchnorm' (see compiler/passes/pass.h for the pipeline).
//
// Folds inference-mode BatchNormalization into the preceding Conv when the Conv has constant
// weights (and bias), is the BatchNormalization's only producer and has no other consumer:
//   s[c] = gamma[c] / sqrt(var[c] + eps); W'[c] = W[c] * s[c]; b'[c] = (b[c] - mean[c]) * s[c] + beta[c].
// A BatchNormalization that cannot be folded becomes Mul + Add with per-channel constants of
// shape [C, 1, ..., 1] (the same affine map).
#pragma once

#include "compiler/ir/graph.h"
#include "compiler/passes/pass.h"

namespace tessel::compiler::passes {

/// Runs the 'fold_batchnorm' pass on `g` in place.
/// Throws UserError naming the node when its parameters are not constants, when epsilon is
/// negative or not finite, when var[c] + eps is not positive for a channel, or when folding gives
/// a non-finite scale, shift, weight or bias (naming the channel or element).
void fold_batchnorm(ir::Graph& g, PassContext& ctx);

}  // namespace tessel::compiler::passes
