// Unit tests of the dependency-token insertion pass on hand-made instruction sequences.
#include <gtest/gtest.h>

#include "compiler/backend/accel/dep_tokens.h"
#include "isa/program.h"
#include "isa/spec.h"
#include "isa/verifier.h"
#include "support/error.h"

namespace tessel::compiler::accel {
namespace {

using isa::DepFlags;
using isa::Instruction;
using isa::MemType;
using isa::Opcode;

Instruction load(MemType t, uint32_t sram, uint32_t dram, uint32_t x) {
  return isa::make_mem(Opcode::kLoad, t, sram, dram, 1, x, x);
}
Instruction store(uint32_t sram, uint32_t dram, uint32_t x) {
  return isa::make_mem(Opcode::kStore, MemType::kOut, sram, dram, 1, x, x);
}
Instruction gemm(uint32_t bgn, uint32_t end, uint32_t iters, bool reset = false) {
  Instruction g;
  g.opcode = Opcode::kGemm;
  g.reset = reset;
  g.uop_bgn = bgn;
  g.uop_end = end;
  g.iter_out = 1;
  g.iter_in = iters;
  g.dst_factor_in = 1;
  g.src_factor_in = 1;
  return g;
}

DepFlags flags(bool pop_prev, bool pop_next, bool push_prev, bool push_next) {
  return {pop_prev, pop_next, push_prev, push_next};
}

// micro-ops: uop 0 = {acc 0, inp 0, wgt 0}; uop 1 = {acc 16, inp 16, wgt 1}
const std::vector<isa::Uop> kUops = {{0, 0, 0}, {16, 16, 1}};

TEST(DepTokens, LoadComputeStoreChain) {
  std::vector<Instruction> s = {
      load(MemType::kUop, 0, 0, 1),   // 0 compute: uop 0
      load(MemType::kInp, 0, 0, 16),  // 1 load
      load(MemType::kWgt, 0, 0, 1),   // 2 load
      gemm(0, 1, 16),                 // 3 compute: reads inp 0..15, wgt 0, acc 0..15
      store(0, 64, 16),               // 4 store: reads acc 0..15
  };
  insert_dependency_tokens(s, isa::HwConfig{}, kUops, 0);
  ASSERT_EQ(s.size(), 9u);
  EXPECT_EQ(s[0].dep, DepFlags{});
  EXPECT_EQ(s[1].dep, DepFlags{});                          // covered by the later push of 2
  EXPECT_EQ(s[2].dep, flags(false, false, false, true));    // push to compute after the last load
  EXPECT_EQ(s[3].dep, flags(true, false, false, true));     // pop load token, push to store
  EXPECT_EQ(s[4].dep, flags(true, false, false, false));    // pop compute token
  // the VTA-style ending
  EXPECT_EQ(s[5].opcode, Opcode::kLoad);
  EXPECT_EQ(s[5].x_size, 0u);
  EXPECT_EQ(s[5].dep, flags(false, false, false, true));
  EXPECT_EQ(s[6].opcode, Opcode::kStore);
  EXPECT_EQ(s[6].dep, flags(false, false, true, false));
  EXPECT_EQ(s[7].module(), isa::Module::kCompute);
  EXPECT_EQ(s[7].dep, flags(true, true, false, false));
  EXPECT_EQ(s[8].opcode, Opcode::kFinish);
}

TEST(DepTokens, WriteAfterReadOnlyWhenRegionsOverlap) {
  std::vector<Instruction> s = {
      load(MemType::kUop, 0, 0, 2),    // 0
      load(MemType::kInp, 0, 0, 16),   // 1
      load(MemType::kWgt, 0, 0, 1),    // 2
      gemm(0, 1, 16),                  // 3 reads inp 0..15
      load(MemType::kInp, 16, 0, 16),  // 4 other half: no wait
      load(MemType::kInp, 8, 0, 4),    // 5 overwrites inp 8..11 read by 3: WAR
  };
  insert_dependency_tokens(s, isa::HwConfig{}, kUops, 0);
  EXPECT_EQ(s[3].dep, flags(true, false, true, false));  // pops load token, pushes to load
  EXPECT_EQ(s[4].dep, DepFlags{});
  EXPECT_EQ(s[5].dep, flags(false, true, false, false));  // pops the compute token
}

// A pads-only LOAD (y_size 0, pad rows; inject_dma_copy's row wholly in the padding) writes its
// pad rows: it overwrites rows a GEMM read and must wait for it (it once counted as no access,
// and the verifier rejected the stream). x_size 0 is no access at all.
TEST(DepTokens, PadsOnlyLoadWritesItsPadRows) {
  Instruction pads = isa::make_mem(Opcode::kLoad, MemType::kInp, 8, 0, 0, 4, 4, 0, 1);  // row 8..11 zeros
  ASSERT_EQ(pads.y_size, 0u);
  ASSERT_EQ(pads.y_pad_1, 1u);
  const std::vector<Access> a = compute_accesses({pads}, isa::HwConfig{}, kUops, 0);
  ASSERT_EQ(a[0].writes.size(), 1u);
  EXPECT_EQ(a[0].writes[0].lo, 8);
  EXPECT_EQ(a[0].writes[0].hi, 11);
  Instruction none = isa::make_mem(Opcode::kLoad, MemType::kInp, 8, 0, 1, 0, 0);
  EXPECT_TRUE(compute_accesses({none}, isa::HwConfig{}, kUops, 0)[0].writes.empty());
  std::vector<Instruction> s = {
      load(MemType::kUop, 0, 0, 2),   // 0
      load(MemType::kInp, 0, 0, 16),  // 1
      load(MemType::kWgt, 0, 0, 1),   // 2
      gemm(0, 1, 16),                 // 3 reads inp 0..15
      pads,                           // 4 zeros inp 8..11: WAR
  };
  insert_dependency_tokens(s, isa::HwConfig{}, kUops, 0);
  EXPECT_EQ(s[3].dep, flags(true, false, true, false));  // pops the load token, pushes to load
  EXPECT_EQ(s[4].dep, flags(false, true, false, false));  // waits for the GEMM
}

TEST(DepTokens, ComputeWaitsForStoreBeforeReusingAccumulators) {
  std::vector<Instruction> s = {
      load(MemType::kUop, 0, 0, 2),  // 0
      gemm(0, 1, 16, true),          // 1 reset acc 0..15
      store(0, 64, 16),              // 2 reads acc 0..15
      gemm(1, 2, 16, true),          // 3 reset acc 16..31: independent of the store
      gemm(0, 1, 4, true),           // 4 reset acc 0..3: WAR against the store
  };
  insert_dependency_tokens(s, isa::HwConfig{}, kUops, 0);
  EXPECT_EQ(s[1].dep, flags(false, false, false, true));
  EXPECT_EQ(s[2].dep, flags(true, false, true, false));
  EXPECT_EQ(s[3].dep, DepFlags{});
  EXPECT_EQ(s[4].dep, flags(false, true, false, false));
}

TEST(DepTokens, OneTokenCoversEarlierProducers) {
  // two loads then a GEMM reading both: a single token after the later load; a second GEMM that
  // only needs the first load pops nothing more
  std::vector<Instruction> s = {
      load(MemType::kUop, 0, 0, 2),    // 0
      load(MemType::kInp, 0, 0, 32),   // 1
      load(MemType::kWgt, 0, 0, 2),    // 2
      gemm(0, 2, 16),                  // 3 reads inp 0..31, wgt 0..1
      gemm(0, 1, 16),                  // 4 reads inp 0..15, wgt 0
  };
  insert_dependency_tokens(s, isa::HwConfig{}, kUops, 0);
  EXPECT_EQ(s[1].dep, DepFlags{});
  EXPECT_EQ(s[2].dep, flags(false, false, false, true));
  EXPECT_EQ(s[3].dep, flags(true, false, false, false));
  EXPECT_EQ(s[4].dep, DepFlags{});
}

TEST(DepTokens, StreamPassesTheVerifier) {
  std::vector<Instruction> s = {
      load(MemType::kUop, 0, 0, 2),    load(MemType::kInp, 0, 0, 32), load(MemType::kWgt, 0, 0, 2),
      gemm(0, 2, 16),                  store(0, 64, 32),              load(MemType::kInp, 0, 0, 32),
      gemm(0, 2, 16, true),            gemm(0, 2, 16),                store(0, 64, 32),
  };
  isa::Program prog;
  prog.name = "tokens";
  const size_t data = prog.add_segment("data", isa::SegmentKind::kScratch, 64 * 1024);
  const size_t uop = prog.add_segment("uop", isa::SegmentKind::kConst, kUops.size() * 4);
  const uint64_t uop_base = prog.segments[uop].offset_bytes / 4;
  const isa::IsaSpec spec(prog.config);
  for (size_t i = 0; i < kUops.size(); ++i) {
    const uint32_t b = spec.encode_uop(kUops[i]);
    for (int k = 0; k < 4; ++k) {
      prog.image[prog.segments[uop].offset_bytes + i * 4 + k] = static_cast<uint8_t>(b >> (8 * k));
    }
  }
  prog.uops = kUops;
  (void)data;
  s[0].dram_base = static_cast<uint32_t>(uop_base);
  insert_dependency_tokens(s, prog.config, kUops, uop_base);
  prog.insns = s;
  EXPECT_NO_THROW(isa::verify(prog));
}

TEST(DepTokens, RejectsFinishInside) {
  std::vector<Instruction> s = {isa::make_finish(), load(MemType::kInp, 0, 0, 1)};
  EXPECT_THROW(insert_dependency_tokens(s, isa::HwConfig{}, {}, 0), UserError);
}

TEST(DepTokens, RejectsUnloadedMicroOps) {
  std::vector<Instruction> s = {gemm(0, 1, 4)};
  try {
    insert_dependency_tokens(s, isa::HwConfig{}, kUops, 0);
    FAIL() << "expected UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("uop row 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessel::compiler::accel

namespace tessel::compiler::accel {
namespace {

// A LOAD of bytes a STORE writes would need a token chain through compute (store -> s2g ->
// compute -> g2l -> load), which the adjacent-module insertion does not build: a clear error,
// not a racy stream (the verifier's race rule would reject it too).
TEST(DepTokens, LoadOfStoredBytesIsAnError) {
  std::vector<Instruction> s = {
      load(MemType::kUop, 0, 0, 1), load(MemType::kInp, 0, 0, 16), load(MemType::kWgt, 0, 0, 1),
      gemm(0, 1, 16),
      store(0, 64, 16),                // OUT bytes [1024, 1280)
      load(MemType::kInp, 0, 70, 2),   // INP bytes [1120, 1152): inside the stored bytes
  };
  try {
    insert_dependency_tokens(s, isa::HwConfig{}, kUops, 0);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(),
                 "instruction 5 (LOAD INP) and instruction 4 (STORE) both touch dram bytes [1120, 1152): "
                 "dependency-token insertion orders load<->compute and compute<->store only, so a Program "
                 "must not load bytes it also stores");
  }
}

}  // namespace
}  // namespace tessel::compiler::accel
