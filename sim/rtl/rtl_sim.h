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
  /// When not empty: write a waveform (".fst" or ".vcd", by extension) of the cycles
  /// [wave_first_cycle, wave_last_cycle] of every run to this path.
  std::string wave_path;
  uint64_t wave_first_cycle = 0;
  uint64_t wave_last_cycle = UINT64_MAX;
};

/// The RTL simulator. Throws UserError from the constructor when no RTL model was built for the
/// configuration (the message lists the built ones and how to add one).
class RtlSimulator : public Simulator {
 public:
  ~RtlSimulator() override = default;
  std::string name() const override { return "rtl"; }
  /// Per-instruction timeline of the last run, sorted by instruction index (record_trace only).
  virtual const std::vector<InsnTiming>& trace() const = 0;
};

/// Creates an RTL simulator for `cfg` (see RtlSimulator).
std::unique_ptr<RtlSimulator> make_rtl_sim(const isa::HwConfig& cfg,
                                           const RtlSimOptions& options = {});

/// Names (HwConfig::name()) of the configurations an RTL model was built for, sorted.
std::vector<std::string> rtl_configs();

/// True when an RTL model exists for `cfg`: same name and queue depths not above the built ones.
bool rtl_supports(const isa::HwConfig& cfg);

}  // namespace tessel::sim
