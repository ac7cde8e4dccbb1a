// Graph pass 'constant_folding' (see compiler/passes/pass.h for the pipeline).
//
// Replaces every ONNX node whose inputs are all constants by constant outputs (evaluated with
// the reference interpreter), turns Shape of a statically shaped value into a constant, and
// removes Identity nodes (consumers read the input; when the output is a graph output the input
// value takes over its name; an Identity from a graph input or constant straight to a graph
// output is kept). QuantizeLinear and DequantizeLinear are never folded: the QDQ import
// needs the integer weights and biases behind them.
#pragma once

#include "compiler/ir/graph.h"
#include "compiler/passes/pass.h"

namespace tessel::compiler::passes {

/// Runs the 'constant_folding' pass on `g` in place.
/// Throws what the reference interpreter throws for a node it cannot evaluate, and UserError
/// naming the node and the output when a folded float value is NaN or +-inf (allowed only for a
/// value read solely as a Clip bound, where +-inf means "no bound").
void constant_folding(ir::Graph& g, PassContext& ctx);

}  // namespace tessel::compiler::passes
