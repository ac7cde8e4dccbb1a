// Unit tests of the graph IR: value naming, dead-code removal, topological sort, dump.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

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

// The name index (a hash map kept in sync by add_value, rename_value and remove_dead) agrees
// with the names: a renamed value frees its old name and takes the new one; a name taken by
// hand ("x_1" added before "x" is taken twice) is skipped.
TEST(Graph, NameIndexFollowsRenamesAndRemoveDead) {
  ir::Graph g;
  const int x1 = act(g, "x_1", {1});
  const int x = act(g, "x", {1});
  EXPECT_EQ(g.values[act(g, "x", {1})].name, "x_2");  // x_1 is taken
  EXPECT_TRUE(g.name_used("x_1"));
  g.rename_value(x1, "renamed");
  EXPECT_FALSE(g.name_used("x_1"));
  EXPECT_TRUE(g.name_used("renamed"));
  EXPECT_EQ(g.unique_name("renamed"), "renamed_1");
  EXPECT_THROW(g.rename_value(x, "renamed"), InternalError);
  // remove_dead renumbers values; the index is rebuilt (only graph inputs survive here).
  g.inputs = {x};
  g.remove_dead();
  ASSERT_EQ(g.values.size(), 1u);
  EXPECT_TRUE(g.name_used("x"));
  EXPECT_FALSE(g.name_used("renamed"));
  EXPECT_EQ(g.values[act(g, "renamed", {1})].name, "renamed");
}

// unique_name keeps a counter per base: the k-th name derived from one base costs O(1), not a
// scan of the k - 1 taken ones (20,000 names from one base, each unique).
TEST(Graph, UniqueNamesFromOneBaseAreDistinct) {
  ir::Graph g;
  std::set<std::string> seen;
  for (int i = 0; i < 20000; ++i) seen.insert(g.values[act(g, "t", {1})].name);
  EXPECT_EQ(seen.size(), 20000u);
  EXPECT_EQ(g.values.back().name, "t_19999");
}

// The map form of replace_uses follows chains (a -> b -> c) and leaves other values alone; a
// cycle is an internal error.
TEST(Graph, ReplaceUsesMapFollowsChains) {
  ir::Graph g;
  const int a = act(g, "a", {1}), b = act(g, "b", {1}), c = act(g, "c", {1}), d = act(g, "d", {1});
  const int y = act(g, "y", {1});
  add_node(g, "Add", "n0", {a, d}, {y});
  g.outputs = {b, y};
  std::vector<int> to(g.values.size(), -1);
  to[a] = b;
  to[b] = c;
  g.replace_uses(to);
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<int>{c, d}));
  EXPECT_EQ(g.outputs, (std::vector<int>{c, y}));
  to.assign(g.values.size(), -1);
  to[c] = d;
  to[d] = c;
  EXPECT_THROW(g.replace_uses(to), InternalError);
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
