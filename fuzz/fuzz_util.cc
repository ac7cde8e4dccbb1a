#include "fuzz/fuzz_util.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

#include "isa/verifier.h"
#include "sim/common/program_loader.h"
#include "sim/fsim/fsim.h"

namespace tessel::fuzz {

void fail(std::string_view target, std::string_view what) {
  std::fprintf(stderr, "fuzz target %.*s: %.*s\n", static_cast<int>(target.size()), target.data(),
               static_cast<int>(what.size()), what.data());
  std::fflush(stderr);
  std::abort();
}

void fail_exception(std::string_view target, std::string_view kind, const char* what) {
  fail(target, std::string(kind) + " escaped: " + what);
}

std::string scratch_path(std::string_view name) {
  static const std::filesystem::path dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::filesystem::path d = (tmp && *tmp) ? tmp : "/tmp";
    d /= "tessel-fuzz-" + std::to_string(::getpid());
    std::filesystem::create_directories(d);
    return d;
  }();
  return (dir / std::string(name)).string();
}

void write_scratch(std::string_view target, const std::string& path, const uint8_t* data,
                   size_t size) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (size) f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  f.close();
  if (!f) fail(target, "cannot write the scratch file " + path);
}

namespace {

uint64_t sat_mul(uint64_t a, uint64_t b) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) return std::numeric_limits<uint64_t>::max();
  return a * b;
}
uint64_t sat_add(uint64_t a, uint64_t b) {
  return b > std::numeric_limits<uint64_t>::max() - a ? std::numeric_limits<uint64_t>::max() : a + b;
}

}  // namespace

uint64_t estimated_work(const isa::Program& p) {
  const isa::HwConfig& c = p.config;
  uint64_t work = 0;
  for (const isa::Instruction& i : p.insns) {
    uint64_t w = 1;
    switch (i.opcode) {
      case isa::Opcode::kLoad:
      case isa::Opcode::kStore: {
        const uint64_t rows = uint64_t{i.y_size} + i.y_pad_0 + i.y_pad_1;
        const uint64_t cols = uint64_t{i.x_size} + i.x_pad_0 + i.x_pad_1;
        w = sat_mul(sat_mul(rows, cols), 64);  // one element: at most a 64-lane row copy
        break;
      }
      case isa::Opcode::kGemm:
      case isa::Opcode::kAlu: {
        const uint64_t uops = i.uop_end > i.uop_bgn ? i.uop_end - i.uop_bgn : 0;
        const uint64_t lanes = i.opcode == isa::Opcode::kGemm
                                   ? uint64_t(c.batch()) * c.block_in() * c.block_out()
                                   : uint64_t(c.batch()) * c.block_out();
        w = sat_mul(sat_mul(sat_mul(i.iter_out, i.iter_in), uops), lanes);
        break;
      }
      default:
        break;
    }
    work = sat_add(work, std::max<uint64_t>(w, 1));
  }
  return work;
}

void verify_and_run(std::string_view target, const isa::Program& p, const RunBounds& bounds) {
  std::vector<isa::Diagnostic> diags;
  try {
    diags = isa::check_program(p);
  } catch (const std::exception& e) {
    fail_exception(target, "an exception from isa::check_program (documented not to throw)", e.what());
  }
  if (!diags.empty()) return;
  if (p.insns.size() > bounds.max_insns || estimated_work(p) > bounds.max_work) return;
  sim::ProgramLayout layout;
  try {
    layout = sim::default_layout(p);
  } catch (const std::exception& e) {
    fail_exception(target, "sim::default_layout failed on a verified Program", e.what());
  }
  if (layout.dram_bytes > bounds.max_dram_bytes) return;

  std::vector<std::vector<uint8_t>> results;
  for (sim::FsimSchedule schedule : {sim::FsimSchedule::kGreedy, sim::FsimSchedule::kLockstep}) {
    try {
      sim::Dram dram(layout.dram_bytes);
      const sim::LoadedProgram lp = sim::load_program(dram, p);
      sim::FunctionalSimulator fsim(p.config, schedule);
      fsim.run(dram, lp.insn_addr, lp.insn_count);
      results.emplace_back(dram.data(), dram.data() + dram.size());
    } catch (const std::exception& e) {
      fail_exception(target,
                     std::string("fsim (") + (schedule == sim::FsimSchedule::kGreedy ? "greedy" : "lockstep") +
                         ") failed on a Program the verifier accepts",
                     e.what());
    }
  }
  if (results[0] != results[1])
    fail(target, "a verified (race-free) Program leaves different DRAM under the greedy and lockstep schedules");
}

}  // namespace tessel::fuzz
