// Fuzz target: the ONNX importer, the graph passes and lowering to accelerator Programs
// (compiler/frontend, compiler/passes, compiler/driver). Input: the bytes of an ONNX ModelProto.
// The model is imported from memory first (most mutants end there, cheaply); one that imports is
// written to a scratch file and compiled by compile_onnx, the command line's own entry point, for
// the default configuration, with one calibration sample per graph input (a fixed ramp in
// [-1, 1), so that float models are quantised too) when the inputs hold at most 2^18 elements.
// Nothing is simulated beyond the bounded fsim run of fuzz_util.h. Properties: every model ends
// in an Executable or a named error; an Executable serialises, and its Programs pass the verifier
// and (bounded) fsim contracts of fuzz_util.h.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/driver/compile.h"
#include "compiler/frontend/onnx_import.h"
#include "fuzz/fuzz_util.h"

namespace {

constexpr int64_t kMaxCalibrationElements = int64_t{1} << 18;

// One calibration sample for the graph inputs of `g`, or nothing when they are too large.
std::vector<std::vector<tessel::runtime::HostTensor>> calibration_for(const tessel::compiler::ir::Graph& g) {
  std::vector<tessel::runtime::HostTensor> sample;
  int64_t total = 0;
  for (int id : g.inputs) {
    const auto& v = g.values[static_cast<size_t>(id)];
    int64_t n = 1;
    for (int64_t d : v.shape) {
      if (d < 0 || (d > 0 && n > kMaxCalibrationElements / d)) return {};
      n *= d;
    }
    total += n;
    if (total > kMaxCalibrationElements) return {};
    tessel::runtime::HostTensor t;
    t.dtype = tessel::runtime::DType::kF32;
    t.shape = v.shape;
    t.bytes.resize(static_cast<size_t>(n) * 4);
    for (int64_t i = 0; i < n; ++i) {
      const float f = static_cast<float>(i % 64) / 32.0f - 1.0f;
      std::memcpy(t.bytes.data() + i * 4, &f, 4);
    }
    sample.push_back(std::move(t));
  }
  return {std::move(sample)};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  constexpr const char* kTarget = "onnx";
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  compiler::ir::Graph g;
  if (!fuzz::expect_clean(kTarget, [&] { g = compiler::frontend::import_onnx_bytes(bytes, "model.onnx"); }))
    return 0;
  compiler::CompileOptions opts;
  opts.calibration = calibration_for(g);
  const std::string path = fuzz::scratch_path("model.onnx");
  fuzz::write_scratch(kTarget, path, data, size);
  compiler::CompileResult r;
  const bool compiled = fuzz::expect_clean(kTarget, [&] { r = compiler::compile_onnx(path, opts); });
  std::remove(path.c_str());
  if (!compiled) return 0;
  if (!fuzz::expect_clean(kTarget, [&] { (void)r.exe.serialize(); }))
    fuzz::fail(kTarget, "a compiled Executable does not serialise");
  for (const isa::Program& p : r.exe.programs) fuzz::verify_and_run(kTarget, p);
  return 0;
}
