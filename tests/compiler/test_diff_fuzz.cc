// Differential fuzzing of the compiler (issue 7 item 7). tests/compiler/diff_fuzz_cases.py
// writes random small quantised layers (QLinearConv with random shapes, kernels, strides,
// asymmetric pads, groups incl. depthwise and channel multipliers, per-tensor / per-channel
// scales, int8 / uint8 zero points, optional bias; QLinearMatMul; MaxPool in QDQ form) and float
// Conv+Relu layers that Tessel quantises, each with the output of an independent numpy
// computation. Every case is compiled twice, offloaded (convolutions and dense layers on the
// accelerator, run on fsim, every accelerator step checked bit-exactly against the CPU kernel by
// the executor's check_accel) and CPU only, and
//  (a) the two outputs must be bit-identical (accelerator vs the CPU oracle kernels), and
//  (b) the int8/uint8 output must equal numpy's integer computation (runtime/qnn.h semantics:
//      integer accumulation, one rounding half up) exactly; where the scales are not powers of
//      two, an element whose exact product lies within 1/16 of a rounding boundary may differ by
//      one (requant.h's documented fixed-point accuracy), no other;
//  (c) float models (Conv+Relu, Gemm): the rms error against numpy's float64 result at least
//      20 dB below the layer's magnitude (rms of sum |w x| + |b|).
// The cases directory is TESSEL_DIFF_FUZZ_DIR (environment) or the one the CTest fixture writes
// (1000 cases, fixed seed); a larger budget: diff_fuzz_cases.py DIR --cases N --seed S, then this
// test with TESSEL_DIFF_FUZZ_DIR=DIR.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compiler/driver/compile.h"
#include "runtime/device.h"
#include "runtime/graph_executor.h"
#include "support/error.h"
#include "tests/compiler/test_util.h"

namespace tessel::compiler {
namespace {

std::string cases_dir() {
  if (const char* d = std::getenv("TESSEL_DIFF_FUZZ_DIR"); d && *d) return d;
  return TESSEL_DIFF_FUZZ_CASES_DIR;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot open " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return nlohmann::json::parse(ss.str());
}

std::vector<float> run(const runtime::Executable& exe, const runtime::HostTensor& x) {
  auto dev = runtime::Device::create("fsim", exe.config, uint64_t{64} << 20);
  runtime::ExecOptions eo;
  eo.cpu_repeats = 1;
  eo.measure_cpu = false;
  eo.check_accel = true;  // every accelerator step bit-exact against its CPU kernel
  runtime::GraphExecutor ex(exe, *dev, eo);
  return testing::floats(ex.run({x}).at(0));
}

struct Outcome {
  bool ok = true;
  std::string why;
  int accel_layers = 0;
  int64_t elements = 0;   ///< integer outputs compared with numpy
  int64_t tie_diffs = 0;  ///< of which 1-LSB differences at near-ties
};

Outcome check_case(const std::string& dir, const std::string& stem) {
  const nlohmann::json c = read_json(dir + "/" + stem + ".json");
  const std::string model = dir + "/" + stem + ".onnx";
  const std::vector<int64_t> shape = c.at("input_shape").get<std::vector<int64_t>>();
  const runtime::HostTensor x = testing::host_f32(shape, c.at("input").get<std::vector<float>>());
  Outcome out;
  auto fail = [&](std::string why) {
    out.ok = false;
    out.why = fmt::format("{} ({} seed {}, params {}): {}", stem, c.at("kind").get<std::string>(),
                          c.at("seed").get<int64_t>(), c.at("params").dump(), why);
    return out;
  };
  std::vector<float> accel, cpu;
  try {
    CompileOptions o;
    o.calibration = {{x}};
    const CompileResult ra = compile_onnx(model, o);
    for (const LayerInfo& l : ra.layers) out.accel_layers += l.placement == runtime::Placement::kAccel;
    accel = run(ra.exe, x);
    o.offload = false;
    cpu = run(compile_onnx(model, o).exe, x);
  } catch (const Error& e) {
    return fail(e.what());
  }
  if (accel.size() != cpu.size() || std::memcmp(accel.data(), cpu.data(), accel.size() * 4) != 0) {
    size_t i = 0;
    while (i < std::min(accel.size(), cpu.size()) && accel[i] == cpu[i]) ++i;
    return fail(fmt::format("accelerator and cpu outputs differ (sizes {} / {}, first at {}: {} vs {})", accel.size(),
                            cpu.size(), i, i < accel.size() ? accel[i] : 0.0f, i < cpu.size() ? cpu[i] : 0.0f));
  }
  if (c.at("float_model").get<bool>()) {
    const auto want = c.at("expected_f").get<std::vector<float>>();
    if (want.size() != accel.size()) return fail(fmt::format("{} outputs, numpy {}", accel.size(), want.size()));
    // The error is measured against the layer's magnitude (rms of sum |w x| + |b|, which
    // quantisation errors scale with): an output that is mostly zero after the Relu, or a small
    // difference of large terms, would make an output-relative SNR meaningless.
    const double signal = c.at("params").at("signal_rms").get<double>();
    double n = 0;
    for (size_t i = 0; i < want.size(); ++i) n += double(accel[i] - want[i]) * (accel[i] - want[i]);
    const double rms_err = std::sqrt(n / static_cast<double>(want.size()));
    const double snr = rms_err == 0 ? INFINITY : 20 * std::log10(signal / rms_err);
    if (signal > 0 && snr < 20.0)
      return fail(fmt::format("error {:.4g} rms against numpy's float result, only {:.1f} dB below the layer's "
                              "magnitude {:.4g} (rms of sum |w x| + |b|)",
                              rms_err, snr, signal));
    return out;
  }
  const auto want = c.at("expected_q").get<std::vector<int64_t>>();
  if (want.size() != accel.size()) return fail(fmt::format("{} outputs, numpy {}", accel.size(), want.size()));
  const double sy = c.at("out_scale").get<double>();
  const int64_t zy = c.at("out_zero_point").get<int64_t>();
  const auto ties = c.at("near_tie").get<std::vector<int64_t>>();
  std::vector<char> tie(want.size(), 0);
  for (int64_t t : ties) tie[static_cast<size_t>(t)] = 1;
  int64_t bad = 0, first = -1, tie_diffs = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const int64_t q = static_cast<int64_t>(std::lround(accel[i] / sy)) + zy;
    if (q == want[i]) continue;
    if (tie[i] && std::llabs(q - want[i]) == 1) {
      ++tie_diffs;
      continue;
    }
    if (first < 0) first = static_cast<int64_t>(i);
    ++bad;
  }
  out.elements = static_cast<int64_t>(want.size());
  out.tie_diffs = tie_diffs;
  if (bad > 0) {
    const int64_t q = static_cast<int64_t>(std::lround(accel[first] / sy)) + zy;
    return fail(fmt::format("{} of {} outputs differ from numpy (first at {}: {} vs {}; {} near-tie 1-LSB "
                            "differences allowed)",
                            bad, want.size(), first, q, want[first], tie_diffs));
  }
  return out;
}

TEST(DiffFuzz, CompiledLayersAgreeWithCpuOracleAndNumpy) {
  const std::string dir = cases_dir();
  const auto index = read_json(dir + "/index.json").get<std::vector<std::string>>();
  ASSERT_FALSE(index.empty());
  std::vector<std::string> failures;
  int accel_cases = 0;
  int64_t elements = 0, tie_diffs = 0;
  for (const std::string& stem : index) {
    const Outcome o = check_case(dir, stem);
    accel_cases += o.accel_layers > 0;
    elements += o.elements;
    tie_diffs += o.tie_diffs;
    if (!o.ok) failures.push_back(o.why);
  }
  std::printf("diff fuzz: %zu cases from %s, %d with accelerator layers, %lld integer outputs compared with numpy "
              "(%lld near-tie 1-LSB differences), %zu failures\n",
              index.size(), dir.c_str(), accel_cases, static_cast<long long>(elements),
              static_cast<long long>(tie_diffs), failures.size());
  for (const std::string& f : failures) ADD_FAILURE() << f;
  // The generator's conv and dense cases must reach the accelerator (not all fall back to the CPU).
  EXPECT_GT(accel_cases, static_cast<int>(index.size()) / 3);
}

}  // namespace
}  // namespace tessel::compiler
