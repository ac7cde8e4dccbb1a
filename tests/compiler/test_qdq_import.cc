// Unit tests of the qdq_import pass (QDQ and QLinear formats -> integer operators).
#include <gtest/gtest.h>

#include "compiler/passes/qdq_import.h"
#include "compiler/passes/shape_inference.h"
#include "support/error.h"
#include "tests/compiler/test_util.h"

namespace tessel::compiler {
namespace {

using testing::act;
using testing::add_node;
using testing::find_op;

/// x -Q(0.5, u8 128)-> -DQ-> Conv(DQ(w), DQ(b)) -> Relu -Q(1, i8 -5)-> -DQ-> y.
ir::Graph qdq_conv() {
  ir::Graph g;
  g.opset = 13;
  const int x = act(g, "x", {1, 1, 2, 2});
  g.inputs = {x};
  const int s_in = g.add_const_f32("s_in", {}, {0.5f});
  const int z_in = g.add_const("z_in", ir::DType::kU8, {}, {128});
  const int xq = act(g, "xq", {1, 1, 2, 2}, ir::DType::kU8), xd = act(g, "xd", {1, 1, 2, 2});
  add_node(g, "QuantizeLinear", "q_in", {x, s_in, z_in}, {xq});
  add_node(g, "DequantizeLinear", "dq_in", {xq, s_in, z_in}, {xd});
  const int w = g.add_const_i8("w", {2, 1, 1, 1}, {2, -3});
  const int ws = g.add_const_f32("ws", {2}, {0.25f, 0.5f});
  const int wz = g.add_const_i8("wz", {2}, {0, 0});
  const int wd = act(g, "wd", {2, 1, 1, 1});
  add_node(g, "DequantizeLinear", "dq_w", {w, ws, wz}, {wd}, {{"axis", 0}});
  const int b = g.add_const_i32("b", {2}, {1, 2});
  const int bs = g.add_const_f32("bs", {2}, {0.125f, 0.25f});
  const int bd = act(g, "bd", {2});
  add_node(g, "DequantizeLinear", "dq_b", {b, bs}, {bd}, {{"axis", 0}});
  const int c = act(g, "c", {1, 2, 2, 2}), r = act(g, "r", {1, 2, 2, 2});
  add_node(g, "Conv", "conv", {xd, wd, bd}, {c});
  add_node(g, "Relu", "relu", {c}, {r});
  const int s_out = g.add_const_f32("s_out", {}, {1.0f});
  const int z_out = g.add_const_i8("z_out", {}, {-5});
  const int rq = act(g, "rq", {1, 2, 2, 2}, ir::DType::kI8), y = act(g, "y", {1, 2, 2, 2});
  add_node(g, "QuantizeLinear", "q_out", {r, s_out, z_out}, {rq});
  add_node(g, "DequantizeLinear", "dq_out", {rq, s_out, z_out}, {y});
  g.outputs = {y};
  return g;
}

TEST(QdqImport, ConvChainBecomesIntegerOps) {
  ir::Graph g = qdq_conv();
  passes::PassContext ctx;
  passes::qdq_import(g, ctx);
  EXPECT_TRUE(ctx.model_was_quantized);
  std::vector<std::string> ops;
  for (const auto& n : g.nodes) ops.push_back(n.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"quantize", "qconv2d", "qclip", "dequantize"}));
  for (const auto& n : g.nodes) EXPECT_TRUE(n.is_tessel());
  const ir::Node& conv = g.nodes[1];
  EXPECT_EQ(conv.name, "conv");
  const ir::Value& xin = g.values[conv.inputs[0]];
  EXPECT_EQ(xin.dtype, ir::DType::kI8);
  EXPECT_EQ(*xin.quant, ir::QuantInfo::tensor(0.5f, 0));  // uint8 zero point 128 -> int8 0
  EXPECT_EQ(conv.attrs.at("in_zero_point"), 0);
  const ir::Value& w = g.values[conv.inputs[1]];
  EXPECT_EQ(w.quant->scale, (std::vector<float>{0.25f, 0.5f}));
  EXPECT_EQ(w.quant->axis, 0);
  EXPECT_EQ(g.const_i64(conv.inputs[2]), (std::vector<int64_t>{1, 2}));  // bias scale = s_in * s_w already
  EXPECT_EQ(*g.values[conv.outputs[0]].quant, ir::QuantInfo::tensor(1.0f, -5));
  const ir::Node& clip = g.nodes[2];
  EXPECT_EQ(clip.attrs.at("lo"), -5);  // Relu: q(0) = zero point
  EXPECT_EQ(clip.attrs.at("hi"), 127);
  EXPECT_EQ(g.values[g.outputs[0]].name, "y");
  EXPECT_EQ(g.values[g.outputs[0]].dtype, ir::DType::kF32);
}

TEST(QdqImport, BiasAtADifferentScaleIsRescaled) {
  ir::Graph g = qdq_conv();
  // Bias scale 4x the product: int values must be multiplied by 4.
  for (auto& v : g.values)
    if (v.name == "bs") v.data = ir::to_bytes(std::vector<float>{0.5f, 1.0f});
  passes::PassContext ctx;
  passes::qdq_import(g, ctx);
  const int conv = find_op(g, "qconv2d");
  EXPECT_EQ(g.const_i64(g.nodes[conv].inputs[2]), (std::vector<int64_t>{4, 8}));
}

TEST(QdqImport, QLinearAddWithUint8ConstantIsShifted) {
  ir::Graph g;
  g.opset = 12;
  const int x = act(g, "x", {1, 3});
  g.inputs = {x};
  const int s = g.add_const_f32("s", {}, {0.5f});
  const int z = g.add_const("z", ir::DType::kU8, {}, {10});
  const int xq = act(g, "xq", {1, 3}, ir::DType::kU8);
  add_node(g, "QuantizeLinear", "q", {x, s, z}, {xq});
  const int b = g.add_const("b", ir::DType::kU8, {3}, {0, 128, 255});
  const int yq = act(g, "yq", {1, 3}, ir::DType::kU8);
  add_node(g, "QLinearAdd", "add", {xq, s, z, b, s, z, s, z}, {yq}, nlohmann::json::object(), "com.microsoft");
  const int y = act(g, "y", {1, 3});
  add_node(g, "DequantizeLinear", "dq", {yq, s, z}, {y});
  g.outputs = {y};
  passes::PassContext ctx;
  passes::qdq_import(g, ctx);
  const int add = find_op(g, "qadd");
  ASSERT_GE(add, 0);
  const ir::Value& bv = g.values[g.nodes[add].inputs[1]];
  EXPECT_EQ(bv.dtype, ir::DType::kI8);
  EXPECT_EQ(g.const_i64(g.nodes[add].inputs[1]), (std::vector<int64_t>{-128, 0, 127}));
  EXPECT_EQ(*bv.quant, ir::QuantInfo::tensor(0.5f, -118));
  EXPECT_EQ(*g.values[g.nodes[add].outputs[0]].quant, ir::QuantInfo::tensor(0.5f, -118));
}

TEST(QdqImport, NonZeroWeightZeroPointFallsBackToFloatConv) {
  ir::Graph g = qdq_conv();
  for (auto& v : g.values)
    if (v.name == "wz") v.data = ir::to_bytes(std::vector<int8_t>{1, 0});
  passes::PassContext ctx;
  passes::qdq_import(g, ctx);
  std::vector<std::string> ops;
  for (const auto& n : g.nodes) ops.push_back(n.op);
  // The conv and the Relu run in float on the dequantised input and weights; the Relu output is
  // quantised with the output parameters (the fake_quant) and dequantised for the graph output.
  EXPECT_EQ(ops, (std::vector<std::string>{"quantize", "dequantize", "conv2d_f32", "relu_f32", "quantize", "dequantize"}));
  const ir::Node& conv = g.nodes[2];
  EXPECT_TRUE(g.values[conv.inputs[1]].is_const);
  EXPECT_EQ(g.const_f32(conv.inputs[1]), (std::vector<float>{0.25f, -1.5f}));  // (2-1)*0.25, (-3-0)*0.5
  EXPECT_EQ(g.const_f32(conv.inputs[2]), (std::vector<float>{0.125f, 0.5f}));
}

TEST(QdqImport, FloatModelsAreLeftAlone) {
  ir::Graph g;
  const int x = act(g, "x", {2});
  g.inputs = {x};
  const int y = act(g, "y", {2});
  add_node(g, "Relu", "relu", {x}, {y});
  g.outputs = {y};
  passes::PassContext ctx;
  passes::qdq_import(g, ctx);
  EXPECT_FALSE(ctx.model_was_quantized);
  EXPECT_EQ(g.nodes[0].op, "Relu");
}

TEST(QdqImport, PerAxisActivationQuantisationIsRejected) {
  ir::Graph g;
  const int x = act(g, "x", {1, 2});
  g.inputs = {x};
  const int s = g.add_const_f32("s", {2}, {0.5f, 1.0f});
  const int z = g.add_const_i8("z", {2}, {0, 0});
  const int xq = act(g, "xq", {1, 2}, ir::DType::kI8), y = act(g, "y", {1, 2});
  add_node(g, "QuantizeLinear", "q7", {x, s, z}, {xq}, {{"axis", 1}});
  add_node(g, "DequantizeLinear", "dq7", {xq, s, z}, {y}, {{"axis", 1}});
  g.outputs = {y};
  passes::PassContext ctx;
  try {
    passes::qdq_import(g, ctx);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("(QuantizeLinear): per-axis quantisation of activations (2 scales) is not supported"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tessel::compiler
