// The cycle-level SystemC model of the accelerator (docs/cycle-model.md), timed exactly as
// docs/microarchitecture.md (the contract with the RTL). make_cycle_sim() in
// sim/common/simulator.h returns one with default options; this header adds the options, the
// per-instruction timeline and the concrete class for tools and tests that want them.
//
// SystemC is a process-wide kernel that elaborates once: the module hierarchy (fetch, load,
// compute, store threads and the memory arbiter) is configuration-agnostic and constructed with
// every other SystemC model of the process on the first run of any of them
// (sim/common/systemc_models.h); every run() passes its HwConfig, DRAM and stream to it and drives
// sc_start() until the run ends. Runs from any number of simulator objects (any configs, any
// SystemC model) are serialised by one process-wide mutex.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "isa/config.h"
#include "isa/spec.h"
#include "sim/common/datapath.h"
#include "sim/common/simulator.h"
#include "sim/common/timeline.h"

namespace tessel::sim {

/// Options of one cycle-level simulator.
struct CycleSimOptions {
  /// A run that has not finished after this many cycles stops with a SimError that lists what
  /// each module is doing (a guard against model bugs and absurdly long streams; a stream that
  /// cannot progress is reported as a deadlock as soon as it stalls, whatever the limit).
  uint64_t cycle_limit = uint64_t(1) << 40;
  /// Record one InsnTiming per executed instruction (see CycleSimulator::trace()).
  bool record_trace = false;
  /// When not empty: write a Chrome/Perfetto JSON trace of every run to this path, overwriting
  /// it (fetch, the three modules and the DRAM bus as tracks, each instruction a slice, token
  /// pushes/pops as flow events, stalls as slices labelled by cause; one trace microsecond = one
  /// cycle; see docs/cycle-model.md section 3). A failed run writes what it did before its error.
  std::string perfetto_path;
};


/// The cycle-level simulator. Holds the scratchpads (sim::Datapath) of its configuration, which
/// persist between runs as in hardware.
class CycleSimulator : public Simulator {
 public:
  /// Throws UserError if `cfg` is invalid (HwConfig::validate) or does not fit the ISA.
  explicit CycleSimulator(const isa::HwConfig& cfg, CycleSimOptions options = {});
  ~CycleSimulator() override;

  std::string name() const override { return "cycle"; }

  /// Simulator::run with timing. Results in DRAM and the counters are bit-identical with fsim for
  /// every stream that follows the token protocol (each instruction's effect on the scratchpads and
  /// DRAM is applied at the cycle it starts, see docs/cycle-model.md). RunStats::cycles is
  /// FINISH's done cycle + 1, counting from the run's cycle 0 (fetch's first request;
  /// docs/microarchitecture.md section 1). Repeatable: the same stream and DRAM give the same
  /// cycles and stats on every run.
  /// Throws SimError (a UserError) on: insn_addr not 16-byte aligned, insn_count 0, a stream
  /// without FINISH, an undecodable instruction, a dependency flag the module does not have, an
  /// SRAM/DRAM access out of range, a deadlock (message lists each blocked module with its queue
  /// and instruction index), tokens left in a queue at the end, or the cycle limit (FINISH not
  /// done within options.cycle_limit cycles). Throws IoError when options.perfetto_path cannot be
  /// written (the run itself succeeded; its DRAM results stand).
  RunStats run(Dram& dram, uint64_t insn_addr, uint32_t insn_count) override;

  /// The per-instruction timeline of the last run (dispatch, start S and done D cycles of
  /// docs/microarchitecture.md), in completion order, ties (same done cycle) by instruction index;
  /// empty unless options.record_trace; after a failed run it holds the instructions done before
  /// the cycle the run stopped at.
  const std::vector<InsnTiming>& trace() const { return trace_; }
  const Datapath& datapath() const { return datapath_; }
  const CycleSimOptions& options() const { return options_; }

 private:
  isa::HwConfig cfg_;
  CycleSimOptions options_;
  isa::IsaSpec spec_;
  Datapath datapath_;
  std::vector<InsnTiming> trace_;
};

/// A cycle-level simulator with explicit options (make_cycle_sim(cfg) uses the defaults).
std::unique_ptr<CycleSimulator> make_cycle_sim(const isa::HwConfig& cfg,
                                               const CycleSimOptions& options);

}  // namespace tessel::sim
