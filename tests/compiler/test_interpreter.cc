// Unit tests of the float reference interpreter against hand-computed values.
#include <gtest/gtest.h>

#include "compiler/reference/interpreter.h"
#include "support/error.h"

namespace tessel::compiler {
namespace {

using reference::RefTensor;

RefTensor f32(std::vector<int64_t> shape, std::vector<float> v) {
  RefTensor t;
  t.shape = std::move(shape);
  t.f = std::move(v);
  return t;
}
RefTensor ints(ir::DType d, std::vector<int64_t> shape, std::vector<int64_t> v) {
  RefTensor t;
  t.dtype = d;
  t.shape = std::move(shape);
  t.i = std::move(v);
  return t;
}
ir::Node node(const std::string& op, nlohmann::json attrs = nlohmann::json::object()) {
  ir::Node n;
  n.op = op;
  n.name = "n";
  n.attrs = std::move(attrs);
  return n;
}

TEST(Interpreter, ConvWithPaddingStrideAndBias) {
  // 1x1x3x3 input 1..9, 2x2 kernel of ones, pads 1 on top/left only, stride 2, bias 10.
  const RefTensor x = f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const RefTensor w = f32({1, 1, 2, 2}, {1, 1, 1, 1});
  const RefTensor b = f32({1}, {10});
  const auto out = reference::eval_node(node("Conv", {{"pads", {1, 1, 0, 0}}, {"strides", {2, 2}}}), 13, {&x, &w, &b});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{1, 1, 2, 2}));
  // Windows: {pad,pad,pad,1}=1, {pad,pad,2,3}=5, {pad,4,pad,7}=11, {5,6,8,9}=28.
  EXPECT_EQ(out[0].f, (std::vector<float>{11, 15, 21, 38}));
}

TEST(Interpreter, DepthwiseConvSameUpper) {
  const RefTensor x = f32({1, 2, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 40});
  const RefTensor w = f32({2, 1, 2, 2}, {1, 0, 0, 0, 0, 0, 0, 1});
  const auto out = reference::eval_node(node("Conv", {{"auto_pad", "SAME_UPPER"}, {"group", 2}}), 13, {&x, &w});
  ASSERT_EQ(out[0].shape, (std::vector<int64_t>{1, 2, 2, 2}));
  // SAME_UPPER with k=2: one pad at the end. Channel 0 picks the top-left tap (= x),
  // channel 1 the bottom-right tap (shifted, zero outside).
  EXPECT_EQ(out[0].f, (std::vector<float>{1, 2, 3, 4, 40, 0, 0, 0}));
}

TEST(Interpreter, QuantizeRoundsHalfToEvenAndSaturates) {
  const RefTensor x = f32({6}, {0.5f, 1.5f, 2.5f, -0.5f, 1000.0f, -1000.0f});
  const RefTensor s = f32({}, {1.0f});
  const RefTensor zp_u8 = ints(ir::DType::kU8, {}, {10});
  auto q = reference::eval_node(node("QuantizeLinear"), 13, {&x, &s, &zp_u8});
  EXPECT_EQ(q[0].dtype, ir::DType::kU8);
  EXPECT_EQ(q[0].i, (std::vector<int64_t>{10, 12, 12, 10, 255, 0}));
  const RefTensor zp_i8 = ints(ir::DType::kI8, {}, {0});
  q = reference::eval_node(node("QuantizeLinear"), 13, {&x, &s, &zp_i8});
  EXPECT_EQ(q[0].i, (std::vector<int64_t>{0, 2, 2, 0, 127, -128}));
}

TEST(Interpreter, DequantizePerAxis) {
  const RefTensor x = ints(ir::DType::kI8, {2, 2}, {1, 2, 3, 4});
  const RefTensor s = f32({2}, {0.5f, 2.0f});
  const RefTensor zp = ints(ir::DType::kI8, {2}, {1, 0});
  const auto y = reference::eval_node(node("DequantizeLinear", {{"axis", 0}}), 13, {&x, &s, &zp});
  EXPECT_EQ(y[0].f, (std::vector<float>{0.0f, 0.5f, 6.0f, 8.0f}));
}

TEST(Interpreter, QLinearConvRequantisesInFloatWithRoundHalfEven) {
  // acc = (x - zx) * w + bias = (7 - 3) * 5 + 2 = 22; y = rhe(22 * 0.25 * 1.0 / 2.0) + 100
  // = rhe(2.75) + 100 = 103.
  const RefTensor x = ints(ir::DType::kU8, {1, 1, 1, 1}, {7});
  const RefTensor xs = f32({}, {0.25f}), ws = f32({1}, {1.0f}), ys = f32({}, {2.0f});
  const RefTensor xz = ints(ir::DType::kU8, {}, {3}), wz = ints(ir::DType::kI8, {1}, {0});
  const RefTensor yz = ints(ir::DType::kU8, {}, {100});
  const RefTensor w = ints(ir::DType::kI8, {1, 1, 1, 1}, {5});
  const RefTensor b = ints(ir::DType::kI32, {1}, {2});
  const auto y = reference::eval_node(node("QLinearConv"), 12, {&x, &xs, &xz, &w, &ws, &wz, &ys, &yz, &b});
  EXPECT_EQ(y[0].i, (std::vector<int64_t>{103}));
}

TEST(Interpreter, QLinearAddAndGlobalAveragePool) {
  const RefTensor a = ints(ir::DType::kU8, {1, 2}, {10, 20});
  const RefTensor b = ints(ir::DType::kU8, {2}, {1, 3});
  const RefTensor sa = f32({}, {0.5f}), sb = f32({}, {1.0f}), sc = f32({}, {0.25f});
  const RefTensor za = ints(ir::DType::kU8, {}, {0}), zb = ints(ir::DType::kU8, {}, {1}), zc = ints(ir::DType::kU8, {}, {2});
  ir::Node add = node("QLinearAdd");
  add.domain = "com.microsoft";
  const auto y = reference::eval_node(add, 12, {&a, &sa, &za, &b, &sb, &zb, &sc, &zc});
  // (0.5*10 + 0) / 0.25 + 2 = 22; (0.5*20 + 2) / 0.25 + 2 = 50.
  EXPECT_EQ(y[0].i, (std::vector<int64_t>{22, 50}));
  const RefTensor x = ints(ir::DType::kU8, {1, 1, 2, 2}, {1, 2, 3, 5});
  ir::Node gap = node("QLinearGlobalAveragePool");
  const RefTensor s1 = f32({}, {1.0f}), z0 = ints(ir::DType::kU8, {}, {0}), s2 = f32({}, {2.0f});
  const auto p = reference::eval_node(gap, 12, {&x, &s1, &z0, &s2, &z0});
  EXPECT_EQ(p[0].i, (std::vector<int64_t>{1}));  // mean 2.75 / 2 = 1.375 -> 1
}

TEST(Interpreter, AveragePoolCountIncludePad) {
  const RefTensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  const auto attrs = nlohmann::json{{"kernel_shape", {2, 2}}, {"pads", {1, 1, 0, 0}}, {"strides", {2, 2}}};
  auto a = attrs;
  a["count_include_pad"] = 0;
  EXPECT_EQ(reference::eval_node(node("AveragePool", a), 13, {&x})[0].f[0], 1.0f);  // only x[0,0]
  a["count_include_pad"] = 1;
  EXPECT_EQ(reference::eval_node(node("AveragePool", a), 13, {&x})[0].f[0], 0.25f);
}

TEST(Interpreter, SoftmaxGemmGatherReshape) {
  const RefTensor x = f32({1, 2}, {0.0f, std::log(3.0f)});
  const auto s = reference::eval_node(node("Softmax", {{"axis", -1}}), 13, {&x});
  EXPECT_NEAR(s[0].f[0], 0.25f, 1e-6);
  EXPECT_NEAR(s[0].f[1], 0.75f, 1e-6);

  const RefTensor a = f32({1, 2}, {1, 2}), b = f32({3, 2}, {1, 0, 0, 1, 1, 1}), c = f32({3}, {10, 20, 30});
  const auto y = reference::eval_node(node("Gemm", {{"transB", 1}}), 13, {&a, &b, &c});
  EXPECT_EQ(y[0].f, (std::vector<float>{11, 22, 33}));

  const RefTensor shape = ints(ir::DType::kI64, {4}, {1, 3, 224, 224});
  const RefTensor idx = ints(ir::DType::kI64, {}, {0});
  const auto gathered = reference::eval_node(node("Gather", {{"axis", 0}}), 13, {&shape, &idx});
  EXPECT_TRUE(gathered[0].shape.empty());
  EXPECT_EQ(gathered[0].i, (std::vector<int64_t>{1}));

  const RefTensor data = f32({2, 3, 1, 1}, {1, 2, 3, 4, 5, 6});
  const RefTensor target = ints(ir::DType::kI64, {2}, {0, -1});
  const auto r = reference::eval_node(node("Reshape"), 13, {&data, &target});
  EXPECT_EQ(r[0].shape, (std::vector<int64_t>{2, 3}));
}

TEST(Interpreter, BadShapesNameTheNode) {
  const RefTensor a = f32({1, 2}, {1, 2}), b = f32({3, 3}, std::vector<float>(9, 0));
  try {
    reference::eval_node(node("MatMul"), 13, {&a, &b});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'n' (MatMul): inner dimensions differ: [1,2] x [3,3]"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tessel::compiler
