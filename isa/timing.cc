#include "isa/timing.h"

#include <algorithm>

#include "isa/program.h"

namespace tessel::isa::timing {

uint64_t append_row_bursts(const HwConfig& cfg, uint64_t addr, uint64_t bytes,
                           std::vector<Burst>& out) {
  const uint64_t w = uint64_t(cfg.bus_bytes());
  const uint64_t beats = aligned_beats(addr, bytes, w);
  uint64_t word = addr / w;
  for (uint64_t left = beats; left > 0;) {
    const uint64_t n = std::min(left, kMaxBurstBeats);
    out.push_back(Burst{word * w, uint32_t(n)});
    word += n;
    left -= n;
  }
  return beats;
}

uint64_t append_dma_bursts(const HwConfig& cfg, const Instruction& insn, std::vector<Burst>& out) {
  if (insn.x_size == 0 || insn.y_size == 0) return 0;
  uint64_t total = 0;
  for (uint32_t r = 0; r < insn.y_size; ++r) {
    const DramRow row = dram_row(cfg, insn, r);
    total += append_row_bursts(cfg, row.first, row.end - row.first, out);
  }
  return total;
}

uint64_t dma_beats(const HwConfig& cfg, const Instruction& insn) {
  if (insn.x_size == 0 || insn.y_size == 0) return 0;
  const uint64_t w = uint64_t(cfg.bus_bytes());
  uint64_t total = 0;
  for (uint32_t r = 0; r < insn.y_size; ++r) {
    const DramRow row = dram_row(cfg, insn, r);
    total += aligned_beats(row.first, row.end - row.first, w);
  }
  return total;
}

uint64_t dma_burst_count(const HwConfig& cfg, const Instruction& insn) {
  if (insn.x_size == 0 || insn.y_size == 0) return 0;
  const uint64_t w = uint64_t(cfg.bus_bytes());
  uint64_t total = 0;
  for (uint32_t r = 0; r < insn.y_size; ++r) {
    const DramRow row = dram_row(cfg, insn, r);
    const uint64_t b = aligned_beats(row.first, row.end - row.first, w);
    total += (b + kMaxBurstBeats - 1) / kMaxBurstBeats;
  }
  return total;
}

uint64_t append_fetch_bursts(const HwConfig& cfg, uint64_t addr, uint32_t insns,
                             std::vector<Burst>& out) {
  return append_row_bursts(cfg, addr, uint64_t(insns) * kInsnBytes, out);
}

uint64_t pad_elems(const Instruction& insn) {
  if (insn.x_size == 0) return 0;
  const uint64_t rows = uint64_t(insn.y_pad_0) + insn.y_size + insn.y_pad_1;
  const uint64_t cols = uint64_t(insn.x_pad_0) + insn.x_size + insn.x_pad_1;
  return rows * cols - uint64_t(insn.y_size) * insn.x_size;
}

uint64_t compute_done(const Instruction& insn, uint64_t start) {
  const uint64_t n = loop_uops(insn);
  return n == 0 ? start : start + n + kComputePipelineDepth;
}

uint64_t last_pad_cycle(uint64_t start, uint64_t pads, uint64_t first_beat, uint64_t beats) {
  return start + pads < first_beat ? start + pads : start + pads + beats;
}

uint64_t dma_read_done(uint64_t start, uint64_t pads, uint64_t first_beat, uint64_t beats) {
  const uint64_t last_beat = first_beat + beats - 1;
  if (pads == 0) return last_beat;
  return std::max(last_beat, last_pad_cycle(start, pads, first_beat, beats));
}

uint64_t beatless_load_done(const Instruction& insn, uint64_t start) {
  return start + pad_elems(insn);
}

uint64_t store_done(uint64_t dram_latency, uint64_t first_beat, uint64_t beats) {
  return first_beat + beats + dram_latency;
}

}  // namespace tessel::isa::timing
