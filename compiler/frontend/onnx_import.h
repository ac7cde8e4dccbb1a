// ONNX import: ModelProto (protobuf) -> graph IR (compiler/ir/graph.h), ONNX dialect.
//
// What the importer does: reads initializers (FLOAT, UINT8, INT8, INT32, INT64) as constants,
// turns Constant nodes into constants, binds every symbolic (named or unknown) dimension of a
// graph input to `batch`, converts attributes to JSON (ints, floats, strings and their lists),
// and checks every node twice:
//  1. against what its operator defines at the model's opset: ONNX's own schema
//     (onnx::OpSchemaRegistry, libonnx) for ai.onnx, an explicit table of ONNX Runtime's
//     contrib definitions for com.microsoft (whose domain the model must import). An attribute
//     the operator does not define at that opset (Clip's min/max at opset >= 11, Shape's start
//     before 15), an attribute of the wrong type, a missing required attribute, too many or too
//     few inputs or outputs, or an empty name for a required input is an error naming the node,
//     the attribute or input and the opset. The linked ONNX release knows opsets up to 17; an
//     opset-18 model is checked against those definitions (no supported operator changed in 18).
//  2. against what Tessel implements: the operator set below, the attributes Tessel honours
//     (every other one is an error), their supported values (dilations 1, storage_order 0,
//     spatial 1, training_mode 0, channels_last 0) and one output per node.
// Constants are bounded before they are allocated (runtime::kMaxTensorBytes each,
// kMaxTotalTensorBytes together) and must be finite: NaN or +-inf in an initializer, a Constant
// or a float attribute is an error naming it; the one exception is +-inf as a Clip bound (a
// constant read only as Clip's min / max input, or Clip's min / max attribute before opset 11),
// which means "no bound". Shapes of node outputs are left unknown (the shape_inference pass
// computes them and checks every attribute against the shapes).
//
// Supported operators (domain ai.onnx unless noted): Conv, Gemm, MatMul, Add, Mul, Relu, Clip,
// MaxPool, AveragePool, GlobalAveragePool, Reshape, Flatten, Softmax, Concat,
// BatchNormalization, QuantizeLinear, DequantizeLinear, QLinearConv, QLinearMatMul,
// com.microsoft QLinearAdd and QLinearGlobalAveragePool, Identity, Shape, Gather, Unsqueeze,
// Squeeze, Constant.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace tessel::compiler::frontend {

/// A graph input as the model declares it, before symbolic dimensions are bound to `batch`.
struct DeclaredInput {
  std::string name;
  std::vector<int64_t> dims;  ///< declared sizes in elements; 0 marks a symbolic or unknown batch dimension (axis 0)
  /// True if any dimension is symbolic (named, e.g. "batch_size") or unknown.
  bool has_symbolic_dim() const;
};

/// Imports the ONNX model in `path`. Throws IoError if the file cannot be read; UserError if it
/// is not a valid ONNX ModelProto ("'x.onnx' is not a valid onnx model: ..."), imports an opset
/// outside 7..18 or a domain twice, uses an unsupported operator ("node 'n' (Foo): operator
/// ai.onnx::Foo not supported"), a node that does not match its operator's definition at the
/// model's opset ("node 'c' (Clip): attribute 'min' is not defined by Clip at opset 13 (at this
/// opset 'min' is an input)"), an unsupported attribute value ("node 'conv3' (Conv): dilations
/// [2,2] not supported") or data type, a constant that is too large or not finite, has non-float
/// graph inputs, a graph input with a symbolic or unknown dimension other than axis 0 (only the
/// batch dimension takes `batch`), or `batch` < 1. If `declared` is not null it receives the graph inputs (in graph
/// order) as declared, so that a caller can tell whether `batch` applied to any dimension.
ir::Graph import_onnx_file(const std::string& path, int64_t batch = 1,
                           std::vector<DeclaredInput>* declared = nullptr);

/// Same from the serialised bytes of a ModelProto; `what` names the model in messages.
ir::Graph import_onnx_bytes(const std::string& bytes, const std::string& what, int64_t batch = 1,
                            std::vector<DeclaredInput>* declared = nullptr);

/// The supported operators as "domain::op" ("ai.onnx::Conv", "com.microsoft::QLinearAdd"),
/// sorted.
std::vector<std::string> supported_operators();

}  // namespace tessel::compiler::frontend
