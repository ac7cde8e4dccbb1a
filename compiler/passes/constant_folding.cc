#include "compiler/passes/constant_folding.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "compiler/reference/interpreter.h"
#include "support/error.h"
#include "support/text.h"

namespace tessel::compiler::passes {

namespace {

/// For every value: true when it is read, and only as a Clip's min or max input (where +-inf
/// means "no bound"), and is not a graph output.
std::vector<char> only_clip_bounds(const ir::Graph& g) {
  std::vector<char> used(g.values.size(), 0), other(g.values.size(), 0);
  for (const ir::Node& n : g.nodes)
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const int v = n.inputs[k];
      if (v < 0) continue;
      used[v] = 1;
      if (n.is_tessel() || !n.domain.empty() || n.op != "Clip" || k == 0) other[v] = 1;
    }
  for (int o : g.outputs) other[o] = 1;
  std::vector<char> r(g.values.size(), 0);
  for (size_t v = 0; v < r.size(); ++v) r[v] = used[v] && !other[v];
  return r;
}

/// A folded float constant must be finite, as every float constant of the model is (the importer
/// checks initializers the same way): NaN or +-inf from folding (an overflow, 0 * inf) would
/// otherwise flow into weights and give finite but wrong outputs. +-inf may stay as a Clip bound.
void check_folded(const ir::Node& n, const ir::Graph& g, int v, const reference::RefTensor& t, bool clip_bound) {
  if (t.dtype != ir::DType::kF32) return;
  for (size_t i = 0; i < t.f.size(); ++i) {
    if (std::isfinite(t.f[i]) || (clip_bound && !std::isnan(t.f[i]))) continue;
    ir::throw_unsupported(n, fmt::format("folding its constant inputs gives the non-finite value {} at element {} (of "
                                         "{}) of output {}",
                                         t.f[i], i, t.f.size(), support::quote(g.values[v].name)));
  }
}

}  // namespace

void constant_folding(ir::Graph& g, PassContext&) {
  const std::vector<char> clip_bound = only_clip_bounds(g);
  std::vector<ir::Node> kept;
  kept.reserve(g.nodes.size());
  for (ir::Node& n : g.nodes) {
    if (n.is_tessel() || n.op == "QuantizeLinear" || n.op == "DequantizeLinear") {
      kept.push_back(std::move(n));
      continue;
    }
    // Shape of a statically shaped value is a constant even when the value is not.
    if (n.op == "Shape" && g.values[n.inputs[0]].shape_known) {
      reference::RefTensor stand_in;
      stand_in.dtype = g.values[n.inputs[0]].dtype;
      stand_in.shape = g.values[n.inputs[0]].shape;
      auto outs = reference::eval_node(n, g.opset, {&stand_in});
      ir::Value& o = g.values[n.outputs[0]];
      o.is_const = true;
      o.data = outs[0].to_bytes();
      o.dtype = outs[0].dtype;
      o.shape = outs[0].shape;
      o.shape_known = true;
      continue;
    }
    bool all_const = !n.inputs.empty();
    for (int in : n.inputs) all_const = all_const && (in < 0 || g.values[in].is_const);
    if (!all_const) {
      kept.push_back(std::move(n));
      continue;
    }
    std::vector<reference::RefTensor> ins(n.inputs.size());
    std::vector<const reference::RefTensor*> ptrs;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (n.inputs[k] < 0) {
        ptrs.push_back(nullptr);
        continue;
      }
      ins[k] = reference::RefTensor::from_const(g, n.inputs[k]);
      ptrs.push_back(&ins[k]);
    }
    auto outs = reference::eval_node(n, g.opset, ptrs);
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      check_folded(n, g, n.outputs[o], outs[o], clip_bound[n.outputs[o]]);
      ir::Value& v = g.values[n.outputs[o]];
      v.dtype = outs[o].dtype;
      v.shape = outs[o].shape;
      v.shape_known = true;
      v.is_const = true;
      v.data = outs[o].to_bytes();
    }
  }
  g.nodes = std::move(kept);

  // Identity: forward its input to the consumers. When the output is a graph output, the input
  // takes over the output's name (so graph outputs keep their ONNX names). The forwarding is
  // recorded in `forward` and applied to all nodes and outputs in one walk at the end; while
  // walking, a node's current input is its recorded input resolved through `forward`, and
  // `output_uses` counts the graph outputs currently reading each value.
  std::vector<int> forward(g.values.size(), -1);
  auto current = [&](int v) {
    while (v >= 0 && forward[v] >= 0) v = forward[v];
    return v;
  };
  std::vector<int> output_uses(g.values.size(), 0);
  for (int o : g.outputs) ++output_uses[o];
  const std::vector<char> is_input = g.input_mask();
  std::vector<ir::Node> no_identity;
  for (ir::Node& n : g.nodes) {
    if (n.op != "Identity" || n.is_tessel()) {
      no_identity.push_back(std::move(n));
      continue;
    }
    const int in = current(n.inputs[0]), out = n.outputs[0];
    n.inputs[0] = in;
    const bool in_is_io = output_uses[in] > 0 || is_input[in] || g.values[in].is_const;
    if (output_uses[out] > 0 && in_is_io) {
      no_identity.push_back(std::move(n));  // both names are visible: keep the copy
      continue;
    }
    if (output_uses[out] > 0) {
      const std::string name = g.values[out].name;
      g.rename_value(out, g.unique_name(name + "_identity"));
      g.rename_value(in, name);
    }
    if (forward.size() < g.values.size()) forward.resize(g.values.size(), -1);
    forward[out] = in;
    output_uses[in] += output_uses[out];
    output_uses[out] = 0;
  }
  g.nodes = std::move(no_identity);
  g.replace_uses(forward);
  g.remove_dead();
}

}  // namespace tessel::compiler::passes
