// Graph pass 'shape_inference' (see compiler/passes/pass.h for the pipeline).
//
// Computes the dtype and shape of every node output of the ONNX dialect from the graph inputs
// (symbolic dimensions already bound to the batch at import) and the constants, with the shared
// operator rules of compiler/ir/op_util.h (the reference interpreter uses the same ones). Small
// int64 tensors computed from shapes (Shape -> Gather -> Unsqueeze -> Concat chains) are
// evaluated on the way so a Reshape fed by them gets a static shape. Values produced by Tessel
// nodes keep the shapes their creator set.
//
// On the way it checks, before anything is allocated for them:
//  - every attribute against the shapes at hand (windows: kernel, strides, pads, auto_pad,
//    ceil_mode; axes by opset; Reshape targets; parameter shapes of Clip, BatchNormalization,
//    QuantizeLinear / DequantizeLinear, Conv biases);
//  - that no tensor a node reads or writes has a zero-sized dimension (except int64 shape
//    tensors): ONNX allows them, Tessel runs no layer on them;
//  - every tensor (graph inputs, constants, node outputs) within runtime::kMaxTensorBytes and
//    all of them together within runtime::kMaxTotalTensorBytes, with overflow-checked sizes;
//  - the working memory of the CPU convolution each Conv / Gemm / MatMul may run as
//    (runtime::cpu::qconv2d_scratch_bytes) within runtime::kMaxTensorBytes.
#pragma once

#include "compiler/ir/graph.h"
#include "compiler/passes/pass.h"

namespace tessel::compiler::passes {

/// Runs the 'shape_inference' pass on `g` in place.
/// Throws UserError naming the node (and the input, output or attribute with its value) for
/// inconsistent shapes (e.g. Conv channels vs weights), a Reshape whose target shape is not
/// computable at compile time, invalid or unsupported attributes, zero-sized tensors, and
/// tensors or working memory beyond the bounds above (naming the size).
void shape_inference(ir::Graph& g, PassContext& ctx);

}  // namespace tessel::compiler::passes
