// Directed conformance Programs (tests/conformance/directed.h), and three streams with
// hand-computed timing, on fsim, cycle and rtl for one configuration, TESSEL_CONFORMANCE_CONFIG
// ("default", "1x8x8", "batch2" or "bus128"; one executable per configuration so `ctest -j2`
// runs them in parallel).
#include <gtest/gtest.h>

#include <cstdio>

#include "isa/asm.h"
#include "tests/conformance/conformance.h"
#include "tests/conformance/directed.h"

#ifndef TESSEL_CONFORMANCE_CONFIG
#error "TESSEL_CONFORMANCE_CONFIG (the configuration name) must be defined by CMake"
#endif

namespace tessel::conformance {
namespace {

TEST(Conformance, Directed) {
  const ConfigCase c = config_case(TESSEL_CONFORMANCE_CONFIG);
  std::printf("[conformance] config %s = %s from %s\n", c.name.c_str(), c.cfg.label().c_str(),
              c.source.c_str());
  const std::vector<isa::Program> programs = directed_programs(c.cfg);
  ASSERT_GE(programs.size(), 80u);
  Harness h(configs_of(programs));
  for (const isa::Program& p : programs) {
    const bool wrote = h.check(p, c.name).wrote_output;
    // Every Program but the lone FINISH stores data it computed; all-zero output would mean the
    // observation path is broken and the comparison proves nothing.
    if (p.name != "finish/alone") {
      EXPECT_TRUE(wrote) << p.name << " [" << p.config.label() << "]: no non-zero output byte";
    }
  }
  // 64-bit DRAM addresses: a few Programs with their image above 4 GiB (relocated dram_base
  // fields still fit 32 bits, byte addresses do not).
  constexpr uint64_t kHighBase = (uint64_t{1} << 32) + (uint64_t{1} << 16);
  int high = 0;
  for (const isa::Program& p : programs) {
    if (p.config == c.cfg &&
        (p.name == "load_inp/long_rows" || p.name == "load_uop/unaligned" ||
         p.name == "load_acc8/pad_all" || p.name == "store/reload" ||
         p.name == "queues/bus_contention" || p.name == "queues/ping_pong_2")) {
      EXPECT_TRUE(h.check(p, c.name + " high-address", kHighBase).wrote_output) << p.name;
      ++high;
    }
  }
  EXPECT_EQ(high, 6);
  TESSEL_CONFORMANCE_FINISH(h, c.name + "/Directed");
}

// Three tiny streams whose timing follows by hand from docs/microarchitecture.md: an oracle
// independent of both timed models, so the two cannot agree on a wrong reading of the spec here.
// L = DRAM_LATENCY, Bf(n) = ceil(16 n / W) beats of a fetch burst of n instructions (W = bus
// bytes). Fetch's burst is granted in cycle 0 and its beats arrive from 1 + L (sections 2.3, 3);
// the first instruction is dispatched at 1 + L + Bf, the next ones one cycle apart; a command is
// visible to its module the cycle after its dispatch (section 1).
//  * FINISH alone: S = D = 2 + L + Bf(1) (section 5.4); cycles = D + 1 = 3 + L + Bf(1).
//  * empty ALU (n = 0), FINISH: ALU S = D = 2 + L + Bf(2); FINISH S = D = 3 + L + Bf(2).
//  * LOAD UOP of one uop, GEMM reset of it, FINISH: LOAD S = 2 + L + Bf(3), its 1-beat burst
//    granted at S + 1 arrives at S + 2 + L = D (section 5.1, no pads); GEMM S = D + 1,
//    D = S + 1 + 4 (section 5.3); FINISH S = D = GEMM D + 1; cycles = 12 + 2L + Bf(3).
TEST(Conformance, SpecTimings) {
  const ConfigCase c = config_case(TESSEL_CONFORMANCE_CONFIG);
  const std::vector<int> latencies = {c.cfg.dram_latency, 0, 5};
  std::vector<isa::HwConfig> configs;
  for (int lat : latencies) configs.push_back(with_runtime_keys(c.cfg, 0, 0, lat));
  Harness h(configs);
  const uint64_t w = uint64_t(c.cfg.bus_bytes());
  auto bf = [w](uint64_t n) { return (16 * n + w - 1) / w; };
  for (const isa::HwConfig& cfg : configs) {
    const uint64_t l = uint64_t(cfg.dram_latency);
    const std::string tag = c.name + " [" + cfg.label() + "] ";

    const CheckResult finish = h.check(isa::assemble("FINISH\n", cfg, "spec/finish"), c.name);
    EXPECT_EQ(finish.cycle_cycles, std::optional<uint64_t>(3 + l + bf(1))) << tag << "FINISH";
    if (finish.rtl_cycles) {
      EXPECT_EQ(*finish.rtl_cycles, 3 + l + bf(1)) << tag << "FINISH";
    }

    const CheckResult alu = h.check(
        isa::assemble("ALU ADD uop=0:0 iter=1,1 dst=0,0 src=0,0 imm=1\nFINISH\n", cfg, "spec/alu"),
        c.name);
    EXPECT_EQ(alu.cycle_cycles, std::optional<uint64_t>(4 + l + bf(2))) << tag << "empty ALU";
    if (alu.rtl_cycles) {
      EXPECT_EQ(*alu.rtl_cycles, 4 + l + bf(2)) << tag << "empty ALU";
    }

    const CheckResult gemm =
        h.check(isa::assemble(".uop 0 0 0\n"
                              "LOAD UOP sram=0 dram=0 y=1 x=1 stride=1\n"
                              "GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0 reset\n"
                              "FINISH\n",
                              cfg, "spec/load_gemm"),
                c.name);
    const uint64_t f = bf(3);
    EXPECT_EQ(gemm.cycle_cycles, std::optional<uint64_t>(12 + 2 * l + f))
        << tag << "LOAD UOP, GEMM";
    if (gemm.rtl_cycles) {
      EXPECT_EQ(*gemm.rtl_cycles, 12 + 2 * l + f) << tag << "LOAD UOP, GEMM";
    }
    ASSERT_EQ(gemm.cycle_trace.size(), 3u) << tag;
    const std::vector<sim::InsnTiming> want = {
        {0, isa::Module::kCompute, isa::Opcode::kLoad, 1 + l + f, 2 + l + f, 4 + 2 * l + f},
        {1, isa::Module::kCompute, isa::Opcode::kGemm, 2 + l + f, 5 + 2 * l + f, 10 + 2 * l + f},
        {2, isa::Module::kCompute, isa::Opcode::kFinish, 3 + l + f, 11 + 2 * l + f, 11 + 2 * l + f},
    };
    const std::optional<sim::TimelineDivergence> d =
        sim::compare_timelines(want, gemm.cycle_trace, "spec", "cycle");
    EXPECT_FALSE(d.has_value()) << tag << (d ? d->message : "");
  }
  TESSEL_CONFORMANCE_FINISH(h, c.name + "/SpecTimings");
}

}  // namespace
}  // namespace tessel::conformance
