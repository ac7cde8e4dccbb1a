// Unit tests of the placement pass.
#include <gtest/gtest.h>

#include "compiler/passes/placement.h"
#include "tests/compiler/test_util.h"

namespace tessel::compiler {
namespace {

TEST(Placement, Qconv2dOnTheAcceleratorOnlyWithOffload) {
  ir::Graph g;
  const int x = testing::act(g, "x", {1}), y = testing::act(g, "y", {1}), z = testing::act(g, "z", {1});
  g.inputs = {x};
  testing::add_node(g, "qconv2d", "conv", {x}, {y}, nlohmann::json::object(), "tessel");
  testing::add_node(g, "maxpool", "pool", {y}, {z}, nlohmann::json::object(), "tessel");
  g.outputs = {z};
  passes::PassContext ctx;
  ctx.offload = true;
  passes::placement(g, ctx);
  EXPECT_EQ(g.nodes[0].placement, runtime::Placement::kAccel);
  EXPECT_EQ(g.nodes[1].placement, runtime::Placement::kCpu);
  ctx.offload = false;
  passes::placement(g, ctx);
  EXPECT_EQ(g.nodes[0].placement, runtime::Placement::kCpu);
}

}  // namespace
}  // namespace tessel::compiler
