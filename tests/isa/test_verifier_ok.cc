// The verifier accepts legal streams (a VTA-style kernel with its end-of-run synchronisation),
// including with tiny command and token queues, and tracks micro-ops from the image.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "isa/asm.h"
#include "isa/verifier.h"
#include "verifier_fixtures.h"

namespace tessel::isa {
namespace {

TEST(IsaVerifier, AcceptsLegalKernel) {
  const Program p = legal_kernel();
  const auto d = check_program(p);
  EXPECT_TRUE(d.empty()) << all(d);
  EXPECT_NO_THROW(verify(p));
}

TEST(IsaVerifier, AcceptsLegalKernelWithTinyQueues) {
  HwConfig cfg;
  cfg.cmd_queue_depth = 1;
  cfg.token_queue_depth = 1;
  const auto d = check_program(legal_kernel(cfg));
  EXPECT_TRUE(d.empty()) << all(d);
}

// 1000 GEMMs, each popping a token the load module pushed, with 4-entry command queues and
// 2-token queues: the abstract execution must interleave, not report a deadlock.
TEST(IsaVerifier, LongStreamWithSmallQueues) {
  HwConfig cfg;
  cfg.cmd_queue_depth = 4;
  cfg.token_queue_depth = 2;
  std::string text = ".uop 0 0 0\nLOAD UOP sram=0 dram=0 y=1 x=1 stride=1\n";
  for (int i = 0; i < 1000; ++i) {
    text += "LOAD INP sram=0 dram=0 y=0 x=0 stride=0 deps=push_next\n";
    text += "GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0 deps=pop_prev\n";
  }
  text += "FINISH\n";
  const auto d = check_program(assemble(text, cfg));
  EXPECT_TRUE(d.empty()) << all(d);
}

// Micro-ops come from the image at the LOAD UOP's address, not from Program::uops: a second
// segment holds a uop whose dst index is 2040; a GEMM with iter_out 8 and dst_factor_out 1
// reaches 2047 (legal), and with iter_out 9 reaches 2048 (reported).
TEST(IsaVerifier, TracksUopsLoadedFromTheImage) {
  for (uint32_t iter_out : {8u, 9u}) {
    Program p = assemble(fmt::format("LOAD UOP sram=5 dram=1024 y=1 x=1 stride=1\n"
                                     "GEMM uop=5:6 iter={},1 dst=1,0 src=0,0 wgt=0,0\nFINISH\n",
                                     iter_out),
                         HwConfig{});
    p.add_segment("more_uops", SegmentKind::kConst, 4);
    ASSERT_EQ(p.segment("more_uops").offset_bytes, 0u);  // the "uop" segment is empty
    const uint32_t bits = 2040u;                          // dst 2040, src 0, wgt 0
    for (int b = 0; b < 4; ++b) p.image[b] = static_cast<uint8_t>(bits >> (8 * b));
    p.image.resize(4096 + 1024 * 4 + 4096);  // room for dram element 1024 (bytes 4096..4099)
    for (int b = 0; b < 4; ++b) p.image[4096 + b] = static_cast<uint8_t>(bits >> (8 * b));
    const auto d = check_program(p);
    if (iter_out == 8) {
      EXPECT_TRUE(d.empty()) << all(d);
    } else {
      ASSERT_EQ(d.size(), 1u) << all(d);
      EXPECT_EQ(d[0].rule, VerifyRule::kSramBounds);
      EXPECT_EQ(d[0].insn, 1u);
      EXPECT_EQ(d[0].message,
                "insn 1 (GEMM): acc index 2048 out of range 0..2047 (uop slot 5 index 2040 + 8*1 + 0*0)");
    }
  }
}

}  // namespace
}  // namespace tessel::isa
