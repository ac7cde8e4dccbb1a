// The CPU kernels of the Executable (contract in runtime/cpu/kernels.h) and their registry.
#include "runtime/cpu/kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "runtime/cpu/kernel_util.h"
#include "support/checked.h"
#include "support/text.h"

namespace tessel::runtime::cpu {

using namespace detail;

int8_t rhe_sat(double v, int32_t zero_point) {
  if (std::isnan(v)) return static_cast<int8_t>(std::clamp(zero_point, -128, 127));
  const double r = std::nearbyint(v) + static_cast<double>(zero_point);
  return static_cast<int8_t>(std::clamp(r, -128.0, 127.0));
}

namespace {

template <typename T>
const T* in_ptr(const KernelCall& c, size_t i) {
  return reinterpret_cast<const T*>(c.inputs[i].data);
}
template <typename T>
T* out_ptr(const KernelCall& c, size_t i) {
  return reinterpret_cast<T*>(c.outputs[i].data);
}
const TensorDesc& in_desc(const KernelCall& c, size_t i) { return *c.inputs[i].desc; }
const TensorDesc& out_desc(const KernelCall& c, size_t i) { return *c.outputs[i].desc; }

/// Checks an elementwise call: one input of dtype `in` and one output of dtype `out`, both
/// plain layout, with equal shapes.
void check_unary(const KernelCall& c, DType in, DType out) {
  check_arity(c, 1, 1);
  const TensorDesc &x = in_desc(c, 0), &y = out_desc(c, 0);
  check_tensor(c, x, "input", in);
  check_tensor(c, y, "output", out);
  check_same_shape(c, x, "input", y, "output");
}

/// Checks that input `x` and output `y` share scale and zero point (ops that move int8 values
/// without requantising them).
void check_same_quant(const KernelCall& c, const TensorDesc& x, const TensorDesc& y) {
  if (!(x.quant == y.quant)) {
    fail(c, fmt::format("input and output quantisation differ (scale {} zp {} vs scale {} zp {})",
                        x.quant.scale, x.quant.zero_point, y.quant.scale, y.quant.zero_point));
  }
}

/// The 256 requantised values, table[q + 128] = sat(rhe(s_from * (q - zp_from) / s_to) + zp_to),
/// evaluated in double.
void requant_table(const QuantParams& from, const QuantParams& to, int8_t table[256]) {
  for (int q = -128; q < 128; ++q) {
    table[q + 128] = rhe_sat(static_cast<double>(from.scale) * (q - from.zero_point) / to.scale,
                             to.zero_point);
  }
}

/// The broadcast shape of inputs `a` and `b`; fails unless output `y` has exactly that shape.
std::vector<int64_t> broadcast_output(const KernelCall& c, const TensorDesc& a, const TensorDesc& b,
                                      const TensorDesc& y) {
  auto shape = broadcast_shape(c, a.shape, b.shape);
  if (shape != y.shape) {
    fail(c, fmt::format("output {} has shape [{}], the broadcast gives [{}]", support::quote(y.name),
                        fmt::join(y.shape, ", "), fmt::join(shape, ", ")));
  }
  return shape;
}

// ---------------------------------------------------------------- quantisation

void k_quantize(const KernelCall& c) {
  check_unary(c, DType::kF32, DType::kI8);
  const TensorDesc &x = in_desc(c, 0), &y = out_desc(c, 0);
  check_scale(c, y, "output");
  const float* in = in_ptr<float>(c, 0);
  int8_t* out = out_ptr<int8_t>(c, 0);
  const float s = y.quant.scale;
  const int64_t n = x.num_elements();
  for (int64_t i = 0; i < n; ++i) out[i] = rhe_sat(static_cast<double>(in[i] / s), y.quant.zero_point);
}

void k_dequantize(const KernelCall& c) {
  check_unary(c, DType::kI8, DType::kF32);
  const TensorDesc& x = in_desc(c, 0);
  check_scale(c, x, "input");
  const int8_t* in = in_ptr<int8_t>(c, 0);
  float* out = out_ptr<float>(c, 0);
  const float s = x.quant.scale;
  const int32_t zp = x.quant.zero_point;
  const int64_t n = x.num_elements();
  for (int64_t i = 0; i < n; ++i) out[i] = s * static_cast<float>(in[i] - zp);
}

void k_requantize(const KernelCall& c) {
  check_unary(c, DType::kI8, DType::kI8);
  const TensorDesc &x = in_desc(c, 0), &y = out_desc(c, 0);
  check_scale(c, x, "input");
  check_scale(c, y, "output");
  const int8_t* in = in_ptr<int8_t>(c, 0);
  int8_t* out = out_ptr<int8_t>(c, 0);
  // Precompute the 256 possible results (same formula per value).
  int8_t table[256];
  requant_table(x.quant, y.quant, table);
  const int64_t n = x.num_elements();
  for (int64_t i = 0; i < n; ++i) out[i] = table[in[i] + 128];
}

// ---------------------------------------------------------------- qconv2d

void k_qconv2d(const KernelCall& c) {
  check_arity(c, 3, 1);
  const TensorDesc &x = in_desc(c, 0), &w = in_desc(c, 1), &b = in_desc(c, 2), &y = out_desc(c, 0);
  check_tensor(c, x, "input x", DType::kI8, 4);
  check_tensor(c, w, "weights", DType::kI8, 4);
  check_tensor(c, b, "bias", DType::kI32, 1);
  check_tensor(c, y, "output", DType::kI8, 4);
  const QConv2dParams p = parse_qconv2d(*c.step, x, w, y);
  if (b.shape[0] != p.oc) {
    fail(c, fmt::format("bias {} has {} elements, expected {} (output channels)", support::quote(b.name),
                        b.shape[0], p.oc));
  }
  thread_local std::vector<int16_t> pad_scratch;
  thread_local std::vector<int32_t> acc_scratch;
  qconv2d(p, in_ptr<int8_t>(c, 0), in_ptr<int8_t>(c, 1), in_ptr<int32_t>(c, 2),
          out_ptr<int8_t>(c, 0), pad_scratch, acc_scratch);
}

// ---------------------------------------------------------------- elementwise int8

void k_qadd(const KernelCall& c) {
  check_arity(c, 2, 1);
  const TensorDesc &a = in_desc(c, 0), &b = in_desc(c, 1), &y = out_desc(c, 0);
  check_tensor(c, a, "input a", DType::kI8);
  check_tensor(c, b, "input b", DType::kI8);
  check_tensor(c, y, "output", DType::kI8);
  check_scale(c, a, "input a");
  check_scale(c, b, "input b");
  check_scale(c, y, "output");
  const auto shape = broadcast_output(c, a, b, y);
  const bool relu = attr_bool(*c.step, "relu", false);
  const double sa = a.quant.scale, sb = b.quant.scale, sy = y.quant.scale;
  const int32_t za = a.quant.zero_point, zb = b.quant.zero_point, zy = y.quant.zero_point;
  const int8_t* pa = in_ptr<int8_t>(c, 0);
  const int8_t* pb = in_ptr<int8_t>(c, 1);
  int8_t* out = out_ptr<int8_t>(c, 0);
  auto compute = [&](int8_t qa, int8_t qb) {
    int8_t r = rhe_sat((sa * (qa - za) + sb * (qb - zb)) / sy, zy);
    if (relu && r < zy) r = static_cast<int8_t>(std::clamp(zy, -128, 127));
    return r;
  };
  if (a.shape == b.shape) {
    const int64_t n = y.num_elements();
    for (int64_t i = 0; i < n; ++i) out[i] = compute(pa[i], pb[i]);
    return;
  }
  const auto oa = broadcast_offsets(a.shape, shape), ob = broadcast_offsets(b.shape, shape);
  for (size_t i = 0; i < oa.size(); ++i) out[i] = compute(pa[oa[i]], pb[ob[i]]);
}

void k_qclip(const KernelCall& c) {
  check_unary(c, DType::kI8, DType::kI8);
  const TensorDesc &x = in_desc(c, 0), &y = out_desc(c, 0);
  check_same_quant(c, x, y);
  const int64_t lo = attr_int(*c.step, "lo", nullptr), hi = attr_int(*c.step, "hi", nullptr);
  if (lo < -128 || hi > 127 || lo > hi) {
    fail(c, fmt::format("clip range [{}, {}] must satisfy -128 <= lo <= hi <= 127", lo, hi));
  }
  const int8_t* in = in_ptr<int8_t>(c, 0);
  int8_t* out = out_ptr<int8_t>(c, 0);
  const int64_t n = x.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    out[i] = static_cast<int8_t>(std::clamp<int64_t>(in[i], lo, hi));
  }
}

// ---------------------------------------------------------------- pools

// Window rows [h0, h1) clipped to the input, and the ONNX divisor.
struct Window {
  int64_t h0, h1, w0, w1, divisor;
};
Window window(const PoolGeom& g, int64_t oy, int64_t ox) {
  int64_t hs = oy * g.sh - g.pt, ws = ox * g.sw - g.pl;
  int64_t he = std::min(hs + g.kh, g.ih + g.pb), we = std::min(ws + g.kw, g.iw + g.pr);
  const int64_t padded = (he - hs) * (we - ws);
  Window win{std::max<int64_t>(hs, 0), std::min(he, g.ih), std::max<int64_t>(ws, 0),
             std::min(we, g.iw), 0};
  win.divisor = g.count_include_pad ? padded : (win.h1 - win.h0) * (win.w1 - win.w0);
  return win;
}

/// Writes reduce(plane, window) for every output element of the pool, in NCHW order; `plane`
/// points at the input plane [ih][iw] of the output's (n, c).
template <typename T, typename Reduce>
void pool(const PoolGeom& g, const T* in, T* out, Reduce reduce) {
  for (int64_t nc = 0; nc < g.n * g.c; ++nc) {
    const T* plane = in + nc * g.ih * g.iw;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox) *out++ = reduce(plane, window(g, oy, ox));
    }
  }
}

/// The sum, in Acc, of the input values inside the (clipped) window.
template <typename Acc, typename T>
Acc window_sum(const PoolGeom& g, const T* plane, const Window& win) {
  Acc sum = 0;
  for (int64_t yy = win.h0; yy < win.h1; ++yy) {
    for (int64_t xx = win.w0; xx < win.w1; ++xx) sum += plane[yy * g.iw + xx];
  }
  return sum;
}

template <typename T>
void max_pool(const PoolGeom& g, const T* in, T* out) {
  pool(g, in, out, [&](const T* plane, const Window& win) {
    T m = std::numeric_limits<T>::lowest();
    for (int64_t yy = win.h0; yy < win.h1; ++yy) {
      for (int64_t xx = win.w0; xx < win.w1; ++xx) m = std::max(m, plane[yy * g.iw + xx]);
    }
    return m;
  });
}

void check_pool_tensors(const KernelCall& c, DType t) {
  check_arity(c, 1, 1);
  check_tensor(c, in_desc(c, 0), "input", t, 4);
  check_tensor(c, out_desc(c, 0), "output", t, 4);
}

void k_maxpool(const KernelCall& c) {
  check_pool_tensors(c, DType::kI8);
  check_same_quant(c, in_desc(c, 0), out_desc(c, 0));
  max_pool(pool_geom(c, false), in_ptr<int8_t>(c, 0), out_ptr<int8_t>(c, 0));
}

void k_maxpool_f32(const KernelCall& c) {
  check_pool_tensors(c, DType::kF32);
  max_pool(pool_geom(c, false), in_ptr<float>(c, 0), out_ptr<float>(c, 0));
}

void k_avgpool(const KernelCall& c) {
  check_pool_tensors(c, DType::kI8);
  const TensorDesc &x = in_desc(c, 0), &y = out_desc(c, 0);
  check_scale(c, x, "input");
  check_scale(c, y, "output");
  const PoolGeom g = pool_geom(c, true);
  pool(g, in_ptr<int8_t>(c, 0), out_ptr<int8_t>(c, 0), [&](const int8_t* plane, const Window& win) {
    // Sum of (q - zero_point) over the clipped window.
    const int64_t sum = window_sum<int64_t>(g, plane, win) -
                        int64_t(x.quant.zero_point) * (win.h1 - win.h0) * (win.w1 - win.w0);
    return rhe_sat(static_cast<double>(x.quant.scale) * static_cast<double>(sum) /
                       static_cast<double>(win.divisor) / y.quant.scale,
                   y.quant.zero_point);
  });
}

void k_avgpool_f32(const KernelCall& c) {
  check_pool_tensors(c, DType::kF32);
  const PoolGeom g = pool_geom(c, true);
  pool(g, in_ptr<float>(c, 0), out_ptr<float>(c, 0), [&](const float* plane, const Window& win) {
    return window_sum<float>(g, plane, win) / static_cast<float>(win.divisor);
  });
}

void k_global_avgpool(const KernelCall& c) {
  check_arity(c, 1, 1);
  const TensorDesc &x = in_desc(c, 0), &y = out_desc(c, 0);
  check_tensor(c, x, "input", DType::kI8, 4);
  check_tensor(c, y, "output", DType::kI8, 4);
  check_scale(c, x, "input");
  check_scale(c, y, "output");
  const std::vector<int64_t> expect{x.shape[0], x.shape[1], 1, 1};
  if (y.shape != expect) {
    fail(c, fmt::format("output {} has shape [{}], expected [{}]", support::quote(y.name),
                        fmt::join(y.shape, ", "), fmt::join(expect, ", ")));
  }
  const int64_t hw = x.shape[2] * x.shape[3];
  if (hw == 0) fail(c, fmt::format("input {} has an empty spatial extent", support::quote(x.name)));
  const int8_t* in = in_ptr<int8_t>(c, 0);
  int8_t* out = out_ptr<int8_t>(c, 0);
  for (int64_t nc = 0; nc < x.shape[0] * x.shape[1]; ++nc) {
    int64_t sum = 0;
    for (int64_t i = 0; i < hw; ++i) sum += in[nc * hw + i] - x.quant.zero_point;
    out[nc] = rhe_sat(static_cast<double>(x.quant.scale) * static_cast<double>(sum) /
                          static_cast<double>(hw) / y.quant.scale,
                      y.quant.zero_point);
  }
}

// ---------------------------------------------------------------- data movement

void k_reshape(const KernelCall& c) {
  check_arity(c, 1, 1);
  const TensorDesc &x = in_desc(c, 0), &y = out_desc(c, 0);
  check_tensor(c, x, "input", x.dtype);
  check_tensor(c, y, "output", x.dtype);
  if (x.num_elements() != y.num_elements()) {
    fail(c, fmt::format("input {} has {} elements but output {} has {}", support::quote(x.name),
                        x.num_elements(), support::quote(y.name), y.num_elements()));
  }
  std::memcpy(c.outputs[0].data, c.inputs[0].data, static_cast<size_t>(x.size_bytes()));
}

int64_t norm_axis(const KernelCall& c, int64_t axis, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) {
    fail(c, fmt::format("axis {} is out of range for rank {}", axis, rank));
  }
  return axis < 0 ? axis + r : axis;
}

void k_concat(const KernelCall& c) {
  check_arity(c, -1, 1, 1);
  const TensorDesc& y = out_desc(c, 0);
  check_tensor(c, y, "output", y.dtype);
  const int64_t axis = norm_axis(c, attr_int(*c.step, "axis", nullptr), y.shape.size());
  int64_t total = 0;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const TensorDesc& x = in_desc(c, i);
    check_tensor(c, x, fmt::format("input {}", i), y.dtype, static_cast<int>(y.shape.size()));
    for (size_t d = 0; d < y.shape.size(); ++d) {
      if (static_cast<int64_t>(d) != axis && x.shape[d] != y.shape[d]) {
        fail(c, fmt::format("input {} {} has dimension {} = {}, output has {}", i, support::quote(x.name), d,
                            x.shape[d], y.shape[d]));
      }
    }
    total += x.shape[static_cast<size_t>(axis)];
    if (y.dtype == DType::kI8) {
      check_scale(c, x, fmt::format("input {}", i));
    }
  }
  if (total != y.shape[static_cast<size_t>(axis)]) {
    fail(c, fmt::format("inputs sum to {} along axis {}, output has {}", total, axis,
                        y.shape[static_cast<size_t>(axis)]));
  }
  if (y.dtype == DType::kI8) check_scale(c, y, "output");
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= y.shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < y.shape.size(); ++d) inner *= y.shape[d];
  const size_t eb = dtype_bytes(y.dtype);
  uint8_t* out = c.outputs[0].data;
  const int64_t out_row = y.shape[static_cast<size_t>(axis)] * inner;
  int64_t col = 0;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const TensorDesc& x = in_desc(c, i);
    const int64_t row = x.shape[static_cast<size_t>(axis)] * inner;
    const uint8_t* in = c.inputs[i].data;
    const bool requant = y.dtype == DType::kI8 && !(x.quant == y.quant);
    int8_t table[256];
    if (requant) requant_table(x.quant, y.quant, table);
    for (int64_t o = 0; o < outer; ++o) {
      uint8_t* dst = out + static_cast<size_t>((o * out_row + col)) * eb;
      const uint8_t* src = in + static_cast<size_t>(o * row) * eb;
      if (requant) {
        for (int64_t e = 0; e < row; ++e) {
          dst[e] = static_cast<uint8_t>(table[static_cast<int8_t>(src[e]) + 128]);
        }
      } else {
        std::memcpy(dst, src, static_cast<size_t>(row) * eb);
      }
    }
    col += row;
  }
}

void check_nchwnc_pair(const KernelCall& c, const TensorDesc& plain, const TensorDesc& packed) {
  check_tensor(c, plain, "plain tensor", DType::kI8, 4, true);
  check_tensor(c, packed, "packed tensor", DType::kI8, 4, false);
  if (packed.layout != Layout::kNCHWnc) {
    fail(c, fmt::format("tensor {} must be in NCHWnc layout", support::quote(packed.name)));
  }
  if (packed.block_n < 1 || packed.block_c < 1) {
    fail(c, fmt::format("tensor {} has blocks n={} c={}, expected positive", support::quote(packed.name),
                        packed.block_n, packed.block_c));
  }
  check_same_shape(c, plain, "plain", packed, "packed");
}

void k_pack_nchwnc(const KernelCall& c) {
  check_arity(c, 1, 1);
  const TensorDesc &x = in_desc(c, 0), &y = out_desc(c, 0);
  check_nchwnc_pair(c, x, y);
  pack_nchwnc(in_ptr<int8_t>(c, 0), x.shape[0], x.shape[1], x.shape[2], x.shape[3], y.block_n,
              y.block_c, out_ptr<int8_t>(c, 0));
}

void k_unpack_nchwnc(const KernelCall& c) {
  check_arity(c, 1, 1);
  const TensorDesc &x = in_desc(c, 0), &y = out_desc(c, 0);
  check_nchwnc_pair(c, y, x);
  unpack_nchwnc(in_ptr<int8_t>(c, 0), y.shape[0], y.shape[1], y.shape[2], y.shape[3], x.block_n,
                x.block_c, out_ptr<int8_t>(c, 0));
}

// ---------------------------------------------------------------- float

void k_softmax(const KernelCall& c) {
  check_unary(c, DType::kF32, DType::kF32);
  const TensorDesc& x = in_desc(c, 0);
  if (x.shape.empty()) fail(c, "input is a scalar; softmax needs at least one dimension");
  const int64_t dflt = -1;
  const int64_t axis = norm_axis(c, attr_int(*c.step, "axis", &dflt), x.shape.size());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
  const int64_t len = x.shape[static_cast<size_t>(axis)];
  const float* in = in_ptr<float>(c, 0);
  float* out = out_ptr<float>(c, 0);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * len * inner + i;
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t k = 0; k < len; ++k) m = std::max(m, in[base + k * inner]);
      double sum = 0;
      for (int64_t k = 0; k < len; ++k) {
        const float e = std::exp(in[base + k * inner] - m);
        out[base + k * inner] = e;
        sum += e;
      }
      const float inv = static_cast<float>(1.0 / sum);
      for (int64_t k = 0; k < len; ++k) out[base + k * inner] *= inv;
    }
  }
}

void k_relu_f32(const KernelCall& c) {
  check_unary(c, DType::kF32, DType::kF32);
  const TensorDesc& x = in_desc(c, 0);
  const float* in = in_ptr<float>(c, 0);
  float* out = out_ptr<float>(c, 0);
  for (int64_t i = 0; i < x.num_elements(); ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
}

// ONNX Clip: y = min(max(x, lo), hi) with an absent bound unbounded (as the reference does: a
// NaN input stays NaN; lo > hi gives hi everywhere).
void k_clip_f32(const KernelCall& c) {
  check_unary(c, DType::kF32, DType::kF32);
  const TensorDesc& x = in_desc(c, 0);
  const std::optional<double> lo_attr = attr_finite_number(*c.step, "lo");
  const std::optional<double> hi_attr = attr_finite_number(*c.step, "hi");
  const float lo = lo_attr ? static_cast<float>(*lo_attr) : -std::numeric_limits<float>::infinity();
  const float hi = hi_attr ? static_cast<float>(*hi_attr) : std::numeric_limits<float>::infinity();
  const float* in = in_ptr<float>(c, 0);
  float* out = out_ptr<float>(c, 0);
  for (int64_t i = 0; i < x.num_elements(); ++i) out[i] = std::min(std::max(in[i], lo), hi);
}

template <typename Op>
void binary_f32(const KernelCall& c, Op op) {
  check_arity(c, 2, 1);
  const TensorDesc &a = in_desc(c, 0), &b = in_desc(c, 1), &y = out_desc(c, 0);
  check_tensor(c, a, "input a", DType::kF32);
  check_tensor(c, b, "input b", DType::kF32);
  check_tensor(c, y, "output", DType::kF32);
  const auto shape = broadcast_output(c, a, b, y);
  const float* pa = in_ptr<float>(c, 0);
  const float* pb = in_ptr<float>(c, 1);
  float* out = out_ptr<float>(c, 0);
  if (a.shape == b.shape) {
    for (int64_t i = 0; i < y.num_elements(); ++i) out[i] = op(pa[i], pb[i]);
    return;
  }
  const auto oa = broadcast_offsets(a.shape, shape), ob = broadcast_offsets(b.shape, shape);
  for (size_t i = 0; i < oa.size(); ++i) out[i] = op(pa[oa[i]], pb[ob[i]]);
}

void k_add_f32(const KernelCall& c) { binary_f32(c, [](float a, float b) { return a + b; }); }
void k_mul_f32(const KernelCall& c) { binary_f32(c, [](float a, float b) { return a * b; }); }

void k_conv2d_f32(const KernelCall& c) {
  if (c.inputs.size() != 2) check_arity(c, 3, 1); else check_arity(c, 2, 1);
  const TensorDesc &x = in_desc(c, 0), &w = in_desc(c, 1), &y = out_desc(c, 0);
  check_tensor(c, x, "input x", DType::kF32, 4);
  check_tensor(c, w, "weights", DType::kF32, 4);
  check_tensor(c, y, "output", DType::kF32, 4);
  const Step& st = *c.step;
  const std::vector<int64_t> one{1, 1}, zero{0, 0, 0, 0};
  const int64_t g1 = 1;
  const auto s = attr_ints(st, "stride", 2, &one);
  const auto d = attr_ints(st, "dilations", 2, &one);
  const auto p = attr_ints(st, "pads", 4, &zero);
  const int64_t groups = attr_int(st, "groups", &g1);
  const int64_t n = x.shape[0], ic = x.shape[1], ih = x.shape[2], iw = x.shape[3];
  const int64_t oc = w.shape[0], icg = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  if (s[0] < 1 || s[1] < 1 || d[0] < 1 || d[1] < 1) {
    fail(c, fmt::format("stride [{}] and dilations [{}] must be positive", fmt::join(s, ", "),
                        fmt::join(d, ", ")));
  }
  for (int64_t v : p) {
    if (v < 0) fail(c, fmt::format("pads [{}] must be non-negative", fmt::join(p, ", ")));
  }
  if (groups < 1 || ic % groups != 0 || oc % groups != 0 || icg != ic / groups) {
    fail(c, fmt::format("groups {} does not fit input channels {}, output channels {} and "
                        "weight input channels {}",
                        groups, ic, oc, icg));
  }
  if (ih < 1 || iw < 1 || kh < 1 || kw < 1) {
    fail(c, fmt::format("input x {} [{}] and weights {} [{}] must have positive spatial sizes",
                        support::quote(x.name), fmt::join(x.shape, ", "), support::quote(w.name), fmt::join(w.shape, ", ")));
  }
  int64_t oh = 0, ow = 0;
  try {
    const char* what = "dilated kernel";
    const int64_t ekh = support::checked_add(support::checked_mul(kh - 1, d[0], what), 1, what);
    const int64_t ekw = support::checked_add(support::checked_mul(kw - 1, d[1], what), 1, what);
    oh = window_output_size(ih, p[0], p[2], ekh, s[0], false);
    ow = window_output_size(iw, p[1], p[3], ekw, s[1], false);
  } catch (const UserError& e) {
    fail(c, e.what());
  }
  const std::vector<int64_t> expect{n, oc, oh, ow};
  if (oh < 1 || ow < 1 || y.shape != expect) {
    fail(c, fmt::format("output {} has shape [{}], the convolution gives [{}]", support::quote(y.name),
                        fmt::join(y.shape, ", "), fmt::join(expect, ", ")));
  }
  const float* bias = nullptr;
  if (c.inputs.size() == 3) {
    const TensorDesc& b = in_desc(c, 2);
    check_tensor(c, b, "bias", DType::kF32, 1);
    if (b.shape[0] != oc) fail(c, fmt::format("bias has {} elements, expected {}", b.shape[0], oc));
    bias = in_ptr<float>(c, 2);
  }
  const float* in = in_ptr<float>(c, 0);
  const float* wt = in_ptr<float>(c, 1);
  float* out = out_ptr<float>(c, 0);
  const int64_t ocg = oc / groups;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t o = 0; o < oc; ++o) {
      const int64_t g = o / ocg;
      for (int64_t oy = 0; oy < oh; ++oy) {
        for (int64_t ox = 0; ox < ow; ++ox) {
          float acc = bias ? bias[o] : 0.0f;
          for (int64_t ci = 0; ci < icg; ++ci) {
            const float* plane = in + ((b * ic + g * icg + ci) * ih) * iw;
            const float* wk = wt + ((o * icg + ci) * kh) * kw;
            for (int64_t ky = 0; ky < kh; ++ky) {
              const int64_t yy = oy * s[0] - p[0] + ky * d[0];
              if (yy < 0 || yy >= ih) continue;
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t xx = ox * s[1] - p[1] + kx * d[1];
                if (xx < 0 || xx >= iw) continue;
                acc += plane[yy * iw + xx] * wk[ky * kw + kx];
              }
            }
          }
          out[((b * oc + o) * oh + oy) * ow + ox] = acc;
        }
      }
    }
  }
}

void k_matmul_f32(const KernelCall& c) {
  check_arity(c, 2, 1);
  const TensorDesc &a = in_desc(c, 0), &b = in_desc(c, 1), &y = out_desc(c, 0);
  check_tensor(c, a, "input a", DType::kF32);
  check_tensor(c, b, "input b", DType::kF32);
  check_tensor(c, y, "output", DType::kF32);
  if (a.shape.empty() || b.shape.empty()) fail(c, "matmul inputs must have at least 1 dimension");
  // ONNX MatMul = numpy.matmul: 1-D operands are promoted and the added axis removed after.
  std::vector<int64_t> sa = a.shape, sb = b.shape;
  const bool a1 = sa.size() == 1, b1 = sb.size() == 1;
  if (a1) sa.insert(sa.begin(), 1);
  if (b1) sb.push_back(1);
  const int64_t m = sa[sa.size() - 2], k = sa.back(), k2 = sb[sb.size() - 2], nn = sb.back();
  if (k != k2) {
    fail(c, fmt::format("inner dimensions differ: a [{}] and b [{}]", fmt::join(a.shape, ", "),
                        fmt::join(b.shape, ", ")));
  }
  const std::vector<int64_t> ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  const auto batch = broadcast_shape(c, ba, bb);
  std::vector<int64_t> expect = batch;
  if (!a1) expect.push_back(m);
  if (!b1) expect.push_back(nn);
  if (y.shape != expect) {
    fail(c, fmt::format("output {} has shape [{}], matmul gives [{}]", support::quote(y.name),
                        fmt::join(y.shape, ", "), fmt::join(expect, ", ")));
  }
  const auto oa = broadcast_offsets(ba, batch), ob = broadcast_offsets(bb, batch);
  const float* pa = in_ptr<float>(c, 0);
  const float* pb = in_ptr<float>(c, 1);
  float* out = out_ptr<float>(c, 0);
  for (size_t bi = 0; bi < oa.size(); ++bi) {
    const float* A = pa + oa[bi] * m * k;
    const float* B = pb + ob[bi] * k * nn;
    float* Y = out + static_cast<int64_t>(bi) * m * nn;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < nn; ++j) Y[i * nn + j] = 0.0f;
      for (int64_t kk = 0; kk < k; ++kk) {
        const float av = A[i * k + kk];
        for (int64_t j = 0; j < nn; ++j) Y[i * nn + j] += av * B[kk * nn + j];
      }
    }
  }
}

const std::map<std::string, KernelFn, std::less<>>& registry() {
  static const std::map<std::string, KernelFn, std::less<>> r = {
      {"quantize", k_quantize},
      {"dequantize", k_dequantize},
      {"requantize", k_requantize},
      {"qconv2d", k_qconv2d},
      {"qadd", k_qadd},
      {"qclip", k_qclip},
      {"maxpool", k_maxpool},
      {"avgpool", k_avgpool},
      {"global_avgpool", k_global_avgpool},
      {"reshape", k_reshape},
      {"concat", k_concat},
      {"softmax", k_softmax},
      {"relu_f32", k_relu_f32},
      {"clip_f32", k_clip_f32},
      {"add_f32", k_add_f32},
      {"mul_f32", k_mul_f32},
      {"conv2d_f32", k_conv2d_f32},
      {"matmul_f32", k_matmul_f32},
      {"maxpool_f32", k_maxpool_f32},
      {"avgpool_f32", k_avgpool_f32},
      {"pack_nchwnc", k_pack_nchwnc},
      {"unpack_nchwnc", k_unpack_nchwnc},
  };
  return r;
}

}  // namespace

KernelFn find_kernel(std::string_view op, std::string_view step_name) {
  const auto& r = registry();
  auto it = r.find(op);
  if (it == r.end()) {
    throw UserError(fmt::format("unknown cpu op {} in step {}; valid ops: {}", support::quote(op), support::quote(step_name),
                                fmt::join(kernel_names(), ", ")));
  }
  return it->second;
}

bool has_kernel(std::string_view op) { return registry().count(op) != 0; }

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : registry()) names.push_back(name);
  return names;
}

void run_kernel(const KernelCall& call) {
  if (call.step == nullptr) throw UserError("kernel call without a step");
  find_kernel(call.step->op, call.step->name)(call);
}

// ---------------------------------------------------------------- pack / unpack

void pack_nchwnc(const int8_t* in, int64_t n, int64_t c, int64_t h, int64_t w, int64_t bn,
                 int64_t bc, int8_t* out) {
  const int64_t nb = (n + bn - 1) / bn, cb = (c + bc - 1) / bc, hw = h * w;
  std::memset(out, 0, static_cast<size_t>(nb * bn * cb * bc * hw));
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const int8_t* src = in + (b * c + ch) * hw;
      int8_t* dst = out + ((b / bn) * cb + ch / bc) * hw * bn * bc + (b % bn) * bc + (ch % bc);
      for (int64_t i = 0; i < hw; ++i) dst[i * bn * bc] = src[i];
    }
  }
}

void unpack_nchwnc(const int8_t* in, int64_t n, int64_t c, int64_t h, int64_t w, int64_t bn,
                   int64_t bc, int8_t* out) {
  const int64_t cb = (c + bc - 1) / bc, hw = h * w;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      int8_t* dst = out + (b * c + ch) * hw;
      const int8_t* src = in + ((b / bn) * cb + ch / bc) * hw * bn * bc + (b % bn) * bc + (ch % bc);
      for (int64_t i = 0; i < hw; ++i) dst[i] = src[i * bn * bc];
    }
  }
}

}  // namespace tessel::runtime::cpu
