// compiler/topi compute definitions, lowered with the default schedule and run on the te
// reference interpreter against runtime/cpu's kernels and runtime/qnn.h, bit for bit: conv2d
// NCHW (groups, depthwise, strides, asymmetric pads, dilations) and packed NCHWnc (channel
// counts that are not multiples of the block), dense and packed dense, with bias and the
// requantisation epilogue (per-channel multipliers, clamps, low limbs); max and average pooling;
// relu/clip/add; qadd. Goldens of a small conv2d and dense; error messages.
#include <gtest/gtest.h>

#include "compiler/tir/printer.h"
#include "compiler/topi/nn.h"
#include "compiler/topi/qnn.h"
#include "tests/te/te_test_util.h"
#include "tests/tir/tir_test_util.h"
#include "tests/topi/topi_test_util.h"

namespace tessel::topi {
namespace {

using namespace testing;
using runtime::DType;
using te::placeholder;
using te::testing::user_error_of;
using tir::DataType;

/// Constant extents as a te shape.
std::vector<tir::Expr> S(std::initializer_list<int64_t> l) {
  std::vector<tir::Expr> v;
  for (int64_t x : l) v.push_back(tir::Expr(x));
  return v;
}

struct ConvCase {
  int64_t n, ic, h, w, oc, kh, kw, sh, sw, pt, pl, pb, pr, groups;
  int32_t zp;
  bool clamp;
  size_t limbs;
};

ConvCase random_conv(std::mt19937& rng, bool depthwise) {
  auto r = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  ConvCase c{};
  c.n = r(1, 2);
  c.groups = depthwise ? r(2, 5) : r(1, 3);
  c.ic = depthwise ? c.groups : c.groups * r(1, 4);
  c.oc = depthwise ? c.groups * r(1, 2) : c.groups * r(1, 4);
  c.kh = r(1, 3);
  c.kw = r(1, 3);
  c.sh = r(1, 2);
  c.sw = r(1, 2);
  c.pt = r(0, 2);
  c.pl = r(0, 2);
  c.pb = r(0, 2);
  c.pr = r(0, 2);
  c.h = r(std::max<int64_t>(1, c.kh - c.pt - c.pb), 7);
  c.w = r(std::max<int64_t>(1, c.kw - c.pl - c.pr), 7);
  c.zp = static_cast<int32_t>(r(-6, 6));
  c.clamp = r(0, 1) == 1;
  c.limbs = static_cast<size_t>(r(0, 2) == 2 ? 1 : 0);
  return c;
}

runtime::QConv2dParams qparams(const ConvCase& c, const runtime::Requant& rq) {
  runtime::QConv2dParams p;
  p.n = c.n;
  p.ic = c.ic;
  p.ih = c.h;
  p.iw = c.w;
  p.oc = c.oc;
  p.kh = c.kh;
  p.kw = c.kw;
  p.stride_h = c.sh;
  p.stride_w = c.sw;
  p.pad_top = c.pt;
  p.pad_left = c.pl;
  p.pad_bottom = c.pb;
  p.pad_right = c.pr;
  p.groups = c.groups;
  p.in_zero_point = c.zp;
  p.rq = rq;
  return p;
}

Conv2dAttrs attrs_of(const ConvCase& c) {
  Conv2dAttrs a;
  a.stride_h = c.sh;
  a.stride_w = c.sw;
  a.pad_top = c.pt;
  a.pad_left = c.pl;
  a.pad_bottom = c.pb;
  a.pad_right = c.pr;
  a.groups = c.groups;
  return a;
}

/// The quantised conv through topi (conv2d_nchw + bias_add + requantize) against
/// qconv2d_reference and the optimised cpu::qconv2d.
void check_qconv_nchw(std::mt19937& rng, const ConvCase& c) {
  const runtime::Requant rq = random_requant(rng, c.oc, c.clamp, c.limbs);
  const runtime::QConv2dParams p = qparams(c, rq);
  const Data xv = random_data(rng, static_cast<size_t>(c.n * c.ic * c.h * c.w), -128, 127);
  const Data wv = random_data(rng, static_cast<size_t>(c.oc * (c.ic / c.groups) * c.kh * c.kw), -128, 127);
  const Data bv = random_data(rng, static_cast<size_t>(c.oc), -5000, 5000);
  std::vector<int8_t> want(static_cast<size_t>(c.n * c.oc * p.oh() * p.ow())), fast(want.size());
  const auto x8 = to<int8_t>(xv), w8 = to<int8_t>(wv);
  const auto b32 = to<int32_t>(bv);
  runtime::qconv2d_reference(p, x8.data(), w8.data(), b32.data(), want.data());
  runtime::cpu::qconv2d(p, x8.data(), w8.data(), b32.data(), fast.data());
  ASSERT_EQ(want, fast);

  te::Tensor x = placeholder(S({c.n, c.ic, c.h, c.w}), DataType::int8(), "x");
  te::Tensor w = placeholder(S({c.oc, c.ic / c.groups, c.kh, c.kw}), DataType::int8(), "w");
  te::Tensor b = placeholder(S({c.oc}), DataType::int32(), "bias");
  te::Tensor acc = conv2d_nchw(x, w, attrs_of(c), c.zp);
  RequantOps rqo = requantize(bias_add(acc, b), params_of(rq, c.oc));
  const Data got = run_default(rqo.out, {{x, xv}, {w, wv}, {b, bv}}, rqo.constants);
  EXPECT_EQ(got, from(want)) << "n " << c.n << " ic " << c.ic << " oc " << c.oc << " groups " << c.groups << " k "
                             << c.kh << "x" << c.kw << " s " << c.sh << "," << c.sw;
}

TEST(TopiConv2d, NchwMatchesQconv2dOnRandomShapes) {
  std::mt19937 rng(7);
  for (int t = 0; t < 24; ++t) check_qconv_nchw(rng, random_conv(rng, false));
}

TEST(TopiConv2d, DepthwiseMatchesQconv2d) {
  std::mt19937 rng(11);
  for (int t = 0; t < 8; ++t) {
    ConvCase c = random_conv(rng, true);
    check_qconv_nchw(rng, c);
  }
  // depthwise_conv2d_nchw sets groups to the input channels
  te::Tensor x = placeholder(S({1, 3, 4, 4}), DataType::int8(), "x");
  te::Tensor w = placeholder(S({3, 1, 3, 3}), DataType::int8(), "w");
  te::Tensor y = depthwise_conv2d_nchw(x, w, {});
  EXPECT_EQ(const_shape(y), (std::vector<int64_t>{1, 3, 2, 2}));
}

/// Dilated convolutions: the int32 accumulators against runtime/cpu conv2d_f32 (exact: every
/// partial sum is an integer below 2^24).
TEST(TopiConv2d, DilationMatchesConv2dF32) {
  std::mt19937 rng(5);
  for (int t = 0; t < 10; ++t) {
    ConvCase c = random_conv(rng, false);
    Conv2dAttrs a = attrs_of(c);
    a.dilation_h = std::uniform_int_distribution<int64_t>(1, 3)(rng);
    a.dilation_w = std::uniform_int_distribution<int64_t>(1, 3)(rng);
    c.h = std::max<int64_t>(c.h, a.dilation_h * (c.kh - 1) + 1);
    c.w = std::max<int64_t>(c.w, a.dilation_w * (c.kw - 1) + 1);
    const Data xv = random_data(rng, static_cast<size_t>(c.n * c.ic * c.h * c.w), -128, 127);
    const Data wv = random_data(rng, static_cast<size_t>(c.oc * (c.ic / c.groups) * c.kh * c.kw), -128, 127);
    te::Tensor x = placeholder(S({c.n, c.ic, c.h, c.w}), DataType::int8(), "x");
    te::Tensor w = placeholder(S({c.oc, c.ic / c.groups, c.kh, c.kw}), DataType::int8(), "w");
    te::Tensor acc = conv2d_nchw(x, w, a, 0);
    const Data got = run_default(acc, {{x, xv}, {w, wv}});
    const std::vector<int64_t> os = const_shape(acc);
    nlohmann::json attrs = {{"stride", {a.stride_h, a.stride_w}},
                            {"pads", {a.pad_top, a.pad_left, a.pad_bottom, a.pad_right}},
                            {"groups", a.groups},
                            {"dilations", {a.dilation_h, a.dilation_w}}};
    const auto want = run_kernel("conv2d_f32", attrs,
                                 {{desc("x", DType::kF32, {c.n, c.ic, c.h, c.w}), bytes_f32(xv)},
                                  {desc("w", DType::kF32, {c.oc, c.ic / c.groups, c.kh, c.kw}), bytes_f32(wv)}},
                                 desc("y", DType::kF32, os));
    EXPECT_EQ(got, data_f32(want)) << "dilation " << a.dilation_h << "," << a.dilation_w;
  }
}

/// The packed convolution on NCHWnc data (runtime/cpu pack_nchwnc, channel counts padded to the
/// blocks) against qconv2d_reference, unpacked.
TEST(TopiConv2d, PackedNchwncMatchesQconv2d) {
  std::mt19937 rng(3);
  struct Blocks {
    int64_t bn, bi, bo;
  };
  const Blocks blocks[] = {{1, 16, 16}, {2, 8, 4}, {1, 4, 8}};
  for (int t = 0; t < 9; ++t) {
    const Blocks bk = blocks[t % 3];
    ConvCase c = random_conv(rng, false);
    c.zp = 0;
    c.groups = t % 3 == 2 ? 2 : 1;
    auto r = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    if (c.groups == 1) {
      c.ic = r(1, 20);
      c.oc = r(1, 20);
    } else {
      c.ic = c.groups * bk.bi * r(1, 2);
      c.oc = c.groups * bk.bo * r(1, 2);
    }
    const runtime::Requant rq = random_requant(rng, c.oc, c.clamp, c.limbs);
    const runtime::QConv2dParams p = qparams(c, rq);
    const int64_t icg = c.ic / c.groups;
    const Data xv = random_data(rng, static_cast<size_t>(c.n * c.ic * c.h * c.w), -128, 127);
    const Data wv = random_data(rng, static_cast<size_t>(c.oc * icg * c.kh * c.kw), -128, 127);
    const Data bv = random_data(rng, static_cast<size_t>(c.oc), -5000, 5000);
    std::vector<int8_t> want(static_cast<size_t>(c.n * c.oc * p.oh() * p.ow()));
    const auto x8 = to<int8_t>(xv), w8 = to<int8_t>(wv);
    const auto b32 = to<int32_t>(bv);
    runtime::qconv2d_reference(p, x8.data(), w8.data(), b32.data(), want.data());

    auto blocks_of = [](int64_t v, int64_t b) { return (v + b - 1) / b; };
    const int64_t nb = blocks_of(c.n, bk.bn), icb = blocks_of(c.ic, bk.bi), icgb = blocks_of(icg, bk.bi),
                  ocb = blocks_of(c.oc, bk.bo);
    std::vector<int8_t> xp(static_cast<size_t>(nb * bk.bn * icb * bk.bi * c.h * c.w));
    runtime::cpu::pack_nchwnc(x8.data(), c.n, c.ic, c.h, c.w, bk.bn, bk.bi, xp.data());
    std::vector<int8_t> wp(static_cast<size_t>(ocb * bk.bo * icgb * bk.bi * c.kh * c.kw));
    runtime::cpu::pack_nchwnc(w8.data(), c.oc, icg, c.kh, c.kw, bk.bo, bk.bi, wp.data());
    Data bpad(static_cast<size_t>(ocb * bk.bo), 0);
    for (int64_t o = 0; o < c.oc; ++o) bpad[static_cast<size_t>(o)] = bv[static_cast<size_t>(o)];

    te::Tensor x = placeholder(S({nb, icb, c.h, c.w, bk.bn, bk.bi}), DataType::int8(), "x");
    te::Tensor w = placeholder(S({ocb, icgb, c.kh, c.kw, bk.bo, bk.bi}), DataType::int8(), "w");
    te::Tensor b = placeholder(S({ocb * bk.bo}), DataType::int32(), "bias");
    te::Tensor acc = conv2d_nchwnc(x, w, attrs_of(c));
    RequantOps rqo = requantize(bias_add(acc, b), params_of(rq, ocb * bk.bo, c.oc));
    const Data got = run_default(rqo.out, {{x, from(xp)}, {w, from(wp)}, {b, bpad}}, rqo.constants);
    const auto g8 = to<int8_t>(got);
    std::vector<int8_t> unpacked(want.size());
    runtime::cpu::unpack_nchwnc(g8.data(), c.n, c.oc, p.oh(), p.ow(), bk.bn, bk.bo, unpacked.data());
    EXPECT_EQ(unpacked, want) << "case " << t << " ic " << c.ic << " oc " << c.oc << " groups " << c.groups;
  }
}

TEST(TopiDense, MatchesQconv2dAsOneByOne) {
  std::mt19937 rng(13);
  for (int t = 0; t < 6; ++t) {
    auto r = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    const int64_t m = r(1, 4), k = r(1, 40), n = r(1, 20);
    const int32_t zp = static_cast<int32_t>(r(-8, 8));
    const runtime::Requant rq = random_requant(rng, n, t % 2 == 0, static_cast<size_t>(t % 3 == 0));
    runtime::QConv2dParams p;
    p.n = m;
    p.ic = k;
    p.ih = p.iw = 1;
    p.oc = n;
    p.in_zero_point = zp;
    p.rq = rq;
    const Data xv = random_data(rng, static_cast<size_t>(m * k), -128, 127);
    const Data wv = random_data(rng, static_cast<size_t>(n * k), -128, 127);
    const Data bv = random_data(rng, static_cast<size_t>(n), -3000, 3000);
    std::vector<int8_t> want(static_cast<size_t>(m * n));
    const auto x8 = to<int8_t>(xv), w8 = to<int8_t>(wv);
    const auto b32 = to<int32_t>(bv);
    runtime::qconv2d_reference(p, x8.data(), w8.data(), b32.data(), want.data());

    te::Tensor x = placeholder(S({m, k}), DataType::int8(), "x");
    te::Tensor w = placeholder(S({n, k}), DataType::int8(), "w");
    te::Tensor b = placeholder(S({n}), DataType::int32(), "bias");
    RequantOps rqo = requantize(bias_add(dense(x, w, zp), b), params_of(rq, n));
    EXPECT_EQ(run_default(rqo.out, {{x, xv}, {w, wv}, {b, bv}}, rqo.constants), from(want));

    if (zp != 0) continue;
    // packed: [M/b][K/i][b][i] is pack_nchwnc of [M][K][1][1]
    const int64_t bb = 2, bi = 8, bo = 4;
    const int64_t mb = (m + bb - 1) / bb, kb = (k + bi - 1) / bi, nb = (n + bo - 1) / bo;
    std::vector<int8_t> xp(static_cast<size_t>(mb * bb * kb * bi)), wp(static_cast<size_t>(nb * bo * kb * bi));
    runtime::cpu::pack_nchwnc(x8.data(), m, k, 1, 1, bb, bi, xp.data());
    runtime::cpu::pack_nchwnc(w8.data(), n, k, 1, 1, bo, bi, wp.data());
    Data bpad(static_cast<size_t>(nb * bo), 0);
    for (int64_t o = 0; o < n; ++o) bpad[static_cast<size_t>(o)] = bv[static_cast<size_t>(o)];
    te::Tensor xq = placeholder(S({mb, kb, bb, bi}), DataType::int8(), "x");
    te::Tensor wq = placeholder(S({nb, kb, bo, bi}), DataType::int8(), "w");
    te::Tensor bq = placeholder(S({nb * bo}), DataType::int32(), "bias");
    RequantOps pq = requantize(bias_add(dense_packed(xq, wq), bq, true), params_of(rq, nb * bo, n), true);
    const auto g8 = to<int8_t>(run_default(pq.out, {{xq, from(xp)}, {wq, from(wp)}, {bq, bpad}}, pq.constants));
    std::vector<int8_t> unpacked(want.size());
    runtime::cpu::unpack_nchwnc(g8.data(), m, n, 1, 1, bb, bo, unpacked.data());
    EXPECT_EQ(unpacked, want);
  }
}

Pool2dAttrs random_pool(std::mt19937& rng) {
  auto r = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  Pool2dAttrs a;
  a.kernel_h = r(1, 3);
  a.kernel_w = r(1, 3);
  a.stride_h = r(1, 2);
  a.stride_w = r(1, 2);
  a.pad_top = r(0, a.kernel_h - 1);
  a.pad_left = r(0, a.kernel_w - 1);
  a.pad_bottom = r(0, a.kernel_h - 1);
  a.pad_right = r(0, a.kernel_w - 1);
  a.count_include_pad = r(0, 1) == 1;
  return a;
}

nlohmann::json pool_attrs(const Pool2dAttrs& a) {
  return {{"kernel", {a.kernel_h, a.kernel_w}},
          {"stride", {a.stride_h, a.stride_w}},
          {"pads", {a.pad_top, a.pad_left, a.pad_bottom, a.pad_right}},
          {"count_include_pad", a.count_include_pad}};
}

TEST(TopiPool, MaxPoolMatchesCpuKernel) {
  std::mt19937 rng(17);
  for (int t = 0; t < 10; ++t) {
    const Pool2dAttrs a = random_pool(rng);
    const int64_t n = 1, c = 1 + t % 3, h = 3 + t % 5, w = 4 + t % 3;
    const Data xv = random_data(rng, static_cast<size_t>(n * c * h * w), -128, 127);
    te::Tensor x = placeholder(S({n, c, h, w}), DataType::int8(), "x");
    te::Tensor y = max_pool2d(x, a);
    const auto want = run_kernel("maxpool", pool_attrs(a), {{desc("x", DType::kI8, {n, c, h, w}), bytes_i8(xv)}},
                                 desc("y", DType::kI8, const_shape(y)));
    EXPECT_EQ(run_default(y, {{x, xv}}), data_i8(want));
  }
}

/// Average pooling with equal input and output scales (powers of two: the kernel's double
/// arithmetic is then exact up to its one rounding, half to even).
TEST(TopiPool, AvgPoolMatchesCpuKernel) {
  std::mt19937 rng(19);
  int ties = 0;
  for (int t = 0; t < 12; ++t) {
    const Pool2dAttrs a = random_pool(rng);
    const int64_t n = 1 + t % 2, c = 2, h = 3 + t % 4, w = 3 + t % 5;
    const int32_t zx = static_cast<int32_t>(t * 3 - 15), zy = static_cast<int32_t>(7 - t);
    const Data xv = random_data(rng, static_cast<size_t>(n * c * h * w), -128, 127);
    te::Tensor x = placeholder(S({n, c, h, w}), DataType::int8(), "x");
    te::Tensor y = avg_pool2d(x, a, zx, zy);
    const auto want = run_kernel("avgpool", pool_attrs(a),
                                 {{desc("x", DType::kI8, {n, c, h, w}, 0.5f, zx), bytes_i8(xv)}},
                                 desc("y", DType::kI8, const_shape(y), 0.5f, zy));
    const Data got = run_default(y, {{x, xv}});
    EXPECT_EQ(got, data_i8(want)) << "case " << t;
    if (a.kernel_h * a.kernel_w % 2 == 0) ++ties;
  }
  EXPECT_GT(ties, 0);  // even window sizes, where ties half-way occur
}

TEST(TopiElementwise, ReluClipAddMatchCpuKernels) {
  std::mt19937 rng(23);
  const Data xv = random_data(rng, 60, -128, 127), yv = random_data(rng, 60, -1000, 1000),
             zv = random_data(rng, 60, -1000, 1000);
  te::Tensor x = placeholder(S({3, 4, 5}), DataType::int8(), "x");
  const auto xd = desc("x", DType::kI8, {3, 4, 5});
  const auto qclip = [&](int64_t lo, int64_t hi) {
    return data_i8(run_kernel("qclip", {{"lo", lo}, {"hi", hi}}, {{xd, bytes_i8(xv)}}, desc("y", DType::kI8, {3, 4, 5})));
  };
  EXPECT_EQ(run_default(relu(x), {{x, xv}}), qclip(0, 127));
  EXPECT_EQ(run_default(clip(x, -20, 33), {{x, xv}}), qclip(-20, 33));
  te::Tensor a = placeholder(S({60}), DataType::int32(), "a"), b = placeholder(S({60}), DataType::int32(), "b");
  const auto want = run_kernel("add_f32", {},
                               {{desc("a", DType::kF32, {60}), bytes_f32(yv)}, {desc("b", DType::kF32, {60}), bytes_f32(zv)}},
                               desc("y", DType::kF32, {60}));
  EXPECT_EQ(run_default(add(a, b), {{a, yv}, {b, zv}}), data_f32(want));
  // int8 add wraps in int8
  te::Tensor p = placeholder(S({2}), DataType::int8(), "p"), q = placeholder(S({2}), DataType::int8(), "q");
  EXPECT_EQ(run_default(add(p, q), {{p, {100, -100}}, {q, {100, -100}}}), (Data{-56, 56}));
}

/// qadd with equal scales and zero points a, b, y is runtime/cpu's qadd (with and without relu).
TEST(TopiQadd, EqualScalesMatchCpuQadd) {
  std::mt19937 rng(29);
  const Data av = random_data(rng, 48, -128, 127), bv = random_data(rng, 48, -128, 127);
  for (bool relu_on : {false, true}) {
    const int32_t za = 5, zb = -9, zy = 3;
    RequantParams rq;
    rq.out_add = {zy};
    if (relu_on) rq.clip_lo = zy;
    te::Tensor a = placeholder(S({2, 4, 6}), DataType::int8(), "a"), b = placeholder(S({2, 4, 6}), DataType::int8(), "b");
    RequantOps q = qadd(a, b, za, 1, zb, 1, rq);
    const auto want = run_kernel("qadd", {{"relu", relu_on}},
                                 {{desc("a", DType::kI8, {2, 4, 6}, 0.25f, za), bytes_i8(av)},
                                  {desc("b", DType::kI8, {2, 4, 6}, 0.25f, zb), bytes_i8(bv)}},
                                 desc("y", DType::kI8, {2, 4, 6}, 0.25f, zy));
    EXPECT_EQ(run_default(q.out, {{a, av}, {b, bv}}, q.constants), data_i8(want)) << "relu " << relu_on;
  }
}

/// qadd with multipliers and a rounding shift against runtime::RequantChannel::apply on the
/// integer sum (qnn.h's chain, one channel).
TEST(TopiQadd, ScaledMatchesRequantChain) {
  std::mt19937 rng(31);
  const Data av = random_data(rng, 40, -128, 127), bv = random_data(rng, 40, -128, 127);
  runtime::Requant rq;
  rq.multiplier = {1};
  rq.shift = {14};
  rq.out_zero_point = -4;
  rq.acc_offset = {100};
  rq.low_multiplier = {{77}};
  rq.low_shift = {{3}};
  ASSERT_EQ(runtime::requant_problem(rq, 1), "");
  const runtime::RequantChannel ch = runtime::requant_channel(rq, 0);
  const int32_t za = -3, ma = 11000, zb = 12, mb = 5800;
  te::Tensor a = placeholder(S({40}), DataType::int8(), "a"), b = placeholder(S({40}), DataType::int8(), "b");
  RequantOps q = qadd(a, b, za, ma, zb, mb, params_of(rq, 1));
  Data want;
  for (size_t i = 0; i < av.size(); ++i) {
    const int32_t s = static_cast<int32_t>((av[i] - za) * ma + (bv[i] - zb) * mb);
    want.push_back(ch.apply(s));
  }
  EXPECT_EQ(run_default(q.out, {{a, av}, {b, bv}}, q.constants), want);
  std::vector<std::string> ops;
  for (const RequantStep& s : q.steps) ops.push_back(s.op);
  std::string joined;
  for (const RequantStep& st : q.steps) joined += st.tensor.name() + ":" + st.op + " ";
  EXPECT_EQ(joined,
            "qadd.a_zp:add qadd.a_mul:mul qadd.b_zp:add qadd.b_mul:mul qadd.sum:add qadd.acc_offset:add qadd.low0.mul:mul "
            "qadd.low0.round:add qadd.low0.shr:shr qadd.add_low:add "
            "qadd.round:add qadd.shr:shr qadd.out_add:add qadd.clip_lo:max qadd.clip_hi:min ");
}

TEST(TopiGolden, SmallConv2dAndDense) {
  te::Tensor x = placeholder(S({1, 2, 4, 4}), DataType::int8(), "x");
  te::Tensor w = placeholder(S({3, 2, 3, 3}), DataType::int8(), "w");
  Conv2dAttrs a;
  a.stride_h = 2;
  a.pad_top = 1;
  a.pad_left = 1;
  a.pad_right = 1;
  te::Tensor y = conv2d_nchw(x, w, a, 0);
  tir::PrimFunc f = te::lower(te::create_schedule({y}), {x, w, y}, "conv2d");
  tir::testing::expect_golden_in("topi", "conv2d_nchw_default.tir", tir::to_text(f));

  te::Tensor dx = placeholder(S({2, 8}), DataType::int8(), "x");
  te::Tensor dw = placeholder(S({4, 8}), DataType::int8(), "w");
  te::Tensor db = placeholder(S({4}), DataType::int32(), "bias");
  RequantParams rq;
  rq.multiplier = {1 << 14};
  rq.round = {1 << 19};
  rq.shift = {20};
  rq.out_add = {-3};
  RequantOps d = requantize(bias_add(dense(dx, dw, 0), db), rq);
  tir::PrimFunc g = te::lower(te::create_schedule({d.out}), {dx, dw, db, d.out}, "dense");
  tir::testing::expect_golden_in("topi", "dense_requant_default.tir", tir::to_text(g));
}

/// ImmPolicy::packed_channels: the per-channel fields become [C/lanes][B][lanes] constants (every
/// batch lane the channel's value), the same values as the flat [C] form; wide one-entry values
/// stay one element.
// A clip bound the clamp already guarantees is left out (qnn.h); the values stay the same.
/// The ALU operations of requantize's steps on `acc`, in order.
std::vector<std::string> step_ops(const te::Tensor& acc, const RequantParams& p) {
  std::vector<std::string> v;
  for (const RequantStep& st : requantize(acc, p, false, "rq").steps) v.push_back(st.op);
  return v;
}

TEST(TopiRequant, ClipsTheClampGuaranteesAreLeftOut) {
  te::Tensor acc = placeholder(S({2, 8}), DataType::int32(), "acc");
  auto ops_of = [&](const RequantParams& p) { return step_ops(acc, p); };
  RequantParams p;
  p.acc_min = {-1000};
  p.acc_max = {1000};
  p.shift = {4};
  p.round = {8};
  // (x + 8) >> 4 maps [-1000, 1000] to [-62, 63]: no clip
  EXPECT_EQ(ops_of(p), (std::vector<std::string>{"max", "min", "add", "shr"}));
  // acc_max 4000 maps to 250: the upper clip stays, the lower one goes
  RequantParams hi = p;
  hi.acc_max = {4000};
  EXPECT_EQ(ops_of(hi), (std::vector<std::string>{"max", "min", "add", "shr", "min"}));
  // a negative multiplier mirrors the range: -4000 * -1 -> 250 needs the upper clip; per
  // channel, one channel needing it keeps it for all
  RequantParams neg = p;
  neg.acc_min = {-1000, -1000, -1000, -1000, -1000, -1000, -1000, -4000};
  neg.multiplier = {-1};
  EXPECT_EQ(ops_of(neg), (std::vector<std::string>{"max", "min", "mul", "add", "shr", "min"}));
  // no clamp: both clips
  RequantParams none;
  none.shift = {4};
  EXPECT_EQ(ops_of(none), (std::vector<std::string>{"shr", "max", "min"}));
  // the values: the chain with and without the elision agree on every accumulator
  for (const RequantParams& q : {p, hi, neg}) {
    RequantOps r = requantize(acc, q, false, "rq");
    Data in;
    for (int64_t v = -5000; v < 5000; v += 625) in.push_back(v);
    const Data got = run_default(r.out, {{acc, in}}, r.constants);
    for (size_t k = 0; k < in.size(); ++k) {
      const int64_t c = static_cast<int64_t>(k % 8);
      int64_t x = std::min<int64_t>(std::max<int64_t>(in[k], q.acc_min.size() == 1 ? q.acc_min[0] : q.acc_min[c]),
                                    q.acc_max[0]);
      x = ((x * q.multiplier[0] + q.round[0]) >> q.shift[0]);
      x = std::min<int64_t>(std::max<int64_t>(x, -128), 127);
      EXPECT_EQ(got[k], x) << "accumulator " << in[k];
    }
  }
}

// With no clamp, no limbs and multiplier 1, ADD acc_offset and ADD round are one ADD of their
// sum (per channel when either is), bit-exact with the two adds (int32 wrapping, extreme
// accumulators included); a clamp or a multiplier between them keeps both.
TEST(TopiRequant, OffsetAndRoundMergeWithNothingBetween) {
  te::Tensor acc = placeholder(S({2, 8}), DataType::int32(), "acc");
  auto ops_of = [&](const RequantParams& p) { return step_ops(acc, p); };
  RequantParams p;
  p.acc_offset = {100, -7, 3, 0, 9, 9, 9, 2147483600};
  p.round = {8};
  p.shift = {4};
  EXPECT_EQ(ops_of(p), (std::vector<std::string>{"add", "shr", "max", "min"}));
  RequantOps r = requantize(acc, p, false, "rq");
  ASSERT_EQ(r.constants.size(), 1u);
  EXPECT_EQ(r.constants[0].values, (std::vector<int32_t>{108, 1, 11, 8, 17, 17, 17, 2147483608}));
  RequantParams clamp = p;
  clamp.acc_max = {100000};
  EXPECT_EQ(ops_of(clamp), (std::vector<std::string>{"add", "min", "add", "shr", "max", "min"}));
  RequantParams mul = p;
  mul.multiplier = {3};
  EXPECT_EQ(ops_of(mul), (std::vector<std::string>{"add", "mul", "add", "shr", "max", "min"}));
  Data in;
  for (int64_t v : {int64_t{INT32_MIN}, int64_t{-5000}, int64_t{-1}, int64_t{0}, int64_t{77}, int64_t{4999},
                    int64_t{INT32_MAX - 40}, int64_t{INT32_MAX}}) {
    for (int c = 0; c < 2; ++c) in.push_back(v);
  }
  const Data got = run_default(r.out, {{acc, in}}, r.constants);
  for (size_t k = 0; k < in.size(); ++k) {
    const size_t c = k % 8;
    auto wrap = [](int64_t v) { return static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(v))); };
    int64_t x = wrap(wrap(in[k] + p.acc_offset[c]) + 8) >> 4;
    x = std::min<int64_t>(std::max<int64_t>(x, -128), 127);
    EXPECT_EQ(got[k], x) << "accumulator " << in[k] << " channel " << c;
  }
}

/// A packed [1][3][2][4] accumulator with random values and a random per-channel chain whose
/// acc_max is one wide value (beyond the 16-bit immediate).
struct PackedCase {
  static constexpr int64_t mb = 1, nb = 3, bb = 2, bo = 4;
  te::Tensor acc;
  Data av;
  runtime::Requant rq;
  RequantParams p;
};
PackedCase packed_case(uint32_t seed) {
  std::mt19937 rng(seed);
  PackedCase c;
  c.acc = placeholder(S({c.mb, c.nb, c.bb, c.bo}), DataType::int32(), "acc");
  c.av = random_data(rng, static_cast<size_t>(c.mb * c.nb * c.bb * c.bo), -2000000, 2000000);
  c.rq = random_requant(rng, c.nb * c.bo, true, 1);
  c.p = params_of(c.rq, c.nb * c.bo);
  c.p.acc_max = {1 << 22};
  return c;
}

TEST(TopiRequant, PackedChannelConstantsMatchTheFlatForm) {
  const PackedCase pk = packed_case(83);
  const int64_t nb = pk.nb, bb = pk.bb, bo = pk.bo;
  const te::Tensor& acc = pk.acc;
  const Data& av = pk.av;
  const runtime::Requant& rq = pk.rq;
  const RequantParams& p = pk.p;
  const RequantOps flat = requantize(acc, p, true, "requant", ImmPolicy{16, 2});
  const RequantOps packed = requantize(acc, p, true, "requant", ImmPolicy{16, 2, true});
  ASSERT_EQ(flat.constants.size(), packed.constants.size());
  for (size_t k = 0; k < packed.constants.size(); ++k) {
    const ChannelConstant& c = packed.constants[k];
    if (c.kind == ChannelConstant::Kind::kUniform) {
      EXPECT_EQ(const_shape(c.tensor), (std::vector<int64_t>{bb, bo}));
      EXPECT_EQ(c.values, std::vector<int32_t>(static_cast<size_t>(bb * bo), 1 << 22));
      continue;
    }
    EXPECT_EQ(c.kind, ChannelConstant::Kind::kChannel);
    EXPECT_EQ(const_shape(c.tensor), (std::vector<int64_t>{nb, bb, bo}));
    // [cb][b][o] = flat[cb * bo + o]
    for (int64_t cb = 0; cb < nb; ++cb) {
      for (int64_t b = 0; b < bb; ++b) {
        for (int64_t o = 0; o < bo; ++o) {
          EXPECT_EQ(c.values[static_cast<size_t>((cb * bb + b) * bo + o)],
                    flat.constants[k].values[static_cast<size_t>(cb * bo + o)]);
        }
      }
    }
  }
  EXPECT_EQ(run_default(packed.out, {{acc, av}}, packed.constants), run_default(flat.out, {{acc, av}}, flat.constants));
  // each element against the runtime's chain
  const Data got = run_default(packed.out, {{acc, av}}, packed.constants);
  for (int64_t cb = 0; cb < nb; ++cb) {
    for (int64_t b = 0; b < bb; ++b) {
      for (int64_t o = 0; o < bo; ++o) {
        const size_t i = static_cast<size_t>((cb * bb + b) * bo + o);
        runtime::RequantChannel ch = runtime::requant_channel(rq, static_cast<size_t>(cb * bo + o));
        ch.acc_max = 1 << 22;
        EXPECT_EQ(got[i], ch.apply(static_cast<int32_t>(av[i])));
      }
    }
  }
  te::Tensor nchw = placeholder(S({1, 4, 2, 2}), DataType::int32(), "nchw");
  RequantParams pc;
  pc.multiplier = {1, 2, 3, 4};
  EXPECT_EQ(user_error_of([&] { requantize(nchw, pc, false, "requant", ImmPolicy{0, 0, true}); }),
            "requantize requant: packed per-channel constants need a packed stage (rank 6, or rank 4 packed), nchw "
            "has rank 4 (not packed)");
}

/// ImmPolicy::stack_channels: the per-channel fields are the rows of one [F][C/lanes][B][lanes]
/// constant "requant.channel" (in chain order, where the first one was), its values the packed
/// form's constants one after another; the wide one-entry value stays its own; the same results.
TEST(TopiRequant, StackedChannelConstantsMatchThePackedForm) {
  const PackedCase pk = packed_case(89);
  const int64_t nb = pk.nb, bb = pk.bb, bo = pk.bo;
  const te::Tensor& acc = pk.acc;
  const Data& av = pk.av;
  const RequantParams& p = pk.p;
  const RequantOps packed = requantize(acc, p, true, "requant", ImmPolicy{16, 2, true});
  const RequantOps stacked = requantize(acc, p, true, "requant", ImmPolicy{16, 2, true, true});
  std::vector<int32_t> rows;
  size_t fields = 0, first = packed.constants.size();
  for (size_t k = 0; k < packed.constants.size(); ++k) {
    const ChannelConstant& c = packed.constants[k];
    if (c.kind != ChannelConstant::Kind::kChannel) continue;
    first = std::min(first, k);
    ++fields;
    rows.insert(rows.end(), c.values.begin(), c.values.end());
  }
  ASSERT_GE(fields, 2u);
  ASSERT_EQ(stacked.constants.size(), packed.constants.size() - fields + 1);
  const ChannelConstant& st = stacked.constants[first];
  EXPECT_EQ(st.tensor.name(), "requant.channel");
  EXPECT_EQ(st.kind, ChannelConstant::Kind::kChannel);
  EXPECT_EQ(const_shape(st.tensor), (std::vector<int64_t>{static_cast<int64_t>(fields), nb, bb, bo}));
  EXPECT_EQ(st.values, rows);
  // every step reading it names its row, in chain order
  int64_t next = 0;
  for (const RequantStep& s : stacked.steps) {
    if (s.is_imm || !s.operand.same_as(st.tensor)) {
      EXPECT_EQ(s.stack_row, -1);
      continue;
    }
    EXPECT_EQ(s.stack_row, next++);
  }
  EXPECT_EQ(next, static_cast<int64_t>(fields));
  EXPECT_EQ(run_default(stacked.out, {{acc, av}}, stacked.constants),
            run_default(packed.out, {{acc, av}}, packed.constants));
  // without packed_channels it changes nothing
  const RequantOps flat = requantize(acc, p, true, "requant", ImmPolicy{16, 2, false, true});
  EXPECT_EQ(flat.constants.size(), packed.constants.size());
}

/// The zero-point terms on hand-computed values: all weights 1 (two input lanes, so every tap
/// sums to 2 per output lane), zero point 3, a 3x3 kernel on a 3x3 input with padding 1.
TEST(TopiZeroPoint, ChannelAddendAndBorderByHand) {
  const std::vector<int64_t> xs = {1, 1, 3, 3, 2, 2}, ws = {1, 1, 3, 3, 2, 2};  // B 2, BI 2, BO 2
  std::vector<int8_t> w(36, 1);
  w[0] = 5;  // output lane 0, tap (0, 0), input lane 0: lane 0 sums 6 at tap (0, 0)
  EXPECT_EQ(zero_point_channel_addend(ws, w, 3), (std::vector<int32_t>{-3 * (18 + 4), -3 * 18}));
  Conv2dAttrs a;
  a.pad_top = a.pad_left = a.pad_bottom = a.pad_right = 1;
  EXPECT_TRUE(conv2d_window_touches_padding(3, 3, 3, 3, a));
  const std::vector<int32_t> border = conv2d_zero_point_border(xs, ws, w, a, 3);
  ASSERT_EQ(border.size(), 3u * 3 * 2 * 2);  // [1][3][3][B 2][BO 2]
  auto at = [&](int64_t y, int64_t x, int64_t b, int64_t o) { return border[static_cast<size_t>(((y * 3 + x) * 2 + b) * 2 + o)]; };
  // corner (0, 0): taps of row 0 and column 0 are padded (5 taps, tap (0, 0) among them)
  EXPECT_EQ(at(0, 0, 0, 0), 3 * (5 * 2 + 4));
  EXPECT_EQ(at(0, 0, 1, 1), 3 * 5 * 2);
  EXPECT_EQ(at(0, 1, 0, 0), 3 * (3 * 2 + 4));  // top edge: row 0 padded
  EXPECT_EQ(at(1, 1, 0, 0), 0);                // centre: inside
  EXPECT_EQ(at(2, 2, 1, 0), 3 * 5 * 2);        // bottom-right corner: tap (0, 0) inside
  // windows that reach no padding: a valid 3x3, and a stride whose last window ends inside
  Conv2dAttrs v;
  EXPECT_FALSE(conv2d_window_touches_padding(5, 5, 3, 3, v));
  v.pad_bottom = v.pad_right = 1;
  v.stride_h = v.stride_w = 2;
  EXPECT_FALSE(conv2d_window_touches_padding(5, 5, 3, 3, v));  // 2 rows; the last window: rows 2..4 of 5
  v.stride_h = v.stride_w = 1;
  EXPECT_TRUE(conv2d_window_touches_padding(5, 5, 3, 3, v));  // 4 rows; the last window: rows 3..5
  EXPECT_EQ(user_error_of([&] { zero_point_channel_addend(ws, std::vector<int8_t>(35, 0), 3); }),
            "zero_point_channel_addend: 35 weight values for a packed weight tensor of 36 elements");
  EXPECT_EQ(user_error_of([&] { conv2d_zero_point_border(xs, ws, w, a, -129); }),
            "conv2d_zero_point_border: input zero point -129 is outside [-128, 127]");
}

TEST(TopiErrors, NameTheOperatorAndValue) {
  te::Tensor x = placeholder(S({1, 4, 5, 5}), DataType::int8(), "x");
  te::Tensor w = placeholder(S({6, 3, 3, 3}), DataType::int8(), "w");
  Conv2dAttrs a;
  a.groups = 3;
  EXPECT_EQ(user_error_of([&] { conv2d_nchw(x, w, a); }),
            "conv2d conv2d: groups 3 does not divide the input channels 4 and output channels 6");
  a.groups = 1;
  EXPECT_EQ(user_error_of([&] { conv2d_nchw(x, w, a); }),
            "conv2d conv2d: weights w have 3 input channels per group, expected 4 (4 / groups 1)");
  te::Tensor w4 = placeholder(S({6, 4, 7, 3}), DataType::int8(), "w4");
  EXPECT_EQ(user_error_of([&] { conv2d_nchw(x, w4, a); }),
            "conv2d conv2d: kernel extent 7 (dilated 7) does not fit the padded input extent 5");
  Pool2dAttrs p;
  p.kernel_h = 2;
  p.pad_top = 2;
  EXPECT_EQ(user_error_of([&] { max_pool2d(x, p); }),
            "max_pool2d max_pool: pads (2, 0, 0, 0) must be smaller than the kernel (2, 1)");
  te::Tensor acc = placeholder(S({1, 4, 2, 2}), DataType::int32(), "acc");
  RequantParams rq;
  rq.shift = {3, 40, 1, 1};
  EXPECT_EQ(user_error_of([&] { requantize(acc, rq); }), "requantize requant: shift[1] 40 is outside [0, 31]");
  rq.shift = {3, 4};
  EXPECT_EQ(user_error_of([&] { requantize(acc, rq); }),
            "requantize requant: shift has 2 entries, expected 1 or 4 (channels)");
  te::Tensor b8 = placeholder(S({2, 4}), DataType::int8(), "b8");
  EXPECT_EQ(user_error_of([&] { qadd(b8, x, 0, 1, 0, 1, {}); }),
            "qadd qadd: operands b8 (int8) and x (int8) must be int8 tensors of one shape");
}

}  // namespace
}  // namespace tessel::topi
