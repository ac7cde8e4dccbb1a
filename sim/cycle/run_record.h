// What the cycle model records of one run for its Perfetto/Chrome trace (perfetto_trace.h): every
// instruction's cycles and the conditions that delayed its start, every fetch burst, every burst
// on the DRAM bus. Internal to sim/cycle (the engine fills it, perfetto_trace.cc writes it).
// All cycles are relative to the run (cycle 0 = fetch's first request), docs/microarchitecture.md.
#pragma once

#include <cstdint>
#include <vector>

#include "isa/instruction.h"

namespace tessel::sim::cycle {

/// Masters of the memory arbiter, in priority order (docs/microarchitecture.md section 2.2); the
/// value is the AXI ID.
enum class Master : uint8_t { kFetch = 0, kLoad = 1, kCompute = 2, kStore = 3 };

/// One token moved through a dependency queue: the `serial`-th token (0-based) ever pushed into
/// `queue` in this run. A push and a pop with equal queue and serial are the same token.
struct TokenRef {
  isa::TokenQueue queue = isa::TokenQueue::kL2G;
  uint64_t serial = 0;
};

/// One executed instruction (load, compute or store module).
struct InsnRecord {
  uint32_t index = 0;
  isa::Module module = isa::Module::kCompute;
  isa::Instruction insn;
  uint64_t dispatch = 0;  ///< cycle fetch pushed it into its command queue
  uint64_t free = 0;      ///< previous instruction's D + 1 of the module (0 for its first)
  /// The first cycle each start condition of section 4 holds (0 when it holds from the start):
  /// command visible, every pop queue non-empty, every push queue with room, FINISH's drain.
  uint64_t cmd_ready = 0, pop_ready = 0, room_ready = 0, drain_ready = 0;
  /// The queue that decided pop_ready / room_ready (the latest one), when that condition waited.
  isa::TokenQueue pop_queue = isa::TokenQueue::kL2G;
  isa::TokenQueue room_queue = isa::TokenQueue::kL2G;
  uint64_t start = 0;       ///< S
  uint64_t done = 0;        ///< D
  uint64_t beats = 0;       ///< B: bus beats (DMA), 0 otherwise
  uint64_t first_beat = 0;  ///< F (valid when beats > 0)
  uint64_t pads = 0;        ///< P: zero elements written (LOAD)
  uint64_t uops = 0;        ///< n: uops issued (GEMM, ALU)
  TokenRef pops[2];
  uint32_t n_pops = 0;
  TokenRef pushes[2];
  uint32_t n_pushes = 0;
};

/// One fetch burst (section 3).
struct FetchRecord {
  uint32_t first_insn = 0;  ///< index of its first instruction
  uint32_t insns = 0;       ///< instructions it covers (1 .. 8)
  uint64_t request = 0;     ///< first cycle fetch requested it
  uint64_t grant = 0;       ///< cycle the arbiter granted its first AXI burst
  uint64_t first_beat = 0;  ///< F
  uint64_t beats = 0;       ///< B
};

/// One AXI burst on the DRAM bus (section 2.3).
struct BusRecord {
  Master master = Master::kFetch;
  uint32_t insn = 0;        ///< instruction index (fetch: the burst's first instruction)
  bool write = false;
  uint64_t addr = 0;        ///< bus-aligned byte address
  uint32_t beats = 0;
  uint64_t grant = 0;       ///< AR/AW handshake cycle
  uint64_t first = 0;       ///< first beat
  uint64_t last = 0;        ///< last beat
  uint64_t response = 0;    ///< writes: the write-response cycle; reads: last
};

/// Everything recorded of one run, each list in the order the engine produced it.
struct RunRecord {
  std::vector<InsnRecord> insns;
  std::vector<FetchRecord> fetches;
  std::vector<BusRecord> bus;
  /// Fetch's dispatches: instruction index -> dispatch cycle, and whether fetch waited for room.
  struct Dispatch {
    uint32_t index = 0;
    isa::Module module = isa::Module::kCompute;
    uint64_t earliest = 0;  ///< the cycle it would have been dispatched with room in its queue
    uint64_t cycle = 0;     ///< the dispatch cycle
  };
  std::vector<Dispatch> dispatches;
  uint64_t cycles = 0;      ///< RunStats::cycles (0 when the run failed)
  uint64_t dram_latency = 0;
};

}  // namespace tessel::sim::cycle
