// Input zero point: the correction -zp * (sum of w over the taps inside the input) is the constant
// -zp * sum(w[o]) wherever the window lies inside the input; the backend folds that constant into
// the bias row and loads the int32 init tensor (the position-dependent rest) only for tiles with
// an output window touching the padding. Checked bit-exactly against runtime::qconv2d_reference
// on fsim, with the DRAM traffic counted by fsim.
#include <gtest/gtest.h>

#include "accel_test_util.h"
#include "compiler/backend/accel/schedule.h"

namespace tessel::compiler::accel {
namespace {

using testing::LayerSpec;

bool has_segment(const isa::Program& p, const std::string& name) {
  for (const isa::Segment& s : p.segments) {
    if (s.name == name) return true;
  }
  return false;
}

/// LOAD ACC instructions of the init tensor (those reading the acc_init segment).
int64_t init_loads(const isa::Program& p) {
  if (!has_segment(p, "acc_init")) return 0;
  const isa::Segment& seg = p.segment("acc_init");
  const uint64_t eb = static_cast<uint64_t>(p.config.acc_elem_bytes());
  int64_t n = 0;
  for (const isa::Instruction& in : p.insns) {
    if (in.opcode == isa::Opcode::kLoad && in.mem_type == isa::MemType::kAcc &&
        in.dram_base >= seg.offset_bytes / eb &&
        in.dram_base < (seg.offset_bytes + seg.size_bytes) / eb) {
      ++n;
    }
  }
  return n;
}

std::vector<int8_t> run_checked(const AccelLayer& layer, const LoweredLayer& low, uint32_t seed,
                                sim::Counters* counters) {
  const std::vector<int8_t> in = testing::make_input(layer.params, seed);
  const std::vector<int8_t> got = testing::run_on_fsim(low, layer.params, in, counters);
  EXPECT_EQ(got, testing::reference(layer, in)) << low.schedule;
  return got;
}

// 1x1 conv, no padding: no window touches the padding, so no init tensor at all; the only ACC
// traffic is the constant rows (the per-channel multiplier, shift round and shift rows and the
// bias row holding bias - zp*sum(w)).
TEST(AccelZeroPoint, UnpaddedConvHasNoInitTensor) {
  LayerSpec s{.name = "pw_zp", .ic = 16, .ih = 12, .iw = 12, .oc = 32, .kh = 1, .kw = 1, .pt = 0,
              .pl = 0, .pb = 0, .pr = 0, .in_zero_point = -128, .seed = 21};
  const AccelLayer layer = testing::make_layer(s);
  const LoweredLayer low = lower_conv2d(layer, isa::HwConfig{});
  EXPECT_FALSE(has_segment(low.program, "acc_init"));
  EXPECT_EQ(init_loads(low.program), 0);
  sim::Counters c;
  run_checked(layer, low, s.seed, &c);
  // constant rows only, each loaded once per virtual thread holding those output blocks: far
  // below the 4 bytes per output element (12*12*32*4 = 18432) an init tensor would move
  EXPECT_LE(c.acc_load_nbytes, uint64_t{2} * 2 * 4 * 16 * 4);
  EXPECT_GT(c.acc_load_nbytes, 0u);
}

// A valid (unpadded) 3x3 conv: windows never touch the padding either.
TEST(AccelZeroPoint, ValidConvHasNoInitTensor) {
  LayerSpec s{.name = "valid3x3_zp", .ic = 16, .ih = 9, .iw = 8, .oc = 16, .pt = 0, .pl = 0,
              .pb = 0, .pr = 0, .in_zero_point = 9, .rq = LayerSpec::Rq::kPow2, .seed = 22};
  const AccelLayer layer = testing::make_layer(s);
  const LoweredLayer low = lower_conv2d(layer, isa::HwConfig{});
  EXPECT_FALSE(has_segment(low.program, "acc_init"));
  sim::Counters c;
  run_checked(layer, low, s.seed, &c);
  // power-of-two requantisation: the bias row (with the folded rounding) is the only ACC row,
  // 64 bytes, loaded once by each virtual thread
  EXPECT_GT(c.acc_load_nbytes, 0u);
  EXPECT_LE(c.acc_load_nbytes, uint64_t{2 * 64});
  EXPECT_EQ(c.acc_load_nbytes % 64, 0u);
}

// Bottom/right pads that no window reaches (kernel 1, stride 2, 9 + 1 pad -> 5 outputs reading
// rows 0, 2, .., 8) do not count.
TEST(AccelZeroPoint, UnreachedPaddingDoesNotCount) {
  LayerSpec s{.name = "unreached", .ic = 16, .ih = 9, .iw = 9, .oc = 16, .kh = 1, .kw = 1,
              .stride = 2, .pt = 0, .pl = 0, .pb = 1, .pr = 1, .in_zero_point = 4, .seed = 23};
  const AccelLayer layer = testing::make_layer(s);
  const ConvGeometry g = make_geometry(s.name, layer.params, isa::HwConfig{});
  EXPECT_FALSE(layer_touches_padding(g));
  const LoweredLayer low = lower_conv2d(layer, isa::HwConfig{});
  EXPECT_FALSE(has_segment(low.program, "acc_init"));
  run_checked(layer, low, s.seed, nullptr);
}

// 3x3, pad 1, 12x12 outputs in forced 4x4 tiles (one output block): of the 9 tiles only the
// centre one has no window touching the padding; it resets instead of loading the init tensor.
TEST(AccelZeroPoint, OnlyBorderTilesLoadTheInitTensor) {
  LayerSpec s{.name = "border_zp", .ic = 16, .ih = 12, .iw = 12, .oc = 16, .in_zero_point = 77,
              .rq = LayerSpec::Rq::kPerTensor, .seed = 24};
  const AccelLayer layer = testing::make_layer(s);
  LowerOptions opts;
  opts.knobs.oh_tile = 4;
  opts.knobs.ow_tile = 4;
  opts.zero_point_init = ZeroPointInit::kBorderTiles;
  for (int vt : {1, 2}) {
    opts.knobs.virtual_threads = vt;
    const LoweredLayer low = lower_conv2d(layer, isa::HwConfig{}, opts);
    EXPECT_EQ(low.zero_point_init, ZeroPointInit::kBorderTiles);
    ASSERT_TRUE(has_segment(low.program, "acc_init"));
    EXPECT_EQ(init_loads(low.program), 8);
    sim::Counters c;
    run_checked(layer, low, s.seed, &c);
    // 8 tiles x 16 ACC elements of 64 bytes (init), plus the constant rows once per thread:
    // the bias row and the shift's rounding row (2^(shift-1) exceeds the 16-bit immediate)
    EXPECT_NE(low.schedule.find("const_rows=2 "), std::string::npos) << low.schedule;
    EXPECT_EQ(c.acc_load_nbytes, uint64_t(8 * 16 * 64 + vt * 2 * 64));
  }
  const ConvGeometry g = make_geometry(s.name, layer.params, isa::HwConfig{});
  EXPECT_TRUE(layer_touches_padding(g));
  Tile centre{.nb = 0, .ob0 = 0, .obn = 1, .y0 = 4, .th = 4, .x0 = 4, .tw = 4};
  EXPECT_FALSE(tile_touches_padding(g, centre));
  Tile corner{.nb = 0, .ob0 = 0, .obn = 1, .y0 = 8, .th = 4, .x0 = 0, .tw = 4};
  EXPECT_TRUE(tile_touches_padding(g, corner));
}

// The alternative for layers touching the padding: every tile loads bias + correction from the
// init tensor and there is no bias row; the cost model's choice is one of the two, also exact.
TEST(AccelZeroPoint, EveryTileInitAndCostModelChoice) {
  LayerSpec s{.name = "every_zp", .ic = 16, .ih = 12, .iw = 12, .oc = 16, .in_zero_point = 77,
              .rq = LayerSpec::Rq::kPerTensor, .seed = 24};
  const AccelLayer layer = testing::make_layer(s);
  LowerOptions opts;
  opts.knobs.oh_tile = 4;
  opts.knobs.ow_tile = 4;
  opts.knobs.virtual_threads = 1;
  opts.zero_point_init = ZeroPointInit::kEveryTile;
  const LoweredLayer every = lower_conv2d(layer, isa::HwConfig{}, opts);
  EXPECT_EQ(every.zero_point_init, ZeroPointInit::kEveryTile);
  EXPECT_EQ(init_loads(every.program), 9);
  sim::Counters c;
  run_checked(layer, every, s.seed, &c);
  // 9 tiles x 16 elements x 64 bytes, plus the one constant row left (the shift's rounding)
  EXPECT_NE(every.schedule.find("const_rows=1 "), std::string::npos) << every.schedule;
  EXPECT_EQ(c.acc_load_nbytes, uint64_t(9 * 16 * 64 + 64));
  // the cost model picks the cheaper estimate (ties: border tiles)
  opts.zero_point_init = ZeroPointInit::kBorderTiles;
  const LoweredLayer border = lower_conv2d(layer, isa::HwConfig{}, opts);
  opts.zero_point_init = ZeroPointInit::kCostModel;
  const LoweredLayer chosen = lower_conv2d(layer, isa::HwConfig{}, opts);
  EXPECT_EQ(chosen.est_cycles, std::min(every.est_cycles, border.est_cycles));
  EXPECT_EQ(chosen.zero_point_init, every.est_cycles < border.est_cycles
                                        ? ZeroPointInit::kEveryTile
                                        : ZeroPointInit::kBorderTiles);
  run_checked(layer, chosen, s.seed, nullptr);
  // a layer no window of which touches the padding never uses an init tensor, whatever asked
  LayerSpec pw{.name = "pw_every", .ic = 16, .ih = 6, .iw = 6, .oc = 16, .kh = 1, .kw = 1,
               .pt = 0, .pl = 0, .pb = 0, .pr = 0, .in_zero_point = 5, .seed = 26};
  opts.zero_point_init = ZeroPointInit::kEveryTile;
  opts.knobs = {};
  const LoweredLayer pw_low = lower_conv2d(testing::make_layer(pw), isa::HwConfig{}, opts);
  EXPECT_FALSE(has_segment(pw_low.program, "acc_init"));
  EXPECT_EQ(pw_low.zero_point_init, ZeroPointInit::kBorderTiles);
}

// The init tensor and the bias row wrap like the reference: extreme weights, a zero point of
// -128, a large bias and asymmetric pads.
TEST(AccelZeroPoint, AsymmetricPadsWithLargeValues) {
  LayerSpec s{.name = "asym_zp", .ic = 40, .ih = 7, .iw = 10, .oc = 24, .kh = 3, .kw = 5,
              .pt = 2, .pl = 0, .pb = 0, .pr = 3, .in_zero_point = -128,
              .rq = LayerSpec::Rq::kWideConstants, .seed = 25};
  const AccelLayer layer = testing::make_layer(s);
  for (int vt : {1, 2}) {
    for (ZeroPointInit zpi : {ZeroPointInit::kBorderTiles, ZeroPointInit::kEveryTile}) {
      LowerOptions opts;
      opts.knobs.virtual_threads = vt;
      opts.knobs.oh_tile = 2;
      opts.zero_point_init = zpi;
      const LoweredLayer low = lower_conv2d(layer, isa::HwConfig{}, opts);
      EXPECT_EQ(low.zero_point_init, zpi);
      run_checked(layer, low, s.seed, nullptr);
    }
  }
}

}  // namespace
}  // namespace tessel::compiler::accel
