// Counting the CPU cycles of a kernel for the per-layer CPU-vs-accelerator comparison: the
// hardware cycle counter of the calling thread through Linux perf_event_open
// (PERF_COUNT_HW_CPU_CYCLES, user space only) when the kernel allows it, else the x86 time-stamp
// counter (rdtsc: constant-rate reference ticks, not core cycles), else none.
#pragma once

#include <cstdint>
#include <string_view>

namespace tessel::runtime::cpu {

class CycleCounter {
 public:
  /// Opens the perf counter once; falls back silently (source() says which is in use).
  CycleCounter();
  ~CycleCounter();
  CycleCounter(const CycleCounter&) = delete;
  CycleCounter& operator=(const CycleCounter&) = delete;

  /// Starts counting (resets the perf counter / samples the TSC).
  void start();
  /// Cycles (perf), ticks (tsc) or 0 (none) since start().
  uint64_t stop();
  /// "perf_cycles", "tsc_ticks" or "none".
  std::string_view source() const;

 private:
  int fd_ = -1;
  uint64_t tsc0_ = 0;
};

}  // namespace tessel::runtime::cpu
