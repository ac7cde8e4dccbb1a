// compiler/topi/accel: the GEMM intrinsic and the schedule templates for packed conv2d, packed
// dense and the residual qadd on the default configuration (lowered TIR goldens), the sizes of
// their knob spaces, and the UserErrors for knob values that do not fit the scratchpads; every
// point of the small layers' spaces run on the tir reference interpreter (accel.gemm_uop executed on the
// scratchpad buffers it points at) against runtime/qnn.h bit for bit.
#include <algorithm>

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/backend/accel/tir/accel_tir.h"
#include "compiler/te/lower.h"
#include "compiler/tir/printer.h"
#include "compiler/tir/verifier.h"
#include "compiler/topi/accel/schedule.h"
#include "compiler/target/accel_intrin.h"
#include "runtime/device.h"
#include "support/error.h"
#include "tests/te/te_test_util.h"
#include "tests/tir/tir_test_util.h"
#include "tests/topi/accel_test_util.h"
#include "tests/topi/topi_test_util.h"

namespace tessel::topi::accel {
namespace {

using namespace accel_testing;  // NOLINT(google-build-using-namespace)
using te::testing::user_error_of;
using tir::DataType;


TEST(TopiAccelSchedule, Conv2dGolden) {
  const isa::HwConfig hw;
  Conv2dLayer l = small_conv();
  te::ConfigSpace space;
  conv2d_config_space(l, space);
  EXPECT_EQ(space.size(), divisors(2) * divisors(4) * divisors(4) * divisors(2) * 2 * 2);
  const te::ConfigEntity cfg = pick(space, {{"tile_oc", 1}, {"tile_h", 2}, {"tile_w", 4}, {"tile_ic", 1}, {"oc_nthread", 2}});
  ScheduledOp op = schedule_conv2d(l, hw, cfg);
  tir::PrimFunc f = lower_template(op, "conv2d");
  EXPECT_TRUE(tir::verify(f).empty());
  tir::testing::expect_golden_in("topi", "accel_conv2d.tir", tir::to_text(f));
}

// Virtual threads over the row tiles (h_nthread 2): the cthread loop outermost, every buffer
// replicated (each thread loads its own input window and weights).
TEST(TopiAccelSchedule, Conv2dRowThreadsGolden) {
  const isa::HwConfig hw;
  Conv2dLayer l = small_conv();
  te::ConfigSpace space;
  conv2d_config_space(l, space);
  const te::ConfigEntity cfg =
      pick(space, {{"tile_oc", 2}, {"tile_h", 2}, {"tile_w", 4}, {"tile_ic", 2}, {"oc_nthread", 1}, {"h_nthread", 2}});
  ScheduledOp op = schedule_conv2d(l, hw, cfg);
  tir::PrimFunc f = lower_template(op, "conv2d");
  EXPECT_TRUE(tir::verify(f).empty());
  tir::testing::expect_golden_in("topi", "accel_conv2d_h_nthread.tir", tir::to_text(f));
  // 4 output rows in tiles of 2: the outer row count 1 is not divisible by 2 threads
  EXPECT_EQ(user_error_of([&] {
              schedule_conv2d(l, hw, pick(space, {{"tile_oc", 2}, {"tile_h", 4}, {"tile_w", 4}, {"tile_ic", 2},
                                                  {"oc_nthread", 1}, {"h_nthread", 2}}));
            }),
            "conv2d template: knob h_nthread=2 does not divide the 1 outer row iterations (tile_h=4)");
}

// With one input-channel chunk the weights are loaded once per output-channel tile and reused by
// every row and column tile; with two chunks every spatial tile loads each chunk's weights.
TEST(TopiAccelSchedule, Conv2dWeightsReusedAcrossSpatialTilesWithOneChunk) {
  const isa::HwConfig hw;
  const Conv2dLayer l = small_conv();  // 2 output blocks, 2 input blocks, 4 x 4 output
  te::ConfigSpace space;
  conv2d_config_space(l, space);
  auto wgt_loads = [&](int64_t tile_ic, int64_t nthread) {
    // 2 output-channel tiles of 1 block, 2 x 2 = 4 spatial tiles of 2 x 2
    const te::ConfigEntity cfg =
        pick(space, {{"tile_oc", 1}, {"tile_h", 2}, {"tile_w", 2}, {"tile_ic", tile_ic}, {"oc_nthread", nthread}});
    const ScheduledOp op = schedule_conv2d(l, hw, cfg);
    std::vector<compiler::accel_tir::SegmentSpec> segs = {
        {"x", "x", isa::SegmentKind::kInput, 0, isa::MemType::kInp},
        {"w", "w", isa::SegmentKind::kInput, 0, isa::MemType::kWgt},
        {op.out.name(), op.out.name(), isa::SegmentKind::kOutput, 0, isa::MemType::kOut}};
    const isa::Program prog = compiler::accel_tir::build_accel_program(lower_template(op, "f"), hw, segs);
    int64_t n = 0;
    for (const isa::Instruction& in : prog.insns) {
      n += in.opcode == isa::Opcode::kLoad && in.mem_type == isa::MemType::kWgt;
    }
    return n;
  };
  // one chunk (tile_ic = both input blocks): per output-channel tile one load (its input blocks
  // and kernel taps are one run of 2 x 3 x 3 elements), 2 in all, whatever the spatial tiles
  EXPECT_EQ(wgt_loads(2, 1), 2);
  EXPECT_EQ(wgt_loads(2, 2), 2);
  // two chunks: 2 output tiles x 4 spatial tiles x 2 chunks, one input block each
  EXPECT_EQ(wgt_loads(1, 1), 16);
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
  tir::PrimFunc f = lower_template(op, "dense");
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
  tir::PrimFunc f = lower_template(op, "qadd");
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
  EXPECT_EQ(space.size(), divisors(8) * divisors(32) * divisors(32) * divisors(8) * 2 * 2);
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
              schedule_conv2d(l, hw, pick(space, {{"tile_oc", 4}, {"tile_h", 32}, {"tile_w", 16}, {"tile_ic", 1}, {"oc_nthread", 2}}));
            }),
            "conv2d template: local.acc_buffer needs 4096 rows for knobs oc_nthread=2, tile_oc=4, tile_h=32, tile_w=16 (1 "
            "acc buffers), capacity 2048 rows");
  EXPECT_EQ(user_error_of([&] {
              schedule_conv2d(l, hw, pick(space, {{"tile_oc", 8}, {"tile_h", 1}, {"tile_w", 1}, {"tile_ic", 1}, {"oc_nthread", 2}}));
            }),
            "conv2d template: knob oc_nthread=2 does not divide the 1 outer channel-block iterations (tile_oc=8)");
  RequantParams pc = small_rq();
  pc.shift = {1, 2};
  l.rq = pc;
  EXPECT_EQ(user_error_of([&] { schedule_conv2d(l, hw, space.get(0)); }),
            "conv2d template: requantize requant: shift has 2 entries, expected 1 or 128 (channels)");
  // the constants' rows count: a per-channel multiplier (tile_oc rows per thread), a wide
  // clamp bound (one row) and the zero-point border tensor (one more tile)
  l.rq = small_rq();
  l.rq.multiplier.assign(128, 1 << 10);
  l.rq.multiplier[5] = 1 << 20;
  l.rq.acc_max = {1 << 20};
  const te::ConfigEntity fits =
      pick(space, {{"tile_oc", 4}, {"tile_h", 8}, {"tile_w", 16}, {"tile_ic", 1}, {"oc_nthread", 2}});
  EXPECT_NO_THROW(schedule_conv2d(l, hw, fits));  // 2 * 4 * 128 + 2 * 4 + 1 = 1033 rows
  l.x_zero_point = 3;
  EXPECT_EQ(user_error_of([&] { schedule_conv2d(l, hw, fits); }),
            "conv2d template: x_zero_point 3 needs the weights' values: w_values has 0 entries, w w has 147456 "
            "elements");
  l.w_values.assign(147456, 1);
  EXPECT_EQ(user_error_of([&] { schedule_conv2d(l, hw, fits); }),
            "conv2d template: local.acc_buffer needs 2057 rows for knobs oc_nthread=2, tile_oc=4, tile_h=8, "
            "tile_w=16 (1 acc buffers, 1 zero-point init buffer, 1 channel constants, 1 uniform constants), "
            "capacity 2048 rows");
  l.x_zero_point = 200;
  EXPECT_EQ(user_error_of([&] { schedule_conv2d(l, hw, fits); }),
            "conv2d template: x_zero_point 200 is outside [-128, 127]");
  l.x_zero_point = 0;
  l.bias.assign(20, 0);
  EXPECT_EQ(user_error_of([&] { schedule_conv2d(l, hw, fits); }),
            "conv2d template: bias has 20 entries, expected 128 (output channels: 8 blocks of 16)");
}



TEST(TopiAccelSchedule, Conv2dEveryPointMatchesQconv2d) {
  const isa::HwConfig hw;
  std::mt19937 rng(41);
  Conv2dLayer l;
  l.x = te::placeholder(S({1, 2, 5, 4, 1, 16}), DataType::int8(), "x");
  l.w = te::placeholder(S({2, 2, 3, 3, 16, 16}), DataType::int8(), "w");
  l.attrs.stride_h = 1;
  l.attrs.pad_top = 1;
  l.attrs.pad_left = 2;
  l.attrs.pad_bottom = 0;
  l.attrs.pad_right = 1;
  const runtime::Requant rq = per_tensor_requant();
  l.rq = testing::params_of(rq, 32);
  // NCHW data: 1 x 30 channels (two blocks of 16, the last one padded), weights 20 x 30.
  const int64_t ic = 30, oc = 20;
  runtime::QConv2dParams p;
  p.ic = ic;
  p.ih = 5;
  p.iw = 4;
  p.oc = oc;
  p.kh = p.kw = 3;
  p.pad_top = 1;
  p.pad_left = 2;
  p.pad_right = 1;
  p.rq = rq;
  const testing::Data xv = testing::random_data(rng, static_cast<size_t>(ic * 5 * 4), -128, 127);
  const testing::Data wv = testing::random_data(rng, static_cast<size_t>(oc * ic * 9), -128, 127);
  const auto x8 = testing::to<int8_t>(xv), w8 = testing::to<int8_t>(wv);
  std::vector<int32_t> bias(static_cast<size_t>(oc), 0);
  std::vector<int8_t> want(static_cast<size_t>(oc * p.oh() * p.ow()));
  runtime::qconv2d_reference(p, x8.data(), w8.data(), bias.data(), want.data());
  std::vector<int8_t> xp(2 * 16 * 5 * 4), wp(2 * 16 * 2 * 16 * 9);
  runtime::cpu::pack_nchwnc(x8.data(), 1, ic, 5, 4, 1, 16, xp.data());
  runtime::cpu::pack_nchwnc(w8.data(), oc, ic, 3, 3, 16, 16, wp.data());
  te::ConfigSpace space;
  conv2d_config_space(l, space, te::SplitPolicy::kFactors);
  int ran = 0;
  for (int64_t i = 0; i < space.size(); ++i) {
    const te::ConfigEntity cfg = space.get(i);
    if (!threads_divide(cfg, 2, p.oh())) continue;
    const auto got = testing::to<int8_t>(run_instance(hw, schedule_conv2d(l, hw, cfg), {testing::from(xp), testing::from(wp)}, cfg.to_json()));
    std::vector<int8_t> unpacked(want.size());
    runtime::cpu::unpack_nchwnc(got.data(), 1, oc, p.oh(), p.ow(), 1, 16, unpacked.data());
    EXPECT_EQ(unpacked, want) << cfg.to_json();
    ++ran;
  }
  // oh 4, ow 5: tile_oc 1 (oc_nthread 1 or 2: two outer channel blocks), 2 (1 thread) x tile_h 1
  // (h_nthread 1 or 2), 2 (1 or 2), 4 (1) x tile_w 1, 5 x tile_ic 1, 2
  EXPECT_EQ(ran, 3 * 5 * 2 * 2);
  expect_every_point_built();
}

/// Dense on every point, with the one-limb chain and with a low limb (whose copy of the
/// clamped accumulator stays out of place).
class DenseEveryPoint : public ::testing::TestWithParam<bool> {};

TEST_P(DenseEveryPoint, MatchesQconv2d) {
  const isa::HwConfig hw;
  std::mt19937 rng(43);
  const int64_t k = 40, n = 60;
  DenseLayer l;
  l.x = te::placeholder(S({1, 3, 1, 16}), DataType::int8(), "x");
  l.w = te::placeholder(S({4, 3, 16, 16}), DataType::int8(), "w");
  runtime::Requant rq = per_tensor_requant();
  if (GetParam()) {
    rq.low_multiplier = {{77}};
    rq.low_shift = {{3}};
  }
  l.rq = testing::params_of(rq, 64);
  ASSERT_EQ(l.rq.low.size(), GetParam() ? 1u : 0u);
  runtime::QConv2dParams p;
  p.ic = k;
  p.ih = p.iw = 1;
  p.oc = n;
  p.rq = rq;
  const testing::Data xv = testing::random_data(rng, static_cast<size_t>(k), -128, 127);
  const testing::Data wv = testing::random_data(rng, static_cast<size_t>(n * k), -128, 127);
  const auto x8 = testing::to<int8_t>(xv), w8 = testing::to<int8_t>(wv);
  std::vector<int32_t> bias(static_cast<size_t>(n), 0);
  std::vector<int8_t> want(static_cast<size_t>(n));
  runtime::qconv2d_reference(p, x8.data(), w8.data(), bias.data(), want.data());
  std::vector<int8_t> xp(48), wp(64 * 48);
  runtime::cpu::pack_nchwnc(x8.data(), 1, k, 1, 1, 1, 16, xp.data());
  runtime::cpu::pack_nchwnc(w8.data(), n, k, 1, 1, 16, 16, wp.data());
  te::ConfigSpace space;
  dense_config_space(l, space, te::SplitPolicy::kFactors);
  int ran = 0;
  for (int64_t i = 0; i < space.size(); ++i) {
    const te::ConfigEntity cfg = space.get(i);
    if (!threads_divide(cfg, 4, 0)) continue;  // dense: no rows
    const auto got = testing::to<int8_t>(run_instance(hw, schedule_dense(l, hw, cfg), {testing::from(xp), testing::from(wp)}, cfg.to_json()));
    std::vector<int8_t> unpacked(want.size());
    runtime::cpu::unpack_nchwnc(got.data(), 1, n, 1, 1, 1, 16, unpacked.data());
    EXPECT_EQ(unpacked, want) << cfg.to_json();
    ++ran;
  }
  EXPECT_EQ(ran, 3 * 2 * 2 - 2);  // tile_oc 1, 2, 4; oc_nthread 2 needs an even outer count
  expect_every_point_built();
  // In place except the limb's copy: the accumulator and (with the limb) one more acc buffer.
  const tir::PrimFunc f = lower_template(schedule_dense(l, hw, space.get(0)), "dense");
  int acc_buffers = 0;
  std::function<void(const tir::Stmt&)> walk = [&](const tir::Stmt& st) {
    if (st.kind() == tir::StmtKind::kAllocate) {
      const auto* a = st.as<tir::AllocateNode>();
      acc_buffers += a->buffer->scope == tir::MemScope::kAcc;
      walk(a->body);
    } else if (st.kind() == tir::StmtKind::kFor) {
      walk(st.as<tir::ForNode>()->body);
    } else if (st.kind() == tir::StmtKind::kAttrStmt) {
      walk(st.as<tir::AttrStmtNode>()->body);
    } else if (st.kind() == tir::StmtKind::kSeqStmt) {
      for (const tir::Stmt& x : st.as<tir::SeqStmtNode>()->seq) walk(x);
    }
  };
  walk(f->body);
  EXPECT_EQ(acc_buffers, GetParam() ? 2 : 1);
}

INSTANTIATE_TEST_SUITE_P(TopiAccelSchedule, DenseEveryPoint, ::testing::Values(false, true));

TEST(TopiAccelSchedule, QaddEveryPointMatchesRequantChain) {
  const isa::HwConfig hw;
  std::mt19937 rng(47);
  QaddLayer l;
  l.a = te::placeholder(S({1, 2, 6, 3, 1, 16}), DataType::int8(), "a");
  l.b = te::placeholder(S({1, 2, 6, 3, 1, 16}), DataType::int8(), "b");
  l.a_zero_point = 4;
  l.a_multiplier = 300;
  l.b_zero_point = -7;
  l.b_multiplier = 170;
  runtime::Requant rq;
  rq.shift = {9};
  rq.out_zero_point = 2;
  l.rq = testing::params_of(rq, 1);
  const runtime::RequantChannel ch = runtime::requant_channel(rq, 0);
  const testing::Data av = testing::random_data(rng, 576, -128, 127), bv = testing::random_data(rng, 576, -128, 127);
  testing::Data want;
  for (size_t i = 0; i < av.size(); ++i) {
    want.push_back(ch.apply(static_cast<int32_t>((av[i] - 4) * 300 + (bv[i] + 7) * 170)));
  }
  te::ConfigSpace space;
  qadd_config_space(l, space);
  for (int64_t i = 0; i < space.size(); ++i) {
    EXPECT_EQ(run_instance(hw, schedule_qadd(l, hw, space.get(i)), {av, bv}, space.get(i).to_json(), true), want)
        << space.get(i).to_json();
  }
  expect_every_point_built();
}

/// The general scheme (compiler/passes/qadd_scheme.h): multipliers and round term beyond the
/// ALU's 16-bit immediate become int32 constants of one acc element, loaded once at the root and
/// read as vector operands; every point of the space gives the int32 chain's value.
TEST(TopiAccelSchedule, QaddWideSchemeConstantsInAcc) {
  const isa::HwConfig hw;
  std::mt19937 rng(53);
  QaddLayer l;
  l.a = te::placeholder(S({1, 2, 4, 3, 1, 16}), DataType::int8(), "a");
  l.b = te::placeholder(S({1, 2, 4, 3, 1, 16}), DataType::int8(), "b");
  l.a_zero_point = -5;
  l.a_multiplier = 1812345;  // mobilenetv2's range: 1.8e5 .. 2e6
  l.b_zero_point = 9;
  l.b_multiplier = 183211;
  l.rq.round = {1 << 20};
  l.rq.shift = {21};
  l.rq.out_add = {-3};
  l.rq.clip_lo = -3;  // a fused relu
  const testing::Data av = testing::random_data(rng, 384, -128, 127), bv = testing::random_data(rng, 384, -128, 127);
  testing::Data want;
  for (size_t i = 0; i < av.size(); ++i) {
    const int64_t x = (av[i] + 5) * 1812345 + (bv[i] - 9) * 183211 + (1 << 20);
    want.push_back(std::clamp<int64_t>((x >> 21) - 3, -3, 127));
  }
  te::ConfigSpace space;
  qadd_config_space(l, space);
  for (int64_t i = 0; i < space.size(); ++i) {
    const ScheduledOp op = schedule_qadd(l, hw, space.get(i));
    // a_multiplier, b_multiplier, round: three constants, each one acc element of its value
    ASSERT_EQ(op.constants.size(), 3u);
    EXPECT_EQ(op.constants[0].tensor.name(), "qadd.a_multiplier");
    EXPECT_EQ(op.constants[1].tensor.name(), "qadd.b_multiplier");
    EXPECT_EQ(op.constants[2].tensor.name(), "qadd.round");
    EXPECT_EQ(op.constants[2].values, std::vector<int32_t>(16, 1 << 20));
    ASSERT_EQ(op.args.size(), 6u);  // a, b, the constants, the output
    std::vector<testing::Data> inputs = {av, bv};
    for (const ChannelConstant& c : op.constants) inputs.push_back(testing::from(c.values));
    EXPECT_EQ(run_instance(hw, op, inputs, space.get(i).to_json(), true), want) << space.get(i).to_json();
  }
  // the lowered form: constants copied once at the root, then MUL/ADD read their acc rows
  const ScheduledOp op = schedule_qadd(l, hw, pick(space, {{"tile_h", 2}}));
  tir::PrimFunc f = lower_template(op, "qadd");
  EXPECT_TRUE(tir::verify(f).empty());
  tir::testing::expect_golden_in("topi", "accel_qadd_wide.tir", tir::to_text(f));
}

/// A row that does not fit ACC names the constants among the rows it needs.
TEST(TopiAccelSchedule, QaddWideRowsCountTheConstants) {
  const isa::HwConfig hw;  // 2048 acc rows
  QaddLayer l;
  l.a = te::placeholder(S({1, 1, 2, 1024, 1, 16}), DataType::int8(), "a");
  l.b = te::placeholder(S({1, 1, 2, 1024, 1, 16}), DataType::int8(), "b");
  l.a_multiplier = 100000;
  l.rq.shift = {16};
  te::ConfigSpace space;
  qadd_config_space(l, space);
  EXPECT_EQ(user_error_of([&] { schedule_qadd(l, hw, pick(space, {{"tile_h", 1}})); }),
            "qadd template: local.acc_buffer needs 2049 rows for knobs tile_h=1 (1024 rows per stage, 2 acc "
            "buffers, 1 constant rows), capacity 2048 rows");
}

}  // namespace
}  // namespace tessel::topi::accel
