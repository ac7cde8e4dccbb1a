// ONNX import: ModelProto (protobuf) -> graph IR (compiler/ir/graph.h), ONNX dialect.
//
// What the importer does: reads initializers (FLOAT, UINT8, INT8, INT32, INT64) as constants,
// turns Constant nodes into constants, binds every symbolic (named or unknown) dimension of a
// graph input to `batch`, converts attributes to JSON (ints, floats, strings and their lists),
// and checks every node against the supported operator set and its attributes. Shapes of node
// outputs are left unknown (the shape_inference pass computes them).
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
  std::vector<int64_t> dims;  ///< declared sizes in elements; 0 marks a symbolic or unknown dimension
  /// True if any dimension is symbolic (named, e.g. "batch_size") or unknown.
  bool has_symbolic_dim() const;
};

/// Imports the ONNX model in `path`. Throws IoError if the file cannot be read; UserError if it
/// is not a valid ONNX ModelProto ("'x.onnx' is not a valid onnx model: ..."), uses an
/// unsupported operator ("node 'n' (Foo): operator ai.onnx::Foo not supported"), attribute
/// ("node 'conv3' (Conv): dilations [2,2] not supported") or data type, has non-float graph
/// inputs, or `batch` < 1. If `declared` is not null it receives the graph inputs (in graph
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
