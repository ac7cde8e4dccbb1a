#include "compiler/passes/shape_inference.h"

#include <fmt/format.h>

#include <map>

#include "compiler/ir/op_util.h"
#include "compiler/reference/interpreter.h"
#include "support/error.h"

namespace tessel::compiler::passes {
namespace {

using ir::DType;
using ir::Node;
using reference::RefTensor;

/// Operators evaluated on statically known small integer tensors (shape arithmetic).
bool is_shape_op(const std::string& op) {
  return op == "Shape" || op == "Gather" || op == "Unsqueeze" || op == "Squeeze" || op == "Concat" ||
         op == "Identity" || op == "Reshape" || op == "Add" || op == "Mul" || op == "Flatten";
}

constexpr int64_t kMaxKnownElements = 64;

}  // namespace

void shape_inference(ir::Graph& g, PassContext&) {
  // Statically known contents of small integer tensors (constants and shape arithmetic).
  std::map<int, RefTensor> known;
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].is_const && g.values[v].dtype == DType::kI64 && g.values[v].num_elements() <= kMaxKnownElements)
      known[static_cast<int>(v)] = RefTensor::from_const(g, static_cast<int>(v));

  for (Node& n : g.nodes) {
    if (n.is_tessel()) continue;
    auto in = [&](size_t k) -> ir::Value& {
      if (k >= n.inputs.size() || n.inputs[k] < 0) ir::throw_unsupported(n, fmt::format("input {} is required but missing", k));
      ir::Value& v = g.values[n.inputs[k]];
      if (!v.shape_known) ir::throw_unsupported(n, fmt::format("the shape of input '{}' is unknown", v.name));
      return v;
    };
    auto has_in = [&](size_t k) { return k < n.inputs.size() && n.inputs[k] >= 0; };
    auto set = [&](size_t k, DType d, std::vector<int64_t> shape) {
      if (k >= n.outputs.size()) return;
      ir::Value& o = g.values[n.outputs[k]];
      o.dtype = d;
      o.shape = std::move(shape);
      o.shape_known = true;
    };
    auto known_ints = [&](size_t k, const char* what) -> std::vector<int64_t> {
      const int v = n.inputs[k];
      const auto it = known.find(v);
      if (it == known.end())
        ir::throw_unsupported(n, fmt::format("{} input '{}' is not a compile-time constant", what, g.values[v].name));
      return it->second.i;
    };

    // Shape arithmetic on known integer tensors: evaluate it.
    if (is_shape_op(n.op)) {
      bool all_known = true;
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        if (n.inputs[k] < 0) continue;
        const bool k_known = known.count(n.inputs[k]) || (n.op == "Shape" && k == 0 && g.values[n.inputs[k]].shape_known);
        all_known = all_known && k_known;
      }
      if (all_known && !n.inputs.empty()) {
        std::vector<RefTensor> tmp(n.inputs.size());
        std::vector<const RefTensor*> ptrs;
        for (size_t k = 0; k < n.inputs.size(); ++k) {
          const int v = n.inputs[k];
          if (v < 0) {
            ptrs.push_back(nullptr);
            continue;
          }
          if (known.count(v)) {
            ptrs.push_back(&known[v]);
          } else {  // Shape of a tensor of known shape: only the shape matters.
            tmp[k].dtype = g.values[v].dtype;
            tmp[k].shape = g.values[v].shape;
            ptrs.push_back(&tmp[k]);
          }
        }
        auto outs = reference::eval_node(n, g.opset, ptrs);
        for (size_t o = 0; o < n.outputs.size(); ++o) {
          set(o, outs[o].dtype, outs[o].shape);
          if (outs[o].dtype == DType::kI64 && outs[o].size() <= kMaxKnownElements) known[n.outputs[o]] = outs[o];
        }
        continue;
      }
    }

    const std::string& op = n.op;
    if (op == "Conv" || op == "QLinearConv") {
      const bool q = op == "QLinearConv";
      const ir::Value& x = in(0);
      const ir::Value& w = in(q ? 3 : 1);
      if (x.shape.size() != 4 || w.shape.size() != 4)
        ir::throw_unsupported(n, fmt::format("input {} / weights {} not supported (only 2-D convolution, NCHW / OIHW)",
                                             ir::shape_string(x.shape), ir::shape_string(w.shape)));
      const int64_t groups = ir::attr_int(n, "group", 1);
      if (groups < 1 || x.shape[1] % groups != 0 || w.shape[0] % groups != 0 || x.shape[1] / groups != w.shape[1])
        ir::throw_unsupported(n, fmt::format("group {} does not match input channels {} and weights {}", groups,
                                             x.shape[1], ir::shape_string(w.shape)));
      const auto win = ir::window_2d(n, x.shape[2], x.shape[3], w.shape[2], w.shape[3]);
      if (win.kh != w.shape[2] || win.kw != w.shape[3])
        ir::throw_unsupported(n, fmt::format("kernel_shape [{},{}] does not match the weights {}", win.kh, win.kw,
                                             ir::shape_string(w.shape)));
      const DType out = q ? (has_in(7) ? in(7).dtype : x.dtype) : DType::kF32;
      set(0, out, {x.shape[0], w.shape[0], win.oh, win.ow});
    } else if (op == "MatMul" || op == "QLinearMatMul") {
      const bool q = op == "QLinearMatMul";
      const ir::Value& a = in(0);
      const ir::Value& b = in(q ? 3 : 1);
      if (a.shape.size() < 2 || b.shape.size() != 2 || a.shape.back() != b.shape[0])
        ir::throw_unsupported(n, fmt::format("shapes {} x {} not supported (A rank >= 2, B [K,N])", ir::shape_string(a.shape),
                                             ir::shape_string(b.shape)));
      auto s = a.shape;
      s.back() = b.shape[1];
      set(0, q ? (has_in(7) ? in(7).dtype : a.dtype) : DType::kF32, s);
    } else if (op == "Gemm") {
      const ir::Value& a = in(0);
      const ir::Value& b = in(1);
      if (a.shape.size() != 2 || b.shape.size() != 2)
        ir::throw_unsupported(n, fmt::format("shapes {} x {} not supported (2-D only)", ir::shape_string(a.shape), ir::shape_string(b.shape)));
      const bool ta = ir::attr_int(n, "transA", 0) != 0, tb = ir::attr_int(n, "transB", 0) != 0;
      const int64_t k1 = ta ? a.shape[0] : a.shape[1], k2 = tb ? b.shape[1] : b.shape[0];
      if (k1 != k2)
        ir::throw_unsupported(n, fmt::format("inner dimensions differ: {} x {}", ir::shape_string(a.shape), ir::shape_string(b.shape)));
      set(0, DType::kF32, {ta ? a.shape[1] : a.shape[0], tb ? b.shape[0] : b.shape[1]});
    } else if (op == "Add" || op == "Mul") {
      set(0, in(0).dtype, ir::broadcast_shapes(n, in(0).shape, in(1).shape));
    } else if (op == "QLinearAdd") {
      set(0, has_in(7) ? in(7).dtype : in(0).dtype, ir::broadcast_shapes(n, in(0).shape, in(3).shape));
    } else if (op == "Relu" || op == "Clip" || op == "Softmax" || op == "BatchNormalization" || op == "Identity") {
      set(0, in(0).dtype, in(0).shape);
    } else if (op == "QuantizeLinear") {
      set(0, has_in(2) ? in(2).dtype : DType::kU8, in(0).shape);
    } else if (op == "DequantizeLinear") {
      set(0, DType::kF32, in(0).shape);
    } else if (op == "MaxPool" || op == "AveragePool") {
      const ir::Value& x = in(0);
      if (x.shape.size() != 4) ir::throw_unsupported(n, fmt::format("input {} not supported (only 4-D NCHW)", ir::shape_string(x.shape)));
      if (ir::attr_ints(n, "kernel_shape", {}).empty()) ir::throw_unsupported(n, "kernel_shape is required");
      const auto win = ir::window_2d(n, x.shape[2], x.shape[3], 1, 1);
      set(0, x.dtype, {x.shape[0], x.shape[1], win.oh, win.ow});
    } else if (op == "GlobalAveragePool" || op == "QLinearGlobalAveragePool") {
      const ir::Value& x = in(0);
      if (x.shape.size() != 4) ir::throw_unsupported(n, fmt::format("input {} not supported (only 4-D NCHW)", ir::shape_string(x.shape)));
      const DType out = op == "GlobalAveragePool" ? x.dtype : (has_in(4) ? in(4).dtype : x.dtype);
      set(0, out, {x.shape[0], x.shape[1], 1, 1});
    } else if (op == "Reshape" || op == "Flatten" || op == "Unsqueeze" || op == "Squeeze" || op == "Concat" ||
               op == "Gather" || op == "Shape") {
      // Shape-only evaluation: run the operator on empty-data stand-ins with the known shapes
      // and the known integer inputs (shape / axes / indices).
      std::vector<RefTensor> tmp(n.inputs.size());
      std::vector<const RefTensor*> ptrs;
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        if (n.inputs[k] < 0) {
          ptrs.push_back(nullptr);
          continue;
        }
        const bool data_input = k == 0 || op == "Concat";
        if (data_input) {
          const ir::Value& v = in(k);
          tmp[k].dtype = v.dtype;
          tmp[k].shape = v.shape;
          // Sizes matter for Reshape's element count; fill with zeros (cheap for shapes only).
          if (op != "Shape") {
            if (v.dtype == DType::kF32) tmp[k].f.assign(v.num_elements(), 0.0f);
            else tmp[k].i.assign(v.num_elements(), 0);
          }
        } else {
          tmp[k].dtype = DType::kI64;
          tmp[k].i = known_ints(k, op == "Gather" ? "indices" : (op == "Reshape" ? "shape" : "axes"));
          tmp[k].shape = known.at(n.inputs[k]).shape;
        }
        ptrs.push_back(&tmp[k]);
      }
      auto outs = reference::eval_node(n, g.opset, ptrs);
      set(0, outs[0].dtype, outs[0].shape);
    } else {
      ir::throw_unsupported(n, "no shape rule for this operator");
    }
  }
  for (int o : g.outputs)
    if (!g.values[o].shape_known)
      throw_user_error("graph output '{}' has an unknown shape after shape inference", g.values[o].name);
}

}  // namespace tessel::compiler::passes
