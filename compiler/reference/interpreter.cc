#include "compiler/reference/interpreter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>

#include "compiler/ir/op_util.h"
#include "support/error.h"

namespace tessel::compiler::reference {
namespace {

using ir::DType;
using ir::Node;

bool is_int(DType t) { return t != DType::kF32; }

const RefTensor& need(const Node& n, const std::vector<const RefTensor*>& in, size_t k) {
  if (k >= in.size() || in[k] == nullptr)
    ir::throw_unsupported(n, fmt::format("input {} is required but missing", k));
  return *in[k];
}

const RefTensor* opt(const std::vector<const RefTensor*>& in, size_t k) {
  return k < in.size() ? in[k] : nullptr;
}

std::vector<float> as_float(const RefTensor& t) {
  if (t.dtype == DType::kF32) return t.f;
  std::vector<float> v(t.i.size());
  for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<float>(t.i[k]);
  return v;
}

RefTensor make_f32(std::vector<int64_t> shape) {
  RefTensor t;
  t.dtype = DType::kF32;
  t.shape = std::move(shape);
  t.f.assign(t.size(), 0.0f);
  return t;
}

RefTensor make_int(DType d, std::vector<int64_t> shape) {
  RefTensor t;
  t.dtype = d;
  t.shape = std::move(shape);
  t.i.assign(t.size(), 0);
  return t;
}

/// Range of a quantised integer type.
std::pair<int64_t, int64_t> int_range(const Node& n, DType d) {
  switch (d) {
    case DType::kU8: return {0, 255};
    case DType::kI8: return {-128, 127};
    case DType::kI32: return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    default: ir::throw_unsupported(n, fmt::format("quantised type {} not supported", ir::to_string(d)));
  }
}

/// sat(rhe(v) + zp) for the output type.
int64_t quantize_value(float v, int64_t zp, std::pair<int64_t, int64_t> range) {
  const float r = std::nearbyint(v);
  double q = static_cast<double>(r) + static_cast<double>(zp);
  if (std::isnan(v)) q = static_cast<double>(zp);
  q = std::min<double>(std::max<double>(q, static_cast<double>(range.first)), static_cast<double>(range.second));
  return static_cast<int64_t>(q);
}

/// Scalar of a per-tensor quantisation parameter input (scale or zero point).
float scalar_f(const Node& n, const RefTensor& t, const char* what) {
  if (t.size() != 1) ir::throw_unsupported(n, fmt::format("{} must be a scalar here, has shape {}", what, ir::shape_string(t.shape)));
  return t.dtype == DType::kF32 ? t.f[0] : static_cast<float>(t.i[0]);
}
int64_t scalar_i(const Node& n, const RefTensor* t, const char* what) {
  if (t == nullptr) return 0;
  if (t->size() != 1) ir::throw_unsupported(n, fmt::format("{} must be a scalar here, has shape {}", what, ir::shape_string(t->shape)));
  if (!is_int(t->dtype)) ir::throw_unsupported(n, fmt::format("{} must be an integer tensor", what));
  return t->i[0];
}

/// The output side of a QLinear op: its zero point (input `k`, 0 when absent, named `what` in
/// errors), its type (that of the zero point, else `input_type`) and that type's range.
struct QOutput {
  int64_t zp = 0;
  DType type = DType::kI8;
  std::pair<int64_t, int64_t> range;
};
QOutput q_output(const Node& n, const std::vector<const RefTensor*>& in, size_t k, const char* what, DType input_type) {
  const RefTensor* zp_t = opt(in, k);
  QOutput q;
  q.zp = scalar_i(n, zp_t, what);
  q.type = zp_t ? zp_t->dtype : input_type;
  q.range = int_range(n, q.type);
  return q;
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t k = shape.size(); k-- > 1;) s[k - 1] = s[k] * shape[k];
  return s;
}

/// Calls fn(out_index, a_index, b_index) for every element of the broadcast of a and b.
template <typename Fn>
void broadcast_for_each(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                        const std::vector<int64_t>& out, Fn fn) {
  const size_t r = out.size();
  std::vector<int64_t> sa(r, 0), sb(r, 0);
  const auto ta = strides_of(a), tb = strides_of(b);
  for (size_t k = 0; k < r; ++k) {
    const size_t ka = k + a.size(), kb = k + b.size();
    if (ka >= r && a[ka - r] != 1) sa[k] = ta[ka - r];
    if (kb >= r && b[kb - r] != 1) sb[k] = tb[kb - r];
  }
  const int64_t total = ir::shape_elements(out);
  std::vector<int64_t> idx(r, 0);
  int64_t ia = 0, ib = 0;
  for (int64_t o = 0; o < total; ++o) {
    fn(o, ia, ib);
    for (size_t k = r; k-- > 0;) {
      ++idx[k];
      ia += sa[k];
      ib += sb[k];
      if (idx[k] < out[k]) break;
      ia -= sa[k] * idx[k];
      ib -= sb[k] * idx[k];
      idx[k] = 0;
    }
  }
}

/// y[n, oc, :, :] += conv over x (NCHW) with weights w (OIHW, IC/groups inputs per group).
template <typename T>
void conv2d_accumulate(const T* x, const T* w, T* y, int64_t N, int64_t C, int64_t H, int64_t W,
                       int64_t OC, int64_t groups, const ir::Window2d& win) {
  const int64_t cg = C / groups, ocg = OC / groups;
  const int64_t OH = win.oh, OW = win.ow;
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t oc = 0; oc < OC; ++oc) {
      const int64_t g = oc / ocg;
      T* yp = y + (n * OC + oc) * OH * OW;
      for (int64_t c = 0; c < cg; ++c) {
        const T* xp = x + (n * C + g * cg + c) * H * W;
        for (int64_t ky = 0; ky < win.kh; ++ky) {
          for (int64_t kx = 0; kx < win.kw; ++kx) {
            const T wv = w[((oc * cg + c) * win.kh + ky) * win.kw + kx];
            if (wv == T(0)) continue;
            // Valid ox: 0 <= ox*sw - pl + kx < W.
            const int64_t num = win.pad_left - kx;
            int64_t ox_lo = num <= 0 ? 0 : (num + win.sw - 1) / win.sw;
            int64_t ox_hi = (W - 1 + win.pad_left - kx) < 0 ? 0 : (W - 1 + win.pad_left - kx) / win.sw + 1;
            ox_hi = std::min(ox_hi, OW);
            if (ox_lo >= ox_hi) continue;
            for (int64_t oy = 0; oy < OH; ++oy) {
              const int64_t iy = oy * win.sh - win.pad_top + ky;
              if (iy < 0 || iy >= H) continue;
              const T* xr = xp + iy * W - win.pad_left + kx;
              T* yr = yp + oy * OW;
              if (win.sw == 1) {
                for (int64_t ox = ox_lo; ox < ox_hi; ++ox) yr[ox] += wv * xr[ox];
              } else {
                for (int64_t ox = ox_lo; ox < ox_hi; ++ox) yr[ox] += wv * xr[ox * win.sw];
              }
            }
          }
        }
      }
    }
  }
}

struct ConvShape {
  int64_t n, c, h, w, oc, cg, kh, kw, groups;
  ir::Window2d win;
};

/// The conv's sizes from the shared rule (ir::conv_geometry: ranks, group, window attributes).
ConvShape conv_shape(const Node& n, const RefTensor& x, const RefTensor& w) {
  const ir::ConvGeometry geo = ir::conv_geometry(n, x.shape, w.shape);
  ConvShape s;
  s.n = x.shape[0];
  s.c = x.shape[1];
  s.h = x.shape[2];
  s.w = x.shape[3];
  s.oc = w.shape[0];
  s.cg = w.shape[1];
  s.kh = w.shape[2];
  s.kw = w.shape[3];
  s.groups = geo.groups;
  s.win = geo.win;
  return s;
}

/// Initialises every output plane (N*OC planes of `plane` elements) of a conv to its channel's
/// bias (input `b`, OC elements; nothing when absent): float for Conv, int32 for QLinearConv.
template <typename T>
void fill_bias(const Node& n, const RefTensor* b, const ConvShape& s, int64_t plane, T* y) {
  if (b == nullptr) return;
  if (b->size() != s.oc) ir::throw_unsupported(n, fmt::format("bias has {} elements, expected {}", b->size(), s.oc));
  for (int64_t i = 0; i < s.n * s.oc; ++i) {
    const size_t c = static_cast<size_t>(i % s.oc);
    T v;
    if constexpr (std::is_same_v<T, float>)
      v = b->dtype == DType::kF32 ? b->f[c] : static_cast<float>(b->i[c]);
    else
      v = static_cast<T>(b->i[c]);
    std::fill_n(y + i * plane, plane, v);
  }
}

std::vector<RefTensor> op_conv(const Node& n, const std::vector<const RefTensor*>& in) {
  const RefTensor& x = need(n, in, 0);
  const RefTensor& w = need(n, in, 1);
  const ConvShape s = conv_shape(n, x, w);
  RefTensor y = make_f32({s.n, s.oc, s.win.oh, s.win.ow});
  fill_bias(n, opt(in, 2), s, s.win.oh * s.win.ow, y.f.data());
  const auto xf = as_float(x), wf = as_float(w);
  conv2d_accumulate<float>(xf.data(), wf.data(), y.f.data(), s.n, s.c, s.h, s.w, s.oc, s.groups, s.win);
  return {std::move(y)};
}

/// Per-channel quantisation parameter: element c of t, or its single element.
float per_channel_f(const RefTensor& t, int64_t c) {
  const int64_t k = t.size() == 1 ? 0 : c;
  return t.dtype == DType::kF32 ? t.f[k] : static_cast<float>(t.i[k]);
}
int64_t per_channel_i(const RefTensor* t, int64_t c) {
  if (t == nullptr) return 0;
  return t->i[t->size() == 1 ? 0 : c];
}

std::vector<RefTensor> op_qlinearconv(const Node& n, const std::vector<const RefTensor*>& in) {
  const RefTensor& x = need(n, in, 0);
  const float x_scale = scalar_f(n, need(n, in, 1), "x_scale");
  const int64_t x_zp = scalar_i(n, opt(in, 2), "x_zero_point");
  const RefTensor& w = need(n, in, 3);
  const RefTensor& w_scale = need(n, in, 4);
  const RefTensor* w_zp = opt(in, 5);
  const float y_scale = scalar_f(n, need(n, in, 6), "y_scale");
  const QOutput q = q_output(n, in, 7, "y_zero_point", x.dtype);
  const ConvShape s = conv_shape(n, x, w);
  if (w_scale.size() != 1 && w_scale.size() != s.oc)
    ir::throw_unsupported(n, fmt::format("w_scale has {} elements, expected 1 or {}", w_scale.size(), s.oc));
  std::vector<int32_t> xi(x.i.size()), wi(w.i.size());
  for (size_t k = 0; k < xi.size(); ++k) xi[k] = static_cast<int32_t>(x.i[k] - x_zp);
  const int64_t wper = w.size() / s.oc;
  for (int64_t o = 0; o < s.oc; ++o)
    for (int64_t k = 0; k < wper; ++k)
      wi[o * wper + k] = static_cast<int32_t>(w.i[o * wper + k] - per_channel_i(w_zp, o));
  std::vector<int32_t> acc(static_cast<size_t>(s.n * s.oc * s.win.oh * s.win.ow), 0);
  const int64_t plane = s.win.oh * s.win.ow;
  fill_bias(n, opt(in, 8), s, plane, acc.data());
  conv2d_accumulate<int32_t>(xi.data(), wi.data(), acc.data(), s.n, s.c, s.h, s.w, s.oc, s.groups, s.win);
  RefTensor y = make_int(q.type, {s.n, s.oc, s.win.oh, s.win.ow});
  for (int64_t i = 0; i < s.n * s.oc; ++i) {
    const float m = x_scale * per_channel_f(w_scale, i % s.oc) / y_scale;
    for (int64_t p = 0; p < plane; ++p)
      y.i[i * plane + p] = quantize_value(static_cast<float>(acc[i * plane + p]) * m, q.zp, q.range);
  }
  return {std::move(y)};
}

/// Shapes of an ONNX MatMul with A [..., M, K] (rank >= 2; leading dims fold into M) and
/// B [K, N]: M, K, N and the output shape [..., M, N].
/// numpy matmul of A [..., M, K] and B [..., K, N] (1-D operands promoted, batch dimensions
/// broadcast; ir::matmul_shape): M, K, N, the output shape, and for every output batch (in
/// row-major order) the element offsets of its A and B matrices.
struct MatmulShape {
  int64_t m, k, n;
  std::vector<int64_t> out;
  std::vector<int64_t> a_off, b_off;
};
MatmulShape matmul_shape(const Node& n, const RefTensor& a, const RefTensor& b) {
  MatmulShape s;
  s.out = ir::matmul_shape(n, a.shape, b.shape);
  std::vector<int64_t> sa = a.shape, sb = b.shape;
  if (sa.size() == 1) sa.insert(sa.begin(), 1);
  if (sb.size() == 1) sb.push_back(1);
  s.m = sa[sa.size() - 2];
  s.k = sa.back();
  s.n = sb.back();
  const std::vector<int64_t> ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  const std::vector<int64_t> batch = ir::broadcast_shapes(n, ba, bb);
  broadcast_for_each(ba, bb, batch, [&](int64_t, int64_t ia, int64_t ib) {
    s.a_off.push_back(ia * s.m * s.k);
    s.b_off.push_back(ib * s.k * s.n);
  });
  return s;
}

/// Float matmul (numpy semantics, see MatmulShape).
std::vector<RefTensor> op_matmul(const Node& n, const std::vector<const RefTensor*>& in) {
  const RefTensor& a = need(n, in, 0);
  const RefTensor& b = need(n, in, 1);
  const MatmulShape ms = matmul_shape(n, a, b);
  const int64_t M = ms.m, K = ms.k, N = ms.n;
  RefTensor y = make_f32(ms.out);
  const auto af = as_float(a), bf = as_float(b);
  for (size_t bi = 0; bi < ms.a_off.size(); ++bi) {
    const float* A = af.data() + ms.a_off[bi];
    const float* B = bf.data() + ms.b_off[bi];
    float* Y = y.f.data() + static_cast<int64_t>(bi) * M * N;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t k = 0; k < K; ++k) {
        const float av = A[m * K + k];
        for (int64_t j = 0; j < N; ++j) Y[m * N + j] += av * B[k * N + j];
      }
  }
  return {std::move(y)};
}

std::vector<RefTensor> op_qlinearmatmul(const Node& n, const std::vector<const RefTensor*>& in) {
  const RefTensor& a = need(n, in, 0);
  const float a_scale = scalar_f(n, need(n, in, 1), "a_scale");
  const int64_t a_zp = scalar_i(n, opt(in, 2), "a_zero_point");
  const RefTensor& b = need(n, in, 3);
  const RefTensor& b_scale = need(n, in, 4);
  const RefTensor* b_zp = opt(in, 5);
  const float y_scale = scalar_f(n, need(n, in, 6), "y_scale");
  const QOutput q = q_output(n, in, 7, "y_zero_point", a.dtype);
  const MatmulShape ms = matmul_shape(n, a, b);
  const int64_t M = ms.m, K = ms.k, N = ms.n;
  if (b_scale.size() != 1 && b_scale.size() != N)
    ir::throw_unsupported(n, fmt::format("b_scale has {} elements, expected 1 or {}", b_scale.size(), N));
  if (b_zp != nullptr && b_zp->size() != b_scale.size())
    ir::throw_unsupported(n, fmt::format("b_zero_point has {} elements, b_scale {}", b_zp->size(), b_scale.size()));
  RefTensor y = make_int(q.type, ms.out);
  std::vector<int32_t> acc(N);
  for (size_t bi = 0; bi < ms.a_off.size(); ++bi) {
    const int64_t* A = a.i.data() + ms.a_off[bi];
    const int64_t* B = b.i.data() + ms.b_off[bi];
    int64_t* Y = y.i.data() + static_cast<int64_t>(bi) * M * N;
    for (int64_t m = 0; m < M; ++m) {
      std::fill(acc.begin(), acc.end(), 0);
      for (int64_t k = 0; k < K; ++k) {
        const int32_t av = static_cast<int32_t>(A[m * K + k] - a_zp);
        for (int64_t j = 0; j < N; ++j) acc[j] += av * static_cast<int32_t>(B[k * N + j] - per_channel_i(b_zp, j));
      }
      for (int64_t j = 0; j < N; ++j) {
        const float s = a_scale * per_channel_f(b_scale, j) / y_scale;
        Y[m * N + j] = quantize_value(static_cast<float>(acc[j]) * s, q.zp, q.range);
      }
    }
  }
  return {std::move(y)};
}

std::vector<RefTensor> op_gemm(const Node& n, const std::vector<const RefTensor*>& in) {
  const RefTensor& a = need(n, in, 0);
  const RefTensor& b = need(n, in, 1);
  const RefTensor* c = opt(in, 2);
  const auto out = ir::gemm_shape(n, a.shape, b.shape, c ? &c->shape : nullptr);
  const bool ta = ir::attr_int(n, "transA", 0) != 0, tb = ir::attr_int(n, "transB", 0) != 0;
  const float alpha = ir::attr_float(n, "alpha", 1.0f), beta = ir::attr_float(n, "beta", 1.0f);
  const int64_t M = out[0], N = out[1], K = ta ? a.shape[0] : a.shape[1];
  const auto af = as_float(a), bf = as_float(b);
  RefTensor y = make_f32({M, N});
  for (int64_t m = 0; m < M; ++m)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0;
      for (int64_t k = 0; k < K; ++k) s += af[ta ? k * M + m : m * K + k] * bf[tb ? j * K + k : k * N + j];
      y.f[m * N + j] = alpha * s;
    }
  if (c != nullptr) {
    const auto cf = as_float(*c);
    broadcast_for_each(y.shape, c->shape, y.shape, [&](int64_t o, int64_t, int64_t ic) { y.f[o] += beta * cf[ic]; });
  }
  return {std::move(y)};
}

template <typename Fn>
std::vector<RefTensor> op_binary(const Node& n, const std::vector<const RefTensor*>& in, Fn fn) {
  const RefTensor& a = need(n, in, 0);
  const RefTensor& b = need(n, in, 1);
  const auto shape = ir::broadcast_shapes(n, a.shape, b.shape);
  if (a.dtype != b.dtype)
    ir::throw_unsupported(n, fmt::format("input types {} and {} differ", ir::to_string(a.dtype), ir::to_string(b.dtype)));
  if (a.dtype == DType::kF32) {
    RefTensor y = make_f32(shape);
    broadcast_for_each(a.shape, b.shape, shape, [&](int64_t o, int64_t ia, int64_t ib) { y.f[o] = fn(a.f[ia], b.f[ib]); });
    return {std::move(y)};
  }
  RefTensor y = make_int(a.dtype, shape);
  broadcast_for_each(a.shape, b.shape, shape, [&](int64_t o, int64_t ia, int64_t ib) { y.i[o] = fn(a.i[ia], b.i[ib]); });
  return {std::move(y)};
}

std::vector<RefTensor> op_qlinearadd(const Node& n, const std::vector<const RefTensor*>& in) {
  const RefTensor& a = need(n, in, 0);
  const float a_scale = scalar_f(n, need(n, in, 1), "A_scale");
  const int64_t a_zp = scalar_i(n, opt(in, 2), "A_zero_point");
  const RefTensor& b = need(n, in, 3);
  const float b_scale = scalar_f(n, need(n, in, 4), "B_scale");
  const int64_t b_zp = scalar_i(n, opt(in, 5), "B_zero_point");
  const float c_scale = scalar_f(n, need(n, in, 6), "C_scale");
  const QOutput q = q_output(n, in, 7, "C_zero_point", a.dtype);
  const auto shape = ir::broadcast_shapes(n, a.shape, b.shape);
  RefTensor y = make_int(q.type, shape);
  broadcast_for_each(a.shape, b.shape, shape, [&](int64_t o, int64_t ia, int64_t ib) {
    const float v = a_scale * static_cast<float>(a.i[ia] - a_zp) + b_scale * static_cast<float>(b.i[ib] - b_zp);
    y.i[o] = quantize_value(v / c_scale, q.zp, q.range);
  });
  return {std::move(y)};
}

void require_4d(const Node& n, const RefTensor& x) {
  if (x.shape.size() != 4)
    ir::throw_unsupported(n, fmt::format("input shape {} not supported (only 4-D NCHW)", ir::shape_string(x.shape)));
}

/// The rows [lo, hi) of the input that window `o` covers along one dimension (start
/// o * stride - pad_begin, `kernel` long), clipped to the input [0, in); and the window's extent
/// inside input + explicit padding (end clipped to in + pad_end: the part of a ceil_mode window
/// past the padding does not count), for count_include_pad.
struct WindowSpan {
  int64_t lo, hi, padded;
};
WindowSpan window_span(int64_t o, int64_t stride, int64_t pad_begin, int64_t pad_end, int64_t kernel, int64_t in) {
  const int64_t start = o * stride - pad_begin;
  const int64_t end = std::min(start + kernel, in + pad_end);
  return {std::max<int64_t>(start, 0), std::min(end, in), end - start};
}

template <typename T>
void maxpool_impl(const T* x, T* y, int64_t planes, int64_t H, int64_t W, const ir::Window2d& w) {
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oy = 0; oy < w.oh; ++oy) {
      const WindowSpan sy = window_span(oy, w.sh, w.pad_top, w.pad_bottom, w.kh, H);
      for (int64_t ox = 0; ox < w.ow; ++ox) {
        const WindowSpan sx = window_span(ox, w.sw, w.pad_left, w.pad_right, w.kw, W);
        // Pads are smaller than the kernel, so every window holds at least one input element.
        T m = x[(p * H + sy.lo) * W + sx.lo];
        for (int64_t iy = sy.lo; iy < sy.hi; ++iy)
          for (int64_t ix = sx.lo; ix < sx.hi; ++ix) m = std::max(m, x[(p * H + iy) * W + ix]);
        y[(p * w.oh + oy) * w.ow + ox] = m;
      }
    }
}

std::vector<RefTensor> op_maxpool(const Node& n, const std::vector<const RefTensor*>& in) {
  const RefTensor& x = need(n, in, 0);
  require_4d(n, x);
  const auto w = ir::window_2d(n, x.shape[2], x.shape[3], 1, 1);
  const std::vector<int64_t> os = {x.shape[0], x.shape[1], w.oh, w.ow};
  const int64_t planes = x.shape[0] * x.shape[1];
  if (x.dtype == DType::kF32) {
    RefTensor y = make_f32(os);
    maxpool_impl(x.f.data(), y.f.data(), planes, x.shape[2], x.shape[3], w);
    return {std::move(y)};
  }
  RefTensor y = make_int(x.dtype, os);
  maxpool_impl(x.i.data(), y.i.data(), planes, x.shape[2], x.shape[3], w);
  return {std::move(y)};
}

std::vector<RefTensor> op_avgpool(const Node& n, const std::vector<const RefTensor*>& in) {
  const RefTensor& x = need(n, in, 0);
  require_4d(n, x);
  if (x.dtype != DType::kF32) ir::throw_unsupported(n, "only float32 input is supported");
  const auto w = ir::window_2d(n, x.shape[2], x.shape[3], 1, 1);
  const int64_t include_pad = ir::attr_int(n, "count_include_pad", 0);
  if (include_pad != 0 && include_pad != 1)
    ir::throw_unsupported(n, fmt::format("count_include_pad {} must be 0 or 1", include_pad));
  const int64_t H = x.shape[2], W = x.shape[3], planes = x.shape[0] * x.shape[1];
  RefTensor y = make_f32({x.shape[0], x.shape[1], w.oh, w.ow});
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oy = 0; oy < w.oh; ++oy) {
      const WindowSpan sy = window_span(oy, w.sh, w.pad_top, w.pad_bottom, w.kh, H);
      for (int64_t ox = 0; ox < w.ow; ++ox) {
        const WindowSpan sx = window_span(ox, w.sw, w.pad_left, w.pad_right, w.kw, W);
        float s = 0;
        for (int64_t iy = sy.lo; iy < sy.hi; ++iy)
          for (int64_t ix = sx.lo; ix < sx.hi; ++ix) s += x.f[(p * H + iy) * W + ix];
        // The divisor: the elements inside the input, or (count_include_pad) inside input +
        // explicit padding (the part of a ceil_mode window past the padding excluded).
        const int64_t div = include_pad ? sy.padded * sx.padded : (sy.hi - sy.lo) * (sx.hi - sx.lo);
        y.f[(p * w.oh + oy) * w.ow + ox] = s / static_cast<float>(div);
      }
    }
  return {std::move(y)};
}

std::vector<RefTensor> op_global_avgpool(const Node& n, const std::vector<const RefTensor*>& in) {
  const RefTensor& x = need(n, in, 0);
  require_4d(n, x);
  if (x.dtype != DType::kF32) ir::throw_unsupported(n, "only float32 input is supported");
  const int64_t hw = x.shape[2] * x.shape[3], planes = x.shape[0] * x.shape[1];
  RefTensor y = make_f32({x.shape[0], x.shape[1], 1, 1});
  for (int64_t p = 0; p < planes; ++p) {
    float s = 0;
    for (int64_t k = 0; k < hw; ++k) s += x.f[p * hw + k];
    y.f[p] = s / static_cast<float>(hw);
  }
  return {std::move(y)};
}

std::vector<RefTensor> op_qlinear_global_avgpool(const Node& n, const std::vector<const RefTensor*>& in) {
  const RefTensor& x = need(n, in, 0);
  require_4d(n, x);
  const float x_scale = scalar_f(n, need(n, in, 1), "x_scale");
  const int64_t x_zp = scalar_i(n, opt(in, 2), "x_zero_point");
  const float y_scale = scalar_f(n, need(n, in, 3), "y_scale");
  const QOutput q = q_output(n, in, 4, "y_zero_point", x.dtype);
  const int64_t hw = x.shape[2] * x.shape[3], planes = x.shape[0] * x.shape[1];
  RefTensor y = make_int(q.type, {x.shape[0], x.shape[1], 1, 1});
  const float m = x_scale / (y_scale * static_cast<float>(hw));
  for (int64_t p = 0; p < planes; ++p) {
    int64_t s = 0;
    for (int64_t k = 0; k < hw; ++k) s += x.i[p * hw + k] - x_zp;
    y.i[p] = quantize_value(static_cast<float>(s) * m, q.zp, q.range);
  }
  return {std::move(y)};
}

/// Reads the quantisation parameters of Quantize/DequantizeLinear for element index i.
struct AxisParams {
  std::vector<float> scale;
  std::vector<int64_t> zp;
  int64_t axis = -1, inner = 1, dim = 1;
  size_t index(int64_t i) const { return axis < 0 ? 0 : static_cast<size_t>((i / inner) % dim); }
};

AxisParams axis_params(const Node& n, int64_t opset, const RefTensor& x, const RefTensor& scale, const RefTensor* zp) {
  AxisParams p;
  p.scale = as_float(scale);
  if (zp) {
    if (zp->size() != scale.size())
      ir::throw_unsupported(n, fmt::format("zero point has {} elements, scale {}", zp->size(), scale.size()));
    p.zp = zp->i;
  } else {
    p.zp.assign(p.scale.size(), 0);
  }
  // One element (scalar or [1]): per-tensor, as ONNX Runtime treats it. Otherwise 1-D per-axis.
  if (scale.size() == 1) return p;
  if (scale.shape.size() != 1)
    ir::throw_unsupported(n, fmt::format("scale of shape {} not supported (scalar or 1-D)", ir::shape_string(scale.shape)));
  if (opset < 13) ir::throw_unsupported(n, fmt::format("per-axis scales need opset 13 (model opset {})", opset));
  p.axis = ir::onnx_axis(n, opset, "axis", ir::attr_int(n, "axis", 1), static_cast<int64_t>(x.shape.size()));
  p.dim = x.shape[p.axis];
  if (scale.size() != p.dim)
    ir::throw_unsupported(n, fmt::format("scale has {} elements, axis {} has {}", scale.size(), p.axis, p.dim));
  p.inner = 1;
  for (size_t k = p.axis + 1; k < x.shape.size(); ++k) p.inner *= x.shape[k];
  return p;
}

std::vector<RefTensor> op_quantize(const Node& n, int64_t opset, const std::vector<const RefTensor*>& in) {
  const RefTensor& x = need(n, in, 0);
  if (x.dtype != DType::kF32) ir::throw_unsupported(n, "input must be float32");
  const RefTensor* zp = opt(in, 2);
  const AxisParams p = axis_params(n, opset, x, need(n, in, 1), zp);
  const DType out_type = zp ? zp->dtype : DType::kU8;
  const auto range = int_range(n, out_type);
  RefTensor y = make_int(out_type, x.shape);
  for (int64_t i = 0; i < x.size(); ++i) {
    const size_t c = p.index(i);
    y.i[i] = quantize_value(x.f[i] / p.scale[c], p.zp[c], range);
  }
  return {std::move(y)};
}

std::vector<RefTensor> op_dequantize(const Node& n, int64_t opset, const std::vector<const RefTensor*>& in) {
  const RefTensor& x = need(n, in, 0);
  if (!is_int(x.dtype)) ir::throw_unsupported(n, "input must be an integer tensor");
  const AxisParams p = axis_params(n, opset, x, need(n, in, 1), opt(in, 2));
  RefTensor y = make_f32(x.shape);
  for (int64_t i = 0; i < x.size(); ++i) {
    const size_t c = p.index(i);
    y.f[i] = static_cast<float>(x.i[i] - p.zp[c]) * p.scale[c];
  }
  return {std::move(y)};
}

RefTensor with_shape(const RefTensor& x, std::vector<int64_t> shape) {
  RefTensor y = x;
  y.shape = std::move(shape);
  return y;
}

std::vector<RefTensor> op_reshape(const Node& n, int64_t opset, const std::vector<const RefTensor*>& in) {
  const RefTensor& x = need(n, in, 0);
  const RefTensor& s = need(n, in, 1);
  if (s.dtype != DType::kI64) ir::throw_unsupported(n, "shape input must be int64");
  if (s.shape.size() != 1)
    ir::throw_unsupported(n, fmt::format("shape input has shape {}, expected a 1-D tensor", ir::shape_string(s.shape)));
  const bool allowzero = opset >= 14 && ir::attr_int(n, "allowzero", 0) != 0;
  return {with_shape(x, ir::reshape_shape(n, x.shape, s.i, allowzero))};
}

std::vector<RefTensor> op_flatten(const Node& n, int64_t opset, const std::vector<const RefTensor*>& in) {
  const RefTensor& x = need(n, in, 0);
  return {with_shape(x, ir::flatten_shape(n, opset, x.shape))};
}

std::vector<RefTensor> op_softmax(const Node& n, int64_t opset, const std::vector<const RefTensor*>& in) {
  const RefTensor& x = need(n, in, 0);
  if (x.dtype != DType::kF32) ir::throw_unsupported(n, "only float32 input is supported");
  const int64_t r = static_cast<int64_t>(x.shape.size());
  const int64_t axis = ir::softmax_axis(n, opset, r);
  int64_t outer = 1, len = 1, inner = 1;
  if (opset < 13) {
    for (int64_t k = 0; k < axis; ++k) outer *= x.shape[k];
    len = x.size() / outer;
  } else {
    for (int64_t k = 0; k < axis; ++k) outer *= x.shape[k];
    len = x.shape[axis];
    for (int64_t k = axis + 1; k < r; ++k) inner *= x.shape[k];
  }
  RefTensor y = make_f32(x.shape);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in_ = 0; in_ < inner; ++in_) {
      auto at = [&](int64_t j) { return (o * len + j) * inner + in_; };
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j < len; ++j) m = std::max(m, x.f[at(j)]);
      float s = 0;
      for (int64_t j = 0; j < len; ++j) {
        y.f[at(j)] = std::exp(x.f[at(j)] - m);
        s += y.f[at(j)];
      }
      for (int64_t j = 0; j < len; ++j) y.f[at(j)] /= s;
    }
  return {std::move(y)};
}

std::vector<RefTensor> op_concat(const Node& n, int64_t opset, const std::vector<const RefTensor*>& in) {
  if (in.empty()) ir::throw_unsupported(n, "no inputs");
  const RefTensor& first = need(n, in, 0);
  const int64_t r = static_cast<int64_t>(first.shape.size());
  std::vector<std::vector<int64_t>> shapes;
  for (size_t k = 0; k < in.size(); ++k) {
    const RefTensor& t = need(n, in, k);
    if (t.dtype != first.dtype)
      ir::throw_unsupported(n, fmt::format("input {} has type {}, input 0 {}", k, ir::to_string(t.dtype),
                                           ir::to_string(first.dtype)));
    shapes.push_back(t.shape);
  }
  int64_t axis = 0;
  const std::vector<int64_t> os = ir::concat_shape(n, opset, shapes, &axis);
  RefTensor y = first.dtype == DType::kF32 ? make_f32(os) : make_int(first.dtype, os);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= os[d];
  for (int64_t d = axis + 1; d < r; ++d) inner *= os[d];
  int64_t offset = 0;
  for (const RefTensor* t : in) {
    const int64_t chunk = t->shape[axis] * inner;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < chunk; ++k) {
        const int64_t dst = o * os[axis] * inner + offset + k, src = o * chunk + k;
        if (first.dtype == DType::kF32) y.f[dst] = t->f[src];
        else y.i[dst] = t->i[src];
      }
    offset += chunk;
  }
  return {std::move(y)};
}

std::vector<RefTensor> op_batchnorm(const Node& n, const std::vector<const RefTensor*>& in) {
  const RefTensor& x = need(n, in, 0);
  if (x.dtype != DType::kF32 || x.shape.size() < 2) ir::throw_unsupported(n, "input must be float32 of rank >= 2");
  const auto scale = as_float(need(n, in, 1)), bias = as_float(need(n, in, 2));
  const auto mean = as_float(need(n, in, 3)), var = as_float(need(n, in, 4));
  const float eps = ir::attr_float(n, "epsilon", 1e-5f);
  const int64_t C = x.shape[1];
  for (const auto* v : {&scale, &bias, &mean, &var})
    if (static_cast<int64_t>(v->size()) != C)
      ir::throw_unsupported(n, fmt::format("parameter has {} elements, expected {} channels", v->size(), C));
  if (!std::isfinite(eps) || eps < 0.0f) ir::throw_unsupported(n, fmt::format("epsilon {} must be finite and >= 0", eps));
  for (int64_t c = 0; c < C; ++c)
    if (!(var[c] + eps > 0.0f))
      ir::throw_unsupported(n, fmt::format("variance + epsilon of channel {} is {} + {}, not positive", c, var[c], eps));
  int64_t inner = 1;
  for (size_t k = 2; k < x.shape.size(); ++k) inner *= x.shape[k];
  RefTensor y = make_f32(x.shape);
  for (int64_t i = 0; i < x.size(); ++i) {
    const int64_t c = (i / inner) % C;
    y.f[i] = (x.f[i] - mean[c]) / std::sqrt(var[c] + eps) * scale[c] + bias[c];
  }
  return {std::move(y)};
}

std::vector<RefTensor> op_clip(const Node& n, int64_t opset, const std::vector<const RefTensor*>& in) {
  const RefTensor& x = need(n, in, 0);
  if (x.dtype != DType::kF32) {
    // Integer Clip (opset >= 12): bounds are inputs of the input's type, defaults its range.
    if (opset < 12) ir::throw_unsupported(n, fmt::format("integer input needs opset 12 (model opset {})", opset));
    const auto range = int_range(n, x.dtype == DType::kI64 ? DType::kI32 : x.dtype);
    int64_t lo = x.dtype == DType::kI64 ? std::numeric_limits<int64_t>::min() : range.first;
    int64_t hi = x.dtype == DType::kI64 ? std::numeric_limits<int64_t>::max() : range.second;
    for (size_t k : {size_t{1}, size_t{2}}) {
      const RefTensor* t = opt(in, k);
      if (t == nullptr) continue;
      if (t->dtype != x.dtype)
        ir::throw_unsupported(n, fmt::format("bound {} has type {}, the input {}", k, ir::to_string(t->dtype),
                                             ir::to_string(x.dtype)));
      (k == 1 ? lo : hi) = scalar_i(n, t, k == 1 ? "min" : "max");
    }
    RefTensor y = x;
    for (int64_t& v : y.i) v = std::min(std::max(v, lo), hi);
    return {std::move(y)};
  }
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  if (opset < 11) {
    lo = ir::attr_float(n, "min", lo);
    hi = ir::attr_float(n, "max", hi);
  } else {
    if (const RefTensor* t = opt(in, 1)) lo = scalar_f(n, *t, "min");
    if (const RefTensor* t = opt(in, 2)) hi = scalar_f(n, *t, "max");
  }
  RefTensor y = x;
  for (float& v : y.f) v = std::min(std::max(v, lo), hi);
  return {std::move(y)};
}

std::vector<RefTensor> op_shape(const Node& n, int64_t opset, const std::vector<const RefTensor*>& in) {
  const RefTensor& x = need(n, in, 0);
  const auto [start, end] = ir::shape_range(n, opset, static_cast<int64_t>(x.shape.size()));
  RefTensor y = make_int(DType::kI64, {end - start});
  for (int64_t k = start; k < end; ++k) y.i[k - start] = x.shape[k];
  return {std::move(y)};
}

std::vector<RefTensor> op_gather(const Node& n, int64_t opset, const std::vector<const RefTensor*>& in) {
  const RefTensor& x = need(n, in, 0);
  const RefTensor& idx = need(n, in, 1);
  if (idx.dtype != DType::kI64 && idx.dtype != DType::kI32) ir::throw_unsupported(n, "indices must be int32 or int64");
  const int64_t r = static_cast<int64_t>(x.shape.size());
  const std::vector<int64_t> os = ir::gather_shape(n, opset, x.shape, idx.shape);
  const int64_t axis = ir::onnx_axis(n, opset, "axis", ir::attr_int(n, "axis", 0), r);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape[d];
  for (int64_t d = axis + 1; d < r; ++d) inner *= x.shape[d];
  const int64_t dim = x.shape[axis];
  RefTensor y = x.dtype == DType::kF32 ? make_f32(os) : make_int(x.dtype, os);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < idx.size(); ++j) {
      int64_t k = idx.i[j];
      if (k < 0) k += dim;
      if (k < 0 || k >= dim) ir::throw_unsupported(n, fmt::format("index {} out of range for dimension {}", idx.i[j], dim));
      for (int64_t q = 0; q < inner; ++q) {
        const int64_t dst = (o * idx.size() + j) * inner + q, src = (o * dim + k) * inner + q;
        if (x.dtype == DType::kF32) y.f[dst] = x.f[src];
        else y.i[dst] = x.i[src];
      }
    }
  return {std::move(y)};
}

/// The axes of Squeeze / Unsqueeze at `opset` (attribute before 13, input 1 from 13).
std::optional<std::vector<int64_t>> axes_of(const Node& n, int64_t opset, const std::vector<const RefTensor*>& in) {
  const RefTensor* t = opset >= 13 ? opt(in, 1) : nullptr;
  if (t != nullptr && t->dtype != DType::kI64) ir::throw_unsupported(n, "axes input must be int64");
  if (t != nullptr && t->shape.size() != 1)
    ir::throw_unsupported(n, fmt::format("axes input has shape {}, expected a 1-D tensor", ir::shape_string(t->shape)));
  return ir::squeeze_axes(n, opset, t ? &t->i : nullptr);
}

std::vector<RefTensor> op_unsqueeze(const Node& n, int64_t opset, const std::vector<const RefTensor*>& in) {
  const RefTensor& x = need(n, in, 0);
  return {with_shape(x, ir::unsqueeze_shape(n, opset, x.shape, axes_of(n, opset, in)))};
}

std::vector<RefTensor> op_squeeze(const Node& n, int64_t opset, const std::vector<const RefTensor*>& in) {
  const RefTensor& x = need(n, in, 0);
  return {with_shape(x, ir::squeeze_shape(n, opset, x.shape, axes_of(n, opset, in)))};
}

}  // namespace

RefTensor RefTensor::from_const(const ir::Graph& g, int value) {
  const ir::Value& v = g.values.at(value);
  RefTensor t;
  t.dtype = v.dtype;
  t.shape = v.shape;
  if (v.dtype == DType::kF32) t.f = g.const_f32(value);
  else t.i = g.const_i64(value);
  return t;
}

std::vector<uint8_t> RefTensor::to_bytes() const {
  switch (dtype) {
    case DType::kF32: return ir::to_bytes(f);
    case DType::kI64: return ir::to_bytes(i);
    case DType::kI32: {
      std::vector<int32_t> v(i.begin(), i.end());
      return ir::to_bytes(v);
    }
    case DType::kI8:
    case DType::kU8: {
      std::vector<uint8_t> v(i.size());
      for (size_t k = 0; k < i.size(); ++k) v[k] = static_cast<uint8_t>(i[k]);
      return v;
    }
  }
  return {};
}

std::vector<RefTensor> eval_node(const Node& n, int64_t opset, const std::vector<const RefTensor*>& in) {
  if (n.is_tessel()) ir::throw_unsupported(n, "tessel operators are not evaluated by the reference interpreter");
  const std::string& op = n.op;
  if (op == "Conv") return op_conv(n, in);
  if (op == "QLinearConv") return op_qlinearconv(n, in);
  if (op == "MatMul") return op_matmul(n, in);
  if (op == "QLinearMatMul") return op_qlinearmatmul(n, in);
  if (op == "Gemm") return op_gemm(n, in);
  if (op == "Add") return op_binary(n, in, [](auto a, auto b) { return a + b; });
  if (op == "Mul") return op_binary(n, in, [](auto a, auto b) { return a * b; });
  if (op == "QLinearAdd") return op_qlinearadd(n, in);
  if (op == "Relu") {
    RefTensor y = need(n, in, 0);
    if (y.dtype != DType::kF32) ir::throw_unsupported(n, "only float32 input is supported");
    for (float& v : y.f) v = std::max(v, 0.0f);
    return {std::move(y)};
  }
  if (op == "Clip") return op_clip(n, opset, in);
  if (op == "MaxPool") return op_maxpool(n, in);
  if (op == "AveragePool") return op_avgpool(n, in);
  if (op == "GlobalAveragePool") return op_global_avgpool(n, in);
  if (op == "QLinearGlobalAveragePool") return op_qlinear_global_avgpool(n, in);
  if (op == "QuantizeLinear") return op_quantize(n, opset, in);
  if (op == "DequantizeLinear") return op_dequantize(n, opset, in);
  if (op == "Reshape") return op_reshape(n, opset, in);
  if (op == "Flatten") return op_flatten(n, opset, in);
  if (op == "Softmax") return op_softmax(n, opset, in);
  if (op == "Concat") return op_concat(n, opset, in);
  if (op == "BatchNormalization") return op_batchnorm(n, in);
  if (op == "Identity") return {need(n, in, 0)};
  if (op == "Shape") return op_shape(n, opset, in);
  if (op == "Gather") return op_gather(n, opset, in);
  if (op == "Unsqueeze") return op_unsqueeze(n, opset, in);
  if (op == "Squeeze") return op_squeeze(n, opset, in);
  ir::throw_unsupported(n, "operator not supported by the reference interpreter");
}

std::vector<RefTensor> run_graph(const ir::Graph& g, const std::vector<RefTensor>& inputs, const Observer& observer) {
  if (inputs.size() != g.inputs.size())
    throw_user_error("graph '{}' has {} inputs, {} given", g.name, g.inputs.size(), inputs.size());
  std::vector<RefTensor> vals(g.values.size());
  std::vector<char> ready(g.values.size(), 0);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const ir::Value& v = g.values[g.inputs[k]];
    if (inputs[k].shape != v.shape || inputs[k].dtype != v.dtype)
      throw_user_error("input '{}' has type {}{}, the graph expects {}{}", v.name, ir::to_string(inputs[k].dtype),
                       ir::shape_string(inputs[k].shape), ir::to_string(v.dtype), ir::shape_string(v.shape));
    vals[g.inputs[k]] = inputs[k];
    ready[g.inputs[k]] = 1;
  }
  // Last use of each value, to free intermediates early.
  std::vector<int> last_use(g.values.size(), -1);
  for (size_t k = 0; k < g.nodes.size(); ++k)
    for (int in : g.nodes[k].inputs)
      if (in >= 0) last_use[in] = static_cast<int>(k);
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& n = g.nodes[k];
    std::vector<const RefTensor*> ins;
    for (int in : n.inputs) {
      if (in < 0) {
        ins.push_back(nullptr);
        continue;
      }
      if (!ready[in]) {
        if (!g.values[in].is_const)
          throw InternalError(fmt::format("{}: input '{}' is not computed yet", ir::describe(n), g.values[in].name));
        vals[in] = RefTensor::from_const(g, in);
        ready[in] = 1;
      }
      ins.push_back(&vals[in]);
    }
    auto outs = eval_node(n, g.opset, ins);
    if (outs.size() < n.outputs.size())
      throw InternalError(fmt::format("{}: produced {} outputs, expected {}", ir::describe(n), outs.size(), n.outputs.size()));
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      vals[n.outputs[o]] = std::move(outs[o]);
      ready[n.outputs[o]] = 1;
      if (observer) observer(n.outputs[o], vals[n.outputs[o]]);
    }
    for (int in : n.inputs)
      if (in >= 0 && last_use[in] == static_cast<int>(k) && !g.is_output(in)) {
        vals[in] = RefTensor();
        ready[in] = g.values[in].is_const ? 0 : 2;  // constants can be re-read
      }
  }
  std::vector<RefTensor> out;
  for (int o : g.outputs) {
    if (!ready[o] && g.values[o].is_const) vals[o] = RefTensor::from_const(g, o);
    out.push_back(vals[o]);
  }
  return out;
}

}  // namespace tessel::compiler::reference
