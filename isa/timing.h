// The per-instruction timing rules of docs/microarchitecture.md (the accelerator's timing
// contract, which the RTL in hw/rtl implements): facts of the microarchitecture as plain
// functions of one instruction and the HwConfig. Written once here and used by the cycle model
// (sim/cycle/engine.cc) and the compiler's schedule cost model (compiler/backend/accel/
// schedule.cc), so the compiler needs no simulator to know them. The DRAM data-bus
// schedule (a stateful arbiter) is sim::BusSchedule; the arbitration between masters and the
// queue rules live in the cycle model's engine.
//
// Units: accelerator clock cycles; bus beats (one beat = cfg.bus_bytes() bytes = W, one cycle of
// the data bus); DRAM bytes; scratchpad elements (one row of a scratchpad). Cycle arguments are
// absolute cycles of one run (cycle 0 = fetch's first request). Section numbers are those of
// docs/microarchitecture.md. No function checks ranges (the datapath and the stream verifier do).
#pragma once

#include <cstdint>
#include <vector>

#include "isa/config.h"
#include "isa/instruction.h"

namespace tessel::isa::timing {

/// Instructions per fetch burst (section 3: burst k covers instructions
/// [8k, min(8k + 8, insn_count))).
inline constexpr uint32_t kFetchBurstInsns = 8;
/// Bytes of one instruction in DRAM.
inline constexpr uint64_t kInsnBytes = 16;
/// Stages after the issue of a GEMM/ALU uop until its write-back (section 5.3: uop i issues in
/// S + 1 + i and is written back in S + 1 + i + 4), so an instruction of n > 0 uops is done in
/// S + n + kComputePipelineDepth.
inline constexpr uint64_t kComputePipelineDepth = 4;
/// Beats of the longest AXI4 INCR burst (section 2.1); longer rows are split.
inline constexpr uint64_t kMaxBurstBeats = 256;

/// Aligned bus beats of the DRAM byte range [addr, addr + bytes) (section 2.1): ceil((addr +
/// bytes) / bus_bytes) - floor(addr / bus_bytes); 0 when bytes is 0. `bus_bytes` (W) must be a
/// power of two.
inline uint64_t aligned_beats(uint64_t addr, uint64_t bytes, uint64_t bus_bytes) {
  if (bytes == 0) return 0;
  return (addr + bytes + bus_bytes - 1) / bus_bytes - addr / bus_bytes;
}

/// One AXI burst of a DMA instruction or a fetch (section 2.1).
struct Burst {
  uint64_t addr = 0;   ///< bus-aligned DRAM byte address of its first beat
  uint32_t beats = 0;  ///< 1 .. kMaxBurstBeats
};

/// Appends to `out` the bursts of the byte range [addr, addr + bytes) (one row, or one fetch
/// burst): its aligned bus words, aligned_beats(addr, bytes, W) beats, split into bursts of at
/// most kMaxBurstBeats beats in address order. Appends nothing when bytes is 0. Returns the beats
/// appended.
uint64_t append_row_bursts(const HwConfig& cfg, uint64_t addr, uint64_t bytes,
                           std::vector<Burst>& out);

/// Appends to `out` every burst of a LOAD or STORE (section 2.1): rows r = 0 .. y_size - 1, row r
/// the bytes [A_r, A_r + x_size * E) with A_r = (dram_base + r * x_stride) * E and E =
/// dram_elem_bytes(cfg, mem_type), each row its own bursts. Appends nothing when x_size or y_size
/// is 0. Returns the instruction's total beats B.
uint64_t append_dma_bursts(const HwConfig& cfg, const Instruction& insn, std::vector<Burst>& out);

/// Total beats B of a LOAD or STORE (the beats append_dma_bursts would append).
uint64_t dma_beats(const HwConfig& cfg, const Instruction& insn);

/// Number of bursts of a LOAD or STORE (the arbiter holds its lock this many cycles).
uint64_t dma_burst_count(const HwConfig& cfg, const Instruction& insn);

/// Appends the bursts of one fetch burst covering `insns` instructions (1 .. kFetchBurstInsns)
/// from byte address `addr` (16-byte aligned): append_row_bursts on kInsnBytes * insns bytes.
/// Returns its beats.
uint64_t append_fetch_bursts(const HwConfig& cfg, uint64_t addr, uint32_t insns,
                             std::vector<Burst>& out);

/// Zero elements a LOAD writes (section 5.1): (y_pad_0 + y_size + y_pad_1) * (x_pad_0 + x_size +
/// x_pad_1) - y_size * x_size; 0 when x_size is 0 (such a LOAD has no effect). Also the pads of a
/// pads-only LOAD (y_size = 0).
uint64_t pad_elems(const Instruction& insn);

/// Done cycle D of a GEMM (reset or not) or ALU started in S (section 5.3): S + n +
/// kComputePipelineDepth with n = loop_uops(insn); S when n is 0.
uint64_t compute_done(const Instruction& insn, uint64_t start);

/// Cycle T in which a DMA read started in S writes the last of its P > 0 pads, the pads taking
/// the cycles from S + 1 in which no beat arrives, the B > 0 beats arriving in F .. F + B - 1
/// (section 5.1): S + P if S + P < F, else S + P + B.
uint64_t last_pad_cycle(uint64_t start, uint64_t pads, uint64_t first_beat, uint64_t beats);

/// Done cycle D of a DMA read (LOAD of any memory type) started in S, with B > 0 beats arriving
/// in F .. F + B - 1 and P pads (section 5.1): F + B - 1 when P is 0, else max(F + B - 1,
/// last_pad_cycle(S, P, F, B)).
uint64_t dma_read_done(uint64_t start, uint64_t pads, uint64_t first_beat, uint64_t beats);

/// Done cycle D of a LOAD with no beats (x_size = 0 or y_size = 0) started in S: S + P (S when
/// x_size is 0 or there are no pads).
uint64_t beatless_load_done(const Instruction& insn, uint64_t start);

/// Done cycle D of a STORE whose B > 0 write beats occupy F .. F + B - 1 (section 5.2): its last
/// write response, F + B + L with L = `dram_latency` (cycles; HwConfig::dram_latency).
uint64_t store_done(uint64_t dram_latency, uint64_t first_beat, uint64_t beats);

}  // namespace tessel::isa::timing
