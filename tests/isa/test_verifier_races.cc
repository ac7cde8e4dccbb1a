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
#include "support/error.h"

namespace tessel::isa {
namespace {

std::string all(const std::vector<Diagnostic>& d) {
  std::string s;
  for (const auto& x : d) s += x.message + "\n";
  return s;
}

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
               {{4, "insn 4 (compute GEMM) reads inp row 0 written by insn 2 (load LOAD INP) with no dependency "
                    "token ordering them: add a push/pop between load and compute"}});
}

TEST(IsaVerifierRaces, LoadOverwritesInpRowsAGemmReadsWithoutToken) {
  expect_races(race_inp_war(false),
               {{4, "insn 4 (load LOAD INP) writes inp row 0 read by insn 3 (compute GEMM) with no dependency "
                    "token ordering them: add a push/pop between load and compute"}});
}

TEST(IsaVerifierRaces, StoreReadsOutRowsAGemmWritesWithoutToken) {
  expect_races(race_out_raw(false),
               {{2, "insn 2 (store STORE OUT) reads out row 0 written by insn 1 (compute GEMM) with no dependency "
                    "token ordering them: add a push/pop between compute and store"}});
}

TEST(IsaVerifierRaces, GemmOverwritesOutRowsAStoreReadsWithoutToken) {
  expect_races(race_out_war(false),
               {{2, "insn 2 (store STORE OUT) reads out row 0 written by insn 3 (compute GEMM) with no dependency "
                    "token ordering them: add a push/pop between compute and store"}});
}

TEST(IsaVerifierRaces, PadRowsCountAsWrites) {
  expect_races(race_pads(false),
               {{2, "insn 2 (load LOAD INP) writes inp row 0 read by insn 3 (compute GEMM) with no dependency "
                    "token ordering them: add a push/pop between load and compute"},
                {5, "insn 5 (store STORE OUT) reads out row 1 written by insn 4 (compute LOAD ACC) with no "
                    "dependency token ordering them: add a push/pop between compute and store"}});
}

// A token from the third module (store) orders nothing the load module did unless the chain
// starts with a token from load.
TEST(IsaVerifierRaces, TokenFromTheThirdModuleAloneDoesNotOrder) {
  expect_races(race_transitive(false),
               {{5, "insn 5 (compute GEMM) reads inp row 0 written by insn 1 (load LOAD INP) with no dependency "
                    "token ordering them: add a push/pop between load and compute"}});
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
      "insn 4 (load LOAD INP) writes inp row 1 read by insn 3 (compute GEMM) with no dependency token ordering "
      "them: add a push/pop between load and compute";
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
               {{3, "insn 3 (load LOAD INP) writes inp row 7 read by insn 2 (compute GEMM) with no dependency token "
                    "ordering them: add a push/pop between load and compute"}});
}

TEST(IsaVerifierRaces, VerifyThrowsTheMessage) {
  try {
    verify(race_out_raw(false));
    ADD_FAILURE() << "verify did not throw";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "insn 2 (store STORE OUT) reads out row 0 written by insn 1 (compute GEMM) with no dependency token "
              "ordering them: add a push/pop between compute and store");
  }
}

TEST(IsaVerifierRaces, RuleName) { EXPECT_EQ(to_string(VerifyRule::kRace), "race"); }

}  // namespace
}  // namespace tessel::isa
