// Unit tests of the constant_folding pass.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/passes/constant_folding.h"
#include "compiler/passes/shape_inference.h"
#include "tests/compiler/test_util.h"

namespace tessel::compiler {
namespace {

using testing::act;
using testing::add_node;
using testing::count_op;

TEST(ConstantFolding, FoldsConstantSubgraphsButNotDequantize) {
  ir::Graph g;
  const int x = act(g, "x", {1, 4});
  g.inputs = {x};
  const int w = g.add_const_f32("w", {2, 2}, {1, 2, 3, 4});
  const int shape = g.add_const_i64("shape", {2}, {4, 1});
  const int wr = act(g, "wr", {4, 1});
  add_node(g, "Reshape", "reshape_w", {w, shape}, {wr});
  const int y = act(g, "y", {1, 1});
  add_node(g, "MatMul", "mm", {x, wr}, {y});
  const int q = g.add_const_i8("q", {1}, {4});
  const int s = g.add_const_f32("s", {}, {0.5f});
  const int dq = act(g, "dq", {1});
  add_node(g, "DequantizeLinear", "dq", {q, s}, {dq});
  const int z = act(g, "z", {1, 1});
  add_node(g, "Add", "add", {y, dq}, {z});
  g.outputs = {z};
  passes::PassContext ctx;
  passes::constant_folding(g, ctx);
  EXPECT_EQ(count_op(g, "Reshape"), 0);
  EXPECT_EQ(count_op(g, "DequantizeLinear"), 1);
  const int mm = testing::find_op(g, "MatMul");
  ASSERT_GE(mm, 0);
  const int folded = g.nodes[mm].inputs[1];
  EXPECT_TRUE(g.values[folded].is_const);
  EXPECT_EQ(g.values[folded].shape, (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(g.const_f32(folded), (std::vector<float>{1, 2, 3, 4}));
}

TEST(ConstantFolding, ShapeOfStaticValueAndIdentityRemoval) {
  ir::Graph g;
  const int x = act(g, "x", {2, 3});
  g.inputs = {x};
  const int r = act(g, "r", {2, 3});
  add_node(g, "Relu", "relu", {x}, {r});
  const int s = act(g, "s", {2}, ir::DType::kI64);
  add_node(g, "Shape", "shape", {r}, {s});
  const int y = act(g, "y", {2, 3});
  add_node(g, "Reshape", "reshape", {r, s}, {y});
  const int out = act(g, "output", {2, 3});
  add_node(g, "Identity", "id", {y}, {out});
  g.outputs = {out};
  passes::PassContext ctx;
  passes::constant_folding(g, ctx);
  EXPECT_EQ(count_op(g, "Shape"), 0);
  EXPECT_EQ(count_op(g, "Identity"), 0);
  const int re = testing::find_op(g, "Reshape");
  ASSERT_GE(re, 0);
  EXPECT_EQ(g.const_i64(g.nodes[re].inputs[1]), (std::vector<int64_t>{2, 3}));
  // The graph output keeps its ONNX name after the Identity is removed.
  EXPECT_EQ(g.values[g.outputs[0]].name, "output");
  EXPECT_EQ(g.nodes[re].outputs[0], g.outputs[0]);
}

// A chain of Identity nodes ending in a graph output collapses: the output keeps its name, the
// consumers of every link read the chain's source, and an Identity from a graph input to an
// output stays (both names are visible).
TEST(ConstantFolding, IdentityChainsCollapseInOneWalk) {
  ir::Graph g;
  const int x = act(g, "x", {2});
  g.inputs = {x};
  const int r = act(g, "r", {2});
  add_node(g, "Relu", "relu", {x}, {r});
  int prev = r;
  std::vector<int> links;
  for (int i = 0; i < 5; ++i) {
    const int v = act(g, "id" + std::to_string(i), {2});
    add_node(g, "Identity", "identity" + std::to_string(i), {prev}, {v});
    links.push_back(v);
    prev = v;
  }
  const int side = act(g, "side", {2});
  add_node(g, "Relu", "side_relu", {links[2]}, {side});
  const int copy = act(g, "copy", {2});
  add_node(g, "Identity", "copy_of_input", {x}, {copy});
  g.outputs = {prev, side, copy};
  passes::PassContext ctx;
  passes::constant_folding(g, ctx);
  EXPECT_EQ(count_op(g, "Identity"), 1);
  ASSERT_EQ(g.outputs.size(), 3u);
  EXPECT_EQ(g.values[g.outputs[0]].name, "id4");
  EXPECT_EQ(g.values[g.outputs[2]].name, "copy");
  const int relu = testing::find_op(g, "Relu");
  ASSERT_GE(relu, 0);
  EXPECT_EQ(g.nodes[relu].outputs[0], g.outputs[0]);  // the relu now writes "id4"
  int side_relu = -1;
  for (size_t k = 0; k < g.nodes.size(); ++k)
    if (g.nodes[k].name == "side_relu") side_relu = static_cast<int>(k);
  ASSERT_GE(side_relu, 0);
  EXPECT_EQ(g.nodes[side_relu].inputs[0], g.outputs[0]);
}

}  // namespace
}  // namespace tessel::compiler
