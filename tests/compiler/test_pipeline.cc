// Unit tests of the pass pipeline: order, names, timings, IR dumps, and the driver's pass list.
#include <gtest/gtest.h>

#include <tuple>

#include "compiler/backend/accel/tir/accel_tir.h"
#include "compiler/driver/compile.h"
#include "compiler/driver/lower.h"
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


// The pass registry: graph passes, lower, the accelerator's TIR passes, its code generator, the
// loop-IR backend; a name is unique within its level; pass_names() has each name once.
TEST(Pipeline, RegistryLevelsInOrder) {
  const std::vector<PassInfo> list = pass_list();
  std::vector<std::string> levels;
  for (const PassInfo& p : list) {
    if (levels.empty() || levels.back() != p.level) levels.push_back(p.level);
    EXPECT_FALSE(p.summary.empty()) << p.name;
  }
  EXPECT_EQ(levels, (std::vector<std::string>{"graph", "driver", "tir", "backend", "loop-ir"}));
  std::vector<std::string> tir_names, backend_names;
  for (const PassInfo& p : list) {
    if (p.level == "tir") tir_names.push_back(p.name);
    if (p.level == "backend") backend_names.push_back(p.name);
    for (const PassInfo& q : list) {
      if (&p != &q) {
        EXPECT_FALSE(p.name == q.name && p.level == q.level) << p.level << " " << p.name;
      }
    }
  }
  EXPECT_EQ(tir_names, accel_tir::tir_pipeline(isa::HwConfig{}).names());
  EXPECT_EQ(backend_names, std::vector<std::string>{"emit_instructions"});
  tir_names.push_back("emit_instructions");
  EXPECT_EQ(tir_names, accel_tir::pass_names());
  const std::vector<std::string> names = pass_names();
  for (size_t k = 0; k < names.size(); ++k)
    for (size_t j = 0; j < k; ++j) EXPECT_NE(names[j], names[k]);
  // The plain names (inject_dma_copy, tensorize_gemm, inject_virtual_threads and fold_uop_loops
  // are at tir and loop-ir, so 4 fewer than passes), then every pass as "level:name".
  ASSERT_EQ(names.size(), 2 * list.size() - 4);
  for (size_t k = 0; k < list.size(); ++k)
    EXPECT_EQ(names[list.size() - 4 + k], list[k].level + ":" + list[k].name);
  EXPECT_EQ(names[list.size() - 4], "graph:" + list.front().name);
}

// The per-kernel helpers of the driver: which dump a kernel's backend gets, timings summed per
// (level, pass), and a kernel's dump text.
TEST(Pipeline, KernelDumpsAndTimings) {
  const std::vector<std::string>& tir_stages = accel_tir::pass_names();
  EXPECT_EQ(driver::kernel_dump_after("all", tir_stages), "all");
  EXPECT_EQ(driver::kernel_dump_after("inject_alu", tir_stages), "inject_alu");
  EXPECT_EQ(driver::kernel_dump_after("inject_alu", driver::loop_ir_pass_names()), "");
  EXPECT_EQ(driver::kernel_dump_after("placement", tir_stages), "");
  EXPECT_EQ(driver::kernel_dump_after("", tir_stages), "");

  CompileResult r;
  driver::add_kernel_timings({{"schedule", 1.0}, {"inject_dma_copy", 2.0}, {"verify", 0.5}}, false, r);
  driver::add_kernel_timings({{"inject_dma_copy", 4.0}, {"inject_alu", 1.5}, {"emit_instructions", 3.0}}, true, r);
  driver::add_kernel_timings({{"schedule", 1.0}, {"inject_dma_copy", 2.0}, {"verify", 0.25}}, false, r);
  ASSERT_EQ(r.kernel_pass_timings.size(), 6u);
  auto at = [&](size_t k) {
    const PassTiming& t = r.kernel_pass_timings[k];
    return std::make_tuple(t.level, t.pass, t.ms);
  };
  EXPECT_EQ(at(0), std::make_tuple(std::string("loop-ir"), std::string("schedule"), 2.0));
  EXPECT_EQ(at(1), std::make_tuple(std::string("loop-ir"), std::string("inject_dma_copy"), 4.0));
  EXPECT_EQ(at(2), std::make_tuple(std::string("backend"), std::string("verify"), 0.75));
  EXPECT_EQ(at(3), std::make_tuple(std::string("tir"), std::string("inject_dma_copy"), 4.0));
  EXPECT_EQ(at(4), std::make_tuple(std::string("tir"), std::string("inject_alu"), 1.5));
  EXPECT_EQ(at(5), std::make_tuple(std::string("backend"), std::string("emit_instructions"), 3.0));

  EXPECT_EQ(driver::kernel_dump("conv1", {}), "");
  EXPECT_EQ(driver::kernel_dump("conv1", {{"inject_alu", "func f() {\n}\n"}, {"emit_instructions", "FINISH"}}),
            "; layer conv1\n; after inject_alu\nfunc f() {\n}\n; after emit_instructions\nFINISH\n");
}

}  // namespace
}  // namespace tessel::compiler
