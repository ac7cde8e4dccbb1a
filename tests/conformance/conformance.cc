#include "tests/conformance/conformance.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "isa/verifier.h"
#include "sim/common/program_loader.h"
#include "sim/common/simulator.h"
#include "sim/common/timeline.h"
#include "sim/cycle/cycle_sim.h"
#include "support/error.h"
#if TESSEL_CONFORMANCE_WITH_RTL
#include "sim/rtl/rtl_sim.h"
#endif

namespace tessel::conformance {

ConfigCase config_case(const std::string& name) {
  isa::HwConfig fallback;
  if (name == "default") {
  } else if (name == "1x8x8") {
    fallback.log_block_in = 3;
    fallback.log_block_out = 3;
    fallback.log_uop_buff_size = 15;
    fallback.log_inp_buff_size = 14;
    fallback.log_wgt_buff_size = 16;
    fallback.log_acc_buff_size = 16;
  } else if (name == "batch2") {
    fallback.log_batch = 1;
  } else if (name == "bus128") {
    fallback.log_bus_width = 7;
  } else {
    throw_user_error(
        "unknown conformance configuration '{}' (known: default, 1x8x8, batch2, bus128)", name);
  }
  const std::string path = std::string(TESSEL_SOURCE_DIR) + "/hw/configs/" + name + ".json";
  if (std::filesystem::exists(path)) {
    return {name, isa::HwConfig::from_file(path), path};
  }
  fallback.validate();
  return {name, fallback, "built-in fallback (" + path + " does not exist)"};
}

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

isa::HwConfig with_runtime_keys(const isa::HwConfig& base, int cmd_queue_depth,
                                int token_queue_depth, int dram_latency) {
  isa::HwConfig c = base;
  if (cmd_queue_depth > 0) c.cmd_queue_depth = cmd_queue_depth;
  if (token_queue_depth > 0) c.token_queue_depth = token_queue_depth;
  if (dram_latency >= 0) c.dram_latency = dram_latency;
  c.validate();
  return c;
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// The segment holding DRAM byte `addr` of a Program loaded at `at` (for messages).
std::string locate(const isa::Program& prog, const sim::LoadedProgram& at, uint64_t addr) {
  for (const isa::Segment& s : prog.segments) {
    const uint64_t begin = at.image_base + s.offset_bytes;
    if (addr >= begin && addr < begin + s.size_bytes) {
      return fmt::format("segment '{}' byte {}", s.name, addr - begin);
    }
  }
  if (addr >= at.insn_addr && addr < at.insn_addr + 16ull * at.insn_count) {
    return fmt::format("instruction {}", (addr - at.insn_addr) / 16);
  }
  return "outside every segment";
}

/// Empty when the two DRAMs hold the same bytes in [from, size); otherwise the first
/// difference, its place and the number of differing bytes.
std::string dram_difference(const sim::Dram& ref, const sim::Dram& got, const isa::Program& prog,
                            const sim::LoadedProgram& at, uint64_t from) {
  if (ref.size() != got.size()) return fmt::format("dram sizes {} vs {}", ref.size(), got.size());
  if (std::memcmp(ref.data() + from, got.data() + from, ref.size() - from) == 0) return "";
  uint64_t first = 0, count = 0;
  for (uint64_t a = ref.size(); a-- > from;) {
    if (ref.data()[a] != got.data()[a]) {
      first = a;
      ++count;
    }
  }
  return fmt::format("{} bytes differ; first at byte {} ({}): fsim 0x{:02x}, got 0x{:02x}", count,
                     first, locate(prog, at, first), ref.data()[first], got.data()[first]);
}

std::string counters_str(const sim::Counters& c) {
  return fmt::format(
      "inp {} wgt {} acc {} uop {} out {} gemm {} alu {} insns {}", c.inp_load_nbytes,
      c.wgt_load_nbytes, c.acc_load_nbytes, c.uop_load_nbytes, c.out_store_nbytes, c.gemm_counter,
      c.alu_counter, c.insn_count);
}

}  // namespace

void fill_inputs(isa::Program& prog, uint64_t seed) {
  uint64_t state = seed;
  for (const isa::Segment& s : prog.segments) {
    if (s.kind != isa::SegmentKind::kInput) continue;
    for (uint64_t b = 0; b < s.size_bytes; b += 8) {
      const uint64_t r = splitmix64(state);
      const uint64_t n = std::min<uint64_t>(8, s.size_bytes - b);
      std::memcpy(&prog.image[s.offset_bytes + b], &r, n);
    }
  }
}

struct Harness::Sims {
  std::unique_ptr<sim::Simulator> fsim;
  std::unique_ptr<sim::CycleSimulator> cycle;
#if TESSEL_CONFORMANCE_WITH_RTL
  std::unique_ptr<sim::RtlSimulator> rtl;
#endif
  std::string rtl_missing;  ///< why this config has no RTL model although others do
};

Harness::Harness(const std::vector<isa::HwConfig>& configs) {
#if TESSEL_CONFORMANCE_WITH_RTL
  const std::vector<std::string> built = sim::rtl_configs();
  if (built.empty()) {
    rtl_skip_reason_ = "the build has no RTL model (sim::rtl_configs() is empty)";
  }
#else
  rtl_skip_reason_ =
      "this build has no RTL simulator (TESSEL_WITH_RTL off or no tessel_sim_rtl target)";
#endif
  for (const isa::HwConfig& cfg : configs) {
    cfg.validate();
    const std::string label = cfg.label();
    if (sims_.count(label)) continue;
    auto s = std::make_unique<Sims>();
#if TESSEL_CONFORMANCE_WITH_RTL
    if (rtl_skip_reason_.empty()) {
      if (!sim::rtl_supports(cfg)) {
        std::string list;
        for (const std::string& b : built) list += (list.empty() ? "" : ", ") + b;
        s->rtl_missing = fmt::format("no RTL model for config {} (built: {})", label, list);
      } else {
        sim::RtlSimOptions o;
        o.record_trace = true;
        try {
          s->rtl = sim::make_rtl_sim(cfg, o);
        } catch (const std::exception& e) {
          s->rtl_missing = fmt::format("make_rtl_sim({}) failed: {}", label, e.what());
        }
      }
    }
#endif
    s->fsim = sim::make_fsim(cfg);
    sim::CycleSimOptions o;
    o.record_trace = true;
    s->cycle = sim::make_cycle_sim(cfg, o);
    sims_.emplace(label, std::move(s));
  }
}

Harness::~Harness() = default;

Harness::Sims& Harness::sims_for(const isa::HwConfig& cfg) {
  const auto it = sims_.find(cfg.label());
  if (it == sims_.end()) {
    throw InternalError("conformance harness: config " + cfg.label() +
                        " was not listed when the harness was made");
  }
  return *it->second;
}

CheckResult Harness::check(const isa::Program& prog, const std::string& what_in,
                           uint64_t image_base) {
  CheckResult result;
  std::string what =
      (what_in.empty() ? prog.name : what_in + " " + prog.name) + " [" + prog.config.label() + "]";
  if (image_base != 0) what += fmt::format(" (image at byte {:#x})", image_base);
  ++tally_.programs;
  try {
    isa::verify(prog);
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": the verifier rejects the Program: " << e.what();
    return result;
  }
  Sims& sims = sims_for(prog.config);
  const sim::ProgramLayout layout = sim::default_layout(prog, image_base);
  const uint64_t compare_from = layout.dram_bytes <= kWholeDramCompareBytes ? 0 : image_base;

  // fsim: the golden model.
  sim::Dram ref_dram(layout.dram_bytes);
  const sim::LoadedProgram at = sim::load_program(ref_dram, prog, image_base);
  sim::RunStats ref;
  auto t0 = std::chrono::steady_clock::now();
  try {
    ref = sims.fsim->run(ref_dram, at.insn_addr, at.insn_count);
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": fsim failed: " << e.what();
    return result;
  }
  tally_.fsim_seconds += seconds_since(t0);
  for (const isa::Segment& s : prog.segments) {
    if (s.kind != isa::SegmentKind::kOutput) continue;
    for (uint64_t a = s.offset_bytes; a < s.offset_bytes + s.size_bytes; ++a) {
      if (ref_dram.data()[at.image_base + a] != 0) {
        result.wrote_output = true;
        break;
      }
    }
  }

  // cycle.
  sim::Dram cycle_dram(layout.dram_bytes);
  sim::load_program(cycle_dram, prog, image_base);
  std::optional<sim::RunStats> cyc;
  std::vector<sim::InsnTiming> cycle_trace;
  t0 = std::chrono::steady_clock::now();
  try {
    cyc = sims.cycle->run(cycle_dram, at.insn_addr, at.insn_count);
    cycle_trace = sims.cycle->trace();
    result.cycle_cycles = cyc->cycles;
    result.cycle_trace = cycle_trace;
    sim::sort_by_index(result.cycle_trace);
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": cycle failed: " << e.what();
  }
  tally_.cycle_seconds += seconds_since(t0);
  if (cyc) {
    // A timeline with a record per instruction, so the cycle/rtl comparison is not vacuous.
    EXPECT_EQ(cycle_trace.size(), at.insn_count) << what << ": cycle trace records";
    tally_.cycle_cycles += cyc->cycles;
    const std::string diff = dram_difference(ref_dram, cycle_dram, prog, at, compare_from);
    const bool counters_ok = cyc->counters == ref.counters;
    EXPECT_EQ(diff, "") << what << ": fsim vs cycle DRAM";
    EXPECT_TRUE(counters_ok) << what << ": fsim vs cycle counters: fsim "
                             << counters_str(ref.counters) << "; cycle "
                             << counters_str(cyc->counters);
    tally_.fsim_cycle += diff.empty() && counters_ok;
  }

#if TESSEL_CONFORMANCE_WITH_RTL
  if (!rtl_skip_reason_.empty()) return result;
  if (!sims.rtl) {
    ADD_FAILURE() << what << ": " << sims.rtl_missing;
    return result;
  }
  sim::Dram rtl_dram(layout.dram_bytes);
  sim::load_program(rtl_dram, prog, image_base);
  sim::RunStats r;
  t0 = std::chrono::steady_clock::now();
  try {
    r = sims.rtl->run(rtl_dram, at.insn_addr, at.insn_count);
  } catch (const std::exception& e) {
    tally_.rtl_seconds += seconds_since(t0);
    ADD_FAILURE() << what << ": rtl failed: " << e.what();
    return result;
  }
  tally_.rtl_seconds += seconds_since(t0);
  ++tally_.rtl_run;
  result.rtl_cycles = r.cycles;
  const std::string diff = dram_difference(ref_dram, rtl_dram, prog, at, compare_from);
  const bool counters_ok = r.counters == ref.counters;
  EXPECT_EQ(diff, "") << what << ": fsim vs rtl DRAM";
  EXPECT_TRUE(counters_ok) << what << ": fsim vs rtl counters: fsim " << counters_str(ref.counters)
                           << "; rtl " << counters_str(r.counters);
  tally_.fsim_rtl += diff.empty() && counters_ok;
  EXPECT_EQ(sims.rtl->trace().size(), at.insn_count) << what << ": rtl trace records";
  if (!cyc) return result;
  EXPECT_EQ(cyc->cycles, r.cycles) << what << ": RunStats::cycles of cycle vs rtl";
  tally_.cycles_equal += cyc->cycles == r.cycles;
  const std::optional<sim::TimelineDivergence> d =
      sim::compare_timelines(cycle_trace, sims.rtl->trace(), "cycle", "rtl");
  EXPECT_FALSE(d.has_value()) << what << ": timelines diverge: " << (d ? d->message : "");
  tally_.timelines_equal += !d.has_value();
#endif
  return result;
}

std::string Harness::summary(const std::string& test) const {
  const LegTally& t = tally_;
  std::string s = fmt::format("[conformance] {}: {} programs; fsim==cycle {}/{}", test, t.programs,
                              t.fsim_cycle, t.programs);
  if (rtl_skip_reason_.empty()) {
    s += fmt::format("; rtl ran {}/{}: fsim==rtl {}, cycles equal {}, timelines equal {}",
                     t.rtl_run, t.programs, t.fsim_rtl, t.cycles_equal, t.timelines_equal);
  } else {
    s += "; rtl skipped (" + rtl_skip_reason_ + ")";
  }
  s += fmt::format("; cycle model {} cycles; wall fsim {:.3f} s, cycle {:.3f} s, rtl {:.3f} s",
                   t.cycle_cycles, t.fsim_seconds, t.cycle_seconds, t.rtl_seconds);
  return s;
}

}  // namespace tessel::conformance
