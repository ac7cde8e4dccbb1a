#include "sim/cycle/cycle_sim.h"

#include <algorithm>

#include <fmt/format.h>

#include "sim/cycle/engine.h"
#include "sim/cycle/perfetto_trace.h"

namespace tessel::sim {

namespace {
const isa::HwConfig& validated(const isa::HwConfig& cfg) {
  cfg.validate();
  return cfg;
}
}  // namespace

CycleSimulator::CycleSimulator(const isa::HwConfig& cfg, CycleSimOptions options)
    : cfg_(validated(cfg)), options_(options), spec_(cfg_), datapath_(cfg_) {
  if (options_.cycle_limit == 0) {
    throw UserError("cycle simulator: cycle limit 0 leaves no cycle to run; use at least 1");
  }
}

CycleSimulator::~CycleSimulator() = default;

RunStats CycleSimulator::run(Dram& dram, uint64_t insn_addr, uint32_t insn_count) {
  if (insn_addr % 16 != 0) {
    throw SimError(fmt::format(
        "cycle simulator: instruction address {} is not 16-byte aligned", insn_addr));
  }
  if (insn_count == 0) {
    throw SimError("cycle simulator: instruction count 0: a stream needs at least a finish");
  }
  check_insn_stream(dram, insn_addr, insn_count);
  trace_.clear();
  cycle::RunInput in;
  in.cfg = &cfg_;
  in.spec = &spec_;
  in.datapath = &datapath_;
  in.dram = &dram;
  in.insn_addr = insn_addr;
  in.insn_count = insn_count;
  in.cycle_limit = options_.cycle_limit;
  in.trace = options_.record_trace ? &trace_ : nullptr;
  cycle::RunRecord record;
  const bool perfetto = !options_.perfetto_path.empty();
  in.record = perfetto ? &record : nullptr;
  // Completion order with ties (same end cycle) by instruction index, whatever order the
  // threads timed the instructions in.
  auto sort_trace = [this] {
    std::stable_sort(trace_.begin(), trace_.end(), [](const InsnTiming& a, const InsnTiming& b) {
      return a.end != b.end ? a.end < b.end : a.index < b.index;
    });
  };
  RunStats stats;
  try {
    stats = cycle::run_on_engine(in);
    sort_trace();
  } catch (...) {
    sort_trace();
    datapath_.reset();  // a clean state after an error, as fsim
    if (perfetto) {
      // The trace of a failed run shows what happened up to the error (e.g. a deadlock); the
      // run's own error is the one reported.
      try {
        cycle::write_perfetto_trace(options_.perfetto_path, record, cfg_);
      } catch (const IoError&) {
      }
    }
    throw;
  }
  if (perfetto) cycle::write_perfetto_trace(options_.perfetto_path, record, cfg_);
  return stats;
}

std::unique_ptr<CycleSimulator> make_cycle_sim(const isa::HwConfig& cfg,
                                               const CycleSimOptions& options) {
  return std::make_unique<CycleSimulator>(cfg, options);
}

std::unique_ptr<Simulator> make_cycle_sim(const isa::HwConfig& cfg) {
  return std::make_unique<CycleSimulator>(cfg, CycleSimOptions{});
}

}  // namespace tessel::sim
