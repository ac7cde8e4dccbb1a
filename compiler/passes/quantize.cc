#include "compiler/passes/quantize.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "compiler/passes/integerize.h"
#include "compiler/reference/interpreter.h"
#include "support/error.h"

namespace tessel::compiler::passes {
namespace {

using ir::DType;
using ir::Node;

float pow2_scale(float max_abs) {
  if (!(max_abs > 0.0f) || !std::isfinite(max_abs)) return 1.0f;
  return std::ldexp(1.0f, static_cast<int>(std::ceil(std::log2(static_cast<double>(max_abs) / 127.0))));
}

bool quantisable_consumer(const Node& n) {
  static const std::set<std::string> ops = {"Conv", "Gemm", "MatMul", "Add", "Relu", "Clip", "MaxPool",
                                            "AveragePool", "GlobalAveragePool", "Concat"};
  return !n.is_tessel() && ops.count(n.op) > 0;
}

bool produces_new_range(const Node& n) {
  static const std::set<std::string> ops = {"Conv", "Gemm", "MatMul", "Add", "AveragePool", "GlobalAveragePool",
                                            "Concat"};
  return !n.is_tessel() && ops.count(n.op) > 0;
}

/// Replaces constant float weights `w` by DequantizeLinear(int8 constant, per-channel power-of-two
/// scales along `axis`) and returns the new float value id.
int quantize_weights(ir::Graph& g, const Node& user, int w, int axis) {
  const ir::Value wv = g.values[w];
  const auto f = g.const_f32(w);
  const int64_t channels = wv.shape[axis];
  int64_t inner = 1;
  for (size_t k = axis + 1; k < wv.shape.size(); ++k) inner *= wv.shape[k];
  std::vector<float> max_abs(channels, 0.0f);
  for (size_t i = 0; i < f.size(); ++i) {
    const int64_t c = (static_cast<int64_t>(i) / inner) % channels;
    max_abs[c] = std::max(max_abs[c], std::fabs(f[i]));
  }
  std::vector<float> scales(channels);
  for (int64_t c = 0; c < channels; ++c) scales[c] = pow2_scale(max_abs[c]);
  std::vector<int8_t> q(f.size());
  for (size_t i = 0; i < f.size(); ++i) {
    const int64_t c = (static_cast<int64_t>(i) / inner) % channels;
    q[i] = static_cast<int8_t>(std::clamp(std::nearbyint(f[i] / scales[c]), -128.0f, 127.0f));
  }
  const int qi = g.add_const_i8(g.unique_name(wv.name + "_i8"), wv.shape, q);
  const int si = g.add_const_f32(g.unique_name(wv.name + "_scale"), {channels}, scales);
  const int zi = g.add_const_i8(g.unique_name(wv.name + "_zp"), {channels}, std::vector<int8_t>(channels, 0));
  ir::Value out;
  out.name = g.unique_name(wv.name + "_dq");
  out.dtype = DType::kF32;
  out.shape = wv.shape;
  out.shape_known = true;
  const int ov = g.add_value(std::move(out));
  Node dq;
  dq.name = user.name + "_weights_dequantize";
  dq.op = "DequantizeLinear";
  dq.source_op = "quantize";
  dq.inputs = {qi, si, zi};
  dq.outputs = {ov};
  dq.attrs = nlohmann::json{{"axis", axis}};
  g.nodes.push_back(std::move(dq));
  return ov;
}

}  // namespace

void quantize(ir::Graph& g, PassContext& ctx) {
  if (ctx.model_was_quantized) return;
  if (ctx.calibration.empty())
    throw_user_error("model '{}' is float: quantising it needs calibration inputs (CompileOptions::calibration is empty)",
                     g.name);
  // 1. Calibration: max |x| of every float value over all calibration runs.
  std::vector<float> max_abs(g.values.size(), 0.0f);
  for (size_t r = 0; r < ctx.calibration.size(); ++r) {
    const auto& run = ctx.calibration[r];
    if (run.size() != g.inputs.size())
      throw_user_error("calibration entry {} has {} tensors, the model has {} inputs", r, run.size(), g.inputs.size());
    for (size_t k = 0; k < run.size(); ++k) {
      const ir::Value& v = g.values[g.inputs[k]];
      if (run[k].dtype != DType::kF32 || run[k].shape != v.shape)
        throw_user_error("calibration entry {} input {} ('{}') is {}{}, expected f32{}", r, k, v.name,
                         ir::to_string(run[k].dtype), ir::shape_string(run[k].shape), ir::shape_string(v.shape));
      for (float x : run[k].f) max_abs[g.inputs[k]] = std::max(max_abs[g.inputs[k]], std::fabs(x));
    }
    reference::run_graph(g, run, [&](int v, const reference::RefTensor& t) {
      if (t.dtype != DType::kF32) return;
      for (float x : t.f) max_abs[v] = std::max(max_abs[v], std::fabs(x));
    });
  }

  // 2. Weights: int8 with per-output-channel power-of-two scales behind DequantizeLinear.
  const size_t original_nodes = g.nodes.size();
  for (size_t k = 0; k < original_nodes; ++k) {
    const Node n = g.nodes[k];
    if (n.is_tessel()) continue;
    if (n.op == "Conv" && g.values[n.inputs[1]].is_const && g.values[n.inputs[1]].dtype == DType::kF32 &&
        g.values[n.inputs[1]].shape.size() == 4) {
      const int w = quantize_weights(g, n, n.inputs[1], 0);
      g.nodes[k].inputs[1] = w;
    } else if ((n.op == "Gemm" || n.op == "MatMul") && g.values[n.inputs[1]].is_const &&
               g.values[n.inputs[1]].dtype == DType::kF32 && g.values[n.inputs[1]].shape.size() == 2) {
      const bool trans_b = n.op == "Gemm" && ir::attr_int(n, "transB", 0) != 0;
      const int w = quantize_weights(g, n, n.inputs[1], trans_b ? 0 : 1);
      g.nodes[k].inputs[1] = w;
    }
  }

  // 3. Activations: fake_quant markers with power-of-two scales (zero point 0).
  const auto consumers = g.consumers();
  auto range_of = [&](int v) {
    // A sole Relu/Clip consumer bounds the useful range: take its output's range.
    float m = max_abs[v];
    int cur = v;
    while (consumers[cur].size() == 1 && !g.is_output(cur)) {
      const Node& c = g.nodes[consumers[cur][0]];
      if (c.is_tessel() || (c.op != "Relu" && c.op != "Clip") || c.inputs[0] != cur) break;
      cur = c.outputs[0];
      m = max_abs[cur];
    }
    return m;
  };
  std::vector<std::pair<int, float>> marks;
  for (int in : g.inputs) {
    bool used = false;
    for (int c : consumers[in]) used = used || quantisable_consumer(g.nodes[c]);
    if (used) marks.push_back({in, pow2_scale(max_abs[in])});
  }
  for (size_t k = 0; k < original_nodes; ++k) {
    const Node& n = g.nodes[k];
    if (!produces_new_range(n)) continue;
    const int y = n.outputs[0];
    marks.push_back({y, pow2_scale(range_of(y))});
  }
  for (const auto& [v, s] : marks) insert_fake_quant(g, v, s, 0);
  g.topo_sort();
  integerize(g);
  ctx.quantized_by_tessel = true;
}

}  // namespace tessel::compiler::passes
