// Unit tests of the ONNX importer on the staged models and on small generated models.
#include <gtest/gtest.h>

#include "compiler/frontend/onnx_import.h"
#include "support/error.h"
#include "tests/compiler/test_util.h"

namespace tessel::compiler {
namespace {

using testing::count_op;
using testing::model_path;

TEST(OnnxImport, Mnist12Structure) {
  const ir::Graph g = frontend::import_onnx_file(model_path("onnx-zoo/mnist-12.onnx"));
  EXPECT_EQ(g.name, "mnist-12");
  EXPECT_EQ(g.opset, 12);
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.values[g.inputs[0]].name, "Input3");
  EXPECT_EQ(g.values[g.inputs[0]].shape, (std::vector<int64_t>{1, 1, 28, 28}));
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.values[g.outputs[0]].name, "Plus214_Output_0");
  EXPECT_EQ(g.nodes.size(), 12u);
  EXPECT_EQ(count_op(g, "Conv"), 2);
  EXPECT_EQ(count_op(g, "Add"), 3);
  EXPECT_EQ(count_op(g, "Reshape"), 2);
  // Attributes are imported as JSON.
  EXPECT_EQ(g.nodes[0].attrs.at("auto_pad"), "SAME_UPPER");
  EXPECT_EQ(g.nodes[0].attrs.at("kernel_shape"), nlohmann::json({5, 5}));
  // Initializer contents: Parameter5 is FLOAT [8,1,5,5].
  const int w = g.nodes[0].inputs[1];
  EXPECT_TRUE(g.values[w].is_const);
  EXPECT_EQ(g.values[w].shape, (std::vector<int64_t>{8, 1, 5, 5}));
  EXPECT_EQ(g.values[w].data.size(), 8u * 25 * 4);
}

TEST(OnnxImport, EveryStagedModelImports) {
  for (const char* m : {"onnx-zoo/mnist-12.onnx", "onnx-zoo/mnist-12-int8.ort-qoperator.onnx",
                        "onnx-zoo/mobilenetv2-12-int8.onnx", "mlperf-tiny/ic01_resnet8_int8_qdq.onnx",
                        "mlperf-tiny/ic01_resnet8_fp32.onnx", "mlperf-tiny/kws01_dscnn_int8_qdq.onnx",
                        "mlperf-tiny/kws01_dscnn_fp32.onnx"}) {
    SCOPED_TRACE(m);
    const ir::Graph g = frontend::import_onnx_file(model_path(m));
    EXPECT_FALSE(g.nodes.empty());
    EXPECT_EQ(g.inputs.size(), 1u);
    EXPECT_EQ(g.outputs.size(), 1u);
  }
}

TEST(OnnxImport, SymbolicBatchIsBoundAndUint8KeptAsWritten) {
  const ir::Graph g = frontend::import_onnx_file(model_path("onnx-zoo/mobilenetv2-12-int8.onnx"), 3);
  EXPECT_EQ(g.values[g.inputs[0]].shape, (std::vector<int64_t>{3, 3, 224, 224}));
  EXPECT_EQ(count_op(g, "QLinearConv"), 52);
  EXPECT_EQ(count_op(g, "QLinearAdd"), 11);
  int u8 = 0;
  for (const auto& v : g.values) u8 += v.is_const && v.dtype == ir::DType::kU8;
  EXPECT_EQ(u8, 68);  // MANIFEST: 68 UINT8 initializers, imported unchanged
}

TEST(OnnxImport, ConstantNodeBecomesAConstantAndEmptyNamesAreDerived) {
  testing::OnnxBuilder b({1, 4});
  auto* c = b.node("Constant", "", {}, {"shape"});
  auto* a = c->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
  *a->mutable_t() = testing::i64_tensor("", {2}, {2, 2});
  b.node("Reshape", "", {"x", "shape"}, {"y"});
  b.output("y");
  const ir::Graph g = frontend::import_onnx_bytes(b.bytes(), "test");
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].name, "Reshape_1");
  const int s = g.nodes[0].inputs[1];
  EXPECT_TRUE(g.values[s].is_const);
  EXPECT_EQ(g.const_i64(s), (std::vector<int64_t>{2, 2}));
}

TEST(OnnxImport, SupportedOperatorList) {
  const auto ops = frontend::supported_operators();
  for (const char* op : {"ai.onnx::Conv", "ai.onnx::QLinearConv", "com.microsoft::QLinearAdd",
                         "com.microsoft::QLinearGlobalAveragePool", "ai.onnx::BatchNormalization", "ai.onnx::Gather"})
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
}

}  // namespace
}  // namespace tessel::compiler
