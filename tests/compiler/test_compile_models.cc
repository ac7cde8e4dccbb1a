// End-to-end: every staged model compiled (CPU-only and offloaded), run by the runtime's graph
// executor, and compared with the ONNX Runtime reference outputs; layer reports; determinism.
#include <gtest/gtest.h>

#include <cmath>

#include "compiler/driver/compile.h"
#include "compiler/driver/lower.h"
#include "runtime/device.h"
#include "runtime/graph_executor.h"
#include "tests/compiler/test_util.h"

namespace tessel::compiler {
namespace {

struct Case {
  const char* model;      // under models/
  const char* input;      // under data/reference/inputs/
  const char* output;     // under data/reference/outputs/
  std::vector<int64_t> shape;
  // SNR of the compiled output against the reference. Quantised models: the fixed-point
  // requantisation (runtime/qnn.h, derived by compiler/passes/requant.cc) differs from ONNX
  // Runtime's float requantisation by +-1 LSB on 0.00007 % of mobilenetv2's elements (each layer on
  // the reference's inputs, tests/compiler/test_layer_agreement.cc); mobilenetv2's depthwise
  // layers amplify any single-LSB difference through 52 layers (the reference itself, with 110 of
  // its 150528 quantised inputs moved by one LSB, is only 14.7 dB from its own output), so its
  // logits stay 13-15 dB from the reference, top-1 unchanged. Float models: the error of Tessel's
  // power-of-two quantisation.
  double min_snr_db;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"onnx-zoo/mnist-12.onnx", "mnist_t10k_00000_f32_1x1x28x28.bin", "mnist-12__mnist_t10k_00000.bin", {1, 1, 28, 28}, 25},
      {"onnx-zoo/mnist-12-int8.ort-qoperator.onnx", "mnist_t10k_00000_f32_1x1x28x28.bin",
       "mnist-12-int8.ort-qoperator__mnist_t10k_00000.bin", {1, 1, 28, 28}, 40},
      {"mlperf-tiny/ic01_resnet8_int8_qdq.onnx", "ic_sample8_f32_1x3x32x32.bin", "ic01_resnet8_int8_qdq__ic_sample8.bin",
       {1, 3, 32, 32}, 40},
      {"mlperf-tiny/ic01_resnet8_fp32.onnx", "ic_sample8_f32_1x3x32x32.bin", "ic01_resnet8_fp32__ic_sample8.bin",
       {1, 3, 32, 32}, 20},
      {"mlperf-tiny/kws01_dscnn_int8_qdq.onnx", "kws_sample6_f32_1x1x49x10.bin", "kws01_dscnn_int8_qdq__kws_sample6.bin",
       {1, 1, 49, 10}, 40},
      {"mlperf-tiny/kws01_dscnn_fp32.onnx", "kws_sample6_f32_1x1x49x10.bin", "kws01_dscnn_fp32__kws_sample6.bin",
       {1, 1, 49, 10}, 20},
      {"onnx-zoo/mobilenetv2-12-int8.onnx", "imagenet_cat_f32_1x3x224x224.bin", "mobilenetv2-12-int8__cat.bin",
       {1, 3, 224, 224}, 10},
  };
  return c;
}

runtime::HostTensor input_of(const Case& c) {
  return testing::host_f32(c.shape, testing::read_f32(testing::data_path(std::string("reference/inputs/") + c.input)));
}

CompileResult compile_case(const Case& c, bool offload) {
  CompileOptions opts;
  opts.offload = offload;
  opts.calibration = {{input_of(c)}};  // used only by the float models
  return compile_onnx(testing::model_path(c.model), opts);
}

std::vector<float> run_exe(const runtime::Executable& exe, const runtime::HostTensor& x) {
  auto dev = runtime::Device::create("fsim", exe.config, uint64_t{256} << 20);
  runtime::ExecOptions eo;
  eo.cpu_repeats = 1;
  runtime::GraphExecutor ex(exe, *dev, eo);
  const auto out = ex.run({x});
  return testing::floats(out.at(0));
}

double snr_db(const std::vector<float>& got, const std::vector<float>& want) {
  double s = 0, n = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    s += double(want[i]) * want[i];
    n += double(got[i] - want[i]) * (got[i] - want[i]);
  }
  return n == 0 ? 300.0 : 10.0 * std::log10(s / n);
}

TEST(CompileModels, CpuOnlyMatchesReference) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.model);
    const CompileResult r = compile_case(c, false);
    EXPECT_EQ(r.quantized_by_tessel, std::string(c.model).find("int8") == std::string::npos);
    EXPECT_TRUE(r.exe.programs.empty());
    const auto got = run_exe(r.exe, input_of(c));
    const auto want = testing::read_f32(testing::data_path(std::string("reference/outputs/") + c.output));
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(testing::argmax(got), testing::argmax(want));
    EXPECT_GE(snr_db(got, want), c.min_snr_db);
  }
}

TEST(CompileModels, OffloadedMatchesCpuOnlyBitExact) {
  for (const Case& c : cases()) {
    if (std::string(c.model).find("mobilenet") != std::string::npos) continue;  // covered below
    SCOPED_TRACE(c.model);
    const CompileResult cpu = compile_case(c, false);
    const CompileResult acc = compile_case(c, true);
    ASSERT_FALSE(acc.exe.programs.empty());
    int accel_steps = 0;
    for (const auto& s : acc.exe.steps) {
      if (s.placement != runtime::Placement::kAccel) continue;
      ++accel_steps;
      // convolutions, and the residual adds (ic01's resnet8) whose operands accelerator layers write
      ASSERT_TRUE(s.op == "qconv2d" || s.op == "qadd") << s.op;
      if (s.op == "qadd") {
        EXPECT_EQ(s.input_segments, (std::vector<std::string>{"a", "b"}));
        EXPECT_EQ(acc.exe.tensors[s.inputs[1]].layout, runtime::Layout::kNCHWnc);
      } else {
        EXPECT_EQ(s.input_segments, (std::vector<std::string>{"inp", "", ""}));
      }
      EXPECT_EQ(s.output_segments, (std::vector<std::string>{"out"}));
      EXPECT_EQ(acc.exe.tensors[s.inputs[0]].layout, runtime::Layout::kNCHWnc);
    }
    EXPECT_EQ(accel_steps, static_cast<int>(acc.exe.programs.size()));
    const auto x = input_of(c);
    EXPECT_EQ(run_exe(acc.exe, x), run_exe(cpu.exe, x));  // the graph executor also checks each layer
  }
}

TEST(CompileModels, ApproximateRequantUsesOneLimb) {
  // mnist-12-int8: every layer has a channel that no single 32-bit multiplier rounds exactly
  // like M, so the exact compile gives it low limbs (more ALU instructions); the approximate one
  // keeps one limb (the chains before exact requantisation: 387 instructions, 43,724 cycles).
  const Case& c = cases()[1];
  auto compile = [&](bool exact, bool offload) {
    CompileOptions opts;
    opts.offload = offload;
    opts.exact_requant = exact;
    return compile_onnx(testing::model_path(c.model), opts);
  };
  const CompileResult exact = compile(true, true), approx = compile(false, true);
  auto low_limb_steps = [](const CompileResult& r) {
    int n = 0;
    for (const auto& s : r.exe.steps) n += s.op == "qconv2d" && s.attrs.at("requant").contains("low_multiplier");
    return n;
  };
  auto insns = [](const CompileResult& r) {
    size_t n = 0;
    for (const auto& p : r.exe.programs) n += p.insns.size();
    return n;
  };
  // ALU micro-ops over all programs: the requant chain's steps times the output elements, the
  // same whatever the tiling (each schedule is the stream cost model's pick, so the two compiles'
  // tiles, and their instruction counts, may differ); the low limb's steps make it larger
  auto alu_uops = [](const CompileResult& r) {
    uint64_t n = 0;
    for (const auto& p : r.exe.programs)
      for (const isa::Instruction& i : p.insns)
        if (i.opcode == isa::Opcode::kAlu) n += isa::loop_uops(i);
    return n;
  };
  EXPECT_EQ(low_limb_steps(exact), 3);
  EXPECT_EQ(low_limb_steps(approx), 0);
  EXPECT_EQ(insns(approx), 332u);
  EXPECT_GT(alu_uops(exact), alu_uops(approx));
  const auto x = input_of(c);
  // each is bit-exact with its own CPU-only compile (the same integer semantics)
  EXPECT_EQ(run_exe(approx.exe, x), run_exe(compile(false, false).exe, x));
  EXPECT_EQ(run_exe(exact.exe, x), run_exe(compile(true, false).exe, x));
  EXPECT_EQ(testing::argmax(run_exe(approx.exe, x)), testing::argmax(run_exe(exact.exe, x)));
}

TEST(CompileModels, MobilenetOffloadedTop1) {
  const Case& c = cases().back();
  const CompileResult r = compile_case(c, true);
  EXPECT_EQ(r.exe.programs.size(), 63u);  // 52 QLinearConv, the classifier QLinearMatMul, 10 residual QLinearAdds
  const auto got = run_exe(r.exe, input_of(c));
  EXPECT_EQ(testing::argmax(got), 282u);  // tiger cat
}

TEST(CompileModels, LayerReports) {
  const CompileResult r = compile_case(cases()[0], true);  // mnist-12 float, offloaded
  bool saw_conv = false;
  for (const LayerInfo& l : r.layers) {
    EXPECT_NE(r.exe.steps.at(l.step).op, "reshape");
    EXPECT_EQ(r.exe.steps.at(l.step).name, l.name);
    if (l.name == "Convolution28") {
      saw_conv = true;
      EXPECT_EQ(l.op, "Conv+Add+Relu");  // bias and activation fused
      EXPECT_EQ(l.macs, 1 * 8 * 28 * 28 * 25);
      EXPECT_EQ(l.in_shape, (std::vector<int64_t>{1, 1, 28, 28}));
      EXPECT_EQ(l.out_shape, (std::vector<int64_t>{1, 8, 28, 28}));
    }
    if (l.placement == runtime::Placement::kAccel) {
      const auto& prog = r.exe.programs.at(r.exe.steps.at(l.step).program);
      EXPECT_GT(l.ideal_gemm_uops, 0);
      EXPECT_EQ(l.dram_bytes, driver::program_dram_bytes(prog));
      EXPECT_GT(l.dram_bytes, 0u);
      EXPECT_FALSE(l.schedule.empty());
    }
  }
  EXPECT_TRUE(saw_conv);
  ASSERT_EQ(r.pass_timings.size(), 13u);  // import + 11 graph passes + lower
  EXPECT_EQ(r.pass_timings.front().pass, "import");
  EXPECT_EQ(r.pass_timings.back().pass, "lower");
}

TEST(CompileModels, MobilenetBatchOfTwo) {
  // The symbolic "batch_size" bound to 2; the Shape -> Gather -> Concat -> Reshape tail folds.
  const Case& c = cases().back();
  CompileOptions opts;
  opts.offload = false;
  opts.batch = 2;
  const CompileResult r = compile_onnx(testing::model_path(c.model), opts);
  EXPECT_EQ(r.exe.tensors[r.exe.inputs[0]].shape, (std::vector<int64_t>{2, 3, 224, 224}));
  EXPECT_EQ(r.exe.tensors[r.exe.outputs[0]].shape, (std::vector<int64_t>{2, 1000}));
  auto cat = testing::read_f32(testing::data_path("reference/inputs/imagenet_cat_f32_1x3x224x224.bin"));
  const auto dog = testing::read_f32(testing::data_path("reference/inputs/imagenet_dog_f32_1x3x224x224.bin"));
  cat.insert(cat.end(), dog.begin(), dog.end());
  const auto got = run_exe(r.exe, testing::host_f32({2, 3, 224, 224}, cat));
  ASSERT_EQ(got.size(), 2000u);
  EXPECT_EQ(testing::argmax(std::vector<float>(got.begin(), got.begin() + 1000)), 282u);  // tiger cat
  EXPECT_EQ(testing::argmax(std::vector<float>(got.begin() + 1000, got.end())), 258u);    // Samoyed
}

TEST(CompileModels, DumpAfterLowerListsTheSteps) {
  CompileOptions opts;
  opts.offload = false;
  opts.dump_ir_after = "lower";
  const CompileResult r = compile_onnx(testing::model_path("mlperf-tiny/kws01_dscnn_int8_qdq.onnx"), opts);
  EXPECT_EQ(r.ir_dump.rfind("; after lower\nexecutable 'kws01_dscnn_int8_qdq' config 1x16_i8w8a32_15_15_18_17 {\n", 0), 0u)
      << r.ir_dump.substr(0, 200);
  EXPECT_NE(r.ir_dump.find(" qconv2d(t"), std::string::npos);
  EXPECT_EQ(r.ir_dump.find("; after shape_inference"), std::string::npos);

  // A loop-IR pass name of the accelerator backend: one loop-IR dump per offloaded layer.
  opts.offload = true;
  opts.dump_ir_after = "tensorize_gemm";
  const CompileResult a = compile_onnx(testing::model_path("mlperf-tiny/kws01_dscnn_int8_qdq.onnx"), opts);
  size_t layers = 0;
  for (size_t p = a.ir_dump.find("; layer "); p != std::string::npos; p = a.ir_dump.find("; layer ", p + 1)) ++layers;
  EXPECT_EQ(layers, a.exe.programs.size());
  EXPECT_EQ(a.ir_dump.rfind("; layer CONV_2D__18\n", 0), 0u);
  EXPECT_EQ(a.ir_dump.find("; after "), std::string::npos);
}

TEST(CompileModels, DeterministicExecutables) {
  for (size_t k : {size_t{0}, size_t{2}}) {
    const Case& c = cases()[k];
    SCOPED_TRACE(c.model);
    const auto a = compile_case(c, true).exe.serialize();
    const auto b = compile_case(c, true).exe.serialize();
    EXPECT_EQ(a, b);
    EXPECT_GT(a.size(), 1000u);
  }
}

}  // namespace
}  // namespace tessel::compiler
