// Graph pass 'qdq_import' (see compiler/passes/pass.h for the pipeline).
//
// Imports quantised models (QDQ and QOperator/QLinear formats) into Tessel's integer operators:
//  1. QLinearConv / QLinearMatMul / QLinearAdd / QLinearGlobalAveragePool are expanded into
//     DequantizeLinear -> float op -> QuantizeLinear (same parameters, so the same meaning).
//  2. Quantisation-transparent operators on quantised tensors (MaxPool, Reshape, Flatten,
//     Identity, Squeeze, Unsqueeze applied to a QuantizeLinear output) are moved before the
//     QuantizeLinear (they commute with it).
//  3. Each QuantizeLinear -> DequantizeLinear pair with equal parameters becomes a fake_quant
//     marker; uint8 parameters move to int8 (zero point - 128).
//  4. integerize() (compiler/passes/integerize.h) turns Conv/Gemm/MatMul/Add/pools/Relu/Clip
//     between fake_quant markers into qconv2d/qadd/avgpool/qclip... with int8 tensors; weights
//     and biases come from DequantizeLinear of int8 / int32 constants (uint8 constants shifted
//     by -128).
// Sets PassContext::model_was_quantized when the model had Q/DQ/QLinear operators; otherwise
// the graph is left unchanged.
#pragma once

#include "compiler/ir/graph.h"
#include "compiler/passes/pass.h"

namespace tessel::compiler::passes {

/// Runs the 'qdq_import' pass on `g` in place.
/// Throws UserError naming the node for per-axis quantisation of activations, quantised tensors
/// consumed by an operator that cannot take them, or mismatched Q/DQ pairs it cannot import.
void qdq_import(ir::Graph& g, PassContext& ctx);

}  // namespace tessel::compiler::passes
