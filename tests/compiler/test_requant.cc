// Unit tests of the requant pass's parameter derivation.
#include <gtest/gtest.h>

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

TEST(Requant, GeneralScaleHas14BitMultiplierAndNoOverflow) {
  // M = 0.00123: floor(log2) = -10, so m = round(M * 2^23) in [2^13, 2^14) with total shift 23.
  // Bound 2^20: pre_shift p is the least with ((2^20 >> p) + 1) * 2^14 < 2^31, i.e. p = 4.
  const double m = 0.00123;
  const int64_t bound = int64_t{1} << 20;
  const auto rq = passes::derive_requant({m}, {bound}, 0, "l");
  EXPECT_EQ(rq.pre_shift, 4);
  ASSERT_EQ(rq.multiplier.size(), 1u);
  EXPECT_EQ(rq.multiplier[0], std::llround(m * (1 << 23)));  // 10318
  EXPECT_GE(rq.multiplier[0], 1 << 13);
  EXPECT_LT(rq.multiplier[0], 1 << 14);
  EXPECT_EQ(rq.shift[0], 19);  // 23 - pre_shift
  EXPECT_LT(((bound >> rq.pre_shift) + 1) * rq.multiplier[0], int64_t{1} << 31);
  // The fixed-point result matches acc * M within one unit for accumulators up to the bound.
  for (int32_t acc : {0, 1, -1, 813, -813, 100000, -100000, 1048575, -1048575}) {
    const int8_t got = runtime::requantize(acc, rq, 0);
    const double want = std::clamp(std::nearbyint(acc * m), -128.0, 127.0);
    EXPECT_LE(std::fabs(got - want), 1.0) << acc;
  }
}

TEST(Requant, PerChannelMultipliersAndLargeScales) {
  const auto rq = passes::derive_requant({0.01, 0.02, 3.0}, {5000, 5000, 5000}, 7, "l");
  EXPECT_EQ(rq.pre_shift, 0);  // (5000 + 1) * 2^14 < 2^31
  ASSERT_EQ(rq.multiplier.size(), 3u);
  // 0.01 = 0.64 * 2^-6 -> total shift 20; 0.02 -> 19; 3.0 = 0.75 * 2^2 -> 12.
  EXPECT_EQ(rq.shift, (std::vector<int32_t>{20, 19, 12}));
  EXPECT_EQ(rq.multiplier[0], std::llround(0.01 * (1 << 20)));
  EXPECT_EQ(rq.multiplier[1], std::llround(0.02 * (1 << 19)));
  EXPECT_EQ(rq.multiplier[2], 3 * (1 << 12));
  EXPECT_EQ(runtime::requantize(10, rq, 2), 37);  // 10 * 3 + 7
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
