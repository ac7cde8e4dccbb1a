#include "compiler/passes/constant_folding.h"

#include <algorithm>

#include "compiler/reference/interpreter.h"
#include "support/error.h"

namespace tessel::compiler::passes {

void constant_folding(ir::Graph& g, PassContext&) {
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
  // takes over the output's name (so graph outputs keep their ONNX names).
  std::vector<ir::Node> no_identity;
  for (ir::Node& n : g.nodes) {
    if (n.op != "Identity" || n.is_tessel()) {
      no_identity.push_back(std::move(n));
      continue;
    }
    const int in = n.inputs[0], out = n.outputs[0];
    const bool in_is_io = g.is_output(in) || std::find(g.inputs.begin(), g.inputs.end(), in) != g.inputs.end() ||
                          g.values[in].is_const;
    if (g.is_output(out) && in_is_io) {
      no_identity.push_back(std::move(n));  // both names are visible: keep the copy
      continue;
    }
    if (g.is_output(out)) {
      const std::string name = g.values[out].name;
      g.values[out].name = g.unique_name(name + "_identity");
      g.values[in].name = name;
    }
    for (ir::Node& m : g.nodes)
      for (int& x : m.inputs)
        if (x == out) x = in;
    for (ir::Node& m : no_identity)
      for (int& x : m.inputs)
        if (x == out) x = in;
    for (int& o : g.outputs)
      if (o == out) o = in;
  }
  g.nodes = std::move(no_identity);
  g.remove_dead();
}

}  // namespace tessel::compiler::passes
