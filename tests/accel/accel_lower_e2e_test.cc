// End-to-end: lower quantised conv2d/dense layers for several configurations, run the Programs on
// fsim and compare the outputs bit-exactly with runtime::qconv2d_reference on seeded random data.
#include <gtest/gtest.h>

#include <ostream>

#include "accel_test_util.h"
#include "isa/verifier.h"

namespace tessel::compiler::accel {
namespace {

using testing::LayerSpec;

isa::HwConfig config_named(const std::string& name) {
  isa::HwConfig c;
  if (name == "log_block3") {
    // 8x8 blocks; the buffers shrink so that the GEMM fields still fit 128 bits (same depths as
    // the default: INP 2048, WGT 1024, ACC 2048)
    c.log_block_in = c.log_block_out = 3;
    c.log_inp_buff_size = 14;
    c.log_wgt_buff_size = 16;
    c.log_acc_buff_size = 16;
  } else if (name == "log_batch1") {
    c.log_batch = 1;
  }
  c.validate();
  return c;
}

std::vector<LayerSpec> layer_specs() {
  using Rq = LayerSpec::Rq;
  std::vector<LayerSpec> v;
  auto add = [&](LayerSpec s) {
    s.seed = static_cast<uint32_t>(v.size() + 11);
    v.push_back(s);
  };
  add({.name = "conv3x3_s1_p1", .ic = 32, .ih = 10, .iw = 10, .oc = 32});
  add({.name = "conv3x3_s2_p1_odd", .ic = 16, .ih = 15, .iw = 15, .oc = 48, .stride = 2,
       .rq = Rq::kPerTensor});
  add({.name = "conv1x1_s2", .ic = 64, .ih = 14, .iw = 14, .oc = 32, .kh = 1, .kw = 1,
       .stride = 2, .pt = 0, .pl = 0, .pb = 0, .pr = 0});
  add({.name = "mnist_conv5x5_ic1", .ic = 1, .ih = 28, .iw = 28, .oc = 8, .kh = 5, .kw = 5,
       .pt = 2, .pl = 2, .pb = 2, .pr = 2, .in_zero_point = -128, .rq = Rq::kRelu});
  add({.name = "depthwise3x3", .ic = 32, .ih = 12, .iw = 12, .oc = 32, .groups = 32});
  add({.name = "depthwise3x3_s2_zp", .ic = 48, .ih = 9, .iw = 9, .oc = 48, .stride = 2,
       .groups = 48, .in_zero_point = 5, .rq = Rq::kPow2});
  add({.name = "grouped3x3", .ic = 32, .ih = 8, .iw = 8, .oc = 48, .groups = 4});
  add({.name = "dense_256_10", .ic = 256, .ih = 1, .iw = 1, .oc = 10, .kh = 1, .kw = 1, .pt = 0,
       .pl = 0, .pb = 0, .pr = 0, .rq = Rq::kPerTensor});
  add({.name = "conv3x3_7x7", .ic = 64, .ih = 7, .iw = 7, .oc = 64});
  add({.name = "kws_10x4_49x10", .ic = 1, .ih = 49, .iw = 10, .oc = 24, .kh = 10, .kw = 4,
       .stride = 2, .pt = 4, .pl = 1, .pb = 5, .pr = 2, .in_zero_point = 3});
  add({.name = "zp_pad_asym", .ic = 8, .ih = 6, .iw = 11, .oc = 20, .pt = 2, .pl = 0, .pb = 1,
       .pr = 2, .in_zero_point = 17, .rq = Rq::kPerTensor});
  add({.name = "pow2_shift_only", .ic = 16, .ih = 6, .iw = 6, .oc = 16, .rq = Rq::kPow2});
  add({.name = "pow2_no_bias", .ic = 16, .ih = 6, .iw = 6, .oc = 16, .rq = Rq::kPow2,
       .zero_bias = true});
  add({.name = "relu_clip", .ic = 24, .ih = 5, .iw = 9, .oc = 40, .rq = Rq::kRelu});
  add({.name = "wide_constants", .ic = 16, .ih = 6, .iw = 6, .oc = 16, .rq = Rq::kWideConstants});
  add({.name = "batch3", .n = 3, .ic = 16, .ih = 6, .iw = 5, .oc = 16});
  return v;
}

struct Case {
  std::string config;
  LayerSpec layer;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.config << "/" << c.layer.name; }

int64_t tile_count(const LoweredLayer& l) {
  const size_t at = l.schedule.find("tiles=");
  return at == std::string::npos ? -1 : std::stoll(l.schedule.substr(at + 6));
}

class LowerE2e : public ::testing::TestWithParam<Case> {};

TEST_P(LowerE2e, MatchesReferenceBitExactly) {
  const Case& c = GetParam();
  const isa::HwConfig cfg = config_named(c.config);
  const AccelLayer layer = testing::make_layer(c.layer);
  const std::vector<int8_t> in = testing::make_input(layer.params, c.layer.seed);
  const std::vector<int8_t> want = testing::reference(layer, in);

  const LoweredLayer low = lower_conv2d(layer, cfg);
  EXPECT_EQ(low.program.name, c.layer.name);
  EXPECT_EQ(low.macs, layer.params.macs());
  EXPECT_NO_THROW(isa::verify(low.program));
  sim::Counters counters;
  const std::vector<int8_t> got = testing::run_on_fsim(low, layer.params, in, &counters);
  ASSERT_EQ(got.size(), want.size());
  size_t mismatches = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (got[i] != want[i] && mismatches++ < 5) {
      ADD_FAILURE() << "output " << i << ": got " << int(got[i]) << " want " << int(want[i])
                    << " (schedule " << low.schedule << ")";
    }
  }
  EXPECT_EQ(mismatches, 0u);
  // the outputs are not degenerate (the test can fail)
  int distinct = 0;
  std::vector<bool> seen(256);
  for (int8_t v : want) {
    if (!seen[static_cast<uint8_t>(v)]) ++distinct;
    seen[static_cast<uint8_t>(v)] = true;
  }
  EXPECT_GE(distinct, 8) << "reference output has too few distinct values";
  // every GEMM uop the hardware ran is one the compute roofline counts: no wasted GEMM work
  EXPECT_EQ(static_cast<int64_t>(counters.gemm_counter), testing::static_gemm_uops(low.program));
  if (c.layer.groups == 1) {
    EXPECT_EQ(testing::static_gemm_uops(low.program), low.ideal_gemm_uops);
  }
}

TEST_P(LowerE2e, OneAndTwoVirtualThreadsAgree) {
  const Case& c = GetParam();
  const isa::HwConfig cfg = config_named(c.config);
  const AccelLayer layer = testing::make_layer(c.layer);
  const std::vector<int8_t> in = testing::make_input(layer.params, c.layer.seed);
  LowerOptions one;
  one.knobs.virtual_threads = 1;
  LowerOptions two;
  two.knobs.virtual_threads = 2;
  const LoweredLayer a = lower_conv2d(layer, cfg, one);
  const LoweredLayer b = lower_conv2d(layer, cfg, two);
  // with more than one tile the second virtual thread uses the other SRAM halves
  if (tile_count(b) > 1) {
    EXPECT_NE(a.program.serialize(), b.program.serialize());
  }
  EXPECT_EQ(testing::run_on_fsim(a, layer.params, in), testing::run_on_fsim(b, layer.params, in));
}

TEST_P(LowerE2e, SmallForcedTilesMatchReference) {
  // many tiles (one output block, two rows each): border tiles, edge tiles and the interleaving
  // of virtual threads all occur
  const Case& c = GetParam();
  const isa::HwConfig cfg = config_named(c.config);
  const AccelLayer layer = testing::make_layer(c.layer);
  const std::vector<int8_t> in = testing::make_input(layer.params, c.layer.seed);
  LowerOptions opts;
  opts.knobs.oc_tile_blocks = 1;
  opts.knobs.oh_tile = std::min<int>(2, static_cast<int>(layer.params.oh()));
  const LoweredLayer low = lower_conv2d(layer, cfg, opts);
  EXPECT_EQ(testing::run_on_fsim(low, layer.params, in), testing::reference(layer, in))
      << low.schedule;
}

std::vector<Case> all_cases() {
  std::vector<Case> v;
  for (const char* cfg : {"default", "log_block3", "log_batch1"}) {
    for (const LayerSpec& s : layer_specs()) v.push_back({cfg, s});
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Layers, LowerE2e, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return i.param.config + "_" + i.param.layer.name;
                         });

}  // namespace
}  // namespace tessel::compiler::accel
