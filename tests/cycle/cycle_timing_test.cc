// Hand-computed cycles of small streams on the cycle-level model, each number derived in a comment
// from docs/microarchitecture.md (the timing contract shared with the RTL). Default config unless
// a test says otherwise: DRAM latency L = 32, 64-bit bus (W = 8 bytes a beat), INP/OUT/ACC_8BIT
// elements 16 bytes (2 beats), UOP 4 bytes. Instructions are 16 bytes (2 beats each) at byte
// 65536, bus-aligned, so a fetch burst of n instructions is one AXI burst of 2n beats.
//
// Recurring facts (section numbers of the spec):
//  * fetch requests burst 0 in cycle 0 and is granted in 0 (2.2); a read granted in g has its
//    first beat at max(g + 1 + L, bus_free) = 33 for burst 0 (2.3); instruction j of the burst is
//    dispatched from F + B on, one per cycle (3);
//  * a command dispatched in d is visible from d + 1, a token pushed in D from D + 1 (1, 4);
//  * a DMA requests from S + 1 (5.1, 5.2); GEMM/ALU D = S + n + 4, zero-length D = S (5.3);
//  * FINISH starts once every load/store is done (the cycle after the last D) and
//    RunStats::cycles = FINISH's D + 1 (1, 5.4).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "isa/config.h"
#include "isa/instruction.h"
#include "sim/common/bus_schedule.h"
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

constexpr uint32_t kInpDram = cycle_test::kDataBase / 16;  // INP elements of 16 bytes

struct Result {
  RunStats stats;
  std::vector<InsnTiming> trace;
};

Result run(const isa::HwConfig& cfg, const std::vector<isa::Instruction>& insns,
           const std::vector<isa::Uop>& uops = {}, const std::string& perfetto_path = "") {
  CycleSimOptions opt;
  opt.record_trace = true;
  opt.perfetto_path = perfetto_path;
  CycleSimulator sim(cfg, opt);
  Dram dram = make_dram(cfg, insns, uops);
  Result r;
  r.stats = sim.run(dram, kInsnAddr, uint32_t(insns.size()));
  r.trace = sim.trace();
  // The same stream on fsim gives the same counters (the data path is shared).
  Dram ref = make_dram(cfg, insns, uops);
  EXPECT_EQ(make_fsim(cfg)->run(ref, kInsnAddr, uint32_t(insns.size())).counters,
            r.stats.counters);
  return r;
}

const InsnTiming& timing_of(const Result& r, uint32_t index) {
  for (const InsnTiming& t : r.trace) {
    if (t.index == index) return t;
  }
  ADD_FAILURE() << "instruction " << index << " not in the trace";
  static InsnTiming none;
  return none;
}

/// Expects instruction `index` dispatched in d, started in s and done in e.
void expect_timing(const Result& r, uint32_t index, uint64_t d, uint64_t s, uint64_t e) {
  const InsnTiming& t = timing_of(r, index);
  EXPECT_EQ(t.dispatch, d) << "instruction " << index;
  EXPECT_EQ(t.start, s) << "instruction " << index;
  EXPECT_EQ(t.end, e) << "instruction " << index;
}

TEST(CycleTiming, FinishAlone) {
  // fetch: request 0, granted 0, beats 33..34 (2.3: 0 + 1 + 32); FINISH dispatched in 35,
  // visible in 36, starts and is done in 36: cycles = 37.
  const Result r = run(isa::HwConfig{}, {isa::make_finish()});
  EXPECT_EQ(r.stats.cycles, 37u);
  expect_timing(r, 0, 35, 36, 36);
  EXPECT_EQ(r.stats.fetch.busy_cycles, 2u + 1u);  // 2 beats + 1 dispatch
  EXPECT_EQ(r.stats.fetch.stall_dram_cycles, 33u);  // request 0 .. first beat 33
  EXPECT_EQ(r.stats.fetch.insns, 1u);
  EXPECT_EQ(r.stats.compute.insns, 1u);
  EXPECT_EQ(r.stats.compute.busy_cycles, 1u);
  EXPECT_EQ(r.stats.compute.stall_queue_cycles, 36u);  // 0 .. 35: command not visible
  EXPECT_EQ(r.stats.counters.insn_count, 1u);
}

TEST(CycleTiming, WideBusHalvesBeats) {
  // 16 bytes a beat: the instruction is one beat, 33; dispatch 34, FINISH 35, cycles 36.
  isa::HwConfig cfg;
  cfg.log_bus_width = 7;
  const Result r = run(cfg, {isa::make_finish()});
  EXPECT_EQ(r.stats.cycles, 36u);
  expect_timing(r, 0, 34, 35, 35);
}

TEST(CycleTiming, LoadIsLatencyPlusBeats) {
  // LOAD INP 2 rows x 4 elements from byte 4096: rows of 64 aligned bytes, 8 beats each, one
  // burst per row. fetch: 2 instructions = 4 beats, 33..36; LOAD dispatched in 37, FINISH in 38.
  // LOAD starts in 38, requests from 39: bursts granted in 39 and 40 (lock); beats
  // max(39 + 33, 37) = 72 .. 79 and max(40 + 33, 80) = 80 .. 87: D = F + B - 1 = 87.
  // FINISH waits for the load: starts in 88; cycles 89.
  const Result r = run(isa::HwConfig{},
                       {isa::make_mem(Opcode::kLoad, MemType::kInp, 0, kInpDram, 2, 4, 4),
                        isa::make_finish()});
  expect_timing(r, 0, 37, 38, 87);
  expect_timing(r, 1, 38, 88, 88);
  EXPECT_EQ(r.stats.cycles, 89u);
  EXPECT_EQ(r.stats.load.busy_cycles, 16u);
  EXPECT_EQ(r.stats.load.stall_dram_cycles, 72u - 39u);  // S + 1 .. F - 1
  EXPECT_EQ(r.stats.load.stall_queue_cycles, 38u);       // 0 .. 37
  EXPECT_EQ(r.stats.compute.stall_queue_cycles, 88u);    // 39 command + 49 drain
  EXPECT_EQ(r.stats.counters.inp_load_nbytes, 128u);
}

TEST(CycleTiming, StridedRowsAreSeparateBursts) {
  // 3 rows of 1 ACC_8BIT element (16 bytes, 2 beats) with x_stride 5 from element 256 (byte
  // 4096): 3 bursts of 2 beats. The load is a compute instruction (dispatched 37, starts 38),
  // granted 39, 40, 41: beats 72..73, 74..75, 76..77; D = 77. FINISH (same module) 78; cycles 79.
  const Result r = run(isa::HwConfig{},
                       {isa::make_mem(Opcode::kLoad, MemType::kAcc8, 0, 256, 3, 1, 5),
                        isa::make_finish()});
  expect_timing(r, 0, 37, 38, 77);
  EXPECT_EQ(r.stats.cycles, 79u);
  EXPECT_EQ(r.stats.counters.acc_load_nbytes, 48u);
}

TEST(CycleTiming, UnalignedUopLoadCountsAlignedBeats) {
  // LOAD UOP of uops 1..2 = bytes [4, 12): 2 aligned bus words, so 2 beats (a naive 8 bytes /
  // 8 would be 1). Starts 38, granted 39, beats 72..73: D = 73. FINISH 74; cycles 75.
  const std::vector<isa::Uop> uops(3);
  const Result r = run(isa::HwConfig{},
                       {isa::make_mem(Opcode::kLoad, MemType::kUop, 0, 1, 1, 2, 2),
                        isa::make_finish()},
                       uops);
  expect_timing(r, 0, 37, 38, 73);
  EXPECT_EQ(r.stats.compute.busy_cycles, 2u + 1u);
  EXPECT_EQ(r.stats.cycles, 75u);
}

TEST(CycleTiming, PadsFillTheCyclesBeforeTheBeats) {
  // 1x1 INP element with y_pad_1 = 1 and x_pad_0 = 1: a 2x2 rectangle, P = 3 pads. Starts 38,
  // beats F = 72, B = 2 (72..73). S + P = 41 < F: the pads take 39..41 (T = 41), so
  // D = max(F + B - 1, T) = 73. FINISH 74; cycles 75. DRAM stall: the 33 cycles 39..71 less the
  // 3 used for pads.
  const Result r = run(isa::HwConfig{},
                       {isa::make_mem(Opcode::kLoad, MemType::kInp, 0, kInpDram, 1, 1, 1, 0, 1, 1, 0),
                        isa::make_finish()});
  expect_timing(r, 0, 37, 38, 73);
  EXPECT_EQ(r.stats.load.busy_cycles, 2u + 3u);
  EXPECT_EQ(r.stats.load.stall_dram_cycles, 33u - 3u);
  EXPECT_EQ(r.stats.cycles, 75u);
}

TEST(CycleTiming, PadsBeyondTheLatencyGoAfterTheBeats) {
  // DRAM_LATENCY 0. fetch: granted 0, beats max(0 + 1, 0) = 1 .. 4; dispatch 5 (LOAD), 6
  // (FINISH). LOAD (same 2x2 rectangle, P = 3) starts 6, granted 7, beats F = max(8, 5) = 8 .. 9.
  // Pads: cycle 7 (no beat), then 10 and 11 after the beats: S + P = 9 >= F, so
  // T = S + P + B = 11 and D = max(9, 11) = 11. FINISH 12; cycles 13.
  isa::HwConfig cfg;
  cfg.dram_latency = 0;
  const Result r = run(cfg,
                       {isa::make_mem(Opcode::kLoad, MemType::kInp, 0, kInpDram, 1, 1, 1, 0, 1, 1, 0),
                        isa::make_finish()});
  expect_timing(r, 0, 5, 6, 11);
  EXPECT_EQ(r.stats.cycles, 13u);
  // One pad (x_pad_0 = 1 only): it fits in cycle 7 < F = 8, so D = F + B - 1 = 9.
  const Result one = run(cfg,
                         {isa::make_mem(Opcode::kLoad, MemType::kInp, 0, kInpDram, 1, 1, 1, 0, 0, 1, 0),
                          isa::make_finish()});
  expect_timing(one, 0, 5, 6, 9);
  EXPECT_EQ(one.stats.cycles, 11u);
}

TEST(CycleTiming, PadsOnlyLoadWritesOnePadPerCycle) {
  // y_size 0, 2 elements a row, y_pad_0 = y_pad_1 = 1: P = (1 + 1) * 2 = 4 pads, no bus:
  // starts 38, D = S + P = 42. FINISH 43; cycles 44.
  const Result r = run(isa::HwConfig{},
                       {isa::make_mem(Opcode::kLoad, MemType::kInp, 0, kInpDram, 0, 2, 2, 1, 1, 0, 0),
                        isa::make_finish()});
  expect_timing(r, 0, 37, 38, 42);
  EXPECT_EQ(r.stats.load.busy_cycles, 4u);
  EXPECT_EQ(r.stats.load.stall_dram_cycles, 0u);
  EXPECT_EQ(r.stats.cycles, 44u);
}

TEST(CycleTiming, GemmOneUopPerCyclePlusPipeline) {
  // fetch: 3 instructions = 6 beats, 33..38; dispatch 39, 40, 41.
  // LOAD UOP of 4 uops (16 bytes, 2 beats): starts 40, granted 41, beats 74..75, D = 75.
  // GEMM 2 x 3 x 4 = 24 uops: starts 76, D = 76 + 24 + 4 = 104. FINISH 105; cycles 106.
  const std::vector<isa::Uop> uops(4);
  const Result r = run(isa::HwConfig{},
                       {isa::make_mem(Opcode::kLoad, MemType::kUop, 0, 0, 1, 4, 4),
                        make_loop(Opcode::kGemm, 0, 4, 2, 3), isa::make_finish()},
                       uops);
  expect_timing(r, 0, 39, 40, 75);
  expect_timing(r, 1, 40, 76, 104);
  expect_timing(r, 2, 41, 105, 105);
  EXPECT_EQ(r.stats.cycles, 106u);
  EXPECT_EQ(r.stats.compute.busy_cycles, 2u + 24u + 1u);  // beats + uops + FINISH
  EXPECT_EQ(r.stats.compute.stall_dram_cycles, 74u - 41u);
  EXPECT_EQ(r.stats.counters.gemm_counter, 24u);
  EXPECT_EQ(r.stats.counters.uop_load_nbytes, 16u);
}

TEST(CycleTiming, AluAndResetHaveTheSamePipeline) {
  // fetch: 4 instructions = 8 beats, 33..40; dispatch 41..44. LOAD UOP starts 42, granted 43,
  // beats 76..77: D = 77. ALU 1 x 2 x 3 = 6 uops: 78 -> 78 + 6 + 4 = 88. GEMM reset 1 x 1 x 4:
  // 89 -> 89 + 4 + 4 = 97. FINISH 98; cycles 99.
  const std::vector<isa::Uop> uops(4);
  isa::Instruction alu = make_loop(Opcode::kAlu, 1, 4, 1, 2);
  alu.alu_op = isa::AluOp::kMul;
  alu.use_imm = true;
  alu.imm = 3;
  isa::Instruction reset = make_loop(Opcode::kGemm, 0, 4, 1, 1);
  reset.reset = true;
  const Result r = run(isa::HwConfig{},
                       {isa::make_mem(Opcode::kLoad, MemType::kUop, 0, 0, 1, 4, 4), alu, reset,
                        isa::make_finish()},
                       uops);
  expect_timing(r, 0, 41, 42, 77);
  expect_timing(r, 1, 42, 78, 88);
  expect_timing(r, 2, 43, 89, 97);
  EXPECT_EQ(r.stats.cycles, 99u);
  EXPECT_EQ(r.stats.counters.alu_counter, 6u);
}

TEST(CycleTiming, StoreIsDoneAtItsWriteResponse) {
  // STORE 1 row of 2 OUT elements (32 bytes, 4 beats): dispatched 37, starts 38, AW granted 39,
  // W beats max(39 + 1, 37) = 40 .. 43, write response 40 + 4 + 32 = 76 = D. FINISH waits for
  // it: 77; cycles 78.
  const Result r = run(isa::HwConfig{},
                       {isa::make_mem(Opcode::kStore, MemType::kOut, 0, kInpDram, 1, 2, 2),
                        isa::make_finish()});
  expect_timing(r, 0, 37, 38, 76);
  EXPECT_EQ(r.stats.cycles, 78u);
  EXPECT_EQ(r.stats.store.busy_cycles, 4u);
  // 39 .. 39 waiting for the first W beat (1) + 44 .. 76 for the response (33).
  EXPECT_EQ(r.stats.store.stall_dram_cycles, 1u + 33u);
  EXPECT_EQ(r.stats.counters.out_store_nbytes, 32u);
  // The bus model agrees: a write granted in 39 on a free bus.
  BusSchedule bus(32);
  const BusSlot slot = bus.reserve(true, 39, 4);
  EXPECT_EQ(slot.first, 40u);
  EXPECT_EQ(slot.response, 76u);
}

TEST(CycleTiming, ReadsAndWritesShareTheBusInGrantOrder) {
  // 0 LOAD INP 1x1 (2 beats), push l2g      load
  // 1 LOAD UOP 1 uop (4 bytes: 1 beat)      compute
  // 2 GEMM 1 uop, pop l2g                   compute
  // 3 FINISH                                compute
  // fetch: 8 beats 33..40; dispatch 41, 42, 43, 44.
  // LOAD INP starts 42, granted 43: beats max(76, 41) = 76..77, D = 77 (l2g pushed in 77).
  // LOAD UOP starts 43, granted 44: first beat max(44 + 33, 78) = 78 (the bus is reserved for
  //   the INP beats first), D = 78.
  // GEMM: free from 79, token visible from 78: starts 79, D = 79 + 1 + 4 = 84. FINISH 85;
  // cycles 86.
  const std::vector<isa::Uop> uops(1);
  const Result r = run(
      isa::HwConfig{},
      {with_dep(isa::make_mem(Opcode::kLoad, MemType::kInp, 0, kInpDram, 1, 1, 1), false, false,
                false, true),
       isa::make_mem(Opcode::kLoad, MemType::kUop, 0, 0, 1, 1, 1),
       with_dep(make_loop(Opcode::kGemm, 0, 1, 1, 1), true, false, false, false),
       isa::make_finish()},
      uops);
  expect_timing(r, 0, 41, 42, 77);
  expect_timing(r, 1, 42, 43, 78);
  expect_timing(r, 2, 43, 79, 84);
  EXPECT_EQ(r.stats.cycles, 86u);
  EXPECT_EQ(r.stats.compute.stall_dram_cycles, 78u - 44u);
  EXPECT_EQ(r.stats.compute.stall_token_cycles, 0u);
  EXPECT_EQ(r.stats.compute.insns, 3u);
  EXPECT_EQ(r.stats.load.insns, 1u);
}

TEST(CycleTiming, TokenIsVisibleTheCycleAfterItsPush) {
  // 0 GEMM (no uops), pop l2g      compute: dispatched 39, command visible 40
  // 1 load no-op, push l2g         load: dispatched 40, starts 41, done 41 (pushes in 41)
  // 2 FINISH                       compute: dispatched 41
  // The GEMM can start only in 42, the cycle after the push (not 41): D = 42. FINISH free from
  // 43: starts 43; cycles 44. compute: token stall 40..41 (2), queue stall 0..39 (40).
  const Result r = run(
      isa::HwConfig{},
      {with_dep(make_loop(Opcode::kGemm, 0, 0, 1, 1), true, false, false, false),
       isa::make_noop(Module::kLoad, {false, false, false, true}), isa::make_finish()});
  expect_timing(r, 0, 39, 42, 42);
  expect_timing(r, 1, 40, 41, 41);
  expect_timing(r, 2, 41, 43, 43);
  EXPECT_EQ(r.stats.cycles, 44u);
  EXPECT_EQ(r.stats.compute.stall_token_cycles, 2u);
  EXPECT_EQ(r.stats.compute.stall_queue_cycles, 40u);
}

TEST(CycleTiming, ComputeStallsOnToken) {
  // 0 LOAD UOP 1 uop                        compute: dispatched 41, starts 42
  // 1 LOAD INP 4 rows x 4, push l2g         load: dispatched 42, starts 43
  // 2 GEMM 1 uop, pop l2g                   compute
  // 3 FINISH
  // Arbiter: 43 compute (UOP, beat 76, D = 76); 44..47 load (4 bursts of 8 beats): beats
  // max(77, 77) = 77 .. 108, D = 108. GEMM: free from 77, token visible from 109: starts 109,
  // D = 114. FINISH 115; cycles 116.
  const std::vector<isa::Uop> uops(1);
  const Result r = run(
      isa::HwConfig{},
      {isa::make_mem(Opcode::kLoad, MemType::kUop, 0, 0, 1, 1, 1),
       with_dep(isa::make_mem(Opcode::kLoad, MemType::kInp, 0, kInpDram, 4, 4, 4), false, false,
                false, true),
       with_dep(make_loop(Opcode::kGemm, 0, 1, 1, 1), true, false, false, false),
       isa::make_finish()},
      uops);
  expect_timing(r, 0, 41, 42, 76);
  expect_timing(r, 1, 42, 43, 108);
  expect_timing(r, 2, 43, 109, 114);
  EXPECT_EQ(r.stats.load.stall_dram_cycles, 77u - 44u);
  EXPECT_EQ(r.stats.compute.stall_token_cycles, 109u - 77u);
  EXPECT_EQ(r.stats.cycles, 116u);
}

TEST(CycleTiming, SameCycleRequestsAreGrantedByPriority) {
  // 0 GEMM 4 uops, pushes g2l and g2s      compute: dispatched 41, 42 -> 42 + 4 + 4 = 50
  // 1 STORE 1 row of 2 OUT (4 beats), pops g2s   store: dispatched 42, starts 51
  // 2 LOAD INP 1x1 (2 beats), pops g2l           load: dispatched 43, starts 51
  // 3 FINISH
  // Load and store both request from 52: load first (load > store), granted 52, beats
  // max(85, 41) = 85..86, D = 86; store granted 53, its W beats wait for the bus:
  // max(54, 87) = 87..90, response 87 + 4 + 32 = 123 = D. FINISH 124; cycles 125.
  const Result r = run(
      isa::HwConfig{},
      {with_dep(make_loop(Opcode::kGemm, 0, 4, 1, 1), false, false, true, true),
       with_dep(isa::make_mem(Opcode::kStore, MemType::kOut, 0, kInpDram, 1, 2, 2), true, false,
                false, false),
       with_dep(isa::make_mem(Opcode::kLoad, MemType::kInp, 0, kInpDram, 1, 1, 1), false, true,
                false, false),
       isa::make_finish()});
  expect_timing(r, 0, 41, 42, 50);
  expect_timing(r, 1, 42, 51, 123);
  expect_timing(r, 2, 43, 51, 86);
  expect_timing(r, 3, 44, 124, 124);
  EXPECT_EQ(r.stats.store.stall_token_cycles, 51u - 43u);
  EXPECT_EQ(r.stats.store.stall_dram_cycles, (87u - 52u) + (123u - 90u));
  EXPECT_EQ(r.stats.cycles, 125u);
}

TEST(CycleTiming, FetchHasPriorityOverLoad) {
  // 0..5 GEMM no-ops, 6 LOAD INP 1x1 (2 beats), 7 GEMM no-op, 8 FINISH.
  // fetch burst 0 (8 instructions, 16 beats): 33..48; dispatches 49..56 (instruction i in
  // 49 + i). Burst 1 is requested from 57 (after the dispatch in 56). The LOAD, dispatched in
  // 55, starts 56 and requests from 57 too: fetch wins, granted 57, 2 beats max(90, 49) =
  // 90..91; FINISH dispatched 92. The load is granted 58: beats max(91, 92) =
  // 92..93, D = 93. FINISH: command visible 93, load done: starts 94; cycles 95.
  std::vector<isa::Instruction> insns;
  for (int i = 0; i < 6; ++i) insns.push_back(make_loop(Opcode::kGemm, 0, 0, 1, 1));
  insns.push_back(isa::make_mem(Opcode::kLoad, MemType::kInp, 0, kInpDram, 1, 1, 1));
  insns.push_back(make_loop(Opcode::kGemm, 0, 0, 1, 1));
  insns.push_back(isa::make_finish());
  const Result r = run(isa::HwConfig{}, insns);
  for (uint32_t i = 0; i < 6; ++i) expect_timing(r, i, 49 + i, 50 + i, 50 + i);
  expect_timing(r, 6, 55, 56, 93);
  expect_timing(r, 7, 56, 57, 57);
  expect_timing(r, 8, 92, 94, 94);
  EXPECT_EQ(r.stats.cycles, 95u);
  EXPECT_EQ(r.stats.fetch.stall_dram_cycles, 33u + (90u - 57u));
}

TEST(CycleTiming, ArbiterLockKeepsASequenceTogether) {
  // 0 LOAD ACC_8BIT 3 rows x 1 (3 bursts of 2 beats)   compute: dispatched 39, starts 40
  // 1 LOAD INP 1x1 (1 burst of 2 beats)                load: dispatched 40, starts 41
  // 2 FINISH
  // compute requests from 41 and is granted 41, 42, 43 (the lock): beats 74..75, 76..77,
  // 78..79, D = 79. load (higher priority) requests from 42 but waits for the lock: granted 44,
  // beats max(77, 80) = 80..81, D = 81. (Without the lock it would have been granted in 42 and
  // split the compute load's beats.) FINISH: free from 80, load done 81: starts 82; cycles 83.
  const Result r = run(isa::HwConfig{},
                       {isa::make_mem(Opcode::kLoad, MemType::kAcc8, 0, 256, 3, 1, 1),
                        isa::make_mem(Opcode::kLoad, MemType::kInp, 0, kInpDram + 8, 1, 1, 1),
                        isa::make_finish()});
  expect_timing(r, 0, 39, 40, 79);
  expect_timing(r, 1, 40, 41, 81);
  expect_timing(r, 2, 41, 82, 82);
  EXPECT_EQ(r.stats.cycles, 83u);
}

TEST(CycleTiming, FetchBlocksOnFullCommandQueue) {
  // CMD_QUEUE_DEPTH 1: a LOAD UOP of 8 uops (4 beats), three GEMMs of 8 uops (12 cycles each) and
  // FINISH, all compute. fetch: 10 beats, 33..42.
  //   LOAD UOP dispatched 43 (queue empty), starts 44 (popped: room visible from 45);
  //     granted 45, beats 78..81, D = 81.
  //   GEMM 1 dispatched 45; starts 82 (after the load), D = 82 + 8 + 4 = 94.
  //   GEMM 2: room after GEMM 1's pop in 82: dispatched 83; starts 95, D = 107.
  //   GEMM 3: dispatched 96 (pop in 95); starts 108, D = 120.
  //   FINISH: dispatched 109 (pop in 108); starts 121; cycles 122.
  isa::HwConfig cfg;
  cfg.cmd_queue_depth = 1;
  const std::vector<isa::Uop> uops(8);
  const Result r = run(cfg,
                       {isa::make_mem(Opcode::kLoad, MemType::kUop, 0, 0, 1, 8, 8),
                        make_loop(Opcode::kGemm, 0, 8, 1, 1), make_loop(Opcode::kGemm, 0, 8, 1, 1),
                        make_loop(Opcode::kGemm, 0, 8, 1, 1), isa::make_finish()},
                       uops);
  expect_timing(r, 0, 43, 44, 81);
  expect_timing(r, 1, 45, 82, 94);
  expect_timing(r, 2, 83, 95, 107);
  expect_timing(r, 3, 96, 108, 120);
  expect_timing(r, 4, 109, 121, 121);
  EXPECT_EQ(r.stats.cycles, 122u);
  // fetch waited for room from its earliest dispatch cycles 44, 46, 84, 97:
  // (45 - 44) + (83 - 46) + (96 - 84) + (109 - 97) = 1 + 37 + 12 + 12.
  EXPECT_EQ(r.stats.fetch.stall_queue_cycles, 62u);
}

TEST(CycleTiming, RepeatedRunsGiveTheSameCycles) {
  CycleSimulator sim(isa::HwConfig{});
  const std::vector<isa::Instruction> insns = {
      isa::make_mem(Opcode::kLoad, MemType::kInp, 0, kInpDram, 2, 4, 4), isa::make_finish()};
  Dram dram = make_dram(isa::HwConfig{}, insns);
  const RunStats a = sim.run(dram, kInsnAddr, 2);
  // A run of another configuration in between must not disturb the next run's timing.
  isa::HwConfig small;
  small.log_bus_width = 7;
  CycleSimulator other(small);
  Dram dram2 = make_dram(small, {isa::make_finish()});
  EXPECT_EQ(other.run(dram2, kInsnAddr, 1).cycles, 36u);
  const RunStats b = sim.run(dram, kInsnAddr, 2);
  EXPECT_EQ(a.cycles, 89u);
  EXPECT_EQ(b.cycles, a.cycles);
  EXPECT_EQ(b.load, a.load);
  EXPECT_EQ(b.compute, a.compute);
  EXPECT_EQ(b.fetch, a.fetch);
  EXPECT_EQ(b.counters, a.counters);
}

TEST(CycleTiming, MakeCycleSimIsTheCycleModel) {
  std::unique_ptr<Simulator> sim = make_cycle_sim(isa::HwConfig{});
  EXPECT_EQ(sim->name(), "cycle");
  Dram dram = make_dram(isa::HwConfig{}, {isa::make_finish()});
  EXPECT_EQ(sim->run(dram, kInsnAddr, 1).cycles, 37u);
}

}  // namespace
}  // namespace tessel::sim
