// Unit tests of the fuse_activation pass.
#include <gtest/gtest.h>

#include "compiler/passes/fuse_activation.h"
#include "tests/compiler/test_util.h"

namespace tessel::compiler {
namespace {

using testing::act;
using testing::add_node;

int q8(ir::Graph& g, const std::string& name, std::vector<int64_t> shape, int32_t zp) {
  const int v = act(g, name, std::move(shape), ir::DType::kI8);
  g.values[v].quant = ir::QuantInfo::tensor(0.5f, zp);
  return v;
}

TEST(FuseActivation, ClipIntoConvRequantBounds) {
  ir::Graph g;
  const int x = q8(g, "x", {1, 1, 1, 1}, 0);
  g.inputs = {x};
  const int w = g.add_const_i8("w", {1, 1, 1, 1}, {1});
  const int b = g.add_const_i32("b", {1}, {0});
  const int c = q8(g, "c", {1, 1, 1, 1}, -5), y = q8(g, "y", {1, 1, 1, 1}, -5);
  add_node(g, "qconv2d", "conv", {x, w, b}, {c}, {{"requant", {{"clip_lo", -128}, {"clip_hi", 100}}}}, "tessel");
  add_node(g, "qclip", "relu6", {c}, {y}, {{"lo", -5}, {"hi", 120}}, "tessel");
  g.outputs = {y};
  passes::PassContext ctx;
  passes::fuse_activation(g, ctx);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].attrs["requant"]["clip_lo"], -5);
  EXPECT_EQ(g.nodes[0].attrs["requant"]["clip_hi"], 100);
  EXPECT_EQ(g.values[g.nodes[0].outputs[0]].name, "y");
}

TEST(FuseActivation, ReluIntoQadd) {
  ir::Graph g;
  const int a = q8(g, "a", {4}, 3), b = q8(g, "b", {4}, 3);
  g.inputs = {a, b};
  const int s = q8(g, "s", {4}, 3), y = q8(g, "y", {4}, 3);
  add_node(g, "qadd", "add", {a, b}, {s}, {{"relu", false}}, "tessel");
  add_node(g, "qclip", "relu", {s}, {y}, {{"lo", 3}, {"hi", 127}}, "tessel");
  g.outputs = {y};
  passes::PassContext ctx;
  passes::fuse_activation(g, ctx);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].attrs["relu"], true);
}

TEST(FuseActivation, KeepsClipWhenTheProducerHasOtherConsumers) {
  ir::Graph g;
  const int a = q8(g, "a", {4}, 0), b = q8(g, "b", {4}, 0);
  g.inputs = {a, b};
  const int s = q8(g, "s", {4}, 0), y = q8(g, "y", {4}, 0);
  add_node(g, "qadd", "add", {a, b}, {s}, {{"relu", false}}, "tessel");
  add_node(g, "qclip", "relu", {s}, {y}, {{"lo", 0}, {"hi", 127}}, "tessel");
  g.outputs = {y, s};
  passes::PassContext ctx;
  passes::fuse_activation(g, ctx);
  EXPECT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].attrs["relu"], false);
}

}  // namespace
}  // namespace tessel::compiler
