// Unit tests of the fuse_bias pass.
#include <gtest/gtest.h>

#include "compiler/passes/fuse_bias.h"
#include "compiler/reference/interpreter.h"
#include "tests/compiler/test_util.h"

namespace tessel::compiler {
namespace {

using testing::act;
using testing::add_node;

// A 1x1 Conv from one input channel [1, 1, 1, 2] ("x") to two output channels (weights 1 and 2);
// returns its output [1, 2, 1, 2] ("c").
int one_to_two_channel_conv(ir::Graph& g) {
  const int x = act(g, "x", {1, 1, 1, 2});
  g.inputs = {x};
  const int w = g.add_const_f32("w", {2, 1, 1, 1}, {1.0f, 2.0f});
  const int c = act(g, "c", {1, 2, 1, 2});
  add_node(g, "Conv", "conv", {x, w}, {c});
  return c;
}

TEST(FuseBias, ConvPlusPerChannelConstant) {
  ir::Graph g;
  const int c = one_to_two_channel_conv(g);
  const int b = g.add_const_f32("b", {2, 1, 1}, {10.0f, 20.0f});
  const int y = act(g, "y", {1, 2, 1, 2});
  add_node(g, "Add", "add", {c, b}, {y});
  g.outputs = {y};
  passes::PassContext ctx;
  passes::fuse_bias(g, ctx);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op, "Conv");
  EXPECT_EQ(g.nodes[0].outputs[0], g.outputs[0]);
  EXPECT_EQ(g.const_f32(g.nodes[0].inputs[2]), (std::vector<float>{10.0f, 20.0f}));
  reference::RefTensor in;
  in.shape = {1, 1, 1, 2};
  in.f = {1.0f, 3.0f};
  EXPECT_EQ(reference::run_graph(g, {in})[0].f, (std::vector<float>{11, 13, 22, 26}));
}

// Conv -> Add -> Add, both per-channel constants: one walk folds both (the second Add reads
// the output the Conv took over from the first), and the biases sum.
TEST(FuseBias, ChainOfTwoAddsFoldsBoth) {
  ir::Graph g;
  const int c = one_to_two_channel_conv(g);
  const int b1 = g.add_const_f32("b1", {2, 1, 1}, {10.0f, 20.0f});
  const int y1 = act(g, "y1", {1, 2, 1, 2});
  add_node(g, "Add", "add1", {c, b1}, {y1});
  const int b2 = g.add_const_f32("b2", {1, 2, 1, 1}, {1.0f, 2.0f});
  const int y2 = act(g, "y2", {1, 2, 1, 2});
  add_node(g, "Add", "add2", {b2, y1}, {y2});
  g.outputs = {y2};
  passes::PassContext ctx;
  passes::fuse_bias(g, ctx);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op, "Conv");
  EXPECT_EQ(g.nodes[0].source_op, "Conv+Add+Add");
  EXPECT_EQ(g.const_f32(g.nodes[0].inputs[2]), (std::vector<float>{11.0f, 22.0f}));
  EXPECT_EQ(g.values[g.outputs[0]].name, "y2");
}

TEST(FuseBias, MatMulPlusRowBecomesGemm) {
  ir::Graph g;
  const int x = act(g, "x", {1, 2});
  g.inputs = {x};
  const int w = g.add_const_f32("w", {2, 3}, {1, 0, 1, 0, 1, 1});
  const int m = act(g, "m", {1, 3});
  add_node(g, "MatMul", "mm", {x, w}, {m});
  const int b = g.add_const_f32("b", {1, 3}, {1, 2, 3});
  const int y = act(g, "y", {1, 3});
  add_node(g, "Add", "add", {b, m}, {y});
  g.outputs = {y};
  passes::PassContext ctx;
  passes::fuse_bias(g, ctx);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op, "Gemm");
  reference::RefTensor in;
  in.shape = {1, 2};
  in.f = {2.0f, 5.0f};
  EXPECT_EQ(reference::run_graph(g, {in})[0].f, (std::vector<float>{3, 7, 10}));
}

TEST(FuseBias, LeavesNonPerChannelAddsAlone) {
  ir::Graph g;
  const int c = one_to_two_channel_conv(g);
  const int b = g.add_const_f32("b", {2}, {10.0f, 20.0f});  // broadcasts along W, not C
  const int y = act(g, "y", {1, 2, 1, 2});
  add_node(g, "Add", "add", {c, b}, {y});
  g.outputs = {y};
  passes::PassContext ctx;
  passes::fuse_bias(g, ctx);
  EXPECT_EQ(g.nodes.size(), 2u);
}

}  // namespace
}  // namespace tessel::compiler
