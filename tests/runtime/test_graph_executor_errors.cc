// Graph executor errors: bad executables are UserErrors at construction, bad inputs at run(),
// and an accelerator result that differs from the CPU kernel is an InternalError naming the step.
#include <gtest/gtest.h>

#include "runtime/graph_executor.h"
#include "tests/runtime/hand_conv.h"

namespace tessel::runtime {
namespace {

template <typename E, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}
#define EXPECT_MSG(msg, text) EXPECT_NE((msg).find(text), std::string::npos) << (msg)

HostTensor input_tensor() {
  HostTensor h;
  h.dtype = DType::kF32;
  h.shape = {1, 16, 2, 2};
  h.bytes.assign(64 * 4, 0);
  for (size_t i = 0; i < 64; ++i) {
    const float v = 0.1f * static_cast<float>(static_cast<int>(i) - 30);
    std::memcpy(&h.bytes[i * 4], &v, 4);
  }
  return h;
}

TEST(GraphExecutorErrors, AcceleratorMismatchIsAStepMismatchError) {
  const isa::HwConfig cfg;
  // The Program shifts by 4 while the step's attributes say 5.
  const Executable exe = testing::HandConv().executable(cfg, 4);
  auto dev = Device::create("fsim", cfg, 1 << 22);
  GraphExecutor ge(exe, *dev);
  const std::string msg = error_of<StepMismatchError>([&] { ge.run({input_tensor()}); });
  EXPECT_MSG(msg, "step 'conv' on device fsim: the executable's accelerator step disagrees with its CPU "
                  "reference (the qconv2d kernel) in ");
  EXPECT_MSG(msg, "the executable may have been altered after it was compiled, or this is a Tessel bug");
  EXPECT_EQ(msg.find("internal error"), std::string::npos) << msg;
  EXPECT_FALSE(ge.measurements()[2].cpu_matches_accel);
  // Without the check the run completes (and gives the Program's result).
  ExecOptions opts;
  opts.check_accel = false;
  GraphExecutor unchecked(exe, *dev, opts);
  EXPECT_EQ(unchecked.run({input_tensor()}).size(), 1u);
  EXPECT_FALSE(unchecked.measurements()[2].cpu_checked);
}

TEST(GraphExecutorErrors, ConfigMismatch) {
  isa::HwConfig other;
  other.log_batch = 1;
  const Executable exe = testing::HandConv().executable(isa::HwConfig{});
  auto dev = Device::create("fsim", other, 1 << 22);
  EXPECT_MSG(error_of<UserError>([&] { GraphExecutor ge(exe, *dev); }),
             "executable 'hand_conv' was compiled for config 1x16_i8w8a32_15_15_18_17, but the "
             "fsim device has config 2x16_i8w8a32_15_15_18_17");
}

TEST(GraphExecutorErrors, BadExecutables) {
  const isa::HwConfig cfg;
  auto dev = Device::create("fsim", cfg, 1 << 22);
  Executable exe = testing::HandConv().executable(cfg);
  exe.steps[0].op = "quantise";
  EXPECT_MSG(error_of<UserError>([&] { GraphExecutor ge(exe, *dev); }),
             "unknown cpu op 'quantise' in step 'quant_in'");
  exe = testing::HandConv().executable(cfg);
  std::swap(exe.steps[0], exe.steps[1]);
  EXPECT_MSG(error_of<UserError>([&] { GraphExecutor ge(exe, *dev); }),
             "step 'pack_in' reads tensor 'x_q', which no earlier step, graph input or constant "
             "provides");
  exe = testing::HandConv().executable(cfg);
  exe.steps[2].input_segments = {"inp"};
  EXPECT_MSG(error_of<UserError>([&] { GraphExecutor ge(exe, *dev); }),
             "step 'conv' has 3 inputs / 1 outputs but 1 input / 1 output segments");
  exe = testing::HandConv().executable(cfg);
  exe.steps[2].output_segments = {"result"};
  EXPECT_THROW(GraphExecutor(exe, *dev), UserError);
  exe = testing::HandConv().executable(cfg);
  exe.tensors[2].block_c = 8;
  EXPECT_MSG(error_of<UserError>([&] { GraphExecutor ge(exe, *dev); }),
             "step 'conv': input 'x_packed' has NCHWnc blocks 1x8, the config needs 1x16");
  exe = testing::HandConv().executable(cfg);
  exe.steps[2].attrs["requant"]["shift"] = {99};
  EXPECT_MSG(error_of<UserError>([&] { GraphExecutor ge(exe, *dev); }),
             "requant shift 99 is outside [0, 31]");
  // Nothing stays loaded after a failed construction.
  EXPECT_EQ(dev->alloc(1 << 22, 4096), 0u);
}

// Issue 7 F4: a checksum-valid executable with no steps ran and gave all-zero outputs, one with
// no outputs ran too. The structure is checked when the executor is built.
TEST(GraphExecutorErrors, ExecutableStructureIsCheckedAtLoad) {
  const isa::HwConfig cfg;
  auto dev = Device::create("fsim", cfg, 1 << 22);
  Executable exe = testing::HandConv().executable(cfg);
  const std::string out_name = exe.tensors.at(static_cast<size_t>(exe.outputs.at(0))).name;
  exe.steps.clear();
  EXPECT_MSG(error_of<UserError>([&] { GraphExecutor ge(exe, *dev); }),
             "graph output '" + out_name + "' is written by no step and is no graph input or constant");
  exe = testing::HandConv().executable(cfg);
  exe.steps.pop_back();  // the last step writes the graph output
  EXPECT_MSG(error_of<UserError>([&] { GraphExecutor ge(exe, *dev); }),
             "graph output '" + out_name + "' is written by no step");
  exe = testing::HandConv().executable(cfg);
  exe.outputs.clear();
  EXPECT_MSG(error_of<UserError>([&] { GraphExecutor ge(exe, *dev); }), "has no graph outputs: it computes nothing");
  // A tensor written twice (SSA), and a step that writes a graph input.
  exe = testing::HandConv().executable(cfg);
  exe.steps.push_back(exe.steps.back());
  exe.steps.back().name = "again";
  EXPECT_MSG(error_of<UserError>([&] { GraphExecutor ge(exe, *dev); }),
             fmt::format("tensor '{}' is written twice: by step {} ('{}') and by step {} ('again')", out_name,
                         exe.steps.size() - 2, exe.steps[exe.steps.size() - 2].name, exe.steps.size() - 1));
  exe = testing::HandConv().executable(cfg);
  exe.steps[0].outputs = exe.inputs;
  EXPECT_MSG(error_of<UserError>([&] { GraphExecutor ge(exe, *dev); }),
             "step 'quant_in' writes graph input '" + exe.tensors.at(static_cast<size_t>(exe.inputs[0])).name + "'");
  // The unaltered executable builds.
  exe = testing::HandConv().executable(cfg);
  EXPECT_NO_THROW(GraphExecutor(exe, *dev));
}

TEST(GraphExecutorErrors, BadInputs) {
  const isa::HwConfig cfg;
  const Executable exe = testing::HandConv().executable(cfg);
  auto dev = Device::create("fsim", cfg, 1 << 22);
  GraphExecutor ge(exe, *dev);
  EXPECT_MSG(error_of<UserError>([&] { ge.run({}); }), "model 'hand_conv' takes 1 inputs, got 0");
  HostTensor bad = input_tensor();
  bad.shape = {1, 16, 4, 1};
  EXPECT_MSG(error_of<UserError>([&] { ge.run({bad}); }),
             "input 0 'x_f32' must be f32 [1, 16, 2, 2], got f32 [1, 16, 4, 1]");
  bad = input_tensor();
  bad.bytes.pop_back();
  EXPECT_MSG(error_of<UserError>([&] { ge.run({bad}); }),
             "input 0 'x_f32' must hold 256 bytes, got 255");
}

}  // namespace
}  // namespace tessel::runtime
