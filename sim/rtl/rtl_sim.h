// The RTL simulator (sim/rtl): the Verilator-built SystemVerilog of hw/rtl wrapped in SystemC and
// attached to the DRAM model of docs/microarchitecture.md section 2.3 (sim::BusSchedule), behind
// the sim::Simulator interface. One Verilated model is built per configuration listed in the CMake
// variable TESSEL_RTL_CONFIGS (hw/configs/*.json); DRAM_LATENCY, CLOCK_MHZ and the queue depths
// (up to the built maximum) are run-time settings.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "isa/config.h"
#include "sim/common/simulator.h"
#include "sim/common/timeline.h"

namespace tessel::sim {

/// Options of one RTL simulator.
struct RtlSimOptions {
  /// A run that has not finished after this many cycles stops with a SimError.
  uint64_t cycle_limit = uint64_t(1) << 40;
  /// Record one InsnTiming per instruction (RtlSimulator::trace()).
  bool record_trace = false;
  /// When not empty: write an FST waveform (the path must end in ".fst"; the models are built
  /// with Verilator's --trace-fst, and tracing costs nothing until a file is open) of the cycles
  /// [wave_first_cycle, wave_last_cycle] (run-relative, 0 = fetch's first cycle) of every run to
  /// this path; each run overwrites it. Every signal of the hierarchy is dumped.
  std::string wave_path;
  uint64_t wave_first_cycle = 0;
  uint64_t wave_last_cycle = UINT64_MAX;
};

/// The RTL simulator. make_rtl_sim() throws UserError when no RTL model was built for the
/// configuration (the message lists the built ones and how to add one).
///
/// run() (Simulator::run): first the static checks — insn_addr 16-byte aligned, insn_count >= 1,
/// the stream inside DRAM, then the functional simulator (fsim) runs the stream on a scratch
/// copy of the DRAM pages the stream and its LOADs read, so an undecodable instruction, an
/// illegal dependency flag, an SRAM or DRAM range error, a missing FINISH, tokens left at FINISH
/// or a deadlock at the run's queue depths fail with fsim's SimError before the RTL runs (the RTL
/// has no range checks; microarchitecture.md section 7). Then the Verilated tessel_top is reset,
/// launched (insn_base, insn_count, cmd/token queue limits = the run's CMD_QUEUE_DEPTH /
/// TOKEN_QUEUE_DEPTH) and clocked against the AXI DRAM slave (sim/rtl/axi_slave.h) until `done`.
/// RunStats: cycles = FINISH's done cycle + 1 (the cycle `done` is first high); counters are
/// VTA's counters as fsim counts them on the same stream; per module `insns` (fetch: dispatches,
/// also its busy_cycles); the other per-module statistics are the cycle model's (section 6 of
/// the spec) and stay 0. Further SimErrors: an AXI protocol error of the RTL (names the master by
/// AXI ID and the address), a dbg pulse that matches no instruction, the cycle limit, and the
/// no-progress watchdog (no dbg pulse and no bus activity for 65536 + 2*DRAM_LATENCY cycles beyond
/// the known length of the running GEMM/ALU loop or DMA padding; the message lists what each
/// module has started and not finished). After an error the model is reset by the next run and
/// may be used again. Not thread-safe per object; runs of all SystemC models in a process are
/// serialised (sim/common/systemc_models.h).
class RtlSimulator : public Simulator {
 public:
  ~RtlSimulator() override = default;
  std::string name() const override { return "rtl"; }
  /// Per-instruction timeline of the last run, sorted by instruction index (record_trace only).
  virtual const std::vector<InsnTiming>& trace() const = 0;
};

/// Creates an RTL simulator for `cfg` (see RtlSimulator). Throws UserError for an invalid config,
/// a config with no built model, queue depths above the built ones, cycle_limit 0, a waveform
/// path not ending in ".fst" or an empty waveform window.
std::unique_ptr<RtlSimulator> make_rtl_sim(const isa::HwConfig& cfg,
                                           const RtlSimOptions& options = {});

/// Labels (HwConfig::label(), which tells configurations with the same VTA name apart, e.g. by
/// LOG_BUS_WIDTH) of the configurations an RTL model was built for, sorted.
std::vector<std::string> rtl_configs();

/// The configurations an RTL model was built for (with their built, i.e. maximum, queue depths),
/// in TESSEL_RTL_CONFIGS order.
std::vector<isa::HwConfig> rtl_built_configs();

/// True when the RTL models were built with FST waveform support (CMake option
/// TESSEL_RTL_WAVES, default ON); RtlSimOptions::wave_path is a UserError otherwise.
bool rtl_waves_supported();

/// True when an RTL model exists for `cfg`: every build-time key equal (all keys except
/// DRAM_LATENCY, CLOCK_MHZ and the queue depths) and queue depths not above the built ones.
bool rtl_supports(const isa::HwConfig& cfg);

}  // namespace tessel::sim
