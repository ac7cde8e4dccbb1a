// Graph pass 'fuse_bias' (see compiler/passes/pass.h for the pipeline).
//
// Fuses a constant per-channel Add into the producer: Conv + Add(c) with c of shape [C,1,1],
// [1,C,1,1] or [C] (broadcast over H,W) -> Conv with bias (summed with an existing constant
// bias); MatMul(x, constant B [K,N]) + Add(c) with c of shape [N] or [1,N] -> Gemm(x, B, c); Gemm
// without C + Add(c) -> Gemm with C. Only when the producer's output has the Add as its only
// consumer and is not a graph output.
#pragma once

#include "compiler/ir/graph.h"
#include "compiler/passes/pass.h"

namespace tessel::compiler::passes {

/// Runs the 'fuse_bias' pass on `g` in place.
void fuse_bias(ir::Graph& g, PassContext& ctx);

}  // namespace tessel::compiler::passes
