// Graph pass 'placement' (see compiler/passes/pass.h for the pipeline).
//
// Places each node: qconv2d (conv2d and dense) on the accelerator when PassContext::offload is
// set, everything else on the CPU.
#pragma once

#include "compiler/ir/graph.h"
#include "compiler/passes/pass.h"

namespace tessel::compiler::passes {

/// Runs the 'placement' pass on `g` in place.
void placement(ir::Graph& g, PassContext& ctx);

}  // namespace tessel::compiler::passes
