// Graph pass 'dead_code_elimination' (see compiler/passes/pass.h for the pipeline).
//
// Removes nodes whose outputs are not used (transitively) by a graph output, and values that
// nothing references (unused initializers included). Graph inputs are kept.
#pragma once

#include "compiler/ir/graph.h"
#include "compiler/passes/pass.h"

namespace tessel::compiler::passes {

/// Runs the 'dead_code_elimination' pass on `g` in place.
void dead_code_elimination(ir::Graph& g, PassContext& ctx);

}  // namespace tessel::compiler::passes
