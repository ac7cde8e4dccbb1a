// The RTL simulator (sim/rtl) on every configuration it was built for: a hand-assembled Program
// (LOAD INP/WGT/UOP, GEMM reset, GEMM, ALU, STORE, FINISH) and a small random Program give
// DRAM bit-identical with fsim, the same counters, a consistent timeline; bad Programs fail with
// fsim's SimError before the RTL runs (never a hang) and the simulator is usable afterwards.
#include "sim/rtl/rtl_sim.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <filesystem>

#include "isa/verifier.h"
#include "tests/common/random_program.h"
#include "tests/sim/sim_test_util.h"

namespace tessel::sim {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using test::ProgramBuilder;

/// Deterministic int8 test data.
std::vector<int8_t> ramp(size_t n, int seed) {
  std::vector<int8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = int8_t((int(i) * 7 + seed * 13) % 23 - 11);
  return v;
}

/// Two INP elements times one WGT element into ACC rows 0 and 1, then ACC = (ACC >> 2) + same,
/// stored as OUT rows 0 and 1.
isa::Program hand_program(const isa::HwConfig& cfg) {
  ProgramBuilder b(cfg);
  const uint32_t uop = b.add_uops("uop", {isa::Uop{0, 0, 0}});
  const uint32_t inp = b.add_i8("inp", isa::MemType::kInp, ramp(size_t(2 * cfg.inp_elem_bytes()), 1));
  const uint32_t wgt = b.add_i8("wgt", isa::MemType::kWgt, ramp(size_t(cfg.wgt_elem_bytes()), 2));
  const uint32_t out = b.add_output("out", isa::MemType::kOut, 2);
  using isa::MemType;
  using isa::Opcode;
  b.emit(isa::make_mem(Opcode::kLoad, MemType::kInp, 0, inp, 1, 2, 2));
  isa::Instruction lw = isa::make_mem(Opcode::kLoad, MemType::kWgt, 0, wgt, 1, 1, 1);
  lw.dep.push_next = true;
  b.emit(lw);
  b.emit(isa::make_mem(Opcode::kLoad, MemType::kUop, 0, uop, 1, 1, 1));
  b.emit(isa::make_gemm(0, 1, 2, 1, 1, 0, 0, 0, 0, 0, /*reset=*/true));
  isa::Instruction g = isa::make_gemm(0, 1, 2, 1, 1, 0, 1, 0);
  g.dep.pop_prev = true;
  b.emit(g);
  b.emit(isa::make_alu(isa::AluOp::kShr, 0, 1, 2, 1, 1, 0, 0, 0, /*use_imm=*/true, 2));
  isa::Instruction add = isa::make_alu(isa::AluOp::kAdd, 0, 1, 2, 1, 1, 0, 1, 0);
  add.dep.push_next = true;
  b.emit(add);
  isa::Instruction st = isa::make_mem(Opcode::kStore, MemType::kOut, 0, out, 1, 2, 2);
  st.dep.pop_prev = true;
  st.dep.push_prev = true;
  b.emit(st);
  b.emit(isa::make_finish(isa::DepFlags{false, true, false, false}));
  isa::verify(b.program());
  return b.program();
}

/// Runs `p` on fsim and on `rtl` in fresh DRAMs; expects identical DRAM bytes and counters and a
/// timeline whose last instruction (FINISH) is done in cycle `cycles - 1`.
void expect_matches_fsim(RtlSimulator& rtl, const isa::Program& p) {
  FunctionalSimulator fsim(p.config);
  RunStats fs;
  const Dram want = test::run_program(fsim, p, &fs);
  LoadedProgram at;
  Dram got = test::loaded_dram(p, &at);
  const RunStats rs = rtl.run(got, at.insn_addr, at.insn_count);
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size()), 0) << "dram differs from fsim";
  EXPECT_EQ(rs.counters, fs.counters);
  EXPECT_EQ(rs.counters.insn_count, p.insns.size());
  EXPECT_EQ(rs.fetch.insns, p.insns.size());
  EXPECT_EQ(rs.load.insns + rs.compute.insns + rs.store.insns, p.insns.size());
  const std::vector<InsnTiming>& tl = rtl.trace();
  ASSERT_EQ(tl.size(), p.insns.size());
  for (size_t i = 0; i < tl.size(); ++i) {
    EXPECT_EQ(tl[i].index, i);
    EXPECT_EQ(tl[i].opcode, p.insns[i].opcode);
    EXPECT_LT(tl[i].dispatch, tl[i].start) << "instruction " << i;  // a push is visible next cycle
    EXPECT_LE(tl[i].start, tl[i].end) << "instruction " << i;
    if (i > 0) {
      EXPECT_GT(tl[i].dispatch, tl[i - 1].dispatch);  // one dispatch per cycle, in order
    }
  }
  EXPECT_EQ(tl.back().opcode, isa::Opcode::kFinish);
  EXPECT_EQ(rs.cycles, tl.back().end + 1);
}

class RtlSmoke : public ::testing::TestWithParam<isa::HwConfig> {};

TEST_P(RtlSmoke, HandProgramMatchesFsim) {
  RtlSimOptions opt;
  opt.record_trace = true;
  const auto rtl = make_rtl_sim(GetParam(), opt);
  expect_matches_fsim(*rtl, hand_program(GetParam()));
}

TEST_P(RtlSmoke, RandomProgramMatchesFsim) {
  RtlSimOptions opt;
  opt.record_trace = true;
  isa::HwConfig cfg = GetParam();
  cfg.cmd_queue_depth = 4;  // run-time limits below the built depths
  cfg.token_queue_depth = 2;
  cfg.dram_latency = 7;
  const auto rtl = make_rtl_sim(cfg, opt);
  testgen::RandomProgramOptions ro;
  ro.blocks = 3;
  expect_matches_fsim(*rtl, testgen::random_program(cfg, 11, ro));
}

TEST_P(RtlSmoke, BadProgramsFailBeforeTheRtlAndTheSimulatorRecovers) {
  const isa::HwConfig cfg = GetParam();
  RtlSimOptions opt;
  opt.record_trace = true;
  const auto rtl = make_rtl_sim(cfg, opt);
  const isa::Program good = hand_program(cfg);

  // GEMM whose loop nest leaves ACC: the last dst index is 2 * (acc depth / 2) = acc depth.
  isa::Program bad = good;
  bad.insns[4].iter_out = 1;
  bad.insns[4].iter_in = 3;
  bad.insns[4].dst_factor_in = uint32_t(cfg.acc_depth() / 2);
  {
    LoadedProgram at;
    Dram d = test::loaded_dram(bad, &at);
    EXPECT_THAT([&] { rtl->run(d, at.insn_addr, at.insn_count); },
                testing::ThrowsMessage<SimError>(AllOf(HasSubstr("compute module: insn 4 (GEMM)"),
                                                       HasSubstr("acc index"))));
  }
  // A pop nobody pushes: deadlock (the load module waits on g2l forever).
  isa::Program dead = good;
  dead.insns[0].dep.pop_next = true;
  {
    LoadedProgram at;
    Dram d = test::loaded_dram(dead, &at);
    EXPECT_THAT([&] { rtl->run(d, at.insn_addr, at.insn_count); },
                testing::ThrowsMessage<SimError>(HasSubstr("deadlock")));
  }
  // No FINISH.
  isa::Program open = good;
  open.insns.pop_back();
  open.insns.back().dep.push_prev = false;
  {
    LoadedProgram at;
    Dram d = test::loaded_dram(open, &at);
    EXPECT_THROW(rtl->run(d, at.insn_addr, at.insn_count), SimError);
  }
  // Misaligned stream, empty stream.
  {
    LoadedProgram at;
    Dram d = test::loaded_dram(good, &at);
    EXPECT_THAT([&] { rtl->run(d, at.insn_addr + 8, at.insn_count); },
                testing::ThrowsMessage<SimError>(HasSubstr("not 16-byte aligned")));
    EXPECT_THAT([&] { rtl->run(d, at.insn_addr, 0); },
                testing::ThrowsMessage<SimError>(HasSubstr("instruction count 0")));
  }
  // The same simulator still runs a good Program exactly.
  expect_matches_fsim(*rtl, good);
}

TEST_P(RtlSmoke, CycleLimitStopsTheRun) {
  RtlSimOptions opt;
  opt.cycle_limit = 20;  // fetch's first beat alone needs DRAM_LATENCY = 32 cycles
  const auto rtl = make_rtl_sim(GetParam(), opt);
  const isa::Program p = hand_program(GetParam());
  LoadedProgram at;
  Dram d = test::loaded_dram(p, &at);
  EXPECT_THAT([&] { rtl->run(d, at.insn_addr, at.insn_count); },
              testing::ThrowsMessage<SimError>(AllOf(HasSubstr("cycle limit of 20 cycles"),
                                                     HasSubstr("fetch dispatched 0 of 9"))));
}

std::string config_name(const ::testing::TestParamInfo<isa::HwConfig>& info) {
  std::string s = info.param.name() + "_bus" + std::to_string(info.param.bus_width_bits());
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

INSTANTIATE_TEST_SUITE_P(BuiltConfigs, RtlSmoke, ::testing::ValuesIn(rtl_built_configs()),
                         config_name);

TEST(RtlSim, WaveformOfAWindow) {
  if (!rtl_waves_supported()) GTEST_SKIP() << "built with TESSEL_RTL_WAVES=OFF";
  const isa::HwConfig cfg = rtl_built_configs().front();
  const std::string path =
      (std::filesystem::temp_directory_path() / "tessel_rtl_smoke_test.fst").string();
  std::filesystem::remove(path);
  RtlSimOptions opt;
  opt.wave_path = path;
  opt.wave_first_cycle = 10;
  opt.wave_last_cycle = 60;
  const auto rtl = make_rtl_sim(cfg, opt);
  const isa::Program p = hand_program(cfg);
  LoadedProgram at;
  Dram d = test::loaded_dram(p, &at);
  rtl->run(d, at.insn_addr, at.insn_count);
  ASSERT_TRUE(std::filesystem::exists(path));
  EXPECT_GT(std::filesystem::file_size(path), 1000u);
  std::filesystem::remove(path);
}

TEST(RtlSim, ConfigurationErrors) {
  isa::HwConfig cfg = rtl_built_configs().front();
  cfg.log_inp_buff_size -= 1;  // a valid configuration nobody built
  EXPECT_FALSE(rtl_supports(cfg));
  EXPECT_THAT([&] { make_rtl_sim(cfg); },
              testing::ThrowsMessage<UserError>(AllOf(HasSubstr("no RTL model was built"),
                                                      HasSubstr("TESSEL_RTL_CONFIGS"))));
  isa::HwConfig deep = rtl_built_configs().front();
  deep.cmd_queue_depth *= 2;
  EXPECT_FALSE(rtl_supports(deep));
  EXPECT_THAT([&] { make_rtl_sim(deep); },
              testing::ThrowsMessage<UserError>(HasSubstr("exceed the RTL built")));
  RtlSimOptions vcd;
  vcd.wave_path = "x.vcd";
  EXPECT_THAT([&] { make_rtl_sim(rtl_built_configs().front(), vcd); },
              testing::ThrowsMessage<UserError>(HasSubstr(
                  rtl_waves_supported() ? "must be an .fst file" : "no waveform support")));
  EXPECT_EQ(rtl_configs().size(), rtl_built_configs().size());
}

}  // namespace
}  // namespace tessel::sim
