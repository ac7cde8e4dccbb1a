// The race rule accepts streams whose shared-scratchpad accesses are ordered by program order and
// dependency tokens, directly or through a chain of tokens (isa/verifier.h), and accesses of
// disjoint rows without any ordering.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "isa/verifier.h"
#include "race_fixtures.h"
#include "verifier_fixtures.h"

namespace tessel::isa {
namespace {

TEST(IsaVerifierRacesOk, OrderedFormsAreAccepted) {
  for (const Program& p : {race_inp_raw(true), race_inp_war(true), race_out_raw(true), race_out_war(true),
                           race_pads(true), race_transitive(true), race_dram_raw(true), race_dram_war(true),
                           race_dram_acc8(true), legal_kernel()}) {
    const auto d = check_program(p);
    EXPECT_TRUE(d.empty()) << p.name << ":\n" << all(d);
  }
}

// The racy and ordered forms differ only in dependency flags: same instructions, same rows.
TEST(IsaVerifierRacesOk, OrderedFormsDifferOnlyInTokens) {
  const std::vector<std::pair<Program, Program>> pairs = {
      {race_inp_raw(false), race_inp_raw(true)}, {race_inp_war(false), race_inp_war(true)},
      {race_out_raw(false), race_out_raw(true)}, {race_out_war(false), race_out_war(true)},
      {race_pads(false), race_pads(true)},       {race_transitive(false), race_transitive(true)},
      {race_dram_raw(false), race_dram_raw(true)}, {race_dram_war(false), race_dram_war(true)},
      {race_dram_acc8(false), race_dram_acc8(true)}};
  for (const auto& [racy, ordered] : pairs) {
    ASSERT_EQ(racy.insns.size(), ordered.insns.size()) << racy.name;
    for (size_t i = 0; i < racy.insns.size(); ++i) {
      Instruction a = racy.insns[i], b = ordered.insns[i];
      a.dep = b.dep = DepFlags{};
      EXPECT_TRUE(a == b) << racy.name << " insn " << i;
    }
  }
}

// The ordering of LOAD INP before the GEMM needs the chain load -> compute no-op -> store no-op
// -> GEMM, with tiny queues too.
TEST(IsaVerifierRacesOk, TransitiveOrderingWithTinyQueues) {
  for (Program p : {race_transitive(true), race_dram_raw(true), race_dram_war(true)}) {
    p.config.cmd_queue_depth = 1;
    p.config.token_queue_depth = 1;
    const auto d = check_program(p);
    EXPECT_TRUE(d.empty()) << p.name << ":\n" << all(d);
  }
}

// The racy DRAM stream of race_dram_raw (STORE OUT insn 0, LOAD INP insn 2, unordered) with
// footprints that share no byte: adjacent ranges, and strided rows that interleave inside each
// other's extent (STORE bytes [12288, 12304) and [12320, 12336), LOAD bytes [12304, 12320) and
// [12336, 12352)).
TEST(IsaVerifierRacesOk, DisjointDramBytesNeedNoToken) {
  Program adjacent = race_dram_raw(false);
  adjacent.insns[2].dram_base = 770;  // INP elements 770..771: bytes [12320, 12352)
  Program interleaved = race_dram_raw(false);
  Instruction& st = interleaved.insns[0];
  st.y_size = 2, st.x_size = 1, st.x_stride = 2;  // OUT elements 768, 770
  Instruction& ld = interleaved.insns[2];
  ld.y_size = 2, ld.x_size = 1, ld.x_stride = 2;  // INP elements 769, 771
  for (const Program& p : {adjacent, interleaved}) {
    const auto d = check_program(p);
    EXPECT_TRUE(d.empty()) << all(d);
  }
}

// A STORE with x_size 0 or y_size 0 moves no bytes, so the unordered LOAD of race_dram_raw does
// not race with it.
TEST(IsaVerifierRacesOk, NoOpStoreWritesNoDram) {
  for (auto [y, x] : {std::pair<uint32_t, uint32_t>{1, 0}, {0, 2}}) {
    Program p = race_dram_raw(false);
    p.insns[0].y_size = y;
    p.insns[0].x_size = x;
    const auto d = check_program(p);
    EXPECT_TRUE(d.empty()) << "y=" << y << " x=" << x << ":\n" << all(d);
  }
}

// An unordered LOAD INP of row 1 while the GEMM reads only row 0 (the resident uop has src 0 and
// the nest does not step src) is not a race.
TEST(IsaVerifierRacesOk, DisjointRowsNeedNoToken) {
  const Program p = race_program(R"(LOAD UOP sram=0 dram=0 y=1 x=1 stride=1
LOAD INP sram=0 dram=256 y=1 x=1 stride=1
LOAD WGT sram=0 dram=32 y=1 x=1 stride=1 deps=push_next
GEMM uop=0:1 iter=1,2 dst=0,1 src=0,0 wgt=0,0 deps=pop_prev
LOAD INP sram=1 dram=256 y=1 x=1 stride=1 deps=push_next
LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev
FINISH
)",
                                 "disjoint");
  const auto d = check_program(p);
  EXPECT_TRUE(d.empty()) << all(d);
}

// iter=2,3 with src=5,2 reads INP rows 0,2,4,5,7,9 (uop src 0): rows 1, 3, 6 and 8 are free for
// an unordered LOAD INP.
TEST(IsaVerifierRacesOk, RowsBetweenTheNestStepsNeedNoToken) {
  const Program p = race_program(R"(LOAD UOP sram=0 dram=0 y=1 x=1 stride=1
LOAD WGT sram=0 dram=32 y=1 x=1 stride=1 deps=push_next
GEMM uop=0:1 iter=2,3 dst=0,0 src=5,2 wgt=0,0 deps=pop_prev
LOAD INP sram=1 dram=256 y=1 x=1 stride=1
LOAD INP sram=3 dram=256 y=1 x=1 stride=1
LOAD INP sram=6 dram=256 y=1 x=1 stride=1
LOAD INP sram=8 dram=256 y=1 x=1 stride=1 deps=push_next
LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev
FINISH
)",
                                 "between");
  const auto d = check_program(p);
  EXPECT_TRUE(d.empty()) << all(d);
}

}  // namespace
}  // namespace tessel::isa
