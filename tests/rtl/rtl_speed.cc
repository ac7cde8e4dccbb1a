// Measures the RTL simulator's speed (a tool, not a test; run:
//   build-*/tests/rtl/tessel_rtl_speed [blocks] [config-index] [wave.fst|-] [seed] [gemm|all]).
// One GEMM-heavy random Program (tests/common/random_program.h: `blocks` rounds of up to 4 GEMMs
// of up to 16 x 16 x 32 uops each, few ALU ops) on the built configuration `config-index`
// (default 0, the first of TESSEL_RTL_CONFIGS). Prints simulated cycles, wall seconds and
// simulated cycles per second of the whole run() (static checks included) and of the static
// checks alone (fsim on the same stream), and checks the DRAM against fsim. When the cycle model
// is built it also runs the Program there and compares the two per-instruction timelines
// (sim::compare_timelines) and reports its speed. With a third argument (not "-") the run also
// writes an FST waveform of every cycle there (the cost of dumping); the fourth is the seed; with
// "all" as the fifth the Program uses every instruction kind of the generator (pads, ACC loads,
// more ALU ops) instead of the GEMM-heavy mix.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "sim/common/program_loader.h"
#include "sim/common/timeline.h"
#ifdef TESSEL_HAVE_CYCLE_SIM
#include "sim/cycle/cycle_sim.h"
#endif
#include "sim/fsim/fsim.h"
#include "sim/rtl/rtl_sim.h"
#include "tests/common/random_program.h"

int main(int argc, char** argv) {
  using namespace tessel;
  using Clock = std::chrono::steady_clock;
  const uint32_t blocks = argc > 1 ? uint32_t(std::atoi(argv[1])) : 24;
  const size_t index = argc > 2 ? size_t(std::atoi(argv[2])) : 0;
  const std::string wave = argc > 3 && std::string(argv[3]) != "-" ? argv[3] : "";
  const uint64_t seed = argc > 4 ? uint64_t(std::atoll(argv[4])) : 7;
  const bool all_kinds = argc > 5 && std::string(argv[5]) == "all";
  const std::vector<isa::HwConfig> built = sim::rtl_built_configs();
  if (index >= built.size()) {
    std::fprintf(stderr, "config index %zu: only %zu configurations are built\n", index, built.size());
    return 2;
  }
  const isa::HwConfig cfg = built[index];
  testgen::RandomProgramOptions ro;
  ro.blocks = blocks;
  if (!all_kinds) {
    ro.max_iter = 16;
    ro.max_uops = 32;
    ro.max_gemms = 4;
    ro.max_alus = 1;
    ro.acc_load = false;
    ro.acc8_load = false;
    ro.padding = false;
  }
  const isa::Program p = testgen::random_program(cfg, seed, ro);

  const sim::ProgramLayout layout = sim::default_layout(p);
  sim::Dram want(layout.dram_bytes);
  const sim::LoadedProgram at = sim::load_program(want, p);
  sim::Dram got(layout.dram_bytes);
  sim::load_program(got, p);

  sim::FunctionalSimulator fsim(cfg);
  const auto f0 = Clock::now();
  const sim::RunStats fs = fsim.run(want, at.insn_addr, at.insn_count);
  const double fsim_s = std::chrono::duration<double>(Clock::now() - f0).count();

  sim::RtlSimOptions opt;
  opt.wave_path = wave;
  opt.record_trace = true;
  const auto rtl = sim::make_rtl_sim(cfg, opt);
  const auto t0 = Clock::now();
  const sim::RunStats rs = rtl->run(got, at.insn_addr, at.insn_count);
  const double rtl_s = std::chrono::duration<double>(Clock::now() - t0).count();
  const bool same = std::memcmp(want.data(), got.data(), want.size()) == 0;

  std::printf("config        %s\n", cfg.label().c_str());
  std::printf("program       %zu instructions, %llu GEMM uops, %llu ALU uops\n", p.insns.size(),
              (unsigned long long)fs.counters.gemm_counter, (unsigned long long)fs.counters.alu_counter);
  std::printf("rtl           %llu cycles in %.3f s: %.0f cycles/s%s\n", (unsigned long long)rs.cycles,
              rtl_s, double(rs.cycles) / rtl_s, wave.empty() ? "" : " (waveform of every cycle)");
  std::printf("static checks fsim alone %.4f s (%.1f%% of the rtl run)\n", fsim_s, 100.0 * fsim_s / rtl_s);
  std::printf("dram          %s fsim\n", same ? "bit-identical with" : "DIFFERS from");
  bool agree = true;
#ifdef TESSEL_HAVE_CYCLE_SIM
  sim::CycleSimOptions copt;
  copt.record_trace = true;
  const auto cyc = sim::make_cycle_sim(cfg, copt);
  sim::Dram cdram(layout.dram_bytes);
  sim::load_program(cdram, p);
  const auto c0 = Clock::now();
  const sim::RunStats cs = cyc->run(cdram, at.insn_addr, at.insn_count);
  const double cyc_s = std::chrono::duration<double>(Clock::now() - c0).count();
  std::printf("cycle model   %llu cycles in %.3f s: %.0f cycles/s\n", (unsigned long long)cs.cycles,
              cyc_s, double(cs.cycles) / cyc_s);
  const auto div = sim::compare_timelines(cyc->trace(), rtl->trace(), "cycle", "rtl");
  agree = !div && cs.cycles == rs.cycles;
  std::printf("timelines     %s\n", div ? ("first divergence at cycle " + std::to_string(div->cycle) + ": " +
                                           div->message).c_str()
                                        : (cs.cycles == rs.cycles ? "identical (cycle and rtl)"
                                                                  : "identical, but the run's cycles differ"));
#endif
  return same && agree ? 0 : 1;
}
