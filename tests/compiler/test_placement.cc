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

int q8(ir::Graph& g, const std::string& name, std::vector<int64_t> shape, float scale, int32_t zp) {
  const int v = testing::act(g, name, std::move(shape), ir::DType::kI8);
  g.values[v].quant = ir::QuantInfo::tensor(scale, zp);
  return v;
}

/// conv1 -> a, conv2 -> c (both on the accelerator), add(a, c) -> s; scales as given.
struct ResidualGraph {
  ir::Graph g;
  int a = -1, c = -1, s = -1;
  explicit ResidualGraph(float sa, float sc, float ss, std::vector<int64_t> c_shape = {1, 16, 4, 4}) {
    const int x = q8(g, "x", {1, 16, 4, 4}, 0.1f, 0);
    g.inputs = {x};
    const int w = g.add_const_i8("w", {16, 16, 1, 1}, std::vector<int8_t>(256, 1));
    const int b = g.add_const_i32("b", {16}, std::vector<int32_t>(16, 0));
    a = q8(g, "a", {1, 16, 4, 4}, sa, 3);
    c = q8(g, "c", c_shape, sc, -2);
    s = q8(g, "s", {1, 16, 4, 4}, ss, 1);
    testing::add_node(g, "qconv2d", "conv1", {x, w, b}, {a}, nlohmann::json::object(), "tessel");
    testing::add_node(g, "qconv2d", "conv2", {a, w, b}, {c}, nlohmann::json::object(), "tessel");
    testing::add_node(g, "qadd", "add", {a, c}, {s}, {{"relu", false}}, "tessel");
    g.outputs = {s};
  }
};

TEST(Placement, ResidualAddOnTheAcceleratorWhenItHasASchemeAndPackedOperands) {
  ResidualGraph r(0.0321f, 0.0457f, 0.0518f);  // int32 multipliers (no 16-bit scheme)
  passes::PassContext ctx;
  passes::placement(r.g, ctx);
  EXPECT_EQ(r.g.nodes[2].placement, runtime::Placement::kAccel);
  EXPECT_EQ(r.g.nodes[2].placement_reason, "");
  ctx.offload = false;
  passes::placement(r.g, ctx);
  EXPECT_EQ(r.g.nodes[2].placement, runtime::Placement::kCpu);
  EXPECT_EQ(r.g.nodes[2].placement_reason, "");  // nothing was considered
}

TEST(Placement, ResidualAddWithoutAnExactSchemeStaysOnTheCpuWithTheReason) {
  // sa / sy = sc / sy = 1/2: the kernel rounds the ties to even, no floor shift does
  ResidualGraph r(0.5f, 0.5f, 1.0f);
  r.g.values[r.a].quant = ir::QuantInfo::tensor(0.5f, 0);
  r.g.values[r.c].quant = ir::QuantInfo::tensor(0.5f, 0);
  r.g.values[r.s].quant = ir::QuantInfo::tensor(1.0f, 0);
  passes::PassContext ctx;
  passes::placement(r.g, ctx);
  const ir::Node& add = r.g.nodes[2];
  EXPECT_EQ(add.placement, runtime::Placement::kCpu);
  EXPECT_EQ(add.placement_reason.rfind("no exact int32 scheme up to shift", 0), 0u) << add.placement_reason;
  // the dump says why
  EXPECT_NE(r.g.dump().find("# add"), std::string::npos);
  EXPECT_NE(r.g.dump().find(" @cpu(no exact int32 scheme up to shift"), std::string::npos) << r.g.dump();
}

TEST(Placement, ResidualAddReasons) {
  {
    // an operand from a CPU layer is not packed: the add stays with it
    ResidualGraph r(0.0321f, 0.0457f, 0.0518f);
    r.g.nodes[1].op = "maxpool";
    passes::PassContext ctx;
    passes::placement(r.g, ctx);
    EXPECT_EQ(r.g.nodes[2].placement, runtime::Placement::kCpu);
    EXPECT_EQ(r.g.nodes[2].placement_reason,
              "operand 'c' comes from node 'conv2' (maxpool) on the CPU, not from an accelerator layer");
  }
  {
    ResidualGraph r(0.0321f, 0.0457f, 0.0518f, {1, 16, 1, 4});
    passes::PassContext ctx;
    passes::placement(r.g, ctx);
    EXPECT_EQ(r.g.nodes[2].placement_reason, "operand 'c' is broadcast: [1,16,1,4] to the output's [1,16,4,4]");
  }
  {
    // a graph input operand
    ResidualGraph r(0.0321f, 0.0457f, 0.0518f);
    r.g.nodes[2].inputs[1] = r.g.inputs[0];
    r.g.values[r.g.inputs[0]].quant = ir::QuantInfo::tensor(0.0457f, 0);
    passes::PassContext ctx;
    passes::placement(r.g, ctx);
    EXPECT_EQ(r.g.nodes[2].placement_reason,
              "operand 'x' is a graph input or constant, not an accelerator layer's output");
  }
  {
    // one output row of both operands and the constants must fit ACC (2048 rows by default)
    ResidualGraph r(0.0321f, 0.0457f, 0.0518f);
    for (int v : {r.a, r.c, r.s}) r.g.values[v].shape = {1, 16, 4, 1023};
    passes::PassContext ctx;
    passes::placement(r.g, ctx);
    EXPECT_EQ(r.g.nodes[2].placement_reason, "a row of 1023 columns needs 2049 acc rows, ACC holds 2048");
  }
}

}  // namespace
}  // namespace tessel::compiler
