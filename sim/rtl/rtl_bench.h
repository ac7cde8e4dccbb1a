// Internal to sim/rtl: the per-run testbench state shared by every Verilated configuration — the
// AXI DRAM slave, the decoded stream, the instruction timeline built from the dbg_* pulses, the
// cycle limit and the no-progress watchdog. The per-configuration clock loop (rtl_model_impl.h)
// calls drive() and sample() once per cycle. Not a public header.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "isa/instruction.h"
#include "sim/common/simulator.h"
#include "sim/common/timeline.h"
#include "sim/rtl/axi_slave.h"

namespace tessel::sim::rtl {

/// Bits of TopSignals::dbg: the one-cycle trace pulses of tessel_top (microarchitecture.md 8.4).
enum DbgBit : uint8_t {
  kDbgDispatch = 1 << 0,
  kDbgLoadStart = 1 << 1,
  kDbgLoadDone = 1 << 2,
  kDbgComputeStart = 1 << 3,
  kDbgComputeDone = 1 << 4,
  kDbgStoreStart = 1 << 5,
  kDbgStoreDone = 1 << 6,
};

/// tessel_top's outputs in one cycle.
struct TopSignals {
  MasterSignals axi;
  bool done = false;
  uint8_t dbg = 0;  ///< DbgBit mask
};

/// The stream as the static checks decoded it: instructions 0 .. FINISH (fetch stops there).
struct DecodedStream {
  std::vector<isa::Instruction> insns;
  /// Per isa::Module: indices of its instructions in stream order.
  std::array<std::vector<uint32_t>, 3> by_module;
  /// Per instruction: the cycles it may run without any dbg pulse or bus activity (GEMM/ALU
  /// uops + pipeline depth, pad elements of a DMA load), added to the watchdog window.
  std::vector<uint64_t> quiet_cycles;
};

/// Limits of one run.
struct BenchLimits {
  /// SimError when `done` is still low in this cycle (the run needs more than cycle_limit cycles)
  uint64_t cycle_limit = 0;
  uint64_t watchdog_window = 0;   ///< no-progress window (cycles)
  uint64_t wave_first = 0, wave_last = 0;  ///< cycles dumped when waves are on
};

/// One run of the testbench. Cycle 0 is the cycle after launch (fetch's first request).
class Bench {
 public:
  Bench(Dram& dram, int bus_bytes, uint64_t latency, const DecodedStream& stream,
        const BenchLimits& limits, bool record_trace);

  /// What the DRAM slave presents in the current cycle.
  const SlaveDrive& drive() { return slave_.drive(t_); }
  /// Processes the accelerator's outputs of the current cycle and advances to the next one.
  /// Returns true when `done` was high (the run is over; cycles() is final). Throws SimError on
  /// an AXI protocol error, a dbg pulse no instruction matches, the cycle limit or the watchdog.
  bool sample(const TopSignals& o);

  /// The current cycle (relative to launch).
  uint64_t cycle() const { return t_; }
  /// True when the current cycle lies in the waveform window.
  bool wave_now() const { return t_ >= limits_.wave_first && t_ <= limits_.wave_last; }
  /// The run's cycles (FINISH's D + 1), valid once sample() returned true.
  uint64_t cycles() const { return cycles_; }
  /// Instructions completed per module (load, compute, store) and dispatched by fetch.
  uint64_t done_count(isa::Module m) const { return done_[size_t(m)]; }
  uint64_t dispatched() const { return dispatched_; }
  /// The timeline (record_trace), one entry per instruction dispatched so far, by index.
  std::vector<InsnTiming> timeline() const;
  /// Describes every module's state for a no-progress or cycle-limit error.
  std::string describe_state() const;

 private:
  void on_start(isa::Module m);
  void on_done(isa::Module m);
  [[noreturn]] void protocol_error(const std::string& what) const;

  AxiDramSlave slave_;
  const DecodedStream& stream_;
  BenchLimits limits_;
  bool record_ = false;
  uint64_t t_ = 0;
  uint64_t cycles_ = 0;
  uint64_t deadline_ = 0;   ///< watchdog: cycle by which some progress must be seen
  uint64_t last_progress_ = 0;  ///< last cycle with a dbg pulse or bus activity
  uint64_t dispatched_ = 0;
  std::array<uint64_t, 3> started_{}, done_{};
  std::array<uint64_t, 3> start_cycle_{};  ///< start cycle of each module's running instruction
  std::vector<InsnTiming> timeline_;
};

}  // namespace tessel::sim::rtl
