#include "sim/cycle/perfetto_trace.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/atomic_file.h"
#include "support/error.h"
#include "support/json_text.h"

namespace tessel::sim::cycle {
namespace {

using nlohmann::json;

constexpr int kPid = 1;
constexpr int kFetchTid = 1;
constexpr int kBusTid = 5;
int tid_of(isa::Module m) { return 2 + int(m); }  // load 2, compute 3, store 4

const char* master_name(Master m) {
  static const char* const kNames[4] = {"fetch", "load", "compute", "store"};
  return kNames[int(m)];
}

/// "LOAD INP", "STORE OUT", "GEMM", "GEMM reset", "ALU ADD", "FINISH".
std::string insn_name(const isa::Instruction& insn) {
  switch (insn.opcode) {
    case isa::Opcode::kLoad:
    case isa::Opcode::kStore:
      return fmt::format("{} {}", isa::to_string(insn.opcode), isa::to_string(insn.mem_type));
    case isa::Opcode::kGemm:
      return insn.reset ? "GEMM reset" : "GEMM";
    case isa::Opcode::kAlu:
      return fmt::format("ALU {}", isa::to_string(insn.alu_op));
    case isa::Opcode::kFinish:
      return "FINISH";
  }
  return "INVALID";
}

std::string token_label(const TokenRef& t) {
  return fmt::format("{}#{}", isa::to_string(t.queue), t.serial);
}

/// A complete event covering cycles [first, end) (end > first).
json slice(int tid, const std::string& name, const char* cat, uint64_t first, uint64_t end) {
  json e;
  e["ph"] = "X";
  e["pid"] = kPid;
  e["tid"] = tid;
  e["name"] = name;
  e["cat"] = cat;
  e["ts"] = first;
  e["dur"] = end - first;
  return e;
}

json metadata(const char* what, int tid, const json& args) {
  json e;
  e["ph"] = "M";
  e["pid"] = kPid;
  if (tid != 0) e["tid"] = tid;
  e["name"] = what;
  e["args"] = args;
  return e;
}

/// A stall slice [first, end) when not empty.
void add_stall(std::vector<json>& out, int tid, const std::string& cause, uint64_t first,
               uint64_t end) {
  if (end > first) out.push_back(slice(tid, cause, "stall", first, end));
}

}  // namespace

std::string perfetto_trace_json(const RunRecord& record, const isa::HwConfig& cfg) {
  std::vector<json> ev;
  ev.push_back(metadata("process_name", 0, {{"name", "tessel accelerator (cycle model)"}}));
  const char* const kTracks[5] = {"fetch", "load", "compute", "store", "DRAM bus"};
  for (int t = 1; t <= 5; ++t) {
    ev.push_back(metadata("thread_name", t, {{"name", kTracks[t - 1]}}));
    ev.push_back(metadata("thread_sort_index", t, {{"sort_index", t}}));
  }

  // Fetch: bursts (with their DRAM wait), dispatches and the waits for command-queue room.
  std::vector<FetchRecord> fetches = record.fetches;
  std::sort(fetches.begin(), fetches.end(),
            [](const FetchRecord& a, const FetchRecord& b) { return a.first_insn < b.first_insn; });
  for (const FetchRecord& f : fetches) {
    json e = slice(kFetchTid, fmt::format("fetch {}..{}", f.first_insn, f.first_insn + f.insns - 1),
                   "fetch", f.request, f.first_beat + f.beats);
    e["args"] = {{"first_insn", f.first_insn}, {"insns", f.insns}, {"beats", f.beats},
                 {"request_cycle", f.request}, {"grant_cycle", f.grant},
                 {"first_beat_cycle", f.first_beat}};
    ev.push_back(std::move(e));
    add_stall(ev, kFetchTid, "DRAM latency / bus busy", f.request, f.first_beat);
  }
  std::vector<RunRecord::Dispatch> dispatches = record.dispatches;
  std::sort(dispatches.begin(), dispatches.end(),
            [](const RunRecord::Dispatch& a, const RunRecord::Dispatch& b) {
              return a.index < b.index;
            });
  std::vector<const InsnRecord*> by_index(dispatches.empty() ? 0 : dispatches.back().index + 1,
                                          nullptr);
  std::vector<InsnRecord> insns = record.insns;
  std::sort(insns.begin(), insns.end(),
            [](const InsnRecord& a, const InsnRecord& b) { return a.index < b.index; });
  for (const InsnRecord& r : insns) {
    if (r.index < by_index.size()) by_index[r.index] = &r;
  }
  for (const RunRecord::Dispatch& d : dispatches) {
    add_stall(ev, kFetchTid,
              fmt::format("wait: full command queue ({})", isa::to_string(d.module)), d.earliest,
              d.cycle);
    const InsnRecord* r = d.index < by_index.size() ? by_index[d.index] : nullptr;
    json e = slice(kFetchTid,
                   fmt::format("dispatch {}", r != nullptr ? insn_name(r->insn) : std::string()),
                   "dispatch", d.cycle, d.cycle + 1);
    e["args"] = {{"index", d.index}, {"module", isa::to_string(d.module)}};
    ev.push_back(std::move(e));
  }

  // Instructions with the stalls before them (by the first failing start condition).
  std::vector<json> flows_out, flows_in;
  for (const InsnRecord& r : insns) {
    const int tid = tid_of(r.module);
    const uint64_t a = std::max(r.free, std::min(r.start, r.cmd_ready));
    const uint64_t b = std::max(a, std::min(r.start, r.pop_ready));
    const uint64_t c = std::max(b, std::min(r.start, r.room_ready));
    add_stall(ev, tid, "wait: empty command queue", r.free, a);
    add_stall(ev, tid, fmt::format("wait: token {}", isa::to_string(r.pop_queue)), a, b);
    add_stall(ev, tid, fmt::format("wait: full token queue {}", isa::to_string(r.room_queue)), b,
              c);
    add_stall(ev, tid, "wait: FINISH drain", c, r.start);

    json e = slice(tid, insn_name(r.insn), "insn", r.start, r.done + 1);
    json args;
    args["index"] = r.index;
    args["dispatch_cycle"] = r.dispatch;
    args["start_cycle"] = r.start;
    args["done_cycle"] = r.done;
    if (r.insn.opcode == isa::Opcode::kLoad || r.insn.opcode == isa::Opcode::kStore) {
      args["beats"] = r.beats;
      if (r.beats > 0) args["first_beat_cycle"] = r.first_beat;
      if (r.insn.opcode == isa::Opcode::kLoad) args["pads"] = r.pads;
      args["rows"] = r.insn.y_size;
      args["elems_per_row"] = r.insn.x_size;
    } else if (r.insn.opcode != isa::Opcode::kFinish) {
      args["uops"] = r.uops;
    }
    json pops = json::array(), pushes = json::array();
    for (uint32_t i = 0; i < r.n_pops; ++i) pops.push_back(token_label(r.pops[i]));
    for (uint32_t i = 0; i < r.n_pushes; ++i) pushes.push_back(token_label(r.pushes[i]));
    args["pops"] = pops;
    args["pushes"] = pushes;
    e["args"] = std::move(args);
    ev.push_back(std::move(e));
    if (r.beats > 0) {
      // Section 5.1: pads take the beat-free cycles from S + 1, the rest after the beats.
      const uint64_t window = r.first_beat - r.start - 1;
      const uint64_t early = std::min(r.pads, window);
      if (early > 0) ev.push_back(slice(tid, "pads", "pads", r.start + 1, r.start + 1 + early));
      if (r.pads > early) {
        const uint64_t after = r.first_beat + r.beats;
        ev.push_back(slice(tid, "pads", "pads", after, after + (r.pads - early)));
      }
      add_stall(ev, tid, "DRAM latency / bus busy", r.start + 1 + early, r.first_beat);
      if (r.insn.opcode == isa::Opcode::kStore) {
        add_stall(ev, tid, "write response", r.first_beat + r.beats, r.done + 1);
      }
    }
    for (uint32_t i = 0; i < r.n_pushes; ++i) {
      json f;
      f["ph"] = "s";
      f["pid"] = kPid;
      f["tid"] = tid;
      f["cat"] = "token";
      f["name"] = std::string(isa::to_string(r.pushes[i].queue));
      f["id"] = uint64_t(r.pushes[i].queue) * (uint64_t(1) << 40) + r.pushes[i].serial;
      f["ts"] = r.done;
      flows_out.push_back(std::move(f));
    }
    for (uint32_t i = 0; i < r.n_pops; ++i) {
      json f;
      f["ph"] = "f";
      f["bp"] = "e";
      f["pid"] = kPid;
      f["tid"] = tid;
      f["cat"] = "token";
      f["name"] = std::string(isa::to_string(r.pops[i].queue));
      f["id"] = uint64_t(r.pops[i].queue) * (uint64_t(1) << 40) + r.pops[i].serial;
      f["ts"] = r.start;
      flows_in.push_back(std::move(f));
    }
  }

  // The DRAM bus: one slice per burst over its beats.
  std::vector<BusRecord> bus = record.bus;
  std::stable_sort(bus.begin(), bus.end(),
                   [](const BusRecord& a, const BusRecord& b) { return a.grant < b.grant; });
  for (const BusRecord& b : bus) {
    json e = slice(kBusTid, fmt::format("{} {}", master_name(b.master), b.write ? "write" : "read"),
                   "bus", b.first, b.last + 1);
    json args = {{"insn", b.insn}, {"addr", b.addr}, {"beats", b.beats},
                 {"grant_cycle", b.grant}};
    if (b.write) args["response_cycle"] = b.response;
    e["args"] = std::move(args);
    ev.push_back(std::move(e));
  }
  for (json& f : flows_out) ev.push_back(std::move(f));
  for (json& f : flows_in) ev.push_back(std::move(f));

  json other;
  other["model"] = "tessel cycle model (docs/microarchitecture.md)";
  other["config"] = cfg.label();
  other["clock_mhz"] = cfg.clock_mhz;
  other["time_unit"] = "1 trace microsecond = 1 accelerator cycle";
  other["dram_latency"] = record.dram_latency;
  other["cycles"] = record.cycles;

  std::string out = "{\"otherData\":" + support::dump_json(other, -1, "perfetto trace") + ",\n\"traceEvents\":[\n";
  for (size_t i = 0; i < ev.size(); ++i) {
    out += support::dump_json(ev[i], -1, "perfetto trace");
    out += i + 1 < ev.size() ? ",\n" : "\n";
  }
  out += "]}\n";
  return out;
}

void write_perfetto_trace(const std::string& path, const RunRecord& record,
                          const isa::HwConfig& cfg) {
  const std::string text = perfetto_trace_json(record, cfg);
  support::write_file_atomic(path, text);
}

}  // namespace tessel::sim::cycle
