// The float reference interpreter of the ONNX dialect: evaluates imported graphs as written, on
// the CPU, with plain loops. Float operators compute in float32; QuantizeLinear,
// DequantizeLinear, QLinearConv, QLinearMatMul and com.microsoft QLinearAdd /
// QLinearGlobalAveragePool follow ONNX Runtime's CPU semantics: integer accumulation in int32,
// requantisation scale (x_scale * w_scale / y_scale) computed in float, round half to even
// (std::nearbyint), saturation to the output type (uint8 [0,255] or int8 [-128,127]).
//
// It is the independent reference the compiled model is compared with (ReferenceModel), the
// evaluator of constant folding, and the calibration engine of post-training quantisation.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "compiler/ir/graph.h"

namespace tessel::compiler::reference {

/// A tensor of the interpreter: float32 elements in `f` (dtype kF32) or integer elements in `i`
/// (every integer dtype), row-major in `shape`.
struct RefTensor {
  ir::DType dtype = ir::DType::kF32;
  std::vector<int64_t> shape;
  std::vector<float> f;
  std::vector<int64_t> i;
  int64_t size() const { return ir::shape_elements(shape); }
  /// Reads a constant value of the graph.
  static RefTensor from_const(const ir::Graph& g, int value);
  /// Raw little-endian bytes in `dtype` (for constants folded back into a graph).
  std::vector<uint8_t> to_bytes() const;
};

/// Evaluates one ONNX-dialect node on its inputs (nullptr for omitted optional inputs); returns
/// its outputs in order. `opset` selects opset-dependent semantics (Softmax < 13 coerces to 2-D,
/// Clip < 11 and Unsqueeze/Squeeze < 13 read attributes). Throws UserError naming the node for
/// unsupported operators, invalid shapes or attribute values.
std::vector<RefTensor> eval_node(const ir::Node& n, int64_t opset,
                                 const std::vector<const RefTensor*>& inputs);

/// Called after each node with the value id and tensor of each of its outputs.
using Observer = std::function<void(int value, const RefTensor& t)>;

/// Runs an ONNX-dialect graph: `inputs` in Graph::inputs order (shapes must match the graph
/// inputs; UserError otherwise); returns the graph outputs. Values are freed after their last
/// use.
std::vector<RefTensor> run_graph(const ir::Graph& g, const std::vector<RefTensor>& inputs,
                                 const Observer& observer = nullptr);

}  // namespace tessel::compiler::reference
