// fsim: illegal streams fail with a SimError that names the module, the queue and the
// instruction index; the simulator is usable again afterwards.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "sim_test_util.h"

namespace tessel::sim {
namespace {

using isa::AluOp;
using isa::DepFlags;
using isa::MemType;
using isa::Module;
using isa::Opcode;
using isa::Uop;
using test::ProgramBuilder;
using ::testing::HasSubstr;

constexpr DepFlags kPopPrev{true, false, false, false};
constexpr DepFlags kPopNext{false, true, false, false};
constexpr DepFlags kPushPrev{false, false, true, false};
constexpr DepFlags kPushNext{false, false, false, true};

/// Runs `p` and returns the SimError message (the test fails if it does not throw one).
std::string run_error(FunctionalSimulator& sim, const isa::Program& p) {
  try {
    test::run_program(sim, p);
  } catch (const SimError& e) {
    return e.what();
  }
  ADD_FAILURE() << "program '" << p.name << "' ran without a SimError";
  return "";
}

std::string run_error(const isa::Program& p) {
  FunctionalSimulator sim(p.config);
  return run_error(sim, p);
}

TEST(FsimError, DeadlockNamesEveryBlockedModuleQueueAndInsn) {
  ProgramBuilder b;
  b.emit(isa::make_noop(Module::kLoad, kPopNext));     // waits for g2l, which nobody pushes
  b.emit(isa::make_noop(Module::kCompute, kPopPrev));  // waits for l2g, which load never pushes
  b.emit(isa::make_finish());
  const std::string m = run_error(b.program());
  EXPECT_THAT(m, HasSubstr("deadlock: "));
  EXPECT_THAT(m, HasSubstr("load waits on g2l (empty) at insn 0 (LOAD INP)"));
  EXPECT_THAT(m, HasSubstr("compute waits on l2g (empty) at insn 1 (LOAD UOP)"));
}

TEST(FsimError, FullCommandQueueBlocksFetch) {
  // Compute's first instruction waits for a token that the load instruction at index 2 pushes;
  // with one compute command slot, fetch cannot get past insn 1 to dispatch it.
  auto program = [](int depth) {
    isa::HwConfig cfg;
    cfg.cmd_queue_depth = depth;
    ProgramBuilder b(cfg);
    b.emit(isa::make_noop(Module::kCompute, kPopPrev));
    b.emit(isa::make_noop(Module::kCompute, {}));
    b.emit(isa::make_noop(Module::kLoad, kPushNext));
    b.emit(isa::make_finish());
    return b.program();
  };
  const std::string m = run_error(program(1));
  EXPECT_THAT(m, HasSubstr("compute waits on l2g (empty) at insn 0 (LOAD UOP)"));
  EXPECT_THAT(m, HasSubstr("fetch waits on the compute command queue (full, depth 1) at insn 1"));
  // Two slots are enough: fetch reaches the load at index 2.
  const isa::Program ok = program(2);
  FunctionalSimulator sim(ok.config);
  RunStats st;
  test::run_program(sim, ok, &st);
  EXPECT_EQ(st.counters.insn_count, 4u);
}

TEST(FsimError, TokenQueueOverflowIsAReportedDeadlock) {
  isa::HwConfig cfg;
  cfg.token_queue_depth = 1;
  ProgramBuilder b(cfg);
  b.emit(isa::make_noop(Module::kLoad, kPushNext));
  b.emit(isa::make_noop(Module::kLoad, kPushNext));  // l2g already holds its one token
  b.emit(isa::make_finish());
  const std::string m = run_error(b.program());
  EXPECT_THAT(m, HasSubstr("load waits on l2g (full, depth 1) at insn 1 (LOAD INP)"));
  EXPECT_THAT(m, HasSubstr("compute waits on the load command queue to drain"));
}

TEST(FsimError, FullTokenQueueOnlyStallsWhenTheConsumerDrainsIt) {
  isa::HwConfig cfg;
  cfg.token_queue_depth = 1;
  ProgramBuilder b(cfg);
  for (int k = 0; k < 3; ++k) b.emit(isa::make_noop(Module::kLoad, kPushNext));
  for (int k = 0; k < 3; ++k) b.emit(isa::make_noop(Module::kCompute, kPopPrev));
  b.emit(isa::make_finish());
  FunctionalSimulator sim(cfg);
  RunStats st;
  test::run_program(sim, b.program(), &st);
  EXPECT_EQ(st.counters.insn_count, 7u);
}

TEST(FsimError, TokensLeftAtFinish) {
  ProgramBuilder b;
  b.emit(isa::make_noop(Module::kLoad, kPushNext));
  b.emit(isa::make_noop(Module::kCompute, kPushNext));
  b.emit(isa::make_finish());
  const std::string m = run_error(b.program());
  EXPECT_THAT(m, HasSubstr("compute module: insn 2 (FINISH): token queues not empty at finish: "
                           "l2g holds 1, g2s holds 1"));
}

TEST(FsimError, IllegalDependencyFlags) {
  {
    ProgramBuilder b;
    b.emit(isa::make_noop(Module::kLoad, kPopPrev));
    b.emit(isa::make_finish());
    EXPECT_THAT(run_error(b.program()),
                HasSubstr("load module: insn 0 (LOAD INP) sets pop_prev, which the load module "
                          "does not have"));
  }
  {
    ProgramBuilder b;
    b.emit(isa::make_noop(Module::kLoad, kPushPrev));
    b.emit(isa::make_finish());
    EXPECT_THAT(run_error(b.program()), HasSubstr("insn 0 (LOAD INP) sets push_prev"));
  }
  {
    ProgramBuilder b;
    b.emit(isa::make_noop(Module::kCompute, {}));
    b.emit(isa::make_noop(Module::kStore, kPushNext));
    b.emit(isa::make_finish());
    EXPECT_THAT(run_error(b.program()),
                HasSubstr("store module: insn 1 (STORE OUT) sets push_next, which the store "
                          "module does not have (it has no next module)"));
  }
  {
    ProgramBuilder b;
    b.emit(isa::make_noop(Module::kStore, kPopNext));
    b.emit(isa::make_finish());
    EXPECT_THAT(run_error(b.program()), HasSubstr("insn 0 (STORE OUT) sets pop_next"));
  }
}

TEST(FsimError, SramOutOfRangeAfterTheLoopNest) {
  ProgramBuilder b;
  const uint32_t u = b.add_uops("uop", {Uop{2040, 0, 0}, Uop{0, 2000, 0}, Uop{0, 0, 1000}});
  b.emit(isa::make_mem(Opcode::kLoad, MemType::kUop, 0, u, 1, 3, 3));
  b.emit(isa::make_gemm(0, 1, 1, 8, 0, 1, 0, 0));  // dst 2040..2047: fine
  b.emit(isa::make_gemm(0, 1, 2, 5, 3, 1, 0, 0));  // dst up to 2040 + 3 + 4 = 2047: fine
  b.emit(isa::make_gemm(0, 1, 1, 9, 0, 1, 0, 0));  // dst 2048 on the last iteration
  b.emit(isa::make_finish());
  EXPECT_THAT(run_error(b.program()),
              HasSubstr("compute module: insn 3 (GEMM): acc index 2048 out of range (acc depth "
                        "2048) after the loop nest"));

  auto one = [&](const isa::Instruction& bad) {
    ProgramBuilder p;
    const uint32_t uu = p.add_uops("uop", {Uop{2040, 0, 0}, Uop{0, 2000, 0}, Uop{0, 0, 1000}});
    p.emit(isa::make_mem(Opcode::kLoad, MemType::kUop, 0, uu, 1, 3, 3));
    p.emit(bad);
    p.emit(isa::make_finish());
    return run_error(p.program());
  };
  EXPECT_THAT(one(isa::make_gemm(1, 2, 4, 13, 0, 4, 0, 4)),
              HasSubstr("insn 1 (GEMM): inp index 2048 out of range (inp depth 2048)"));
  EXPECT_THAT(one(isa::make_gemm(2, 3, 1, 25, 0, 0, 0, 0, 0, 1)),
              HasSubstr("insn 1 (GEMM): wgt index 1024 out of range (wgt depth 1024)"));
  EXPECT_THAT(one(isa::make_gemm(8190, 8193, 1, 1, 0, 0, 0, 0)),
              HasSubstr("insn 1 (GEMM): uop range [8190, 8193) out of range (uop depth 8192)"));
  EXPECT_THAT(one(isa::make_alu(AluOp::kAdd, 1, 2, 1, 49, 0, 1, 0, 1)),
              HasSubstr("insn 1 (ALU ADD): acc source index 2048 out of range (acc depth 2048)"));
  {
    // The same ALU with an immediate reads no source row, so it is legal.
    ProgramBuilder p;
    const uint32_t uu = p.add_uops("uop", {Uop{0, 2000, 0}});
    p.emit(isa::make_mem(Opcode::kLoad, MemType::kUop, 0, uu, 1, 1, 1));
    p.emit(isa::make_alu(AluOp::kAdd, 0, 1, 1, 49, 0, 1, 0, 1, true, 1));
    p.emit(isa::make_finish());
    FunctionalSimulator sim({});
    EXPECT_NO_THROW(test::run_program(sim, p.program()));
    EXPECT_EQ(sim.datapath().acc_row(48)[0], 1);
  }
  EXPECT_THAT(one(isa::make_mem(Opcode::kLoad, MemType::kAcc, 2046, 0, 1, 1, 1, 0, 0, 1, 1)),
              HasSubstr("insn 1 (LOAD ACC): acc index range [2046, 2049) out of range (acc "
                        "depth 2048"));
}

TEST(FsimError, ReportsGoodEmptyProgramAfterIllegalRun) {
  // A clean run after an error: the queues and tokens were reset.
  ProgramBuilder bad;
  bad.emit(isa::make_noop(Module::kLoad, kPushNext));
  bad.emit(isa::make_finish());
  FunctionalSimulator sim({});
  EXPECT_THAT(run_error(sim, bad.program()), HasSubstr("l2g holds 1"));
  ProgramBuilder good;
  good.emit(isa::make_finish());
  RunStats st;
  test::run_program(sim, good.program(), &st);
  EXPECT_EQ(st.counters.insn_count, 1u);
}

TEST(FsimError, LoadAndStoreRangesAndForms) {
  auto one = [](auto&& build) {
    ProgramBuilder b;
    build(b);
    b.emit(isa::make_finish());
    return run_error(b.program());
  };
  EXPECT_THAT(one([](ProgramBuilder& b) {
                b.emit(isa::make_mem(Opcode::kLoad, MemType::kInp, 2047, 0, 1, 2, 2));
              }),
              HasSubstr("load module: insn 0 (LOAD INP): inp index range [2047, 2049) out of "
                        "range (inp depth 2048"));
  EXPECT_THAT(one([](ProgramBuilder& b) {
                // DRAM is the stream rounded up to one 4096-byte page: elements 255..258 of 16
                // bytes end at byte 4144.
                b.emit(isa::make_mem(Opcode::kLoad, MemType::kInp, 0, 255, 2, 2, 2, 0, 0, 1, 0));
              }),
              HasSubstr("insn 0 (LOAD INP): dram bytes [4080, 4144) out of range"));
  EXPECT_THAT(one([](ProgramBuilder& b) {
                b.add_i8("w", MemType::kWgt, std::vector<int8_t>(256));
                b.emit(isa::make_mem(Opcode::kLoad, MemType::kWgt, 0, 0, 1, 1, 1, 0, 0, 0, 1));
              }),
              HasSubstr("insn 0 (LOAD WGT): pads are illegal on wgt loads"));
  EXPECT_THAT(one([](ProgramBuilder& b) {
                b.add_uops("u", {Uop{}});
                b.emit(isa::make_mem(Opcode::kLoad, MemType::kUop, 0, 0, 1, 1, 1, 1, 0, 0, 0));
              }),
              HasSubstr("compute module: insn 0 (LOAD UOP): pads are illegal on uop loads"));
  EXPECT_THAT(one([](ProgramBuilder& b) {
                b.add_output("o", MemType::kOut, 4);
                b.emit(isa::make_mem(Opcode::kStore, MemType::kOut, 0, 0, 1, 1, 1, 0, 0, 1, 0));
              }),
              HasSubstr("store module: insn 0 (STORE OUT): pads are illegal on stores"));
  EXPECT_THAT(one([](ProgramBuilder& b) {
                b.add_output("o", MemType::kOut, 4);
                b.emit(isa::make_mem(Opcode::kStore, MemType::kAcc, 0, 0, 1, 1, 1));
              }),
              HasSubstr("insn 0 (STORE ACC): a store of memory_type acc is illegal"));
  EXPECT_THAT(one([](ProgramBuilder& b) {
                b.add_output("o", MemType::kOut, 4);
                b.emit(isa::make_mem(Opcode::kLoad, MemType::kOut, 0, 0, 1, 1, 1));
              }),
              HasSubstr("compute module: insn 0 (LOAD OUT): a load of memory_type out is "
                        "illegal"));
  EXPECT_THAT(one([](ProgramBuilder& b) {
                b.add_output("o", MemType::kOut, 4);
                b.emit(isa::make_mem(Opcode::kStore, MemType::kOut, 2041, 0, 2, 4, 4));
              }),
              HasSubstr("insn 0 (STORE OUT): out index range [2041, 2049) out of range"));
}

TEST(FsimError, DramOutOfRangeStore) {
  ProgramBuilder b;
  b.emit(isa::make_mem(Opcode::kStore, MemType::kOut, 0, 1u << 30, 1, 1, 1));
  b.emit(isa::make_finish());
  // Skip the verifier's view: load the stream directly so the store's target is far outside.
  FunctionalSimulator sim({});
  const std::string m = run_error(sim, b.program());
  EXPECT_THAT(m, HasSubstr("store module: insn 0 (STORE OUT): dram bytes [17179869184, "
                           "17179869200) out of range"));
}

TEST(FsimError, StreamProblems) {
  FunctionalSimulator sim({});
  Dram d(4096);
  // No FINISH: two no-ops and the stream ends.
  {
    ProgramBuilder b;
    b.emit(isa::make_noop(Module::kLoad, {}));
    b.emit(isa::make_noop(Module::kCompute, {}));
    LoadedProgram at = load_program(d, b.program(), 0, 1024);
    try {
      sim.run(d, at.insn_addr, at.insn_count);
      ADD_FAILURE() << "no error";
    } catch (const SimError& e) {
      EXPECT_THAT(std::string(e.what()),
                  HasSubstr("the instruction stream of 2 instructions ended without FINISH"));
    }
  }
  // An opcode that does not exist (7).
  {
    const uint8_t bad[16] = {7};
    d.write(2048, bad, 16);
    try {
      sim.run(d, 2048, 1);
      ADD_FAILURE() << "no error";
    } catch (const SimError& e) {
      EXPECT_THAT(std::string(e.what()), HasSubstr("fetch: insn 0 does not decode"));
    }
  }
  EXPECT_THROW(sim.run(d, 8, 1), SimError);        // not 16-byte aligned
  EXPECT_THROW(sim.run(d, 4080, 2), SimError);     // stream runs past the end of DRAM
}

}  // namespace
}  // namespace tessel::sim
