// tessel-bench-simspeed: how fast each accelerator model runs real work, measured in one run.
//
// Workloads: ResNet-18's C6 layer (28x28x128 -> 128, 3x3, stride 1; workloads.md, seeded int8
// data, lowered directly with compiler::accel::lower_conv2d) and the whole bundled
// mobilenetv2-12-int8 (compiled with compile_onnx, every offloaded layer run through the graph
// executor on the bundled cat image). Each workload runs on every requested model (fsim, cycle,
// rtl) of one configuration. Reported:
//   * cycle and rtl: simulated cycles per second = accelerator cycles / wall seconds spent inside
//     the device's submit+wait (program loading, host copies and CPU steps excluded);
//   * fsim: instructions per second (and uops per second: fsim instructions are whole loop nests);
// and, in the same run, the checks that make the speed figures meaningful: outputs bit-identical
// across the models, and cycle == rtl to the cycle for every Program (the speed of an inexact
// model is not reported as a pass). Goals (issue 3): cycle >= 10 M cycles/s, rtl >= 300 k
// cycles/s on the project's 2-core build machine.

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/bench_common.h"
#include "compiler/driver/compile.h"
#include "runtime/graph_executor.h"
#include "support/npy.h"

#ifndef TESSEL_SOURCE_DIR
#define TESSEL_SOURCE_DIR "."
#endif

namespace tessel::bench {
namespace {

constexpr double kCycleGoal = 10e6;   ///< simulated cycles/s of the cycle model (issue 3)
constexpr double kRtlGoal = 300e3;    ///< simulated cycles/s of the RTL model (issue 3)

/// One workload on one model.
struct Measurement {
  std::string workload, sim;
  uint64_t programs = 0;      ///< Programs submitted
  uint64_t cycles = 0;        ///< accelerator cycles, summed over Programs (0 on fsim)
  uint64_t insns = 0;         ///< instructions executed (FINISH included)
  uint64_t uops = 0;          ///< GEMM + ALU uops (gemm_counter + alu_counter)
  double seconds = 0;         ///< wall seconds inside submit+wait, best of the repeats
  std::vector<uint64_t> program_cycles;     ///< per Program, in submission order
  std::vector<std::vector<uint8_t>> outputs;  ///< what the workload produced, for cross-checks
  double rate() const {
    if (seconds <= 0) return 0;
    return double(sim == "fsim" ? insns : cycles) / seconds;
  }
};

std::string si(double v) {
  if (v >= 1e9) return fmt::format("{:.2f} G", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.2f} M", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.1f} k", v / 1e3);
  return fmt::format("{:.0f} ", v);
}

/// C6 lowered once; each model runs it `repeats` times, the fastest run counts.
Measurement run_c6(const std::string& sim, const isa::HwConfig& cfg,
                   const compiler::accel::LoweredLayer& lowered, const SeededLayer& seeded,
                   int repeats) {
  const Workload& w = *find_workload("C6");
  const int64_t bn = cfg.batch(), bi = cfg.block_in(), bo = cfg.block_out();
  const std::vector<int8_t> packed = pack_nchwnc(seeded.input, 1, w.ic, w.hw, w.hw, bn, bi);
  const uint64_t out_bytes = uint64_t(((1 + bn - 1) / bn) * bn * ((w.oc + bo - 1) / bo) * bo *
                                      w.out_hw * w.out_hw);
  Measurement m;
  m.workload = "resnet18-C6";
  m.sim = sim;
  for (int r = 0; r < repeats; ++r) {
    TimedDevice dev(runtime::Device::create(sim, cfg, kDeviceDramBytes));
    sim::RunStats stats;
    double seconds = 0;
    const std::vector<int8_t> out =
        run_program(dev, lowered.program, packed, out_bytes, stats, seconds);
    if (r == 0 || seconds < m.seconds) m.seconds = seconds;
    if (r == 0) {
      m.programs = 1;
      m.cycles = stats.cycles;
      m.program_cycles = {stats.cycles};
      m.insns = stats.counters.insn_count;
      m.uops = stats.counters.gemm_counter + stats.counters.alu_counter;
      m.outputs = {std::vector<uint8_t>(out.begin(), out.end())};
    }
  }
  return m;
}

/// The whole mobilenetv2 on one model (one inference; CPU steps excluded from the time).
Measurement run_mobilenet(const std::string& sim, const compiler::CompileResult& compiled,
                          const runtime::HostTensor& image) {
  TimedDevice dev(runtime::Device::create(sim, compiled.exe.config, kDeviceDramBytes));
  runtime::ExecOptions eo;
  eo.measure_cpu = false;
  eo.check_accel = false;  // checked across the models below instead
  runtime::GraphExecutor exec(compiled.exe, dev, eo);
  dev.clear_timings();
  const std::vector<runtime::HostTensor> outputs = exec.run({image});
  Measurement m;
  m.workload = "mobilenetv2-12-int8";
  m.sim = sim;
  for (const runtime::StepMeasurement& s : exec.measurements()) {
    if (s.placement != runtime::Placement::kAccel) continue;
    ++m.programs;
    m.cycles += s.accel.cycles;
    m.program_cycles.push_back(s.accel.cycles);
    m.insns += s.accel.counters.insn_count;
    m.uops += s.accel.counters.gemm_counter + s.accel.counters.alu_counter;
  }
  m.seconds = dev.total_seconds();
  for (const runtime::HostTensor& t : outputs) m.outputs.push_back(t.bytes);
  return m;
}


/// Splits "a,b,c" (empty items dropped).
std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> v;
  size_t p = 0;
  while (p <= s.size()) {
    const size_t q = s.find(',', p);
    const std::string item = s.substr(p, q == std::string::npos ? std::string::npos : q - p);
    if (!item.empty()) v.push_back(item);
    if (q == std::string::npos) break;
    p = q + 1;
  }
  return v;
}

/// Parses the command line (prints --help and returns 0; throws CLI::ParseError for usage errors)
/// and runs the benchmark. Returns 0 when every check passed, 1 otherwise.
int run_main(int argc, char** argv) {
  CLI::App app{"tessel-bench-simspeed: simulated cycles/s of cycle and rtl, instructions/s of "
               "fsim, on ResNet-18 C6 and mobilenetv2-12-int8"};
  std::string sims_arg;  // default: every model this build has
  std::string workloads_arg = "c6,mobilenet";
  std::string model = std::string(TESSEL_SOURCE_DIR) + "/models/onnx-zoo/mobilenetv2-12-int8.onnx";
  std::string input =
      std::string(TESSEL_SOURCE_DIR) + "/data/reference/inputs/imagenet_cat_f32_1x3x224x224.bin";
  std::string json_path;
  int repeats = 3;
  bool no_goals = false;
  app.add_option("--sims", sims_arg, "comma-separated models: fsim, cycle, rtl (default: all built)");
  app.add_option("--workloads", workloads_arg, "comma-separated: c6, mobilenet");
  app.add_option("--model", model, "mobilenetv2-12-int8 ONNX file");
  app.add_option("--input", input, "its input image (float32 1x3x224x224 raw or .npy)");
  app.add_option("--repeat", repeats, "C6 runs per model (the fastest counts)")->check(CLI::Range(1, 100));
  app.add_option("--json", json_path, "also write the figures as JSON");
  app.add_flag("--no-goals", no_goals, "do not fail when a speed goal is missed");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);  // prints the help, exit 0
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  }

  // Option values are usage errors (exit 2), as CLI11's own checks.
  const std::vector<std::string> kinds = runtime::Device::kinds();
  const std::vector<std::string> sims = sims_arg.empty() ? kinds : split_list(sims_arg);
  const std::vector<std::string> workloads = split_list(workloads_arg);
  for (const std::string& s : sims) {
    if (std::find(kinds.begin(), kinds.end(), s) == kinds.end()) {
      throw CLI::ValidationError(fmt::format("unknown or unbuilt simulator '{}' in --sims: this build has {}", s,
                                             fmt::join(kinds, ", ")));
    }
  }
  for (const std::string& w : workloads) {
    if (w != "c6" && w != "mobilenet") {
      throw CLI::ValidationError(
          fmt::format("unknown workload '{}' in --workloads: expected c6 or mobilenet", w));
    }
  }
  if (sims.empty() || workloads.empty()) {
    throw CLI::ValidationError("--sims and --workloads must not be empty");
  }
  check_writable(json_path, "--json");

  const isa::HwConfig cfg;  // VTA's default configuration, DRAM latency 32
  std::vector<Measurement> results;
  std::vector<std::string> failures;

  for (const std::string& wl : workloads) {
    std::vector<Measurement> ms;
    if (wl == "c6") {
      const SeededLayer seeded = make_seeded_layer(*find_workload("C6"));
      const compiler::accel::LoweredLayer lowered = compiler::accel::lower_conv2d(seeded.layer, cfg);
      for (const std::string& s : sims) {
        fmt::print(stderr, "running resnet18-C6 on {}...\n", s);
        ms.push_back(run_c6(s, cfg, lowered, seeded, s == "rtl" ? 1 : repeats));
      }
    } else {
      compiler::CompileOptions co;
      co.config = cfg;
      const compiler::CompileResult compiled = compiler::compile_onnx(model, co);
      const support::FloatTensor img = support::read_tensor_file(input, std::vector<int64_t>{1, 3, 224, 224});
      runtime::HostTensor image;
      image.dtype = runtime::DType::kF32;
      image.shape = img.shape;
      image.bytes.resize(img.data.size() * sizeof(float));
      std::memcpy(image.bytes.data(), img.data.data(), image.bytes.size());
      for (const std::string& s : sims) {
        fmt::print(stderr, "running mobilenetv2-12-int8 on {}...\n", s);
        ms.push_back(run_mobilenet(s, compiled, image));
      }
    }
    // Cross-checks made in this run.
    const Measurement* cycle = nullptr;
    const Measurement* rtl = nullptr;
    for (const Measurement& m : ms) {
      if (m.sim == "cycle") cycle = &m;
      if (m.sim == "rtl") rtl = &m;
      if (m.outputs != ms.front().outputs) {
        failures.push_back(fmt::format("{}: {} outputs differ from {}'s", m.workload, m.sim,
                                       ms.front().sim));
      }
    }
    if (cycle && rtl) {
      for (size_t i = 0; i < cycle->program_cycles.size() && i < rtl->program_cycles.size(); ++i) {
        if (cycle->program_cycles[i] != rtl->program_cycles[i]) {
          failures.push_back(fmt::format("{}: Program {}: cycle model {} cycles, rtl {} cycles",
                                         cycle->workload, i, cycle->program_cycles[i],
                                         rtl->program_cycles[i]));
          break;
        }
      }
    }
    for (Measurement& m : ms) results.push_back(std::move(m));
  }

  fmt::print("| workload | model | Programs | accelerator cycles | instructions | uops | wall s | rate | goal |\n");
  fmt::print("|---|---|---|---|---|---|---|---|---|\n");
  nlohmann::json j = nlohmann::json::array();
  for (const Measurement& m : results) {
    std::string goal = "-";
    if (m.sim == "cycle" || m.sim == "rtl") {
      const double target = m.sim == "cycle" ? kCycleGoal : kRtlGoal;
      const bool met = m.rate() >= target;
      goal = fmt::format("{} {}cycles/s: {}", ">=", si(target), met ? "met" : "MISSED");
      if (!met && !no_goals) {
        failures.push_back(fmt::format("{} on {}: {}cycles/s is below the goal of {}cycles/s",
                                       m.workload, m.sim, si(m.rate()), si(target)));
      }
    }
    const std::string rate = m.sim == "fsim"
                                 ? fmt::format("{}insns/s ({}uops/s)", si(m.rate()),
                                               si(m.seconds > 0 ? double(m.uops) / m.seconds : 0))
                                 : fmt::format("{}cycles/s", si(m.rate()));
    fmt::print("| {} | {} | {} | {} | {} | {} | {:.3f} | {} | {} |\n", m.workload, m.sim,
               m.programs, m.sim == "fsim" ? std::string("-") : std::to_string(m.cycles), m.insns,
               m.uops, m.seconds, rate, goal);
    j.push_back({{"workload", m.workload}, {"sim", m.sim}, {"programs", m.programs},
                 {"cycles", m.cycles}, {"insns", m.insns}, {"uops", m.uops},
                 {"seconds", m.seconds}, {"rate", m.rate()},
                 {"rate_unit", m.sim == "fsim" ? "insns/s" : "cycles/s"}});
  }
  if (!json_path.empty()) {
    tessel::support::write_file_atomic(
        json_path, nlohmann::json{{"config", cfg.label()}, {"results", j}, {"failures", failures}}.dump(2) + "\n");
  }
  for (const std::string& f : failures) fmt::print("FAILED: {}\n", f);
  if (failures.empty()) fmt::print("all checks passed: outputs identical across models{}\n",
                                    std::find(sims.begin(), sims.end(), "rtl") != sims.end() &&
                                            std::find(sims.begin(), sims.end(), "cycle") != sims.end()
                                        ? ", cycle == rtl for every Program"
                                        : "");
  return failures.empty() ? 0 : 1;
}

}  // namespace
}  // namespace tessel::bench

int main(int argc, char** argv) {
  return tessel::bench::run_bench_main(argc, argv, tessel::bench::run_main);
}
