// Shared pieces of Tessel's benchmarks (bench/): the ResNet-18 workload table of
// ../shared/reference/workloads.md, a platform-independent seeded RNG, a Device wrapper that times
// every submit+wait, NCHWnc packing, seeded int8 workload layers and a one-Program runner.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "compiler/backend/accel/lower_conv2d.h"
#include "compiler/driver/compile.h"
#include "isa/program.h"
#include "runtime/device.h"
#include "runtime/graph_executor.h"
#include "runtime/qnn.h"
#include "sim/common/simulator.h"
#include "support/atomic_file.h"
#include "support/error.h"
#include "support/text.h"

namespace tessel::bench {
using Clock = std::chrono::steady_clock;

/// Device DRAM per simulated device: ResNet-18's Programs (11 MB of int8 weights, activations of
/// at most 0.8 MB per layer) fit with a wide margin.
inline constexpr uint64_t kDeviceDramBytes = uint64_t{256} << 20;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// ---------------------------------------------------------------------------------------------
// The workload table (../shared/reference/workloads.md, ResNet-18 v1, original labels).

struct Workload {
  const char* label;
  int64_t hw, ic, oc, k, pad, stride, out_hw;
  int count;                 ///< occurrences in resnet18_v1
  int64_t table_gemm_uops;   ///< "GEMM uops (1x16x16)" column of workloads.md
};

inline constexpr Workload kWorkloads[] = {
    {"C1", 224, 3, 64, 7, 3, 2, 112, 1, 2458624},   {"C2", 56, 64, 64, 3, 1, 1, 56, 4, 451584},
    {"C3", 56, 64, 64, 1, 0, 1, 56, 0, 50176},       {"C4", 56, 64, 128, 3, 1, 2, 28, 1, 225792},
    {"C5", 56, 64, 128, 1, 0, 2, 28, 1, 25088},      {"C6", 28, 128, 128, 3, 1, 1, 28, 3, 451584},
    {"C7", 28, 128, 256, 3, 1, 2, 14, 1, 225792},    {"C8", 28, 128, 256, 1, 0, 2, 14, 1, 25088},
    {"C9", 14, 256, 256, 3, 1, 1, 14, 3, 451584},    {"C10", 14, 256, 512, 3, 1, 2, 7, 1, 225792},
    {"C11", 14, 256, 512, 1, 0, 2, 7, 1, 25088},     {"C12", 7, 512, 512, 3, 1, 1, 7, 3, 451584},
};

/// Ideal GEMM uops of C2..C12 weighted by count (workloads.md: "Offloaded total").
inline constexpr int64_t kIdealOffloadedUops = 6623232;
/// VTA's published cycles for the same layers plus their ALU work on Chisel tsim with zero-latency
/// memory (apache/tvm-vta#30, quoted in isa.md section 5).
inline constexpr int64_t kVtaTsimCycles = 7729601;

inline const Workload* find_workload(const std::string& label) {
  for (const Workload& w : kWorkloads) {
    if (label == w.label) return &w;
  }
  return nullptr;
}

/// The workload whose shape matches (square input hw x hw, ic -> oc, k x k, stride); null if none.
inline const Workload* match_workload(int64_t hw, int64_t ic, int64_t oc, int64_t k, int64_t stride) {
  for (const Workload& w : kWorkloads) {
    if (w.hw == hw && w.ic == ic && w.oc == oc && w.k == k && w.stride == stride) return &w;
  }
  return nullptr;
}

inline bool in_vta_set(const std::string& label) { return !label.empty() && label != "C1"; }

// ---------------------------------------------------------------------------------------------
// Deterministic pseudo-random numbers (splitmix64: the same sequence on every platform).

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform integer in [lo, hi].
  int64_t uniform_int(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  /// Uniform float in [lo, hi).
  float uniform_float(float lo, float hi) {
    const double u = static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0);
    return static_cast<float>(lo + (hi - lo) * u);
  }

 private:
  uint64_t state_;
};

// ---------------------------------------------------------------------------------------------
// Network mode: the seeded input and the labels of the offloaded convolutions (shared with the
// refactor gate, tests/gate/).

/// The seeded calibration/benchmark input: float32 [1, 3, 224, 224], uniform in [-2, 2) (the
/// range of an ImageNet-normalised image), splitmix64 seed 20181.
inline runtime::HostTensor seeded_image(const std::vector<int64_t>& shape) {
  runtime::HostTensor t;
  t.dtype = runtime::DType::kF32;
  t.shape = shape;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  t.bytes.resize(static_cast<size_t>(n) * sizeof(float));
  Rng rng(20181);
  float* f = reinterpret_cast<float*>(t.bytes.data());
  for (int64_t i = 0; i < n; ++i) f[i] = rng.uniform_float(-2.0f, 2.0f);
  return t;
}

/// Label of a conv from its LayerInfo (op "Conv", or "Conv+..." after fusion): kernel size from
/// macs / (oc*oh*ow*ic) (groups are 1 in ResNet-18), stride from the input/output height. "" when
/// it is not a workload conv.
inline std::string label_of(const compiler::LayerInfo& li) {
  const bool is_conv = li.op == "Conv" || li.op.rfind("Conv+", 0) == 0;
  if (!is_conv || li.in_shape.size() != 4 || li.out_shape.size() != 4) return "";
  const int64_t ic = li.in_shape[1], ih = li.in_shape[2], iw = li.in_shape[3];
  const int64_t oc = li.out_shape[1], oh = li.out_shape[2], ow = li.out_shape[3];
  if (ih != iw || oh != ow || oh <= 0 || ic <= 0 || oc <= 0) return "";
  const int64_t per_tap = oc * oh * ow * ic;
  if (li.macs <= 0 || li.macs % per_tap != 0) return "";
  const int64_t k2 = li.macs / per_tap;
  const int64_t k = std::lround(std::sqrt(static_cast<double>(k2)));
  if (k * k != k2) return "";
  const int64_t stride = (ih + oh - 1) / oh;
  const Workload* w = match_workload(ih, ic, oc, k, stride);
  return w ? w->label : "";
}

// ---------------------------------------------------------------------------------------------
// A Device that forwards to another and times each submission (wall seconds of the simulator).

class TimedDevice final : public runtime::Device {
 public:
  explicit TimedDevice(std::unique_ptr<runtime::Device> inner) : inner_(std::move(inner)) {}
  std::string kind() const override { return inner_->kind(); }
  const isa::HwConfig& config() const override { return inner_->config(); }
  runtime::DeviceAddr alloc(uint64_t bytes, uint64_t align) override {
    return inner_->alloc(bytes, align);
  }
  void free(runtime::DeviceAddr addr) override { inner_->free(addr); }
  void copy_to_device(runtime::DeviceAddr dst, const void* src, uint64_t bytes) override {
    inner_->copy_to_device(dst, src, bytes);
  }
  void copy_from_device(void* dst, runtime::DeviceAddr src, uint64_t bytes) override {
    inner_->copy_from_device(dst, src, bytes);
  }
  runtime::LoadedProgram load(const isa::Program& program) override {
    return inner_->load(program);
  }
  void unload(const runtime::LoadedProgram& loaded) override { inner_->unload(loaded); }
  void submit(const runtime::LoadedProgram& loaded) override {
    const auto t0 = Clock::now();
    inner_->submit(loaded);
    pending_seconds_ = seconds_since(t0);
  }
  sim::RunStats wait() override {
    const auto t0 = Clock::now();
    sim::RunStats s = inner_->wait();
    submit_seconds_.push_back(pending_seconds_ + seconds_since(t0));
    pending_seconds_ = 0;
    return s;
  }
  sim::Counters total_counters() const override { return inner_->total_counters(); }

  /// Wall seconds of each submit+wait, in submission order.
  const std::vector<double>& submit_seconds() const { return submit_seconds_; }
  double total_seconds() const {
    double s = 0;
    for (double x : submit_seconds_) s += x;
    return s;
  }
  void clear_timings() { submit_seconds_.clear(); }

 private:
  std::unique_ptr<runtime::Device> inner_;
  double pending_seconds_ = 0;
  std::vector<double> submit_seconds_;
};


// ---------------------------------------------------------------------------------------------
// Layers-only mode.

/// Packs NCHW int8 into NCHWnc (runtime/executable.h Layout::kNCHWnc), zero-padding N and C.
inline std::vector<int8_t> pack_nchwnc(const std::vector<int8_t>& x, int64_t n, int64_t c, int64_t h,
                                int64_t w, int64_t bn, int64_t bc) {
  const int64_t nb = (n + bn - 1) / bn, cb = (c + bc - 1) / bc;
  std::vector<int8_t> out(static_cast<size_t>(nb * cb * h * w * bn * bc), 0);
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t xx = 0; xx < w; ++xx) {
          const int64_t dst =
              ((((in / bn) * cb + ic / bc) * h + y) * w + xx) * bn * bc + (in % bn) * bc + ic % bc;
          out[static_cast<size_t>(dst)] = x[static_cast<size_t>(((in * c + ic) * h + y) * w + xx)];
        }
  return out;
}

/// Inverse of pack_nchwnc (drops the padding).
inline std::vector<int8_t> unpack_nchwnc(const std::vector<int8_t>& p, int64_t n, int64_t c, int64_t h,
                                  int64_t w, int64_t bn, int64_t bc) {
  const int64_t cb = (c + bc - 1) / bc;
  std::vector<int8_t> out(static_cast<size_t>(n * c * h * w));
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t xx = 0; xx < w; ++xx) {
          const int64_t src =
              ((((in / bn) * cb + ic / bc) * h + y) * w + xx) * bn * bc + (in % bn) * bc + ic % bc;
          out[static_cast<size_t>(((in * c + ic) * h + y) * w + xx)] = p[static_cast<size_t>(src)];
        }
  return out;
}

/// A workload layer with seeded int8 data: weights uniform in [-32, 31], inputs uniform in
/// [-64, 63], bias uniform in [-1024, 1023]; the power-of-two requantisation shift brings the
/// accumulator's standard deviation (estimated from the value ranges) to about 32.
struct SeededLayer {
  compiler::accel::AccelLayer layer;
  std::vector<int8_t> input;  ///< NCHW
};

inline SeededLayer make_seeded_layer(const Workload& w) {
  SeededLayer s;
  Rng rng(0x7e55e1000ULL + static_cast<uint64_t>(std::stoi(w.label + 1)));
  runtime::QConv2dParams& p = s.layer.params;
  p.n = 1;
  p.ic = w.ic;
  p.ih = p.iw = w.hw;
  p.oc = w.oc;
  p.kh = p.kw = w.k;
  p.stride_h = p.stride_w = w.stride;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = w.pad;
  p.groups = 1;
  p.in_zero_point = 0;
  // std of uniform[-64,63] ~ 36.9, of uniform[-32,31] ~ 18.5; sum of ic*k*k products.
  const double acc_std = std::sqrt(static_cast<double>(w.ic * w.k * w.k)) * 36.9 * 18.5;
  const int shift = std::clamp(static_cast<int>(std::lround(std::log2(acc_std / 32.0))), 0, 31);
  p.rq.multiplier = {1};
  p.rq.shift = {shift};
  p.rq.out_zero_point = 0;
  p.rq.clip_lo = -128;
  p.rq.clip_hi = 127;
  s.layer.name = w.label;
  s.layer.weights.resize(static_cast<size_t>(w.oc * w.ic * w.k * w.k));
  for (int8_t& v : s.layer.weights) v = static_cast<int8_t>(rng.uniform_int(-32, 31));
  s.layer.bias.resize(static_cast<size_t>(w.oc));
  for (int32_t& v : s.layer.bias) v = static_cast<int32_t>(rng.uniform_int(-1024, 1023));
  s.input.resize(static_cast<size_t>(w.ic * w.hw * w.hw));
  for (int8_t& v : s.input) v = static_cast<int8_t>(rng.uniform_int(-64, 63));
  return s;
}

/// Runs `program` once on `dev` with `packed_input` in its "inp" segment; returns the "out"
/// segment bytes (the first `out_bytes`) and the run statistics.
inline std::vector<int8_t> run_program(TimedDevice& dev, const isa::Program& program,
                                const std::vector<int8_t>& packed_input, uint64_t out_bytes,
                                sim::RunStats& stats, double& seconds) {
  const isa::Segment& inp = program.segment("inp");
  const isa::Segment& out = program.segment("out");
  if (inp.size_bytes < packed_input.size() || out.size_bytes < out_bytes) {
    throw_internal_error("program '{}': segments inp {} bytes / out {} bytes are smaller than the "
                         "layer's NCHWnc tensors ({} / {} bytes)",
                         program.name, inp.size_bytes, out.size_bytes, packed_input.size(),
                         out_bytes);
  }
  const runtime::LoadedProgram lp = dev.load(program);
  dev.copy_to_device(lp.segment_addr(program, "inp"), packed_input.data(), packed_input.size());
  dev.clear_timings();
  dev.submit(lp);
  stats = dev.wait();
  seconds = dev.total_seconds();
  std::vector<int8_t> result(out_bytes);
  dev.copy_from_device(result.data(), lp.segment_addr(program, "out"), out_bytes);
  dev.unload(lp);
  return result;
}


/// Checks, before the benchmark runs, that `path` (the value of `option`) can be written: not a
/// directory, and openable for writing (a file the check creates is removed again). Throws
/// IoError "--json /x/y.json: cannot open for writing (no such file or directory)".
inline void check_writable(const std::string& path, const char* option) {
  if (path.empty()) return;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw_io_error("{} {}: is a directory", option, path);
  const bool existed = std::filesystem::exists(path, ec);
  {
    std::ofstream f(path, std::ios::binary | std::ios::app);  // app: an existing file keeps its bytes
    if (!f) throw_io_error("{} {}: cannot open for writing ({})", option, path, support::errno_text(errno));
  }
  if (!existed) std::filesystem::remove(path, ec);
}

/// Runs a benchmark's `run(argc, argv)` with the exit codes of the `tessel` command line
/// (tools/main.cc): its own result (0 every check passed, 1 a check failed), 1 with one
/// "error: ..." line for an error at run time (standard output that could not be written
/// included: support::check_stdout), 2 for a usage error (bad option or value).
inline int run_bench_main(int argc, char** argv, int (*run)(int, char**)) {
  try {
    const int rc = run(argc, argv);
    // Results printed to a full disk or a closed pipe are lost: that is an error, not success.
    if (const std::string lost = tessel::support::check_stdout(); !lost.empty()) {
      fmt::print(stderr, "error: {}\n", lost);
      return 1;
    }
    return rc;
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "error: {} (see --help)\n", e.what());
    return 2;
  } catch (const tessel::Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "error: out of memory while running the benchmark (an allocation the machine could not satisfy)\n");
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: internal error: {}\n", e.what());
    return 1;
  }
}

}  // namespace tessel::bench
