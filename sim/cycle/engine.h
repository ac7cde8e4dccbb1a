// Internal interface between CycleSimulator (cycle_sim.cc) and the process-wide SystemC model
// (engine.cc). Only sim/cycle includes this header; it keeps SystemC out of every public header.
#pragma once

#include <cstdint>
#include <vector>

#include "isa/config.h"
#include "isa/spec.h"
#include "sim/common/datapath.h"
#include "sim/common/simulator.h"
#include "sim/cycle/cycle_sim.h"
#include "sim/cycle/run_record.h"

namespace tessel::sim::cycle {

/// Everything one run needs; the pointers must stay valid for the duration of run_on_engine().
struct RunInput {
  const isa::HwConfig* cfg = nullptr;
  const isa::IsaSpec* spec = nullptr;   ///< decodes the fetched instructions
  Datapath* datapath = nullptr;         ///< the scratchpads of the calling simulator
  Dram* dram = nullptr;
  uint64_t insn_addr = 0;               ///< byte address of instruction 0, 16-byte aligned
  uint32_t insn_count = 0;              ///< >= 1
  uint64_t cycle_limit = 0;             ///< see CycleSimOptions::cycle_limit
  std::vector<InsnTiming>* trace = nullptr;  ///< filled when not null (any order)
  RunRecord* record = nullptr;               ///< filled when not null (for the Perfetto trace)
};

/// Runs one stream on the process-wide SystemC model (elaborated on first use), serialised by a
/// process-wide mutex. Returns the run's statistics; throws SimError (or the UserError raised by
/// the datapath or DRAM) as described at CycleSimulator::run. The model is idle again afterwards.
/// After an error, `trace` holds the instructions done before the cycle the run stopped at and
/// `record` what was recorded until then.
RunStats run_on_engine(const RunInput& in);

}  // namespace tessel::sim::cycle
