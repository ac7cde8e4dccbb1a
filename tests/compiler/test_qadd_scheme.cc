// The exact integer form of qadd (compiler/passes/qadd_scheme.h): every scheme found gives the
// CPU kernel's own output (runtime/cpu run_kernel "qadd") for all 65,536 operand pairs, on
// dyadic, random, tie-heavy and relu cases and on mobilenetv2-12-int8's ten residual adds; cases
// without a scheme return the reason.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "compiler/passes/qadd_scheme.h"
#include "runtime/cpu/kernels.h"
#include "tests/common/cpu_qadd.h"
#include "support/error.h"

namespace tessel::compiler {
namespace {

using passes::find_qadd_scheme;
using passes::QaddQuant;
using passes::QaddScheme;

/// The CPU kernel on all 65,536 pairs (a = qa, b = qb, pair index (qa + 128) * 256 + qb + 128).
std::vector<int8_t> kernel_all_pairs(const QaddQuant& q) {
  std::vector<int8_t> a(65536), b(65536);
  for (int i = 0; i < 65536; ++i) {
    a[static_cast<size_t>(i)] = static_cast<int8_t>(i / 256 - 128);
    b[static_cast<size_t>(i)] = static_cast<int8_t>(i % 256 - 128);
  }
  return ::tessel::testing::cpu_qadd({65536}, {q.a_scale, q.a_zero_point}, {q.b_scale, q.b_zero_point},
                                   {q.y_scale, q.y_zero_point}, q.relu, a, b);
}

/// Asserts the scheme equals the kernel on every pair and that no int32 step wraps.
void expect_exact(const QaddQuant& q, const QaddScheme& s) {
  const std::vector<int8_t> want = kernel_all_pairs(q);
  int mismatches = 0;
  for (int i = 0; i < 65536; ++i) {
    const int8_t qa = static_cast<int8_t>(i / 256 - 128), qb = static_cast<int8_t>(i % 256 - 128);
    mismatches += s.apply(qa, qb, q.a_zero_point, q.b_zero_point) != want[static_cast<size_t>(i)];
    const int64_t xa = int64_t{qa - q.a_zero_point} * s.a_multiplier, xb = int64_t{qb - q.b_zero_point} * s.b_multiplier;
    for (int64_t v : {xa, xb, xa + xb, xa + xb + s.round}) {
      ASSERT_GE(v, INT32_MIN);
      ASSERT_LE(v, INT32_MAX);
    }
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(s.y_zero_point, q.y_zero_point);
  EXPECT_EQ(s.clip_lo, q.relu ? q.y_zero_point : -128);
  EXPECT_EQ(s.clip_hi, 127);
}

TEST(QaddScheme, EqualScalesAreAPlainSum) {
  const QaddQuant q{0.25f, 0.25f, 0.25f, 3, -7, 5, false};
  const auto r = find_qadd_scheme(q);
  ASSERT_TRUE(r.scheme) << r.reason;
  EXPECT_EQ(r.scheme->shift, 0);
  EXPECT_EQ(r.scheme->a_multiplier, 1);
  EXPECT_EQ(r.scheme->b_multiplier, 1);
  EXPECT_EQ(r.scheme->round, 0);
  EXPECT_TRUE(r.scheme->fits_imm16());
  expect_exact(q, *r.scheme);
}

TEST(QaddScheme, QuarterScalesTieOnAQuarterOfThePairs) {
  // v = (3 qa + 5 qb) / 4: a quarter of the pairs are exact ties, rounded to even by the kernel
  const QaddQuant q{0.25f * 3 / 4, 0.25f * 5 / 4, 0.25f, 0, 0, 0, false};
  const auto r = find_qadd_scheme(q);
  EXPECT_FALSE(r.scheme);
  EXPECT_NE(r.reason.find("(16384 pairs are exact ties rounded to even)"), std::string::npos) << r.reason;
}

TEST(QaddScheme, IntegerRatiosAreExactAtShiftZero) {
  // sa / sy = 2, sb / sy = 3: x = 2 (qa - za) + 3 (qb - zb), no rounding at all
  const QaddQuant q{0.5f, 0.75f, 0.25f, 1, -2, 4, true};
  const auto r = find_qadd_scheme(q);
  ASSERT_TRUE(r.scheme) << r.reason;
  EXPECT_EQ(r.scheme->shift, 0);
  EXPECT_EQ(r.scheme->a_multiplier, 2);
  EXPECT_EQ(r.scheme->b_multiplier, 3);
  expect_exact(q, *r.scheme);
}

TEST(QaddScheme, HalfScalesTieToEvenHaveNoScheme) {
  // v = (qa + qb) / 2: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2: no floor shift rounds like that
  const QaddQuant q{0.5f, 0.5f, 1.0f, 0, 0, 0, false};
  const auto r = find_qadd_scheme(q);
  EXPECT_FALSE(r.scheme);
  EXPECT_NE(r.reason.find("no exact int32 scheme up to shift"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("pairs are exact ties rounded to even"), std::string::npos) << r.reason;
  EXPECT_EQ(r.reason.find(" 0 pairs are exact ties"), std::string::npos) << r.reason;
}

TEST(QaddScheme, ReluMakesNegativeTiesIrrelevant) {
  // with relu at zy = 127 every output is 127: any chain works
  const QaddQuant q{0.5f, 0.5f, 1.0f, 0, 0, 127, true};
  const auto r = find_qadd_scheme(q);
  ASSERT_TRUE(r.scheme) << r.reason;
  expect_exact(q, *r.scheme);
}

TEST(QaddScheme, RandomScalesAndZeroPoints) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> scale(0.01f, 0.2f);
  std::uniform_int_distribution<int> zp(-40, 40);
  int found = 0, imm16 = 0;
  for (int t = 0; t < 12; ++t) {
    const QaddQuant q{scale(rng), scale(rng), scale(rng), zp(rng), zp(rng), zp(rng), t % 3 == 0};
    const auto r = find_qadd_scheme(q);
    if (!r.scheme) {
      EXPECT_NE(r.reason.find("no exact int32 scheme"), std::string::npos) << r.reason;
      continue;
    }
    ++found;
    imm16 += r.scheme->fits_imm16();
    expect_exact(q, *r.scheme);
  }
  EXPECT_GE(found, 6);
  std::printf("[ schemes ] random: %d of 12 exact, %d with 16-bit immediates\n", found, imm16);
}

TEST(QaddScheme, MobilenetV2ResidualAdds) {
  // (sa, za, sb, zb, sy, zy) of mobilenetv2-12-int8's ten QLinearAdds of residual blocks
  const QaddQuant qs[] = {
      {0.03971019f, 0.04609474f, 0.057970688f, -21, -1, -3},   {0.035562083f, 0.028934143f, 0.04350751f, 4, 0, -20},
      {0.04350751f, 0.026068475f, 0.049828295f, -20, -2, -8},  {0.028401868f, 0.019568179f, 0.029870728f, 15, 2, 8},
      {0.029870728f, 0.016850423f, 0.031078013f, 8, 2, -2},    {0.031078013f, 0.033086453f, 0.03736598f, -2, 32, 11},
      {0.024124095f, 0.027948184f, 0.0318248f, -5, -13, -19},  {0.0318248f, 0.06331735f, 0.07048993f, -19, 14, -5},
      {0.06929498f, 0.06415011f, 0.121681474f, 21, -23, -9},   {0.121681474f, 0.1445715f, 0.23722179f, -9, 3, -18},
  };
  int found = 0;
  for (const QaddQuant& q : qs) {
    const auto r = find_qadd_scheme(q);
    if (!r.scheme) {
      std::printf("[ schemes ] none: %s\n", r.reason.c_str());
      continue;
    }
    ++found;
    expect_exact(q, *r.scheme);
    std::printf("[ schemes ] A=%d B=%d R=%d s=%d imm16=%d\n", r.scheme->a_multiplier, r.scheme->b_multiplier,
                r.scheme->round, r.scheme->shift, int(r.scheme->fits_imm16()));
  }
  std::printf("[ schemes ] mobilenetv2: %d of 10 exact\n", found);
  EXPECT_GE(found, 1);
}

TEST(QaddScheme, Errors) {
  EXPECT_THROW(find_qadd_scheme({0.0f, 1.0f, 1.0f, 0, 0, 0, false}), UserError);
  EXPECT_THROW(find_qadd_scheme({1.0f, 1.0f, 1.0f, 0, 200, 0, false}), UserError);
  try {
    find_qadd_scheme({1.0f, 1.0f, -1.0f, 0, 0, 0, false});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("scale of y is -1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessel::compiler
