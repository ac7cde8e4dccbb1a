// Unit tests of the graph IR: value naming, dead-code removal, topological sort, dump.
#include <gtest/gtest.h>

#include "compiler/ir/graph.h"
#include "support/error.h"
#include "tests/compiler/test_util.h"

namespace tessel::compiler {
namespace {

using testing::act;
using testing::add_node;

TEST(Graph, AddValueMakesNamesUnique) {
  ir::Graph g;
  const int a = act(g, "x", {1});
  const int b = act(g, "x", {1});
  const int c = act(g, "x", {1});
  EXPECT_EQ(g.values[a].name, "x");
  EXPECT_EQ(g.values[b].name, "x_1");
  EXPECT_EQ(g.values[c].name, "x_2");
}

TEST(Graph, RemoveDeadDropsUnusedNodesAndConstants) {
  ir::Graph g;
  const int x = act(g, "x", {4});
  g.inputs = {x};
  const int c = g.add_const_f32("c", {4}, {1, 2, 3, 4});
  const int unused = g.add_const_f32("unused", {1}, {5});
  const int y = act(g, "y", {4});
  const int dead = act(g, "dead", {4});
  add_node(g, "Relu", "dead_relu", {x}, {dead});
  add_node(g, "Add", "add", {x, c}, {y});
  g.outputs = {y};
  g.remove_dead();
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].name, "add");
  EXPECT_EQ(g.values.size(), 3u);  // x, c, y
  for (const auto& v : g.values) EXPECT_NE(v.name, "unused");
  (void)unused;
  EXPECT_EQ(g.values[g.outputs[0]].name, "y");
  EXPECT_EQ(g.values[g.nodes[0].inputs[1]].name, "c");
}

TEST(Graph, TopoSortOrdersProducersFirstAndDetectsUndefinedInputs) {
  ir::Graph g;
  const int x = act(g, "x", {1});
  g.inputs = {x};
  const int a = act(g, "a", {1});
  const int b = act(g, "b", {1});
  add_node(g, "Relu", "second", {a}, {b});
  add_node(g, "Relu", "first", {x}, {a});
  g.outputs = {b};
  g.topo_sort();
  EXPECT_EQ(g.nodes[0].name, "first");
  EXPECT_EQ(g.nodes[1].name, "second");

  const int orphan = act(g, "orphan", {1});
  const int z = act(g, "z", {1});
  add_node(g, "Relu", "reads_orphan", {orphan}, {z});
  try {
    g.topo_sort();
    FAIL() << "expected UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'reads_orphan' (Relu): input 'orphan'"), std::string::npos) << e.what();
  }
}

TEST(Graph, DumpShowsTypesQuantAttrsAndPlacement) {
  ir::Graph g;
  g.name = "tiny";
  g.opset = 13;
  const int x = act(g, "x", {1, 2}, ir::DType::kI8);
  g.values[x].quant = ir::QuantInfo::tensor(0.5f, -3);
  g.inputs = {x};
  const int y = act(g, "y", {1, 2}, ir::DType::kI8);
  g.values[y].quant = ir::QuantInfo::tensor(0.5f, -3);
  add_node(g, "qclip", "clip", {x}, {y}, {{"hi", 127}, {"lo", -3}}, "tessel");
  g.nodes[0].placement = runtime::Placement::kAccel;
  g.outputs = {y};
  EXPECT_EQ(g.dump(),
            "graph 'tiny' opset 13 {\n"
            "  input %x: i8[1,2] q(0.5,-3)\n"
            "  %y: i8[1,2] q(0.5,-3) = tessel.qclip(%x) {\"hi\":127,\"lo\":-3} @accel # clip\n"
            "  output %y\n"
            "}\n");
}

TEST(Graph, ConstAccessorsConvertEveryIntegerType) {
  ir::Graph g;
  const int a = g.add_const("u8", ir::DType::kU8, {3}, {0, 128, 255});
  const int b = g.add_const_i8("i8", {2}, {-128, 127});
  const int c = g.add_const_i32("i32", {1}, {-70000});
  EXPECT_EQ(g.const_i64(a), (std::vector<int64_t>{0, 128, 255}));
  EXPECT_EQ(g.const_i64(b), (std::vector<int64_t>{-128, 127}));
  EXPECT_EQ(g.const_f32(c), (std::vector<float>{-70000.0f}));
  EXPECT_THROW(g.add_const("bad", ir::DType::kF32, {2}, {0, 0, 0}), InternalError);
}

}  // namespace
}  // namespace tessel::compiler
