// End to end: the hand-written int8 matmul TIR (single-buffered with computed tokens; two
// virtual threads in ping-pong with written tokens) -> build_accel_program -> fsim and the cycle
// model through the runtime's device API, bit-exact against the plain C++ loop, on three
// configurations. The ping-pong Program must take fewer cycles than the single-buffered one.
#include <gtest/gtest.h>

#include <cstdio>

#include "isa/asm.h"
#include "compiler/backend/accel/stream_cost.h"
#include "tests/accel_tir/accel_tir_test_util.h"

namespace tessel::compiler::accel_tir::testing {
namespace {

TEST(AccelTirE2e, MatmulBitExactOnFsimAndCycleAllConfigs) {
  for (const auto& [cname, cfg] : test_configs()) {
    const MatmulSpec base;
    const MatmulData data = make_data(base, 7);
    const std::vector<int8_t> want = reference(base, data);
    uint64_t cycles[2] = {0, 0};
    for (int pp = 0; pp < 2; ++pp) {
      MatmulSpec s = base;
      s.ping_pong = pp == 1;
      const MatmulTir t = make_matmul_tir(cfg, s);
      BuildReport rep;
      const isa::Program prog = build_accel_program(t.func, cfg, t.segments, {}, &rep);
      EXPECT_EQ(rep.explicit_tokens, s.ping_pong);
      const MatmulDims d = dims(cfg, s);
      // every output element of every tile: tm*tn*kb GEMM uops per tile
      EXPECT_EQ(rep.gemm_uop_executions, d.tiles_m * d.tiles_n * s.tm * s.tn * d.kb) << cname;
      EXPECT_EQ(rep.stores, d.tiles_m * d.tiles_n + (s.ping_pong ? 0 : 1)) << cname;  // + the ending's no-op
      const RunResult f = run_matmul("fsim", prog, s, data);
      const RunResult c = run_matmul("cycle", prog, s, data);
      EXPECT_EQ(f.c, want) << cname << (s.ping_pong ? " ping-pong" : " single") << " on fsim";
      EXPECT_EQ(c.c, want) << cname << (s.ping_pong ? " ping-pong" : " single") << " on cycle";
      EXPECT_EQ(f.cycles, 0u);
      EXPECT_EQ(c.cycles, accel::estimate_cycles(prog)) << cname << ": the stream cost model gives the cycle model's count";
      EXPECT_EQ(run_matmul("cycle", prog, s, data).cycles, c.cycles) << cname << ": cycles are deterministic";
      cycles[pp] = c.cycles;
      std::printf("[ cycles ] %-10s %-9s insns=%lld uops=%lld gemm_uops=%lld cycles=%llu\n", cname.c_str(),
                  s.ping_pong ? "ping-pong" : "single", static_cast<long long>(rep.instructions),
                  static_cast<long long>(rep.uops), static_cast<long long>(rep.gemm_uop_executions),
                  static_cast<unsigned long long>(c.cycles));
    }
    EXPECT_LT(cycles[1], cycles[0]) << cname << ": ping-pong must beat single buffering";
    std::printf("[ cycles ] %-10s single/ping-pong = %.3f\n", cname.c_str(),
                static_cast<double>(cycles[0]) / static_cast<double>(cycles[1]));
  }
}

TEST(AccelTirE2e, ClippingAndNoClippingShifts) {
  const isa::HwConfig cfg;
  for (int shift : {4, 12}) {
    MatmulSpec s;
    s.shift = shift;
    s.m = 16;
    s.tm = 4;
    const MatmulData data = make_data(s, 11);
    const std::vector<int8_t> want = reference(s, data);
    int clipped = 0;
    for (int8_t x : want) clipped += x == 127 || x == -128;
    if (shift == 4) {
      EXPECT_GT(clipped, static_cast<int>(want.size()) / 2);
    }
    if (shift == 12) {
      EXPECT_LT(clipped, static_cast<int>(want.size()) / 20);
    }
    for (bool pp : {false, true}) {
      s.ping_pong = pp;
      const MatmulTir t = make_matmul_tir(cfg, s);
      const isa::Program prog = build_accel_program(t.func, cfg, t.segments);
      EXPECT_EQ(run_matmul("fsim", prog, s, data).c, want) << "shift " << shift << (pp ? " ping-pong" : "");
    }
  }
}

TEST(AccelTirE2e, Deterministic) {
  const isa::HwConfig cfg;
  for (bool pp : {false, true}) {
    MatmulSpec s;
    s.ping_pong = pp;
    const isa::Program a =
        build_accel_program(make_matmul_tir(cfg, s).func, cfg, make_matmul_tir(cfg, s).segments);
    const isa::Program b =
        build_accel_program(make_matmul_tir(cfg, s).func, cfg, make_matmul_tir(cfg, s).segments);
    EXPECT_EQ(a.serialize(), b.serialize());
  }
}

}  // namespace
}  // namespace tessel::compiler::accel_tir::testing
