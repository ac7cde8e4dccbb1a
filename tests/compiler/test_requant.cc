// Unit tests of the requant pass's parameter derivation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "compiler/passes/requant.h"
#include "support/error.h"

namespace tessel::compiler {
namespace {

TEST(Requant, PowerOfTwoScalesUseOnlyShifts) {
  const auto rq = passes::derive_requant({0.25, 0.0078125}, {1000, 1000}, -3, "l");
  EXPECT_EQ(rq.pre_shift, 0);
  EXPECT_EQ(rq.multiplier, (std::vector<int32_t>{1}));
  EXPECT_EQ(rq.shift, (std::vector<int32_t>{2, 7}));
  EXPECT_EQ(rq.out_zero_point, -3);
  EXPECT_EQ(rq.clip_lo, -128);
  EXPECT_EQ(rq.clip_hi, 127);
  // One value for all channels collapses to one entry.
  const auto one = passes::derive_requant({0.5, 0.5}, {10, 10}, 0, "l");
  EXPECT_EQ(one.shift, (std::vector<int32_t>{1}));
}

TEST(Requant, GeneralScalePicksTheLeastErrorPreShift) {
  // M = 0.00123, bound 2^20. For pre_shift p the multiplier gets the largest shift s with
  // ((2^20 >> p) + 1) * m + 2^(s-1) < 2^31, and the chain's error is 2^(p-1) * M (rounding acc to
  // 2^p) + 16 * |m / 2^(p+s) - M| / M. p = 0: m = 1290, s = 20, error 0.0031; p = 1: m = 2579,
  // 0.0043; p = 2: m = round(M * 2^22) = 5159, s = 20 (s = 21 would need m = 10318 and
  // 262145 * 10318 > 2^31), 0.0025; p = 3: 0.0049; larger p only adds pre_shift error.
  const double m = 0.00123;
  const int64_t bound = int64_t{1} << 20;
  const auto rq = passes::derive_requant({m}, {bound}, 0, "l");
  EXPECT_EQ(rq.pre_shift, 2);
  EXPECT_EQ(rq.multiplier, (std::vector<int32_t>{5159}));
  EXPECT_EQ(rq.shift, (std::vector<int32_t>{20}));
  EXPECT_LE(((bound >> rq.pre_shift) + 1) * rq.multiplier[0] + (1 << 19), (int64_t{1} << 31) - 1);
  // The fixed-point result matches round(acc * M) wherever acc * M is not within the error
  // bound (0.0027) of a rounding boundary, for accumulators up to the bound.
  int checked = 0;
  for (int32_t acc = -1048575; acc <= 1048575; acc += 997) {
    const double v = acc * m;
    if (std::fabs(v - std::floor(v) - 0.5) < 0.0027) continue;
    const int8_t got = runtime::requantize(acc, rq, 0);
    const double want = std::clamp(std::nearbyint(v), -128.0, 127.0);
    EXPECT_EQ(got, want) << acc;
    ++checked;
  }
  EXPECT_GT(checked, 2000);
}

TEST(Requant, PerChannelMultipliersAndLargeScales) {
  // Bound 5000 leaves room for 18-19 bit multipliers without a pre_shift:
  // 0.01 * 2^25 = 335544.32 -> 335544 (5001 * 335544 + 2^24 < 2^31, s = 26 would overflow);
  // 0.02 * 2^24 -> 335544; 3.0 * 2^17 = 393216 exactly.
  const auto rq = passes::derive_requant({0.01, 0.02, 3.0}, {5000, 5000, 5000}, 7, "l");
  EXPECT_EQ(rq.pre_shift, 0);
  EXPECT_EQ(rq.multiplier, (std::vector<int32_t>{335544, 335544, 393216}));
  EXPECT_EQ(rq.shift, (std::vector<int32_t>{25, 24, 17}));
  EXPECT_EQ(runtime::requantize(10, rq, 2), 37);    // 10 * 3 + 7
  EXPECT_EQ(runtime::requantize(-150, rq, 0), 6);   // -150 * 335544 / 2^25 = -1.4999986 -> -1, + 7
  EXPECT_EQ(runtime::requantize(4999, rq, 1), 107); // round(99.98) + 7
}

TEST(Requant, InvalidScalesAreUserErrors) {
  EXPECT_THROW(passes::derive_requant({0.0}, {1}, 0, "layer"), UserError);
  EXPECT_THROW(passes::derive_requant({-1.0}, {1}, 0, "layer"), UserError);
  EXPECT_THROW(passes::derive_requant({std::nan("")}, {1}, 0, "layer"), UserError);
  try {
    passes::derive_requant({0.5}, {int64_t{1} << 31}, 0, "node 'c' (qconv2d)");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "node 'c' (qconv2d): accumulator bound 2147483648 of channel 0 does not fit 32 bits");
  }
}

}  // namespace
}  // namespace tessel::compiler
