// Unit tests of the dead_code_elimination pass.
#include <gtest/gtest.h>

#include "compiler/passes/dead_code_elimination.h"
#include "tests/compiler/test_util.h"

namespace tessel::compiler {
namespace {

TEST(DeadCodeElimination, RemovesChainsNotReachingOutputsKeepsInputs) {
  ir::Graph g;
  const int x = testing::act(g, "x", {3});
  const int unused_input = testing::act(g, "unused_input", {3});
  g.inputs = {x, unused_input};
  const int a = testing::act(g, "a", {3}), b = testing::act(g, "b", {3}), y = testing::act(g, "y", {3});
  testing::add_node(g, "Relu", "dead1", {x}, {a});
  testing::add_node(g, "Relu", "dead2", {a}, {b});
  testing::add_node(g, "Relu", "live", {x}, {y});
  g.add_const_f32("orphan", {1}, {1.0f});
  g.outputs = {y};
  passes::PassContext ctx;
  passes::dead_code_elimination(g, ctx);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].name, "live");
  ASSERT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(g.values[g.inputs[1]].name, "unused_input");
  EXPECT_EQ(g.values.size(), 3u);  // x, unused_input, y
}

}  // namespace
}  // namespace tessel::compiler
