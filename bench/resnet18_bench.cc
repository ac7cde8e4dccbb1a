// tessel-bench-resnet18: ResNet-18 v1 on Tessel's accelerator simulators, measured against the
// workload set of ../shared/reference/workloads.md (VTA's benchmark layers C1..C12, ORIGINAL
// labels of apache/tvm v0.5 test_benchmark_topi_conv2d.py) and VTA's published figures
// (../shared/reference/isa.md section 5).
//
// Two modes:
//  - network (default): compiles the float ResNet-18 ONNX model written by gen_resnet18.py with
//    Tessel's post-training quantisation (power-of-two scales, calibrated on one seeded random
//    input), runs one inference through runtime::GraphExecutor on the cycle simulator, and reports
//    every offloaded convolution, labelled by shape with C1..C12.
//  - --layers-only: lowers each workload layer directly with compiler::accel::lower_conv2d
//    (seeded int8 weights and inputs) and runs each Program on a runtime::Device; outputs are
//    checked bit-exactly against runtime::qconv2d_reference.
// Each mode runs the given configuration and, for the cycle simulator, the same configuration with
// DRAM_LATENCY = 0 (VTA's idealised tsim memory), once compiled for it and once running the
// Programs compiled for the given configuration, and prints the ratios measured in the same run.
// Every accelerator Program is also run on fsim, for fsim's instructions per second and to check
// that fsim and the cycle simulator produce identical outputs; each workload layer's ideal GEMM
// uops (from the backend) must equal workloads.md's column.

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>  // stderr for fmt::print
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "compiler/backend/accel/lower_conv2d.h"
#include "compiler/driver/compile.h"
#include "isa/config.h"
#include "isa/program.h"
#include "runtime/device.h"
#include "runtime/executable.h"
#include "runtime/graph_executor.h"
#include "runtime/qnn.h"
#include "sim/common/simulator.h"
#include "support/error.h"
#include "bench/bench_common.h"

#ifndef TESSEL_BENCH_DEFAULT_MODEL
#define TESSEL_BENCH_DEFAULT_MODEL "resnet18_v1.onnx"
#endif

namespace tessel::bench {
namespace {

// ---------------------------------------------------------------------------------------------
// Results.

/// One offloaded layer instance measured on one configuration.
struct LayerResult {
  std::string label;  ///< C1..C12, or "" for an offloaded layer that is not a workload conv
  std::string name;   ///< ONNX node name (network) or the label (layers-only)
  std::string op;
  int weight = 1;     ///< how often it counts in the weighted totals (workloads.md count in
                      ///< layers-only mode, 1 per instance in network mode)
  int64_t macs = 0;
  int64_t ideal_gemm_uops = 0;
  sim::RunStats stats;
  double sim_seconds = 0;     ///< wall seconds of the simulator run
  double compile_ms = -1;     ///< wall milliseconds of lower_conv2d (layers-only), -1 if unknown
  std::string schedule;
  uint64_t dram_bytes() const {
    const sim::Counters& c = stats.counters;
    return c.inp_load_nbytes + c.wgt_load_nbytes + c.acc_load_nbytes + c.uop_load_nbytes +
           c.out_store_nbytes;
  }
};

struct ConfigResult {
  std::string title;
  isa::HwConfig cfg;
  std::string sim_kind;
  std::vector<LayerResult> layers;   ///< every offloaded layer, in execution order
  uint64_t network_cycles = 0;       ///< accelerator cycles of all offloaded steps (network mode)
  double network_cpu_seconds = 0;    ///< wall seconds of the CPU steps (network mode)
  double sim_seconds = 0;            ///< wall seconds of all simulator runs of this config
  uint64_t sim_cycles = 0;           ///< cycles simulated in those runs
  double compile_seconds = 0;        ///< compile wall time for this config
  std::string c1_placement;          ///< "accelerator", "cpu" or "not run"
  bool compiled = true;              ///< false: ran the first configuration's Programs
};

/// One configuration to measure. reuse_first: do not compile for `cfg`; run the Programs compiled
/// for the first configuration with `cfg`'s timing (isolates the timing change from the schedule
/// the compiler picks for it; the encoding does not depend on DRAM_LATENCY).
struct RunConfig {
  std::string title;
  isa::HwConfig cfg;
  bool reuse_first = false;
};

struct FsimResult {
  uint64_t insns = 0;
  uint64_t uops = 0;  ///< GEMM + ALU uops executed
  double seconds = 0;
  bool outputs_match_cycle = true;
  bool compared = false;
};

std::string fmt_ratio(double num, double den) {
  return den > 0 ? fmt::format("{:.3f}", num / den) : std::string("-");
}

std::string fmt_int(uint64_t v) {
  // Thousands separators for the tables (the JSON keeps plain integers).
  std::string s = std::to_string(v);
  std::string out;
  int n = 0;
  for (auto it = s.rbegin(); it != s.rend(); ++it) {
    if (n > 0 && n % 3 == 0) out.push_back(',');
    out.push_back(*it);
    ++n;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

struct LayersOnlyRun {
  std::vector<ConfigResult> configs;
  FsimResult fsim;
  bool all_checked_ok = true;
  std::vector<std::string> failures;
};

LayersOnlyRun run_layers_only(const std::vector<const Workload*>& selected,
                              const std::vector<RunConfig>& configs,
                              const std::string& sim_kind, bool check) {
  LayersOnlyRun run;
  for (const RunConfig& rc : configs) {
    ConfigResult cr;
    cr.title = rc.title;
    cr.cfg = rc.cfg;
    cr.compiled = !rc.reuse_first;
    cr.sim_kind = sim_kind;
    cr.c1_placement = "not run";
    run.configs.push_back(std::move(cr));
  }
  const bool also_fsim = sim_kind != "fsim";
  // One device per configuration (and one fsim), reused for every layer.
  std::vector<std::unique_ptr<TimedDevice>> devices;
  for (const RunConfig& rc : configs) {
    devices.push_back(
        std::make_unique<TimedDevice>(runtime::Device::create(sim_kind, rc.cfg, kDeviceDramBytes)));
  }
  std::unique_ptr<TimedDevice> fsim_dev;
  if (also_fsim) {
    fsim_dev = std::make_unique<TimedDevice>(runtime::Device::create("fsim", configs[0].cfg, kDeviceDramBytes));
  }
  run.fsim.compared = also_fsim;
  for (const Workload* w : selected) {
    const SeededLayer seeded = make_seeded_layer(*w);
    const runtime::QConv2dParams& p = seeded.layer.params;
    const isa::HwConfig& cfg0 = configs[0].cfg;
    const std::vector<int8_t> packed =
        pack_nchwnc(seeded.input, p.n, p.ic, p.ih, p.iw, cfg0.batch(), cfg0.block_in());
    const int64_t cb_out = (p.oc + cfg0.block_out() - 1) / cfg0.block_out();
    const int64_t nb = (p.n + cfg0.batch() - 1) / cfg0.batch();
    const uint64_t out_bytes =
        static_cast<uint64_t>(nb * cb_out * p.oh() * p.ow() * cfg0.batch() * cfg0.block_out());
    std::vector<int8_t> expected;
    if (check) {
      expected.resize(static_cast<size_t>(p.n * p.oc * p.oh() * p.ow()));
      runtime::qconv2d_reference(p, seeded.input.data(), seeded.layer.weights.data(),
                                 seeded.layer.bias.data(), expected.data());
    }
    std::vector<int8_t> first_output;
    std::optional<compiler::accel::LoweredLayer> first_lowered;
    for (size_t ci = 0; ci < configs.size(); ++ci) {
      const isa::HwConfig& cfg = configs[ci].cfg;
      compiler::accel::LoweredLayer lowered;
      double compile_ms = -1;
      if (configs[ci].reuse_first) {
        lowered = *first_lowered;
        lowered.program.config = cfg;
      } else {
        const auto t0 = Clock::now();
        lowered = compiler::accel::lower_conv2d(seeded.layer, cfg);
        compile_ms = seconds_since(t0) * 1e3;
      }
      if (ci == 0) first_lowered = lowered;
      LayerResult lr;
      lr.label = w->label;
      lr.name = w->label;
      lr.op = "Conv";
      lr.weight = w->count;
      lr.macs = lowered.macs;
      lr.ideal_gemm_uops = lowered.ideal_gemm_uops;
      lr.compile_ms = compile_ms;
      lr.schedule = lowered.schedule;
      const std::vector<int8_t> packed_out = run_program(*devices[ci], lowered.program, packed,
                                                         out_bytes, lr.stats, lr.sim_seconds);
      const std::vector<int8_t> got =
          unpack_nchwnc(packed_out, p.n, p.oc, p.oh(), p.ow(), cfg.batch(), cfg.block_out());
      if (check && got != expected) {
        size_t first = 0;
        while (first < got.size() && got[first] == expected[first]) ++first;
        run.all_checked_ok = false;
        run.failures.push_back(fmt::format(
            "{} on {} ({}): output differs from qconv2d_reference at element {} (got {}, "
            "expected {})",
            w->label, sim_kind, configs[ci].title, first, int{got[first]}, int{expected[first]}));
      }
      if (ci == 0) {
        first_output = got;
        if (fsim_dev) {
          sim::RunStats fs;
          double fsec = 0;
          const std::vector<int8_t> fpacked =
              run_program(*fsim_dev, lowered.program, packed, out_bytes, fs, fsec);
          run.fsim.insns += fs.counters.insn_count;
          run.fsim.uops += fs.counters.gemm_counter + fs.counters.alu_counter;
          run.fsim.seconds += fsec;
          if (unpack_nchwnc(fpacked, p.n, p.oc, p.oh(), p.ow(), cfg.batch(), cfg.block_out()) !=
              got) {
            run.fsim.outputs_match_cycle = false;
            run.all_checked_ok = false;
            run.failures.push_back(
                fmt::format("{}: fsim and {} outputs differ", w->label, sim_kind));
          }
          if (fs.counters.gemm_counter != lr.stats.counters.gemm_counter ||
              fs.counters.alu_counter != lr.stats.counters.alu_counter) {
            run.all_checked_ok = false;
            run.failures.push_back(fmt::format(
                "{}: fsim and {} counters differ (GEMM {} vs {}, ALU {} vs {})", w->label,
                sim_kind, fs.counters.gemm_counter, lr.stats.counters.gemm_counter,
                fs.counters.alu_counter, lr.stats.counters.alu_counter));
          }
        } else {
          run.fsim.insns += lr.stats.counters.insn_count;
          run.fsim.uops += lr.stats.counters.gemm_counter + lr.stats.counters.alu_counter;
          run.fsim.seconds += lr.sim_seconds;
        }
      } else if (got != first_output) {
        run.all_checked_ok = false;
        run.failures.push_back(fmt::format("{}: outputs differ between configurations '{}' and '{}'",
                                           w->label, configs[0].title, configs[ci].title));
      }
      ConfigResult& cr = run.configs[ci];
      cr.sim_seconds += lr.sim_seconds;
      cr.sim_cycles += lr.stats.cycles;
      if (compile_ms >= 0) cr.compile_seconds += compile_ms / 1e3;
      if (std::string(w->label) == "C1") cr.c1_placement = "accelerator (layers-only: forced)";
      cr.layers.push_back(std::move(lr));
    }
  }
  return run;
}

// ---------------------------------------------------------------------------------------------
// Network mode.

struct NetworkRun {
  std::vector<ConfigResult> configs;
  FsimResult fsim;
  bool all_checked_ok = true;
  std::vector<std::string> failures;
  std::vector<compiler::PassTiming> pass_timings;  ///< of the first configuration's compile
  /// Signal-to-noise ratio (dB) of the first configuration's float32 output against the float
  /// model evaluated by compiler::ReferenceModel: 10*log10(sum ref^2 / sum (out - ref)^2);
  /// NaN when not measured (--no-check).
  double output_snr_db = std::nan("");
  bool argmax_matches_reference = false;
};

/// Fills run.output_snr_db / argmax_matches_reference: the float model on the CPU
/// (compiler::ReferenceModel) against the compiled model's first output.
void compare_with_reference(const std::string& model_path, const runtime::HostTensor& image,
                            const std::vector<runtime::HostTensor>& outputs, NetworkRun& run) {
  const compiler::ReferenceModel ref = compiler::ReferenceModel::load(model_path);
  const std::vector<runtime::HostTensor> expected = ref.run({image});
  if (expected.empty() || outputs.empty() || expected[0].dtype != runtime::DType::kF32 ||
      outputs[0].dtype != runtime::DType::kF32 || expected[0].bytes.size() != outputs[0].bytes.size()) {
    throw_internal_error("reference and compiled outputs differ in count, dtype or size");
  }
  const size_t n = expected[0].bytes.size() / sizeof(float);
  const float* r = expected[0].f32();
  const float* o = outputs[0].f32();
  double signal = 0, noise = 0;
  size_t arg_r = 0, arg_o = 0;
  for (size_t i = 0; i < n; ++i) {
    signal += static_cast<double>(r[i]) * r[i];
    noise += (static_cast<double>(o[i]) - r[i]) * (static_cast<double>(o[i]) - r[i]);
    if (r[i] > r[arg_r]) arg_r = i;
    if (o[i] > o[arg_o]) arg_o = i;
  }
  run.output_snr_db = noise > 0 ? 10.0 * std::log10(signal / noise) : INFINITY;
  run.argmax_matches_reference = arg_r == arg_o;
}

NetworkRun run_network(const std::string& model_path,
                       const std::vector<RunConfig>& configs,
                       const std::string& sim_kind, bool check) {
  NetworkRun run;
  const std::vector<int64_t> kInputShape = {1, 3, 224, 224};
  const runtime::HostTensor image = seeded_image(kInputShape);
  std::vector<runtime::HostTensor> first_outputs;
  std::optional<compiler::CompileResult> first_compiled;
  for (size_t ci = 0; ci < configs.size(); ++ci) {
    const std::string& title = configs[ci].title;
    const isa::HwConfig& cfg = configs[ci].cfg;
    ConfigResult cr;
    cr.title = title;
    cr.cfg = cfg;
    cr.sim_kind = sim_kind;
    cr.compiled = !configs[ci].reuse_first;
    compiler::CompileResult compiled;
    if (configs[ci].reuse_first) {
      compiled = *first_compiled;
      compiled.exe.config = cfg;
      for (isa::Program& prog : compiled.exe.programs) prog.config = cfg;
    } else {
      compiler::CompileOptions opts;
      opts.config = cfg;
      opts.offload = true;
      opts.calibration = {{image}};
      const auto t0 = Clock::now();
      compiled = compiler::compile_onnx(model_path, opts);
      cr.compile_seconds = seconds_since(t0);
    }
    if (ci == 0) first_compiled = compiled;
    if (ci == 0) run.pass_timings = compiled.pass_timings;
    const runtime::Executable& exe = compiled.exe;
    if (exe.inputs.size() != 1 || exe.tensors.at(static_cast<size_t>(exe.inputs[0])).shape !=
                                      kInputShape) {
      throw_user_error("model '{}': the ResNet-18 benchmark needs one float32 input of shape "
                       "[1, 3, 224, 224]; the model has {} inputs",
                       model_path, exe.inputs.size());
    }

    TimedDevice dev(runtime::Device::create(sim_kind, cfg, kDeviceDramBytes));
    runtime::ExecOptions eo;
    eo.measure_cpu = false;
    eo.check_accel = check;
    runtime::GraphExecutor exec(compiled.exe, dev, eo);
    dev.clear_timings();
    std::vector<runtime::HostTensor> outputs = exec.run({image});
    const std::vector<runtime::StepMeasurement>& ms = exec.measurements();
    const std::vector<double>& submit_s = dev.submit_seconds();
    // Accelerator steps submit once each, in step order: attribute the timings in that order.
    size_t accel_steps = 0;
    for (const runtime::StepMeasurement& m : ms) accel_steps += m.placement == runtime::Placement::kAccel;
    const bool per_step_times = submit_s.size() == accel_steps;
    std::map<int, double> step_seconds;
    size_t k = 0;
    for (size_t s = 0; s < ms.size(); ++s) {
      if (ms[s].placement != runtime::Placement::kAccel) {
        cr.network_cpu_seconds += ms[s].cpu_seconds;
        continue;
      }
      if (per_step_times) step_seconds[static_cast<int>(s)] = submit_s[k++];
      cr.network_cycles += ms[s].accel.cycles;
      cr.sim_cycles += ms[s].accel.cycles;
    }
    cr.sim_seconds = dev.total_seconds();
    cr.c1_placement = "not in the model";
    for (const compiler::LayerInfo& li : compiled.layers) {
      const std::string label = label_of(li);
      if (label == "C1") {
        cr.c1_placement = li.placement == runtime::Placement::kAccel ? "accelerator" : "cpu";
      }
      if (li.placement != runtime::Placement::kAccel) continue;
      if (li.step < 0 || static_cast<size_t>(li.step) >= ms.size()) {
        throw_internal_error("layer '{}' names step {} but the executable has {} steps", li.name,
                             li.step, ms.size());
      }
      LayerResult lr;
      lr.label = label;
      lr.name = li.name;
      lr.op = li.op;
      lr.weight = 1;
      lr.macs = li.macs;
      lr.ideal_gemm_uops = li.ideal_gemm_uops;
      lr.schedule = li.schedule;
      lr.stats = ms[static_cast<size_t>(li.step)].accel;
      auto it = step_seconds.find(li.step);
      lr.sim_seconds = it != step_seconds.end() ? it->second : -1;
      cr.layers.push_back(std::move(lr));
    }
    if (ci == 0) {
      first_outputs = outputs;
      if (check) compare_with_reference(model_path, image, outputs, run);
      if (sim_kind != "fsim") {
        TimedDevice fdev(runtime::Device::create("fsim", cfg, kDeviceDramBytes));
        runtime::GraphExecutor fexec(compiled.exe, fdev, eo);
        fdev.clear_timings();
        const std::vector<runtime::HostTensor> fout = fexec.run({image});
        for (const runtime::StepMeasurement& m : fexec.measurements()) {
          run.fsim.insns += m.accel.counters.insn_count;
          run.fsim.uops += m.accel.counters.gemm_counter + m.accel.counters.alu_counter;
        }
        run.fsim.seconds = fdev.total_seconds();
        run.fsim.compared = true;
        bool same = fout.size() == outputs.size();
        for (size_t i = 0; same && i < fout.size(); ++i) same = fout[i].bytes == outputs[i].bytes;
        run.fsim.outputs_match_cycle = same;
        if (!same) {
          run.all_checked_ok = false;
          run.failures.push_back(fmt::format("network outputs differ between fsim and {}", sim_kind));
        }
      } else {
        for (const runtime::StepMeasurement& m : ms) {
          run.fsim.insns += m.accel.counters.insn_count;
          run.fsim.uops += m.accel.counters.gemm_counter + m.accel.counters.alu_counter;
        }
        run.fsim.seconds = cr.sim_seconds;
      }
    } else {
      bool same = outputs.size() == first_outputs.size();
      for (size_t i = 0; same && i < outputs.size(); ++i) {
        same = outputs[i].bytes == first_outputs[i].bytes;
      }
      if (!same) {
        run.all_checked_ok = false;
        run.failures.push_back(fmt::format("network outputs differ between '{}' and '{}'",
                                           configs[0].title, title));
      }
    }
    run.configs.push_back(std::move(cr));
  }
  return run;
}

// ---------------------------------------------------------------------------------------------
// Reporting.

struct LabelSummary {
  std::string label;
  int count = 0;             ///< weight: instances (network) or workloads.md count (layers-only)
  int instances = 0;         ///< measured instances
  uint64_t cycles = 0;       ///< summed over measured instances
  int64_t ideal = 0;
  uint64_t gemm = 0, alu = 0, dram = 0;
  uint64_t weighted_cycles = 0;
};

std::vector<LabelSummary> summarise(const ConfigResult& cr) {
  std::vector<LabelSummary> out;
  for (const Workload& w : kWorkloads) {
    LabelSummary s;
    s.label = w.label;
    for (const LayerResult& lr : cr.layers) {
      if (lr.label != w.label) continue;
      s.count += lr.weight;
      s.instances += 1;
      s.cycles += lr.stats.cycles;
      s.ideal += lr.ideal_gemm_uops;
      s.gemm += lr.stats.counters.gemm_counter;
      s.alu += lr.stats.counters.alu_counter;
      s.dram += lr.dram_bytes();
      s.weighted_cycles += lr.stats.cycles * static_cast<uint64_t>(lr.weight);
    }
    if (s.instances > 0) out.push_back(s);
  }
  return out;
}

struct Totals {
  uint64_t cycles = 0;
  int64_t ideal = 0;
  uint64_t gemm = 0, alu = 0, dram = 0;
  /// Every label of C2..C12 present with exactly its workloads.md count, so the totals are
  /// comparable with the ideal 6,623,232 uops and VTA's 7,729,601 cycles.
  bool complete = false;
};

Totals vta_set_totals(const ConfigResult& cr) {
  Totals t;
  std::map<std::string, int> weight_of;
  for (const LayerResult& lr : cr.layers) {
    if (!in_vta_set(lr.label)) continue;
    const uint64_t w = static_cast<uint64_t>(lr.weight);
    weight_of[lr.label] += lr.weight;
    t.cycles += lr.stats.cycles * w;
    t.ideal += lr.ideal_gemm_uops * lr.weight;
    t.gemm += lr.stats.counters.gemm_counter * w;
    t.alu += lr.stats.counters.alu_counter * w;
    t.dram += lr.dram_bytes() * w;
  }
  t.complete = true;
  for (const Workload& w : kWorkloads) {
    if (!in_vta_set(w.label) || w.count == 0) continue;
    auto it = weight_of.find(w.label);
    if (it == weight_of.end() || it->second != w.count) t.complete = false;
  }
  return t;
}

/// A cycle figure for the tables: "-" when the simulator does not count cycles (fsim).
std::string fmt_cycles(uint64_t v, bool have_cycles) {
  return have_cycles ? fmt_int(v) : std::string("-");
}

void print_config(const ConfigResult& cr, bool network_mode, bool have_cycles) {
  fmt::print("\n== {}: config {}, DRAM_LATENCY={} cycles, bus {} bits, simulator {} ==\n",
             cr.title, cr.cfg.name(), cr.cfg.dram_latency, cr.cfg.bus_width_bits(), cr.sim_kind);
  const std::string cyc_hdr = "cycles";
  if (network_mode) {
    fmt::print("{:<6} {:<22} {:>12} {:>12} {:>8} {:>12} {:>10} {:>12} {:>9}\n", "label", "layer",
               cyc_hdr, "ideal_uops", "cyc/ideal", "gemm_uops", "alu_uops", "dram_bytes",
               "sim_s");
    for (const LayerResult& lr : cr.layers) {
      fmt::print("{:<6} {:<22} {:>12} {:>12} {:>8} {:>12} {:>10} {:>12} {:>9}\n",
                 lr.label.empty() ? "-" : lr.label, lr.name,
                 fmt_cycles(lr.stats.cycles, have_cycles),
                 fmt_int(static_cast<uint64_t>(lr.ideal_gemm_uops)),
                 have_cycles ? fmt_ratio(static_cast<double>(lr.stats.cycles),
                                         static_cast<double>(lr.ideal_gemm_uops))
                             : std::string("-"),
                 fmt_int(lr.stats.counters.gemm_counter), fmt_int(lr.stats.counters.alu_counter),
                 fmt_int(lr.dram_bytes()),
                 lr.sim_seconds >= 0 ? fmt::format("{:.3f}", lr.sim_seconds) : "-");
    }
    fmt::print("\nper label (cycles etc. per instance; 'x count' = summed over instances)\n");
  }
  fmt::print("{:<6} {:>5} {:>12} {:>12} {:>8} {:>12} {:>10} {:>12} {:>14}{}\n", "label", "count",
             cyc_hdr, "ideal_uops", "cyc/ideal", "gemm_uops", "alu_uops", "dram_bytes",
             "cycles x count", network_mode ? "" : "   compile_ms");
  for (const LabelSummary& s : summarise(cr)) {
    const uint64_t inst = static_cast<uint64_t>(s.instances);
    std::string compile;
    if (!network_mode) {
      for (const LayerResult& lr : cr.layers) {
        if (lr.label != s.label) continue;
        compile = lr.compile_ms >= 0 ? fmt::format("   {:>10.1f}", lr.compile_ms)
                                     : fmt::format("   {:>10}", "reused");
      }
    }
    fmt::print("{:<6} {:>5} {:>12} {:>12} {:>8} {:>12} {:>10} {:>12} {:>14}{}\n", s.label, s.count,
               fmt_cycles(s.cycles / inst, have_cycles),
               fmt_int(static_cast<uint64_t>(s.ideal) / inst),
               have_cycles ? fmt_ratio(static_cast<double>(s.cycles), static_cast<double>(s.ideal))
                           : std::string("-"),
               fmt_int(s.gemm / inst), fmt_int(s.alu / inst), fmt_int(s.dram / inst),
               fmt_cycles(s.weighted_cycles, have_cycles), compile);
  }
  const Totals t = vta_set_totals(cr);
  fmt::print("\nC2..C12 weighted by count (VTA's offloaded set){}:\n",
             t.complete ? "" : "; PARTIAL: only the labels measured above");
  fmt::print("  cycles                      {:>14}\n", fmt_cycles(t.cycles, have_cycles));
  fmt::print("  ideal GEMM uops (measured)  {:>14}   (workloads.md: {})\n",
             fmt_int(static_cast<uint64_t>(t.ideal)), fmt_int(kIdealOffloadedUops));
  fmt::print("  GEMM uops issued            {:>14}\n", fmt_int(t.gemm));
  fmt::print("  ALU uops                    {:>14}\n", fmt_int(t.alu));
  fmt::print("  DRAM bytes                  {:>14}\n", fmt_int(t.dram));
  if (have_cycles) {
    fmt::print("  cycles / ideal (measured)   {:>14}\n",
               fmt_ratio(static_cast<double>(t.cycles), static_cast<double>(t.ideal)));
  }
  if (have_cycles && t.complete) {
    fmt::print("  cycles / ideal 6,623,232    {:>14}\n",
               fmt_ratio(static_cast<double>(t.cycles), static_cast<double>(kIdealOffloadedUops)));
    fmt::print("  cycles / VTA tsim 7,729,601 {:>14}\n",
               fmt_ratio(static_cast<double>(t.cycles), static_cast<double>(kVtaTsimCycles)));
  }
  if (network_mode) {
    fmt::print("whole network: accelerator cycles {} (all offloaded steps), CPU steps {:.3f} s; "
               "C1 placed on: {}\n",
               fmt_int(cr.network_cycles), cr.network_cpu_seconds, cr.c1_placement);
  } else {
    fmt::print("C1: {}\n", cr.c1_placement);
  }
  if (have_cycles) {
    fmt::print("simulator: {} cycles in {:.3f} s of simulation = {} simulated cycles/s\n",
               fmt_int(cr.sim_cycles), cr.sim_seconds,
               cr.sim_seconds > 0 ? fmt_int(static_cast<uint64_t>(cr.sim_cycles / cr.sim_seconds))
                                  : std::string("-"));
  }
  if (cr.compiled) {
    fmt::print("compile: {:.3f} s\n", cr.compile_seconds);
  } else {
    fmt::print("compile: none (the Programs of the first configuration)\n");
  }
}

/// Appends a failure for every workload layer whose ideal GEMM uops (reported by the backend)
/// differ from workloads.md's "GEMM uops (1x16x16)" column (valid for BLOCK 16, BATCH 1).
void check_ideal_uops(const std::vector<ConfigResult>& results, std::vector<std::string>& failures) {
  for (const ConfigResult& cr : results) {
    if (cr.cfg.block_in() != 16 || cr.cfg.block_out() != 16 || cr.cfg.batch() != 1) continue;
    for (const LayerResult& lr : cr.layers) {
      const Workload* w = lr.label.empty() ? nullptr : find_workload(lr.label);
      if (w && lr.ideal_gemm_uops != w->table_gemm_uops) {
        failures.push_back(fmt::format("{} ({}): the backend reports {} ideal GEMM uops, "
                                       "workloads.md {}",
                                       lr.name, lr.label, lr.ideal_gemm_uops, w->table_gemm_uops));
      }
    }
  }
}

nlohmann::json to_json(const ConfigResult& cr, bool network_mode, bool have_cycles) {
  nlohmann::json j;
  j["title"] = cr.title;
  j["config_name"] = cr.cfg.name();
  j["config"] = nlohmann::json::parse(cr.cfg.to_json());
  j["simulator"] = cr.sim_kind;
  j["c1_placement"] = cr.c1_placement;
  nlohmann::json layers = nlohmann::json::array();
  for (const LayerResult& lr : cr.layers) {
    nlohmann::json l;
    l["label"] = lr.label;
    l["name"] = lr.name;
    l["op"] = lr.op;
    l["weight"] = lr.weight;
    l["macs"] = lr.macs;
    l["ideal_gemm_uops"] = lr.ideal_gemm_uops;
    l["cycles"] = lr.stats.cycles;
    l["gemm_uops"] = lr.stats.counters.gemm_counter;
    l["alu_uops"] = lr.stats.counters.alu_counter;
    l["insns"] = lr.stats.counters.insn_count;
    l["dram_bytes"] = lr.dram_bytes();
    l["inp_load_nbytes"] = lr.stats.counters.inp_load_nbytes;
    l["wgt_load_nbytes"] = lr.stats.counters.wgt_load_nbytes;
    l["acc_load_nbytes"] = lr.stats.counters.acc_load_nbytes;
    l["uop_load_nbytes"] = lr.stats.counters.uop_load_nbytes;
    l["out_store_nbytes"] = lr.stats.counters.out_store_nbytes;
    l["sim_seconds"] = lr.sim_seconds;
    if (lr.compile_ms >= 0) l["compile_ms"] = lr.compile_ms;
    l["schedule"] = lr.schedule;
    layers.push_back(l);
  }
  j["layers"] = layers;
  const Totals t = vta_set_totals(cr);
  nlohmann::json tj;
  tj["cycles"] = t.cycles;
  tj["ideal_gemm_uops"] = t.ideal;
  tj["gemm_uops"] = t.gemm;
  tj["alu_uops"] = t.alu;
  tj["dram_bytes"] = t.dram;
  tj["ideal_reference"] = kIdealOffloadedUops;
  tj["vta_tsim_cycles"] = kVtaTsimCycles;
  tj["complete"] = t.complete;
  if (have_cycles && t.ideal > 0) {
    tj["cycles_over_measured_ideal"] = static_cast<double>(t.cycles) / static_cast<double>(t.ideal);
  }
  if (have_cycles && t.complete) {
    tj["cycles_over_ideal"] = static_cast<double>(t.cycles) / kIdealOffloadedUops;
    tj["cycles_over_vta"] = static_cast<double>(t.cycles) / kVtaTsimCycles;
  }
  j["c2_c12_weighted"] = tj;
  if (network_mode) {
    j["network_accel_cycles"] = cr.network_cycles;
    j["network_cpu_seconds"] = cr.network_cpu_seconds;
  }
  j["sim_cycles"] = cr.sim_cycles;
  j["sim_seconds"] = cr.sim_seconds;
  j["simulated_cycles_per_second"] =
      cr.sim_seconds > 0 ? static_cast<double>(cr.sim_cycles) / cr.sim_seconds : 0.0;
  j["compile_seconds"] = cr.compile_seconds;
  j["compiled"] = cr.compiled;
  return j;
}


/// Parses the command line (prints --help and returns 0; throws CLI::ParseError for usage
/// errors) and runs the benchmark. Returns 0 when every check passed, 1 otherwise.
int run_main(int argc, char** argv) {
  CLI::App app{
      "ResNet-18 v1 on Tessel's accelerator simulators, per layer, against VTA's benchmark set "
      "(workloads.md, original labels C1..C12) and VTA's published 7,729,601 tsim cycles"};
  std::string model_path = TESSEL_BENCH_DEFAULT_MODEL;
  std::string config_path;
  std::string sim_kind = "cycle";
  std::string json_path;
  std::string only;
  bool layers_only = false;
  bool no_check = false;
  bool no_zero_latency = false;
  app.add_option("--model", model_path, "float ResNet-18 ONNX model (network mode)")
      ->capture_default_str();
  app.add_option("--config", config_path, "hardware config JSON (VTA keys); default: VTA's default");
  app.add_option("--sim", sim_kind, "simulator: cycle or fsim")->capture_default_str();
  app.add_option("--json", json_path, "also write the results as JSON to this file");
  app.add_flag("--layers-only", layers_only,
               "lower the workload layers directly (lower_conv2d) instead of compiling the model");
  app.add_option("--only", only,
                 "layers-only: comma-separated labels to run (default C2..C12, i.e. C2,C3,...)");
  app.add_flag("--no-check", no_check, "skip the bit-exact output checks");
  app.add_flag("--no-zero-latency", no_zero_latency,
               "do not add the DRAM_LATENCY=0 configuration");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);  // prints the help, exit 0
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  }
  // Option values are usage errors (exit 2), as CLI11's own checks.
  const std::vector<std::string> kinds = runtime::Device::kinds();
  if (std::find(kinds.begin(), kinds.end(), sim_kind) == kinds.end()) {
    throw CLI::ValidationError(
        fmt::format("unknown simulator '{}': this build has {}", sim_kind, fmt::join(kinds, ", ")));
  }
  if (!only.empty() && !layers_only) {
    throw CLI::ValidationError(fmt::format("--only '{}' needs --layers-only", only));
  }
  isa::HwConfig cfg;
  if (!config_path.empty()) cfg = isa::HwConfig::from_file(config_path);
  cfg.validate();
  check_writable(json_path, "--json");
  std::vector<RunConfig> configs;
  configs.push_back({config_path.empty() ? "default config" : "config " + config_path, cfg, false});
  const bool have_cycles = sim_kind != "fsim";  // cycle and rtl count cycles
  if (have_cycles && !no_zero_latency && cfg.dram_latency != 0) {
    isa::HwConfig zero = cfg;
    zero.dram_latency = 0;
    zero.validate();
    configs.push_back({"zero-latency DRAM (VTA tsim's idealised memory), compiled for it", zero,
                       false});
    configs.push_back({"zero-latency DRAM, running the Programs compiled for the first config",
                       zero, true});
  }

  std::vector<ConfigResult> results;
  FsimResult fsim;
  bool ok = true;
  std::vector<std::string> failures;
  nlohmann::json extra = nlohmann::json::object();
  std::string reference_line;
  std::vector<const Workload*> selected;
  if (layers_only && only.empty()) {
    for (const Workload& w : kWorkloads) {
      if (std::string(w.label) != "C1") selected.push_back(&w);
    }
  } else if (layers_only) {
    size_t pos = 0;
    while (pos <= only.size()) {
      const size_t comma = std::min(only.find(',', pos), only.size());
      const std::string label = only.substr(pos, comma - pos);
      const Workload* w = find_workload(label);
      if (!w) {
        throw CLI::ValidationError(fmt::format("unknown layer label '{}' in --only: expected C1..C12", label));
      }
      if (std::find(selected.begin(), selected.end(), w) == selected.end()) selected.push_back(w);
      pos = comma + 1;
    }
  }

  fmt::print("Tessel ResNet-18 v1 benchmark ({} mode, simulator {})\n",
             layers_only ? "layers-only" : "network", sim_kind);
  fmt::print("Labels: the ORIGINAL C1..C12 of apache/tvm v0.5 test_benchmark_topi_conv2d.py "
             "(workloads.md), matched by shape; C3 does not occur in ResNet-18.\n");

  if (layers_only) {
    LayersOnlyRun r = run_layers_only(selected, configs, sim_kind, !no_check);
    results = std::move(r.configs);
    fsim = r.fsim;
    ok = r.all_checked_ok;
    failures = std::move(r.failures);
  } else {
    NetworkRun r = run_network(model_path, configs, sim_kind, !no_check);
    results = std::move(r.configs);
    fsim = r.fsim;
    ok = r.all_checked_ok;
    failures = std::move(r.failures);
    if (!std::isnan(r.output_snr_db)) {
      reference_line = fmt::format(
          "int8 network output vs the float model (ReferenceModel, same input): SNR {:.1f} dB, "
          "argmax {}\n",
          r.output_snr_db, r.argmax_matches_reference ? "equal" : "different");
      extra["output_snr_db"] = r.output_snr_db;
      extra["argmax_matches_reference"] = r.argmax_matches_reference;
    }
    nlohmann::json passes = nlohmann::json::array();
    for (const compiler::PassTiming& p : r.pass_timings) {
      passes.push_back({{"pass", p.pass}, {"ms", p.ms}});
    }
    extra["pass_timings"] = passes;
  }

  {
    const size_t before = failures.size();
    check_ideal_uops(results, failures);
    if (failures.size() != before) ok = false;
  }
  for (const ConfigResult& cr : results) print_config(cr, !layers_only, have_cycles);
  if (have_cycles) {
    fmt::print("\nsummary, C2..C12 weighted by count{}:\n",
               vta_set_totals(results[0]).complete ? "" : " (PARTIAL set)");
    const Totals a = vta_set_totals(results[0]);
    for (const ConfigResult& cr : results) {
      const Totals t = vta_set_totals(cr);
      fmt::print("  {:>12} cycles  x{} of the first config", fmt_int(t.cycles),
                 fmt_ratio(static_cast<double>(t.cycles), static_cast<double>(a.cycles)));
      if (t.complete) {
        fmt::print(", x{} of ideal 6,623,232, x{} of VTA tsim 7,729,601",
                   fmt_ratio(static_cast<double>(t.cycles), static_cast<double>(kIdealOffloadedUops)),
                   fmt_ratio(static_cast<double>(t.cycles), static_cast<double>(kVtaTsimCycles)));
      }
      fmt::print("  [{}]\n", cr.title);
    }
  }
  double total_sim_s = 0;
  uint64_t total_cycles = 0;
  for (const ConfigResult& cr : results) {
    total_sim_s += cr.sim_seconds;
    total_cycles += cr.sim_cycles;
  }
  if (have_cycles) {
    fmt::print("{} simulator speed: {} simulated cycles in {:.3f} s = {} cycles/s\n", sim_kind,
               fmt_int(total_cycles), total_sim_s,
               total_sim_s > 0 ? fmt_int(static_cast<uint64_t>(total_cycles / total_sim_s))
                               : std::string("-"));
  }
  fmt::print("fsim speed: {} instructions ({} GEMM+ALU uops) in {:.3f} s = {} instructions/s, {} "
             "uops/s{}\n",
             fmt_int(fsim.insns), fmt_int(fsim.uops), fsim.seconds,
             fsim.seconds > 0 ? fmt_int(static_cast<uint64_t>(fsim.insns / fsim.seconds))
                              : std::string("-"),
             fsim.seconds > 0 ? fmt_int(static_cast<uint64_t>(fsim.uops / fsim.seconds))
                              : std::string("-"),
             fsim.compared ? (fsim.outputs_match_cycle
                                  ? fmt::format("; fsim outputs == {} outputs", sim_kind)
                                  : fmt::format("; fsim outputs DIFFER from {}", sim_kind))
                           : std::string());
  if (!no_check) {
    fmt::print("checks ({}, fsim vs {}, across configurations, ideal uops vs workloads.md): "
               "{}\n",
               layers_only ? "every layer bit-exact vs qconv2d_reference"
                           : "every accelerator step bit-exact vs its CPU kernel",
               sim_kind, ok ? "passed" : "FAILED");
  }
  fmt::print("{}", reference_line);
  for (const std::string& f : failures) fmt::print(stderr, "error: {}\n", f);

  if (!json_path.empty()) {
    nlohmann::json j;
    j["benchmark"] = "resnet18_v1";
    j["mode"] = layers_only ? "layers-only" : "network";
    j["labels"] = "original C1..C12 (apache/tvm v0.5 test_benchmark_topi_conv2d.py)";
    if (!layers_only) j["model"] = model_path;
    j["simulator"] = sim_kind;
    nlohmann::json runs = nlohmann::json::array();
    for (const ConfigResult& cr : results) runs.push_back(to_json(cr, !layers_only, have_cycles));
    j["runs"] = runs;
    j["fsim"] = {{"insns", fsim.insns},
                 {"uops", fsim.uops},
                 {"seconds", fsim.seconds},
                 {"uops_per_second",
                  fsim.seconds > 0 ? static_cast<double>(fsim.uops) / fsim.seconds : 0.0},
                 {"insns_per_second",
                  fsim.seconds > 0 ? static_cast<double>(fsim.insns) / fsim.seconds : 0.0},
                 {"outputs_match_cycle", fsim.compared ? nlohmann::json(fsim.outputs_match_cycle)
                                                       : nlohmann::json(nullptr)}};
    j["checked"] = !no_check;
    j["check_ok"] = ok;
    for (auto& [key, value] : extra.items()) j[key] = value;
    tessel::support::write_file_atomic(json_path, j.dump(2) + "\n");
  }
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace tessel::bench

int main(int argc, char** argv) {
  return tessel::bench::run_bench_main(argc, argv, tessel::bench::run_main);
}
