// Example: the C++ API end to end. Compiles the bundled int8 MNIST model for the default
// accelerator configuration, runs the first 16 MNIST test digits on the functional simulator and
// prints each prediction next to its label.
//
//   build-*/examples/example_classify_digits [--sim fsim|cycle]
//
// Steps: compiler::compile_onnx -> runtime::Executable; runtime::Device::create -> a simulator;
// runtime::GraphExecutor runs the executable's CPU and accelerator steps in order.
#include <fmt/format.h>

#include <cstring>
#include <memory>

#include "compiler/driver/compile.h"
#include "runtime/device.h"
#include "runtime/graph_executor.h"
#include "support/error.h"
#include "support/npy.h"

int main(int argc, char** argv) {
  using namespace tessel;
  const std::string sim = argc == 3 && std::strcmp(argv[1], "--sim") == 0 ? argv[2] : "fsim";
  const std::string root = TESSEL_SOURCE_DIR;
  try {
    // 1. Compile. The model is already quantised (ONNX QLinear operators), so no calibration.
    compiler::CompileOptions opts;  // default HwConfig: VTA's 1x16_i8w8a32_15_15_18_17
    const compiler::CompileResult cr =
        compiler::compile_onnx(root + "/models/onnx-zoo/mnist-12-int8.ort-qoperator.onnx", opts);
    fmt::print("compiled: {} steps, {} accelerator programs\n", cr.exe.steps.size(), cr.exe.programs.size());

    // 2. A device with 16 MiB of DRAM (plenty for MNIST's three Programs) and an executor
    //    (Programs are loaded into device DRAM once, here).
    std::unique_ptr<runtime::Device> device = runtime::Device::create(sim, cr.exe.config, uint64_t{16} << 20);
    runtime::ExecOptions eo;
    eo.measure_cpu = false;  // no CPU timing needed here
    runtime::GraphExecutor exec(cr.exe, *device, eo);

    // 3. The 16 staged digits: raw uint8 [16][28][28]; the model takes raw pixel values as float.
    const support::FloatTensor digits = support::read_tensor_file(root + "/data/mnist/t10k_first16_u8_16x28x28.bin");
    const int labels[16] = {7, 2, 1, 0, 4, 1, 4, 9, 5, 9, 0, 6, 9, 0, 1, 5};  // data/mnist/t10k_first16.json
    int correct = 0;
    uint64_t cycles = 0;
    for (int i = 0; i < 16; ++i) {
      runtime::HostTensor in;
      in.dtype = runtime::DType::kF32;
      in.shape = {1, 1, 28, 28};
      in.bytes.resize(784 * sizeof(float));
      std::memcpy(in.bytes.data(), digits.data.data() + i * 784, in.bytes.size());
      const std::vector<runtime::HostTensor> out = exec.run({in});
      const float* scores = out[0].f32();
      int best = 0;
      for (int c = 1; c < 10; ++c) best = scores[c] > scores[best] ? c : best;
      for (const runtime::StepMeasurement& m : exec.measurements()) cycles += m.accel.cycles;
      correct += best == labels[i];
      fmt::print("digit {:2}: predicted {} label {}{}\n", i, best, labels[i], best == labels[i] ? "" : "  WRONG");
    }
    fmt::print("{} / 16 correct on {}", correct, sim);
    if (cycles) fmt::print(", {} accelerator cycles in total", cycles);
    fmt::print("\n");
    return correct == 16 ? 0 : 1;
  } catch (const Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
