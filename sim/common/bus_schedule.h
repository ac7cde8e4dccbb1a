// The DRAM data-bus schedule of docs/microarchitecture.md section 2.3, shared by the cycle model
// (sim/cycle) and the RTL testbench's AXI slave (sim/rtl), so both models time DRAM identically.
// Units: accelerator clock cycles and bus beats (one beat = 2^LOG_BUS_WIDTH/8 bytes per cycle).
#pragma once

#include <cstdint>

namespace tessel::sim {

/// One reserved burst on the shared data bus.
struct BusSlot {
  uint64_t first = 0;     ///< cycle of the first beat (R beat or W beat accepted)
  uint64_t last = 0;      ///< cycle of the last beat (first + beats - 1)
  uint64_t response = 0;  ///< writes: cycle of the write response (last + 1 + latency); reads: last
};

/// The data bus: bursts are served in grant order, one beat per cycle, reads and writes alike.
///   read  granted in g: first = max(g + 1 + latency, bus_free)
///   write granted in g: first = max(g + 1, bus_free), response = first + beats + latency
///   bus_free = first + beats
/// Grants must be made in non-decreasing cycle order (the arbiter grants at most one burst per
/// cycle). Throws tessel::InternalError when beats is 0 or a grant goes back in time.
class BusSchedule {
 public:
  explicit BusSchedule(uint64_t latency_cycles = 0) : latency_(latency_cycles) {}
  /// Forgets every reservation (a new run starts with a free bus at cycle 0).
  void reset(uint64_t latency_cycles) {
    latency_ = latency_cycles;
    bus_free_ = 0;
    last_grant_ = 0;
  }
  /// Reserves a burst of `beats` beats granted in cycle `grant_cycle`.
  BusSlot reserve(bool write, uint64_t grant_cycle, uint64_t beats);
  uint64_t latency() const { return latency_; }
  /// First cycle in which no reserved beat remains.
  uint64_t bus_free() const { return bus_free_; }

 private:
  uint64_t latency_ = 0;
  uint64_t bus_free_ = 0;
  uint64_t last_grant_ = 0;
};

}  // namespace tessel::sim
