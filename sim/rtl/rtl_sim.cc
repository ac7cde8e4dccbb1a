// The RTL simulator: static checks (the functional simulator on a scratch copy of the DRAM the
// stream reads), then the Verilated tessel_top of the configuration clocked by one SystemC thread
// against the AXI DRAM slave (rtl_bench.h, axi_slave.h). See docs/rtl-sim.md.
#include "sim/rtl/rtl_sim.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include <systemc>

#include "isa/program.h"
#include "isa/spec.h"
#include "isa/timing.h"
#include "sim/common/queues.h"
#include "sim/common/systemc_models.h"
#include "sim/fsim/fsim.h"
#include "sim/rtl/rtl_bench.h"
#include "sim/rtl/rtl_model.h"
#include "support/atomic_file.h"
#include "support/text.h"

namespace tessel::sim {

namespace rtl {
namespace {

// Verilator's FST writer (libfst) keeps its value tables in memory-mapped scratch files next to
// the waveform; when the filesystem fills up, a store into such a page raises SIGBUS, which
// would kill the process with no message. While a waveform is written, SIGBUS is turned into the
// same outcome as any failed write: the temporary files are removed (the previous waveform is
// untouched: it is replaced only by commit_temp_file), one "error:" line names the file, and
// the process exits with status 1. Only async-signal-safe calls (unlink, write, _exit) run in
// the handler; its strings are prepared before the run.
class WaveBusErrorGuard {
 public:
  WaveBusErrorGuard(const std::string& temp, const std::string& target) {
    copy(temp, temp_);
    copy(temp + ".hier", hier_);
    const std::string msg = fmt::format(
        "error: cannot write {}: the filesystem holding it is full (a write into the waveform's "
        "memory-mapped scratch file failed: SIGBUS); the previous file is unchanged\n",
        support::quote(target));
    copy(msg, msg_);
    struct sigaction sa {};
    sa.sa_handler = &WaveBusErrorGuard::on_bus_error;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, &previous_);
  }
  ~WaveBusErrorGuard() { ::sigaction(SIGBUS, &previous_, nullptr); }
  WaveBusErrorGuard(const WaveBusErrorGuard&) = delete;
  WaveBusErrorGuard& operator=(const WaveBusErrorGuard&) = delete;

 private:
  static void copy(const std::string& from, char* to) {
    const size_t n = std::min(from.size(), kMax - 1);
    std::memcpy(to, from.data(), n);
    to[n] = '\0';
  }
  static void on_bus_error(int) {
    ::unlink(temp_);
    ::unlink(hier_);
    const ssize_t ignored = ::write(2, msg_, std::strlen(msg_));
    (void)ignored;
    ::_exit(1);
  }
  static constexpr size_t kMax = 8192;
  static inline char temp_[kMax] = {};
  static inline char hier_[kMax] = {};
  static inline char msg_[kMax] = {};
  struct sigaction previous_ {};
};

/// Cycles the SystemC thread runs natively between two waits (simulated time advances by the
/// same number of raw sc_time units, one per cycle).
constexpr uint64_t kCyclesPerWait = 1 << 14;
/// Stack of the SystemC thread that evaluates the Verilated model.
constexpr std::size_t kThreadStackBytes = std::size_t(16) << 20;
/// The no-progress window: cycles without any dbg pulse or bus activity (beyond the known quiet
/// time of the running instructions) before a run is declared stuck; DRAM latency is added.
constexpr uint64_t kWatchdogCycles = 1 << 16;

/// One run handed to the SystemC thread.
struct Job {
  RtlModel* model = nullptr;
  Bench* bench = nullptr;
  LaunchArgs launch;
  bool finished = false;
  std::exception_ptr error;
};

/// The SystemC side: one thread that runs whichever job the host installs. Configuration-
/// agnostic, built once per process at elaboration (systemc_models.h).
class RtlDriver : public sc_core::sc_module {
 public:
  explicit RtlDriver(sc_core::sc_module_name name) : sc_module(name) {
    SC_HAS_PROCESS(RtlDriver);
    SC_THREAD(main);
    set_stack_size(kThreadStackBytes);
  }
  Job* job = nullptr;
  sc_core::sc_event start;

 private:
  void main() {
    for (;;) {
      wait(start);
      Job& j = *job;
      try {
        j.model->reset_and_launch(j.launch);
        while (!j.model->run(*j.bench, kCyclesPerWait)) {
          wait(sc_core::sc_time::from_value(kCyclesPerWait));
        }
      } catch (...) {
        j.error = std::current_exception();
      }
      j.finished = true;
    }
  }
};

RtlDriver* g_driver = nullptr;

void construct_driver() {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  g_driver = new RtlDriver("tessel_rtl");
}

void start_kernel() {
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_DO_NOTHING);
  const SanitizerStackRestore restore_stack;
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
}

const SystemcModelRegistration kRegistration("rtl", &construct_driver);

/// The build's configuration with the run-time keys (DRAM_LATENCY, CLOCK_MHZ, queue depths)
/// taken from `cfg`, for comparing the build-time keys.
isa::HwConfig with_runtime_keys(isa::HwConfig built, const isa::HwConfig& cfg) {
  built.dram_latency = cfg.dram_latency;
  built.clock_mhz = cfg.clock_mhz;
  built.cmd_queue_depth = cfg.cmd_queue_depth;
  built.token_queue_depth = cfg.token_queue_depth;
  return built;
}

struct Built {
  const RtlBuild* build;
  isa::HwConfig cfg;
};

const std::vector<Built>& built_configs() {
  static const std::vector<Built> kBuilt = [] {
    std::vector<Built> v;
    for (const RtlBuild& b : rtl_builds()) v.push_back({&b, isa::HwConfig::from_json(b.config_json)});
    return v;
  }();
  return kBuilt;
}

const Built* find_build(const isa::HwConfig& cfg) {
  for (const Built& b : built_configs()) {
    if (with_runtime_keys(b.cfg, cfg) == cfg) return &b;
  }
  return nullptr;
}

std::string built_list() {
  std::vector<std::string> v;
  for (const Built& b : built_configs()) v.push_back(fmt::format("{} ({})", b.build->id, b.cfg.label()));
  if (v.empty()) return "none";
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s;
}

/// Marks and copies the 4 KiB pages of [addr, addr + n) (clipped to the DRAM) from `src` to
/// `dst` once.
class PageCopier {
 public:
  PageCopier(const Dram& src, Dram& dst)
      : src_(src), dst_(dst), copied_((src.size() + kPage - 1) / kPage, false) {}
  void copy(uint64_t addr, uint64_t n) {
    if (n == 0 || addr >= src_.size()) return;
    const uint64_t end = std::min(src_.size(), addr + std::min(n, src_.size()));
    for (uint64_t p = addr / kPage; p * kPage < end; ++p) {
      if (copied_[p]) continue;
      copied_[p] = true;
      const uint64_t first = p * kPage;
      const uint64_t bytes = std::min(kPage, src_.size() - first);
      std::copy_n(src_.data() + first, bytes, dst_.data() + first);
    }
  }

 private:
  static constexpr uint64_t kPage = 4096;
  const Dram& src_;
  Dram& dst_;
  std::vector<bool> copied_;
};


class RtlSimulatorImpl final : public RtlSimulator {
 public:
  RtlSimulatorImpl(const isa::HwConfig& cfg, const RtlSimOptions& options, const RtlBuild& build)
      : cfg_(cfg),
        options_(options),
        spec_(cfg_),
        shadow_(cfg_),
        model_(build.make()) {
    if (options_.cycle_limit == 0) {
      throw UserError("rtl simulator: cycle limit 0 leaves no cycle to run; use at least 1");
    }
    if (!options_.wave_path.empty()) {
      const std::string& p = options_.wave_path;
      if (!rtl_waves_built()) {
        throw UserError(fmt::format(
            "rtl simulator: cannot write waveform '{}': this build has no waveform support "
            "(configure with TESSEL_RTL_WAVES=ON)",
            p));
      }
      if (p.size() < 4 || p.compare(p.size() - 4, 4, ".fst") != 0) {
        throw UserError(fmt::format(
            "rtl simulator: waveform '{}' must be an .fst file (the RTL is built with FST "
            "tracing; gtkwave reads FST)",
            p));
      }
      if (options_.wave_first_cycle > options_.wave_last_cycle) {
        throw UserError(fmt::format("rtl simulator: waveform window {}:{} is empty (first > last)",
                                    options_.wave_first_cycle, options_.wave_last_cycle));
      }
    }
  }

  RunStats run(Dram& dram, uint64_t insn_addr, uint32_t insn_count) override {
    trace_.clear();
    if (insn_addr % 16 != 0) {
      throw SimError(fmt::format("rtl simulator: instruction address {} is not 16-byte aligned",
                                 insn_addr));
    }
    if (insn_count == 0) {
      throw SimError("rtl simulator: instruction count 0: a stream needs at least a finish");
    }
    check_insn_stream(dram, insn_addr, insn_count);
    RunStats stats;
    stats.counters = static_checks(dram, insn_addr, insn_count);
    const DecodedStream stream = decode(dram, insn_addr, insn_count);

    BenchLimits limits;
    limits.cycle_limit = options_.cycle_limit;
    limits.watchdog_window = kWatchdogCycles + 2 * uint64_t(cfg_.dram_latency);
    limits.wave_first = options_.wave_first_cycle;
    limits.wave_last = options_.wave_last_cycle;
    Bench bench(dram, cfg_.bus_bytes(), uint64_t(cfg_.dram_latency), stream, limits,
                options_.record_trace);

    Job job;
    job.model = model_.get();
    job.bench = &bench;
    job.launch.insn_base = insn_addr;
    job.launch.insn_count = insn_count;
    job.launch.cmd_queue_limit = uint32_t(cfg_.cmd_queue_depth);
    job.launch.token_queue_limit = uint32_t(cfg_.token_queue_depth);
    {
      std::lock_guard<std::mutex> lock(systemc_kernel_mutex());
      elaborate_systemc_models(&start_kernel);
      if (!g_driver) {
        throw_internal_error("the rtl SystemC driver was not elaborated (another SystemC model "
                             "started the kernel without sim/common/systemc_models.h)");
      }
      // The waveform goes to a temporary file next to --wave and replaces it only once closed,
      // so a failed write never destroys an earlier waveform (support/atomic_file.h).
      std::string wave_temp;
      std::unique_ptr<WaveBusErrorGuard> bus_guard;
      if (!options_.wave_path.empty()) {
        wave_temp = support::reserve_temp_file(options_.wave_path);
        bus_guard = std::make_unique<WaveBusErrorGuard>(wave_temp, options_.wave_path);
        model_->open_wave(wave_temp);
      }
      g_driver->job = &job;
      g_driver->start.notify(sc_core::SC_ZERO_TIME);
      try {
        const SanitizerStackRestore restore_stack;
        sc_core::sc_start();
      } catch (const sc_core::sc_report& r) {
        g_driver->job = nullptr;
        model_->close_wave();
        if (!wave_temp.empty()) support::discard_temp_file(wave_temp);
        throw_internal_error("the SystemC kernel failed during an rtl run: {}", r.what());
      }
      g_driver->job = nullptr;
      model_->close_wave();
      bus_guard.reset();
      // Kept also when the run failed: the waveform is how such a run is debugged.
      if (!wave_temp.empty()) support::commit_temp_file(wave_temp, options_.wave_path);
    }
    if (!job.finished) throw_internal_error("rtl run ended without its SystemC thread finishing");
    if (options_.record_trace) trace_ = bench.timeline();
    if (job.error) std::rethrow_exception(job.error);

    stats.cycles = bench.cycles();
    stats.fetch.insns = bench.dispatched();
    stats.load.insns = bench.done_count(isa::Module::kLoad);
    stats.compute.insns = bench.done_count(isa::Module::kCompute);
    stats.store.insns = bench.done_count(isa::Module::kStore);
    return stats;
  }

  const std::vector<InsnTiming>& trace() const override { return trace_; }

 private:
  /// The static checks: the functional simulator runs the stream on a scratch DRAM holding the
  /// stream and every byte its LOADs read (pages copied from `dram`), so an illegal stream
  /// fails with fsim's SimError before the RTL runs (the RTL has no range checks). Returns the
  /// run's counters (VTA's, as fsim counts them).
  Counters static_checks(const Dram& dram, uint64_t insn_addr, uint32_t insn_count) {
    Dram scratch(dram.size());
    PageCopier pages(dram, scratch);
    pages.copy(insn_addr, uint64_t(insn_count) * 16);
    for (uint32_t i = 0; i < insn_count; ++i) {
      isa::Instruction insn;
      try {
        insn = spec_.decode(isa::IsaSpec::from_bytes(dram.data() + insn_addr + uint64_t(i) * 16));
      } catch (const UserError&) {
        break;  // fsim reports it
      }
      if (insn.opcode == isa::Opcode::kFinish) break;
      if (insn.opcode != isa::Opcode::kLoad || insn.x_size == 0) continue;
      if (uint8_t(insn.mem_type) > uint8_t(isa::MemType::kAcc8)) continue;  // fsim reports it
      for (uint32_t r = 0; r < insn.y_size; ++r) {
        const isa::DramRow row = isa::dram_row(cfg_, insn, r);
        pages.copy(row.first, row.end - row.first);
      }
    }
    return shadow_.run(scratch, insn_addr, insn_count).counters;
  }

  /// The stream up to FINISH, decoded (the static checks passed, so it decodes).
  DecodedStream decode(const Dram& dram, uint64_t insn_addr, uint32_t insn_count) const {
    DecodedStream s;
    for (uint32_t i = 0; i < insn_count; ++i) {
      const isa::Instruction insn =
          spec_.decode(isa::IsaSpec::from_bytes(dram.data() + insn_addr + uint64_t(i) * 16));
      s.by_module[size_t(insn.module())].push_back(i);
      uint64_t quiet = 0;
      if (insn.opcode == isa::Opcode::kGemm || insn.opcode == isa::Opcode::kAlu) {
        // n uops + the pipeline to write-back (docs/microarchitecture.md section 5.3)
        quiet = isa::loop_uops(insn) + isa::timing::kComputePipelineDepth;
      } else if (insn.opcode == isa::Opcode::kLoad) {
        quiet = (uint64_t(insn.y_pad_0) + insn.y_size + insn.y_pad_1) *
                (uint64_t(insn.x_pad_0) + insn.x_size + insn.x_pad_1);
      }
      s.quiet_cycles.push_back(quiet);
      s.insns.push_back(insn);
      if (insn.opcode == isa::Opcode::kFinish) break;
    }
    return s;
  }

  isa::HwConfig cfg_;
  RtlSimOptions options_;
  isa::IsaSpec spec_;
  FunctionalSimulator shadow_;
  std::unique_ptr<RtlModel> model_;
  std::vector<InsnTiming> trace_;
};

}  // namespace
}  // namespace rtl

std::unique_ptr<RtlSimulator> make_rtl_sim(const isa::HwConfig& cfg, const RtlSimOptions& options) {
  cfg.validate();
  const rtl::Built* b = rtl::find_build(cfg);
  if (!b) {
    throw UserError(fmt::format(
        "rtl simulator: no RTL model was built for config {}; built: {} (add the configuration's "
        "JSON file to the CMake list TESSEL_RTL_CONFIGS and rebuild)",
        cfg.label(), rtl::built_list()));
  }
  if (cfg.cmd_queue_depth > b->cfg.cmd_queue_depth ||
      cfg.token_queue_depth > b->cfg.token_queue_depth) {
    throw UserError(fmt::format(
        "rtl simulator: CMD_QUEUE_DEPTH {} / TOKEN_QUEUE_DEPTH {} exceed the RTL built for {} "
        "(at most {} / {}; rebuild with deeper queues in its configuration file)",
        cfg.cmd_queue_depth, cfg.token_queue_depth, b->build->id, b->cfg.cmd_queue_depth,
        b->cfg.token_queue_depth));
  }
  return std::make_unique<rtl::RtlSimulatorImpl>(cfg, options, *b->build);
}

std::vector<std::string> rtl_configs() {
  std::vector<std::string> v;
  for (const rtl::Built& b : rtl::built_configs()) v.push_back(b.cfg.label());
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<isa::HwConfig> rtl_built_configs() {
  std::vector<isa::HwConfig> v;
  for (const rtl::Built& b : rtl::built_configs()) v.push_back(b.cfg);
  return v;
}

bool rtl_waves_supported() { return rtl::rtl_waves_built(); }

bool rtl_supports(const isa::HwConfig& cfg) {
  const rtl::Built* b = rtl::find_build(cfg);
  return b && cfg.cmd_queue_depth <= b->cfg.cmd_queue_depth &&
         cfg.token_queue_depth <= b->cfg.token_queue_depth;
}

}  // namespace tessel::sim

/// libsystemc defines main() calling sc_main(); Tessel's programs have their own main(). Weak
/// (as in sim/cycle), so either library may provide it.
extern "C" __attribute__((weak)) int sc_main(int, char**) { return 0; }
