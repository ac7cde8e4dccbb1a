// The cycle-level model against fsim (the golden model) on seeded random Programs
// (tests/common/random_program.h): bit-identical DRAM and identical counters for several
// configurations and queue depths; the same cycles and stats on every run; stats that add up.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "isa/config.h"
#include "isa/program.h"
#include "sim/common/program_loader.h"
#include "sim/common/simulator.h"
#include "sim/cycle/cycle_sim.h"
#include "tests/common/random_program.h"

namespace tessel::sim {
namespace {

struct NamedConfig {
  std::string name;
  isa::HwConfig cfg;
};

std::vector<NamedConfig> configs() {
  std::vector<NamedConfig> out;
  out.push_back({"default", isa::HwConfig{}});
  isa::HwConfig block3;  // LOG_BLOCK = 3: 1x8x8, buffers halved/quartered so the depths still
  block3.log_block_in = 3;  // fit the instruction fields (2048 INP, 1024 WGT, 2048 ACC rows)
  block3.log_block_out = 3;
  block3.log_inp_buff_size = 14;
  block3.log_wgt_buff_size = 16;
  block3.log_acc_buff_size = 16;
  out.push_back({"block3", block3});
  isa::HwConfig batch2;  // LOG_BATCH = 1
  batch2.log_batch = 1;
  out.push_back({"batch2", batch2});
  isa::HwConfig bus128;  // LOG_BUS_WIDTH = 7
  bus128.log_bus_width = 7;
  out.push_back({"bus128", bus128});
  isa::HwConfig tight;  // every queue one entry deep, no DRAM latency
  tight.cmd_queue_depth = 1;
  tight.token_queue_depth = 1;
  tight.dram_latency = 0;
  out.push_back({"tight_queues", tight});
  for (NamedConfig& c : out) c.cfg.validate();
  return out;
}

void expect_stats_add_up(const ModuleStats& m, uint64_t cycles, const std::string& what) {
  EXPECT_LE(m.busy_cycles + m.stall_token_cycles + m.stall_queue_cycles + m.stall_dram_cycles,
            cycles)
      << what;
}

void expect_same(const RunStats& a, const RunStats& b, const std::string& what) {
  EXPECT_EQ(a.cycles, b.cycles) << what;
  EXPECT_EQ(a.counters, b.counters) << what;
  EXPECT_EQ(a.fetch, b.fetch) << what;
  EXPECT_EQ(a.load, b.load) << what;
  EXPECT_EQ(a.compute, b.compute) << what;
  EXPECT_EQ(a.store, b.store) << what;
}

/// Runs `prog` on fsim and on the cycle model and compares everything observable.
/// Returns whether the out segment holds any non-zero byte (so the comparison saw real data).
bool check_program(const isa::HwConfig& cfg, const isa::Program& prog, const std::string& what,
                   CycleSimulator& cycle_sim) {
  const ProgramLayout layout = default_layout(prog);
  Dram ref_dram(layout.dram_bytes);
  const LoadedProgram ref_loaded = load_program(ref_dram, prog);
  Dram dram(layout.dram_bytes);
  const LoadedProgram loaded = load_program(dram, prog);
  Dram dram_again(layout.dram_bytes);
  load_program(dram_again, prog);

  std::unique_ptr<Simulator> fsim = make_fsim(cfg);
  const RunStats ref = fsim->run(ref_dram, ref_loaded.insn_addr, ref_loaded.insn_count);
  const RunStats got = cycle_sim.run(dram, loaded.insn_addr, loaded.insn_count);

  EXPECT_EQ(got.counters, ref.counters) << what;
  if (dram.size() != ref_dram.size()) {
    ADD_FAILURE() << what << ": dram sizes differ";
    return false;
  }
  const std::vector<uint8_t> out_ref = read_segment(ref_dram, prog, "out", 0);
  const std::vector<uint8_t> out_got = read_segment(dram, prog, "out", 0);
  EXPECT_EQ(out_got, out_ref) << what << ": the out segment differs";
  EXPECT_TRUE(std::equal(dram.data(), dram.data() + dram.size(), ref_dram.data()))
      << what << ": dram differs";

  EXPECT_GT(got.cycles, 0u) << what;
  EXPECT_EQ(got.fetch.insns, got.counters.insn_count) << what;
  EXPECT_EQ(got.load.insns + got.compute.insns + got.store.insns, got.counters.insn_count)
      << what;
  expect_stats_add_up(got.fetch, got.cycles, what + " fetch");
  expect_stats_add_up(got.load, got.cycles, what + " load");
  expect_stats_add_up(got.compute, got.cycles, what + " compute");
  expect_stats_add_up(got.store, got.cycles, what + " store");
  // GEMM uops issue at one per cycle at best.
  EXPECT_GE(got.compute.busy_cycles, got.counters.gemm_counter) << what;

  // Determinism: the same Program again gives the same cycles and stats.
  const RunStats again = cycle_sim.run(dram_again, loaded.insn_addr, loaded.insn_count);
  expect_same(again, got, what + " (second run)");
  return std::any_of(out_ref.begin(), out_ref.end(), [](uint8_t b) { return b != 0; });
}

TEST(CycleConformance, RandomProgramsMatchFsim) {
  for (const NamedConfig& nc : configs()) {
    CycleSimulator sim(nc.cfg);
    int with_data = 0;
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      testgen::RandomProgramOptions opt;
      opt.blocks = 4 + uint32_t(seed % 5);
      opt.regions = 1 + uint32_t(seed % 3);
      const isa::Program prog = testgen::random_program(nc.cfg, seed, opt);
      with_data += check_program(nc.cfg, prog, nc.name + " seed " + std::to_string(seed), sim);
    }
    EXPECT_GE(with_data, 30) << nc.name << ": too few Programs stored non-zero data";
  }
}

TEST(CycleConformance, ManyRegionsFillTokenQueues) {
  // Up to 16 rounds in flight: load runs far ahead of compute and fills l2g.
  isa::HwConfig cfg;
  cfg.token_queue_depth = 4;
  cfg.cmd_queue_depth = 8;
  CycleSimulator sim(cfg);
  for (uint64_t seed = 100; seed < 106; ++seed) {
    testgen::RandomProgramOptions opt;
    opt.blocks = 12;
    opt.regions = 16;
    check_program(cfg, testgen::random_program(cfg, seed, opt), "regions seed " + std::to_string(seed),
                  sim);
  }
}

TEST(CycleConformance, SeparateSimulatorsAgree) {
  // Two simulator objects of the same config (sharing the process-wide SystemC model) give the
  // same stats for the same Program, interleaved with runs of another config.
  isa::HwConfig cfg;
  isa::HwConfig other;
  other.log_batch = 1;
  const isa::Program prog = testgen::random_program(cfg, 7);
  const isa::Program other_prog = testgen::random_program(other, 8);
  CycleSimulator a(cfg), b(cfg), c(other);
  auto run = [](CycleSimulator& s, const isa::Program& p) {
    Dram dram(default_layout(p).dram_bytes);
    const LoadedProgram l = load_program(dram, p);
    return s.run(dram, l.insn_addr, l.insn_count);
  };
  const RunStats ra = run(a, prog);
  run(c, other_prog);
  const RunStats rb = run(b, prog);
  expect_same(rb, ra, "simulator b vs a");
}

}  // namespace
}  // namespace tessel::sim
