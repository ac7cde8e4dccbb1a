// Graph pass 'shape_inference' (see compiler/passes/pass.h for the pipeline).
//
// Computes the dtype and shape of every node output of the ONNX dialect from the graph inputs
// (symbolic dimensions already bound to the batch at import) and the constants. Small int64
// tensors computed from shapes (Shape -> Gather -> Unsqueeze -> Concat chains) are evaluated on
// the way so a Reshape fed by them gets a static shape. Values produced by Tessel nodes keep the
// shapes their creator set.
#pragma once

#include "compiler/ir/graph.h"
#include "compiler/passes/pass.h"

namespace tessel::compiler::passes {

/// Runs the 'shape_inference' pass on `g` in place.
/// Throws UserError naming the node for inconsistent shapes (e.g. Conv channels vs weights),
/// a Reshape whose target shape is not computable at compile time, or invalid attributes.
void shape_inference(ir::Graph& g, PassContext& ctx);

}  // namespace tessel::compiler::passes
