// Graph pass 'quantize' (see compiler/passes/pass.h for the pipeline).
//
// Post-training quantisation of float models with power-of-two scales. Runs the float graph
// (reference interpreter) on PassContext::calibration, records max |x| of every value, and
// sets scale = 2^ceil(log2(max / 127)) (zero point 0; max = 0 gives scale 1) for the graph
// inputs consumed by quantisable operators and for the outputs of Conv, Gemm, MatMul, Add,
// AveragePool, GlobalAveragePool and Concat (taking the range after a sole Relu/Clip consumer).
// Then integerize() produces the integer graph, quantising the weights per output channel with
// power-of-two scales (symmetric int8; a channel's scale is floored so that its accumulator fits
// 32 bits, which makes near-zero weights next to a bias quantise to 0: integerize.h) and biases to
// int32 at scale s_in * s_w[c]. Every requantisation multiplier is a power of two, so the
// requant pass gives multiplier 1 and a rounding shift.
// Does nothing for models that were already quantised (PassContext::model_was_quantized).
#pragma once

#include "compiler/ir/graph.h"
#include "compiler/passes/pass.h"

namespace tessel::compiler::passes {

/// Runs the 'quantize' pass on `g` in place.
/// Throws UserError when the model is float and PassContext::calibration is empty, or when a
/// calibration entry has the wrong number, dtype or shape of tensors.
void quantize(ir::Graph& g, PassContext& ctx);

}  // namespace tessel::compiler::passes
