// Unit tests of the quantize pass (post-training quantisation with power-of-two scales).
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/cpu/kernels.h"
#include "compiler/passes/quantize.h"
#include "compiler/passes/requant.h"
#include "support/error.h"
#include "tests/compiler/test_util.h"

namespace tessel::compiler {
namespace {

using testing::act;
using testing::add_node;

ir::Graph conv_relu() {
  ir::Graph g;
  const int x = act(g, "x", {1, 1, 1, 2});
  g.inputs = {x};
  const int w = g.add_const_f32("w", {2, 1, 1, 1}, {0.5f, -3.0f});
  const int b = g.add_const_f32("b", {2}, {0.25f, 1.0f});
  const int c = act(g, "c", {1, 2, 1, 2});
  add_node(g, "Conv", "conv", {x, w, b}, {c});
  const int y = act(g, "y", {1, 2, 1, 2});
  add_node(g, "Relu", "relu", {c}, {y});
  g.outputs = {y};
  return g;
}

// Activations whose calibration values are all denormal (|x| ~ 1e-44: a float model whose
// activations decay through a long chain; a 130-layer Conv+Relu chain reached this) got the
// activation scale 2^ceil(log2(1e-44 / 127)) = 2^-152, which is 0 in float32: "the bias 0 of
// output channel 0 is too large for the input scale 0". The scale is floored at 2^-126 (the
// smallest normal power of two, the weight scales' floor too); the values quantise to 0, and the
// layer compiles with a requantisation for its (tiny but positive) scales.
TEST(Quantize, DenormalActivationsGetTheSmallestNormalScale) {
  ir::Graph g = conv_relu();
  passes::PassContext ctx;
  reference::RefTensor in;
  in.shape = {1, 1, 1, 2};
  in.f = {1e-44f, -2e-44f};
  ctx.calibration = {{in}};
  passes::quantize(g, ctx);
  const int conv = testing::find_op(g, "qconv2d");
  ASSERT_GE(conv, 0);
  EXPECT_EQ(*g.values[g.nodes[conv].inputs[0]].quant, ir::QuantInfo::tensor(std::ldexp(1.0f, -126), 0));
  passes::requant(g, ctx);
  EXPECT_TRUE(g.nodes[conv].attrs.contains("requant"));
}

TEST(Quantize, PowerOfTwoScalesFromCalibration) {
  ir::Graph g = conv_relu();
  passes::PassContext ctx;
  reference::RefTensor in;
  in.shape = {1, 1, 1, 2};
  in.f = {100.0f, -50.0f};
  ctx.calibration = {{in}};
  passes::quantize(g, ctx);
  EXPECT_TRUE(ctx.quantized_by_tessel);
  std::vector<std::string> ops;
  for (const auto& n : g.nodes) ops.push_back(n.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"quantize", "qconv2d", "qclip", "dequantize"}));
  const ir::Node& conv = g.nodes[1];
  // max |x| = 100 -> 2^ceil(log2(100/127)) = 1.
  EXPECT_EQ(*g.values[conv.inputs[0]].quant, ir::QuantInfo::tensor(1.0f, 0));
  // Per-channel weights: 0.5 -> 2^-7 (q 64); 3.0 -> 2^-5 (q -96).
  const ir::Value& w = g.values[conv.inputs[1]];
  EXPECT_EQ(w.quant->scale, (std::vector<float>{0.0078125f, 0.03125f}));
  EXPECT_EQ(g.const_i64(conv.inputs[1]), (std::vector<int64_t>{64, -96}));
  // Bias at s_in * s_w: 0.25 / 2^-7 = 32, 1 / 2^-5 = 32.
  EXPECT_EQ(g.const_i64(conv.inputs[2]), (std::vector<int64_t>{32, 32}));
  // Conv output range taken after the Relu: max 151 -> scale 2.
  EXPECT_EQ(*g.values[conv.outputs[0]].quant, ir::QuantInfo::tensor(2.0f, 0));

  passes::requant(g, ctx);
  const auto rq = runtime::cpu::parse_requant(g.nodes[1].attrs.at("requant"), 2, "conv");
  EXPECT_FALSE(rq.clamps_low());
  EXPECT_EQ(rq.acc_offset, (std::vector<int32_t>{0}));
  EXPECT_EQ(rq.multiplier, (std::vector<int32_t>{1}));
  EXPECT_EQ(rq.shift, (std::vector<int32_t>{8, 6}));  // M = 2^-7/2, 2^-5/2
}

TEST(Quantize, FloatModelWithoutCalibrationIsAUserError) {
  ir::Graph g = conv_relu();
  g.name = "tiny";
  passes::PassContext ctx;
  try {
    passes::quantize(g, ctx);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "model 'tiny' is float: quantising it needs calibration inputs (CompileOptions::calibration is empty)");
  }
}

TEST(Quantize, CalibrationShapeMismatchIsAUserError) {
  ir::Graph g = conv_relu();
  passes::PassContext ctx;
  reference::RefTensor in;
  in.shape = {1, 1, 2, 1};
  in.f = {1, 2};
  ctx.calibration = {{in}};
  EXPECT_THROW(passes::quantize(g, ctx), UserError);
}

TEST(Quantize, QuantisedModelsAreLeftAlone) {
  ir::Graph g = conv_relu();
  passes::PassContext ctx;
  ctx.model_was_quantized = true;
  passes::quantize(g, ctx);
  EXPECT_EQ(g.nodes[0].op, "Conv");
  EXPECT_FALSE(ctx.quantized_by_tessel);
}

}  // namespace
}  // namespace tessel::compiler
