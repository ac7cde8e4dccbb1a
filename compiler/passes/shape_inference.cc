#include "compiler/passes/shape_inference.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

#include "compiler/ir/op_util.h"
#include "compiler/reference/interpreter.h"
#include "runtime/cpu/kernels.h"
#include "support/checked.h"
#include "support/error.h"
#include "support/text.h"

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

/// Bounds the CPU convolution's working memory (runtime::cpu::qconv2d_scratch_bytes, the same
/// computation the kernel bounds before it allocates) for a convolution of `n` with these sizes:
/// a Conv placed on the CPU, or a Gemm / MatMul run as a 1x1 convolution.
void check_conv_workspace(const Node& n, const std::vector<int64_t>& x, int64_t oc, int64_t groups,
                          const ir::Window2d& win) {
  runtime::QConv2dParams p;
  p.n = x[0];
  p.ic = x[1];
  p.ih = x[2];
  p.iw = x[3];
  p.oc = oc;
  p.kh = win.kh;
  p.kw = win.kw;
  p.stride_h = win.sh;
  p.stride_w = win.sw;
  p.pad_top = win.pad_top;
  p.pad_left = win.pad_left;
  p.pad_bottom = win.pad_bottom;
  p.pad_right = win.pad_right;
  p.groups = groups;
  int64_t bytes = 0;
  try {
    bytes = runtime::cpu::qconv2d_scratch_bytes(p);
  } catch (const UserError& e) {
    ir::throw_unsupported(n, e.what());
  }
  if (bytes > runtime::kMaxTensorBytes)
    ir::throw_unsupported(n, fmt::format("the cpu convolution would need {} bytes of working memory, more than the "
                                         "{}-byte (1 GiB) limit",
                                         bytes, runtime::kMaxTensorBytes));
}

/// Number of elements of a value whose shape is known (already bounded, so no overflow).
int64_t elements(const ir::Value& v) { return ir::shape_elements(v.shape); }

}  // namespace

void shape_inference(ir::Graph& g, PassContext&) {
  // Every tensor is bounded by runtime::kMaxTensorBytes and all of them together by
  // kMaxTotalTensorBytes, checked as each size becomes known, before anything is allocated.
  int64_t total = 0;
  auto account = [&](int64_t bytes, const std::string& what) {
    total = support::checked_add(total, bytes, what);
    if (total > runtime::kMaxTotalTensorBytes)
      throw_user_error("{}: the model's tensors need more than the {}-byte (8 GiB) limit in all ({} bytes so far)",
                       what, runtime::kMaxTotalTensorBytes, total);
  };
  const std::vector<char> is_input = g.input_mask();
  for (size_t v = 0; v < g.values.size(); ++v) {
    const ir::Value& val = g.values[v];
    if (!val.shape_known || !(val.is_const || is_input[v]))
      continue;
    const std::string what = fmt::format("{} {}", val.is_const ? "constant" : "graph input", support::quote(val.name));
    account(ir::bounded_tensor_bytes(val.shape, val.dtype, what), what);
  }

  // Statically known contents of small integer tensors (constants and shape arithmetic).
  std::map<int, RefTensor> known;
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].is_const && g.values[v].dtype == DType::kI64 && g.values[v].num_elements() <= kMaxKnownElements)
      known[static_cast<int>(v)] = RefTensor::from_const(g, static_cast<int>(v));

  for (Node& n : g.nodes) {
    if (n.is_tessel()) continue;
    const int64_t opset = g.opset;
    auto has_in = [&](size_t k) { return k < n.inputs.size() && n.inputs[k] >= 0; };
    auto in = [&](size_t k) -> ir::Value& {
      if (!has_in(k)) ir::throw_unsupported(n, fmt::format("input {} is required but missing", k));
      ir::Value& v = g.values[n.inputs[k]];
      if (!v.shape_known)
        ir::throw_unsupported(n, fmt::format("the shape of input {} is unknown", support::quote(v.name)));
      return v;
    };
    auto set = [&](size_t k, DType d, std::vector<int64_t> shape) {
      if (k >= n.outputs.size()) return;
      ir::Value& o = g.values[n.outputs[k]];
      o.dtype = d;
      o.shape = std::move(shape);
      o.shape_known = true;
    };
    auto known_ints = [&](size_t k, const char* what) -> const RefTensor& {
      const int v = n.inputs[k];
      const auto it = known.find(v);
      if (it == known.end())
        ir::throw_unsupported(n, fmt::format("{} input {} is not a compile-time constant (int64, at most {} values)",
                                             what, support::quote(g.values[v].name), kMaxKnownElements));
      return it->second;
    };
    auto scalar_input = [&](size_t k, const char* what) {
      if (!has_in(k)) return;
      const ir::Value& v = in(k);
      if (elements(v) != 1)
        ir::throw_unsupported(n, fmt::format("{} {} has shape {}, expected a scalar", what, support::quote(v.name),
                                             ir::shape_string(v.shape)));
    };

    // The operator's type constraints, now that every input's type is known (the importer
    // checked those of constants and graph inputs).
    ir::check_input_types(g, n, [&](size_t k) { return g.values[static_cast<size_t>(n.inputs[k])].shape_known; });

    // Tessel does not run tensors with a zero-sized dimension (empty activations, weights or
    // parameters): ONNX allows them, but no layer computes anything from them. Shape tensors
    // (int64) may be empty.
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (!has_in(k) || !g.values[n.inputs[k]].shape_known) continue;
      const ir::Value& v = g.values[n.inputs[k]];
      if (v.dtype != DType::kI64 && ir::has_zero_dim(v.shape))
        ir::throw_unsupported(n, fmt::format("input {} has shape {}; tensors with a zero-sized dimension are not "
                                             "supported",
                                             support::quote(v.name), ir::shape_string(v.shape)));
    }

    // Shape arithmetic on known integer tensors: evaluate it (small tensors only).
    bool evaluated = false;
    if (is_shape_op(n.op)) {
      bool all_known = !n.inputs.empty();
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        if (n.inputs[k] < 0) continue;
        const bool k_known = known.count(n.inputs[k]) || (n.op == "Shape" && k == 0 && g.values[n.inputs[k]].shape_known);
        all_known = all_known && k_known;
      }
      if (all_known) {
        std::vector<RefTensor> tmp(n.inputs.size());
        std::vector<const RefTensor*> ptrs;
        for (size_t k = 0; k < n.inputs.size(); ++k) {
          const int v = n.inputs[k];
          if (v < 0) {
            ptrs.push_back(nullptr);
          } else if (known.count(v)) {
            ptrs.push_back(&known[v]);
          } else {  // Shape of a tensor of known shape: only the shape matters.
            tmp[k].dtype = g.values[v].dtype;
            tmp[k].shape = g.values[v].shape;
            ptrs.push_back(&tmp[k]);
          }
        }
        auto outs = reference::eval_node(n, opset, ptrs);
        for (size_t o = 0; o < n.outputs.size(); ++o) {
          set(o, outs[o].dtype, outs[o].shape);
          if (outs[o].dtype == DType::kI64 && outs[o].size() <= kMaxKnownElements) known[n.outputs[o]] = outs[o];
        }
        evaluated = true;
      }
    }

    const std::string& op = n.op;
    std::function<void()> after_outputs;  // checks that need the outputs bounded first
    if (evaluated) {
      // done above
    } else if (op == "Conv" || op == "QLinearConv") {
      const bool q = op == "QLinearConv";
      const ir::Value& x = in(0);
      const ir::Value& w = in(q ? 3 : 1);
      const ir::ConvGeometry geo = ir::conv_geometry(n, x.shape, w.shape);
      const size_t bias = q ? 8 : 2;
      if (has_in(bias) && in(bias).shape != std::vector<int64_t>{w.shape[0]})
        ir::throw_unsupported(n, fmt::format("bias {} has shape {}, expected [{}] (output channels)",
                                             support::quote(in(bias).name), ir::shape_string(in(bias).shape), w.shape[0]));
      if (q) {
        scalar_input(1, "x_scale");
        scalar_input(6, "y_scale");
        const int64_t ws = elements(in(4));
        if (ws != 1 && ws != w.shape[0])
          ir::throw_unsupported(n, fmt::format("w_scale has {} elements, expected 1 or {} (output channels)", ws, w.shape[0]));
      }
      after_outputs = [&n, x = x.shape, oc = w.shape[0], geo] { check_conv_workspace(n, x, oc, geo.groups, geo.win); };
      const DType out = q ? (has_in(7) ? in(7).dtype : x.dtype) : DType::kF32;
      set(0, out, geo.out);
    } else if (op == "MatMul" || op == "QLinearMatMul") {
      const bool q = op == "QLinearMatMul";
      const ir::Value& a = in(0);
      const ir::Value& b = in(q ? 3 : 1);
      const auto s = ir::matmul_shape(n, a.shape, b.shape);
      // A 2-D B can run as a dense layer, i.e. a 1x1 convolution (batched B: a float matmul).
      if (b.shape.size() == 2)
        after_outputs = [&n, x = std::vector<int64_t>{elements(a) / b.shape[0], b.shape[0], 1, 1}, oc = b.shape[1]] {
          check_conv_workspace(n, x, oc, 1, ir::Window2d{});
        };
      set(0, q ? (has_in(7) ? in(7).dtype : a.dtype) : DType::kF32, s);
    } else if (op == "Gemm") {
      const ir::Value& a = in(0);
      const ir::Value& b = in(1);
      const auto s = ir::gemm_shape(n, a.shape, b.shape, has_in(2) ? &in(2).shape : nullptr);
      const int64_t k = ir::attr_int(n, "transA", 0) ? a.shape[0] : a.shape[1];
      after_outputs = [&n, x = std::vector<int64_t>{s[0], k, 1, 1}, oc = s[1]] {
        check_conv_workspace(n, x, oc, 1, ir::Window2d{});
      };
      set(0, DType::kF32, s);
    } else if (op == "Add" || op == "Mul") {
      if (in(0).dtype != in(1).dtype)
        ir::throw_unsupported(n, fmt::format("input types {} and {} differ", ir::to_string(in(0).dtype),
                                             ir::to_string(in(1).dtype)));
      set(0, in(0).dtype, ir::broadcast_shapes(n, in(0).shape, in(1).shape));
    } else if (op == "QLinearAdd") {
      set(0, has_in(7) ? in(7).dtype : in(0).dtype, ir::broadcast_shapes(n, in(0).shape, in(3).shape));
    } else if (op == "Relu" || op == "Identity") {
      set(0, in(0).dtype, in(0).shape);
    } else if (op == "Clip") {
      if (opset >= 11) {
        scalar_input(1, "min");
        scalar_input(2, "max");
      }
      set(0, in(0).dtype, in(0).shape);
    } else if (op == "Softmax") {
      ir::softmax_axis(n, opset, static_cast<int64_t>(in(0).shape.size()));
      set(0, in(0).dtype, in(0).shape);
    } else if (op == "BatchNormalization") {
      const ir::Value& x = in(0);
      if (x.shape.size() < 2)
        ir::throw_unsupported(n, fmt::format("input {} has shape {}, expected rank >= 2", support::quote(x.name),
                                             ir::shape_string(x.shape)));
      for (size_t k = 1; k < 5; ++k)
        if (in(k).shape != std::vector<int64_t>{x.shape[1]})
          ir::throw_unsupported(n, fmt::format("parameter {} has shape {}, expected [{}] (channels)",
                                               support::quote(in(k).name), ir::shape_string(in(k).shape), x.shape[1]));
      set(0, x.dtype, x.shape);
    } else if (op == "QuantizeLinear" || op == "DequantizeLinear") {
      const ir::Value& x = in(0);
      const ir::Value& scale = in(1);
      const int64_t ns = elements(scale);
      if (ns != 1) {
        if (opset < 13)
          ir::throw_unsupported(n, fmt::format("scale has {} elements; per-axis scales need opset 13 (model opset {})",
                                               ns, opset));
        if (scale.shape.size() != 1)
          ir::throw_unsupported(n, fmt::format("scale of shape {} not supported (a scalar or 1-D)",
                                               ir::shape_string(scale.shape)));
        const int64_t axis = ir::onnx_axis(n, opset, "axis", ir::attr_int(n, "axis", 1),
                                           static_cast<int64_t>(x.shape.size()));
        if (x.shape[axis] != ns)
          ir::throw_unsupported(n, fmt::format("scale has {} elements, axis {} of {} has {}", ns, axis,
                                               ir::shape_string(x.shape), x.shape[axis]));
      }
      if (has_in(2) && in(2).shape != scale.shape)
        ir::throw_unsupported(n, fmt::format("zero point has shape {}, scale {}", ir::shape_string(in(2).shape),
                                             ir::shape_string(scale.shape)));
      if (op == "QuantizeLinear") {
        const DType t = has_in(2) ? in(2).dtype : DType::kU8;
        if (t != DType::kU8 && t != DType::kI8)
          ir::throw_unsupported(n, fmt::format("zero point type {} not supported (uint8 or int8)", ir::to_string(t)));
        set(0, t, x.shape);
      } else {
        set(0, DType::kF32, x.shape);
      }
    } else if (op == "MaxPool" || op == "AveragePool") {
      const ir::Value& x = in(0);
      if (x.shape.size() != 4)
        ir::throw_unsupported(n, fmt::format("input {} not supported (only 4-D NCHW)", ir::shape_string(x.shape)));
      if (op == "AveragePool") {
        const int64_t cip = ir::attr_int(n, "count_include_pad", 0);
        if (cip != 0 && cip != 1) ir::throw_unsupported(n, fmt::format("count_include_pad {} must be 0 or 1", cip));
      }
      const auto win = ir::window_2d(n, x.shape[2], x.shape[3], 1, 1);
      set(0, x.dtype, {x.shape[0], x.shape[1], win.oh, win.ow});
    } else if (op == "GlobalAveragePool" || op == "QLinearGlobalAveragePool") {
      const ir::Value& x = in(0);
      if (x.shape.size() != 4)
        ir::throw_unsupported(n, fmt::format("input {} not supported (only 4-D NCHW)", ir::shape_string(x.shape)));
      const DType out = op == "GlobalAveragePool" ? x.dtype : (has_in(4) ? in(4).dtype : x.dtype);
      set(0, out, {x.shape[0], x.shape[1], 1, 1});
    } else if (op == "Reshape") {
      const ir::Value& x = in(0);
      const RefTensor& target = known_ints(1, "shape");
      if (target.shape.size() != 1)
        ir::throw_unsupported(n, fmt::format("shape input has shape {}, expected a 1-D tensor",
                                             ir::shape_string(target.shape)));
      const bool allowzero = opset >= 14 && ir::attr_int(n, "allowzero", 0) != 0;
      set(0, x.dtype, ir::reshape_shape(n, x.shape, target.i, allowzero));
    } else if (op == "Flatten") {
      set(0, in(0).dtype, ir::flatten_shape(n, opset, in(0).shape));
    } else if (op == "Unsqueeze" || op == "Squeeze") {
      const ir::Value& x = in(0);
      const RefTensor* axes = opset >= 13 && has_in(1) ? &known_ints(1, "axes") : nullptr;
      if (axes != nullptr && axes->shape.size() != 1)
        ir::throw_unsupported(n, fmt::format("axes input has shape {}, expected a 1-D tensor",
                                             ir::shape_string(axes->shape)));
      const auto ax = ir::squeeze_axes(n, opset, axes ? &axes->i : nullptr);
      set(0, x.dtype,
          op == "Squeeze" ? ir::squeeze_shape(n, opset, x.shape, ax) : ir::unsqueeze_shape(n, opset, x.shape, ax));
    } else if (op == "Concat") {
      std::vector<std::vector<int64_t>> shapes;
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        if (in(k).dtype != in(0).dtype)
          ir::throw_unsupported(n, fmt::format("input {} has type {}, input 0 {}", k, ir::to_string(in(k).dtype),
                                               ir::to_string(in(0).dtype)));
        shapes.push_back(in(k).shape);
      }
      set(0, in(0).dtype, ir::concat_shape(n, opset, shapes));
    } else if (op == "Gather") {
      const ir::Value& idx = in(1);
      if (idx.dtype != DType::kI64 && idx.dtype != DType::kI32)
        ir::throw_unsupported(n, fmt::format("indices type {} not supported (int32 or int64)", ir::to_string(idx.dtype)));
      set(0, in(0).dtype, ir::gather_shape(n, opset, in(0).shape, idx.shape));
    } else if (op == "Shape") {
      const auto [start, end] = ir::shape_range(n, opset, static_cast<int64_t>(in(0).shape.size()));
      set(0, DType::kI64, {end - start});
    } else {
      ir::throw_unsupported(n, "no shape rule for this operator");
    }

    for (int o : n.outputs) {
      const ir::Value& v = g.values[o];
      if (!v.shape_known) continue;
      const std::string what = fmt::format("{}: output {}", ir::describe(n), support::quote(v.name));
      if (v.dtype != DType::kI64 && ir::has_zero_dim(v.shape))
        throw_user_error("{} has shape {}; tensors with a zero-sized dimension are not supported", what,
                         ir::shape_string(v.shape));
      account(ir::bounded_tensor_bytes(v.shape, v.dtype, what), what);
    }
    if (after_outputs) after_outputs();
  }
  for (int o : g.outputs) {
    const ir::Value& v = g.values[o];
    if (!v.shape_known)
      throw_user_error("graph output {} has an unknown shape after shape inference", support::quote(v.name));
  }
}

}  // namespace tessel::compiler::passes
