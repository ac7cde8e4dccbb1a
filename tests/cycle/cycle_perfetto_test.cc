// The cycle model's Chrome/Perfetto trace (CycleSimOptions::perfetto_path, sim/cycle/
// perfetto_trace.h): a golden file for a tiny stream, the structure every viewer relies on
// (tracks, complete events, flow pairs bound to slices), the DRAM bursts on the bus track,
// determinism, and the errors. Regenerate the golden file with TESSEL_UPDATE_GOLDEN=1 after an
// intended change and review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "isa/config.h"
#include "isa/instruction.h"
#include "sim/cycle/cycle_sim.h"
#include "tests/cycle/stream.h"

namespace tessel::sim {
namespace {

using cycle_test::kInsnAddr;
using cycle_test::make_dram;
using cycle_test::make_loop;
using cycle_test::with_dep;
using isa::MemType;
using isa::Opcode;
using nlohmann::json;

constexpr uint32_t kInpDram = cycle_test::kDataBase / 16;

std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// A scratch path for this test's trace files.
std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("tessel_cycle_perfetto_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

/// The tiny stream: a load hands a token to a GEMM (l2g), the GEMM its results to a store (g2s),
/// the store its token back to compute (s2g), whose GEMM frees the load module (g2l) for a last
/// load that FINISH drains: every token queue, module and stall cause, and the bus busy.
std::vector<isa::Instruction> tiny_stream() {
  return {
      isa::make_mem(Opcode::kLoad, MemType::kUop, 0, 0, 1, 1, 1),                // 0 compute
      with_dep(isa::make_mem(Opcode::kLoad, MemType::kInp, 0, kInpDram, 1, 1, 1, 0, 1, 1, 0),
               false, false, false, true),                                        // 1 load
      with_dep(make_loop(Opcode::kGemm, 0, 1, 1, 2), true, false, false, true),  // 2 compute
      with_dep(isa::make_mem(Opcode::kStore, MemType::kOut, 0, kInpDram, 1, 1, 1), true, false,
               true, false),                                                      // 3 store
      with_dep(make_loop(Opcode::kGemm, 0, 0, 1, 1), false, true, true, false),   // 4 compute
      with_dep(isa::make_mem(Opcode::kLoad, MemType::kInp, 8, kInpDram + 8, 1, 1, 1), false,
               true, false, false),                                               // 5 load
      isa::make_finish(),                                                         // 6 compute
  };
}

/// Runs `insns` with a Perfetto trace and returns the trace's text.
std::string traced_run(const isa::HwConfig& cfg, const std::vector<isa::Instruction>& insns,
                       const std::vector<isa::Uop>& uops, RunStats* stats = nullptr) {
  CycleSimOptions opt;
  opt.perfetto_path = temp_path("trace.json");
  CycleSimulator sim(cfg, opt);
  Dram dram = make_dram(cfg, insns, uops);
  const RunStats st = sim.run(dram, kInsnAddr, uint32_t(insns.size()));
  if (stats != nullptr) *stats = st;
  const std::string text = read_file(opt.perfetto_path);
  std::filesystem::remove(opt.perfetto_path);
  return text;
}

TEST(CyclePerfetto, TinyStreamMatchesGolden) {
  const std::string text = traced_run(isa::HwConfig{}, tiny_stream(), std::vector<isa::Uop>(1));
  const std::filesystem::path golden =
      std::filesystem::path(TESSEL_SOURCE_DIR) / "tests/cycle/golden/tiny_trace.json";
  if (const char* u = std::getenv("TESSEL_UPDATE_GOLDEN"); u != nullptr && std::string(u) == "1") {
    std::ofstream(golden, std::ios::binary) << text;
  }
  EXPECT_EQ(text, read_file(golden)) << "trace differs from " << golden;
}

TEST(CyclePerfetto, TraceIsDeterministic) {
  const std::vector<isa::Uop> uops(1);
  EXPECT_EQ(traced_run(isa::HwConfig{}, tiny_stream(), uops),
            traced_run(isa::HwConfig{}, tiny_stream(), uops));
}

/// The events of one track (tid) and kind.
std::vector<json> events(const json& trace, const std::string& ph, int tid = 0,
                         const std::string& cat = "") {
  std::vector<json> out;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] != ph) continue;
    if (tid != 0 && (!e.contains("tid") || e["tid"] != tid)) continue;
    if (!cat.empty() && (!e.contains("cat") || e["cat"] != cat)) continue;
    out.push_back(e);
  }
  return out;
}

/// True when some complete event of `tid` covers cycle `ts` ([ts, ts + dur)).
bool inside_slice(const json& trace, int tid, uint64_t ts) {
  for (const json& e : events(trace, "X", tid)) {
    const uint64_t a = e["ts"], d = e["dur"];
    if (a <= ts && ts < a + d) return true;
  }
  return false;
}

TEST(CyclePerfetto, StructureOfTheTinyTrace) {
  RunStats st;
  const json trace = json::parse(traced_run(isa::HwConfig{}, tiny_stream(), {isa::Uop{}}, &st));
  EXPECT_EQ(trace["otherData"]["cycles"], st.cycles);
  EXPECT_EQ(trace["otherData"]["time_unit"], "1 trace microsecond = 1 accelerator cycle");

  // Tracks: fetch, load, compute, store, DRAM bus.
  std::map<int, std::string> names;
  for (const json& e : events(trace, "M")) {
    if (e["name"] == "thread_name") names[e["tid"].get<int>()] = e["args"]["name"];
  }
  EXPECT_EQ(names, (std::map<int, std::string>{
                       {1, "fetch"}, {2, "load"}, {3, "compute"}, {4, "store"}, {5, "DRAM bus"}}));

  // One instruction slice per instruction, on its module's track, in program order per module;
  // names are opcode and memory type.
  const std::vector<json> load = events(trace, "X", 2, "insn");
  const std::vector<json> compute = events(trace, "X", 3, "insn");
  const std::vector<json> store = events(trace, "X", 4, "insn");
  ASSERT_EQ(load.size(), 2u);
  ASSERT_EQ(compute.size(), 4u);
  ASSERT_EQ(store.size(), 1u);
  EXPECT_EQ(load[0]["name"], "LOAD INP");
  EXPECT_EQ(load[0]["args"]["pads"], 3);
  EXPECT_EQ(load[0]["args"]["beats"], 2);
  EXPECT_EQ(load[1]["args"]["pops"], json::array({"g2l#0"}));
  EXPECT_EQ(compute[0]["name"], "LOAD UOP");
  EXPECT_EQ(compute[1]["name"], "GEMM");
  EXPECT_EQ(compute[1]["args"]["uops"], 2);
  EXPECT_EQ(compute[3]["name"], "FINISH");
  EXPECT_EQ(store[0]["name"], "STORE OUT");
  EXPECT_EQ(store[0]["args"]["pops"], json::array({"g2s#0"}));
  EXPECT_EQ(store[0]["args"]["pushes"], json::array({"s2g#0"}));
  // FINISH is done in the last cycle: its slice ends at RunStats::cycles.
  EXPECT_EQ(compute[3]["ts"].get<uint64_t>() + compute[3]["dur"].get<uint64_t>(), st.cycles);
  for (const json& e : events(trace, "X")) {
    EXPECT_GE(e["dur"].get<uint64_t>(), 1u) << e.dump();
  }

  // Slices of one track never overlap unless nested (a stall inside its instruction).
  for (int tid = 1; tid <= 5; ++tid) {
    std::vector<json> xs = events(trace, "X", tid);
    for (size_t i = 0; i < xs.size(); ++i) {
      for (size_t j = i + 1; j < xs.size(); ++j) {
        const uint64_t a0 = xs[i]["ts"], a1 = a0 + xs[i]["dur"].get<uint64_t>();
        const uint64_t b0 = xs[j]["ts"], b1 = b0 + xs[j]["dur"].get<uint64_t>();
        const bool disjoint = a1 <= b0 || b1 <= a0;
        const bool nested = (a0 <= b0 && b1 <= a1) || (b0 <= a0 && a1 <= b1);
        EXPECT_TRUE(disjoint || nested) << xs[i].dump() << " vs " << xs[j].dump();
      }
    }
  }

  // Flows: every token is one "s" (at the producer's done cycle, inside its slice) and one "f"
  // (at the consumer's start cycle, inside its slice, bound to the enclosing slice).
  const std::vector<json> starts = events(trace, "s"), finishes = events(trace, "f");
  ASSERT_EQ(starts.size(), 4u);  // l2g, g2s, s2g, g2l
  ASSERT_EQ(finishes.size(), 4u);
  std::set<uint64_t> ids;
  for (const json& s : starts) {
    ids.insert(s["id"].get<uint64_t>());
    EXPECT_TRUE(inside_slice(trace, s["tid"], s["ts"])) << s.dump();
    int matches = 0;
    for (const json& f : finishes) {
      if (f["id"] != s["id"]) continue;
      ++matches;
      EXPECT_EQ(f["name"], s["name"]);
      EXPECT_EQ(f["bp"], "e");
      EXPECT_GT(f["ts"].get<uint64_t>(), s["ts"].get<uint64_t>()) << "a token is visible the "
                                                                     "cycle after its push";
      EXPECT_TRUE(inside_slice(trace, f["tid"], f["ts"])) << f.dump();
    }
    EXPECT_EQ(matches, 1) << s.dump();
  }
  EXPECT_EQ(ids.size(), 4u);

  // The bus, in grant order: the fetch burst, UOP, INP, the store's write, the last INP.
  const std::vector<json> bus = events(trace, "X", 5, "bus");
  ASSERT_EQ(bus.size(), 5u);
  EXPECT_EQ(bus[0]["name"], "fetch read");
  EXPECT_EQ(bus[1]["name"], "compute read");
  EXPECT_EQ(bus[2]["name"], "load read");
  EXPECT_EQ(bus[3]["name"], "store write");
  EXPECT_EQ(bus[4]["name"], "load read");
  EXPECT_TRUE(bus[3]["args"].contains("response_cycle"));

  // Stalls are labelled by cause.
  std::set<std::string> causes;
  for (const json& e : events(trace, "X", 0, "stall")) causes.insert(e["name"]);
  for (const std::string c : {"wait: empty command queue", "wait: token l2g", "wait: token g2s",
                              "wait: token s2g", "wait: token g2l", "DRAM latency / bus busy",
                              "write response", "wait: FINISH drain"}) {
    EXPECT_TRUE(causes.count(c) == 1) << "no stall labelled '" << c << "'";
  }
}

TEST(CyclePerfetto, LongRowsAreSplitIntoLockedBursts) {
  // A row of 129 INP elements (2064 bytes, 258 beats) is two bursts, 256 and 2 beats, granted
  // in consecutive cycles and contiguous on the bus.
  const json trace = json::parse(traced_run(
      isa::HwConfig{},
      {isa::make_mem(Opcode::kLoad, MemType::kInp, 0, kInpDram, 1, 129, 129), isa::make_finish()},
      {}));
  const std::vector<json> bus = events(trace, "X", 5, "bus");
  ASSERT_EQ(bus.size(), 3u);  // the fetch burst and the two load bursts
  EXPECT_EQ(bus[1]["args"]["beats"], 256);
  EXPECT_EQ(bus[2]["args"]["beats"], 2);
  EXPECT_EQ(bus[2]["args"]["grant_cycle"].get<uint64_t>(),
            bus[1]["args"]["grant_cycle"].get<uint64_t>() + 1);
  EXPECT_EQ(bus[2]["args"]["addr"].get<uint64_t>(), bus[1]["args"]["addr"].get<uint64_t>() + 2048);
  EXPECT_EQ(bus[2]["ts"].get<uint64_t>(), bus[1]["ts"].get<uint64_t>() + 256);
  // The load: dispatched 37, starts 38, granted 39 and 40; beats 72 .. 72 + 258 - 1 = 329.
  const std::vector<json> load = events(trace, "X", 2, "insn");
  ASSERT_EQ(load.size(), 1u);
  EXPECT_EQ(load[0]["args"]["start_cycle"], 38);
  EXPECT_EQ(load[0]["args"]["done_cycle"], 329);
  EXPECT_EQ(bus[1]["args"]["grant_cycle"], 39);
}

TEST(CyclePerfetto, FailedRunStillWritesItsTrace) {
  // A deadlock (GEMM pops a token nobody pushes): the run fails, the trace shows what ran.
  CycleSimOptions opt;
  opt.perfetto_path = temp_path("deadlock.json");
  CycleSimulator sim(isa::HwConfig{}, opt);
  Dram dram = make_dram(isa::HwConfig{}, {with_dep(make_loop(Opcode::kGemm, 0, 0, 1, 1), true,
                                                   false, false, false),
                                          isa::make_finish()});
  EXPECT_THROW(sim.run(dram, kInsnAddr, 2), SimError);
  const json trace = json::parse(read_file(opt.perfetto_path));
  std::filesystem::remove(opt.perfetto_path);
  EXPECT_EQ(trace["otherData"]["cycles"], 0);
  EXPECT_EQ(events(trace, "X", 1, "dispatch").size(), 2u);
  EXPECT_EQ(events(trace, "X", 3, "insn").size(), 0u);
}

TEST(CyclePerfetto, UnwritablePathIsAnIoError) {
  CycleSimOptions opt;
  opt.perfetto_path = "/nonexistent-dir-of-tessel/trace.json";
  CycleSimulator sim(isa::HwConfig{}, opt);
  Dram dram = make_dram(isa::HwConfig{}, {isa::make_finish()});
  try {
    sim.run(dram, kInsnAddr, 1);
    ADD_FAILURE() << "the run did not fail";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir-of-tessel/trace.json"),
              std::string::npos)
        << e.what();
  }
  // The simulator stays usable (the run itself succeeded).
  CycleSimulator plain(isa::HwConfig{});
  EXPECT_EQ(plain.run(dram, kInsnAddr, 1).cycles, 37u);
}

}  // namespace
}  // namespace tessel::sim
