// Unit tests of the layout_nchwnc pass.
#include <gtest/gtest.h>

#include "compiler/passes/layout_nchwnc.h"
#include "tests/compiler/test_util.h"

namespace tessel::compiler {
namespace {

int q8(ir::Graph& g, const std::string& name, std::vector<int64_t> shape) {
  const int v = testing::act(g, name, std::move(shape), ir::DType::kI8);
  g.values[v].quant = ir::QuantInfo::tensor(1.0f, 0);
  return v;
}

TEST(LayoutNchwnc, PacksAroundAccelLayersAndRemovesInnerUnpackPack) {
  ir::Graph g;
  const int x = q8(g, "x", {1, 16, 4, 4});
  g.inputs = {x};
  const int w = g.add_const_i8("w", {16, 16, 1, 1}, std::vector<int8_t>(256, 1));
  const int b = g.add_const_i32("b", {16}, std::vector<int32_t>(16, 0));
  const int a = q8(g, "a", {1, 16, 4, 4}), c = q8(g, "c", {1, 16, 4, 4}), p = q8(g, "p", {1, 16, 2, 2});
  testing::add_node(g, "qconv2d", "conv1", {x, w, b}, {a}, nlohmann::json::object(), "tessel");
  testing::add_node(g, "qconv2d", "conv2", {a, w, b}, {c}, nlohmann::json::object(), "tessel");
  testing::add_node(g, "maxpool", "pool", {c}, {p}, nlohmann::json::object(), "tessel");
  g.nodes[0].placement = g.nodes[1].placement = runtime::Placement::kAccel;
  g.outputs = {p};
  passes::PassContext ctx;  // default config: BATCH 1, BLOCK_IN = BLOCK_OUT = 16
  passes::layout_nchwnc(g, ctx);
  std::vector<std::string> ops;
  for (const auto& n : g.nodes) ops.push_back(n.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"pack_nchwnc", "qconv2d", "qconv2d", "unpack_nchwnc", "maxpool"}));
  const ir::Value& in1 = g.values[g.nodes[1].inputs[0]];
  EXPECT_EQ(in1.layout, runtime::Layout::kNCHWnc);
  EXPECT_EQ(in1.block_n, 1);
  EXPECT_EQ(in1.block_c, 16);
  // conv2 reads conv1's packed output directly.
  EXPECT_EQ(g.nodes[2].inputs[0], g.nodes[1].outputs[0]);
  EXPECT_EQ(g.values[g.nodes[3].outputs[0]].layout, runtime::Layout::kNCHW);
}

TEST(LayoutNchwnc, KeepsUnpackWhenTheNchwTensorIsAlsoUsedOnTheCpu) {
  ir::Graph g;
  const int x = q8(g, "x", {1, 16, 4, 4});
  g.inputs = {x};
  const int w = g.add_const_i8("w", {16, 16, 1, 1}, std::vector<int8_t>(256, 1));
  const int b = g.add_const_i32("b", {16}, std::vector<int32_t>(16, 0));
  const int a = q8(g, "a", {1, 16, 4, 4}), c = q8(g, "c", {1, 16, 4, 4}), s = q8(g, "s", {1, 16, 4, 4});
  testing::add_node(g, "qconv2d", "conv1", {x, w, b}, {a}, nlohmann::json::object(), "tessel");
  testing::add_node(g, "qconv2d", "conv2", {a, w, b}, {c}, nlohmann::json::object(), "tessel");
  testing::add_node(g, "qadd", "add", {a, c}, {s}, nlohmann::json::object(), "tessel");
  g.nodes[0].placement = g.nodes[1].placement = runtime::Placement::kAccel;
  g.outputs = {s};
  passes::PassContext ctx;
  passes::layout_nchwnc(g, ctx);
  EXPECT_EQ(testing::count_op(g, "pack_nchwnc"), 1);
  EXPECT_EQ(testing::count_op(g, "unpack_nchwnc"), 2);
}

TEST(LayoutNchwnc, AcceleratorQaddReadsAndWritesThePackedTensors) {
  ir::Graph g;
  const int x = q8(g, "x", {1, 16, 4, 4});
  g.inputs = {x};
  const int w = g.add_const_i8("w", {16, 16, 1, 1}, std::vector<int8_t>(256, 1));
  const int b = g.add_const_i32("b", {16}, std::vector<int32_t>(16, 0));
  const int a = q8(g, "a", {1, 16, 4, 4}), c = q8(g, "c", {1, 16, 4, 4}), s = q8(g, "s", {1, 16, 4, 4}),
            d = q8(g, "d", {1, 16, 4, 4});
  testing::add_node(g, "qconv2d", "conv1", {x, w, b}, {a}, nlohmann::json::object(), "tessel");
  testing::add_node(g, "qconv2d", "conv2", {a, w, b}, {c}, nlohmann::json::object(), "tessel");
  testing::add_node(g, "qadd", "add", {a, c}, {s}, nlohmann::json::object(), "tessel");
  testing::add_node(g, "qconv2d", "conv3", {s, w, b}, {d}, nlohmann::json::object(), "tessel");
  for (ir::Node& n : g.nodes) n.placement = runtime::Placement::kAccel;
  g.outputs = {d};
  passes::PassContext ctx;
  passes::layout_nchwnc(g, ctx);
  std::vector<std::string> ops;
  for (const auto& n : g.nodes) ops.push_back(n.op);
  // one pack of the graph input, one unpack of the graph output: the add works on packed tensors
  EXPECT_EQ(ops, (std::vector<std::string>{"pack_nchwnc", "qconv2d", "qconv2d", "qadd", "qconv2d", "unpack_nchwnc"}));
  const ir::Node& add = g.nodes[3];
  EXPECT_EQ(add.inputs[0], g.nodes[1].outputs[0]);
  EXPECT_EQ(add.inputs[1], g.nodes[2].outputs[0]);
  EXPECT_EQ(g.nodes[4].inputs[0], add.outputs[0]);
  const ir::Value& out = g.values[add.outputs[0]];
  EXPECT_EQ(out.layout, runtime::Layout::kNCHWnc);
  EXPECT_EQ(out.block_c, 16);
}

}  // namespace
}  // namespace tessel::compiler
