// The race rule rejects every kind of unordered access to a shared scratchpad row (isa/verifier.h)
// with a message naming both instructions, the scratchpad, the first conflicting row and the
// missing ordering. Expected messages are worked out by hand from the fixtures' streams and the
// abstract execution order (compute first, then fetch, load, store).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "isa/asm.h"
#include "isa/verifier.h"
#include "race_fixtures.h"
#include "verifier_fixtures.h"
#include "support/error.h"

namespace tessel::isa {
namespace {

// Expects exactly these race diagnostics, at these instructions, in this order.
void expect_races(const Program& p, const std::vector<std::pair<size_t, std::string>>& want) {
  const auto d = check_program(p);
  ASSERT_EQ(d.size(), want.size()) << all(d);
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(to_string(d[k].rule), "race");
    EXPECT_EQ(d[k].insn, std::optional<size_t>(want[k].first));
    EXPECT_EQ(d[k].message, want[k].second);
  }
}

TEST(IsaVerifierRaces, GemmReadsInpRowsALoadWritesWithoutToken) {
  expect_races(race_inp_raw(false),
               {{4, "insn 4 (compute GEMM) reads inp row 0 that insn 2 (load LOAD INP) writes, with no dependency "
                    "token ordering them: add a push/pop from load to compute"}});
}

TEST(IsaVerifierRaces, LoadOverwritesInpRowsAGemmReadsWithoutToken) {
  expect_races(race_inp_war(false),
               {{4, "insn 4 (load LOAD INP) writes inp row 0 that insn 3 (compute GEMM) reads earlier, with no "
                    "dependency token ordering them: add a push/pop from compute to load"}});
}

TEST(IsaVerifierRaces, StoreReadsOutRowsAGemmWritesWithoutToken) {
  expect_races(race_out_raw(false),
               {{2, "insn 2 (store STORE OUT) reads out row 0 that insn 1 (compute GEMM) writes, with no dependency "
                    "token ordering them: add a push/pop from compute to store"}});
}

// The abstract execution retires the GEMM (insn 3) before the STORE (insn 2); the message names
// the pair in stream order, the overwrite coming after the read.
TEST(IsaVerifierRaces, GemmOverwritesOutRowsAStoreReadsWithoutToken) {
  expect_races(race_out_war(false),
               {{3, "insn 3 (compute GEMM) writes out row 0 that insn 2 (store STORE OUT) reads earlier, with no "
                    "dependency token ordering them: add a push/pop from store to compute"}});
}

TEST(IsaVerifierRaces, PadRowsCountAsWrites) {
  expect_races(race_pads(false),
               {{3, "insn 3 (compute GEMM) reads inp row 0 that insn 2 (load LOAD INP) writes, with no dependency "
                    "token ordering them: add a push/pop from load to compute"},
                {5, "insn 5 (store STORE OUT) reads out row 1 that insn 4 (compute LOAD ACC) writes, with no "
                    "dependency token ordering them: add a push/pop from compute to store"}});
}

// A token from the third module (store) orders nothing the load module did unless the chain
// starts with a token from load.
TEST(IsaVerifierRaces, TokenFromTheThirdModuleAloneDoesNotOrder) {
  expect_races(race_transitive(false),
               {{5, "insn 5 (compute GEMM) reads inp row 0 that insn 1 (load LOAD INP) writes, with no dependency "
                    "token ordering them: add a push/pop from load to compute"}});
}

// The rows a GEMM reads come from the micro-ops resident in the uop buffer (slot 0 holds uop
// table entry 1, src 1) and the loop nest (src_factor_in 1 over iter_in 2 reaches row 1 from
// uop 0): both make the GEMM read INP row 1, which an unordered LOAD INP writes.
TEST(IsaVerifierRaces, RowsFollowTheResidentUopsAndTheLoopNest) {
  const std::string rest = R"(LOAD INP sram=0 dram=256 y=1 x=1 stride=1
LOAD WGT sram=0 dram=32 y=1 x=1 stride=1 deps=push_next
{}
LOAD INP sram=1 dram=256 y=1 x=1 stride=1 deps=push_next
LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev
FINISH
)";
  auto with = [&](const std::string& uop_load, const std::string& gemm) {
    std::string text = uop_load + "\n" + rest;
    text.replace(text.find("{}"), 2, gemm);
    return race_program(text, "resident");
  };
  const std::string msg =
      "insn 4 (load LOAD INP) writes inp row 1 that insn 3 (compute GEMM) reads earlier, with no dependency token "
      "ordering them: add a push/pop from compute to load";
  expect_races(with("LOAD UOP sram=0 dram=1 y=1 x=1 stride=1",
                    "GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0 deps=pop_prev"),
               {{4, msg}});
  expect_races(with("LOAD UOP sram=0 dram=0 y=1 x=1 stride=1",
                    "GEMM uop=0:1 iter=1,2 dst=0,0 src=0,1 wgt=0,0 deps=pop_prev"),
               {{4, msg}});
}

// Outer and inner steps combine: iter=2,3 with src=5,2 reads INP rows 0,2,4 and 5,7,9 (uop src 0),
// so an unordered LOAD INP of rows 6..7 races on row 7, the first row both touch.
TEST(IsaVerifierRaces, RowsCombineOuterAndInnerSteps) {
  expect_races(race_program(R"(LOAD UOP sram=0 dram=0 y=1 x=1 stride=1
LOAD WGT sram=0 dram=32 y=1 x=1 stride=1 deps=push_next
GEMM uop=0:1 iter=2,3 dst=0,0 src=5,2 wgt=0,0 deps=pop_prev
LOAD INP sram=6 dram=256 y=1 x=2 stride=2 deps=push_next
LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev
FINISH
)",
                            "steps"),
               {{3, "insn 3 (load LOAD INP) writes inp row 7 that insn 2 (compute GEMM) reads earlier, with no "
                    "dependency token ordering them: add a push/pop from compute to load"}});
}

// DRAM: a LOAD INP reads bytes a STORE writes, the compute no-op between them not passing the
// store's token on; the first common range is the STORE's second element.
TEST(IsaVerifierRaces, LoadReadsDramBytesAStoreWritesWithoutToken) {
  expect_races(race_dram_raw(false),
               {{2, "insn 2 (load LOAD INP) reads dram bytes [12304, 12320) that insn 0 (store STORE OUT) writes, "
                    "with no dependency token ordering them: add a push/pop chain from store to load"}});
}

// DRAM write-after-read: only the LOAD's second strided row overlaps the STORE.
TEST(IsaVerifierRaces, StoreOverwritesDramBytesALoadReadsWithoutToken) {
  expect_races(race_dram_war(false),
               {{2, "insn 2 (store STORE OUT) writes dram bytes [12352, 12368) that insn 0 (load LOAD INP) reads "
                    "earlier, with no dependency token ordering them: add a push/pop chain from load to store"}});
}

TEST(IsaVerifierRaces, ComputeLoadReadsDramBytesAStoreWritesWithoutToken) {
  expect_races(race_dram_acc8(false),
               {{1, "insn 1 (compute LOAD ACC_8BIT) reads dram bytes [12288, 12320) that insn 0 (store STORE OUT) "
                    "writes, with no dependency token ordering them: add a push/pop from store to compute"}});
}

// One diagnostic per conflict found, scratchpads before DRAM: with the LOAD ACC_8BIT of
// race_dram_acc8 moved onto OUT rows 0..1, the STORE both reads OUT rows the load overwrites and
// writes DRAM bytes the load reads; the abstract execution retires the load first, so the
// STORE's retirement finds both conflicts and reports the OUT one.
TEST(IsaVerifierRaces, ScratchpadConflictBeforeDram) {
  Program p = race_dram_acc8(false);
  p.insns[1].sram_base = 0;
  expect_races(p, {{1, "insn 1 (compute LOAD ACC_8BIT) writes out row 0 that insn 0 (store STORE OUT) reads "
                       "earlier, with no dependency token ordering them: add a push/pop from store to compute"}});
}

// Every LOAD type reads DRAM: STORE OUT writes image bytes [12288, 12320) (OUT elements 768..769,
// 16 bytes each) and an unordered LOAD of each type starts at image byte 12288 (element 12288 / E
// for its element size E: UOP 4, INP 16, WGT 256, ACC 64, ACC_8BIT 16 bytes).
TEST(IsaVerifierRaces, EveryLoadTypeReadsDram) {
  struct Case {
    std::string load, bytes, module, fix;
  };
  const std::vector<Case> cases = {
      {"LOAD UOP sram=0 dram=3072 y=1 x=2 stride=2", "[12288, 12296)", "compute LOAD UOP", "add a push/pop"},
      {"LOAD INP sram=0 dram=768 y=1 x=2 stride=2", "[12288, 12320)", "load LOAD INP", "add a push/pop chain"},
      {"LOAD WGT sram=0 dram=48 y=1 x=1 stride=1", "[12288, 12320)", "load LOAD WGT", "add a push/pop chain"},
      {"LOAD ACC sram=2 dram=192 y=1 x=1 stride=1", "[12288, 12320)", "compute LOAD ACC", "add a push/pop"},
      {"LOAD ACC_8BIT sram=2 dram=768 y=1 x=2 stride=2", "[12288, 12320)", "compute LOAD ACC_8BIT",
       "add a push/pop"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.load);
    const Program p = race_program("STORE OUT sram=0 dram=768 y=1 x=2 stride=2\n" + c.load + "\nFINISH\n", "types");
    const std::string to = c.module.substr(0, c.module.find(' '));
    expect_races(p, {{1, "insn 1 (" + c.module + ") reads dram bytes " + c.bytes +
                             " that insn 0 (store STORE OUT) writes, with no dependency token ordering them: " + c.fix +
                             " from store to " + to}});
  }
}

TEST(IsaVerifierRaces, VerifyThrowsTheMessage) {
  try {
    verify(race_out_raw(false));
    ADD_FAILURE() << "verify did not throw";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "insn 2 (store STORE OUT) reads out row 0 that insn 1 (compute GEMM) writes, with no dependency token "
              "ordering them: add a push/pop from compute to store");
  }
}

TEST(IsaVerifierRaces, RuleName) { EXPECT_EQ(to_string(VerifyRule::kRace), "race"); }

}  // namespace
}  // namespace tessel::isa
