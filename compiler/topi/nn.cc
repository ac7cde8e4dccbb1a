#include "compiler/topi/nn.h"

#include <fmt/format.h>

#include <climits>

#include "support/error.h"

namespace tessel::topi {

using te::compute;
using te::IterVar;
using te::reduce_axis;
using tir::DataType;
using tir::Var;

std::vector<int64_t> const_shape(const Tensor& t) {
  std::vector<int64_t> s;
  for (const Expr& e : t.shape()) {
    const int64_t* v = tir::as_const_int(e);
    if (!v) throw_internal_error("tensor {} has a non-constant extent", t.name());
    s.push_back(*v);
  }
  return s;
}

namespace {

void check_tensor(const std::string& op, const Tensor& t, const char* role, DataType dtype, size_t rank) {
  if (t.dtype() != dtype) {
    throw_user_error("{}: {} {} has type {}, expected {}", op, role, t.name(), t.dtype().str(), dtype.str());
  }
  if (t.ndim() != rank) throw_user_error("{}: {} {} has rank {}, expected {}", op, role, t.name(), t.ndim(), rank);
}

void check_conv_attrs(const std::string& op, const Conv2dAttrs& a) {
  if (a.stride_h < 1 || a.stride_w < 1) throw_user_error("{}: stride ({}, {}) must be >= 1", op, a.stride_h, a.stride_w);
  if (a.dilation_h < 1 || a.dilation_w < 1) {
    throw_user_error("{}: dilation ({}, {}) must be >= 1", op, a.dilation_h, a.dilation_w);
  }
  if (a.pad_top < 0 || a.pad_left < 0 || a.pad_bottom < 0 || a.pad_right < 0) {
    throw_user_error("{}: pads ({}, {}, {}, {}) must be >= 0", op, a.pad_top, a.pad_left, a.pad_bottom, a.pad_right);
  }
  if (a.groups < 1) throw_user_error("{}: groups {} must be >= 1", op, a.groups);
}

void check_zero_point(const std::string& op, const char* what, int64_t zp) {
  if (zp < -128 || zp > 127) throw_user_error("{}: {} {} is outside [-128, 127]", op, what, zp);
}

Expr i32(const Expr& e) { return tir::cast(DataType::int32(), e); }

}  // namespace

int64_t conv_output_size(const std::string& op, int64_t in, int64_t pad_begin, int64_t pad_end, int64_t kernel,
                         int64_t stride, int64_t dilation) {
  const int64_t span = dilation * (kernel - 1) + 1;
  const int64_t padded = in + pad_begin + pad_end;
  if (kernel < 1 || span > padded) {
    throw_user_error("{}: kernel extent {} (dilated {}) does not fit the padded input extent {}", op, kernel, span,
                     padded);
  }
  return (padded - span) / stride + 1;
}

Tensor pad_spatial(const Tensor& x, int64_t pad_top, int64_t pad_left, int64_t pad_bottom, int64_t pad_right,
                   int64_t pad_value, const std::string& name) {
  if (x.ndim() < 4) throw_user_error("pad {}: input {} has rank {}, expected at least 4", name, x.name(), x.ndim());
  if (pad_top < 0 || pad_left < 0 || pad_bottom < 0 || pad_right < 0) {
    throw_user_error("pad {}: pads ({}, {}, {}, {}) must be >= 0", name, pad_top, pad_left, pad_bottom, pad_right);
  }
  if (pad_top == 0 && pad_left == 0 && pad_bottom == 0 && pad_right == 0) return x;
  std::vector<int64_t> s = const_shape(x);
  const int64_t h = s[2], w = s[3];
  std::vector<Expr> shape;
  for (size_t d = 0; d < s.size(); ++d) {
    int64_t e = s[d];
    if (d == 2) e += pad_top + pad_bottom;
    if (d == 3) e += pad_left + pad_right;
    shape.push_back(Expr(e));
  }
  const Expr pv = tir::make_const(x.dtype(), pad_value);
  return compute(
      shape,
      [&](const std::vector<Var>& i) {
        std::vector<Expr> idx(i.begin(), i.end());
        idx[2] = i[2] - Expr(pad_top);
        idx[3] = i[3] - Expr(pad_left);
        Expr cond = tir::logical_and(
            tir::logical_and(i[2] >= Expr(pad_top), i[2] < Expr(pad_top + h)),
            tir::logical_and(i[3] >= Expr(pad_left), i[3] < Expr(pad_left + w)));
        return tir::select(cond, x(idx), pv);
      },
      name);
}

Tensor conv2d_nchw(const Tensor& x, const Tensor& w, const Conv2dAttrs& a, int32_t in_zero_point,
                   const std::string& name) {
  const std::string op = "conv2d " + name;
  check_tensor(op, x, "input", DataType::int8(), 4);
  check_tensor(op, w, "weights", DataType::int8(), 4);
  check_conv_attrs(op, a);
  check_zero_point(op, "in_zero_point", in_zero_point);
  const std::vector<int64_t> xs = const_shape(x), ws = const_shape(w);
  const int64_t n = xs[0], ic = xs[1], oc = ws[0], kh = ws[2], kw = ws[3];
  if (ic % a.groups != 0 || oc % a.groups != 0) {
    throw_user_error("{}: groups {} does not divide the input channels {} and output channels {}", op, a.groups, ic,
                     oc);
  }
  const int64_t icg = ic / a.groups, ocg = oc / a.groups;
  if (ws[1] != icg) {
    throw_user_error("{}: weights {} have {} input channels per group, expected {} ({} / groups {})", op, w.name(),
                     ws[1], icg, ic, a.groups);
  }
  const int64_t oh = conv_output_size(op, xs[2], a.pad_top, a.pad_bottom, kh, a.stride_h, a.dilation_h);
  const int64_t ow = conv_output_size(op, xs[3], a.pad_left, a.pad_right, kw, a.stride_w, a.dilation_w);
  const Tensor xp = pad_spatial(x, a.pad_top, a.pad_left, a.pad_bottom, a.pad_right, in_zero_point, name + ".pad");
  IterVar rc = reduce_axis(icg, "rc"), ry = reduce_axis(kh, "ry"), rx = reduce_axis(kw, "rx");
  return compute(
      {Expr(n), Expr(oc), Expr(oh), Expr(ow)},
      [&](const std::vector<Var>& i) {
        Expr chan = a.groups == 1 ? Expr(rc.var()) : tir::floordiv(i[1], Expr(ocg)) * Expr(icg) + rc.var();
        Expr xv = i32(xp(i[0], chan, i[2] * Expr(a.stride_h) + ry.var() * Expr(a.dilation_h),
                         i[3] * Expr(a.stride_w) + rx.var() * Expr(a.dilation_w)));
        if (in_zero_point != 0) xv = xv - Expr(in_zero_point);
        return te::sum(xv * i32(w(i[1], rc, ry, rx)), {rc, ry, rx});
      },
      name);
}

Tensor depthwise_conv2d_nchw(const Tensor& x, const Tensor& w, Conv2dAttrs attrs, int32_t in_zero_point,
                             const std::string& name) {
  if (x.ndim() != 4) throw_user_error("depthwise_conv2d {}: input {} has rank {}, expected 4", name, x.name(), x.ndim());
  attrs.groups = const_shape(x)[1];
  return conv2d_nchw(x, w, attrs, in_zero_point, name);
}

Tensor conv2d_nchwnc(const Tensor& x, const Tensor& w, const Conv2dAttrs& a, const std::string& name) {
  const std::string op = "conv2d_nchwnc " + name;
  check_tensor(op, x, "input", DataType::int8(), 6);
  check_tensor(op, w, "weights", DataType::int8(), 6);
  check_conv_attrs(op, a);
  const std::vector<int64_t> xs = const_shape(x), ws = const_shape(w);
  const int64_t nb = xs[0], icb = xs[1], bn = xs[4], bi = xs[5];
  const int64_t ocb = ws[0], kh = ws[2], kw = ws[3], bo = ws[4];
  if (ws[5] != bi) {
    throw_user_error("{}: weights {} have input block {}, the input {} has {}", op, w.name(), ws[5], x.name(), bi);
  }
  if (icb % a.groups != 0 || ocb % a.groups != 0) {
    throw_user_error("{}: groups {} does not divide the input channel blocks {} and output channel blocks {}", op,
                     a.groups, icb, ocb);
  }
  const int64_t icbg = icb / a.groups, ocbg = ocb / a.groups;
  if (ws[1] != icbg) {
    throw_user_error("{}: weights {} have {} input channel blocks per group, expected {}", op, w.name(), ws[1], icbg);
  }
  const int64_t oh = conv_output_size(op, xs[2], a.pad_top, a.pad_bottom, kh, a.stride_h, a.dilation_h);
  const int64_t ow = conv_output_size(op, xs[3], a.pad_left, a.pad_right, kw, a.stride_w, a.dilation_w);
  const Tensor xp = pad_spatial(x, a.pad_top, a.pad_left, a.pad_bottom, a.pad_right, 0, name + ".pad");
  IterVar rc = reduce_axis(icbg, "rc"), ry = reduce_axis(kh, "ry"), rx = reduce_axis(kw, "rx"),
          ri = reduce_axis(bi, "ri");
  return compute(
      {Expr(nb), Expr(ocb), Expr(oh), Expr(ow), Expr(bn), Expr(bo)},
      [&](const std::vector<Var>& i) {
        Expr chan = a.groups == 1 ? Expr(rc.var()) : tir::floordiv(i[1], Expr(ocbg)) * Expr(icbg) + rc.var();
        Expr xv = i32(xp(i[0], chan, i[2] * Expr(a.stride_h) + ry.var() * Expr(a.dilation_h),
                         i[3] * Expr(a.stride_w) + rx.var() * Expr(a.dilation_w), i[4], ri));
        return te::sum(xv * i32(w(i[1], rc, ry, rx, i[5], ri)), {rc, ry, rx, ri});
      },
      name);
}

Tensor dense(const Tensor& x, const Tensor& w, int32_t in_zero_point, const std::string& name) {
  const std::string op = "dense " + name;
  check_tensor(op, x, "input", DataType::int8(), 2);
  check_tensor(op, w, "weights", DataType::int8(), 2);
  check_zero_point(op, "in_zero_point", in_zero_point);
  const std::vector<int64_t> xs = const_shape(x), ws = const_shape(w);
  if (xs[1] != ws[1]) throw_user_error("{}: input {} has K = {}, weights {} have {}", op, x.name(), xs[1], w.name(), ws[1]);
  IterVar rk = reduce_axis(xs[1], "rk");
  return compute(
      {Expr(xs[0]), Expr(ws[0])},
      [&](const std::vector<Var>& i) {
        Expr xv = i32(x(i[0], rk));
        if (in_zero_point != 0) xv = xv - Expr(in_zero_point);
        return te::sum(xv * i32(w(i[1], rk)), {rk});
      },
      name);
}

Tensor dense_packed(const Tensor& x, const Tensor& w, const std::string& name) {
  const std::string op = "dense_packed " + name;
  check_tensor(op, x, "input", DataType::int8(), 4);
  check_tensor(op, w, "weights", DataType::int8(), 4);
  const std::vector<int64_t> xs = const_shape(x), ws = const_shape(w);
  if (xs[1] != ws[1] || xs[3] != ws[3]) {
    throw_user_error("{}: input {} has K blocks {} x {}, weights {} have {} x {}", op, x.name(), xs[1], xs[3], w.name(),
                     ws[1], ws[3]);
  }
  IterVar rk = reduce_axis(xs[1], "rk"), ri = reduce_axis(xs[3], "ri");
  return compute(
      {Expr(xs[0]), Expr(ws[0]), Expr(xs[2]), Expr(ws[2])},
      [&](const std::vector<Var>& i) {
        return te::sum(i32(x(i[0], rk, i[2], ri)) * i32(w(i[1], rk, i[3], ri)), {rk, ri});
      },
      name);
}

int64_t channel_count(const Tensor& t, bool packed) {
  const std::vector<int64_t> s = const_shape(t);
  if (s.size() < 2) throw_user_error("tensor {} of rank {} has no channel dimension", t.name(), s.size());
  if (s.size() == 6 || packed) return s[1] * s.back();
  return s[1];
}

Expr channel_index(const std::vector<Var>& idx, const Tensor& t, bool packed) {
  const std::vector<int64_t> s = const_shape(t);
  if (s.size() == 6 || packed) return idx[1] * Expr(s.back()) + idx.back();
  return idx[1];
}

Tensor bias_add(const Tensor& acc, const Tensor& bias, bool packed, const std::string& name) {
  const std::string op = "bias_add " + name;
  check_tensor(op, acc, "accumulators", DataType::int32(), acc.ndim());
  check_tensor(op, bias, "bias", DataType::int32(), 1);
  const int64_t c = channel_count(acc, packed);
  if (const_shape(bias)[0] != c) {
    throw_user_error("{}: bias {} has {} elements, expected {} (channels)", op, bias.name(), const_shape(bias)[0], c);
  }
  return compute(
      acc.shape(),
      [&](const std::vector<Var>& i) {
        return acc(std::vector<Expr>(i.begin(), i.end())) + bias(channel_index(i, acc, packed));
      },
      name);
}

namespace {

struct PoolGeom {
  int64_t n, c, h, w, oh, ow;
};

PoolGeom check_pool(const std::string& op, const Tensor& x, const Pool2dAttrs& a) {
  check_tensor(op, x, "input", DataType::int8(), 4);
  if (a.kernel_h < 1 || a.kernel_w < 1) throw_user_error("{}: kernel ({}, {}) must be >= 1", op, a.kernel_h, a.kernel_w);
  if (a.stride_h < 1 || a.stride_w < 1) throw_user_error("{}: stride ({}, {}) must be >= 1", op, a.stride_h, a.stride_w);
  const int64_t pads[4] = {a.pad_top, a.pad_left, a.pad_bottom, a.pad_right};
  for (int64_t p : pads) {
    if (p < 0) throw_user_error("{}: pad {} must be >= 0", op, p);
  }
  if (a.pad_top >= a.kernel_h || a.pad_bottom >= a.kernel_h || a.pad_left >= a.kernel_w ||
      a.pad_right >= a.kernel_w) {
    throw_user_error("{}: pads ({}, {}, {}, {}) must be smaller than the kernel ({}, {})", op, a.pad_top, a.pad_left,
                     a.pad_bottom, a.pad_right, a.kernel_h, a.kernel_w);
  }
  const std::vector<int64_t> s = const_shape(x);
  PoolGeom g{s[0], s[1], s[2], s[3], 0, 0};
  g.oh = conv_output_size(op, g.h, a.pad_top, a.pad_bottom, a.kernel_h, a.stride_h, 1);
  g.ow = conv_output_size(op, g.w, a.pad_left, a.pad_right, a.kernel_w, a.stride_w, 1);
  return g;
}

}  // namespace

Tensor max_pool2d(const Tensor& x, const Pool2dAttrs& a, const std::string& name) {
  const std::string op = "max_pool2d " + name;
  const PoolGeom g = check_pool(op, x, a);
  const Tensor xp = pad_spatial(x, a.pad_top, a.pad_left, a.pad_bottom, a.pad_right, -128, name + ".pad");
  IterVar ry = reduce_axis(a.kernel_h, "ry"), rx = reduce_axis(a.kernel_w, "rx");
  return compute(
      {Expr(g.n), Expr(g.c), Expr(g.oh), Expr(g.ow)},
      [&](const std::vector<Var>& i) {
        return te::max(xp(i[0], i[1], i[2] * Expr(a.stride_h) + ry.var(), i[3] * Expr(a.stride_w) + rx.var()),
                       {ry, rx});
      },
      name);
}

Tensor avg_pool2d(const Tensor& x, const Pool2dAttrs& a, int32_t in_zero_point, int32_t out_zero_point,
                  const std::string& name) {
  const std::string op = "avg_pool2d " + name;
  const PoolGeom g = check_pool(op, x, a);
  check_zero_point(op, "in_zero_point", in_zero_point);
  check_zero_point(op, "out_zero_point", out_zero_point);
  const Tensor xp = pad_spatial(x, a.pad_top, a.pad_left, a.pad_bottom, a.pad_right, 0, name + ".pad");
  IterVar ry = reduce_axis(a.kernel_h, "ry"), rx = reduce_axis(a.kernel_w, "rx");
  const Tensor s = compute(
      {Expr(g.n), Expr(g.c), Expr(g.oh), Expr(g.ow)},
      [&](const std::vector<Var>& i) {
        return te::sum(i32(xp(i[0], i[1], i[2] * Expr(a.stride_h) + ry.var(), i[3] * Expr(a.stride_w) + rx.var())),
                       {ry, rx});
      },
      name + ".sum");
  return compute(
      {Expr(g.n), Expr(g.c), Expr(g.oh), Expr(g.ow)},
      [&](const std::vector<Var>& i) {
        // Real rows [y0, y1) and columns [x0, x1) of the window.
        Expr hs = i[2] * Expr(a.stride_h) - Expr(a.pad_top), ws = i[3] * Expr(a.stride_w) - Expr(a.pad_left);
        Expr y0 = tir::max(hs, Expr(0)), y1 = tir::min(hs + Expr(a.kernel_h), Expr(g.h));
        Expr x0 = tir::max(ws, Expr(0)), x1 = tir::min(ws + Expr(a.kernel_w), Expr(g.w));
        Expr count = (y1 - y0) * (x1 - x0);
        Expr v = s(i[0], i[1], i[2], i[3]);
        if (in_zero_point != 0) v = v - Expr(in_zero_point) * count;
        Expr d = a.count_include_pad ? Expr(a.kernel_h * a.kernel_w) : count;
        Expr q = tir::floordiv(v, d);
        Expr r2 = (v - q * d) * Expr(2);
        Expr rounded = tir::select(r2 > d, q + Expr(1), tir::select(tir::eq(r2, d), q + tir::floormod(q, Expr(2)), q));
        Expr out = tir::min(tir::max(rounded + Expr(out_zero_point), Expr(-128)), Expr(127));
        return tir::cast(DataType::int8(), out);
      },
      name);
}

Tensor add(const Tensor& a, const Tensor& b, const std::string& name) {
  if (a.dtype() != b.dtype() || const_shape(a) != const_shape(b)) {
    throw_user_error("add {}: operands {} ({}) and {} ({}) differ in shape or type", name, a.name(), a.dtype().str(),
                     b.name(), b.dtype().str());
  }
  return compute(
      a.shape(),
      [&](const std::vector<Var>& i) {
        std::vector<Expr> idx(i.begin(), i.end());
        return a(idx) + b(idx);
      },
      name);
}

Tensor relu(const Tensor& x, const std::string& name) {
  return compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        return tir::max(x(std::vector<Expr>(i.begin(), i.end())), tir::make_const(x.dtype(), 0));
      },
      name);
}

Tensor clip(const Tensor& x, int64_t lo, int64_t hi, const std::string& name) {
  const DataType t = x.dtype();
  if (!t.is_int() || t.bits > 32) throw_user_error("clip {}: input {} has type {}, expected a signed integer of <= 32 bits", name, x.name(), t.str());
  const int64_t tmin = -(int64_t{1} << (t.bits - 1)), tmax = (int64_t{1} << (t.bits - 1)) - 1;
  if (lo > hi || lo < tmin || hi > tmax) {
    throw_user_error("clip {}: range [{}, {}] must satisfy {} <= lo <= hi <= {}", name, lo, hi, tmin, tmax);
  }
  return compute(
      x.shape(),
      [&](const std::vector<Var>& i) {
        return tir::min(tir::max(x(std::vector<Expr>(i.begin(), i.end())), tir::make_const(t, lo)),
                        tir::make_const(t, hi));
      },
      name);
}

Tensor cast(const Tensor& x, DataType dtype, const std::string& name) {
  return compute(
      x.shape(), [&](const std::vector<Var>& i) { return tir::cast(dtype, x(std::vector<Expr>(i.begin(), i.end()))); },
      name);
}

}  // namespace tessel::topi
