// Integerisation: the step shared by qdq_import and quantize (not a pass of its own). Input: an
// ONNX-dialect graph in which
//  - fake_quant nodes (domain "tessel", op kFakeQuant, attrs {"scale": s, "zero_point": z} with
//    z in [-128, 127]) mark float values that are to be int8 with those parameters, i.e.
//    y = s * (sat(rhe(x / s) + z) - z), and
//  - DequantizeLinear nodes of constant integer tensors (int8/uint8 weights, int32 biases)
//    provide quantised constants (uint8 shifted to int8 by -128).
// Output: a graph of Tessel kernel nodes (runtime/cpu/kernels.h names) only:
//  - Conv, and Gemm / MatMul with constant weights (as a 1x1 qconv2d on [M,K,1,1] between
//    reshape nodes), whose input has an int8 representation, whose weights are an int8
//    quantised constant with zero point 0 (or, with IntegerizeOptions::quantize_float_weights,
//    a float constant, quantised here), and whose output reaches a fake_quant (directly or through
//    sole-consumer Relu/Clip/MaxPool/Reshape/Flatten/Squeeze/Unsqueeze/Identity) -> qconv2d with an int32 bias at scale s_in * s_w[c] (rescaled with rhe if the
//    model's bias scale differs, float biases quantised the same way);
//  - Add -> qadd; AveragePool / GlobalAveragePool -> avgpool / global_avgpool; Concat ->
//    concat (each with its output parameters from the following fake_quant);
//  - Relu / Clip on int8 -> qclip (bounds quantised with the tensor's parameters); MaxPool ->
//    maxpool; Reshape / Flatten / Squeeze / Unsqueeze -> reshape (same parameters);
//  - fake_quant -> nothing (same parameters), requantize, or quantize (from float);
//  - anything else, or a quantisable operator whose conditions do not hold, runs in float
//    (conv2d_f32, matmul_f32, add_f32, mul_f32, relu_f32, clip_f32, maxpool_f32, avgpool_f32, softmax,
//    reshape, concat) with dequantize nodes inserted where float inputs are needed.
// Graph outputs become float (dequantize at the end where needed) and keep their names.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/ir/graph.h"

namespace tessel::compiler::passes {

/// Op name of the fake-quantisation marker (domain "tessel").
inline constexpr const char* kFakeQuant = "fake_quant";

/// Adds a fake_quant node reading `x` (after the node producing x, at the end of the node list;
/// call ir::Graph::topo_sort() afterwards) and redirects every node input reading `x` to its
/// output (graph outputs keep reading `x`; integerize() makes them float again). Returns the
/// output value id.
int insert_fake_quant(ir::Graph& g, int x, float scale, int32_t zero_point);

/// One fake_quant marker to insert: value `value` with (scale, zero_point).
struct FakeQuantMark {
  int value = -1;
  float scale = 1.0f;
  int32_t zero_point = 0;
};
/// insert_fake_quant for many values at once, in one walk over the nodes (O(nodes + values +
/// marks), where inserting them one by one costs O(nodes) each). Markers are added in `marks`
/// order; returns their output value ids in that order. Throws InternalError if a value is
/// marked twice. A marker's reader redirection never reaches another marker's node (each
/// fake_quant reads its own `x`).
std::vector<int> insert_fake_quants(ir::Graph& g, const std::vector<FakeQuantMark>& marks);

/// Options of integerize().
struct IntegerizeOptions {
  /// Quantise constant float weights of Conv / Gemm / MatMul here (per output channel,
  /// power-of-two scales; the quantize pass). Otherwise (qdq_import) such layers run in float.
  bool quantize_float_weights = false;
};

/// Rewrites `g` as described above. Weight scales and biases of qconv2d layers follow
/// Integerizer::layer_consts in integerize.cc: imported int8 weights keep their values and
/// scales unless a channel's accumulator cannot be held in 32 bits; then (as for float weights
/// quantised here) that channel's scale is floored: raised to the smallest power-of-two multiple
/// at which its exact accumulator range fits [-2^30, 2^30 - 1], so near-zero weights next to a
/// bias quantise to 0 (ONNX Runtime's quantiser raises such weight scales the same way until the
/// int32 bias fits). Throws UserError naming the node when an operator has no integer or float
/// lowering (e.g. float Clip with bounds other than [0, inf)), quantised constants are malformed
/// (per-axis parameters of the wrong length, non-positive scales), or a bias is too large for
/// any float32 weight scale.
void integerize(ir::Graph& g, const IntegerizeOptions& opts = {});

}  // namespace tessel::compiler::passes
