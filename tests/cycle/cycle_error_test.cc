// Streams the cycle-level model must reject with a SimError whose message names the module, the
// queue and the instruction index; never a hang. After each error the simulator runs a valid
// stream again with the usual timing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "isa/config.h"
#include "isa/instruction.h"
#include "sim/cycle/cycle_sim.h"
#include "tests/cycle/stream.h"

namespace tessel::sim {
namespace {

using cycle_test::kInsnAddr;
using cycle_test::make_dram;
using cycle_test::make_loop;
using cycle_test::with_dep;
using isa::MemType;
using isa::Module;
using isa::Opcode;
using ::testing::HasSubstr;

/// Runs `insns` and returns the SimError message (fails the test if the run succeeds). fsim must
/// reject the same stream too (the models agree on what is illegal), unless `fsim_too` is false.
std::string error_of(CycleSimulator& sim, const std::vector<isa::Instruction>& insns,
                     const std::vector<isa::Uop>& uops = {}, bool fsim_too = true) {
  if (fsim_too) {
    Dram ref = make_dram(sim.datapath().config(), insns, uops);
    EXPECT_THROW(make_fsim(sim.datapath().config())->run(ref, kInsnAddr, uint32_t(insns.size())),
                 SimError)
        << "fsim accepted the stream";
  }
  Dram dram = make_dram(sim.datapath().config(), insns, uops);
  try {
    sim.run(dram, kInsnAddr, uint32_t(insns.size()));
  } catch (const SimError& e) {
    return e.what();
  }
  ADD_FAILURE() << "the run did not fail";
  return "";
}

/// The simulator still works: a lone FINISH takes 37 cycles on the default timing (beats 33..34,
/// dispatch 35, FINISH 36; tests/cycle/cycle_timing_test.cc FinishAlone).
void expect_usable(CycleSimulator& sim) {
  Dram dram = make_dram(sim.datapath().config(), {isa::make_finish()});
  EXPECT_EQ(sim.run(dram, kInsnAddr, 1).cycles, 37u);
}

TEST(CycleErrors, DeadlockOnMissingToken) {
  CycleSimulator sim(isa::HwConfig{});
  const std::string msg =
      error_of(sim, {with_dep(make_loop(Opcode::kGemm, 0, 0, 1, 1), true, false, false, false),
                     isa::make_finish()});
  EXPECT_THAT(msg, HasSubstr("deadlock"));
  EXPECT_THAT(msg, HasSubstr("compute waits to pop token queue l2g (empty) for instruction 0"));
  expect_usable(sim);
}

TEST(CycleErrors, DeadlockOnFullTokenQueue) {
  isa::HwConfig cfg;
  cfg.token_queue_depth = 1;
  CycleSimulator sim(cfg);
  const isa::DepFlags push_next{false, false, false, true};
  const std::string msg = error_of(
      sim, {isa::make_noop(Module::kLoad, push_next), isa::make_noop(Module::kLoad, push_next),
            isa::make_finish()});
  EXPECT_THAT(msg, HasSubstr("deadlock"));
  EXPECT_THAT(msg, HasSubstr("load waits to push into token queue l2g (full, depth 1) for "
                             "instruction 1"));
  EXPECT_THAT(msg, HasSubstr("compute waits for load (1 instruction(s) left)"));
  expect_usable(sim);
}

TEST(CycleErrors, DeadlockOnFullCommandQueue) {
  // compute holds GEMM 0 waiting for l2g; a command leaves its queue only when it starts (its
  // tokens popped), so GEMM 0 fills the one-entry compute queue, fetch cannot dispatch GEMM 1
  // and never reaches the load that would push the token.
  isa::HwConfig cfg;
  cfg.cmd_queue_depth = 1;
  CycleSimulator sim(cfg);
  const std::string msg = error_of(
      sim, {with_dep(make_loop(Opcode::kGemm, 0, 0, 1, 1), true, false, false, false),
            make_loop(Opcode::kGemm, 0, 0, 1, 1), make_loop(Opcode::kGemm, 0, 0, 1, 1),
            isa::make_noop(Module::kLoad, {false, false, false, true}), isa::make_finish()});
  EXPECT_THAT(msg, HasSubstr("deadlock"));
  // fetch: 5 instructions, beats 33..42, GEMM 0 dispatched in 43; nothing changes from 44 on.
  EXPECT_THAT(msg, HasSubstr("deadlock at cycle 44:"));
  EXPECT_THAT(msg, HasSubstr("fetch waits to dispatch instruction 1 (GEMM) into the compute "
                             "command queue (full, depth 1)"));
  EXPECT_THAT(msg, HasSubstr("compute waits to pop token queue l2g (empty) for instruction 0"));
  expect_usable(sim);
}

TEST(CycleErrors, IllegalDependencyFlag) {
  CycleSimulator sim(isa::HwConfig{});
  const std::string msg = error_of(
      sim, {isa::make_noop(Module::kLoad, {true, false, false, false}), isa::make_finish()});
  EXPECT_THAT(msg, HasSubstr("load module: insn 0"));
  EXPECT_THAT(msg, HasSubstr("pop_prev"));
  expect_usable(sim);
}

TEST(CycleErrors, SramOutOfRange) {
  CycleSimulator sim(isa::HwConfig{});
  // INP depth is 2048 rows; 2047 + 2 rows does not fit.
  const std::string msg = error_of(
      sim, {isa::make_mem(Opcode::kLoad, MemType::kInp, 2047, 256, 1, 2, 2), isa::make_finish()});
  EXPECT_THAT(msg, HasSubstr("insn 0"));
  EXPECT_THAT(msg, HasSubstr("2049"));
  expect_usable(sim);
}

TEST(CycleErrors, DramOutOfRange) {
  CycleSimulator sim(isa::HwConfig{});
  // DRAM holds 131072 bytes = 8192 INP elements.
  const std::string msg = error_of(
      sim, {isa::make_mem(Opcode::kLoad, MemType::kInp, 0, 8192, 1, 1, 1), isa::make_finish()});
  EXPECT_THAT(msg, HasSubstr("insn 0"));
  EXPECT_THAT(msg, HasSubstr("out of range"));
  expect_usable(sim);
}

TEST(CycleErrors, StreamWithoutFinish) {
  CycleSimulator sim(isa::HwConfig{});
  const std::string msg = error_of(sim, {make_loop(Opcode::kGemm, 0, 0, 1, 1)});
  EXPECT_THAT(msg, HasSubstr("without a finish"));
  expect_usable(sim);
}

TEST(CycleErrors, TokensLeftAtFinish) {
  CycleSimulator sim(isa::HwConfig{});
  const std::string msg =
      error_of(sim, {isa::make_noop(Module::kLoad, {false, false, false, true}),
                     isa::make_finish()});
  EXPECT_THAT(msg, HasSubstr("insn 1 (FINISH)"));
  EXPECT_THAT(msg, HasSubstr("l2g holds 1"));
  expect_usable(sim);
}

TEST(CycleErrors, UndecodableInstruction) {
  CycleSimulator sim(isa::HwConfig{});
  Dram dram = make_dram(isa::HwConfig{}, {isa::make_finish(), isa::make_finish()});
  const uint8_t bad_opcode = 7;
  dram.write(kInsnAddr, &bad_opcode, 1);
  try {
    sim.run(dram, kInsnAddr, 2);
    ADD_FAILURE() << "the run did not fail";
  } catch (const SimError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("fetch: instruction 0"));
  }
  expect_usable(sim);
}

TEST(CycleErrors, BadStreamPlacement) {
  CycleSimulator sim(isa::HwConfig{});
  Dram dram = make_dram(isa::HwConfig{}, {isa::make_finish()});
  EXPECT_THROW(sim.run(dram, kInsnAddr + 8, 1), SimError);
  EXPECT_THROW(sim.run(dram, kInsnAddr, 0), SimError);
  try {
    sim.run(dram, cycle_test::kDramBytes - 16, 2);
    ADD_FAILURE() << "the run did not fail";
  } catch (const SimError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("out of range"));
  }
  expect_usable(sim);
}

TEST(CycleErrors, CycleLimitNamesWhatEachModuleDoes) {
  CycleSimOptions opt;
  opt.cycle_limit = 100;
  CycleSimulator sim(isa::HwConfig{}, opt);
  // fetch beats 33..38, dispatches 39, 40, 41; the LOAD UOP starts 40, is granted 41 and its
  // beat arrives in 74 = D; the GEMM of 64 uops starts 75 and is done in 75 + 64 + 4 = 143,
  // past 100.
  const std::vector<isa::Uop> uops(1);
  const std::string msg = error_of(sim,
                                   {isa::make_mem(Opcode::kLoad, MemType::kUop, 0, 0, 1, 1, 1),
                                    make_loop(Opcode::kGemm, 0, 1, 8, 8), isa::make_finish()},
                                   uops, /*fsim_too=*/false);
  EXPECT_THAT(msg, HasSubstr("cycle limit of 100 cycles"));
  EXPECT_THAT(msg, HasSubstr("compute executes instruction 1 (GEMM) until cycle 143"));
  // A stream that fits still runs under the same limit.
  expect_usable(sim);
}

TEST(CycleErrors, ZeroCycleLimitIsRejected) {
  CycleSimOptions opt;
  opt.cycle_limit = 0;
  EXPECT_THROW(CycleSimulator(isa::HwConfig{}, opt), UserError);
}

}  // namespace
}  // namespace tessel::sim
