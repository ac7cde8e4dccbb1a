// The graph executor: runs an Executable's steps in order, CPU kernels on the host and
// accelerator steps on a Device, and records per-step measurements for reports.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/device.h"
#include "runtime/executable.h"

namespace tessel::runtime {

/// A host tensor: raw little-endian bytes in the TensorDesc's dtype and layout.
struct HostTensor {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  const float* f32() const { return reinterpret_cast<const float*>(bytes.data()); }
};

/// What one step measured in the last run.
struct StepMeasurement {
  std::string name, op;
  Placement placement = Placement::kCpu;
  sim::RunStats accel;          ///< for accelerator steps (cycles from the device)
  double cpu_seconds = 0;       ///< wall time of the CPU kernel for this step (accelerator steps
                                ///< too when ExecOptions::measure_cpu: the same layer on the CPU)
  uint64_t cpu_cycles = 0;      ///< CPU cycles of that kernel (perf counter, else TSC ticks)
  bool cpu_matches_accel = true;///< accelerator output == CPU kernel output, bit for bit
};

struct ExecOptions {
  bool measure_cpu = true;     ///< also run every accelerator step's layer on the CPU (timing)
  bool check_accel = true;     ///< compare each accelerator output with the CPU kernel, bit-exact;
                               ///< a mismatch throws InternalError naming the step
  int cpu_repeats = 3;         ///< CPU timing = minimum over this many runs
};

/// Runs Executables on one Device. Programs are loaded once at construction and reused.
class GraphExecutor {
 public:
  /// Throws UserError if the executable's config differs from the device's.
  GraphExecutor(const Executable& exe, Device& device, ExecOptions opts = {});
  ~GraphExecutor();
  /// Runs the graph. `inputs` in the order of Executable::inputs, dtype/shape must match (a clear
  /// UserError otherwise). Returns the outputs in the order of Executable::outputs.
  std::vector<HostTensor> run(const std::vector<HostTensor>& inputs);
  /// Per-step measurements of the last run, in step order.
  const std::vector<StepMeasurement>& measurements() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessel::runtime
