#include "compiler/passes/quantize.h"

#include <fmt/format.h>

#include <algorithm>
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
  // At least 2^-126, the smallest normal float32 power of two (as the weight scales' floor in
  // integerize): a tensor whose values are all denormal (|x| < 127 * 2^-149, e.g. activations that
  // decayed through a long chain) would otherwise get the scale 2^-150 or less, which is 0 in
  // float32; at 2^-126 they quantise to 0.
  return std::ldexp(1.0f, std::max(-126, static_cast<int>(std::ceil(std::log2(static_cast<double>(max_abs) / 127.0)))));
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

  // 2. Weights are quantised by integerize (per output channel, power-of-two scales, floored so
  //    that every channel's accumulator fits 32 bits; compiler/passes/integerize.h), which knows
  //    each layer's input scale and bias.
  const size_t original_nodes = g.nodes.size();

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
  std::vector<FakeQuantMark> marks;
  for (int in : g.inputs) {
    bool used = false;
    for (int c : consumers[in]) used = used || quantisable_consumer(g.nodes[c]);
    if (used) marks.push_back({in, pow2_scale(max_abs[in]), 0});
  }
  for (size_t k = 0; k < original_nodes; ++k) {
    const Node& n = g.nodes[k];
    if (!produces_new_range(n)) continue;
    const int y = n.outputs[0];
    marks.push_back({y, pow2_scale(range_of(y)), 0});
  }
  insert_fake_quants(g, marks);
  g.topo_sort();
  IntegerizeOptions opts;
  opts.quantize_float_weights = true;
  integerize(g, opts);
  ctx.quantized_by_tessel = true;
}

}  // namespace tessel::compiler::passes
