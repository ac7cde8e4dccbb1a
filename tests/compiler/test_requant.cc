// Unit tests of the requant pass's derivation (compiler/passes/requant.h): the forms it picks,
// the degenerate scales, the errors, and the former double-rounding case, checked against exact
// integer arithmetic (tests/compiler/requant_check.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <random>

#include "compiler/passes/requant.h"
#include "support/error.h"
#include "tests/compiler/requant_check.h"

namespace tessel::compiler {
namespace {

using passes::AccRange;
using testing::check_channel;
using testing::exact_requant;
using testing::ideal_requant;

std::vector<int64_t> all_in(AccRange r) {
  std::vector<int64_t> v;
  for (int64_t a = r.lo; a <= r.hi; ++a) v.push_back(a);
  return v;
}

TEST(Requant, PowerOfTwoScalesUseOnlyShifts) {
  passes::RequantFigures fig;
  const auto rq = passes::derive_requant({0.25, 0.0078125}, {{-1000, 1000}, {-1000, 1000}}, -3, "l", -128, 127, &fig);
  EXPECT_EQ(fig.form, "power of two");
  EXPECT_EQ(rq.multiplier, (std::vector<int32_t>{1}));
  EXPECT_EQ(rq.shift, (std::vector<int32_t>{2, 7}));
  EXPECT_EQ(rq.acc_offset, (std::vector<int32_t>{0}));
  EXPECT_FALSE(rq.clamps_low());
  EXPECT_FALSE(rq.clamps_high());
  EXPECT_EQ(rq.out_zero_point, -3);
  EXPECT_EQ(rq.clip_lo, -128);
  EXPECT_EQ(rq.clip_hi, 127);
  EXPECT_EQ(fig.max_error_lsb, (std::vector<double>{0, 0}));
  // One value for all channels collapses to one entry.
  const auto one = passes::derive_requant({0.5, 0.5}, {{-10, 10}, {-10, 10}}, 0, "l");
  EXPECT_EQ(one.shift, (std::vector<int32_t>{1}));
  // Round half up: 2.5 -> 3, -2.5 -> -2 (acc 10 and -10 at M = 1/4).
  EXPECT_EQ(runtime::requantize(10, rq, 0), 3 - 3);
  EXPECT_EQ(runtime::requantize(-10, rq, 0), -2 - 3);
}

TEST(Requant, PowerOfTwoScaleWhoseRoundingAddWouldWrapIsCentred) {
  // M = 2^-24 with accumulators up to 2^31 - 1: acc + 2^23 would wrap, so the add-round-shift
  // chain does not serve; the derivation clamps to the unsaturated range and centres it, with
  // M' = M exactly.
  const AccRange r{INT32_MAX - 3000000000LL, INT32_MAX};
  passes::RequantFigures fig;
  const auto rq = passes::derive_requant({std::ldexp(1.0, -24)}, {r}, 5, "l", -128, 127, &fig);
  EXPECT_NE(fig.form, "power of two");
  EXPECT_EQ(fig.scale[0], std::ldexp(1.0, -24));
  EXPECT_EQ(fig.max_error_lsb[0], 0.0);
  std::mt19937_64 rng(1);
  const auto accs = testing::sample_accs(rq, 0, r, 0, 4096, 100000, rng);
  check_channel(rq, 0, std::ldexp(1.0, -24), 0.0, accs, "wrap");
  EXPECT_EQ(runtime::requantize(INT32_MAX, rq, 0), 127);
  EXPECT_EQ(runtime::requantize(static_cast<int32_t>(r.lo), rq, 0), -51 + 5);  // round(-50.8)
  EXPECT_EQ(runtime::requantize(3 << 23, rq, 0), 2 + 5);   // 1.5 rounds half up to 2
  EXPECT_EQ(runtime::requantize(-(3 << 23), rq, 0), -1 + 5);  // -1.5 rounds half up to -1
}

TEST(Requant, GeneralScaleClamps) {
  // M = 0.00123 with |acc| <= 2^20 (the layer of the former double-rounding test). Every
  // accumulator beyond about 128.5 / M = 104,000 saturates, so the chain clamps there and the
  // product spans +-104,000 instead of +-2^20. No 32-bit multiplier rounds exactly like this M
  // (a double: 53 bits of mantissa), so the chain gets low limbs holding M itself.
  const double m = 0.00123;
  const AccRange r{-(1 << 20), 1 << 20};
  passes::RequantFigures fig;
  const auto rq = passes::derive_requant({m}, {r}, 0, "l", -128, 127, &fig);
  EXPECT_EQ(fig.form, "wide");
  EXPECT_GE(fig.limbs[0], 3);
  EXPECT_EQ(fig.scale[0], m);
  EXPECT_TRUE(fig.inexact_channels.empty());
  EXPECT_TRUE(rq.clamps_low());
  EXPECT_TRUE(rq.clamps_high());
  // Exhaustive over the whole range: one rounding, no wrap, and round(acc * M) exactly.
  check_channel(rq, 0, m, 0.0, all_in(r), "M=0.00123");
  // The clamp bounds are saturation points: one step inside gives an unsaturated value.
  const int64_t lo = int64_t{rq.acc_min[0]} - rq.acc_offset[0], hi = int64_t{rq.acc_max[0]} - rq.acc_offset[0];
  EXPECT_EQ(runtime::requantize(static_cast<int32_t>(lo), rq, 0), -128);
  EXPECT_EQ(runtime::requantize(static_cast<int32_t>(lo + 1), rq, 0), -127);
  EXPECT_EQ(runtime::requantize(static_cast<int32_t>(hi), rq, 0), 127);
  EXPECT_EQ(runtime::requantize(static_cast<int32_t>(hi - 1), rq, 0), 126);
}

TEST(Requant, OneLimbWhenSomeMultiplierRoundsExactly) {
  // M = 0.00123 on a narrow range: some 32-bit multiplier (not necessarily round(M 2^s)) gives
  // every threshold of round(acc * M), so no low limbs are needed.
  const double m = 0.00123;
  const AccRange r{-20000, 20000};
  passes::RequantFigures fig;
  const auto rq = passes::derive_requant({m}, {r}, 0, "l", -128, 127, &fig);
  EXPECT_EQ(rq.low_limbs(), 0u);
  EXPECT_EQ(fig.limbs[0], 1);
  check_channel(rq, 0, m, 0.0, all_in(r), "narrow");
}

TEST(Requant, AsymmetricZeroPointIsCentred) {
  // Zero point -128 (uint8 activations moved to int8): the unsaturated accumulators are
  // [0.5 / M, 255.5 / M], all positive. Centring them (acc_offset, folded into the bias by the
  // accelerator plan) halves the product's span. The float32 M = 2483.47 / 2^23 on 2^22
  // accumulators needs a second limb (24-bit mantissa, products of about 2^19).
  const double m = static_cast<float>(2483.47 / 8388608.0);
  const AccRange r{-(1 << 21), 1 << 21};
  passes::RequantFigures fig;
  const auto rq = passes::derive_requant({m}, {r}, -128, "l", -128, 127, &fig);
  EXPECT_LT(rq.acc_offset[0], -400000);  // about -128 / M
  EXPECT_EQ(fig.scale[0], m);
  EXPECT_EQ(fig.limbs[0], 2);
  EXPECT_TRUE(fig.inexact_channels.empty());
  check_channel(rq, 0, m, 0.0, all_in(r), "zp -128");
  EXPECT_EQ(runtime::requantize(0, rq, 0), -128);
  EXPECT_EQ(runtime::requantize(1 << 21, rq, 0), 127);
}

// The former derivation (pre_shift p, then multiplier and shift) rounded twice:
// x = (acc + 2^(p-1)) >> p, then (x * m + 2^(s-1)) >> s. For this layer it chose p = 2,
// m = 5159, s = 20 (tests/compiler/test_requant.cc before this change). Exhaustively over
// |acc| <= 2^20 that chain differs from rounding acc * 5159 / 2^22 (its own scale) once in 253 of
// the 2,097,153 accumulators, and from round(acc * M) in 259. A one-limb chain of the largest
// shift (M' = 20636 / 2^24, |M' - M| = 9e-9) differed from round(acc * M) in 18; the derived
// chain never does.
TEST(Requant, FormerPreShiftChainRoundedTwiceTheNewOneOnce) {
  const double m = 0.00123;
  const AccRange r{-(1 << 20), 1 << 20};
  auto old_chain = [](int64_t acc) {
    const int64_t x = (acc + 2) >> 2;
    return static_cast<int>(std::clamp<int64_t>((x * 5159 + (1 << 19)) >> 20, -128, 127));
  };
  runtime::Requant old_scale;  // one rounding at the former chain's own scale 5159 / 2^22
  old_scale.multiplier = {5159};
  old_scale.shift = {22};
  runtime::Requant one_limb;  // one rounding at M' = 20636 / 2^24
  one_limb.multiplier = {20636};
  one_limb.shift = {24};
  int64_t old_twice = 0, old_vs_m = 0, new_vs_m = 0, new_vs_own = 0, one_limb_vs_m = 0;
  const auto rq = passes::derive_requant({m}, {r}, 0, "l");
  for (int64_t acc = r.lo; acc <= r.hi; ++acc) {
    const int o = old_chain(acc);
    old_twice += o != exact_requant(old_scale, 0, acc);
    old_vs_m += o != ideal_requant(m, acc, 0, -128, 127);
    one_limb_vs_m += exact_requant(one_limb, 0, acc) != ideal_requant(m, acc, 0, -128, 127);
    const int n = runtime::requantize(static_cast<int32_t>(acc), rq, 0);
    new_vs_own += n != exact_requant(rq, 0, acc);
    new_vs_m += n != ideal_requant(m, acc, 0, -128, 127);
  }
  EXPECT_EQ(old_twice, 253);
  EXPECT_EQ(old_vs_m, 259);
  EXPECT_EQ(one_limb_vs_m, 18);
  EXPECT_EQ(new_vs_own, 0);
  EXPECT_EQ(new_vs_m, 0);
}

TEST(Requant, PerChannelScalesAndLargeScales) {
  // Small ranges: one 32-bit multiplier per channel rounds exactly like M.
  passes::RequantFigures fig;
  const std::vector<AccRange> r = {{-5000, 5000}, {-5000, 5000}, {-5000, 5000}};
  const auto rq = passes::derive_requant({0.01, 0.02, 3.0}, r, 7, "l", -128, 127, &fig);
  EXPECT_TRUE(fig.inexact_channels.empty());
  EXPECT_EQ(rq.low_limbs(), 0u);
  for (size_t c = 0; c < 3; ++c) {
    SCOPED_TRACE(c);
    check_channel(rq, c, std::vector<double>{0.01, 0.02, 3.0}[c], 0.0, all_in(r[c]), "per-channel");
  }
  EXPECT_EQ(runtime::requantize(10, rq, 2), 37);  // 10 * 3 + 7
  // -150 * M with M the double nearest 0.01 (0.01000000000000000021) lies just below -1.5:
  // -2 + 7 (rounding -150 * 0.01 = -1.5 half up would give -1)
  EXPECT_EQ(runtime::requantize(-150, rq, 0), 5);
  EXPECT_EQ(runtime::requantize(4999, rq, 1), 107);  // round(99.98) + 7
  EXPECT_EQ(runtime::requantize(-5000, rq, 2), -128);
}

TEST(Requant, DegenerateScalesAndClips) {
  passes::RequantFigures fig;
  // M below 2^-32: every |acc * M| < 1/2, the output is the zero point.
  const auto tiny = passes::derive_requant({1e-12}, {{INT32_MIN, INT32_MAX}}, -4, "l", -128, 127, &fig);
  EXPECT_EQ(tiny.multiplier, (std::vector<int32_t>{0}));
  EXPECT_TRUE(fig.inexact_channels.empty());  // exact: round(acc * M) is the zero point too
  passes::derive_requant({1e-20, 1e30}, {{INT32_MIN, INT32_MAX}, {-7, 7}}, 3, "l", -128, 127, &fig);
  EXPECT_TRUE(fig.inexact_channels.empty());
  for (int32_t a : {INT32_MIN, -1, 0, 1, INT32_MAX}) EXPECT_EQ(runtime::requantize(a, tiny, 0), -4);
  // A power of two below 2^-31 next to ordinary ones keeps the power-of-two chain (shift 31).
  const auto pow2_tiny = passes::derive_requant({std::ldexp(1.0, -100), 0.25}, {{-5, 5}, {-1000, 1000}}, 3, "l",
                                                -128, 127, &fig);
  EXPECT_EQ(fig.form, "power of two");
  EXPECT_EQ(pow2_tiny.shift, (std::vector<int32_t>{31, 2}));
  EXPECT_EQ(runtime::requantize(5, pow2_tiny, 0), 3);
  EXPECT_EQ(runtime::requantize(-5, pow2_tiny, 0), 3);
  // M of 2^30 and more: every accumulator but 0 saturates.
  const auto huge = passes::derive_requant({1e12}, {{-1000, 1000}}, 2, "l");
  EXPECT_EQ(runtime::requantize(0, huge, 0), 2);
  EXPECT_EQ(runtime::requantize(1, huge, 0), 127);
  EXPECT_EQ(runtime::requantize(-1, huge, 0), -128);
  EXPECT_EQ(runtime::requantize(-1000, huge, 0), -128);
  // A clip of one value: the output is that value.
  const auto one = passes::derive_requant({0.01}, {{-100000, 100000}}, 0, "l", 9, 9);
  for (int32_t a : {-100000, 0, 777, 100000}) EXPECT_EQ(runtime::requantize(a, one, 0), 9);
  // A range that saturates entirely: clamped to its own end, the same saturated value.
  const auto sat = passes::derive_requant({0.37}, {{50000, 60000}}, 0, "l");
  for (int32_t a : {50000, 55555, 60000}) EXPECT_EQ(runtime::requantize(a, sat, 0), 127);
  // Scales that are not powers of two but exactly representable: M' = M.
  const auto exact = passes::derive_requant({0.375}, {{-300, 300}}, 0, "l", -128, 127, &fig);
  EXPECT_EQ(fig.max_error_lsb[0], 0.0);
  check_channel(exact, 0, 0.375, 0.0, all_in({-300, 300}), "0.375");
}

TEST(Requant, InvalidScalesAndRangesAreUserErrors) {
  // 0 (an underflowing float32 product) gives the zero point, as ONNX Runtime computes it
  EXPECT_EQ(runtime::requantize(12345, passes::derive_requant({0.0}, {{-20000, 20000}}, 7, "layer"), 0), 7);
  EXPECT_THROW(passes::derive_requant({-1.0}, {{0, 1}}, 0, "layer"), UserError);
  EXPECT_THROW(passes::derive_requant({std::nan("")}, {{0, 1}}, 0, "layer"), UserError);
  try {
    passes::derive_requant({0.5}, {{-5, int64_t{1} << 31}}, 0, "node 'c' (qconv2d)");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "node 'c' (qconv2d): accumulator range [-5, 2147483648] of channel 0 does not fit 32 bits (the layer's "
              "int32 accumulation would wrap; its weight or bias values are too large for its scales)");
  }
}

}  // namespace
}  // namespace tessel::compiler
