// Unit tests of the shape_inference pass.
#include <gtest/gtest.h>

#include "compiler/passes/shape_inference.h"
#include "support/error.h"
#include "tests/compiler/test_util.h"

namespace tessel::compiler {
namespace {

using testing::act;
using testing::add_node;

int unknown(ir::Graph& g, const std::string& name) {
  ir::Value v;
  v.name = name;
  return g.add_value(v);
}

TEST(ShapeInference, ConvPoolGemmChain) {
  ir::Graph g;
  const int x = act(g, "x", {2, 3, 32, 32});
  g.inputs = {x};
  const int w = g.add_const_f32("w", {8, 3, 3, 3}, std::vector<float>(8 * 27, 0.0f));
  const int c = unknown(g, "c"), p = unknown(g, "p"), f = unknown(g, "f"), y = unknown(g, "y");
  add_node(g, "Conv", "conv", {x, w}, {c}, {{"pads", {1, 1, 1, 1}}, {"strides", {2, 2}}});
  add_node(g, "MaxPool", "pool", {c}, {p}, {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"ceil_mode", 1}});
  add_node(g, "Flatten", "flat", {p}, {f});
  const int b = g.add_const_f32("b", {10, 8 * 8 * 8}, std::vector<float>(10 * 512, 0.0f));
  add_node(g, "Gemm", "fc", {f, b}, {y}, {{"transB", 1}});
  g.outputs = {y};
  passes::PassContext ctx;
  passes::shape_inference(g, ctx);
  EXPECT_EQ(g.values[c].shape, (std::vector<int64_t>{2, 8, 16, 16}));  // (32+2-3)/2+1
  EXPECT_EQ(g.values[p].shape, (std::vector<int64_t>{2, 8, 8, 8}));    // ceil((16-3)/2)+1
  EXPECT_EQ(g.values[f].shape, (std::vector<int64_t>{2, 512}));
  EXPECT_EQ(g.values[y].shape, (std::vector<int64_t>{2, 10}));
  EXPECT_EQ(g.values[y].dtype, ir::DType::kF32);
}

TEST(ShapeInference, ShapeGatherUnsqueezeConcatFeedReshape) {
  // The mobilenetv2 tail: Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])).
  ir::Graph g;
  g.opset = 12;
  const int x = act(g, "x", {4, 1280, 1, 1});
  g.inputs = {x};
  const int s = unknown(g, "s"), n = unknown(g, "n"), u = unknown(g, "u"), cat = unknown(g, "cat"), y = unknown(g, "y");
  const int zero = g.add_const_i64("zero", {}, {0});
  const int minus1 = g.add_const_i64("m1", {1}, {-1});
  add_node(g, "Shape", "shape", {x}, {s});
  add_node(g, "Gather", "gather", {s, zero}, {n}, {{"axis", 0}});
  add_node(g, "Unsqueeze", "unsq", {n}, {u}, {{"axes", {0}}});
  add_node(g, "Concat", "concat", {u, minus1}, {cat}, {{"axis", 0}});
  add_node(g, "Reshape", "reshape", {x, cat}, {y});
  g.outputs = {y};
  passes::PassContext ctx;
  passes::shape_inference(g, ctx);
  EXPECT_EQ(g.values[s].shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(g.values[cat].shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(g.values[y].shape, (std::vector<int64_t>{4, 1280}));
}

TEST(ShapeInference, QLinearOutputsTakeTheZeroPointType) {
  ir::Graph g;
  const int x = act(g, "x", {1, 2, 4, 4}, ir::DType::kU8);
  g.inputs = {x};
  const int sc = g.add_const_f32("s", {}, {1.0f});
  const int zu = g.add_const("zu", ir::DType::kU8, {}, {0});
  const int zi = g.add_const_i8("zi", {}, {0});
  const int y = unknown(g, "y");
  add_node(g, "QLinearGlobalAveragePool", "gap", {x, sc, zu, sc, zi}, {y}, nlohmann::json::object(), "com.microsoft");
  g.outputs = {y};
  passes::PassContext ctx;
  passes::shape_inference(g, ctx);
  EXPECT_EQ(g.values[y].dtype, ir::DType::kI8);
  EXPECT_EQ(g.values[y].shape, (std::vector<int64_t>{1, 2, 1, 1}));
}

TEST(ShapeInference, ErrorsNameTheNode) {
  ir::Graph g;
  const int x = act(g, "x", {1, 3, 8, 8});
  g.inputs = {x};
  const int w = g.add_const_f32("w", {4, 2, 3, 3}, std::vector<float>(72, 0.0f));
  const int y = unknown(g, "y");
  add_node(g, "Conv", "conv7", {x, w}, {y});
  g.outputs = {y};
  passes::PassContext ctx;
  try {
    passes::shape_inference(g, ctx);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "node 'conv7' (Conv): group 1 does not match input channels 3 and weights [4,2,3,3]");
  }
  ir::Graph h;
  const int a = act(h, "a", {2, 6});
  h.inputs = {a};
  const int shp = act(h, "dynamic_shape", {2}, ir::DType::kI64);
  h.inputs.push_back(shp);
  const int r = unknown(h, "r");
  add_node(h, "Reshape", "reshape", {a, shp}, {r});
  h.outputs = {r};
  EXPECT_THROW(passes::shape_inference(h, ctx), UserError);
}

}  // namespace
}  // namespace tessel::compiler
