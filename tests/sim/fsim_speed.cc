// Measures fsim throughput (a tool, not a test; run: build-*/tests/sim/tessel_fsim_speed [gemms]
// [alus]). Two Programs on the default config:
//  - "gemm": LOAD INP/WGT/UOP, then `gemms` GEMM instructions of 32 x 32 x 64 = 65,536 uops each;
//    reports GEMM uops per second (one uop = 256 int8 MACs) and MACs per second.
//  - "alu": `alus` one-uop ALU ADD instructions; reports instructions per second (fetch, decode,
//    dispatch and execute of small instructions).
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "isa/program.h"
#include "isa/spec.h"
#include "sim/common/program_loader.h"
#include "sim/fsim/fsim.h"

namespace {

using namespace tessel;
using isa::MemType;
using isa::Opcode;

isa::Program base_program(std::vector<isa::Uop> uops) {
  isa::Program p;
  p.name = "speed";
  const isa::HwConfig& cfg = p.config;
  const isa::IsaSpec spec(cfg);
  const size_t inp = p.add_segment("inp", isa::SegmentKind::kInput, size_t(cfg.inp_depth()) * cfg.inp_elem_bytes());
  const size_t wgt = p.add_segment("wgt", isa::SegmentKind::kConst, size_t(cfg.wgt_depth()) * cfg.wgt_elem_bytes());
  for (size_t s : {inp, wgt}) {
    uint32_t x = 12345;
    for (uint64_t b = 0; b < p.segments[s].size_bytes; ++b) {
      x = x * 1664525u + 1013904223u;
      p.image[p.segments[s].offset_bytes + b] = uint8_t(x >> 24);
    }
  }
  const size_t u = p.add_segment("uop", isa::SegmentKind::kConst, uops.size() * 4);
  for (size_t k = 0; k < uops.size(); ++k) {
    const uint32_t bits = spec.encode_uop(uops[k]);
    std::memcpy(&p.image[p.segments[u].offset_bytes + k * 4], &bits, 4);
  }
  p.uops = uops;
  p.insns.push_back(isa::make_mem(Opcode::kLoad, MemType::kInp, 0,
                                  uint32_t(p.segments[inp].offset_bytes / cfg.inp_elem_bytes()), 1,
                                  uint32_t(cfg.inp_depth()), uint32_t(cfg.inp_depth())));
  isa::Instruction lw = isa::make_mem(Opcode::kLoad, MemType::kWgt, 0,
                                      uint32_t(p.segments[wgt].offset_bytes / cfg.wgt_elem_bytes()),
                                      1, uint32_t(cfg.wgt_depth()), uint32_t(cfg.wgt_depth()));
  lw.dep.push_next = true;
  p.insns.push_back(lw);
  isa::Instruction lu = isa::make_mem(Opcode::kLoad, MemType::kUop, 0,
                                      uint32_t(p.segments[u].offset_bytes / 4), 1,
                                      uint32_t(uops.size()), uint32_t(uops.size()));
  lu.dep.pop_prev = true;
  p.insns.push_back(lu);
  return p;
}

/// Runs `p` once; returns the process CPU seconds of run() (CPU time, not wall time, so that
/// other processes on a shared machine do not skew the rate).
double time_run(const isa::Program& p, sim::RunStats* stats) {
  sim::FunctionalSimulator fsim(p.config);
  sim::Dram d(sim::default_layout(p).dram_bytes);
  const sim::LoadedProgram at = sim::load_program(d, p);
  const std::clock_t t0 = std::clock();
  *stats = fsim.run(d, at.insn_addr, at.insn_count);
  const std::clock_t t1 = std::clock();
  return double(t1 - t0) / CLOCKS_PER_SEC;
}

}  // namespace

int main(int argc, char** argv) {
  const int gemms = argc > 1 ? std::atoi(argv[1]) : 200;
  const int alus = argc > 2 ? std::atoi(argv[2]) : 200000;
  try {
    std::vector<isa::Uop> uops;
    for (uint32_t k = 0; k < 64; ++k) uops.push_back(isa::Uop{k, k, k});
    isa::Program g = base_program(uops);
    // dst = k + 32 i + j (< 1087), src = k + 32 i + j (< 2048), wgt = k + 16 i + j (< 1024).
    for (int n = 0; n < gemms; ++n) g.insns.push_back(isa::make_gemm(0, 64, 32, 32, 32, 1, 32, 1, 16, 1));
    g.insns.push_back(isa::make_finish());
    sim::RunStats s;
    const double tg = time_run(g, &s);
    std::printf("gemm: %d instructions, %llu uops in %.3f CPU s: %.1f M uops/s, %.2f G MAC/s, %.0f insns/s\n",
                gemms, (unsigned long long)s.counters.gemm_counter, tg,
                s.counters.gemm_counter / tg / 1e6,
                s.counters.gemm_counter * 256.0 / tg / 1e9, s.counters.insn_count / tg);

    isa::Program a = base_program({isa::Uop{0, 1, 0}});
    for (int n = 0; n < alus; ++n)
      a.insns.push_back(isa::make_alu(isa::AluOp::kAdd, 0, 1, 1, 1, 0, 0, 0, 0, n % 2 == 0, 3));
    a.insns.push_back(isa::make_finish());
    const double ta = time_run(a, &s);
    std::printf("alu: %llu instructions in %.3f CPU s: %.2f M insns/s\n",
                (unsigned long long)s.counters.insn_count, ta, s.counters.insn_count / ta / 1e6);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
