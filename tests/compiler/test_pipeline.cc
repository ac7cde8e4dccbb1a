// Unit tests of the pass pipeline: order, names, timings, IR dumps, and the driver's pass list.
#include <gtest/gtest.h>

#include "compiler/driver/compile.h"
#include "compiler/frontend/onnx_import.h"
#include "compiler/passes/pass.h"
#include "support/error.h"
#include "tests/compiler/test_util.h"

namespace tessel::compiler {
namespace {

TEST(Pipeline, OrderedNames) {
  std::vector<std::string> names;
  for (const auto& p : passes::graph_pipeline()) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"shape_inference", "constant_folding", "dead_code_elimination",
                                             "fold_batchnorm", "fuse_bias", "qdq_import", "quantize",
                                             "fuse_activation", "requant", "placement", "layout_nchwnc"}));
  const auto all = pass_names();
  ASSERT_GT(all.size(), names.size() + 1);
  EXPECT_EQ(std::vector<std::string>(all.begin(), all.begin() + names.size()), names);
  EXPECT_EQ(all[names.size()], "lower");
}

TEST(Pipeline, TimesEveryPassAndDumpsOnRequest) {
  ir::Graph g = frontend::import_onnx_file(testing::model_path("mlperf-tiny/kws01_dscnn_int8_qdq.onnx"));
  passes::PassContext ctx;
  ctx.offload = false;
  std::vector<passes::PassTime> times;
  std::string dump;
  passes::run_pipeline(g, ctx, "qdq_import", &times, &dump);
  EXPECT_EQ(times.size(), passes::graph_pipeline().size());
  for (const auto& t : times) EXPECT_GE(t.ms, 0.0);
  EXPECT_EQ(dump.rfind("; after qdq_import\ngraph 'kws01_dscnn_int8_qdq' opset 13 {\n", 0), 0u);
  EXPECT_EQ(dump.find("; after", 1), std::string::npos);  // exactly one dump
  EXPECT_NE(dump.find("tessel.qconv2d"), std::string::npos);

  ir::Graph h = frontend::import_onnx_file(testing::model_path("mlperf-tiny/kws01_dscnn_int8_qdq.onnx"));
  std::string all;
  passes::run_pipeline(h, ctx, "all", nullptr, &all);
  size_t count = 0;
  for (size_t p = all.find("; after "); p != std::string::npos; p = all.find("; after ", p + 1)) ++count;
  EXPECT_EQ(count, passes::graph_pipeline().size());
}

TEST(Pipeline, UnknownDumpNameListsTheValidOnes) {
  ir::Graph g = frontend::import_onnx_file(testing::model_path("onnx-zoo/mnist-12.onnx"));
  passes::PassContext ctx;
  try {
    passes::run_pipeline(g, ctx, "fuse_everything", nullptr, nullptr);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("unknown pass 'fuse_everything' for the ir dump; valid: all, shape_inference, ", 0),
              0u)
        << e.what();
  }
}

}  // namespace
}  // namespace tessel::compiler
