// fsim on random Programs from tessel_testgen: verifier-clean, run without error on five
// configurations and under queue pressure, deterministic.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "isa/verifier.h"
#include "sim_test_util.h"
#include "tests/common/random_program.h"

namespace tessel::sim {
namespace {

using testgen::random_program;
using testgen::RandomProgramOptions;

struct NamedConfig {
  std::string name;
  isa::HwConfig cfg;
};

std::vector<NamedConfig> configs() {
  std::vector<NamedConfig> v;
  v.push_back({"default", isa::HwConfig{}});
  // LOG_BLOCK 3 with buffers scaled down so the depths (and so the field widths) stay those of
  // the default config (VTA's config rules: every field must fit 128 bits).
  isa::HwConfig block3;
  block3.log_block_in = block3.log_block_out = 3;
  block3.log_inp_buff_size = 14;
  block3.log_wgt_buff_size = 16;
  block3.log_acc_buff_size = 16;
  v.push_back({"log_block_3", block3});
  isa::HwConfig batch1;
  batch1.log_batch = 1;
  v.push_back({"log_batch_1", batch1});
  isa::HwConfig bus7;
  bus7.log_bus_width = 7;
  v.push_back({"log_bus_width_7", bus7});
  // BLOCK_IN 16, BLOCK_OUT 8: a shape without a specialised GEMM kernel (the generic path).
  isa::HwConfig rect;
  rect.log_block_out = 3;
  rect.log_wgt_buff_size = 17;
  rect.log_acc_buff_size = 16;
  v.push_back({"block_16x8", rect});
  return v;
}

std::string diagnostics(const isa::Program& p) {
  std::string s;
  for (const isa::Diagnostic& d : isa::check_program(p)) s += d.message + "\n";
  return s;
}

TEST(FsimRandom, VerifierCleanAndRunsOnEveryConfig) {
  for (const NamedConfig& nc : configs()) {
    FunctionalSimulator sim(nc.cfg);
    for (uint64_t seed = 1; seed <= 30; ++seed) {
      const isa::Program p = random_program(nc.cfg, seed);
      ASSERT_EQ(diagnostics(p), "") << nc.name << " seed " << seed;
      RunStats st;
      Dram d = test::run_program(sim, p, &st);
      EXPECT_EQ(st.counters.insn_count, p.insns.size()) << nc.name << " seed " << seed;
      EXPECT_GT(st.counters.out_store_nbytes, 0u) << nc.name << " seed " << seed;
      EXPECT_GT(st.counters.gemm_counter + st.counters.alu_counter, 0u);
    }
  }
}

TEST(FsimRandom, QueuePressureAndSmallQueues) {
  for (const NamedConfig& nc : configs()) {
    isa::HwConfig cfg = nc.cfg;
    cfg.token_queue_depth = 8;
    cfg.cmd_queue_depth = 2;
    RandomProgramOptions o;
    o.blocks = 24;
    o.regions = 64;  // clamped to the token queue depth: 8 rounds in flight
    FunctionalSimulator sim(cfg);
    for (uint64_t seed = 100; seed < 104; ++seed) {
      const isa::Program p = random_program(cfg, seed, o);
      ASSERT_EQ(diagnostics(p), "") << nc.name << " seed " << seed;
      RunStats st;
      test::run_program(sim, p, &st);
      EXPECT_EQ(st.counters.insn_count, p.insns.size());
    }
  }
  // Many outstanding tokens with the default (deep) queues, and single-entry queues.
  for (int depth : {1, 1024}) {
    isa::HwConfig cfg;
    cfg.cmd_queue_depth = depth;
    cfg.token_queue_depth = depth;
    RandomProgramOptions o;
    o.blocks = 80;
    o.regions = 64;
    o.max_y_size = 2;
    FunctionalSimulator sim(cfg);
    const isa::Program p = random_program(cfg, 7, o);
    ASSERT_EQ(diagnostics(p), "") << "depth " << depth;
    RunStats st;
    test::run_program(sim, p, &st);
    EXPECT_EQ(st.counters.insn_count, p.insns.size());
  }
}

TEST(FsimRandom, InstructionKindSubsets) {
  const isa::HwConfig cfg;
  FunctionalSimulator sim(cfg);
  for (int mask = 0; mask < 32; ++mask) {
    RandomProgramOptions o;
    o.gemm = mask & 1;
    o.alu = mask & 2;
    o.acc_load = mask & 4;
    o.acc8_load = mask & 8;
    o.padding = o.zero_size = o.extra_loads = mask & 16;
    const isa::Program p = random_program(cfg, 1000 + mask, o);
    ASSERT_EQ(diagnostics(p), "") << "mask " << mask;
    RunStats st;
    test::run_program(sim, p, &st);
    EXPECT_EQ(st.counters.insn_count, p.insns.size());
    EXPECT_EQ(st.counters.gemm_counter > 0, o.gemm) << "mask " << mask;
  }
}

TEST(FsimRandom, GeneratorIsDeterministic) {
  const isa::HwConfig cfg;
  EXPECT_EQ(random_program(cfg, 42).serialize(), random_program(cfg, 42).serialize());
  EXPECT_NE(random_program(cfg, 42).serialize(), random_program(cfg, 43).serialize());
  EXPECT_THROW(random_program(cfg, 1, RandomProgramOptions{.blocks = 0}), UserError);
  RandomProgramOptions bad_pad;
  bad_pad.max_pad = 16;
  EXPECT_THROW(random_program(cfg, 1, bad_pad), UserError);
}

TEST(FsimRandom, SameRunTwiceGivesIdenticalDramAndCounters) {
  for (const NamedConfig& nc : configs()) {
    const isa::Program p = random_program(nc.cfg, 9);
    FunctionalSimulator a(nc.cfg), b(nc.cfg);
    RunStats sa, sb, sa2;
    Dram da = test::run_program(a, p, &sa);
    Dram db = test::run_program(b, p, &sb);
    Dram da2 = test::run_program(a, p, &sa2);  // same simulator again: SRAM left from run 1
    ASSERT_EQ(da.size(), db.size());
    EXPECT_TRUE(std::equal(da.data(), da.data() + da.size(), db.data())) << nc.name;
    EXPECT_TRUE(std::equal(da.data(), da.data() + da.size(), da2.data())) << nc.name;
    EXPECT_EQ(sa.counters, sb.counters);
    EXPECT_EQ(sa.counters, sa2.counters);
    // The output is not trivially zero.
    const std::vector<int8_t> out = test::segment_i8(da, p, "out");
    EXPECT_TRUE(std::any_of(out.begin(), out.end(), [](int8_t v) { return v != 0; })) << nc.name;
  }
}

TEST(FsimRandom, RaceFreeResultsDoNotDependOnTheSchedule) {
  // The generator promises race-free Programs: fsim's two interleavings of the modules must give
  // the same DRAM bytes (this is what lets the cycle model be compared bit for bit).
  for (const NamedConfig& nc : configs()) {
    RandomProgramOptions o;
    o.blocks = 12;
    o.regions = 3;
    for (uint64_t seed = 500; seed < 506; ++seed) {
      const isa::Program p = random_program(nc.cfg, seed, o);
      FunctionalSimulator greedy(nc.cfg, FsimSchedule::kGreedy);
      FunctionalSimulator lockstep(nc.cfg, FsimSchedule::kLockstep);
      RunStats sg, sl;
      Dram dg = test::run_program(greedy, p, &sg);
      Dram dl = test::run_program(lockstep, p, &sl);
      EXPECT_TRUE(std::equal(dg.data(), dg.data() + dg.size(), dl.data()))
          << nc.name << " seed " << seed;
      EXPECT_EQ(sg.counters, sl.counters);
    }
  }
}

TEST(FsimRandom, LockstepScheduleSeesARace) {
  // Control for the test above: a racy Program (compute stores results without waiting for the
  // load that overwrites its INP rows) gives different results under the two schedules, so the
  // schedules do interleave differently.
  test::ProgramBuilder b;
  const uint32_t i = b.add_i8("inp", isa::MemType::kInp, std::vector<int8_t>(32, 3));
  const uint32_t w = b.add_i8("wgt", isa::MemType::kWgt, std::vector<int8_t>(256, 1));
  const uint32_t u = b.add_uops("uop", {isa::Uop{0, 0, 0}});
  const uint32_t out = b.add_output("out", isa::MemType::kOut, 1);
  // Load: INP row 0 = 3s, WGT row 0 = 1s, push l2g. After the GEMM in program order, a load
  // with x_pad_0 = 1 zeroes INP row 0 without waiting for compute to release it (the race).
  b.emit(isa::make_mem(isa::Opcode::kLoad, isa::MemType::kInp, 0, i, 1, 1, 1));
  isa::Instruction lw = isa::make_mem(isa::Opcode::kLoad, isa::MemType::kWgt, 0, w, 1, 1, 1);
  lw.dep.push_next = true;
  b.emit(lw);
  isa::Instruction lu = isa::make_mem(isa::Opcode::kLoad, isa::MemType::kUop, 0, u, 1, 1, 1);
  lu.dep.pop_prev = true;
  b.emit(lu);
  b.emit(isa::make_gemm(0, 1, 1, 1, 0, 0, 0, 0, 0, 0, true));
  isa::Instruction g = isa::make_gemm(0, 1, 1, 1, 0, 0, 0, 0);
  g.dep.push_next = true;
  b.emit(g);
  b.emit(isa::make_mem(isa::Opcode::kLoad, isa::MemType::kInp, 0, i, 1, 1, 1, 0, 0, 1, 0));
  isa::Instruction st = isa::make_mem(isa::Opcode::kStore, isa::MemType::kOut, 0, out, 1, 1, 1);
  st.dep.pop_prev = true;
  st.dep.push_prev = true;
  b.emit(st);
  b.emit(isa::make_noop(isa::Module::kCompute, isa::DepFlags{false, true, false, false}));
  b.emit(isa::make_finish());
  FunctionalSimulator greedy({}, FsimSchedule::kGreedy);
  FunctionalSimulator lockstep({}, FsimSchedule::kLockstep);
  const std::vector<int8_t> a = test::segment_i8(test::run_program(greedy, b.program()), b.program(), "out");
  const std::vector<int8_t> c = test::segment_i8(test::run_program(lockstep, b.program()), b.program(), "out");
  // Greedy: fetch dispatches everything, then load runs all three loads before compute starts,
  // so the GEMM reads the zeroed row 0.
  EXPECT_EQ(a[0], 0);
  // Lockstep: fetch dispatches one instruction per round, so the GEMM runs before the racy
  // load is even fetched: 16 lanes * 3 * 1 = 48.
  EXPECT_EQ(c[0], 48);
}

}  // namespace
}  // namespace tessel::sim
