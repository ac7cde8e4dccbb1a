// compiler/topi/accel: the conv2d and dense templates with what real layers need: per-channel
// requantisation with values beyond the ALU's 16-bit immediate (and low limbs), a bias and a
// non-zero input zero point (with and without padding touching the windows; stride 2; 1x1 and
// 3x3). Every knob point of each layer's space is built with build_accel_program, run on fsim and
// on the tir interpreter, and compared bit for bit with runtime/qnn.h qconv2d_reference, which
// runtime/cpu's qconv2d must match too; a lowered golden shows where the constants are loaded;
// the topi helpers of the zero-point terms on hand-computed values.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "compiler/tir/printer.h"
#include "compiler/tir/verifier.h"
#include "compiler/topi/accel/schedule.h"
#include "runtime/cpu/kernels.h"
#include "runtime/qnn.h"
#include "tests/te/te_test_util.h"
#include "tests/tir/tir_test_util.h"
#include "tests/topi/accel_test_util.h"
#include "tests/topi/topi_test_util.h"

namespace tessel::topi::accel {
namespace {

using namespace accel_testing;  // NOLINT(google-build-using-namespace)
using te::testing::user_error_of;
using tir::DataType;

/// A quantised layer in NCHW terms for the bias / zero-point / per-channel tests.
struct QLayer {
  int64_t ic = 16, ih = 1, iw = 1, oc = 16, kh = 1, kw = 1, sh = 1, sw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  int32_t zx = 0;
  size_t limbs = 0;
  bool dense = false;
};

/// A per-channel requantisation with wide values: multipliers beyond the 16-bit immediate on
/// every third channel (with a larger shift), a per-channel accumulator offset, a clamp whose
/// bounds are wide one-entry values and `limbs` per-channel low limbs.
runtime::Requant wide_requant(std::mt19937& rng, int64_t oc, size_t limbs) {
  runtime::Requant rq;
  std::uniform_int_distribution<int32_t> narrow(1 << 10, 1 << 14), wide(1 << 17, 1 << 19), off(-4000, 4000);
  rq.multiplier.clear();
  rq.shift.clear();
  rq.acc_offset.clear();
  for (int64_t c = 0; c < oc; ++c) {
    const bool w = c % 3 == 1;
    rq.multiplier.push_back(w ? wide(rng) : narrow(rng));
    rq.shift.push_back(w ? 27 : 20);
    rq.acc_offset.push_back(off(rng));
  }
  rq.acc_min = {-300000};
  rq.acc_max = {280000};
  for (size_t j = 0; j < limbs; ++j) {
    std::uniform_int_distribution<int32_t> lm(0, (1 << 9) - 1);
    std::vector<int32_t> m, sh;
    for (int64_t c = 0; c < oc; ++c) {
      m.push_back(lm(rng));
      sh.push_back(9);
    }
    rq.low_multiplier.push_back(m);
    rq.low_shift.push_back(sh);
  }
  rq.out_zero_point = -6;
  rq.clip_lo = -110;
  rq.clip_hi = 117;
  EXPECT_EQ(runtime::requant_problem(rq, oc), "");
  return rq;
}

/// Runs every point of the template's space for `q` (with per-channel wide requantisation,
/// bias and the input zero point) on the interpreter and fsim and compares each with
/// runtime/qnn.h's qconv2d_reference (which runtime/cpu's qconv2d must match too); returns the
/// points run and the kinds of the constants of the first one.
struct EveryPointResult {
  int ran = 0;
  std::vector<ChannelConstant::Kind> kinds;
  int64_t channel_rows = 0;  ///< the rows (fields) of the per-channel constant, 0 for none
  int ragged = 0;            ///< points run with a smaller last tile on some split
};
/// Under `policy` (kFactors: the divisor tiles only), every `stride`-th point; the points with
/// knob const_root 1 only with `both_const_root` (they double the run, which under ASan is
/// this suite's longest: the small layers take both, the larger ones the per-tile form).
EveryPointResult every_point_matches_reference(const QLayer& q, uint32_t seed,
                                               te::SplitPolicy policy = te::SplitPolicy::kFactors,
                                               int64_t stride = 1, bool both_const_root = false) {
  const isa::HwConfig hw;
  std::mt19937 rng(seed);
  const int64_t bi = hw.block_in(), bo = hw.block_out();
  const int64_t icb = (q.ic + bi - 1) / bi, ocb = (q.oc + bo - 1) / bo;
  runtime::QConv2dParams p;
  p.ic = q.ic;
  p.ih = q.ih;
  p.iw = q.iw;
  p.oc = q.oc;
  p.kh = q.kh;
  p.kw = q.kw;
  p.stride_h = q.sh;
  p.stride_w = q.sw;
  p.pad_top = q.pt;
  p.pad_left = q.pl;
  p.pad_bottom = q.pb;
  p.pad_right = q.pr;
  p.in_zero_point = q.zx;
  p.rq = wide_requant(rng, q.oc, q.limbs);
  const testing::Data xv = testing::random_data(rng, static_cast<size_t>(q.ic * q.ih * q.iw), -128, 127);
  const testing::Data wv = testing::random_data(rng, static_cast<size_t>(q.oc * q.ic * q.kh * q.kw), -9, 9);
  const auto x8 = testing::to<int8_t>(xv), w8 = testing::to<int8_t>(wv);
  std::vector<int32_t> bias;
  std::uniform_int_distribution<int32_t> bd(-6000, 6000);
  for (int64_t o = 0; o < q.oc; ++o) bias.push_back(bd(rng));
  const int64_t oh = p.oh(), ow = p.ow();
  std::vector<int8_t> want(static_cast<size_t>(q.oc * oh * ow)), cpu(want.size());
  runtime::qconv2d_reference(p, x8.data(), w8.data(), bias.data(), want.data());
  runtime::cpu::qconv2d(p, x8.data(), w8.data(), bias.data(), cpu.data());
  EXPECT_EQ(cpu, want) << "runtime/cpu qconv2d differs from qconv2d_reference";
  // not all saturated: the layer exercises the chain
  int inside = 0;
  for (int8_t v : want) inside += v > p.rq.clip_lo && v < p.rq.clip_hi;
  EXPECT_GT(inside, static_cast<int>(want.size()) / 2);

  std::vector<int8_t> xp(static_cast<size_t>(icb * bi * q.ih * q.iw)),
      wp(static_cast<size_t>(ocb * bo * icb * bi * q.kh * q.kw));
  runtime::cpu::pack_nchwnc(x8.data(), 1, q.ic, q.ih, q.iw, 1, bi, xp.data());
  runtime::cpu::pack_nchwnc(w8.data(), q.oc, q.ic, q.kh, q.kw, bo, bi, wp.data());
  std::vector<int32_t> bias_p(bias);
  bias_p.resize(static_cast<size_t>(ocb * bo), 0);
  const RequantParams rq = testing::params_of(p.rq, ocb * bo, q.oc);
  te::ConfigSpace space;
  Conv2dLayer cl;
  DenseLayer dl;
  if (q.dense) {
    dl.x = te::placeholder(S({1, icb, 1, bi}), DataType::int8(), "x");
    dl.w = te::placeholder(S({ocb, icb, bo, bi}), DataType::int8(), "w");
    dl.rq = rq;
    dl.bias = bias_p;
    dl.x_zero_point = q.zx;
    dl.w_values = wp;
    dense_config_space(dl, space, policy);
  } else {
    cl.x = te::placeholder(S({1, icb, q.ih, q.iw, 1, bi}), DataType::int8(), "x");
    cl.w = te::placeholder(S({ocb, icb, q.kh, q.kw, bo, bi}), DataType::int8(), "w");
    cl.attrs.stride_h = q.sh;
    cl.attrs.stride_w = q.sw;
    cl.attrs.pad_top = q.pt;
    cl.attrs.pad_left = q.pl;
    cl.attrs.pad_bottom = q.pb;
    cl.attrs.pad_right = q.pr;
    cl.rq = rq;
    cl.bias = bias_p;
    cl.x_zero_point = q.zx;
    cl.w_values = wp;
    conv2d_config_space(cl, space, policy);
  }
  EveryPointResult r;
  for (int64_t i = 0; i < space.size(); i += stride) {
    const te::ConfigEntity cfg = space.get(i);
    if (!threads_divide(cfg, ocb, q.dense ? 0 : oh)) continue;
    if (!both_const_root && const_root(cfg)) continue;
    const ScheduledOp op = q.dense ? schedule_dense(dl, hw, cfg) : schedule_conv2d(cl, hw, cfg);
    bool ragged = false;
    for (const auto& [split, extent] : std::vector<std::pair<std::string, int64_t>>{
             {"tile_oc", ocb}, {"tile_ic", icb}, {"tile_h", q.dense ? 0 : oh}, {"tile_w", q.dense ? 0 : ow}}) {
      if (extent > 0) ragged = ragged || cfg.split(split)[0] * cfg.split(split)[1] != extent;
    }
    r.ragged += ragged;
    if (r.ran == 0) {
      for (const ChannelConstant& c : op.constants) {
        r.kinds.push_back(c.kind);
        if (c.kind == ChannelConstant::Kind::kChannel) r.channel_rows = const_shape(c.tensor)[0];
      }
    }
    std::vector<testing::Data> inputs = {testing::from(xp), testing::from(wp)};
    for (const ChannelConstant& c : op.constants) inputs.push_back(testing::from(c.values));
    const auto got = testing::to<int8_t>(run_instance(hw, op, inputs, cfg.to_json()));
    std::vector<int8_t> unpacked(want.size());
    runtime::cpu::unpack_nchwnc(got.data(), 1, q.oc, oh, ow, 1, bo, unpacked.data());
    EXPECT_EQ(unpacked, want) << cfg.to_json();
    ++r.ran;
  }
  expect_every_point_built();
  return r;
}

using Kind = ChannelConstant::Kind;

/// 3x3, padding on every side and an input zero point: the border tensor (with the bias and
/// the per-channel offsets folded into it), then the clamp's wide bounds (uniform), and the
/// per-channel multiplier, round and shift; two input and two output blocks (the last ones
/// padded).
TEST(TopiAccelRequant, Conv3x3PaddedZeroPointEveryPoint) {
  QLayer q;
  q.ic = 30;
  q.ih = 5;
  q.iw = 4;
  q.oc = 20;
  q.kh = q.kw = 3;
  q.pt = q.pl = q.pb = q.pr = 1;
  q.zx = 11;
  const EveryPointResult r = every_point_matches_reference(q, 61);
  // tile_oc 1, 2 (x2 threads for 1) x tile_h 1, 5 x tile_w 1, 2, 4 x tile_ic 1, 2 (const_root 0)
  EXPECT_EQ(r.ran, 3 * 2 * 3 * 2);
  // the first point's tile is the whole plane (no interior tile: the per-channel offset is
  // folded into the border tensor), then the clamp's wide bounds, and the per-channel
  // multiplier, round, shift and out_add stacked into one constant (four rows)
  EXPECT_EQ(r.kinds, (std::vector<Kind>{Kind::kElement, Kind::kUniform, Kind::kUniform, Kind::kChannel}));
  EXPECT_EQ(r.channel_rows, 4);
}

/// Tiles that do not divide (SplitPolicy::kBalanced: 3 output-channel blocks in tiles of 2, 5
/// rows and 5 columns in tiles of 2 or 3): the last tile of each split is smaller, its loops
/// clipped by bound inference and peeled off with constant extents by loop_partition (a
/// narrower last window: one LOAD per row, a row wholly in the padding a pads-only LOAD); with
/// per-channel wide requantisation, a zero point at the padding and virtual threads only over
/// whole tiles; every point, bit-exact on the interpreter and fsim.
TEST(TopiAccelRequant, SmallerLastTilesEveryPoint) {
  QLayer q;
  q.ic = 16;
  q.ih = 5;
  q.iw = 5;
  q.oc = 36;
  q.kh = q.kw = 3;
  q.pt = q.pl = q.pb = q.pr = 1;
  q.zx = 7;
  const EveryPointResult r = every_point_matches_reference(q, 97, te::SplitPolicy::kBalanced);
  // tile_oc 1, 2, 3 x tile_h 1, 2, 3, 5 x tile_w 1, 2, 3, 5 x tile_ic 1, with oc_nthread 2 only
  // for tile_oc 1 (3 outer: odd, so never) and h_nthread 2 only for whole tiles with an even
  // outer count (none of 5 rows): one thread, 3 x 4 x 4 points; all but the 2 x 2 x 2 with
  // tile_oc 1 or 3 and tile_h, tile_w 1 or 5 have a smaller last tile (const_root 0)
  EXPECT_EQ(r.ran, 3 * 4 * 4);
  EXPECT_EQ(r.ragged, 3 * 4 * 4 - 2 * 2 * 2);
}

/// Dense with a smaller last tile on both splits (5 output blocks, 3 K blocks; every point).
TEST(TopiAccelRequant, DenseSmallerLastTilesEveryPoint) {
  QLayer q;
  q.ic = 48;
  q.oc = 80;
  q.zx = -3;
  q.dense = true;
  const EveryPointResult r = every_point_matches_reference(q, 101, te::SplitPolicy::kBalanced, 1, true);
  // tile_oc 1, 2, 3, 5 (oc_nthread 2: whole tiles with an even count: none of 5 blocks) x
  // tile_ic 1, 2, 3, each with oc_nthread 1 or 2, and const_root 0 or 1
  EXPECT_EQ(r.ran, 4 * 3 * 2);
  EXPECT_EQ(r.ragged, (3 * 3 - 1) * 2);
}

/// Stride 2 with asymmetric padding (none on the left: the window still reaches the right
/// border), one low limb, a negative zero point.
TEST(TopiAccelRequant, Conv3x3Stride2LowLimbEveryPoint) {
  QLayer q;
  q.ic = 16;
  q.ih = 7;
  q.iw = 6;
  q.oc = 40;
  q.kh = q.kw = 3;
  q.sh = q.sw = 2;
  q.pt = 1;
  q.pb = 1;
  q.pr = 1;
  q.zx = -13;
  q.limbs = 1;
  const EveryPointResult r = every_point_matches_reference(q, 67);
  // oh 4, ow 3; tile_oc 1, 3 (3 and 1 outer blocks: oc_nthread 2 for neither) x tile_h 1, 2
  // (h_nthread 1 or 2: 4 and 2 outer rows), 4 (1) x tile_w 1, 3 x tile_ic 1
  EXPECT_EQ(r.ran, 2 * 5 * 2);  // const_root 0
  ASSERT_FALSE(r.kinds.empty());
  EXPECT_EQ(r.kinds.front(), Kind::kElement);
}

/// 1x1 without padding: the zero point is per channel only, folded with the bias into the
/// per-channel accumulator offset (no border tensor).
TEST(TopiAccelRequant, Conv1x1ZeroPointFoldedEveryPoint) {
  QLayer q;
  q.ic = 20;
  q.ih = 3;
  q.iw = 4;
  q.oc = 24;
  q.zx = -128;
  const EveryPointResult r = every_point_matches_reference(q, 71, te::SplitPolicy::kFactors, 1, true);
  EXPECT_EQ(r.ran, 3 * 2 * 3 * 2 * 2);  // tile_oc 1 (x2 threads), 2; 2 x 3 x 2; const_root 0, 1
  // the stacked per-channel fields where the first one is (acc_offset: bias, zero point and
  // offset; then multiplier, round, shift, out_add), then acc_min, acc_max
  EXPECT_EQ(r.kinds, (std::vector<Kind>{Kind::kChannel, Kind::kUniform, Kind::kUniform}));
  EXPECT_EQ(r.channel_rows, 5);
}

/// 3x3 without padding: no window touches the padding, so no border tensor either.
TEST(TopiAccelRequant, Conv3x3UnpaddedZeroPointEveryPoint) {
  QLayer q;
  q.ic = 16;
  q.ih = 5;
  q.iw = 6;
  q.oc = 16;
  q.kh = q.kw = 3;
  q.zx = 5;
  q.limbs = 2;
  const EveryPointResult r = every_point_matches_reference(q, 73);
  EXPECT_EQ(r.ran, 1 * 2 * 3 * 1 * 1);  // oh 3, ow 4; const_root 0
  ASSERT_FALSE(r.kinds.empty());
  EXPECT_EQ(r.kinds.front(), Kind::kChannel);
  EXPECT_EQ(std::count(r.kinds.begin(), r.kinds.end(), Kind::kElement), 0);
}

/// Dense: bias and zero point in the per-channel offset, per-channel wide requantisation with a
/// low limb.
TEST(TopiAccelRequant, DenseZeroPointBiasEveryPoint) {
  QLayer q;
  q.ic = 40;
  q.oc = 60;
  q.zx = 19;
  q.limbs = 1;
  q.dense = true;
  const EveryPointResult r = every_point_matches_reference(q, 79, te::SplitPolicy::kFactors, 1, true);
  EXPECT_EQ(r.ran, (3 * 2 * 2 - 2) * 2);  // x const_root 0, 1
  ASSERT_FALSE(r.kinds.empty());
  EXPECT_EQ(r.kinds.front(), Kind::kChannel);
}

/// The lowered form of a padded layer with a zero point: the border tensor copied with every
/// tile straight into the accumulator in place of the GEMM reset (each of the 2 x 1 tiles of
/// 2 x 4 outputs reaches into the padding: the per-channel addend folded in, no guard), the
/// channel constants at the channel tile loop (inside the
/// virtual thread), the wide clamp bounds once at the root.
TEST(TopiAccelRequant, Conv2dConstantsGolden) {
  const isa::HwConfig hw;
  Conv2dLayer l = small_conv();
  l.rq.multiplier = {1000, 70000};
  l.rq.multiplier.resize(32, 1200);
  l.rq.acc_max = {100000};
  l.bias.assign(32, 7);
  l.x_zero_point = 4;
  l.w_values.assign(2 * 2 * 9 * 16 * 16, 1);
  te::ConfigSpace space;
  conv2d_config_space(l, space);
  const ScheduledOp op =
      schedule_conv2d(l, hw, pick(space, {{"tile_oc", 1}, {"tile_h", 2}, {"tile_w", 4}, {"tile_ic", 1}, {"oc_nthread", 2}}));
  ASSERT_EQ(op.constants.size(), 3u);
  EXPECT_EQ(op.constants[0].tensor.name(), "conv2d.zp_init");
  EXPECT_EQ(op.constants[1].tensor.name(), "requant.acc_max");
  EXPECT_EQ(op.constants[2].tensor.name(), "requant.channel");  // one row: the multiplier
  EXPECT_EQ(const_shape(op.constants[2].tensor), (std::vector<int64_t>{1, 2, 1, 16}));
  // border: 4 * 32 (two input blocks of 16 ones) * padded taps, plus (every tile reaches into
  // the padding: conv2d_interior_tiles 0) the bias 7 and the per-channel addend -4 * 9 * 32;
  // corner (0, 0) has 5 padded taps
  EXPECT_EQ(op.constants[0].values[0], 4 * 32 * 5 + 7 - 4 * 9 * 32);
  EXPECT_EQ(op.constants[0].values[16 * 5], 7 - 4 * 9 * 32);  // (1, 1): inside
  // packed [2][1][16]: block 0 lane 1 is 70000
  EXPECT_EQ(op.constants[2].values[1], 70000);
  EXPECT_EQ(op.constants[2].values[16], 1200);
  tir::PrimFunc f = lower_template(op, "conv2d");
  EXPECT_TRUE(tir::verify(f).empty());
  tir::testing::expect_golden_in("topi", "accel_conv2d_constants.tir", tir::to_text(f));
}


/// The border tensor is zero in the interior: on 8 x 8 outputs in tiles of 2 x 2, the LOAD ACC
/// of it and its ADD run only in the first and last row and column of tiles
/// (guard_zero_constant_tiles), and every point of the layer stays bit-exact.
TEST(TopiAccelRequant, ZeroPointBorderOnlyInBorderTiles) {
  const isa::HwConfig hw;
  Conv2dLayer l = small_conv();
  l.x = te::placeholder(S({1, 2, 8, 8, 1, 16}), DataType::int8(), "x");
  l.x_zero_point = 4;
  l.w_values.assign(2 * 2 * 9 * 16 * 16, 1);
  te::ConfigSpace space;
  conv2d_config_space(l, space);
  const ScheduledOp op = schedule_conv2d(
      l, hw, pick(space, {{"tile_oc", 2}, {"tile_h", 2}, {"tile_w", 2}, {"tile_ic", 2}, {"oc_nthread", 1}}));
  EXPECT_EQ(conv2d_interior_tiles(l, 2, 2), 2 * 2);
  EXPECT_EQ(op.constants[0].values[16 * (8 * 2 + 2)], 0);  // (2, 2): inside, the addend not folded
  const tir::PrimFunc f = lower_template(op, "conv2d");
  EXPECT_TRUE(tir::verify(f).empty());
  const std::string text = tir::to_text(f);
  const std::string cond = "if (((((i2.outer == 0) || (i2.outer == 3)) || (i3.outer == 0)) || (i3.outer == 3)))";
  size_t n = 0;
  for (size_t at = text.find(cond); at != std::string::npos; at = text.find(cond, at + 1)) ++n;
  // once: the border tiles load the border straight into the accumulator, the others reset it
  // (init_accumulator_from_constants: no ADD, no buffer of its own)
  EXPECT_EQ(n, 1u) << text;
  EXPECT_NE(text.find("} else {"), std::string::npos) << text;
  EXPECT_EQ(text.find("conv2d.zp_init.local.acc_buffer"), std::string::npos) << text;
  // 12 of the 16 tiles reach into the padding: 12 LOAD ACC of the border tensor
  std::vector<compiler::accel_tir::SegmentSpec> segs = {
      {"x", "x", isa::SegmentKind::kInput, 0, isa::MemType::kInp},
      {"w", "w", isa::SegmentKind::kInput, 0, isa::MemType::kWgt}};
  uint64_t off = 0;
  for (const ChannelConstant& c : op.constants) {
    segs.push_back({c.tensor.name(), c.tensor.name(), isa::SegmentKind::kConst, off, isa::MemType::kAcc});
    off += c.values.size() * 4;
  }
  segs.push_back({op.out.name(), op.out.name(), isa::SegmentKind::kOutput, 0, isa::MemType::kOut});
  const isa::Program prog = compiler::accel_tir::build_accel_program(f, hw, segs);
  int acc_loads = 0;
  for (const isa::Instruction& in : prog.insns) {
    acc_loads += in.opcode == isa::Opcode::kLoad && in.mem_type == isa::MemType::kAcc && in.y_size == 2 && in.x_size == 2;
  }
  EXPECT_EQ(acc_loads, 2 * 12);  // one 2 x 2 LOAD per output-channel block of a border tile

  // Virtual threads over the rows: a tile's row is thread * 2 + row tile, the condition tests
  // that coordinate (a linear form of both loops), and the border tiles are still the only
  // ones that load (12 of 16).
  const ScheduledOp op2 = schedule_conv2d(l, hw,
                                          pick(space, {{"tile_oc", 2}, {"tile_h", 2}, {"tile_w", 2}, {"tile_ic", 2},
                                                       {"oc_nthread", 1}, {"h_nthread", 2}}));
  const tir::PrimFunc f2 = lower_template(op2, "conv2d");
  EXPECT_TRUE(tir::verify(f2).empty());
  const std::string text2 = tir::to_text(f2);
  EXPECT_NE(text2.find("((i2.outer.outer * 2) + i2.outer.inner) == 0)"), std::string::npos) << text2;
  const isa::Program prog2 = compiler::accel_tir::build_accel_program(f2, hw, segs);
  acc_loads = 0;
  for (const isa::Instruction& in : prog2.insns) {
    acc_loads += in.opcode == isa::Opcode::kLoad && in.mem_type == isa::MemType::kAcc && in.y_size == 2 && in.x_size == 2;
  }
  EXPECT_EQ(acc_loads, 2 * 12);
}

}  // namespace
}  // namespace tessel::topi::accel
