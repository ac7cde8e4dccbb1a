// The accelerator layers of the bundled models (models/MANIFEST.md) as conformance Programs: each
// model is compiled for a configuration by the compiler driver (compiler::compile_onnx, as the
// e2e tests and the CLI do) and every offloaded layer's Program is taken from the Executable,
// its input segments filled with seeded random int8 data (the layer's weights, bias and
// requantisation constants stay the model's own).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "isa/config.h"
#include "isa/program.h"

namespace tessel::conformance {

/// A bundled model the suite compiles.
struct BundledModel {
  std::string name;  ///< short name for messages, e.g. "mnist-12-int8"
  std::string path;  ///< relative to the repository root, e.g. "models/onnx-zoo/mnist-12.onnx"
};

/// The int8 models every configuration runs: mnist-12-int8, ic01 resnet8 int8, kws01 dscnn int8.
std::vector<BundledModel> small_models();
/// mobilenetv2-12-int8 (63 offloaded layers: 53 convolutions, 10 residual adds).
BundledModel mobilenet_model();

/// Compiles `model` for `cfg` (offload on, batch 1) and returns the Program of every offloaded
/// layer in step order, named "<model>/<layer>" (the ONNX node name), with every kInput segment
/// filled by fill_inputs() from `seed` + the layer's position. Throws what compile_onnx throws
/// (UserError for a configuration no schedule fits, IoError for a missing file).
std::vector<isa::Program> model_layer_programs(const BundledModel& model, const isa::HwConfig& cfg,
                                               uint64_t seed);

}  // namespace tessel::conformance
