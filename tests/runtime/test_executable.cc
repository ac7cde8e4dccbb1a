// The executable format: serialise/deserialise round trips (byte-identical re-serialisation,
// every field preserved), save/load through a file, and TensorDesc sizes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "runtime/executable.h"
#include "support/error.h"
#include "tests/runtime/hand_conv.h"

namespace tessel::runtime {
namespace {

TEST(TensorDesc, SizesAndNames) {
  TensorDesc t;
  t.name = "t";
  t.dtype = DType::kI8;
  t.shape = {2, 20, 3, 5};
  EXPECT_EQ(t.num_elements(), 600);
  EXPECT_EQ(t.size_bytes(), 600);
  t.layout = Layout::kNCHWnc;
  t.block_n = 1;
  t.block_c = 16;
  EXPECT_EQ(t.size_bytes(), 2 * 32 * 3 * 5);  // channels 20 -> 32
  t.block_n = 4;
  EXPECT_EQ(t.size_bytes(), 4 * 32 * 3 * 5);  // batch 2 -> 4
  t.layout = Layout::kNCHW;
  t.dtype = DType::kF32;
  EXPECT_EQ(t.size_bytes(), 2400);
  t.shape = {};
  EXPECT_EQ(t.num_elements(), 1);  // a scalar
  EXPECT_EQ(dtype_bytes(DType::kI64), 8u);
  EXPECT_EQ(dtype_bytes(DType::kI32), 4u);
  EXPECT_EQ(to_string(DType::kI8), "i8");
  EXPECT_EQ(to_string(DType::kF32), "f32");
}

TEST(Executable, RoundTripIsByteIdentical) {
  const isa::HwConfig cfg;
  Executable e = testing::HandConv().executable(cfg);
  e.steps[0].attrs = {{"note", "x"}, {"scale", 0.1}, {"list", {3, 1, 2}}};
  const std::vector<uint8_t> a = e.serialize();
  ASSERT_EQ(std::string(a.begin(), a.begin() + 8), "TSLEXEC1");
  const Executable d = Executable::deserialize(a);
  EXPECT_EQ(d.serialize(), a);
  EXPECT_EQ(d.model_name, "hand_conv");
  EXPECT_EQ(d.config, cfg);
  ASSERT_EQ(d.tensors.size(), e.tensors.size());
  for (size_t i = 0; i < e.tensors.size(); ++i) {
    EXPECT_EQ(d.tensors[i].name, e.tensors[i].name);
    EXPECT_EQ(d.tensors[i].dtype, e.tensors[i].dtype);
    EXPECT_EQ(d.tensors[i].shape, e.tensors[i].shape);
    EXPECT_EQ(d.tensors[i].layout, e.tensors[i].layout);
    EXPECT_EQ(d.tensors[i].block_c, e.tensors[i].block_c);
    EXPECT_EQ(d.tensors[i].quant, e.tensors[i].quant);
    EXPECT_EQ(d.tensors[i].data, e.tensors[i].data);
  }
  EXPECT_EQ(d.tensors[1].quant.scale, 0.05f);  // float survives JSON exactly
  ASSERT_EQ(d.steps.size(), e.steps.size());
  for (size_t i = 0; i < e.steps.size(); ++i) {
    EXPECT_EQ(d.steps[i].name, e.steps[i].name);
    EXPECT_EQ(d.steps[i].op, e.steps[i].op);
    EXPECT_EQ(d.steps[i].inputs, e.steps[i].inputs);
    EXPECT_EQ(d.steps[i].outputs, e.steps[i].outputs);
    EXPECT_EQ(d.steps[i].attrs, e.steps[i].attrs);
    EXPECT_EQ(d.steps[i].placement, e.steps[i].placement);
    EXPECT_EQ(d.steps[i].program, e.steps[i].program);
    EXPECT_EQ(d.steps[i].input_segments, e.steps[i].input_segments);
    EXPECT_EQ(d.steps[i].output_segments, e.steps[i].output_segments);
  }
  ASSERT_EQ(d.programs.size(), 1u);
  EXPECT_EQ(d.programs[0].serialize(), e.programs[0].serialize());
  EXPECT_EQ(d.programs[0].insns, e.programs[0].insns);
  EXPECT_EQ(d.inputs, e.inputs);
  EXPECT_EQ(d.outputs, e.outputs);
  // Same executable built twice: same bytes.
  Executable e2 = testing::HandConv().executable(cfg);
  e2.steps[0].attrs = e.steps[0].attrs;
  EXPECT_EQ(e2.serialize(), a);
}

TEST(Executable, SaveAndLoadFile) {
  const isa::HwConfig cfg;
  const Executable e = testing::HandConv().executable(cfg);
  const auto path = std::filesystem::temp_directory_path() / "tessel_runtime_test_exec.tsx";
  e.save(path.string());
  const Executable d = Executable::load(path.string());
  EXPECT_EQ(d.serialize(), e.serialize());
  std::filesystem::remove(path);
}

TEST(Executable, EmptyExecutableRoundTrips) {
  Executable e;
  const auto a = e.serialize();
  EXPECT_EQ(Executable::deserialize(a).serialize(), a);
}

// The fuzzers' seeds must load in the current formats: seeds a format change made unreadable
// leave the fuzzer exploring nothing but the first error (the .tsx seeds were version 1 for a
// while after version 2 came, and fuzz_tsx reached 43 edges).
TEST(FuzzSeeds, ExecutableAndProgramSeedsLoadInTheCurrentFormat) {
  const std::filesystem::path root(TESSEL_SOURCE_DIR);
  int tsx = 0, programs = 0;
  for (const auto& e : std::filesystem::directory_iterator(root / "fuzz" / "corpus" / "tsx")) {
    EXPECT_NO_THROW((void)Executable::load(e.path().string())) << e.path();
    ++tsx;
  }
  for (const auto& e : std::filesystem::directory_iterator(root / "fuzz" / "corpus" / "program")) {
    std::ifstream f(e.path(), std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_NO_THROW((void)isa::Program::deserialize(bytes)) << e.path();
    ++programs;
  }
  EXPECT_GE(tsx, 3);
  EXPECT_GE(programs, 8);
}

}  // namespace
}  // namespace tessel::runtime