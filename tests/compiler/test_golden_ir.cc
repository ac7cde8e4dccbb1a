// Golden IR dumps of mnist-12: after import (shape_inference, the first pass) and after
// post-training quantisation (quantize), calibrated on the 16 staged MNIST digits. Set
// TESSEL_UPDATE_GOLDEN=1 to rewrite the files in tests/golden/compiler/.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "compiler/driver/compile.h"
#include "tests/compiler/test_util.h"

namespace tessel::compiler {
namespace {

std::string section(const std::string& dump, const std::string& pass) {
  const std::string head = "; after " + pass + "\n";
  const size_t a = dump.find(head);
  if (a == std::string::npos) return "";
  const size_t b = dump.find("; after ", a + head.size());
  return dump.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

void check_golden(const std::string& text, const std::string& file) {
  const std::string path = std::string(TESSEL_SOURCE_DIR) + "/tests/golden/compiler/" + file;
  if (const char* u = std::getenv("TESSEL_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    std::ofstream(path, std::ios::binary) << text;
    return;
  }
  std::ifstream f(path, std::ios::binary);
  ASSERT_TRUE(f.good()) << "missing golden file " << path;
  const std::string want((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, want) << "IR dump differs from " << path << " (TESSEL_UPDATE_GOLDEN=1 rewrites it)";
}

CompileOptions mnist_options(const std::string& dump_after) {
  CompileOptions opts;
  opts.offload = false;
  opts.dump_ir_after = dump_after;
  for (int i = 0; i < 16; ++i) {
    const auto x = testing::read_f32(
        testing::data_path(fmt::format("reference/inputs/mnist_t10k_{:05d}_f32_1x1x28x28.bin", i)));
    opts.calibration.push_back({testing::host_f32({1, 1, 28, 28}, x)});
  }
  return opts;
}

TEST(GoldenIr, Mnist12AfterImport) {
  const auto r = compile_onnx(testing::model_path("onnx-zoo/mnist-12.onnx"), mnist_options("shape_inference"));
  const std::string s = section(r.ir_dump, "shape_inference");
  ASSERT_FALSE(s.empty());
  check_golden(s, "mnist-12.after_shape_inference.ir");
}

TEST(GoldenIr, Mnist12AfterQuantisation) {
  const auto r = compile_onnx(testing::model_path("onnx-zoo/mnist-12.onnx"), mnist_options("all"));
  const std::string s = section(r.ir_dump, "quantize") + section(r.ir_dump, "requant");
  ASSERT_FALSE(s.empty());
  check_golden(s, "mnist-12.after_quantize.ir");
}

}  // namespace
}  // namespace tessel::compiler
