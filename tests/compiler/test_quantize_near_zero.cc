// Near-zero weight channels (compiler/passes/integerize.h, the weight-scale floor): a channel
// whose weights are tiny next to its bias (|w| ~ 1e-30, common in trained models) used to get a
// per-channel scale so small that its int32 bias was clamped and its accumulator could not fit
// 32 bits ("accumulator bound 2147806702 of channel 3 does not fit 32 bits"). Now its scale is
// floored: its weights quantise to 0 and its output is the bias alone.
//  - unit: float weights quantised by the quantize pass; imported int8 weights with a tiny scale
//    (float bias, and the model's own int32 bias);
//  - end to end: the bundled float MNIST and ResNet-8 models with one conv output channel scaled
//    by 1e-30 compile, run on the accelerator (fsim) and give the float model's top-1 on the
//    bundled samples.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "compiler/driver/compile.h"
#include "compiler/passes/integerize.h"
#include "compiler/passes/quantize.h"
#include "compiler/passes/requant.h"
#include "runtime/cpu/kernels.h"
#include "runtime/device.h"
#include "runtime/graph_executor.h"
#include "tests/compiler/test_util.h"

namespace tessel::compiler {
namespace {

using testing::act;
using testing::add_node;

/// x [1,1,1,2] -> Conv (2 output channels, 1x1, weights {w0, w1}, bias {b0, b1}) -> Relu -> y.
ir::Graph conv_graph(float w0, float w1, float b0, float b1) {
  ir::Graph g;
  const int x = act(g, "x", {1, 1, 1, 2});
  g.inputs = {x};
  const int w = g.add_const_f32("w", {2, 1, 1, 1}, {w0, w1});
  const int b = g.add_const_f32("b", {2}, {b0, b1});
  const int c = act(g, "c", {1, 2, 1, 2});
  add_node(g, "Conv", "conv", {x, w, b}, {c});
  g.outputs = {c};
  return g;
}

const ir::Node& only_qconv(const ir::Graph& g) {
  const int k = testing::find_op(g, "qconv2d");
  EXPECT_GE(k, 0);
  return g.nodes[static_cast<size_t>(k)];
}

TEST(NearZeroChannels, FloatWeightsQuantiseToZeroAndTheOutputIsTheBias) {
  // Channel 0: |w| = 1e-30 next to bias 0.7; channel 1 ordinary. Before the floor, channel 0's
  // scale was 2^-106 and its bias 0.7 / (s_in * 2^-106) was clamped to 2^31 - 1.
  ir::Graph g = conv_graph(1e-30f, 0.5f, 0.7f, 0.25f);
  passes::PassContext ctx;
  reference::RefTensor in;
  in.shape = {1, 1, 1, 2};
  in.f = {100.0f, -50.0f};  // s_in = 1
  ctx.calibration = {{in}};
  passes::quantize(g, ctx);
  const ir::Node& conv = only_qconv(g);
  const ir::Value& w = g.values[conv.inputs[1]];
  const auto wq = g.const_i64(conv.inputs[1]);
  const auto bq = g.const_i64(conv.inputs[2]);
  EXPECT_EQ(wq[0], 0);   // the near-zero channel quantises to 0
  EXPECT_EQ(wq[1], 64);  // 0.5 at 2^-7, as before
  // The floor: the smallest power of two at which the channel's accumulator fits
  // [-2^30, 2^30): 0.7 / 2^-31 = 1.5e9 does not fit, 0.7 / 2^-30 = 751619264 (0.7f) does.
  EXPECT_EQ(w.quant->scale.at(0), std::ldexp(1.0f, -30));
  EXPECT_EQ(bq[0], 751619264);
  EXPECT_EQ(w.quant->scale.at(1), 0.0078125f);
  EXPECT_EQ(bq[1], 32);
  passes::requant(g, ctx);
  // The channel's output is its bias alone, 0.7 at the output scale (0.5: max |conv| = 50.25),
  // whatever the input.
  const ir::Node& done = only_qconv(g);
  const runtime::Requant rq = runtime::cpu::parse_requant(done.attrs.at("requant"), 2, "conv");
  const float s_out = g.values[done.outputs[0]].quant->scale[0];
  EXPECT_EQ(s_out, 0.5f);
  for (int xq : {-128, 0, 127}) {
    const int32_t acc = static_cast<int32_t>(bq[0] + wq[0] * xq);
    EXPECT_EQ(runtime::requantize(acc, rq, 0), 1);  // round(0.7 / 0.5)
  }
}

TEST(NearZeroChannels, AllZeroChannelKeepsItsBiasPrecisely) {
  // An all-zero channel (pruned) had scale 1, so its bias was rounded at the input scale; it
  // now starts from the floor too: bias 0.3 is kept to 30 bits.
  ir::Graph g = conv_graph(0.0f, 0.5f, 0.3f, 0.25f);
  passes::PassContext ctx;
  reference::RefTensor in;
  in.shape = {1, 1, 1, 2};
  in.f = {100.0f, -50.0f};
  ctx.calibration = {{in}};
  passes::quantize(g, ctx);
  const ir::Node& conv = only_qconv(g);
  const float s = g.values[conv.inputs[1]].quant->scale.at(0);
  const int64_t b = g.const_i64(conv.inputs[2])[0];
  EXPECT_LT(std::llabs(b), int64_t{1} << 30);
  EXPECT_GE(std::llabs(b), int64_t{1} << 29);
  EXPECT_NEAR(static_cast<double>(b) * s, static_cast<double>(0.3f), 1e-9);
}

/// x -> fake_quant(s_in) -> Conv(DQ(int8 w, per-channel scales), bias) -> fake_quant(s_out) -> y,
/// the form qdq_import gives integerize.
ir::Graph qdq_graph(std::vector<float> w_scale, std::vector<int8_t> wq, int bias_kind, std::vector<float> bias_real) {
  ir::Graph g;
  const int x = act(g, "x", {1, 1, 2, 2});
  g.inputs = {x};
  const int xf = act(g, "x_fq", {1, 1, 2, 2});
  add_node(g, "fake_quant", "x_fq", {x}, {xf}, {{"scale", 0.5f}, {"zero_point", 0}}, "tessel");
  const int wi = g.add_const_i8("w_q", {2, 1, 1, 1}, wq);
  const int ws = g.add_const_f32("w_scale", {2}, w_scale);
  const int wz = g.add_const_i8("w_zp", {2}, {0, 0});
  const int wd = act(g, "w_dq", {2, 1, 1, 1});
  add_node(g, "DequantizeLinear", "w_dq", {wi, ws, wz}, {wd}, {{"axis", 0}});
  int b = -1;
  if (bias_kind == 0) {
    b = g.add_const_f32("b", {2}, bias_real);
  } else {
    // the model's int32 bias at s_in * s_w (what ONNX Runtime's quantiser writes)
    std::vector<int32_t> bi;
    std::vector<float> bs;
    for (size_t c = 0; c < 2; ++c) {
      bs.push_back(0.5f * w_scale[c]);
      // saturated like a quantiser's QuantizeLinear to int32
      bi.push_back(static_cast<int32_t>(std::clamp(std::nearbyint(static_cast<double>(bias_real[c]) / bs.back()),
                                                   -2147483648.0, 2147483647.0)));
    }
    const int bq = g.add_const_i32("b_q", {2}, bi);
    const int bsc = g.add_const_f32("b_scale", {2}, bs);
    const int bz = g.add_const_i32("b_zp", {2}, {0, 0});
    b = act(g, "b_dq", {2});
    add_node(g, "DequantizeLinear", "b_dq", {bq, bsc, bz}, {b}, {{"axis", 0}});
  }
  const int c = act(g, "c", {1, 2, 2, 2});
  add_node(g, "Conv", "conv", {xf, wd, b}, {c});
  const int y = act(g, "y", {1, 2, 2, 2});
  add_node(g, "fake_quant", "y_fq", {c}, {y}, {{"scale", 0.0625f}, {"zero_point", 0}}, "tessel");
  g.outputs = {y};
  return g;
}

TEST(NearZeroChannels, ImportedTinyWeightScaleWithFloatBiasIsFloored) {
  // Channel 0 arrives with weight scale 1e-32 and int8 weights 127 (real 1.27e-30) next to a
  // float bias of 3: at s_in * s_w = 5e-33 that bias is 6e32, far outside int32. Handled: the
  // channel's scale is raised by the smallest power of two at which its accumulator fits
  // [-2^30, 2^30); its weights, re-rounded from their real values, are 0. Channel 1 fits and is
  // kept exactly as given.
  ir::Graph g = qdq_graph({1e-32f, 0.01f}, {127, -100}, 0, {3.0f, 0.5f});
  passes::integerize(g);
  const ir::Node& conv = only_qconv(g);
  const auto wq = g.const_i64(conv.inputs[1]);
  const auto bq = g.const_i64(conv.inputs[2]);
  const ir::Value& w = g.values[conv.inputs[1]];
  EXPECT_EQ(wq, (std::vector<int64_t>{0, -100}));
  EXPECT_EQ(w.quant->scale.at(1), 0.01f);
  EXPECT_EQ(bq[1], 100);  // 0.5 / (0.5 * 0.01)
  EXPECT_LT(std::llabs(bq[0]), int64_t{1} << 30);
  EXPECT_GE(std::llabs(bq[0]), int64_t{1} << 29);
  EXPECT_NEAR(static_cast<double>(bq[0]) * 0.5 * w.quant->scale.at(0), 3.0, 1e-8);
  // the floored scale is the given one times a power of two
  int e = 0;
  EXPECT_EQ(std::frexp(static_cast<double>(w.quant->scale.at(0)) / static_cast<double>(1e-32f), &e), 0.5);
  passes::PassContext ctx;
  passes::requant(g, ctx);  // fits: no "does not fit 32 bits"
}

TEST(NearZeroChannels, ImportedInt32BiasThatFitsIsKeptAsGiven) {
  // ONNX Runtime's quantiser itself raises a tiny weight scale until the int32 bias fits
  // (weights quantise to 0): such a channel is kept exactly, bit-identical with ONNX Runtime.
  const float s_w = 3.0f / 0.5f / 2.0e9f;  // bias 3 at s_in * s_w = 1.5e-9 is 2e9, inside int32
  ir::Graph g = qdq_graph({s_w, 0.01f}, {0, -100}, 1, {3.0f, 0.5f});
  passes::integerize(g);
  const ir::Node& conv = only_qconv(g);
  EXPECT_EQ(g.values[conv.inputs[1]].quant->scale.at(0), s_w);
  const std::vector<int64_t> given = {static_cast<int64_t>(std::nearbyint(3.0 / (0.5f * s_w))), 100};
  EXPECT_GT(given[0], 1999990000);
  EXPECT_EQ(g.const_i64(conv.inputs[2]), given);
  EXPECT_EQ(g.const_i64(conv.inputs[1]), (std::vector<int64_t>{0, -100}));
  passes::PassContext ctx;
  passes::requant(g, ctx);
}

TEST(NearZeroChannels, ImportedInt32BiasThatCannotFitIsFloored) {
  // The model's int32 bias 2^31 - 1 (a quantiser that clipped it) with weights 127 at a tiny
  // scale: bias + 127 * 127 cannot be accumulated in 32 bits (ONNX Runtime's int32 kernel would
  // wrap). The channel is floored like a float one instead of wrapping.
  const float s_w = 1e-30f;
  ir::Graph g = qdq_graph({s_w, 0.01f}, {127, -100}, 1, {1.0f, 0.5f});
  // the bias: 1.0 / (0.5 * 1e-30) saturated to 2^31 - 1 by the writer
  passes::integerize(g);
  const ir::Node& conv = only_qconv(g);
  const auto wq = g.const_i64(conv.inputs[1]);
  const auto bq = g.const_i64(conv.inputs[2]);
  EXPECT_EQ(wq[1], -100);
  EXPECT_EQ(wq[0], 32);  // 127 at 4 x the scale, re-rounded once from its real value
  // accumulator range of channel 0 within [-2^30, 2^30)
  const int64_t r = std::llabs(bq[0]) + std::llabs(wq[0]) * 128;
  EXPECT_LT(r, int64_t{1} << 30);
  passes::PassContext ctx;
  passes::requant(g, ctx);
}

// ---- end to end ----

/// `model` with output channel `channel` of the Conv weight initializer `weight` scaled by
/// `factor`, written to a temporary file; returns its path.
std::string scaled_model(const std::string& model, const std::string& weight, int64_t channel, float factor,
                         const std::string& file) {
  onnx::ModelProto m;
  {
    std::ifstream f(testing::model_path(model), std::ios::binary);
    EXPECT_TRUE(m.ParseFromIstream(&f)) << model;
  }
  bool found = false;
  for (onnx::TensorProto& t : *m.mutable_graph()->mutable_initializer()) {
    if (t.name() != weight) continue;
    found = true;
    EXPECT_EQ(t.data_type(), onnx::TensorProto_DataType_FLOAT);
    int64_t per = 1;
    for (int k = 1; k < t.dims_size(); ++k) per *= t.dims(k);
    if (t.has_raw_data()) {
      std::string raw = t.raw_data();
      for (int64_t i = channel * per; i < (channel + 1) * per; ++i) {
        float v;
        std::memcpy(&v, raw.data() + 4 * i, 4);
        v *= factor;
        std::memcpy(raw.data() + 4 * i, &v, 4);
      }
      t.set_raw_data(raw);
    } else {
      for (int64_t i = channel * per; i < (channel + 1) * per; ++i) t.set_float_data(static_cast<int>(i), t.float_data(i) * factor);
    }
  }
  EXPECT_TRUE(found) << weight;
  const auto p = std::filesystem::temp_directory_path() / ("tessel_near_zero_" + file);
  std::ofstream out(p, std::ios::binary);
  m.SerializeToOstream(&out);
  return p.string();
}

void expect_float_top1(const std::string& path, const std::vector<runtime::HostTensor>& calibration,
                       const std::vector<runtime::HostTensor>& samples) {
  CompileOptions opts;
  for (const auto& c : calibration) opts.calibration.push_back({c});
  const CompileResult r = compile_onnx(path, opts);  // used to fail: "does not fit 32 bits"
  EXPECT_TRUE(r.quantized_by_tessel);
  int offloaded = 0;
  for (const auto& s : r.exe.steps) offloaded += s.placement == runtime::Placement::kAccel;
  EXPECT_GT(offloaded, 0);
  const ReferenceModel ref = ReferenceModel::load(path);
  auto dev = runtime::Device::create("fsim", r.exe.config, uint64_t{256} << 20);
  runtime::ExecOptions eo;
  eo.measure_cpu = false;
  eo.cpu_repeats = 1;
  runtime::GraphExecutor ex(r.exe, *dev, eo);
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto got = testing::floats(ex.run({samples[i]}).at(0));
    const auto want = testing::floats(ref.run({samples[i]}).at(0));
    EXPECT_EQ(testing::argmax(got), testing::argmax(want)) << "sample " << i;
  }
}

TEST(NearZeroChannels, MnistWithANearZeroChannelKeepsTheFloatTop1) {
  // Channel 3 of the first conv (Parameter5) scaled by 1e-30; its bias (Parameter6, fused by
  // fuse_bias) is kept.
  const std::string path = scaled_model("onnx-zoo/mnist-12.onnx", "Parameter5", 3, 1e-30f, "mnist.onnx");
  std::vector<runtime::HostTensor> samples;
  for (int i = 0; i < 16; ++i) {
    samples.push_back(testing::host_f32(
        {1, 1, 28, 28},
        testing::read_f32(testing::data_path(fmt::format("reference/inputs/mnist_t10k_{:05d}_f32_1x1x28x28.bin", i)))));
  }
  expect_float_top1(path, samples, samples);
}

TEST(NearZeroChannels, Resnet8WithANearZeroChannelKeepsTheFloatTop1) {
  // A conv output channel followed by BatchNormalization (folded: its bias is not tiny).
  onnx::ModelProto m;
  {
    std::ifstream f(testing::model_path("mlperf-tiny/ic01_resnet8_fp32.onnx"), std::ios::binary);
    ASSERT_TRUE(m.ParseFromIstream(&f));
  }
  std::string weight;
  for (const auto& n : m.graph().node()) {
    if (n.op_type() == "Conv") {
      weight = n.input(1);
      break;
    }
  }
  ASSERT_FALSE(weight.empty());
  const std::string path = scaled_model("mlperf-tiny/ic01_resnet8_fp32.onnx", weight, 5, 1e-30f, "resnet8.onnx");
  std::vector<runtime::HostTensor> samples;
  for (const char* s : {"ic_sample0_f32_1x3x32x32.bin", "ic_sample8_f32_1x3x32x32.bin"}) {
    samples.push_back(
        testing::host_f32({1, 3, 32, 32}, testing::read_f32(testing::data_path(std::string("reference/inputs/") + s))));
  }
  expect_float_top1(path, samples, samples);
}

}  // namespace
}  // namespace tessel::compiler
