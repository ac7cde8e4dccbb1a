// The per-instruction timing rules of docs/microarchitecture.md (isa/timing.h), each number
// derived in a comment from the spec. Default config: 64-bit bus (W = 8 bytes a beat), DRAM
// latency L = 32, INP elements 16 bytes, UOP 4 bytes. The cycle model's own tests
// (tests/cycle/cycle_timing_test.cc) check these rules inside whole streams.
#include "isa/timing.h"

#include <gtest/gtest.h>

#include <vector>

#include "isa/config.h"
#include "isa/instruction.h"

namespace tessel::isa {
namespace {

TEST(Timing, RuleFunctions) {
  HwConfig cfg;  // W = 8
  // A fetch burst of 8 instructions: 128 aligned bytes = 16 beats, one burst.
  std::vector<timing::Burst> bursts;
  EXPECT_EQ(timing::append_fetch_bursts(cfg, 65536, 8, bursts), 16u);
  ASSERT_EQ(bursts.size(), 1u);
  EXPECT_EQ(bursts[0].addr, 65536u);
  EXPECT_EQ(bursts[0].beats, 16u);
  // 3 rows of 5 INP elements, x_stride 5, from element 0: 80 aligned bytes = 10 beats a row.
  const Instruction inp = make_mem(Opcode::kLoad, MemType::kInp, 0, 0, 3, 5, 5);
  EXPECT_EQ(timing::dma_beats(cfg, inp), 30u);
  EXPECT_EQ(timing::dma_burst_count(cfg, inp), 3u);
  // UOP rows narrower than the bus count the aligned words they touch: uops 1..2 are bytes
  // [4, 12): words 0 and 1 = 2 beats (8 bytes would be 1 beat if aligned); uop 1 alone is bytes
  // [4, 8): 1 beat; uops 1..3, bytes [4, 16): 2 beats; uops 2..3, bytes [8, 16): 1 beat.
  EXPECT_EQ(timing::dma_beats(cfg, make_mem(Opcode::kLoad, MemType::kUop, 0, 1, 1, 2, 2)), 2u);
  EXPECT_EQ(timing::dma_beats(cfg, make_mem(Opcode::kLoad, MemType::kUop, 0, 1, 1, 1, 1)), 1u);
  EXPECT_EQ(timing::dma_beats(cfg, make_mem(Opcode::kLoad, MemType::kUop, 0, 1, 1, 3, 3)), 2u);
  EXPECT_EQ(timing::dma_beats(cfg, make_mem(Opcode::kLoad, MemType::kUop, 0, 2, 1, 2, 2)), 1u);
  // Two rows of 3 uops with x_stride 3: bytes [0, 12) = 2 beats and [12, 24) = words 1, 2 = 2.
  EXPECT_EQ(timing::dma_beats(cfg, make_mem(Opcode::kLoad, MemType::kUop, 0, 0, 2, 3, 3)), 4u);
  // A row of 129 INP elements = 2064 bytes = 258 beats: bursts of 256 and 2, the second at
  // byte 256 * 8 = 2048 after the first.
  bursts.clear();
  const Instruction wide = make_mem(Opcode::kLoad, MemType::kInp, 0, 256, 1, 129, 129);
  EXPECT_EQ(timing::append_dma_bursts(cfg, wide, bursts), 258u);
  ASSERT_EQ(bursts.size(), 2u);
  EXPECT_EQ(bursts[0].addr, 4096u);
  EXPECT_EQ(bursts[0].beats, 256u);
  EXPECT_EQ(bursts[1].addr, 4096u + 2048u);
  EXPECT_EQ(bursts[1].beats, 2u);
  EXPECT_EQ(timing::dma_burst_count(cfg, wide), 2u);
  // pads: (0 + 2 + 1) rows x (2 + 2 + 1) columns - 2 * 2 data = 11; none when x_size is 0.
  EXPECT_EQ(timing::pad_elems(make_mem(Opcode::kLoad, MemType::kInp, 0, 0, 2, 2, 2, 0, 1, 2, 1)),
            11u);
  EXPECT_EQ(timing::pad_elems(make_mem(Opcode::kLoad, MemType::kInp, 0, 0, 2, 0, 2, 1, 1, 1, 1)),
            0u);
  // GEMM 2 x 3 x 4 = 24 uops: D = S + 24 + 4, with or without reset; ALU 1 x 2 x 3 = 6 uops;
  // an empty loop (uop_end = uop_bgn) is done in its start cycle.
  EXPECT_EQ(timing::compute_done(make_gemm(0, 4, 2, 3, 0, 0, 0, 0), 100), 128u);
  Instruction reset = make_gemm(0, 4, 2, 3, 0, 0, 0, 0);
  reset.reset = true;
  EXPECT_EQ(timing::compute_done(reset, 100), 128u);
  EXPECT_EQ(timing::compute_done(make_alu(AluOp::kAdd, 2, 5, 1, 2, 0, 0, 0, 0), 100), 110u);
  EXPECT_EQ(timing::compute_done(make_gemm(3, 3, 2, 2, 0, 0, 0, 0), 100), 100u);
  // Pads in the cycles without beats (S = 10, beats F = 20 .. 23): 5 pads fit in 11..19, the
  // last in 15; 12 pads do not: 9 in 11..19, 3 in 24..26, the last in S + P + B = 26.
  EXPECT_EQ(timing::last_pad_cycle(10, 5, 20, 4), 15u);
  EXPECT_EQ(timing::dma_read_done(10, 5, 20, 4), 23u);
  EXPECT_EQ(timing::last_pad_cycle(10, 12, 20, 4), 26u);
  EXPECT_EQ(timing::dma_read_done(10, 12, 20, 4), 26u);
  EXPECT_EQ(timing::dma_read_done(10, 0, 20, 4), 23u);
  // A store's done cycle is its last write response: F + B + L = 40 + 4 + 32.
  EXPECT_EQ(timing::store_done(uint64_t(cfg.dram_latency), 40, 4), 76u);
}

TEST(Timing, AlignedBeatsAndConstants) {
  // [0, 8) is one word of 8 bytes; [7, 9) straddles words 0 and 1; [8, 24) is words 1 and 2; an
  // empty range has no beats; on a 16-byte bus [4, 36) touches words 0, 1 and 2.
  EXPECT_EQ(timing::aligned_beats(0, 8, 8), 1u);
  EXPECT_EQ(timing::aligned_beats(7, 2, 8), 2u);
  EXPECT_EQ(timing::aligned_beats(8, 16, 8), 2u);
  EXPECT_EQ(timing::aligned_beats(5, 0, 8), 0u);
  EXPECT_EQ(timing::aligned_beats(4, 32, 16), 3u);
  // A fetch burst is 8 instructions of 16 bytes: 128 bytes = 16 beats of the 64-bit bus.
  EXPECT_EQ(timing::aligned_beats(0, timing::kInsnBytes * timing::kFetchBurstInsns, 8), 16u);
  EXPECT_EQ(timing::kMaxBurstBeats, 256u);
  EXPECT_EQ(timing::kComputePipelineDepth, 4u);
}

}  // namespace
}  // namespace tessel::isa
