// Micro-op index reach: VTAUop's src_idx is as wide as the ACC index (isa/spec.cc), so with an INP
// scratchpad deeper than ACC a GEMM uop cannot name every INP row. These tests lower layers for
// legal configurations with INP deeper than ACC, run them on fsim and compare bit-exactly with
// runtime::qconv2d_reference, and check the region arithmetic of the schedule by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <ostream>

#include "accel_test_util.h"
#include "compiler/backend/accel/schedule.h"
#include "isa/verifier.h"
#include "support/error.h"

namespace tessel::compiler::accel {
namespace {

using testing::LayerSpec;

/// The three configurations of the bug report (each passes HwConfig::validate).
isa::HwConfig config_named(const std::string& name) {
  isa::HwConfig c;
  if (name == "acc16") {
    c.log_acc_buff_size = 16;  // INP 2048 rows, ACC 1024 rows
  } else if (name == "block_out32") {
    c.log_block_in = 4;  // INP 2048 rows, ACC 1024 rows of 32 lanes
    c.log_block_out = 5;
  } else if (name == "block2") {
    c.log_block_in = c.log_block_out = 1;  // INP 2048, WGT 1024, ACC 1024 rows
    c.log_inp_buff_size = 12;
    c.log_wgt_buff_size = 12;
    c.log_acc_buff_size = 13;
  }
  c.validate();
  return c;
}

std::string user_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(AccelUopReach, ReachFollowsTheUopFieldWidths) {
  for (const char* name : {"acc16", "block_out32", "block2"}) {
    const isa::HwConfig c = config_named(name);
    EXPECT_EQ(c.inp_depth(), 2048) << name;
    EXPECT_EQ(c.acc_depth(), 1024) << name;
    const UopReach r = uop_reach(c);
    EXPECT_EQ(r.inp, 1024) << name;  // src_idx: log2 ACC depth bits
    EXPECT_EQ(r.acc_dst, 1024) << name;
    EXPECT_EQ(r.acc_src, 1024) << name;
    EXPECT_EQ(r.wgt, c.wgt_depth()) << name;
  }
  const UopReach d = uop_reach(isa::HwConfig{});
  EXPECT_EQ(d.inp, 2048);  // default: INP and ACC both 2048 rows
  EXPECT_EQ(d.wgt, 1024);
}

TEST(AccelUopReach, ThreadRegionByHand) {
  // no bound below the depth: depth / vt
  EXPECT_EQ(thread_region(2048, 2, 600, {{700, 2048}}), 1024);
  EXPECT_EQ(thread_region(2048, 1, 2048, {{2047, 2048}}), 2048);
  // one thread: the region is the depth, the uop's top index must be below the reach
  EXPECT_EQ(thread_region(2048, 1, 1452, {{1014, 1024}}), 2048);
  EXPECT_EQ(thread_region(2048, 1, 1452, {{1024, 1024}}), 0);
  // two threads: thread 1's uops start at R, so R + top <= 1023: R = 1023 - 300 = 723
  EXPECT_EQ(thread_region(2048, 2, 500, {{300, 1024}}), 723);
  EXPECT_EQ(thread_region(2048, 2, 724, {{300, 1024}}), 0);  // the region would not hold need
  // four threads: 3*R + 99 <= 1023: R = 308
  EXPECT_EQ(thread_region(2048, 4, 300, {{99, 1024}}), 308);
  // a pair with top < 0 (no uop names the scratchpad) is ignored
  EXPECT_EQ(thread_region(2048, 2, 10, {{-1, 16}}), 1024);
  // the tightest pair wins
  EXPECT_EQ(thread_region(1024, 2, 10, {{0, 1024}, {900, 1024}}), 123);
}

/// Largest INP row a GEMM of the stream reads (uop src + the loop factors' reach).
int64_t max_inp_row_read(const isa::Program& prog) {
  int64_t top = -1;
  for (const isa::Instruction& in : prog.insns) {
    if (in.opcode != isa::Opcode::kGemm || in.reset) continue;
    for (uint32_t k = in.uop_bgn; k < in.uop_end; ++k) {
      top = std::max<int64_t>(top, int64_t{prog.uops[k].src} +
                                       int64_t{in.iter_out - 1} * in.src_factor_out +
                                       int64_t{in.iter_in - 1} * in.src_factor_in);
    }
  }
  return top;
}

int64_t max_uop_src(const isa::Program& prog) {
  int64_t top = -1;
  for (const isa::Uop& u : prog.uops) top = std::max<int64_t>(top, u.src);
  return top;
}

struct Case {
  std::string config;
  LayerSpec layer;
  int vthreads = 2;
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.config << "/" << c.layer.name << "/vt" << c.vthreads;
}

std::vector<Case> all_cases() {
  using Rq = LayerSpec::Rq;
  std::vector<LayerSpec> layers;
  // the KWS first layer (models/mlperf-tiny/kws01_dscnn_int8_qdq.onnx), its depthwise and
  // pointwise layers, and a 3x3 conv with several input blocks
  layers.push_back({.name = "kws_10x4_49x10", .ic = 1, .ih = 49, .iw = 10, .oc = 64, .kh = 10,
                    .kw = 4, .stride = 2, .pt = 4, .pl = 1, .pb = 5, .pr = 2, .in_zero_point = 3,
                    .seed = 3});
  layers.push_back({.name = "kws_dw3x3", .ic = 64, .ih = 25, .iw = 5, .oc = 64, .groups = 64,
                    .in_zero_point = -7, .rq = Rq::kRelu, .seed = 4});
  layers.push_back({.name = "kws_pw1x1", .ic = 64, .ih = 25, .iw = 5, .oc = 64, .kh = 1, .kw = 1,
                    .pt = 0, .pl = 0, .pb = 0, .pr = 0, .in_zero_point = -7, .seed = 5});
  layers.push_back(
      {.name = "conv3x3_ic32", .ic = 32, .ih = 14, .iw = 14, .oc = 32, .rq = Rq::kPow2, .seed = 6});
  std::vector<Case> v;
  for (const char* cfg : {"acc16", "block_out32", "block2"}) {
    for (const LayerSpec& s : layers) {
      for (int vt : {1, 2}) v.push_back({cfg, s, vt});
    }
  }
  return v;
}

class UopReachE2e : public ::testing::TestWithParam<Case> {};

TEST_P(UopReachE2e, InpDeeperThanAccMatchesReference) {
  const Case& c = GetParam();
  const isa::HwConfig cfg = config_named(c.config);
  const AccelLayer layer = testing::make_layer(c.layer);
  const std::vector<int8_t> in = testing::make_input(layer.params, c.layer.seed);
  const std::vector<int8_t> want = testing::reference(layer, in);
  LowerOptions opts;
  opts.knobs.virtual_threads = c.vthreads;
  const LoweredLayer low = lower_conv2d(layer, cfg, opts);
  EXPECT_NO_THROW(isa::verify(low.program));
  EXPECT_LT(max_uop_src(low.program), uop_reach(cfg).inp);
  const std::vector<int8_t> got = testing::run_on_fsim(low, layer.params, in);
  ASSERT_EQ(got.size(), want.size());
  size_t mismatches = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (got[i] != want[i] && mismatches++ < 5) {
      ADD_FAILURE() << "output " << i << ": got " << int(got[i]) << " want " << int(want[i])
                    << " (schedule " << low.schedule << ")";
    }
  }
  EXPECT_EQ(mismatches, 0u);
}

INSTANTIATE_TEST_SUITE_P(Layers, UopReachE2e, ::testing::ValuesIn(all_cases()));

// 3x3, pad 1, 20x20, 3 input blocks, one tile and one chunk on one virtual thread: the INP
// window is 3 * 22 * 22 = 1452 rows (beyond the 1024 a uop names) but the highest uop index is
// the last slot's top-left tap plus (2, 2): 2*484 + 2*22 + 2 = 1014 < 1024. The loop factors
// reach the rest, so the tile is legal (an exact bound, not depth-limited to 1024 rows).
TEST(AccelUopReach, LoopFactorsReachBeyondTheUopField) {
  const isa::HwConfig cfg = config_named("acc16");
  LayerSpec s{.name = "wide_window", .ic = 48, .ih = 20, .iw = 20, .oc = 16, .seed = 9};
  const AccelLayer layer = testing::make_layer(s);
  LowerOptions opts;
  opts.knobs.virtual_threads = 1;
  opts.knobs.oh_tile = 20;
  opts.knobs.ow_tile = 20;
  opts.knobs.ic_chunk = 3;
  const LoweredLayer low = lower_conv2d(layer, cfg, opts);
  EXPECT_EQ(max_uop_src(low.program), 1014);
  EXPECT_EQ(max_inp_row_read(low.program), 1451);
  const std::vector<int8_t> in = testing::make_input(layer.params, s.seed);
  EXPECT_EQ(testing::run_on_fsim(low, layer.params, in), testing::reference(layer, in));

  // 4 input blocks: the top uop index would be 3*484 + 46 = 1498: no tile with these knobs fits
  s.ic = 64;
  const AccelLayer wide = testing::make_layer(s);
  opts.knobs.ic_chunk = 4;
  const std::string err = user_error_of([&] { lower_conv2d(wide, cfg, opts); });
  EXPECT_NE(err.find("layer 'wide_window': no tile fits"), std::string::npos) << err;
  EXPECT_NE(err.find("name inp rows below 1024"), std::string::npos) << err;
}

// Two virtual threads: thread 1's region starts at R and its uops must stay below 1024, so R is
// cut from 1024 to 1023 - top (here: a 1x1 conv, 2 input blocks of 7x7, top = 49).
TEST(AccelUopReach, SecondThreadRegionStaysInReach) {
  const isa::HwConfig cfg = config_named("acc16");
  LayerSpec s{.name = "pw", .ic = 32, .ih = 7, .iw = 7, .oc = 32, .kh = 1, .kw = 1, .pt = 0,
              .pl = 0, .pb = 0, .pr = 0, .seed = 10};
  const AccelLayer layer = testing::make_layer(s);
  LowerOptions opts;
  opts.knobs.virtual_threads = 2;
  opts.knobs.oc_tile_blocks = 1;
  opts.knobs.oh_tile = 7;
  opts.knobs.ow_tile = 7;
  opts.knobs.ic_chunk = 2;
  const LoweredLayer low = lower_conv2d(layer, cfg, opts);
  // thread 1's uops: R + slot 1 (49) = 974 + 49 = 1023
  EXPECT_EQ(max_uop_src(low.program), 1023);
  const std::vector<int8_t> in = testing::make_input(layer.params, s.seed);
  EXPECT_EQ(testing::run_on_fsim(low, layer.params, in), testing::reference(layer, in));
}

}  // namespace
}  // namespace tessel::compiler::accel
