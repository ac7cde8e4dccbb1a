#include "compiler/ir/op_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <map>

#include "runtime/cpu/kernels.h"
#include "support/checked.h"
#include "support/error.h"
#include "support/text.h"

namespace tessel::compiler::ir {
namespace {

bool is_pool(const Node& n) { return n.op == "MaxPool" || n.op == "AveragePool"; }

std::string ints_string(const std::vector<int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ",")); }

/// in + a + b for one spatial dimension, overflow-checked.
int64_t padded(const Node& n, int64_t in, int64_t a, int64_t b) {
  const std::string what = describe(n) + ": padded input";
  return support::checked_add(support::checked_add(in, a, what), b, what);
}

int64_t product(const Node& n, std::vector<int64_t>::const_iterator b, std::vector<int64_t>::const_iterator e) {
  return support::checked_product(std::vector<int64_t>(b, e), describe(n));
}

}  // namespace

Window2d window_2d(const Node& n, int64_t ih, int64_t iw, int64_t kh, int64_t kw) {
  const bool pool = is_pool(n);
  if (ih < 1 || iw < 1)
    throw_unsupported(n, fmt::format("input spatial size {}x{} must be positive", ih, iw));
  Window2d w;
  if (pool && !n.attrs.contains("kernel_shape")) throw_unsupported(n, "kernel_shape is required");
  const auto ks = attr_ints(n, "kernel_shape", {kh, kw});
  if (ks.size() != 2) throw_unsupported(n, fmt::format("kernel_shape {} not supported (only 2-D)", ints_string(ks)));
  if (ks[0] < 1 || ks[1] < 1) throw_unsupported(n, fmt::format("kernel_shape {} must be positive", ints_string(ks)));
  if (!pool && (ks[0] != kh || ks[1] != kw))
    throw_unsupported(n, fmt::format("kernel_shape {} does not match the weights' kernel {}x{}", ints_string(ks), kh, kw));
  w.kh = ks[0];
  w.kw = ks[1];
  const auto st = attr_ints(n, "strides", {1, 1});
  if (st.size() != 2) throw_unsupported(n, fmt::format("strides {} not supported (only 2-D)", ints_string(st)));
  if (st[0] < 1 || st[1] < 1) throw_unsupported(n, fmt::format("strides {} must be positive", ints_string(st)));
  w.sh = st[0];
  w.sw = st[1];
  const int64_t ceil_attr = pool ? attr_int(n, "ceil_mode", 0) : 0;
  if (ceil_attr != 0 && ceil_attr != 1) throw_unsupported(n, fmt::format("ceil_mode {} must be 0 or 1", ceil_attr));
  const bool ceil_mode = ceil_attr == 1;
  const std::string auto_pad = attr_string(n, "auto_pad", "NOTSET");
  const bool has_pads = n.attrs.contains("pads");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    if (has_pads)
      throw_unsupported(n, fmt::format("pads {} cannot be used with auto_pad {}", ints_string(attr_ints(n, "pads", {})),
                                       support::quote(auto_pad)));
    // ONNX: output = ceil(in / stride); the total padding (out - 1) * stride + kernel - in is
    // split evenly, the odd one at the end (SAME_UPPER) or the beginning (SAME_LOWER). The
    // product cannot overflow: (out - 1) * stride < in.
    auto same = [&](int64_t in, int64_t k, int64_t s, int64_t& begin, int64_t& end) {
      const int64_t out = in / s + (in % s != 0 ? 1 : 0);
      const int64_t total = std::max<int64_t>(0, (out - 1) * s - in + k);
      begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end = total - begin;
    };
    same(ih, w.kh, w.sh, w.pad_top, w.pad_bottom);
    same(iw, w.kw, w.sw, w.pad_left, w.pad_right);
  } else if (auto_pad == "NOTSET" || auto_pad == "VALID") {
    const auto p = attr_ints(n, "pads", {0, 0, 0, 0});
    if (p.size() != 4) throw_unsupported(n, fmt::format("pads {} not supported (need 4 values)", ints_string(p)));
    for (int64_t x : p)
      if (x < 0) throw_unsupported(n, fmt::format("pads {}: negative pads are not supported", ints_string(p)));
    if (auto_pad == "VALID" && std::any_of(p.begin(), p.end(), [](int64_t x) { return x != 0; }))
      throw_unsupported(n, fmt::format("pads {} cannot be used with auto_pad 'VALID'", ints_string(p)));
    w.pad_top = p[0];
    w.pad_left = p[1];
    w.pad_bottom = p[2];
    w.pad_right = p[3];
    if (pool && (w.pad_top >= w.kh || w.pad_bottom >= w.kh || w.pad_left >= w.kw || w.pad_right >= w.kw))
      throw_unsupported(n, fmt::format("pads {} must be smaller than the kernel {}x{} (a window would lie entirely "
                                       "in the padding)",
                                       ints_string(p), w.kh, w.kw));
  } else {
    throw_unsupported(n, fmt::format("auto_pad {} not supported (NOTSET, SAME_UPPER, SAME_LOWER or VALID)",
                                     support::quote(auto_pad)));
  }
  const int64_t ph = padded(n, ih, w.pad_top, w.pad_bottom), pw = padded(n, iw, w.pad_left, w.pad_right);
  if (w.kh > ph || w.kw > pw)
    throw_unsupported(n, fmt::format("kernel {}x{} is larger than the padded input {}x{} (input {}x{}, pads [{},{},{},{}])",
                                     w.kh, w.kw, ph, pw, ih, iw, w.pad_top, w.pad_left, w.pad_bottom, w.pad_right));
  w.oh = runtime::cpu::window_output_size(ih, w.pad_top, w.pad_bottom, w.kh, w.sh, ceil_mode);
  w.ow = runtime::cpu::window_output_size(iw, w.pad_left, w.pad_right, w.kw, w.sw, ceil_mode);
  // A stride larger than the padded input is legal ONNX: the kernel fits (checked above), so
  // there is exactly one window along that dimension, at the start, and the stride is never
  // applied. Every consumer (the CPU kernels, the reference, the accelerator's loops and uop
  // factors) takes it from here, so it is clamped to the padded extent, which gives that same
  // single window (floor: (padded - kernel) / padded = 0; ceil_mode: the second window starts at
  // or after the padded end and is dropped) and keeps huge strides (2^40) out of every product.
  if (w.sh > ph) w.sh = ph;
  if (w.sw > pw) w.sw = pw;
  TESSEL_CHECK(w.oh >= 1 && w.ow >= 1 &&
                   w.oh == runtime::cpu::window_output_size(ih, w.pad_top, w.pad_bottom, w.kh, w.sh, ceil_mode) &&
                   w.ow == runtime::cpu::window_output_size(iw, w.pad_left, w.pad_right, w.kw, w.sw, ceil_mode),
               "{}: clamping the strides changed the output {}x{}", describe(n), w.oh, w.ow);
  return w;
}

ConvGeometry conv_geometry(const Node& n, const std::vector<int64_t>& x, const std::vector<int64_t>& w) {
  if (x.size() != 4 || w.size() != 4)
    throw_unsupported(n, fmt::format("input {} / weights {} not supported (only 2-D convolution, NCHW / OIHW)",
                                     shape_string(x), shape_string(w)));
  for (int64_t d : w)
    if (d < 1) throw_unsupported(n, fmt::format("weights of shape {} have a zero-sized dimension", shape_string(w)));
  ConvGeometry c;
  c.groups = attr_int(n, "group", 1);
  if (c.groups < 1 || x[1] % c.groups != 0 || w[0] % c.groups != 0 || x[1] / c.groups != w[1])
    throw_unsupported(n, fmt::format("group {} does not match input channels {} and weights {}", c.groups, x[1],
                                     shape_string(w)));
  c.win = window_2d(n, x[2], x[3], w[2], w[3]);
  c.out = {x[0], w[0], c.win.oh, c.win.ow};
  return c;
}

std::vector<int64_t> matmul_shape(const Node& n, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  if (a.empty() || b.empty())
    throw_unsupported(n, fmt::format("shapes {} x {}: matmul inputs must have rank >= 1", shape_string(a),
                                     shape_string(b)));
  std::vector<int64_t> sa = a, sb = b;
  if (sa.size() == 1) sa.insert(sa.begin(), 1);
  if (sb.size() == 1) sb.push_back(1);
  if (sa.back() != sb[sb.size() - 2])
    throw_unsupported(n, fmt::format("inner dimensions differ: {} x {}", shape_string(a), shape_string(b)));
  std::vector<int64_t> out = broadcast_shapes(n, std::vector<int64_t>(sa.begin(), sa.end() - 2),
                                              std::vector<int64_t>(sb.begin(), sb.end() - 2));
  if (a.size() > 1) out.push_back(sa[sa.size() - 2]);
  if (b.size() > 1) out.push_back(sb.back());
  return out;
}

std::vector<int64_t> gemm_shape(const Node& n, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                const std::vector<int64_t>* c) {
  if (a.size() != 2 || b.size() != 2)
    throw_unsupported(n, fmt::format("shapes {} x {} not supported (2-D only)", shape_string(a), shape_string(b)));
  const int64_t ta = attr_int(n, "transA", 0), tb = attr_int(n, "transB", 0);
  if ((ta != 0 && ta != 1) || (tb != 0 && tb != 1))
    throw_unsupported(n, fmt::format("transA {} / transB {} must be 0 or 1", ta, tb));
  const int64_t k1 = ta ? a[0] : a[1], k2 = tb ? b[1] : b[0];
  if (k1 != k2)
    throw_unsupported(n, fmt::format("inner dimensions differ: {} x {} (transA {}, transB {})", shape_string(a),
                                     shape_string(b), ta, tb));
  std::vector<int64_t> out = {ta ? a[1] : a[0], tb ? b[0] : b[1]};
  if (c != nullptr && broadcast_shapes(n, out, *c) != out)
    throw_unsupported(n, fmt::format("C of shape {} does not broadcast to {}", shape_string(*c), shape_string(out)));
  return out;
}

std::vector<int64_t> broadcast_shapes(const Node& n, const std::vector<int64_t>& a,
                                      const std::vector<int64_t>& b) {
  try {
    return runtime::cpu::broadcast_shapes(a, b);
  } catch (const UserError& e) {
    throw_unsupported(n, e.what());
  }
}

int64_t normalize_axis(const Node& n, int64_t axis, int64_t rank, bool inclusive) {
  const int64_t hi = inclusive ? rank : rank - 1;
  if (axis < -rank || axis > hi)
    throw_unsupported(n, fmt::format("axis {} out of range for rank {} (valid: {}..{})", axis, rank, -rank, hi));
  return axis < 0 ? axis + rank : axis;
}

int64_t onnx_axis(const Node& n, int64_t opset, const std::string& what, int64_t axis, int64_t rank,
                  bool inclusive) {
  const int64_t hi = inclusive ? rank : rank - 1;
  // Gather defines negative axes from its first version; the other operators from opset 11.
  const int64_t negative_since = n.op == "Gather" ? 1 : 11;
  if (axis < 0 && opset < negative_since)
    throw_unsupported(n, fmt::format("{} {} is negative; {} accepts negative axes from opset {} (model opset {})", what,
                                     axis, n.op, negative_since, opset));
  if (axis < -rank || axis > hi)
    throw_unsupported(n, fmt::format("{} {} out of range for rank {} (valid: {}..{})", what, axis, rank,
                                     opset < negative_since ? 0 : -rank, hi));
  return axis < 0 ? axis + rank : axis;
}

int64_t softmax_axis(const Node& n, int64_t opset, int64_t rank) {
  if (rank < 1) throw_unsupported(n, "input is a scalar; softmax needs at least one dimension");
  return onnx_axis(n, opset, "axis", attr_int(n, "axis", opset < 13 ? 1 : -1), rank);
}

std::vector<int64_t> reshape_shape(const Node& n, const std::vector<int64_t>& in,
                                   const std::vector<int64_t>& target, bool allowzero) {
  std::vector<int64_t> shape = target;
  int64_t infer = -1, known = 1;
  const std::string what = describe(n) + ": reshape target";
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 0 && !allowzero) {
      if (k >= in.size())
        throw_unsupported(n, fmt::format("shape {} copies dimension {} of the {}-D input {}", shape_string(target), k,
                                         in.size(), shape_string(in)));
      shape[k] = in[k];
    }
    if (shape[k] == -1) {
      if (infer >= 0) throw_unsupported(n, fmt::format("shape {} has two -1 entries", shape_string(target)));
      infer = static_cast<int64_t>(k);
    } else if (shape[k] < 0) {
      throw_unsupported(n, fmt::format("shape {} has a negative entry {}", shape_string(target), shape[k]));
    } else {
      known = support::checked_mul(known, shape[k], what);
    }
  }
  const int64_t elems = support::checked_product(in, describe(n));
  if (infer >= 0) {
    if (known == 0 || elems % known != 0)
      throw_unsupported(n, fmt::format("cannot reshape {} ({} elements) to {}", shape_string(in), elems,
                                       shape_string(target)));
    shape[infer] = elems / known;
  }
  if (support::checked_product(shape, what) != elems)
    throw_unsupported(n, fmt::format("cannot reshape {} ({} elements) to {}", shape_string(in), elems,
                                     shape_string(shape)));
  return shape;
}

std::vector<int64_t> flatten_shape(const Node& n, int64_t opset, const std::vector<int64_t>& in) {
  const int64_t r = static_cast<int64_t>(in.size());
  const int64_t axis = onnx_axis(n, opset, "axis", attr_int(n, "axis", 1), r, true);
  return {product(n, in.begin(), in.begin() + axis), product(n, in.begin() + axis, in.end())};
}

std::optional<std::vector<int64_t>> squeeze_axes(const Node& n, int64_t opset,
                                                 const std::vector<int64_t>* axes_input) {
  if (opset < 13) {
    if (!n.attrs.contains("axes")) return std::nullopt;
    return attr_ints(n, "axes", {});
  }
  if (axes_input == nullptr) return std::nullopt;
  return *axes_input;
}

namespace {
/// Normalises and sorts `axes` for rank `rank`; duplicates are an error.
std::vector<int64_t> normalized_axes(const Node& n, int64_t opset, std::vector<int64_t> axes, int64_t rank) {
  const std::vector<int64_t> given = axes;
  for (int64_t& a : axes) a = onnx_axis(n, opset, "axes", a, rank);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    throw_unsupported(n, fmt::format("axes {} name a dimension twice", shape_string(given)));
  return axes;
}
}  // namespace

std::vector<int64_t> squeeze_shape(const Node& n, int64_t opset, const std::vector<int64_t>& in,
                                   const std::optional<std::vector<int64_t>>& axes) {
  const int64_t r = static_cast<int64_t>(in.size());
  std::vector<int64_t> ax;
  if (axes) {
    if (axes->empty()) throw_unsupported(n, "axes is empty (give the axes to squeeze, or omit it to squeeze every 1)");
    ax = normalized_axes(n, opset, *axes, r);
  }
  std::vector<int64_t> out;
  for (int64_t d = 0; d < r; ++d) {
    const bool listed = std::binary_search(ax.begin(), ax.end(), d);
    if (listed && in[d] != 1)
      throw_unsupported(n, fmt::format("cannot squeeze dimension {} of size {} of {}", d, in[d], shape_string(in)));
    if (listed || (!axes && in[d] == 1)) continue;
    out.push_back(in[d]);
  }
  return out;
}

std::vector<int64_t> unsqueeze_shape(const Node& n, int64_t opset, const std::vector<int64_t>& in,
                                     const std::optional<std::vector<int64_t>>& axes) {
  if (!axes || axes->empty()) throw_unsupported(n, "axes are required");
  const int64_t r = static_cast<int64_t>(in.size() + axes->size());
  const std::vector<int64_t> ax = normalized_axes(n, opset, *axes, r);
  std::vector<int64_t> out;
  size_t src = 0, ai = 0;
  for (int64_t d = 0; d < r; ++d) {
    if (ai < ax.size() && ax[ai] == d) {
      out.push_back(1);
      ++ai;
    } else {
      out.push_back(in.at(src++));
    }
  }
  return out;
}

std::vector<int64_t> concat_shape(const Node& n, int64_t opset, const std::vector<std::vector<int64_t>>& ins,
                                  int64_t* axis_out) {
  if (ins.empty()) throw_unsupported(n, "no inputs");
  const auto& first = ins[0];
  const int64_t r = static_cast<int64_t>(first.size());
  if (r == 0) throw_unsupported(n, "inputs are scalars; concat needs rank >= 1");
  if (!n.attrs.contains("axis")) throw_unsupported(n, "attribute 'axis' is required");
  const int64_t axis = onnx_axis(n, opset, "axis", attr_int(n, "axis", 0), r);
  std::vector<int64_t> os = first;
  os[axis] = 0;
  for (size_t k = 0; k < ins.size(); ++k) {
    const auto& t = ins[k];
    if (t.size() != first.size())
      throw_unsupported(n, fmt::format("input {} has shape {}, input 0 {} (ranks differ)", k, shape_string(t),
                                       shape_string(first)));
    for (int64_t d = 0; d < r; ++d)
      if (d != axis && t[d] != first[d])
        throw_unsupported(n, fmt::format("input {} shape {} does not match {} outside axis {}", k, shape_string(t),
                                         shape_string(first), axis));
    os[axis] = support::checked_add(os[axis], t[axis], describe(n));
  }
  if (axis_out) *axis_out = axis;
  return os;
}

std::vector<int64_t> gather_shape(const Node& n, int64_t opset, const std::vector<int64_t>& data,
                                  const std::vector<int64_t>& indices) {
  const int64_t r = static_cast<int64_t>(data.size());
  if (r == 0) throw_unsupported(n, "data must have rank >= 1");
  const int64_t axis = onnx_axis(n, opset, "axis", attr_int(n, "axis", 0), r);
  std::vector<int64_t> os(data.begin(), data.begin() + axis);
  os.insert(os.end(), indices.begin(), indices.end());
  os.insert(os.end(), data.begin() + axis + 1, data.end());
  return os;
}

std::pair<int64_t, int64_t> shape_range(const Node& n, int64_t opset, int64_t rank) {
  if (opset < 15) return {0, rank};
  int64_t start = attr_int(n, "start", 0), end = attr_int(n, "end", rank);
  if (start < 0) start = start < -rank ? 0 : start + rank;
  if (end < 0) end = end < -rank ? 0 : end + rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  return {start, end};
}

int64_t bounded_tensor_bytes(const std::vector<int64_t>& shape, DType dtype, const std::string& what) {
  const int64_t elems = support::checked_product(shape, what);
  const int64_t bytes = support::checked_mul(elems, static_cast<int64_t>(dtype_bytes(dtype)), what);
  if (bytes > runtime::kMaxTensorBytes)
    throw_user_error("{} has shape {}, {} bytes as {}, more than the {}-byte (1 GiB) limit on one tensor", what,
                     shape_string(shape), bytes, to_string(dtype), runtime::kMaxTensorBytes);
  return bytes;
}

bool has_zero_dim(const std::vector<int64_t>& shape) {
  return std::find(shape.begin(), shape.end(), int64_t{0}) != shape.end();
}

namespace {
void check_scalar(const Graph& g, int v, const Node& n, const std::string& what) {
  const Value& val = g.values[static_cast<size_t>(v)];
  const int64_t count = shape_elements(val.shape);
  if (count != 1) {
    throw_unsupported(n, fmt::format("{} has shape {} ({} elements); it must hold exactly one value", what,
                                     shape_string(val.shape), count));
  }
}
}  // namespace

float const_scalar_f32(const Graph& g, int v, const Node& n, const std::string& what) {
  check_scalar(g, v, n, what);
  return g.const_f32(v)[0];
}

int64_t const_scalar_i64(const Graph& g, int v, const Node& n, const std::string& what) {
  check_scalar(g, v, n, what);
  return g.const_i64(v)[0];
}

std::string onnx_type_str(DType t) {
  switch (t) {
    case DType::kF32: return "tensor(float)";
    case DType::kU8: return "tensor(uint8)";
    case DType::kI8: return "tensor(int8)";
    case DType::kI32: return "tensor(int32)";
    case DType::kI64: return "tensor(int64)";
  }
  return "tensor(?)";
}

void check_input_types(const Graph& g, const Node& n, const std::function<bool(size_t)>& known) {
  if (n.input_types.empty()) return;
  static const std::set<std::string> kReadable = {"tensor(float)", "tensor(uint8)", "tensor(int8)", "tensor(int32)",
                                                  "tensor(int64)"};
  std::map<std::string, std::pair<std::string, size_t>> bound;  // type parameter -> (type, input index)
  auto value_name = [&](size_t i) { return support::quote(g.values[static_cast<size_t>(n.inputs[i])].name); };
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i] < 0 || !known(i)) continue;
    const InputTypeRule& p = n.input_types[std::min(i, n.input_types.size() - 1)];
    const std::string type = onnx_type_str(g.values[static_cast<size_t>(n.inputs[i])].dtype);
    if (!p.allowed.empty() && !std::binary_search(p.allowed.begin(), p.allowed.end(), type)) {
      std::string accepted;
      for (const std::string& t : p.allowed) {
        if (kReadable.count(t)) accepted += (accepted.empty() ? "" : ", ") + t;
      }
      throw_unsupported(n, fmt::format("input {} ({}, value {}) has type {}; {} accepts {} there{}", i,
                                       support::quote(p.name), value_name(i), type, n.input_types_source,
                                       accepted.empty() ? std::string("no type Tessel reads") : accepted,
                                       accepted.empty() ? "" : " (of the types Tessel reads)"));
    }
    if (p.param.empty()) continue;  // a fixed type, no parameter
    const auto [it, fresh] = bound.emplace(p.param, std::make_pair(type, i));
    if (!fresh && it->second.first != type) {
      throw_unsupported(n, fmt::format("input {} ({}, value {}) has type {} but input {} ({}) has type {}; {} "
                                       "gives both type parameter {}, one type",
                                       i, support::quote(p.name), value_name(i), type, it->second.second,
                                       value_name(it->second.second), it->second.first, n.input_types_source,
                                       support::quote(p.param)));
    }
  }
}

}  // namespace tessel::compiler::ir
