// The RTL testbench's run tracker (sim/rtl/rtl_bench.h) fed with hand-made dbg pulses: the
// timeline it builds, the run's cycle count, protocol errors, the cycle limit and the
// no-progress watchdog (no RTL involved).
#include "sim/rtl/rtl_bench.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

namespace tessel::sim::rtl {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// LOAD INP (load, pushes l2g), GEMM of 5 uops (compute, pops l2g), FINISH.
DecodedStream three_insns() {
  DecodedStream s;
  isa::Instruction load = isa::make_mem(isa::Opcode::kLoad, isa::MemType::kInp, 0, 0, 1, 1, 1);
  load.dep.push_next = true;
  isa::Instruction gemm = isa::make_gemm(0, 5, 1, 1, 0, 0, 0, 0);
  gemm.dep.pop_prev = true;
  s.insns = {load, gemm, isa::make_finish()};
  s.by_module[size_t(isa::Module::kLoad)] = {0};
  s.by_module[size_t(isa::Module::kCompute)] = {1, 2};
  s.quiet_cycles = {1, 5 + 4, 0};
  return s;
}

BenchLimits limits(uint64_t window, uint64_t cycle_limit = 1000) {
  BenchLimits l;
  l.cycle_limit = cycle_limit;
  l.watchdog_window = window;
  l.wave_first = 0;
  l.wave_last = UINT64_MAX;
  return l;
}

TopSignals pulse(uint8_t dbg, bool done = false) {
  TopSignals o;
  o.dbg = dbg;
  o.done = done;
  return o;
}

// The complete run of TimelineAndCyclesFromPulses: `done` is high in cycle 32.
std::map<uint64_t, TopSignals> complete_run() {
  return {{10, pulse(kDbgDispatch)},          {11, pulse(kDbgDispatch | kDbgLoadStart)},
          {12, pulse(kDbgDispatch)},          {20, pulse(kDbgLoadDone)},
          {21, pulse(kDbgComputeStart)},      {30, pulse(kDbgComputeDone)},
          {31, pulse(kDbgComputeStart | kDbgComputeDone)}, {32, pulse(0, true)}};
}

// Feeds `pulses` (cycle -> signals) from cycle 0 until sample() reports done or `n` cycles.
bool feed(Bench& b, const std::map<uint64_t, TopSignals>& pulses, uint64_t n) {
  for (uint64_t t = 0; t < n; ++t) {
    b.drive();
    const auto it = pulses.find(t);
    if (b.sample(it == pulses.end() ? TopSignals{} : it->second)) return true;
  }
  return false;
}

TEST(RtlBench, TimelineAndCyclesFromPulses) {
  Dram dram(4096);
  const DecodedStream s = three_insns();
  Bench b(dram, 8, 32, s, limits(100), true);
  // Load starts insn 0 the cycle after its dispatch; GEMM: D = S + n + 4 = 21 + 5 + 4; FINISH:
  // S = D = 31; done rises in FINISH's D + 1.
  ASSERT_TRUE(feed(b, complete_run(), 100));
  EXPECT_EQ(b.cycles(), 32u);
  EXPECT_EQ(b.dispatched(), 3u);
  EXPECT_EQ(b.done_count(isa::Module::kLoad), 1u);
  EXPECT_EQ(b.done_count(isa::Module::kCompute), 2u);
  const std::vector<InsnTiming> tl = b.timeline();
  ASSERT_EQ(tl.size(), 3u);
  EXPECT_EQ(tl[0], (InsnTiming{0, isa::Module::kLoad, isa::Opcode::kLoad, 10, 11, 20}));
  EXPECT_EQ(tl[1], (InsnTiming{1, isa::Module::kCompute, isa::Opcode::kGemm, 11, 21, 30}));
  EXPECT_EQ(tl[2], (InsnTiming{2, isa::Module::kCompute, isa::Opcode::kFinish, 12, 31, 31}));
}

TEST(RtlBench, StartBeforeDispatchIsAnError) {
  Dram dram(4096);
  const DecodedStream s = three_insns();
  Bench b(dram, 8, 32, s, limits(100), false);
  // Dispatched in cycle 3 and started in the same cycle: a queue push is visible from 4 on.
  EXPECT_THAT([&] { feed(b, {{3, pulse(kDbgDispatch | kDbgLoadStart)}}, 10); },
              testing::ThrowsMessage<SimError>(AllOf(
                  HasSubstr("the load module started instruction 0 before fetch dispatched it"),
                  HasSubstr("cycle 3"))));
}

TEST(RtlBench, DoneBeforeFinishIsAnError) {
  Dram dram(4096);
  const DecodedStream s = three_insns();
  Bench b(dram, 8, 32, s, limits(100), false);
  EXPECT_THAT([&] { feed(b, {{0, pulse(kDbgDispatch)}, {5, pulse(0, true)}}, 10); },
              testing::ThrowsMessage<SimError>(HasSubstr("done rose with 0 of 1 load instructions completed")));
}

TEST(RtlBench, WatchdogWaitsForTheRunningLoopThenNamesIt) {
  Dram dram(4096);
  const DecodedStream s = three_insns();
  // Window 10. The GEMM starts in cycle 5 and may run 5 + 4 quiet cycles: the deadline is
  // 5 + 9 + 10 = 24, so cycles up to 23 pass and cycle 24 fails.
  const std::map<uint64_t, TopSignals> p = {
      {0, pulse(kDbgDispatch)}, {1, pulse(kDbgDispatch | kDbgLoadStart)}, {2, pulse(kDbgDispatch)},
      {3, pulse(kDbgLoadDone)}, {5, pulse(kDbgComputeStart)}};
  {
    Bench b(dram, 8, 32, s, limits(10), false);
    EXPECT_FALSE(feed(b, p, 24));  // cycles 0..23: no error
  }
  Bench b(dram, 8, 32, s, limits(10), false);
  EXPECT_THAT([&] { feed(b, p, 25); },
              testing::ThrowsMessage<SimError>(AllOf(
                  HasSubstr("no progress for 19 cycles"), HasSubstr("at cycle 24"),
                  HasSubstr("compute started instruction 1 (GEMM, pops l2g) in cycle 5 and has not "
                            "finished"),
                  HasSubstr("compute"), HasSubstr("load is idle (1 of 1 instructions done)"))));
}

TEST(RtlBench, CycleLimit) {
  Dram dram(4096);
  const DecodedStream s = three_insns();
  {
    Bench b(dram, 8, 32, s, limits(1000, 32), false);  // a 32-cycle run fits a limit of 32
    EXPECT_TRUE(feed(b, complete_run(), 100));
    EXPECT_EQ(b.cycles(), 32u);
  }
  Bench b(dram, 8, 32, s, limits(1000, 31), false);
  EXPECT_THAT([&] { feed(b, complete_run(), 100); },
              testing::ThrowsMessage<SimError>(AllOf(
                  HasSubstr("cycle limit of 31 cycles"),
                  HasSubstr("compute is idle (2 of 2 instructions done)"))));
}

}  // namespace
}  // namespace tessel::sim::rtl
