// Hand-computed cycle counts of small streams on the cycle-level model (docs/cycle-model.md has
// the rules). Default config unless a test says otherwise: DRAM latency 32 cycles, 64-bit bus
// (8 bytes a beat), INP element 16 bytes, OUT element 16 bytes, micro-op 4 bytes. Instructions are
// 16 bytes, so a fetch burst of n instructions is 2n beats.
#include <gtest/gtest.h>

#include <vector>

#include "isa/config.h"
#include "isa/instruction.h"
#include "sim/cycle/cycle_sim.h"
#include "sim/cycle/timing.h"
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
           const std::vector<isa::Uop>& uops = {}) {
  CycleSimOptions opt;
  opt.record_trace = true;
  CycleSimulator sim(cfg, opt);
  Dram dram = make_dram(cfg, insns, uops);
  Result r;
  r.stats = sim.run(dram, kInsnAddr, uint32_t(insns.size()));
  r.trace = sim.trace();
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

TEST(CycleTiming, RateFunctions) {
  isa::HwConfig cfg;
  EXPECT_EQ(cycle::row_beats(cfg, 16), 2u);
  EXPECT_EQ(cycle::row_beats(cfg, 17), 3u);
  EXPECT_EQ(cycle::fetch_beats(cfg, 8), 16u);
  // 3 rows of 5 INP elements (80 bytes = 10 beats each).
  EXPECT_EQ(cycle::transfer_beats(cfg, isa::make_mem(Opcode::kLoad, MemType::kInp, 0, 0, 3, 5, 5)),
            30u);
  // ACC_8BIT: 16 bytes per element in DRAM; 1 row of 3 = 48 bytes = 6 beats.
  EXPECT_EQ(
      cycle::transfer_beats(cfg, isa::make_mem(Opcode::kLoad, MemType::kAcc8, 0, 0, 1, 3, 3)), 6u);
  // pads: (1+2+0) rows x (2+2+1) columns - 2*2 data = 11.
  EXPECT_EQ(cycle::pad_rows(isa::make_mem(Opcode::kLoad, MemType::kInp, 0, 0, 2, 2, 2, 1, 0, 2, 1)),
            11u);
  EXPECT_EQ(cycle::compute_cycles(make_loop(Opcode::kGemm, 0, 4, 2, 3)), 24u + 4u);
  isa::Instruction reset = make_loop(Opcode::kGemm, 0, 4, 2, 3);
  reset.reset = true;
  EXPECT_EQ(cycle::compute_cycles(reset), 24u + 1u);
  EXPECT_EQ(cycle::compute_cycles(make_loop(Opcode::kAlu, 2, 5, 1, 2)), 6u + 3u);
  EXPECT_EQ(cycle::compute_cycles(make_loop(Opcode::kGemm, 3, 3, 2, 2)), 1u);
}

TEST(CycleTiming, FinishAlone) {
  // fetch: request at 0, first beat at 32, 2 beats -> 34; FINISH dispatched at 34, takes 1 cycle.
  const Result r = run(isa::HwConfig{}, {isa::make_finish()});
  EXPECT_EQ(r.stats.cycles, 35u);
  EXPECT_EQ(r.stats.fetch.busy_cycles, 2u + 1u);  // 2 beats + 1 dispatch
  EXPECT_EQ(r.stats.fetch.stall_dram_cycles, 32u);
  EXPECT_EQ(r.stats.fetch.insns, 1u);
  EXPECT_EQ(r.stats.compute.insns, 1u);
  EXPECT_EQ(r.stats.compute.busy_cycles, 1u);
  EXPECT_EQ(r.stats.compute.stall_queue_cycles, 34u);
  EXPECT_EQ(r.stats.counters.insn_count, 1u);
  EXPECT_EQ(timing_of(r, 0).dispatch, 34u);
  EXPECT_EQ(timing_of(r, 0).end, 35u);
}

TEST(CycleTiming, WideBusHalvesBeats) {
  isa::HwConfig cfg;
  cfg.log_bus_width = 7;  // 16 bytes a beat: one instruction is one beat
  EXPECT_EQ(run(cfg, {isa::make_finish()}).stats.cycles, 32u + 1u + 1u);
}

TEST(CycleTiming, LoadIsLatencyPlusBeats) {
  // LOAD INP 2 rows x 4 elements: each row 64 bytes = 8 beats, 16 beats in all.
  // fetch: 2 instructions = 4 beats, 32..36; LOAD dispatched at 36, FINISH at 37.
  // LOAD: requested at 36, first beat at 36 + 32 = 68, last beat done at 84.
  // FINISH waits for the load to complete (84), ends at 85.
  const Result r = run(isa::HwConfig{},
                       {isa::make_mem(Opcode::kLoad, MemType::kInp, 0, kInpDram, 2, 4, 4),
                        isa::make_finish()});
  EXPECT_EQ(timing_of(r, 0).start, 36u);
  EXPECT_EQ(timing_of(r, 0).end, 84u);
  EXPECT_EQ(r.stats.cycles, 85u);
  EXPECT_EQ(r.stats.load.busy_cycles, 16u);
  EXPECT_EQ(r.stats.load.stall_dram_cycles, 32u);
  EXPECT_EQ(r.stats.load.stall_queue_cycles, 36u);
  EXPECT_EQ(r.stats.compute.stall_queue_cycles, 84u);  // 37 waiting + 47 for the load to drain
  EXPECT_EQ(r.stats.counters.inp_load_nbytes, 128u);
}

TEST(CycleTiming, StridedRowsRoundUpPerRow) {
  // 3 rows of 1 ACC_8BIT element (16 bytes, 2 beats) with x_stride 5: 6 beats, not merged.
  // ACC_8BIT elements are 16 bytes in DRAM: dram_base 256 is byte 4096. The load is a compute
  // instruction, so FINISH (dispatched at 37) runs after it in the same module.
  const Result r = run(isa::HwConfig{},
                       {isa::make_mem(Opcode::kLoad, MemType::kAcc8, 0, 256, 3, 1, 5),
                        isa::make_finish()});
  EXPECT_EQ(timing_of(r, 0).end, 36u + 32u + 6u);
  EXPECT_EQ(r.stats.cycles, 36u + 32u + 6u + 1u);
  EXPECT_EQ(r.stats.counters.acc_load_nbytes, 48u);
}

TEST(CycleTiming, PaddingWritesOneRowPerCycle) {
  // 1x1 INP element with x_pad_0 = 1 and y_pad_1 = 1: 2x2 rectangle, 3 pad rows after the data.
  const Result r = run(isa::HwConfig{},
                       {isa::make_mem(Opcode::kLoad, MemType::kInp, 0, kInpDram, 1, 1, 1, 0, 1, 1, 0),
                        isa::make_finish()});
  EXPECT_EQ(timing_of(r, 0).end, 36u + 32u + 2u + 3u);
  EXPECT_EQ(r.stats.load.busy_cycles, 2u + 3u);
  EXPECT_EQ(r.stats.cycles, 74u);
}

TEST(CycleTiming, GemmOneUopPerCyclePlusFill) {
  // fetch: 3 instructions = 6 beats, 32..38; dispatch at 38, 39, 40.
  // LOAD UOP of 4 uops (16 bytes, 2 beats): 38 -> 70 + 2 = 72.
  // GEMM 2 x 3 x 4 uops = 24 uops + 4 fill: 72 -> 100. FINISH 100 -> 101.
  const std::vector<isa::Uop> uops(4);
  const Result r = run(isa::HwConfig{},
                       {isa::make_mem(Opcode::kLoad, MemType::kUop, 0, 0, 1, 4, 4),
                        make_loop(Opcode::kGemm, 0, 4, 2, 3), isa::make_finish()},
                       uops);
  EXPECT_EQ(timing_of(r, 1).start, 72u);
  EXPECT_EQ(timing_of(r, 1).end, 100u);
  EXPECT_EQ(r.stats.cycles, 101u);
  EXPECT_EQ(r.stats.compute.busy_cycles, 2u + 28u + 1u);
  EXPECT_EQ(r.stats.compute.stall_dram_cycles, 32u);
  EXPECT_EQ(r.stats.counters.gemm_counter, 24u);
  EXPECT_EQ(r.stats.counters.uop_load_nbytes, 16u);
}

TEST(CycleTiming, AluAndResetRates) {
  // Same prologue as above (uops ready at 72), then ALU 1 x 2 x 3 uops = 6 + 3 fill (72 -> 81),
  // GEMM reset 1 x 1 x 4 = 4 + 1 (81 -> 86), FINISH 86 -> 87. Fetch: 4 instructions, 8 beats,
  // 32..40; dispatch 40..43; LOAD UOP 40 -> 72 + 2 = 74.
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
  EXPECT_EQ(timing_of(r, 0).end, 74u);
  EXPECT_EQ(timing_of(r, 1).end, 74u + 9u);
  EXPECT_EQ(timing_of(r, 2).end, 74u + 9u + 5u);
  EXPECT_EQ(r.stats.cycles, 89u);
  EXPECT_EQ(r.stats.counters.alu_counter, 6u);
}

TEST(CycleTiming, StoreIsBeatsThenWriteLatency) {
  // STORE 1 row of 2 OUT elements (32 bytes, 4 beats): dispatched at 36, beats 36..40, write
  // response 32 cycles later at 72. FINISH waits for it: 72 -> 73.
  const Result r = run(isa::HwConfig{},
                       {isa::make_mem(Opcode::kStore, MemType::kOut, 0, kInpDram, 1, 2, 2),
                        isa::make_finish()});
  EXPECT_EQ(timing_of(r, 0).end, 72u);
  EXPECT_EQ(r.stats.cycles, 73u);
  EXPECT_EQ(r.stats.store.busy_cycles, 4u);
  EXPECT_EQ(r.stats.store.stall_dram_cycles, 32u);
  EXPECT_EQ(r.stats.counters.out_store_nbytes, 32u);
}

TEST(CycleTiming, TokenHandoffOverlapsLoadAndCompute) {
  // 0 LOAD INP 1x1 (2 beats), push l2g      load
  // 1 LOAD UOP 1 uop (1 beat)               compute
  // 2 GEMM 1 uop, pop l2g (1 + 4 fill)      compute
  // 3 FINISH                                compute
  // fetch: 4 instructions = 8 beats, 32..40; dispatch 40, 41, 42, 43.
  // LOAD INP requested at 40: first beat 72, done 74, bus busy until 74.
  // LOAD UOP requested at 41, during the INP load's latency: first beat max(41 + 32, 74) = 74
  //   (one cycle waiting for the bus), done 75.
  // GEMM: l2g token pushed at 74, compute free at 75: 75 -> 80. FINISH 80 -> 81.
  const std::vector<isa::Uop> uops(1);
  const Result r = run(
      isa::HwConfig{},
      {with_dep(isa::make_mem(Opcode::kLoad, MemType::kInp, 0, kInpDram, 1, 1, 1), false, false,
                false, true),
       isa::make_mem(Opcode::kLoad, MemType::kUop, 0, 0, 1, 1, 1),
       with_dep(make_loop(Opcode::kGemm, 0, 1, 1, 1), true, false, false, false),
       isa::make_finish()},
      uops);
  EXPECT_EQ(timing_of(r, 0).end, 74u);
  EXPECT_EQ(timing_of(r, 1).start, 41u);
  EXPECT_EQ(timing_of(r, 1).end, 75u);
  EXPECT_EQ(timing_of(r, 2).start, 75u);
  EXPECT_EQ(timing_of(r, 2).end, 80u);
  EXPECT_EQ(r.stats.cycles, 81u);
  EXPECT_EQ(r.stats.compute.stall_dram_cycles, 33u);
  EXPECT_EQ(r.stats.compute.stall_token_cycles, 0u);
  EXPECT_EQ(r.stats.compute.insns, 3u);
  EXPECT_EQ(r.stats.load.insns, 1u);
}

TEST(CycleTiming, ComputeStallsOnToken) {
  // 0 LOAD UOP 1 uop                         compute: 40 -> 72 + 1 = 73
  // 1 LOAD INP 4x4 (8 beats a row, 32 beats) load: requested at 41, bus free at 73 -> 73..105
  // 2 GEMM 1 uop pop l2g                     compute: waits for the token from 73 to 105
  // 3 FINISH
  // Instruction 1 pushes l2g. GEMM 105 -> 110, FINISH 110 -> 111.
  const std::vector<isa::Uop> uops(1);
  const Result r = run(
      isa::HwConfig{},
      {isa::make_mem(Opcode::kLoad, MemType::kUop, 0, 0, 1, 1, 1),
       with_dep(isa::make_mem(Opcode::kLoad, MemType::kInp, 0, kInpDram, 4, 4, 4), false, false,
                false, true),
       with_dep(make_loop(Opcode::kGemm, 0, 1, 1, 1), true, false, false, false),
       isa::make_finish()},
      uops);
  EXPECT_EQ(timing_of(r, 0).end, 73u);
  EXPECT_EQ(timing_of(r, 1).end, 105u);
  EXPECT_EQ(r.stats.load.stall_dram_cycles, 105u - 32u - 41u);
  EXPECT_EQ(r.stats.compute.stall_token_cycles, 105u - 73u);
  EXPECT_EQ(timing_of(r, 2).end, 110u);
  EXPECT_EQ(r.stats.cycles, 111u);
}

TEST(CycleTiming, SameCycleRequestsAreServedInPriorityOrder) {
  // 0 GEMM 4 uops (4 + 4 fill), pushes g2l and g2s   compute: 40 -> 48
  // 1 STORE 1 row of 2 OUT elements (4 beats), pops g2s   store: dispatched 41, waits to 48
  // 2 LOAD INP 1x1 (2 beats), pops g2l                     load: dispatched 42, waits to 48
  // 3 FINISH
  // Both request the bus at 48; load goes before store (fetch, load, compute, store):
  // load beats 80..82; the store's beats queue behind them, 82..86, and its write response
  // arrives at 86 + 32 = 118. FINISH waits for the store: 118 -> 119.
  const Result r = run(
      isa::HwConfig{},
      {with_dep(make_loop(Opcode::kGemm, 0, 4, 1, 1), false, false, true, true),
       with_dep(isa::make_mem(Opcode::kStore, MemType::kOut, 0, kInpDram, 1, 2, 2), true, false,
                false, false),
       with_dep(isa::make_mem(Opcode::kLoad, MemType::kInp, 0, kInpDram, 1, 1, 1), false, true,
                false, false),
       isa::make_finish()});
  EXPECT_EQ(timing_of(r, 0).end, 48u);
  EXPECT_EQ(timing_of(r, 1).start, 48u);
  EXPECT_EQ(timing_of(r, 2).start, 48u);
  EXPECT_EQ(timing_of(r, 2).end, 82u);
  EXPECT_EQ(timing_of(r, 1).end, 118u);
  EXPECT_EQ(r.stats.store.stall_token_cycles, 48u - 41u);
  EXPECT_EQ(r.stats.store.stall_dram_cycles, (82u - 48u) + 32u);
  EXPECT_EQ(r.stats.cycles, 119u);
}

TEST(CycleTiming, FetchBlocksOnFullCommandQueue) {
  // cmd_queue_depth 1. Three GEMMs of 8 uops (12 cycles each) and FINISH, all compute, after a
  // LOAD UOP: fetch can only dispatch the next instruction when compute pops the previous one.
  isa::HwConfig cfg;
  cfg.cmd_queue_depth = 1;
  const std::vector<isa::Uop> uops(8);
  const Result r = run(cfg,
                       {isa::make_mem(Opcode::kLoad, MemType::kUop, 0, 0, 1, 8, 8),
                        make_loop(Opcode::kGemm, 0, 8, 1, 1), make_loop(Opcode::kGemm, 0, 8, 1, 1),
                        make_loop(Opcode::kGemm, 0, 8, 1, 1), isa::make_finish()},
                       uops);
  // fetch: 5 instructions = 10 beats, 32..42. LOAD UOP dispatched at 42 and popped at once;
  // GEMM 1 dispatched at 43 (queue full until compute pops it at 42 + 32 + 4 = 78).
  // GEMM 2 can enter only at 78; GEMM 1 78 -> 90; GEMM 2 popped at 90, GEMM 3 enters at 90;
  // GEMM 2 90 -> 102; GEMM 3 102 -> 114; FINISH enters at 102, runs 114 -> 115.
  EXPECT_EQ(timing_of(r, 0).end, 78u);
  EXPECT_EQ(timing_of(r, 2).dispatch, 78u);
  EXPECT_EQ(timing_of(r, 3).dispatch, 90u);
  EXPECT_EQ(timing_of(r, 4).dispatch, 102u);
  EXPECT_EQ(r.stats.cycles, 115u);
  // fetch stalled from its planned dispatch cycles 44, 45, 46 to 78, 90, 102 (cumulative):
  // GEMM 2 planned 44 -> 78 (34), GEMM 3 planned 79 -> 90 (11), FINISH planned 91 -> 102 (11).
  EXPECT_EQ(r.stats.fetch.stall_queue_cycles, 34u + 11u + 11u);
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
  EXPECT_EQ(other.run(dram2, kInsnAddr, 1).cycles, 34u);
  const RunStats b = sim.run(dram, kInsnAddr, 2);
  EXPECT_EQ(a.cycles, 85u);
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
  EXPECT_EQ(sim->run(dram, kInsnAddr, 1).cycles, 35u);
}

}  // namespace
}  // namespace tessel::sim
