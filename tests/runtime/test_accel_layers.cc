// Compiler-lowered layers (compiler::accel::lower_conv2d, used here in the test only) run by the
// graph executor on fsim and cycle: every accelerator output equals the CPU qconv2d kernel bit
// for bit (ExecOptions::check_accel), fsim and cycle agree, and cycle counts repeat exactly.
#include <gtest/gtest.h>

#include <random>

#include "compiler/backend/accel/lower_conv2d.h"
#include "runtime/graph_executor.h"

namespace tessel::runtime {
namespace {

struct LayerCase {
  const char* name;
  int64_t ic, hw, oc, k, stride, pad;
  int32_t in_zp;
};

// One accelerator step: x (NCHWnc) -> y (NCHWnc), with a random layer.
Executable make_exe(const LayerCase& c, const isa::HwConfig& cfg) {
  std::mt19937 rng(static_cast<uint32_t>(c.ic * 7 + c.oc * 3 + c.k));
  std::uniform_int_distribution<int> i8(-128, 127), sh(6, 10), mul(1, 5);
  compiler::accel::AccelLayer layer;
  layer.name = c.name;
  QConv2dParams& p = layer.params;
  p.ic = c.ic;
  p.ih = p.iw = c.hw;
  p.oc = c.oc;
  p.kh = p.kw = c.k;
  p.stride_h = p.stride_w = c.stride;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = c.pad;
  p.in_zero_point = c.in_zp;
  p.rq.multiplier = {mul(rng)};
  p.rq.shift = {sh(rng)};
  p.rq.out_zero_point = -5;
  for (int64_t i = 0; i < p.oc * p.ic * p.kh * p.kw; ++i) layer.weights.push_back(static_cast<int8_t>(i8(rng)));
  for (int64_t o = 0; o < p.oc; ++o) layer.bias.push_back(i8(rng) * 40);
  const auto lowered = compiler::accel::lower_conv2d(layer, cfg);

  Executable e;
  e.config = cfg;
  e.model_name = c.name;
  TensorDesc x;
  x.name = "x";
  x.dtype = DType::kI8;
  x.shape = {1, p.ic, p.ih, p.iw};
  x.layout = Layout::kNCHWnc;
  x.block_n = cfg.batch();
  x.block_c = cfg.block_in();
  TensorDesc w;
  w.name = "w";
  w.dtype = DType::kI8;
  w.shape = {p.oc, p.ic, p.kh, p.kw};
  w.data.assign(reinterpret_cast<const uint8_t*>(layer.weights.data()),
                reinterpret_cast<const uint8_t*>(layer.weights.data()) + layer.weights.size());
  TensorDesc b;
  b.name = "b";
  b.dtype = DType::kI32;
  b.shape = {p.oc};
  b.data.resize(layer.bias.size() * 4);
  std::memcpy(b.data.data(), layer.bias.data(), b.data.size());
  TensorDesc y = x;
  y.name = "y";
  y.shape = {1, p.oc, p.oh(), p.ow()};
  y.block_c = cfg.block_out();
  e.tensors = {x, w, b, y};
  Step s;
  s.name = c.name;
  s.op = "qconv2d";
  s.inputs = {0, 1, 2};
  s.outputs = {3};
  s.placement = Placement::kAccel;
  s.program = 0;
  s.input_segments = {"inp", "", ""};
  s.output_segments = {"out"};
  s.attrs = {{"stride", {c.stride, c.stride}},
             {"pads", {c.pad, c.pad, c.pad, c.pad}},
             {"groups", 1},
             {"in_zero_point", c.in_zp},
             {"requant",
              {{"multiplier", p.rq.multiplier},
               {"shift", p.rq.shift},
               {"out_zero_point", p.rq.out_zero_point},
               {"clip_lo", -128},
               {"clip_hi", 127}}}};
  e.steps = {s};
  e.programs = {lowered.program};
  e.inputs = {0};
  e.outputs = {3};
  return e;
}

class AccelLayers : public ::testing::TestWithParam<LayerCase> {};

TEST_P(AccelLayers, AcceleratorMatchesCpuOnFsimAndCycle) {
  const isa::HwConfig cfg;
  const Executable exe = make_exe(GetParam(), cfg);
  HostTensor in{DType::kI8, exe.tensors[0].shape,
                std::vector<uint8_t>(static_cast<size_t>(exe.tensors[0].size_bytes()))};
  std::mt19937 rng(5);
  // Real channels random, padding channels (beyond ic) zero as pack_nchwnc writes them.
  for (auto& v : in.bytes) v = static_cast<uint8_t>(rng());
  const int64_t c = exe.tensors[0].shape[1], bc = exe.tensors[0].block_c;
  for (size_t i = 0; i < in.bytes.size(); ++i) {
    if (static_cast<int64_t>(i) % bc + (static_cast<int64_t>(i) / (bc * GetParam().hw * GetParam().hw)) * bc >= c) in.bytes[i] = 0;
  }
  std::vector<std::vector<uint8_t>> outs;
  for (const std::string kind : {"fsim", "cycle"}) {
    const auto kinds = Device::kinds();
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) continue;
    auto dev = Device::create(kind, cfg, 1 << 26);
    ExecOptions opts;
    opts.cpu_repeats = 1;
    GraphExecutor ge(exe, *dev, opts);  // check_accel: throws InternalError on any difference
    outs.push_back(ge.run({in})[0].bytes);
    EXPECT_TRUE(ge.measurements()[0].cpu_matches_accel);
    const uint64_t cycles = ge.measurements()[0].accel.cycles;
    EXPECT_EQ(ge.run({in})[0].bytes, outs.back());
    EXPECT_EQ(ge.measurements()[0].accel.cycles, cycles);
    if (kind == "cycle") {
      EXPECT_GT(cycles, 0u);
    }
  }
  ASSERT_FALSE(outs.empty());
  for (const auto& o : outs) EXPECT_EQ(o, outs[0]);
}

INSTANTIATE_TEST_SUITE_P(Layers, AccelLayers,
                         ::testing::Values(LayerCase{"conv3x3", 16, 8, 16, 3, 1, 1, 0},
                                           LayerCase{"conv3x3_s2_zp", 32, 9, 16, 3, 2, 1, 7},
                                           LayerCase{"conv1x1_s2", 32, 8, 32, 1, 2, 0, -3},
                                           LayerCase{"conv3x3_c3", 3, 10, 16, 3, 1, 1, 0}));

}  // namespace
}  // namespace tessel::runtime
