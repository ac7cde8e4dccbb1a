// Error tests: malformed and truncated ONNX files, unsupported operators and attributes,
// impossible options. Every message names the thing and the value.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "compiler/driver/compile.h"
#include "compiler/frontend/onnx_import.h"
#include "support/error.h"
#include "tests/compiler/test_util.h"

namespace tessel::compiler {
namespace {

template <typename E, typename Fn>
std::string message_of(Fn fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception of the expected type";
  return "";
}

std::string write_file(const std::string& name, const std::string& bytes) {
  const auto p = std::filesystem::temp_directory_path() / ("tessel_compiler_test_" + name);
  std::ofstream f(p, std::ios::binary);
  f << bytes;
  return p.string();
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

TEST(ImportErrors, MissingFileIsAnIoError) {
  const auto msg = message_of<IoError>([] { frontend::import_onnx_file("/nonexistent/model.onnx"); });
  EXPECT_EQ(msg, "cannot read '/nonexistent/model.onnx': no such file or directory");
}

TEST(ImportErrors, GarbageFile) {
  const std::string path = write_file("garbage.onnx", std::string("\xff\xff\xff\xff not an onnx model"));
  const auto msg = message_of<UserError>([&] { frontend::import_onnx_file(path); });
  EXPECT_NE(msg.find("is not a valid onnx model"), std::string::npos) << msg;
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
}

// Graphs nested in attributes deeper than protobuf's recursion limit are named as such, not as
// "truncated" (hostile review 2, F5).
TEST(ImportErrors, NestingBeyondProtobufsLimitIsNamed) {
  testing::OnnxBuilder b({1, 4});
  auto* n = b.node("Relu", "r", {"x"}, {"y"});
  b.output("y");
  onnx::GraphProto* g = nullptr;
  onnx::NodeProto* at = n;
  for (int level = 0; level < 50; ++level) {  // 3 message levels each: attribute, graph, node
    auto* a = at->add_attribute();
    a->set_name("body");
    a->set_type(onnx::AttributeProto_AttributeType_GRAPH);
    g = a->mutable_g();
    at = g->add_node();
    at->set_op_type("Identity");
  }
  const auto msg = message_of<UserError>([&] { frontend::import_onnx_bytes(b.bytes(), "m"); });
  EXPECT_EQ(msg, "'m' is not a valid onnx model: its messages nest more than 100 deep (protobuf's recursion limit; "
                 "graphs nest inside node attributes)");
}

TEST(ImportErrors, TruncatedModel) {
  const std::string full = read_file(testing::model_path("onnx-zoo/mnist-12.onnx"));
  ASSERT_EQ(full.size(), 26143u);
  const std::string path = write_file("truncated.onnx", full.substr(0, full.size() / 2));
  const auto msg = message_of<UserError>([&] { frontend::import_onnx_file(path); });
  EXPECT_NE(msg.find("is not a valid onnx model"), std::string::npos) << msg;
}

TEST(ImportErrors, EveryTruncationIsAUserErrorNeverACrash) {
  // Cutting a valid model anywhere gives either a protobuf parse error or a structurally
  // incomplete graph; both must be reported as UserError.
  for (const char* m : {"onnx-zoo/mnist-12.onnx", "onnx-zoo/mnist-12-int8.ort-qoperator.onnx",
                        "mlperf-tiny/kws01_dscnn_int8_qdq.onnx"}) {
    const std::string full = read_file(testing::model_path(m));
    int errors = 0;
    for (size_t cut = 1; cut < full.size(); cut += 61) {
      try {
        frontend::import_onnx_bytes(full.substr(0, cut), m);
      } catch (const UserError&) {
        ++errors;
      }
    }
    EXPECT_EQ(errors, static_cast<int>((full.size() - 2) / 61 + 1)) << m;
  }
}

TEST(ImportErrors, EmptyFile) {
  const std::string path = write_file("empty.onnx", "");
  const auto msg = message_of<UserError>([&] { frontend::import_onnx_file(path); });
  EXPECT_EQ(msg, "'" + path + "' is not a valid onnx model: the file is empty");
}

TEST(ImportErrors, UnsupportedOperatorNamesTheNode) {
  testing::OnnxBuilder b({1, 4});
  b.node("Tanh", "act7", {"x"}, {"y"});
  b.output("y");
  const auto msg = message_of<UserError>([&] { frontend::import_onnx_bytes(b.bytes(), "m"); });
  EXPECT_EQ(msg, "node 'act7' (Tanh): operator ai.onnx::Tanh not supported");
}

TEST(ImportErrors, UnsupportedDilationsNamesTheNode) {
  testing::OnnxBuilder b({1, 1, 8, 8});
  b.init(testing::f32_tensor("w", {1, 1, 3, 3}, std::vector<float>(9, 1.0f)));
  auto* n = b.node("Conv", "conv3", {"x", "w"}, {"y"});
  testing::OnnxBuilder::ints(n, "dilations", {2, 2});
  b.output("y");
  const auto msg = message_of<UserError>([&] { frontend::import_onnx_bytes(b.bytes(), "m"); });
  EXPECT_EQ(msg, "node 'conv3' (Conv): dilations [2,2] not supported");
}

// Only axis 0 takes --batch (hostile review 2, F5: a symbolic height and width were bound to the
// batch value and the model failed far away, on a 1x1 image). Axis 0 symbolic still imports.
TEST(ImportErrors, SymbolicDimensionOtherThanBatch) {
  testing::OnnxBuilder b({1, 1, 4, 4}, 13, "x", "N");
  b.node("Relu", "r", {"x"}, {"y"});
  b.output("y");
  EXPECT_EQ(frontend::import_onnx_bytes(b.bytes(), "m", 3).inputs.size(), 1u);
  auto* dims = b.model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  dims->mutable_dim(2)->set_dim_param("height");
  EXPECT_EQ(message_of<UserError>([&] { frontend::import_onnx_bytes(b.bytes(), "m"); }),
            "'m': graph input 'x' dimension 2 is symbolic ('height'); only the batch dimension (axis 0) may be "
            "symbolic (it takes --batch); give the model fixed sizes for the others");
  dims->mutable_dim(2)->clear_dim_param();
  dims->mutable_dim(2)->set_dim_value(4);
  dims->mutable_dim(3)->Clear();
  EXPECT_EQ(message_of<UserError>([&] { frontend::import_onnx_bytes(b.bytes(), "m"); }),
            "'m': graph input 'x' dimension 3 is unknown; only the batch dimension (axis 0) may be symbolic (it takes "
            "--batch); give the model fixed sizes for the others");
}

TEST(ImportErrors, UnknownAttributeAndStorageOrder) {
  testing::OnnxBuilder b({1, 1, 4, 4});
  auto* n = b.node("MaxPool", "pool1", {"x"}, {"y"});
  testing::OnnxBuilder::ints(n, "kernel_shape", {2, 2});
  testing::OnnxBuilder::integer(n, "storage_order", 1);
  b.output("y");
  EXPECT_EQ(message_of<UserError>([&] { frontend::import_onnx_bytes(b.bytes(), "m"); }),
            "node 'pool1' (MaxPool): storage_order 1 not supported (only 0)");
  testing::OnnxBuilder c({1, 4});
  auto* r = c.node("Relu", "relu1", {"x"}, {"y"});
  testing::OnnxBuilder::integer(r, "alpha", 1);
  c.output("y");
  EXPECT_EQ(message_of<UserError>([&] { frontend::import_onnx_bytes(c.bytes(), "m"); }),
            "node 'relu1' (Relu): attribute 'alpha' is not defined by Relu at opset 13");
}

TEST(ImportErrors, NonFloatInputAndUnknownDomain) {
  testing::OnnxBuilder b({1, 4});
  b.model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto_DataType_INT32);
  b.node("Relu", "relu", {"x"}, {"y"});
  b.output("y");
  EXPECT_EQ(message_of<UserError>([&] { frontend::import_onnx_bytes(b.bytes(), "m"); }),
            "'m': graph input 'x' has type INT32; only float32 graph inputs are supported");
  testing::OnnxBuilder c({1, 4});
  auto* n = c.node("Gelu", "gelu", {"x"}, {"y"});
  n->set_domain("com.example");
  c.output("y");
  EXPECT_EQ(message_of<UserError>([&] { frontend::import_onnx_bytes(c.bytes(), "m"); }),
            "node 'gelu' (Gelu): operator com.example::Gelu not supported");
}

// Types that only shape inference knows (computed values) meet the same ONNX type constraints as
// constants do at import, and graph outputs are real-valued tensors (hostile review 3: both were
// "internal error: value 'w' has no float or int8 form").
TEST(CompileErrors, TypeConstraintsOfComputedValuesAndIntegerGraphOutputs) {
  CompileOptions opts;
  opts.offload = false;
  opts.calibration = {{testing::host_f32({1, 4}, {1, 2, 3, 4})}};
  testing::OnnxBuilder b({1, 4});
  b.init(testing::f32_tensor("w", {4, 2}, std::vector<float>(8, 0.5f)));
  onnx::TensorProto c;
  c.set_name("c");
  c.set_data_type(onnx::TensorProto_DataType_INT32);
  c.add_dims(2);
  c.add_int32_data(1);
  c.add_int32_data(2);
  b.init(c);
  b.node("Relu", "r", {"x"}, {"a"});
  b.node("Gemm", "fc", {"a", "w", "c"}, {"y"});
  b.output("y");
  const std::string gemm = write_file("gemm_int32_c.onnx", b.bytes());
  EXPECT_EQ(message_of<UserError>([&] { compile_onnx(gemm, opts); }),
            "node 'fc' (Gemm): input 2 ('C', value 'c') has type tensor(int32) but input 1 ('w') has type "
            "tensor(float); Gemm at opset 13 gives both type parameter 'T', one type");
  testing::OnnxBuilder k({1, 4});
  k.init(testing::i64_tensor("k", {2}, {3, 4}));
  k.node("Relu", "r", {"x"}, {"y"});
  k.output("y");
  k.output("k");
  const std::string konst = write_file("int64_output.onnx", k.bytes());
  EXPECT_EQ(message_of<UserError>([&] { compile_onnx(konst, opts); }),
            "graph output 'k' is an i64 tensor (a constant); compiled models output float32 tensors or quantised "
            "int8/uint8 ones");
  testing::OnnxBuilder sh({1, 4});
  sh.node("Shape", "s", {"x"}, {"y"});
  sh.output("y");
  const std::string shape = write_file("shape_output.onnx", sh.bytes());
  EXPECT_EQ(message_of<UserError>([&] { compile_onnx(shape, opts); }),
            "graph output 'y' is an i64 tensor (a constant); compiled models output float32 tensors or quantised "
            "int8/uint8 ones");
}

TEST(CompileErrors, FloatModelWithoutCalibration) {
  CompileOptions opts;
  opts.offload = false;
  const auto msg = message_of<UserError>([&] { compile_onnx(testing::model_path("onnx-zoo/mnist-12.onnx"), opts); });
  EXPECT_EQ(msg, "model 'mnist-12' is float: quantising it needs calibration inputs (CompileOptions::calibration is empty)");
}

TEST(CompileErrors, BadBatchCalibrationAndDumpName) {
  CompileOptions opts;
  opts.offload = false;
  opts.batch = 0;
  const std::string m = testing::model_path("mlperf-tiny/kws01_dscnn_int8_qdq.onnx");
  EXPECT_EQ(message_of<UserError>([&] { compile_onnx(m, opts); }), "batch 0 is invalid (must be >= 1)");
  opts.batch = 1;
  opts.dump_ir_after = "nonsense";
  EXPECT_NE(message_of<UserError>([&] { compile_onnx(m, opts); }).find("unknown pass 'nonsense'"), std::string::npos);
  CompileOptions f;
  f.offload = false;
  f.calibration = {{testing::host_f32({1, 1, 2, 2}, {1, 2, 3, 4})}};
  EXPECT_EQ(message_of<UserError>([&] { compile_onnx(testing::model_path("onnx-zoo/mnist-12.onnx"), f); }),
            "calibration entry 0 input 0 ('Input3') is f32[1,1,2,2], expected f32[1,1,28,28]");
}

}  // namespace
}  // namespace tessel::compiler
