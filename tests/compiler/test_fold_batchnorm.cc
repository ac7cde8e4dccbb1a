// Unit tests of the fold_batchnorm pass: the folded graph computes the same values (reference
// interpreter) and the folded weights match hand-computed ones.
#include <gtest/gtest.h>

#include <cmath>

#include "compiler/passes/fold_batchnorm.h"
#include "compiler/reference/interpreter.h"
#include "tests/compiler/test_util.h"

namespace tessel::compiler {
namespace {

using testing::act;
using testing::add_node;

ir::Graph conv_bn(bool bn_after_relu) {
  ir::Graph g;
  const int x = act(g, "x", {1, 1, 2, 2});
  g.inputs = {x};
  const int w = g.add_const_f32("w", {2, 1, 1, 1}, {2.0f, -1.0f});
  const int c = act(g, "c", {1, 2, 2, 2});
  add_node(g, "Conv", "conv", {x, w}, {c});
  int bn_in = c;
  if (bn_after_relu) {
    bn_in = act(g, "r", {1, 2, 2, 2});
    add_node(g, "Relu", "relu", {c}, {bn_in});
  }
  const int gamma = g.add_const_f32("gamma", {2}, {1.0f, 3.0f});
  const int beta = g.add_const_f32("beta", {2}, {0.5f, -2.0f});
  const int mean = g.add_const_f32("mean", {2}, {1.0f, 0.0f});
  const int var = g.add_const_f32("var", {2}, {3.0f, 8.0f});
  const int y = act(g, "y", {1, 2, 2, 2});
  add_node(g, "BatchNormalization", "bn", {bn_in, gamma, beta, mean, var}, {y}, {{"epsilon", 1.0f}});
  g.outputs = {y};
  return g;
}

reference::RefTensor input() {
  reference::RefTensor t;
  t.shape = {1, 1, 2, 2};
  t.f = {1.0f, -2.0f, 3.0f, 0.5f};
  return t;
}

TEST(FoldBatchnorm, FoldsIntoConvWeightsAndBias) {
  ir::Graph g = conv_bn(false);
  const auto before = reference::run_graph(g, {input()});
  passes::PassContext ctx;
  passes::fold_batchnorm(g, ctx);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op, "Conv");
  // s = gamma / sqrt(var + eps) = {1/2, 3/3}; W' = {2 * 0.5, -1 * 1}; b' = beta - mean * s.
  EXPECT_EQ(g.const_f32(g.nodes[0].inputs[1]), (std::vector<float>{1.0f, -1.0f}));
  EXPECT_EQ(g.const_f32(g.nodes[0].inputs[2]), (std::vector<float>{0.0f, -2.0f}));
  const auto after = reference::run_graph(g, {input()});
  ASSERT_EQ(after[0].f.size(), before[0].f.size());
  for (size_t i = 0; i < before[0].f.size(); ++i) EXPECT_NEAR(after[0].f[i], before[0].f[i], 1e-6) << i;
}

TEST(FoldBatchnorm, UnfoldableBecomesMulAdd) {
  ir::Graph g = conv_bn(true);
  const auto before = reference::run_graph(g, {input()});
  passes::PassContext ctx;
  passes::fold_batchnorm(g, ctx);
  EXPECT_EQ(testing::count_op(g, "BatchNormalization"), 0);
  EXPECT_EQ(testing::count_op(g, "Mul"), 1);
  EXPECT_EQ(testing::count_op(g, "Add"), 1);
  const auto after = reference::run_graph(g, {input()});
  for (size_t i = 0; i < before[0].f.size(); ++i) EXPECT_NEAR(after[0].f[i], before[0].f[i], 1e-6) << i;
}

}  // namespace
}  // namespace tessel::compiler
