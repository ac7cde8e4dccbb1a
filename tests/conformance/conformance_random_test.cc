// Seeded random token-valid Programs (tests/common/random_program.h) on fsim, cycle and rtl for
// one configuration, TESSEL_CONFORMANCE_CONFIG: 40 seeds; 30 with the configuration's own
// run-time keys (rounds, buffer regions, up to 16 regions in flight, loop sizes and instruction
// kinds varied with the seed), 2 with DRAM_LATENCY 0 and 100, 8 under small run-time queue
// depths (command queues of 1-2 entries, token queues of 1-2).
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/common/random_program.h"
#include "tests/conformance/conformance.h"
#include "tests/conformance/directed.h"

#ifndef TESSEL_CONFORMANCE_CONFIG
#error "TESSEL_CONFORMANCE_CONFIG (the configuration name) must be defined by CMake"
#endif

namespace tessel::conformance {
namespace {

TEST(Conformance, Random) {
  const ConfigCase c = config_case(TESSEL_CONFORMANCE_CONFIG);
  std::printf("[conformance] config %s = %s from %s\n", c.name.c_str(), c.cfg.label().c_str(),
              c.source.c_str());
  std::vector<isa::Program> programs;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    isa::HwConfig cfg = c.cfg;
    if (seed == 31 || seed == 32) cfg = with_runtime_keys(c.cfg, 0, 0, seed == 31 ? 0 : 100);
    if (seed > 32) cfg = with_runtime_keys(c.cfg, seed % 2 ? 1 : 2, seed > 36 ? 2 : 1);
    testgen::RandomProgramOptions opt;
    opt.blocks = 3 + uint32_t(seed % 4);
    opt.regions = seed % 10 == 0 ? 16 : 1 + uint32_t(seed % 3);
    opt.max_iter = seed % 4 == 0 ? 8 : 4;
    opt.max_uops = seed % 3 == 0 ? 16 : 8;
    opt.max_x_size = seed % 5 == 0 ? 64 : 16;
    opt.padding = seed % 7 != 0;
    opt.zero_size = seed % 6 != 0;
    programs.push_back(testgen::random_program(cfg, seed, opt));
  }
  Harness h(configs_of(programs));
  int with_data = 0;
  for (const isa::Program& p : programs) with_data += h.check(p, c.name).wrote_output;
  EXPECT_GE(with_data, 30) << "too few random Programs stored non-zero data";
  TESSEL_CONFORMANCE_FINISH(h, c.name + "/Random");
}

}  // namespace
}  // namespace tessel::conformance
