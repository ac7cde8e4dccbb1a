// The quantised convolution: the reference of runtime/qnn.h against hand-computed values, and the
// optimised CPU kernel (and the qconv2d step kernel) against the reference on random shapes with
// groups, depthwise, padding, strides, zero points and per-channel requantisation.
#include <gtest/gtest.h>

#include <random>

#include "runtime/cpu/kernels.h"
#include "runtime/qnn.h"
#include "tests/runtime/kernel_test_util.h"

namespace tessel::runtime {
namespace {

using namespace testing;
using I8 = std::vector<int8_t>;

QConv2dParams small_params() {
  QConv2dParams p;
  p.n = 1;
  p.ic = 1;
  p.ih = 3;
  p.iw = 3;
  p.oc = 1;
  p.kh = 2;
  p.kw = 2;
  p.in_zero_point = 1;
  p.rq.shift = {2};
  p.rq.out_zero_point = -3;
  return p;
}

// x - zp = 1..9 on a 3x3 grid; w = [[1, 0], [0, 1]]: sums x[y][x] + x[y+1][x+1] = 6, 8, 12, 14.
const I8 kX = {2, 3, 4, 5, 6, 7, 8, 9, 10};
const I8 kW = {1, 0, 0, 1};

TEST(QConv2dReference, HandComputedRequantRounding) {
  QConv2dParams p = small_params();
  const std::vector<int32_t> bias = {10};
  I8 out(4);
  // acc = 16, 18, 22, 24; (acc + 2) >> 2 = 4, 5, 6, 6 (18/4 = 4.5 rounds up); + (-3).
  qconv2d_reference(p, kX.data(), kW.data(), bias.data(), out.data());
  EXPECT_EQ(out, (I8{1, 2, 3, 3}));
  // Negative accumulators: -14, -12, -8, -6 -> (acc + 2) >> 2 (arithmetic) = -3, -3, -2, -1.
  const std::vector<int32_t> neg = {-20};
  qconv2d_reference(p, kX.data(), kW.data(), neg.data(), out.data());
  EXPECT_EQ(out, (I8{-6, -6, -5, -4}));
  // Clip and multiplier: acc * 3 = 48, 54, 66, 72 -> (x + 2) >> 2 = 12, 14, 17, 18 -> -3 -> clip 12.
  p.rq.multiplier = {3};
  p.rq.clip_hi = 12;
  qconv2d_reference(p, kX.data(), kW.data(), bias.data(), out.data());
  EXPECT_EQ(out, (I8{9, 11, 12, 12}));
  // Clamp and offset: x = clamp(acc - 20, -3, 3) = -3, -2, 2, 3 (acc 16, 18, 22, 24), one
  // rounding of (x + 20) * 3 / 4: K = 2 - (-20) * 3 = 62 = 15 * 4 + 2, so (x * 3 + 2) >> 2 + 15
  // = 13, 14, 17, 17 -> -3 -> 10, 11, 14, 14: round((17, 18, 22, 23) * 3 / 4) - 3.
  p.rq.acc_offset = {-20};
  p.rq.acc_min = {-3};
  p.rq.acc_max = {3};
  p.rq.clip_hi = 127;
  qconv2d_reference(p, kX.data(), kW.data(), bias.data(), out.data());
  EXPECT_EQ(out, (I8{10, 11, 14, 14}));
}

TEST(QConv2dReference, RequantRoundTermsOfTheCentredChain) {
  // round and out_offset split K = 2^(s-1) - off * m exactly (floor division), for negative K too.
  int32_t round = 0, out_offset = 0;
  requant_round_terms(3, 2, -20, round, out_offset);  // K = 62
  EXPECT_EQ(round, 2);
  EXPECT_EQ(out_offset, 15);
  requant_round_terms(5, 3, 7, round, out_offset);  // K = 4 - 35 = -31 = -4 * 8 + 1
  EXPECT_EQ(round, 1);
  EXPECT_EQ(out_offset, -4);
  requant_round_terms(1, 0, 9, round, out_offset);  // s = 0: K = -9, round 0
  EXPECT_EQ(round, 0);
  EXPECT_EQ(out_offset, -9);
  // The chain's value does not depend on the offset where nothing wraps.
  Requant a, b;
  a.multiplier = b.multiplier = {12345};
  a.shift = b.shift = {21};
  b.acc_offset = {-100000};
  for (int32_t acc = -40000; acc <= 40000; acc += 7) EXPECT_EQ(requantize(acc, a, 0), requantize(acc, b, 0)) << acc;
}

TEST(QConv2dReference, InvalidRequantIsAUserError) {
  QConv2dParams p = small_params();
  const std::vector<int32_t> bias = {10};
  I8 out(4);
  p.rq.acc_min = {5};
  p.rq.acc_max = {4};
  EXPECT_THROW(qconv2d_reference(p, kX.data(), kW.data(), bias.data(), out.data()), UserError);
  EXPECT_THROW(cpu::qconv2d(p, kX.data(), kW.data(), bias.data(), out.data()), UserError);
  p = small_params();
  p.rq.shift = {32};
  EXPECT_EQ(requant_problem(p.rq, 1), "requant shift[0] 32 is outside [0, 31]");
  p.rq.shift = {1, 2};
  EXPECT_EQ(requant_problem(p.rq, 1), "requant shift has 2 entries, expected 1 or 1 (the output channels)");
}

TEST(QConv2dReference, PaddingIsRealZero) {
  // 2x2 input with zero point 5 (reals 1..4), 3x3 all-ones kernel, pads 1: every window covers
  // all four pixels, so every output is 10 (a padded tap adds 0, not -5).
  QConv2dParams p;
  p.ic = 1;
  p.ih = 2;
  p.iw = 2;
  p.oc = 1;
  p.kh = 3;
  p.kw = 3;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = 1;
  p.in_zero_point = 5;
  const I8 x = {6, 7, 8, 9};
  const I8 w(9, 1);
  const std::vector<int32_t> bias = {0};
  I8 ref(4), opt(4);
  qconv2d_reference(p, x.data(), w.data(), bias.data(), ref.data());
  cpu::qconv2d(p, x.data(), w.data(), bias.data(), opt.data());
  EXPECT_EQ(ref, (I8{10, 10, 10, 10}));
  EXPECT_EQ(opt, ref);
}

TEST(QConv2dOptimised, HandComputed) {
  const QConv2dParams p = small_params();
  const std::vector<int32_t> bias = {10};
  I8 out(4);
  cpu::qconv2d(p, kX.data(), kW.data(), bias.data(), out.data());
  EXPECT_EQ(out, (I8{1, 2, 3, 3}));
}

struct Shape {
  int64_t n, ic, ih, iw, oc, kh, kw, sh, sw, pt, pl, pb, pr, groups;
  int32_t zp;
};

class QConv2dRandom : public ::testing::TestWithParam<Shape> {};

TEST_P(QConv2dRandom, OptimisedMatchesReference) {
  const Shape s = GetParam();
  QConv2dParams p;
  p.n = s.n;
  p.ic = s.ic;
  p.ih = s.ih;
  p.iw = s.iw;
  p.oc = s.oc;
  p.kh = s.kh;
  p.kw = s.kw;
  p.stride_h = s.sh;
  p.stride_w = s.sw;
  p.pad_top = s.pt;
  p.pad_left = s.pl;
  p.pad_bottom = s.pb;
  p.pad_right = s.pr;
  p.groups = s.groups;
  p.in_zero_point = s.zp;
  std::mt19937 rng(static_cast<uint32_t>(s.ic * 131 + s.oc * 17 + s.kh * 7 + s.groups));
  std::uniform_int_distribution<int> i8(-128, 127), mul(1, 300), sh(0, 12), off(-20000, 20000);
  p.rq.multiplier.clear();
  p.rq.shift.clear();
  p.rq.acc_offset.clear();
  p.rq.acc_min.clear();
  p.rq.acc_max.clear();
  for (int64_t o = 0; o < p.oc; ++o) {
    p.rq.multiplier.push_back(mul(rng));
    p.rq.shift.push_back(o == 0 ? 0 : sh(rng) + 4);  // channel 0: no shift (identity path)
    // odd channels centred and clamped (the general chain of the requant pass), even ones not
    const bool clamp = o % 2 == 1;
    p.rq.acc_offset.push_back(clamp ? off(rng) : 0);
    p.rq.acc_min.push_back(clamp ? -30000 - (off(rng) & 0xfff) : INT32_MIN);
    p.rq.acc_max.push_back(clamp ? 30000 + (off(rng) & 0xfff) : INT32_MAX);
  }
  p.rq.out_zero_point = i8(rng) / 4;
  p.rq.clip_lo = -100;
  p.rq.clip_hi = 120;
  I8 x(static_cast<size_t>(p.n * p.ic * p.ih * p.iw)), w(static_cast<size_t>(p.oc * (p.ic / p.groups) * p.kh * p.kw));
  std::vector<int32_t> bias(static_cast<size_t>(p.oc));
  for (auto& v : x) v = static_cast<int8_t>(i8(rng));
  for (auto& v : w) v = static_cast<int8_t>(i8(rng));
  for (auto& v : bias) v = i8(rng) * 300;
  const size_t out_n = static_cast<size_t>(p.n * p.oc * p.oh() * p.ow());
  I8 ref(out_n), opt(out_n, 0x55);
  qconv2d_reference(p, x.data(), w.data(), bias.data(), ref.data());
  cpu::qconv2d(p, x.data(), w.data(), bias.data(), opt.data());
  ASSERT_EQ(opt, ref);
  // The outputs are not trivially constant (the comparison is meaningful).
  EXPECT_NE(*std::min_element(ref.begin(), ref.end()), *std::max_element(ref.begin(), ref.end()));

  // The same layer through the qconv2d step kernel and its JSON attributes.
  nlohmann::json rq = {{"multiplier", p.rq.multiplier}, {"shift", p.rq.shift},
                       {"acc_offset", p.rq.acc_offset}, {"acc_min", p.rq.acc_min},
                       {"acc_max", p.rq.acc_max}, {"out_zero_point", p.rq.out_zero_point},
                       {"clip_lo", p.rq.clip_lo}, {"clip_hi", p.rq.clip_hi}};
  nlohmann::json attrs = {{"stride", {p.stride_h, p.stride_w}},
                          {"pads", {p.pad_top, p.pad_left, p.pad_bottom, p.pad_right}},
                          {"groups", p.groups}, {"in_zero_point", p.in_zero_point},
                          {"requant", rq}};
  auto out = run_op("qconv2d", attrs,
                    {in(desc("x", DType::kI8, {p.n, p.ic, p.ih, p.iw}), x),
                     in(desc("w", DType::kI8, {p.oc, p.ic / p.groups, p.kh, p.kw}), w),
                     in(desc("b", DType::kI32, {p.oc}), bias)},
                    {desc("y", DType::kI8, {p.n, p.oc, p.oh(), p.ow()})});
  EXPECT_EQ(from_bytes<int8_t>(out[0]), ref);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, QConv2dRandom,
    ::testing::Values(Shape{1, 3, 7, 9, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, -3},
                      Shape{2, 8, 6, 6, 8, 3, 3, 2, 2, 1, 0, 1, 2, 1, 5},
                      Shape{1, 8, 9, 7, 8, 3, 3, 1, 1, 1, 1, 1, 1, 8, -128},  // depthwise
                      Shape{1, 12, 5, 5, 6, 1, 3, 1, 2, 0, 1, 0, 1, 3, 127},  // grouped
                      Shape{3, 40, 1, 1, 10, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0},   // dense
                      Shape{1, 16, 14, 14, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, -7},
                      Shape{1, 3, 23, 23, 8, 7, 7, 2, 2, 3, 3, 3, 3, 1, 0},   // stem-like
                      Shape{1, 4, 10, 11, 5, 2, 5, 3, 2, 0, 2, 1, 0, 1, 11},
                      Shape{1, 16, 40, 70, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 2},  // several tiles
                      Shape{2, 6, 8, 8, 6, 5, 5, 1, 3, 2, 2, 2, 2, 6, -1}));  // depthwise s(1,3)

}  // namespace
}  // namespace tessel::runtime
