// The verifier's deadlock rule against the simulators (isa/verifier.h): for small command-queue
// and token-queue depths (1, 2, 3, and the default 512 command entries), a stream is rejected by
// the verifier exactly when fsim (and, on the smaller streams, the cycle model) reports a
// deadlock, in both directions, over
//  - hand-written token streams (among them the pattern the verifier once accepted: a pop that
//    would make room for a blocked producer only after its own instruction started),
//  - seeded random token-only streams (zero-size instructions with random dependency flags),
//  - seeded random Programs of tests/common/random_program.h generated for deep queues,
//  - every Program of the staged int8 models compiled for the default depths.
// Then the compiler's side: compiled for a small TOKEN_QUEUE_DEPTH (and CMD_QUEUE_DEPTH), every
// Program passes the verifier at those depths, runs on fsim with them and gives the same outputs
// as the default compile.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/driver/compile.h"
#include "isa/asm.h"
#include "isa/verifier.h"
#include "runtime/device.h"
#include "runtime/graph_executor.h"
#include "sim/common/program_loader.h"
#include "sim/fsim/fsim.h"
#include "support/error.h"
#include "tests/common/random_program.h"
#include "tests/common/token_streams.h"
#include "tests/compiler/test_util.h"
#ifdef TESSEL_HAVE_CYCLE_SIM
#include "sim/cycle/cycle_sim.h"
#endif

namespace tessel::compiler {
namespace {

struct Depths {
  int cmd, tok;
};

std::vector<Depths> small_depths() {
  std::vector<Depths> d;
  for (int cmd : {1, 2, 3, 512}) {
    for (int tok : {1, 2, 3}) d.push_back({cmd, tok});
  }
  return d;
}

isa::Program at_depths(isa::Program p, Depths d) {
  p.config.cmd_queue_depth = d.cmd;
  p.config.token_queue_depth = d.tok;
  return p;
}

bool verifier_deadlocks(const isa::Program& p, std::string* msg) {
  for (const isa::Diagnostic& d : isa::check_program(p)) {
    if (d.rule == isa::VerifyRule::kDeadlock) {
      *msg = d.message;
      return true;
    }
  }
  return false;
}

// Runs p on `sim`; true when the run fails with a deadlock. Any other error fails the test.
bool sim_deadlocks(sim::Simulator& s, const isa::Program& p, std::string* msg) {
  sim::Dram dram(sim::default_layout(p).dram_bytes);
  const sim::LoadedProgram at = sim::load_program(dram, p);
  try {
    (void)s.run(dram, at.insn_addr, at.insn_count);
  } catch (const UserError& e) {
    *msg = e.what();
    EXPECT_NE(msg->find("deadlock"), std::string::npos) << s.name() << " on " << p.name << ": " << *msg;
    return true;
  }
  return false;
}

struct Tally {
  int deadlocks = 0, runs = 0;
};

// Verifier verdict == fsim verdict (and the cycle model's when `cycle`) at every small depth.
void expect_agreement(const isa::Program& deep, const std::string& what, Tally& t, bool cycle = false) {
  for (const Depths& d : small_depths()) {
    const isa::Program p = at_depths(deep, d);
    const std::string where = fmt::format("{} at CMD_QUEUE_DEPTH={}, TOKEN_QUEUE_DEPTH={}", what, d.cmd, d.tok);
    std::string vmsg, fmsg;
    const bool v = verifier_deadlocks(p, &vmsg);
    sim::FunctionalSimulator fsim(p.config);
    const bool f = sim_deadlocks(fsim, p, &fmsg);
    EXPECT_EQ(v, f) << where << "\n verifier: " << (v ? vmsg : "no deadlock")
                    << "\n fsim: " << (f ? fmsg : "runs");
    if (v) {
      // The message names the queue or command queue, an instruction and, for a token queue, the depth.
      EXPECT_NE(vmsg.find("deadlock: the "), std::string::npos) << where << ": " << vmsg;
      if (vmsg.find("waits to push token queue") != std::string::npos) {
        EXPECT_NE(vmsg.find(fmt::format("TOKEN_QUEUE_DEPTH={})", d.tok)), std::string::npos) << where << ": " << vmsg;
      }
    }
#ifdef TESSEL_HAVE_CYCLE_SIM
    if (cycle) {
      std::string cmsg;
      sim::CycleSimulator cs(p.config);
      EXPECT_EQ(sim_deadlocks(cs, p, &cmsg), f) << where << "\n cycle: " << cmsg << "\n fsim: " << fmsg;
    }
#else
    (void)cycle;
#endif
    t.deadlocks += v;
    ++t.runs;
  }
}

// ---- hand-written streams ----

const char* kNoop[3] = {"LOAD INP sram=0 dram=0 y=0 x=0 stride=0", "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0",
                        "STORE OUT sram=0 dram=0 y=0 x=0 stride=0"};

TEST(QueueDepthAgreement, HandStreams) {
  const std::vector<std::string> streams = {
      // a pop that makes room only after its instruction started (the load module waits to push
      // l2g, compute to push g2l): deadlocks at TOKEN_QUEUE_DEPTH=1
      tessel::testing::kPopMakesRoomOnlyAfterItsStart,
      // two tokens pushed into each of l2g and g2l before any pop
      tessel::testing::kTwoTokensEachWayBeforeAnyPop,
      // the store module's token is pushed after a second STORE that fetch must get past
      tessel::testing::kStoreTokenAfterSecondStore,
      // a store -> compute -> load chain with three tokens in flight on s2g and g2s
      R"(GEMM uop=0:0 iter=0,0 dst=0,0 src=0,0 wgt=0,0 deps=push_next
GEMM uop=0:0 iter=0,0 dst=0,0 src=0,0 wgt=0,0 deps=push_next
GEMM uop=0:0 iter=0,0 dst=0,0 src=0,0 wgt=0,0 deps=push_next
STORE OUT sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev|push_prev
STORE OUT sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev|push_prev
STORE OUT sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev|push_prev
GEMM uop=0:0 iter=0,0 dst=0,0 src=0,0 wgt=0,0 deps=pop_next|push_prev
GEMM uop=0:0 iter=0,0 dst=0,0 src=0,0 wgt=0,0 deps=pop_next|push_prev
GEMM uop=0:0 iter=0,0 dst=0,0 src=0,0 wgt=0,0 deps=pop_next|push_prev
LOAD INP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_next
LOAD INP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_next
LOAD INP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_next
FINISH
)",
  };
  Tally t;
  for (size_t k = 0; k < streams.size(); ++k) {
    const isa::Program p = isa::assemble(streams[k], isa::HwConfig{});
    ASSERT_TRUE(isa::check_program(p).empty()) << "stream " << k;
    expect_agreement(p, fmt::format("hand stream {}", k), t, /*cycle=*/true);
  }
  fmt::print("hand streams: {} of {} runs deadlock\n", t.deadlocks, t.runs);
  EXPECT_GT(t.deadlocks, 0);
  EXPECT_LT(t.deadlocks, t.runs);
  // The first stream: deadlocks only with one-token queues.
  const isa::Program first = isa::assemble(streams[0], isa::HwConfig{});
  std::string msg;
  EXPECT_TRUE(verifier_deadlocks(at_depths(first, {512, 1}), &msg));
  EXPECT_FALSE(verifier_deadlocks(at_depths(first, {512, 2}), &msg));
}

// ---- random token-only streams ----

uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A stream of zero-size instructions (no memory accessed) with random dependency flags. Every
// pop normally follows its push in program order (so the stream runs with deep queues); with
// `unordered`, a pop may come before its push, which deadlocks at any depth unless the queues
// let the producer run ahead. Tokens left over are popped before FINISH.
isa::Program random_token_stream(uint64_t seed, bool unordered) {
  uint64_t s = seed;
  // Queues: l2g (load -> compute), g2l (compute -> load), g2s (compute -> store), s2g (store -> compute).
  int outstanding[4] = {};
  std::string text;
  const int n = 6 + int(splitmix(s) % 30);
  auto flag = [&](int pct) { return int(splitmix(s) % 100) < pct; };
  for (int i = 0; i < n; ++i) {
    const int m = int(splitmix(s) % 3);
    std::vector<std::string> deps;
    auto pop = [&](int q, const char* name) {
      if ((outstanding[q] > 0 || (unordered && flag(15))) && flag(50)) {
        --outstanding[q];
        deps.push_back(name);
      }
    };
    auto push = [&](int q, const char* name) {
      if (flag(45)) {
        ++outstanding[q];
        deps.push_back(name);
      }
    };
    if (m == 0) {
      pop(1, "pop_next");
      push(0, "push_next");
    } else if (m == 1) {
      pop(0, "pop_prev");
      pop(3, "pop_next");
      push(1, "push_prev");
      push(2, "push_next");
    } else {
      pop(2, "pop_prev");
      push(3, "push_prev");
    }
    text += kNoop[m];
    if (!deps.empty()) {
      text += " deps=";
      for (size_t k = 0; k < deps.size(); ++k) text += (k ? "|" : "") + deps[k];
    }
    text += '\n';
  }
  // Drain: the consumer of each queue pops what is left (or the producer pushes what is missing).
  const char* consumer[4] = {"LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev",
                             "LOAD INP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_next",
                             "STORE OUT sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev",
                             "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_next"};
  const char* producer[4] = {"LOAD INP sram=0 dram=0 y=0 x=0 stride=0 deps=push_next",
                             "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=push_prev",
                             "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=push_next",
                             "STORE OUT sram=0 dram=0 y=0 x=0 stride=0 deps=push_prev"};
  for (int q = 0; q < 4; ++q) {
    for (; outstanding[q] > 0; --outstanding[q]) text += std::string(consumer[q]) + "\n";
    for (; outstanding[q] < 0; ++outstanding[q]) text += std::string(producer[q]) + "\n";
  }
  text += "FINISH\n";
  isa::Program p = isa::assemble(text, isa::HwConfig{});
  p.name = fmt::format("token_stream_{}{}", seed, unordered ? "_unordered" : "");
  return p;
}

TEST(QueueDepthAgreement, RandomTokenStreams) {
  Tally ordered, unordered;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    for (bool u : {false, true}) {
      const isa::Program p = random_token_stream(seed, u);
      expect_agreement(p, p.name, u ? unordered : ordered, /*cycle=*/seed <= 40);
    }
    if (HasFailure()) break;
  }
  fmt::print("random token streams: ordered {} of {}, unordered {} of {} runs deadlock\n", ordered.deadlocks,
             ordered.runs, unordered.deadlocks, unordered.runs);
  // Both verdicts occur often in both families.
  EXPECT_GT(ordered.deadlocks, ordered.runs / 20) << ordered.deadlocks << " of " << ordered.runs;
  EXPECT_LT(ordered.deadlocks, ordered.runs - ordered.runs / 20) << ordered.deadlocks << " of " << ordered.runs;
  EXPECT_GT(unordered.deadlocks, unordered.runs / 20) << unordered.deadlocks << " of " << unordered.runs;
  EXPECT_LT(unordered.deadlocks, unordered.runs - unordered.runs / 20) << unordered.deadlocks << " of " << unordered.runs;
}

// ---- random Programs (real loads, GEMMs, ALUs and stores) generated for deep queues ----

TEST(QueueDepthAgreement, RandomProgramsGeneratedForDeepQueues) {
  isa::HwConfig deep;
  deep.token_queue_depth = 64;
  Tally t;
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    testgen::RandomProgramOptions o;
    o.blocks = 4 + uint32_t(seed % 5);
    o.regions = 1 + uint32_t(seed % 4);  // 1..4 rounds in flight per queue
    o.max_x_size = 4;
    o.max_y_size = 2;
    const isa::Program p = testgen::random_program(deep, seed, o);
    ASSERT_TRUE(isa::check_program(p).empty()) << p.name;
    expect_agreement(p, p.name, t, /*cycle=*/seed <= 6);
  }
  fmt::print("random programs: {} of {} runs deadlock\n", t.deadlocks, t.runs);
  EXPECT_GT(t.deadlocks, 0);
  EXPECT_LT(t.deadlocks, t.runs);
}

// ---- the staged int8 models ----

struct Model {
  const char* path;   // under models/
  const char* input;  // under data/reference/inputs/
  std::vector<int64_t> shape;
};

const std::vector<Model>& models() {
  static const std::vector<Model> m = {
      {"onnx-zoo/mnist-12-int8.ort-qoperator.onnx", "mnist_t10k_00000_f32_1x1x28x28.bin", {1, 1, 28, 28}},
      {"mlperf-tiny/ic01_resnet8_int8_qdq.onnx", "ic_sample8_f32_1x3x32x32.bin", {1, 3, 32, 32}},
      {"mlperf-tiny/kws01_dscnn_int8_qdq.onnx", "kws_sample6_f32_1x1x49x10.bin", {1, 1, 49, 10}},
  };
  return m;
}

CompileResult compile_model(const Model& m, Depths d = {512, 1024}) {
  CompileOptions opts;
  opts.config.cmd_queue_depth = d.cmd;
  opts.config.token_queue_depth = d.tok;
  return compile_onnx(testing::model_path(m.path), opts);
}

TEST(QueueDepthAgreement, CompiledProgramsAtSmallerDepths) {
  Tally t;
  for (const Model& m : models()) {
    const CompileResult r = compile_model(m);
    ASSERT_FALSE(r.exe.programs.empty()) << m.path;
    for (size_t i = 0; i < r.exe.programs.size(); ++i) {
      expect_agreement(r.exe.programs[i], fmt::format("{} program {} ({})", m.path, i, r.exe.programs[i].name), t);
      std::string msg;
      EXPECT_FALSE(verifier_deadlocks(at_depths(r.exe.programs[i], {512, 2}), &msg)) << m.path << " " << i << msg;
    }
  }
  fmt::print("compiled programs: {} of {} runs deadlock\n", t.deadlocks, t.runs);
  // Double buffering keeps two tokens in flight: 31 of the 276 (Program, depths) pairs deadlock
  // (every Program runs with TOKEN_QUEUE_DEPTH >= 2 and CMD_QUEUE_DEPTH 512).
  EXPECT_GT(t.deadlocks, 0);
  EXPECT_LT(t.deadlocks, t.runs);
  // ic01 resnet8 program 0 (the finding): with TOKEN_QUEUE_DEPTH=1 alone.
  const CompileResult r = compile_model(models()[1]);
  std::string msg;
  ASSERT_TRUE(verifier_deadlocks(at_depths(r.exe.programs[0], {512, 1}), &msg));
  EXPECT_EQ(msg,
            "insn 10 (GEMM): deadlock: the load module at insn 39 (LOAD INP) waits to push token queue l2g "
            "(load->compute), which is full (1 tokens, TOKEN_QUEUE_DEPTH=1); the compute module at insn 10 (GEMM) "
            "waits to push token queue g2l (compute->load), which is full (1 tokens, TOKEN_QUEUE_DEPTH=1); the store "
            "module at insn 37 (STORE OUT) waits to pop token queue g2s (compute->store), which is empty");
  EXPECT_FALSE(verifier_deadlocks(at_depths(r.exe.programs[0], {512, 2}), &msg)) << msg;
}

std::vector<float> run_exe(const runtime::Executable& exe, const runtime::HostTensor& x) {
  auto dev = runtime::Device::create("fsim", exe.config, uint64_t{256} << 20);
  runtime::ExecOptions eo;
  eo.cpu_repeats = 1;
  runtime::GraphExecutor ex(exe, *dev, eo);
  return testing::floats(ex.run({x}).at(0));
}

TEST(QueueDepthAgreement, CompiledForSmallDepthsRunsAndMatchesTheDefaultCompile) {
  for (const Model& m : models()) {
    SCOPED_TRACE(m.path);
    const runtime::HostTensor x =
        testing::host_f32(m.shape, testing::read_f32(testing::data_path(std::string("reference/inputs/") + m.input)));
    const CompileResult def = compile_model(m);
    const std::vector<float> want = run_exe(def.exe, x);
    for (const Depths d : {Depths{512, 1}, Depths{512, 2}, Depths{1, 1}, Depths{2, 3}}) {
      SCOPED_TRACE(fmt::format("CMD_QUEUE_DEPTH={}, TOKEN_QUEUE_DEPTH={}", d.cmd, d.tok));
      const CompileResult r = compile_model(m, d);
      ASSERT_EQ(r.exe.programs.size(), def.exe.programs.size());
      EXPECT_EQ(r.exe.config.token_queue_depth, d.tok);
      EXPECT_EQ(r.exe.config.cmd_queue_depth, d.cmd);
      for (size_t i = 0; i < r.exe.programs.size(); ++i) {
        const isa::Program& p = r.exe.programs[i];
        EXPECT_TRUE(isa::check_program(p).empty()) << "program " << i << " (" << p.name << ")";
        std::string msg;
        sim::FunctionalSimulator fsim(p.config);
        EXPECT_FALSE(sim_deadlocks(fsim, p, &msg)) << "program " << i << " (" << p.name << "): " << msg;
      }
      // The layers whose requested schedule deadlocks at these depths say so (lower.h); with the
      // depths 1/1 some layers of every model fall back (with TOKEN_QUEUE_DEPTH=1 and 512 command
      // entries: 1 of mnist's 3 Programs, 5 of resnet8's 10, none of kws01's 10).
      int fell_back = 0;
      for (const LayerInfo& l : r.layers) {
        fell_back += l.schedule.find(fmt::format("deadlocks with CMD_QUEUE_DEPTH={}, TOKEN_QUEUE_DEPTH={}", d.cmd,
                                                 d.tok)) != std::string::npos;
      }
      if (d.cmd == 1 && d.tok == 1) {
        EXPECT_GT(fell_back, 0);
      }
      if (d.cmd == 512 && d.tok == 1 && std::string(m.path).find("resnet8") != std::string::npos) {
        EXPECT_EQ(fell_back, 5);
      }
      fmt::print("{} at CMD_QUEUE_DEPTH={}, TOKEN_QUEUE_DEPTH={}: {} of {} programs on a fallback schedule\n", m.path,
                 d.cmd, d.tok, fell_back, r.exe.programs.size());
      EXPECT_EQ(run_exe(r.exe, x), want);
    }
  }
}

}  // namespace
}  // namespace tessel::compiler
