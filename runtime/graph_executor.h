// The graph executor: runs an Executable's steps in order, CPU kernels on the host and
// accelerator steps on a Device, and records per-step measurements for reports.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/device.h"
#include "runtime/executable.h"
#include "runtime/host_tensor.h"
#include "support/error.h"

namespace tessel::runtime {

/// What one step measured in the last run.
struct StepMeasurement {
  std::string name, op;
  Placement placement = Placement::kCpu;
  sim::RunStats accel;          ///< for accelerator steps (cycles from the device)
  double cpu_seconds = 0;       ///< wall time of the CPU kernel for this step (accelerator steps
                                ///< too when ExecOptions::measure_cpu: the same layer on the CPU)
  uint64_t cpu_cycles = 0;      ///< CPU cycles of that kernel (perf counter, else TSC ticks)
  /// What cpu_cycles counts: "perf_cycles" (PERF_COUNT_HW_CPU_CYCLES, user space), "tsc_ticks"
  /// (x86 time-stamp counter, constant rate) or "none" (0).
  std::string cpu_cycles_source;
  int64_t macs = 0;             ///< useful multiply-accumulates of qconv2d steps (qnn.h), else 0
  bool cpu_matches_accel = true;///< accelerator output == CPU kernel output, bit for bit
  bool cpu_checked = false;     ///< whether the comparison above was made in this run
};

/// An accelerator step whose output differs from its own CPU reference kernel (ExecOptions::
/// check_accel). Its Program and its parameters come from the executable: either the executable
/// was altered after `tessel compile` (rechecksummed sections whose Program and tensor data no
/// longer agree), or this is a Tessel bug. `tessel` exits with code 3 for it (docs/usage.md).
class StepMismatchError : public Error {
 public:
  using Error::Error;
};

struct ExecOptions {
  bool measure_cpu = true;     ///< also run every accelerator step's layer on the CPU (timing),
                               ///< and time every CPU step as the minimum of cpu_repeats runs
  bool check_accel = true;     ///< compare each accelerator output with the CPU kernel, bit-exact;
                               ///< a mismatch throws StepMismatchError naming the step
  int cpu_repeats = 3;         ///< CPU timing = minimum over this many runs
};

/// Runs Executables on one Device. Programs are loaded once at construction and reused; every
/// host tensor buffer (and the scratch of the CPU checks) is allocated at construction, so
/// repeated run() calls do not grow memory. The executor keeps its own copy of `exe`; `device`
/// must outlive it. Not thread-safe.
class GraphExecutor {
 public:
  /// Validates the executable and prepares it. The executable's config must describe the
  /// device's hardware (isa::HwConfig::same_hardware); its run-time settings (DRAM_LATENCY,
  /// CLOCK_MHZ, queue depths) may differ and the device's apply. Throws UserError if a hardware
  /// key differs (naming it), a step names an unknown CPU op, a tensor index or Program index
  /// is out of range, a step reads a tensor that no earlier step, graph input or constant
  /// provides, the executable has no graph outputs, a graph output is written by no step and is
  /// no graph input or constant, a tensor is written by two steps or a step writes a graph input
  /// or constant (a step whose outputs nothing reads is allowed), an accelerator step's segment list does not match its inputs/outputs, a segment
  /// is missing or smaller than its tensor, an accelerator step is neither qconv2d [x, w, bias]
  /// -> [y] nor qadd [a, b] -> [y], an accelerator qconv2d's tensors are not in the NCHWnc
  /// blocks of the config (x: BATCH x BLOCK_IN, y: BATCH x BLOCK_OUT), or an accelerator qadd's
  /// a, b and y are not NCHWnc tensors of one shape with blocks BATCH x BLOCK_OUT. Throws
  /// UserError from Device::load when DRAM is exhausted. Accelerator steps are checked against
  /// their CPU kernel (qconv2d, qadd) on the unpacked NCHW tensors (ExecOptions::check_accel).
  GraphExecutor(const Executable& exe, Device& device, ExecOptions opts = {});
  /// Unloads the Programs from the device.
  ~GraphExecutor();
  /// Runs the graph. `inputs` in the order of Executable::inputs, dtype/shape must match (a clear
  /// UserError otherwise). Returns the outputs in the order of Executable::outputs, in their
  /// TensorDesc's dtype, logical shape and layout. CPU kernel errors are UserErrors naming the
  /// step; an accelerator/CPU mismatch (ExecOptions::check_accel) is a StepMismatchError naming the
  /// step, the number of differing elements and the first one; simulator errors propagate as
  /// sim::SimError.
  std::vector<HostTensor> run(const std::vector<HostTensor>& inputs);
  /// Per-step measurements of the last run, in step order.
  const std::vector<StepMeasurement>& measurements() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessel::runtime
