// Every verifier rule has a failing input, and the message names the instruction, the rule's
// subject and the values.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "isa/asm.h"
#include "isa/verifier.h"
#include "support/error.h"
#include "tests/common/token_streams.h"
#include "verifier_fixtures.h"

namespace tessel::isa {
namespace {

// Replaces line `line` (0-based, counting every line of legal_kernel_text()) by `text`.
Program kernel_with(size_t line, const std::string& text, HwConfig cfg = HwConfig{}) {
  std::string src = legal_kernel_text();
  size_t start = 0;
  for (size_t i = 0; i < line; ++i) start = src.find('\n', start) + 1;
  const size_t end = src.find('\n', start);
  src.replace(start, end - start, text);
  Program p = assemble(src, cfg, "bad");
  p.add_segment("inp", SegmentKind::kInput, 32);
  p.add_segment("wgt", SegmentKind::kConst, 256);
  p.add_segment("out", SegmentKind::kOutput, 32);
  return p;
}

// Line numbers in legal_kernel_text(): 0,1 .uop; 2 LOAD UOP; 3 LOAD INP; 4 LOAD WGT; 5 GEMM reset;
// 6 GEMM; 7 ALU; 8 STORE; 9 load noop; 10 compute noop; 11 FINISH. Instruction index = line - 2.

// Expects exactly one diagnostic with this rule and message.
void expect_one(const Program& p, VerifyRule rule, const std::string& message) {
  const auto d = check_program(p);
  ASSERT_EQ(d.size(), 1u) << all(d);
  EXPECT_EQ(to_string(d[0].rule), to_string(rule));
  EXPECT_EQ(d[0].message, message);
  try {
    verify(p);
    ADD_FAILURE() << "verify did not throw";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

bool has(const std::vector<Diagnostic>& d, VerifyRule rule, const std::string& fragment) {
  for (const auto& x : d) {
    if (x.rule == rule && x.message.find(fragment) != std::string::npos) return true;
  }
  return false;
}

TEST(IsaVerifierErrors, Config) {
  Program p = legal_kernel();
  p.config.log_acc_width = 4;
  const auto d = check_program(p);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].rule, VerifyRule::kConfig);
  EXPECT_NE(d[0].message.find("LOG_ACC_WIDTH"), std::string::npos);
}

TEST(IsaVerifierErrors, Fields) {
  Program p = legal_kernel();
  p.insns[1].x_pad_1 = 16;
  expect_one(p, VerifyRule::kFields, "insn 1 (LOAD INP): LOAD field x_pad_1: 16 does not fit 4 bits (0..15)");
  p = legal_kernel();
  p.uops[1].wgt = 1024;
  const auto d = check_program(p);
  EXPECT_TRUE(has(d, VerifyRule::kFields, "uop table entry 1: uop field wgt_idx: 1024")) << all(d);
  EXPECT_TRUE(has(d, VerifyRule::kUop, "uop table entry 1 (1, 1, 1024) differs from the image's uop segment (1, 1, 0)"))
      << all(d);
}

TEST(IsaVerifierErrors, MemTypes) {
  // LOAD OUT is dispatched to compute, like the no-op it replaces.
  expect_one(kernel_with(10, "LOAD OUT sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev|pop_next"), VerifyRule::kMemType,
             "insn 8 (LOAD OUT): LOAD of OUT is illegal (OUT is written by GEMM/ALU and read by STORE)");
  expect_one(kernel_with(8, "STORE ACC sram=0 dram=192 y=1 x=2 stride=2 deps=pop_prev|push_prev"), VerifyRule::kMemType,
             "insn 6 (STORE ACC): STORE must read OUT, not ACC");
}

TEST(IsaVerifierErrors, Pads) {
  expect_one(kernel_with(4, "LOAD WGT sram=0 dram=32 y=1 x=1 stride=1 pad=0,0,0,1 deps=push_next"), VerifyRule::kPad,
             "insn 2 (LOAD WGT): pads 0,0,0,1 are illegal on LOAD WGT (only LOADs of INP, ACC, ACC_8BIT pad)");
  expect_one(kernel_with(2, "LOAD UOP sram=0 dram=0 y=1 x=2 stride=2 pad=1,0,0,0"), VerifyRule::kPad,
             "insn 0 (LOAD UOP): pads 1,0,0,0 are illegal on LOAD UOP (only LOADs of INP, ACC, ACC_8BIT pad)");
  expect_one(kernel_with(8, "STORE OUT sram=0 dram=768 y=1 x=2 stride=2 pad=0,1,0,0 deps=pop_prev|push_prev"),
             VerifyRule::kPad,
             "insn 6 (STORE OUT): pads 0,1,0,0 are illegal on STORE OUT (only LOADs of INP, ACC, ACC_8BIT pad)");
  // Pads on INP are legal (the padded rectangle is 3 x 3 rows).
  const auto d = check_program(kernel_with(3, "LOAD INP sram=0 dram=256 y=1 x=1 stride=1 pad=1,1,1,1"));
  EXPECT_TRUE(d.empty()) << all(d);
}

TEST(IsaVerifierErrors, DependencyFlagsPerModule) {
  // The load module has no previous module (the extra flag is not counted as a token).
  expect_one(kernel_with(4, "LOAD WGT sram=0 dram=32 y=1 x=1 stride=1 deps=pop_prev|push_next"), VerifyRule::kDeps,
             "insn 2 (LOAD WGT): the load module has no previous module: pop_prev is illegal");
  expect_one(kernel_with(3, "LOAD INP sram=0 dram=256 y=2 x=1 stride=1 deps=push_prev"), VerifyRule::kDeps,
             "insn 1 (LOAD INP): the load module has no previous module: push_prev is illegal");
  expect_one(kernel_with(8, "STORE OUT sram=0 dram=768 y=1 x=2 stride=2 deps=pop_prev|push_prev|push_next"),
             VerifyRule::kDeps, "insn 6 (STORE OUT): the store module has no next module: push_next is illegal");
  expect_one(kernel_with(8, "STORE OUT sram=0 dram=768 y=1 x=2 stride=2 deps=pop_prev|push_prev|pop_next"),
             VerifyRule::kDeps, "insn 6 (STORE OUT): the store module has no next module: pop_next is illegal");
}

TEST(IsaVerifierErrors, TokenBalance) {
  // The ALU pushes an extra g2l token that the load module never pops; FINISH then runs with it
  // still queued.
  const Program p = kernel_with(7, "ALU SHR uop=0:2 iter=1,1 dst=0,0 src=0,0 imm=4 deps=push_prev|push_next");
  const auto d = check_program(p);
  EXPECT_TRUE(has(d, VerifyRule::kTokenBalance, "token queue g2l (compute->load): 2 pushes but 1 pops")) << all(d);
  EXPECT_TRUE(has(d, VerifyRule::kFinish, "insn 9 (FINISH): token queue g2l (compute->load) holds 1 token(s) when FINISH completes")) << all(d);
}

TEST(IsaVerifierErrors, DeadlockFromCircularWait) {
  // Balanced counts, but the load module waits for compute's g2l token before pushing the l2g
  // token that compute waits for.
  const Program p = assemble(R"(LOAD INP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_next|push_next
GEMM uop=0:0 iter=0,0 dst=0,0 src=0,0 wgt=0,0 deps=pop_prev|push_prev
FINISH
)", HwConfig{});
  expect_one(p, VerifyRule::kDeadlock,
             "insn 0 (LOAD INP): deadlock: the load module at insn 0 (LOAD INP) waits to pop token queue g2l "
             "(compute->load), which is empty; the compute module at insn 1 (GEMM) waits to pop token queue l2g "
             "(load->compute), which is empty");
}

// Both streams (tests/common/token_streams.h) are legal with two-token queues and deadlock with
// one-token queues the same way: the load module waits to push l2g, compute to push g2l. The
// second one deadlocks only because an instruction's own pop does not make room for its push
// (as in fsim and the cycle model).
TEST(IsaVerifierErrors, DeadlockFromFullTokenQueue) {
  for (const std::string text : {testing::kTwoTokensEachWayBeforeAnyPop, testing::kPopMakesRoomOnlyAfterItsStart}) {
    HwConfig cfg;
    cfg.token_queue_depth = 2;
    EXPECT_TRUE(check_program(assemble(text, cfg)).empty()) << all(check_program(assemble(text, cfg)));
    cfg.token_queue_depth = 1;
    expect_one(assemble(text, cfg), VerifyRule::kDeadlock,
               "insn 1 (LOAD INP): deadlock: the load module at insn 1 (LOAD INP) waits to push token queue l2g "
               "(load->compute), which is full (1 tokens, TOKEN_QUEUE_DEPTH=1); the compute module at insn 5 (LOAD "
               "UOP) waits to push token queue g2l (compute->load), which is full (1 tokens, TOKEN_QUEUE_DEPTH=1)");
  }
}

TEST(IsaVerifierErrors, DeadlockFromFullCommandQueue) {
  // The first STORE waits for a g2s token that the GEMM after the second STORE pushes; with a
  // one-entry command queue, fetch cannot get past the second STORE.
  const std::string text = testing::kStoreTokenAfterSecondStore;
  HwConfig cfg;
  cfg.cmd_queue_depth = 2;
  EXPECT_TRUE(check_program(assemble(text, cfg)).empty()) << all(check_program(assemble(text, cfg)));
  cfg.cmd_queue_depth = 1;
  expect_one(assemble(text, cfg), VerifyRule::kDeadlock,
             "insn 0 (STORE OUT): deadlock: the store module at insn 0 (STORE OUT) waits to pop token queue g2s "
             "(compute->store), which is empty; fetch at insn 1 (STORE OUT) waits for room in the store command "
             "queue, which is full (1 entries)");
}

TEST(IsaVerifierErrors, Finish) {
  Program p = legal_kernel();
  p.insns.pop_back();
  auto d = check_program(p);
  EXPECT_TRUE(has(d, VerifyRule::kFinish, "insn 8 (LOAD UOP): the stream must end with FINISH")) << all(d);
  p = legal_kernel();
  p.insns.insert(p.insns.begin() + 3, make_finish());
  d = check_program(p);
  EXPECT_TRUE(has(d, VerifyRule::kFinish, "insn 3 (FINISH): FINISH before the end of the stream (the last instruction is insn 10)"))
      << all(d);
  Program empty = legal_kernel();
  empty.insns.clear();
  expect_one(empty, VerifyRule::kFinish, "the stream is empty; it must end with FINISH");
  // FINISH waits for load and store to drain (docs/microarchitecture.md section 4), so a STORE
  // still queued when compute reaches FINISH is legal: it runs first and pops its token.
  const Program drained = assemble(R"(GEMM uop=0:0 iter=0,0 dst=0,0 src=0,0 wgt=0,0 deps=push_next
STORE OUT sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev
FINISH
)", HwConfig{});
  d = check_program(drained);
  EXPECT_TRUE(d.empty()) << all(d);
  // A token nobody pops is still in its queue when FINISH completes.
  const Program leftover = assemble(R"(GEMM uop=0:0 iter=0,0 dst=0,0 src=0,0 wgt=0,0 deps=push_next
FINISH
)", HwConfig{});
  d = check_program(leftover);
  EXPECT_TRUE(has(d, VerifyRule::kFinish,
                  "insn 1 (FINISH): token queue g2s (compute->store) holds 1 token(s) when FINISH completes"))
      << all(d);
}

TEST(IsaVerifierErrors, SramBounds) {
  expect_one(kernel_with(3, "LOAD INP sram=2047 dram=256 y=2 x=1 stride=1"), VerifyRule::kSramBounds,
             "insn 1 (LOAD INP): SRAM rows 2047..2048 (2 x 1) out of range 0..2047 of the input scratchpad");
  expect_one(kernel_with(3, "LOAD INP sram=2040 dram=256 y=2 x=1 stride=1 pad=1,1,1,1"), VerifyRule::kSramBounds,
             "insn 1 (LOAD INP): SRAM rows 2040..2051 (4 x 3) out of range 0..2047 of the input scratchpad");
  expect_one(kernel_with(4, "LOAD WGT sram=1024 dram=32 y=1 x=1 stride=1 deps=push_next"), VerifyRule::kSramBounds,
             "insn 2 (LOAD WGT): SRAM rows 1024..1024 (1 x 1) out of range 0..1023 of the weight scratchpad");
  expect_one(kernel_with(8, "STORE OUT sram=2047 dram=768 y=1 x=2 stride=2 deps=pop_prev|push_prev"),
             VerifyRule::kSramBounds,
             "insn 6 (STORE OUT): SRAM rows 2047..2048 (1 x 2) out of range 0..2047 of the output buffer");
  // GEMM: uop 1 has dst 1; 2 outer iterations of 2047 reach ACC row 2048.
  expect_one(kernel_with(6, "GEMM uop=0:2 iter=2,1 dst=2047,0 src=0,0 wgt=0,0 deps=pop_prev|push_prev"),
             VerifyRule::kSramBounds,
             "insn 4 (GEMM): acc index 2048 out of range 0..2047 (uop slot 1 index 1 + 1*2047 + 0*0)");
  expect_one(kernel_with(6, "GEMM uop=0:2 iter=1,3 dst=0,0 src=0,1024 wgt=0,0 deps=pop_prev|push_prev"),
             VerifyRule::kSramBounds,
             "insn 4 (GEMM): inp index 2049 out of range 0..2047 (uop slot 1 index 1 + 0*0 + 2*1024)");
  // In range: wgt index 0 + 1*1023 = 1023 is the last WGT row.
  EXPECT_TRUE(check_program(kernel_with(6, "GEMM uop=0:2 iter=1,2 dst=0,0 src=0,0 wgt=0,1023 deps=pop_prev|push_prev")).empty());
}

TEST(IsaVerifierErrors, SramBoundsLoopNests) {
  expect_one(kernel_with(6, "GEMM uop=0:2 iter=1,3 dst=0,0 src=0,0 wgt=0,512 deps=pop_prev|push_prev"),
             VerifyRule::kSramBounds,
             "insn 4 (GEMM): wgt index 1024 out of range 0..1023 (uop slot 0 index 0 + 0*0 + 2*512)");
  // ALU reading ACC[src] (no immediate): the source index is checked against ACC.
  expect_one(kernel_with(7, "ALU ADD uop=0:2 iter=2,1 dst=0,0 src=2047,0 deps=push_next"), VerifyRule::kSramBounds,
             "insn 5 (ALU ADD): acc source index 2048 out of range 0..2047 (uop slot 1 index 1 + 1*2047 + 0*0)");
  // With an immediate the source is not read, so the same factors are legal.
  EXPECT_TRUE(check_program(kernel_with(7, "ALU ADD uop=0:2 iter=2,1 dst=0,0 src=2047,0 imm=1 deps=push_next")).empty());
  // A GEMM reset writes ACC only: INP/WGT factors are not checked.
  EXPECT_TRUE(check_program(kernel_with(5, "GEMM uop=0:2 iter=1,2 dst=0,0 src=0,2047 wgt=0,1023 reset")).empty());
  expect_one(kernel_with(5, "GEMM uop=0:8193 iter=1,1 dst=0,0 src=0,0 wgt=0,0 reset"), VerifyRule::kSramBounds,
             "insn 3 (GEMM): uop_end 8193 beyond the 8192-entry uop buffer");
}

TEST(IsaVerifierErrors, DramBounds) {
  const Program p = kernel_with(3, "LOAD INP sram=0 dram=1023 y=2 x=1 stride=1");
  expect_one(p, VerifyRule::kDramBounds,
             "insn 1 (LOAD INP): DRAM elements 1023..1024 (16-byte elements, bytes 16368..16399) outside the "
             "16384-byte program image");
  VerifyOptions opt;
  opt.check_dram_bounds = false;
  EXPECT_TRUE(check_program(p, opt).empty());
}

// Found by fuzz_program: the race rule walked every row of a LOAD's rectangle, 4.3e9 rows here,
// though the scratchpad has 2048 and sram-bounds already rejects the instruction (seconds per
// Program, a hang for the fuzzer). Rows outside the scratchpad are now not walked at all.
TEST(IsaVerifierErrors, HugeOutOfBoundsRectangleIsCheckedInBoundedTime) {
  const Program p = kernel_with(3, "LOAD INP sram=0 dram=0 y=65535 x=65535 stride=65535");
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<Diagnostic> d = check_program(p);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(std::any_of(d.begin(), d.end(), [](const Diagnostic& x) { return x.rule == VerifyRule::kSramBounds; }));
  EXPECT_LT(s, 1.0) << "check_program took " << s << " s";
}

TEST(IsaVerifierErrors, Uops) {
  // Only uop 0 is loaded: the GEMMs and the ALU (insns 3, 4, 5) all use slot 1.
  const auto d = check_program(kernel_with(2, "LOAD UOP sram=0 dram=0 y=1 x=1 stride=1"));
  ASSERT_EQ(d.size(), 3u) << all(d);
  EXPECT_EQ(d[0].rule, VerifyRule::kUop);
  EXPECT_EQ(d[0].message, "insn 3 (GEMM): uop slot 1 was never loaded (uop=0:2)");
  EXPECT_EQ(d[2].message, "insn 5 (ALU SHR): uop slot 1 was never loaded (uop=0:2)");
  expect_one(kernel_with(5, "GEMM uop=2:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0 reset"), VerifyRule::kUop,
             "insn 3 (GEMM): uop_bgn 2 is greater than uop_end 1");
  Program p = legal_kernel();
  p.image[0] = 5;  // the image's uop 0 is now dst 5
  expect_one(p, VerifyRule::kUop, "uop table entry 0 (0, 0, 0) differs from the image's uop segment (5, 0, 0)");
}

TEST(IsaVerifierErrors, VerifyReportsFirstAndCount) {
  Program p = legal_kernel();
  p.insns[1].mem_type = MemType::kOut;                       // LOAD OUT at insn 1
  p.insns[6].dep.push_next = true;                           // store push_next at insn 6
  try {
    verify(p);
    FAIL() << "verify did not throw";
  } catch (const UserError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("insn 1 (LOAD OUT): LOAD of OUT is illegal", 0), 0u) << msg;
    EXPECT_NE(msg.find("more problem"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace tessel::isa
