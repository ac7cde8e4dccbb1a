#include "tests/conformance/models.h"

#include "compiler/driver/compile.h"
#include "runtime/executable.h"
#include "tests/conformance/conformance.h"

namespace tessel::conformance {

std::vector<BundledModel> small_models() {
  return {{"mnist-12-int8", "models/onnx-zoo/mnist-12-int8.ort-qoperator.onnx"},
          {"ic01-resnet8-int8", "models/mlperf-tiny/ic01_resnet8_int8_qdq.onnx"},
          {"kws01-dscnn-int8", "models/mlperf-tiny/kws01_dscnn_int8_qdq.onnx"}};
}

BundledModel mobilenet_model() {
  return {"mobilenetv2-12-int8", "models/onnx-zoo/mobilenetv2-12-int8.onnx"};
}

std::vector<isa::Program> model_layer_programs(const BundledModel& model, const isa::HwConfig& cfg,
                                               uint64_t seed) {
  compiler::CompileOptions opts;
  opts.config = cfg;
  opts.offload = true;
  const compiler::CompileResult r =
      compiler::compile_onnx(std::string(TESSEL_SOURCE_DIR) + "/" + model.path, opts);
  std::vector<isa::Program> out;
  for (const runtime::Step& s : r.exe.steps) {
    if (s.placement != runtime::Placement::kAccel) continue;
    isa::Program p = r.exe.programs.at(size_t(s.program));
    p.name = model.name + "/" + s.name;
    fill_inputs(p, seed + out.size());
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace tessel::conformance
