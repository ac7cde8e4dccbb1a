// The stream cost model (compiler/backend/accel/stream_cost.h) against the cycle-level model
// (sim/cycle) and against cycle counts derived by hand from docs/microarchitecture.md.
//  - HandWritten: small streams (isa asm text) that exercise the fetch bursts, a full command
//    queue, a full token queue, token waits, DRAM latency, bus contention and the store's write
//    response; the estimate equals the hand count and the cycle model's cycles.
//  - Corpus: every bundled model (models/ and ../shared/models, the list of tessel-program-corpus;
//    float models calibrated on the corpus tool's input) and ResNet-18 v1 (tests/gate) compiled
//    for hw/configs/{default,1x8x8,batch2,bus128}.json; every offloaded layer's Program is run on
//    the cycle model and the estimate must be within 2% of its cycles (the distribution per
//    configuration is printed), and LayerInfo::est_cycles must be the estimate of the emitted
//    Program.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "bench/bench_common.h"
#include "compiler/backend/accel/stream_cost.h"
#include "compiler/driver/compile.h"
#include "isa/asm.h"
#include "isa/config.h"
#include "isa/program.h"
#include "sim/common/program_loader.h"
#include "sim/common/simulator.h"
#include "sim/cycle/cycle_sim.h"
#include "support/error.h"

namespace tessel::compiler::accel {
namespace {

namespace fs = std::filesystem;

/// Cycles of `insns` on the cycle model under `cfg` (the stream at a 4096-aligned address after
/// a one-page image, as sim::load_program places a Program).
uint64_t cycle_model(const isa::HwConfig& cfg, const std::vector<isa::Instruction>& insns) {
  isa::Program prog;
  prog.config = cfg;
  prog.name = "hand";
  prog.insns = insns;
  prog.add_segment("data", isa::SegmentKind::kScratch, 1 << 16);
  const sim::ProgramLayout layout = sim::default_layout(prog);
  sim::Dram dram(layout.dram_bytes);
  const sim::LoadedProgram lp = sim::load_program(dram, prog);
  return sim::make_cycle_sim(cfg)->run(dram, lp.insn_addr, lp.insn_count).cycles;
}

uint64_t cycle_model(const isa::Program& p) {
  const sim::ProgramLayout layout = sim::default_layout(p);
  sim::Dram dram(layout.dram_bytes);
  const sim::LoadedProgram lp = sim::load_program(dram, p);
  return sim::make_cycle_sim(p.config)->run(dram, lp.insn_addr, lp.insn_count).cycles;
}

std::vector<isa::Instruction> assemble(const std::string& text) {
  return isa::parse_asm(text).insns;
}

struct HandCase {
  const char* name;
  const char* text;
  int cmd_depth;    ///< CMD_QUEUE_DEPTH (0: default)
  int token_depth;  ///< TOKEN_QUEUE_DEPTH (0: default)
  uint64_t cycles;  ///< derived by hand (default config otherwise: W = 8 bytes, L = 32)
};

// The derivations (docs/microarchitecture.md; F = first beat, B = beats, S/D = start/done):
const HandCase kHandCases[] = {
    // One fetch burst of 16 bytes = 2 beats, granted in 0: F = 33, beats 33..34; FINISH
    // dispatched in 35, S = D = 36.
    {"finish_only", "FINISH\n", 0, 0, 37},
    // Fetch: 48 bytes, beats 33..38, dispatch 39 (load), 40 (compute), 41 (FINISH). LOAD INP
    // (16 bytes, 2 beats): S = 40, granted in 41, F = 74, D = 75. LOAD UOP (1 beat): S = 41,
    // granted in 42 (the arbiter is free again), its beat waits for the bus: F = 76 = D.
    // FINISH: S = max(77, 42, 75 + 1) = 77.
    {"bus_contention",
     "LOAD INP sram=0 dram=0 y=1 x=1 stride=1\n"
     "LOAD UOP sram=0 dram=0 y=1 x=2 stride=2\n"
     "FINISH\n",
     0, 0, 78},
    // The GEMM waits for the load's token (pushed in D = 75, visible in 76): S = 76, D = 76 + 1
    // + 4; FINISH in 82.
    {"token_wait",
     "LOAD INP sram=0 dram=0 y=1 x=1 stride=1 deps=push_next\n"
     "GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0 deps=pop_prev\n"
     "FINISH\n",
     0, 0, 83},
    // Command queue depth 1: beats 33..40; GEMM 0 dispatched in 41, S = 42, D = 47; GEMM 1 waits
    // for that pop: dispatched in 43, S = 48, D = 53; GEMM 2 dispatched in 49, S = 54, D = 59;
    // FINISH dispatched in 55, S = 60.
    {"cmd_queue_full",
     "GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0\n"
     "GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0\n"
     "GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0\n"
     "FINISH\n",
     1, 0, 61},
    // Token queue depth 1: beats 33..42, dispatches 43..47. LOAD 0: S = 44, granted in 45, F = 78,
    // D = 79. GEMM 0: S = 80 (pops the token), D = 85. LOAD 1 needs the room that pop frees:
    // S = 81, granted in 82, F = 115, D = 116. GEMM 1: S = 117, D = 122. FINISH: S = 123.
    {"token_queue_full",
     "LOAD INP sram=0 dram=0 y=1 x=1 stride=1 deps=push_next\n"
     "LOAD INP sram=1 dram=1 y=1 x=1 stride=1 deps=push_next\n"
     "GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0 deps=pop_prev\n"
     "GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0 deps=pop_prev\n"
     "FINISH\n",
     0, 1, 124},
    // STORE (16 bytes, 2 beats): S = 38, granted in 39, W beats 40..41, response D = 40 + 2 + 32 =
    // 74; FINISH waits for the store: S = 75.
    {"store_response",
     "STORE OUT sram=0 dram=0 y=1 x=1 stride=1\n"
     "FINISH\n",
     0, 0, 76},
    // Two fetch bursts: 8 GEMMs (beats 33..48, dispatched 49..56, GEMM i in 50 + 6i .. 55 + 6i),
    // the second burst requested in 57: F = 90, beats 90..91, FINISH dispatched in 92 and started
    // after the last GEMM (D = 97): S = 98.
    {"two_fetch_bursts",
     "GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0\n"
     "GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0\n"
     "GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0\n"
     "GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0\n"
     "GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0\n"
     "GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0\n"
     "GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0\n"
     "GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0\n"
     "FINISH\n",
     0, 0, 99},
    // Pads: LOAD INP of one element with one pad on every side: P = 3*3 - 1 = 8 pads in
    // S+1 .. S+8 = 41..48 (S = 40), before the beats (granted in 41, F = 74, beats 74..75):
    // D = 75. Then a pads-only LOAD (y = 0, 2 pad rows of 1 + 1 + 1 columns: P = 6): S = 76,
    // D = 82. FINISH (dispatched in 41): S = 83.
    {"pads",
     "LOAD INP sram=0 dram=0 y=1 x=1 stride=1 pad=1,1,1,1\n"
     "LOAD INP sram=16 dram=0 y=0 x=1 stride=1 pad=1,1,1,1\n"
     "FINISH\n",
     0, 0, 84},
};

TEST(StreamCost, HandWritten) {
  for (const HandCase& c : kHandCases) {
    isa::HwConfig cfg;
    if (c.cmd_depth > 0) cfg.cmd_queue_depth = c.cmd_depth;
    if (c.token_depth > 0) cfg.token_queue_depth = c.token_depth;
    cfg.validate();
    const std::vector<isa::Instruction> insns = assemble(c.text);
    EXPECT_EQ(estimate_cycles(cfg, insns), c.cycles) << c.name;
    EXPECT_EQ(cycle_model(cfg, insns), c.cycles) << c.name << " (cycle model)";
  }
}

// A LOAD UOP that shares the bus with a STORE and a second fetch burst, on every bus width and
// with a 0-cycle latency: the estimate equals the cycle model (no hand count).
TEST(StreamCost, MixedStreamsMatchCycleModel) {
  std::string text;
  for (int i = 0; i < 6; ++i) {
    text += fmt::format("LOAD INP sram={} dram={} y=3 x=5 stride=7 pad=1,0,2,1 deps=push_next\n",
                        i * 32, i * 3);
    text += "GEMM uop=0:2 iter=3,2 dst=1,0 src=1,0 wgt=0,0 deps=pop_prev|push_next\n";
    text += fmt::format("LOAD UOP sram=0 dram={} y=2 x=9 stride=11\n", i * 5);
    text += "STORE OUT sram=0 dram=40 y=4 x=3 stride=70 deps=pop_prev\n";
  }
  text += "FINISH\n";
  const std::vector<isa::Instruction> insns = assemble(text);
  for (int bus : {6, 7, 8}) {
    for (int latency : {0, 1, 32}) {
      for (int depth : {1, 2, 512}) {
        isa::HwConfig cfg;
        cfg.log_bus_width = bus;
        cfg.dram_latency = latency;
        cfg.cmd_queue_depth = depth;
        cfg.token_queue_depth = depth;
        cfg.validate();
        EXPECT_EQ(estimate_cycles(cfg, insns), cycle_model(cfg, insns))
            << "bus " << bus << " latency " << latency << " depth " << depth;
      }
    }
  }
}

TEST(StreamCost, Errors) {
  const isa::HwConfig cfg;
  // no FINISH
  EXPECT_THROW(estimate_cycles(cfg, assemble("GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0\n")),
               UserError);
  // a token that is never pushed
  try {
    estimate_cycles(cfg, assemble("GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0 deps=pop_prev\n"
                                  "FINISH\n"));
    ADD_FAILURE() << "no deadlock reported";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("compute waits to pop l2g for instruction 0"),
              std::string::npos)
        << e.what();
  }
  // a flag the load module does not have
  EXPECT_THROW(estimate_cycles(cfg, assemble("LOAD INP sram=0 dram=0 y=1 x=1 stride=1 "
                                             "deps=pop_prev\nFINISH\n")),
               UserError);
  EXPECT_THROW(estimate_cycles(cfg, assemble("FINISH\n"), 8), UserError);
}

// ---------------------------------------------------------------------------------------------
// The corpus.

std::vector<uint8_t> read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

/// The input tessel-program-corpus runs (and calibrates) a model on.
std::vector<runtime::HostTensor> input_for(const fs::path& model, bool resnet18) {
  if (resnet18) return {bench::seeded_image({1, 3, 224, 224})};
  struct Staged {
    const char* prefix;
    const char* file;
    std::vector<int64_t> shape;
  };
  static const std::vector<Staged> kStaged = {
      {"mnist-12", "mnist_t10k_00000_f32_1x1x28x28.bin", {1, 1, 28, 28}},
      {"ic01_", "ic_sample8_f32_1x3x32x32.bin", {1, 3, 32, 32}},
      {"kws01_", "kws_sample6_f32_1x1x49x10.bin", {1, 1, 49, 10}},
      {"mobilenetv2-12", "imagenet_cat_f32_1x3x224x224.bin", {1, 3, 224, 224}},
  };
  const std::string name = model.filename().string();
  for (const Staged& s : kStaged) {
    if (name.rfind(s.prefix, 0) != 0) continue;
    runtime::HostTensor t;
    t.dtype = runtime::DType::kF32;
    t.shape = s.shape;
    t.bytes = read_bytes(fs::path(TESSEL_SOURCE_DIR) / "data" / "reference" / "inputs" / s.file);
    return {t};
  }
  std::vector<runtime::HostTensor> in;
  for (const std::vector<int64_t>& shape : ReferenceModel::load(model.string()).input_shapes()) {
    in.push_back(bench::seeded_image(shape));
  }
  return in;
}

/// The ONNX models of the corpus: ResNet-18 v1 (when built), models/, and the ../shared/models
/// files that differ from the bundled file of the same path.
std::vector<fs::path> corpus_models() {
  std::vector<fs::path> out;
  if (fs::is_regular_file(TESSEL_STREAM_COST_RESNET18)) out.emplace_back(TESSEL_STREAM_COST_RESNET18);
  const fs::path models = fs::path(TESSEL_SOURCE_DIR) / "models";
  auto list = [](const fs::path& dir) {
    std::vector<fs::path> v;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return v;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file() && it->path().extension() == ".onnx") v.push_back(it->path());
    }
    std::sort(v.begin(), v.end());
    return v;
  };
  for (const fs::path& p : list(models)) out.push_back(p);
  const fs::path shared(TESSEL_STREAM_COST_SHARED_MODELS);
  for (const fs::path& p : list(shared)) {
    const fs::path bundled = models / fs::relative(p, shared);
    if (fs::is_regular_file(bundled) && read_bytes(bundled) == read_bytes(p)) continue;
    out.push_back(p);
  }
  return out;
}

struct Distribution {
  size_t layers = 0, exact = 0;
  double sum = 0, worst = 0;
  std::string worst_layer;
  uint64_t insns = 0;
  double estimate_seconds = 0;
};

TEST(StreamCost, CorpusWithinTwoPercent) {
  const std::vector<std::string> configs = {"default", "1x8x8", "batch2", "bus128"};
  const std::vector<fs::path> models = corpus_models();
  ASSERT_GE(models.size(), 7u);
  std::map<std::string, Distribution> dist;
  for (const fs::path& model : models) {
    const bool resnet18 = model == fs::path(TESSEL_STREAM_COST_RESNET18);
    const std::vector<runtime::HostTensor> input = input_for(model, resnet18);
    for (const std::string& config : configs) {
      const isa::HwConfig cfg = isa::HwConfig::from_file(
          (fs::path(TESSEL_SOURCE_DIR) / "hw" / "configs" / (config + ".json")).string());
      CompileOptions opts;
      opts.config = cfg;
      opts.offload = true;
      opts.calibration = {input};
      opts.exact_requant = true;
      CompileResult compiled;
      try {
        compiled = compile_onnx(model.string(), opts);
      } catch (const Error& e) {
        std::printf("  %s on %s: not compiled: %s\n", model.filename().c_str(), config.c_str(),
                    e.what());
        continue;
      }
      Distribution& d = dist[config];
      for (const LayerInfo& li : compiled.layers) {
        if (li.placement != runtime::Placement::kAccel) continue;
        const runtime::Step& step = compiled.exe.steps.at(static_cast<size_t>(li.step));
        const isa::Program& prog = compiled.exe.programs.at(static_cast<size_t>(step.program));
        const auto t0 = std::chrono::steady_clock::now();
        const uint64_t est = estimate_cycles(prog);
        d.estimate_seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const uint64_t cycles = cycle_model(prog);
        const double err = (double(est) - double(cycles)) / double(cycles);
        const std::string where =
            fmt::format("{} on {}: layer {} ({})", model.filename().string(), config, li.name, li.op);
        EXPECT_LE(std::abs(err), 0.02) << where << ": estimate " << est << ", cycles " << cycles;
        EXPECT_EQ(li.est_cycles, int64_t(est)) << where << ": LayerInfo::est_cycles";
        ++d.layers;
        d.exact += est == cycles;
        d.insns += prog.insns.size();
        d.sum += std::abs(err);
        if (std::abs(err) >= d.worst) {
          d.worst = std::abs(err);
          d.worst_layer = where;
        }
      }
    }
  }
  size_t total = 0;
  for (const std::string& config : configs) {
    const Distribution& d = dist[config];
    total += d.layers;
    std::printf("  %-8s %4zu layers, %4zu exact: |error| mean %.3f%%, worst %.3f%% (%s); "
                "%.1f M insns/s\n",
                config.c_str(), d.layers, d.exact, d.layers ? 100 * d.sum / double(d.layers) : 0.0,
                100 * d.worst, d.worst_layer.c_str(),
                d.estimate_seconds > 0 ? double(d.insns) / d.estimate_seconds / 1e6 : 0.0);
    EXPECT_GT(d.layers, 0u) << config;
  }
  EXPECT_GE(total, 300u);
}

}  // namespace
}  // namespace tessel::compiler::accel
