// compiler/topi/accel: the GEMM intrinsic and the schedule templates for packed conv2d, packed
// dense and the residual qadd on the default configuration (lowered TIR goldens), the sizes of
// their knob spaces, and the UserErrors for knob values that do not fit the scratchpads.
#include <gtest/gtest.h>

#include "compiler/te/lower.h"
#include "compiler/tir/printer.h"
#include "compiler/tir/verifier.h"
#include "compiler/topi/accel/schedule.h"
#include "tests/te/te_test_util.h"
#include "tests/tir/tir_test_util.h"

namespace tessel::topi::accel {
namespace {

using te::testing::user_error_of;
using tir::DataType;

std::vector<tir::Expr> S(std::initializer_list<int64_t> l) {
  std::vector<tir::Expr> v;
  for (int64_t x : l) v.push_back(tir::Expr(x));
  return v;
}

/// The point of `space` with the given inner sizes of its splits and knob values (by name).
te::ConfigEntity pick(const te::ConfigSpace& space, const std::map<std::string, int64_t>& want) {
  for (int64_t i = 0; i < space.size(); ++i) {
    te::ConfigEntity e = space.get(i);
    bool ok = true;
    for (const te::SubSpace& sub : space.subspaces()) {
      auto it = want.find(sub.name);
      if (it == want.end()) continue;
      const int64_t v = sub.kind == te::KnobKind::kSplit ? e.split(sub.name)[1] : e.knob(sub.name);
      ok = ok && v == it->second;
    }
    if (ok) return e;
  }
  ADD_FAILURE() << "no such point";
  return space.get(0);
}

RequantParams small_rq() {
  RequantParams rq;
  rq.multiplier = {1 << 10};
  rq.round = {1 << 13};
  rq.shift = {14};
  rq.out_add = {-3};
  return rq;
}

Conv2dLayer small_conv() {
  Conv2dLayer l;
  l.x = te::placeholder(S({1, 2, 4, 4, 1, 16}), DataType::int8(), "x");
  l.w = te::placeholder(S({2, 2, 3, 3, 16, 16}), DataType::int8(), "w");
  l.attrs.pad_top = l.attrs.pad_left = l.attrs.pad_bottom = l.attrs.pad_right = 1;
  l.rq = small_rq();
  return l;
}

int64_t divisors(int64_t n) {
  int64_t c = 0;
  for (int64_t d = 1; d <= n; ++d) c += n % d == 0;
  return c;
}

TEST(TopiAccelSchedule, Conv2dGolden) {
  const isa::HwConfig hw;
  Conv2dLayer l = small_conv();
  te::ConfigSpace space;
  conv2d_config_space(l, space);
  EXPECT_EQ(space.size(), divisors(2) * divisors(4) * divisors(4) * divisors(2) * 2);
  const te::ConfigEntity cfg = pick(space, {{"tile_oc", 1}, {"tile_h", 2}, {"tile_w", 4}, {"tile_ic", 1}, {"oc_nthread", 2}});
  ScheduledOp op = schedule_conv2d(l, hw, cfg);
  tir::PrimFunc f = te::lower(op.schedule, op.args, "conv2d");
  EXPECT_TRUE(tir::verify(f).empty());
  tir::testing::expect_golden_in("topi", "accel_conv2d.tir", tir::to_text(f));
}

TEST(TopiAccelSchedule, DenseGolden) {
  const isa::HwConfig hw;
  DenseLayer l;
  l.x = te::placeholder(S({1, 4, 1, 16}), DataType::int8(), "x");
  l.w = te::placeholder(S({4, 4, 16, 16}), DataType::int8(), "w");
  l.rq = small_rq();
  te::ConfigSpace space;
  dense_config_space(l, space);
  EXPECT_EQ(space.size(), divisors(4) * divisors(4) * 2);
  const te::ConfigEntity cfg = pick(space, {{"tile_oc", 2}, {"tile_ic", 2}, {"oc_nthread", 1}});
  ScheduledOp op = schedule_dense(l, hw, cfg);
  tir::PrimFunc f = te::lower(op.schedule, op.args, "dense");
  EXPECT_TRUE(tir::verify(f).empty());
  tir::testing::expect_golden_in("topi", "accel_dense.tir", tir::to_text(f));
}

TEST(TopiAccelSchedule, QaddGolden) {
  const isa::HwConfig hw;
  QaddLayer l;
  l.a = te::placeholder(S({1, 2, 4, 4, 1, 16}), DataType::int8(), "a");
  l.b = te::placeholder(S({1, 2, 4, 4, 1, 16}), DataType::int8(), "b");
  l.a_zero_point = 3;
  l.a_multiplier = 3;
  l.b_zero_point = -2;
  l.b_multiplier = 5;
  l.rq.round = {2};
  l.rq.shift = {2};
  l.rq.out_add = {1};
  te::ConfigSpace space;
  qadd_config_space(l, space);
  EXPECT_EQ(space.size(), divisors(4));
  ScheduledOp op = schedule_qadd(l, hw, pick(space, {{"tile_h", 2}}));
  tir::PrimFunc f = te::lower(op.schedule, op.args, "qadd");
  EXPECT_TRUE(tir::verify(f).empty());
  tir::testing::expect_golden_in("topi", "accel_qadd.tir", tir::to_text(f));
}

TEST(TopiAccelSchedule, KnobValuesThatDoNotFit) {
  const isa::HwConfig hw;
  Conv2dLayer l;
  l.x = te::placeholder(S({1, 8, 32, 32, 1, 16}), DataType::int8(), "x");
  l.w = te::placeholder(S({8, 8, 3, 3, 16, 16}), DataType::int8(), "w");
  l.attrs.pad_top = l.attrs.pad_left = l.attrs.pad_bottom = l.attrs.pad_right = 1;
  l.rq = small_rq();
  te::ConfigSpace space;
  conv2d_config_space(l, space);
  EXPECT_EQ(space.size(), divisors(8) * divisors(32) * divisors(32) * divisors(8) * 2);
  EXPECT_EQ(user_error_of([&] {
              schedule_conv2d(l, hw, pick(space, {{"tile_oc", 1}, {"tile_h", 32}, {"tile_w", 32}, {"tile_ic", 8}, {"oc_nthread", 1}}));
            }),
            "conv2d template: local.inp_buffer needs 9248 rows for knobs tile_ic=8, tile_h=32, tile_w=32 (input window "
            "34 x 34), capacity 2048 rows");
  {
    Conv2dLayer big;
    big.x = te::placeholder(S({1, 16, 8, 8, 1, 16}), DataType::int8(), "x");
    big.w = te::placeholder(S({16, 16, 3, 3, 16, 16}), DataType::int8(), "w");
    big.attrs.pad_top = big.attrs.pad_left = big.attrs.pad_bottom = big.attrs.pad_right = 1;
    big.rq = small_rq();
    te::ConfigSpace bs;
    conv2d_config_space(big, bs);
    EXPECT_EQ(user_error_of([&] {
                schedule_conv2d(big, hw, pick(bs, {{"tile_oc", 16}, {"tile_h", 1}, {"tile_w", 1}, {"tile_ic", 16}, {"oc_nthread", 1}}));
              }),
              "conv2d template: local.wgt_buffer needs 2304 rows for knobs oc_nthread=1, tile_oc=16, tile_ic=16 (kernel 3 "
              "x 3), capacity 1024 rows");
  }
  EXPECT_EQ(user_error_of([&] {
              schedule_conv2d(l, hw, pick(space, {{"tile_oc", 4}, {"tile_h", 8}, {"tile_w", 16}, {"tile_ic", 1}, {"oc_nthread", 2}}));
            }),
            "conv2d template: local.acc_buffer needs 7168 rows for knobs oc_nthread=2, tile_oc=4, tile_h=8, tile_w=16 (7 "
            "acc stages), capacity 2048 rows");
  EXPECT_EQ(user_error_of([&] {
              schedule_conv2d(l, hw, pick(space, {{"tile_oc", 8}, {"tile_h", 1}, {"tile_w", 1}, {"tile_ic", 1}, {"oc_nthread", 2}}));
            }),
            "conv2d template: knob oc_nthread=2 does not divide the 1 outer channel-block iterations (tile_oc=8)");
  RequantParams pc = small_rq();
  pc.shift = {1, 2};
  l.rq = pc;
  EXPECT_EQ(user_error_of([&] { schedule_conv2d(l, hw, space.get(0)); }), "conv2d template: requantisation field shift has 2 entries; the template needs one (per-tensor)");
  l.rq = small_rq();
  l.rq.multiplier = {1 << 20};
  EXPECT_EQ(user_error_of([&] { schedule_conv2d(l, hw, space.get(0)); }), "conv2d template: requantisation step requant.mul has immediate 1048576, outside the ALU's 16-bit range");
}

}  // namespace
}  // namespace tessel::topi::accel
