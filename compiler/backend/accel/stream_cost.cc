// The stream cost model (stream_cost.h): docs/microarchitecture.md applied to an instruction
// stream as a queue walk.
//
// Every queue of the accelerator has a registered occupancy and every start condition of section 4
// is monotone, so each cycle is a maximum of earlier ones:
//   dispatch d_j = max(d_{j-1} + 1 (or the burst's last beat + 1), pop of the command `depth`
//                  places earlier in the same queue + 1)
//   start S      = max(previous D + 1, dispatch + 1, push of each token it pops + 1, pop that made
//                  room in each queue it pushes + 1, every load/store D + 1 for FINISH)
// and a unit can compute its next instruction's cycles as soon as the cycles they depend on are
// known. Only the memory arbiter (section 2.2) needs time order: which master wins cycle t depends
// on every request made in t. So the walk advances every unit as far as the known cycles allow
// (each stops at a bus request, or at a cycle not known yet), then grants the earliest request
// (ties: fetch > load > compute > store), and repeats. Every unit waiting on something unknown
// waits, directly or through other units, on a pending request; what it does next happens after
// that request's grant plus at least one cycle, so no request it will make can precede the
// earliest pending one: granting that one first is the arbiter's order.
//
// A sequence of bursts granted in t, t+1, ... (the arbiter's lock) moves its beats contiguously
// (section 2.3: every burst after the first finds the bus busy until its turn), so only an
// instruction's total beats B and its burst count matter: first beat F = max(t + 1 (+ L for
// reads), bus_free), bus_free = F + B, the arbiter free again from t + bursts.
#include "compiler/backend/accel/stream_cost.h"

#include <algorithm>

#include <fmt/format.h>

#include "isa/timing.h"
#include "support/error.h"

namespace tessel::compiler::accel {
namespace {

using isa::Instruction;
using isa::Module;
using isa::Opcode;
using isa::TokenQueue;
using isa::timing::kFetchBurstInsns;
using isa::timing::kInsnBytes;
using isa::timing::kMaxBurstBeats;

/// Masters in the arbiter's priority order: fetch, then 1 + int(isa::Module).
constexpr int kFetch = 0;
constexpr int kUnits = 4;
constexpr int kLoadMod = int(Module::kLoad);
constexpr int kComputeMod = int(Module::kCompute);
constexpr int kStoreMod = int(Module::kStore);

const char* module_name(int m) {
  static const char* const kNames[3] = {"load", "compute", "store"};
  return kNames[m];
}
const char* queue_name(int q) {
  static const char* const kNames[4] = {"l2g", "g2l", "g2s", "s2g"};
  return kNames[q];
}

/// The token queues one instruction pops and pushes (prev before next).
struct Ports {
  int8_t pops[2] = {0, 0};
  int8_t pushes[2] = {0, 0};
  uint8_t n_pops = 0, n_pushes = 0;
};

Ports ports_of(const Instruction& insn, size_t index) {
  Ports p;
  const Module m = insn.module();
  auto add = [&](bool set, bool pop, bool prev, const char* flag) {
    if (!set) return;
    const auto q = pop ? isa::dep_pop_queue(m, prev) : isa::dep_push_queue(m, prev);
    if (!q) {
      throw_user_error("stream cost: instruction {} sets {}, which the {} module does not have",
                       index, flag, module_name(int(m)));
    }
    if (pop) {
      p.pops[p.n_pops++] = int8_t(*q);
    } else {
      p.pushes[p.n_pushes++] = int8_t(*q);
    }
  };
  add(insn.dep.pop_prev, true, true, "pop_prev");
  add(insn.dep.pop_next, true, false, "pop_next");
  add(insn.dep.push_prev, false, true, "push_prev");
  add(insn.dep.push_next, false, false, "push_next");
  return p;
}

/// Beats and bursts of a LOAD/STORE with x_size, y_size > 0 (section 2.1).
struct DmaShape {
  uint64_t beats = 0, bursts = 0;
};

DmaShape dma_shape(const isa::HwConfig& cfg, const Instruction& insn) {
  const uint64_t w = uint64_t(cfg.bus_bytes());
  const uint64_t e = isa::dram_elem_bytes(cfg, insn.mem_type);
  const uint64_t bytes = uint64_t(insn.x_size) * e;
  DmaShape s;
  for (uint64_t r = 0; r < insn.y_size; ++r) {
    const uint64_t first = (uint64_t(insn.dram_base) + r * insn.x_stride) * e;
    const uint64_t b = isa::timing::aligned_beats(first, bytes, w);
    s.beats += b;
    s.bursts += (b + kMaxBurstBeats - 1) / kMaxBurstBeats;
  }
  return s;
}

/// One master's sequence of bursts waiting for the arbiter.
struct Request {
  bool pending = false;
  bool write = false;
  uint64_t cycle = 0;   ///< requested from this cycle
  uint64_t beats = 0, bursts = 0;
};

class Walk {
 public:
  Walk(const isa::HwConfig& cfg, const std::vector<Instruction>& insns, uint64_t insn_addr)
      : cfg_(cfg),
        insns_(insns),
        insn_addr_(insn_addr),
        cmd_depth_(uint64_t(cfg.cmd_queue_depth)),
        tok_depth_(uint64_t(cfg.token_queue_depth)),
        latency_(uint64_t(cfg.dram_latency)) {
    ports_.reserve(insns.size());
    for (size_t i = 0; i < insns.size(); ++i) ports_.push_back(ports_of(insns[i], i));
    for (int m = 0; m < 3; ++m) {
      cmds_[m].reserve(insns.size() / 2 + 8);
      cmd_pop_[m].reserve(insns.size() / 2 + 8);
    }
  }

  uint64_t run() {
    while (!finished_) {
      bool progress = true;
      while (progress) {
        progress = false;
        while (step_fetch()) progress = true;
        for (int m = 0; m < 3; ++m) {
          while (step_exec(m)) progress = true;
        }
      }
      if (finished_) break;
      if (!grant()) throw_deadlock();
    }
    return end_ + 1;
  }

 private:
  struct Command {
    uint32_t index = 0;
    uint64_t dispatch = 0;
  };
  enum class ExecPhase : uint8_t { kStart, kBus };
  enum class FetchPhase : uint8_t { kRequest, kBus, kDispatch, kDone };

  /// Fetch (section 3). Returns true when it made progress.
  bool step_fetch() {
    switch (fetch_phase_) {
      case FetchPhase::kDone:
      case FetchPhase::kBus:
        return false;
      case FetchPhase::kRequest: {
        if (pc_ >= insns_.size()) {
          throw_user_error("stream cost: the stream of {} instructions ends without a finish",
                           insns_.size());
        }
        burst_n_ = uint32_t(std::min<uint64_t>(kFetchBurstInsns, insns_.size() - pc_));
        const uint64_t addr = insn_addr_ + uint64_t(pc_) * kInsnBytes;
        const uint64_t b = isa::timing::aligned_beats(addr, uint64_t(burst_n_) * kInsnBytes,
                                                      uint64_t(cfg_.bus_bytes()));
        request(kFetch, fetch_request_, false, b, (b + kMaxBurstBeats - 1) / kMaxBurstBeats);
        fetch_phase_ = FetchPhase::kBus;
        return true;
      }
      case FetchPhase::kDispatch: {
        const uint32_t index = pc_ + burst_i_;
        const Instruction& insn = insns_[index];
        const int m = int(insn.module());
        uint64_t d = fetch_prev_ + 1;
        const uint64_t c = cmds_[m].size();
        if (c >= cmd_depth_) {
          const uint64_t k = c - cmd_depth_;  // its pop makes room
          if (cmd_pop_[m].size() <= k) return false;
          d = std::max(d, cmd_pop_[m][k] + 1);
        }
        cmds_[m].push_back(Command{index, d});
        fetch_prev_ = d;
        if (insn.opcode == Opcode::kFinish) {
          fetch_phase_ = FetchPhase::kDone;
          return true;
        }
        if (++burst_i_ == burst_n_) {
          pc_ += burst_n_;
          fetch_request_ = fetch_prev_ + 1;
          fetch_phase_ = FetchPhase::kRequest;
        }
        return true;
      }
    }
    return false;
  }

  /// Execution module m (section 4). Returns true when it made progress.
  bool step_exec(int m) {
    Exec& x = exec_[m];
    if (x.phase == ExecPhase::kBus) return false;
    if (cmds_[m].size() <= x.next) return false;
    const Command cmd = cmds_[m][x.next];
    const Instruction& insn = insns_[cmd.index];
    const Ports& p = ports_[cmd.index];
    uint64_t start = std::max(x.free, cmd.dispatch + 1);
    for (int i = 0; i < p.n_pops; ++i) {
      const int q = p.pops[i];
      const size_t k = tok_pop_[q].size();  // the module is q's only consumer
      if (tok_push_[q].size() <= k) return false;
      start = std::max(start, tok_push_[q][k] + 1);
    }
    for (int i = 0; i < p.n_pushes; ++i) {
      const int q = p.pushes[i];
      const uint64_t k = tok_push_[q].size();  // the module is q's only producer
      if (k >= tok_depth_) {
        const uint64_t j = k - tok_depth_;
        if (tok_pop_[q].size() <= j) return false;
        start = std::max(start, tok_pop_[q][j] + 1);
      }
    }
    if (insn.opcode == Opcode::kFinish) {
      // Fetch stops at FINISH, so the load and store command queues are final.
      for (int o : {kLoadMod, kStoreMod}) {
        if (timed_[o] < cmds_[o].size()) return false;
        if (timed_[o] > 0) start = std::max(start, last_done_[o] + 1);
      }
    }
    // Cycle S: the command and the tokens are popped.
    cmd_pop_[m].push_back(start);
    for (int i = 0; i < p.n_pops; ++i) tok_pop_[p.pops[i]].push_back(start);
    x.start = start;
    switch (insn.opcode) {
      case Opcode::kLoad:
        if (insn.x_size == 0 || insn.y_size == 0) {
          complete(m, isa::timing::beatless_load_done(insn, start));
        } else {
          const DmaShape s = dma_shape(cfg_, insn);
          x.pads = isa::timing::pad_elems(insn);
          x.beats = s.beats;
          x.phase = ExecPhase::kBus;
          request(1 + m, start + 1, false, s.beats, s.bursts);
        }
        break;
      case Opcode::kStore:
        if (insn.x_size == 0 || insn.y_size == 0) {
          complete(m, start);
        } else {
          const DmaShape s = dma_shape(cfg_, insn);
          x.beats = s.beats;
          x.phase = ExecPhase::kBus;
          request(1 + m, start + 1, true, s.beats, s.bursts);
        }
        break;
      case Opcode::kGemm:
      case Opcode::kAlu:
        complete(m, isa::timing::compute_done(insn, start));
        break;
      case Opcode::kFinish:
        complete(m, start);
        finished_ = true;
        end_ = start;
        break;
    }
    return true;
  }

  /// Instruction x.next of module m is done in cycle `done`: its tokens are pushed.
  void complete(int m, uint64_t done) {
    Exec& x = exec_[m];
    const Ports& p = ports_[cmds_[m][x.next].index];
    for (int i = 0; i < p.n_pushes; ++i) tok_push_[p.pushes[i]].push_back(done);
    ++timed_[m];
    last_done_[m] = std::max(last_done_[m], done);
    x.free = done + 1;
    x.phase = ExecPhase::kStart;
    ++x.next;
  }

  void request(int unit, uint64_t cycle, bool write, uint64_t beats, uint64_t bursts) {
    Request& r = req_[unit];
    r.pending = true;
    r.write = write;
    r.cycle = cycle;
    r.beats = beats;
    r.bursts = bursts;
  }

  /// The arbiter's next grant (section 2.2) and its bus slot (section 2.3). Returns false when
  /// no request is pending.
  bool grant() {
    uint64_t t = UINT64_MAX;
    for (const Request& r : req_) {
      if (r.pending) t = std::min(t, std::max(arb_free_, r.cycle));
    }
    if (t == UINT64_MAX) return false;
    int u = 0;
    while (!(req_[u].pending && req_[u].cycle <= t)) ++u;
    Request& r = req_[u];
    r.pending = false;
    const uint64_t first = std::max(t + 1 + (r.write ? 0 : latency_), bus_free_);
    bus_free_ = first + r.beats;
    arb_free_ = t + r.bursts;
    if (u == kFetch) {
      fetch_prev_ = first + r.beats - 1;  // the first dispatch is at F + B at the earliest
      burst_i_ = 0;
      fetch_phase_ = FetchPhase::kDispatch;
      return true;
    }
    const int m = u - 1;
    Exec& x = exec_[m];
    const uint64_t done =
        r.write ? isa::timing::store_done(latency_, first, r.beats)
                : isa::timing::dma_read_done(x.start, x.pads, first, r.beats);
    complete(m, done);
    return true;
  }

  [[noreturn]] void throw_deadlock() const {
    std::string what;
    for (int m = 0; m < 3; ++m) {
      const Exec& x = exec_[m];
      if (cmds_[m].size() <= x.next) continue;
      const uint32_t index = cmds_[m][x.next].index;
      const Ports& p = ports_[index];
      for (int i = 0; i < p.n_pops; ++i) {
        const int q = p.pops[i];
        if (tok_push_[q].size() <= tok_pop_[q].size()) {
          what += fmt::format("; {} waits to pop {} for instruction {}", module_name(m),
                              queue_name(q), index);
        }
      }
      for (int i = 0; i < p.n_pushes; ++i) {
        const int q = p.pushes[i];
        if (tok_push_[q].size() >= tok_depth_) {
          what += fmt::format("; {} waits for room in {} (depth {}) for instruction {}",
                              module_name(m), queue_name(q), tok_depth_, index);
        }
      }
    }
    if (fetch_phase_ == FetchPhase::kDispatch) {
      what += fmt::format("; fetch waits for room in the {} command queue (depth {}) for "
                          "instruction {}",
                          module_name(int(insns_[pc_ + burst_i_].module())), cmd_depth_,
                          pc_ + burst_i_);
    }
    throw_user_error("stream cost: the stream of {} instructions deadlocks{}", insns_.size(),
                     what);
  }

  struct Exec {
    ExecPhase phase = ExecPhase::kStart;
    size_t next = 0;     ///< index into cmds_[m] of the instruction to start
    uint64_t free = 0;   ///< previous D + 1
    uint64_t start = 0;  ///< S of the instruction waiting for the bus
    uint64_t pads = 0, beats = 0;
  };

  const isa::HwConfig& cfg_;
  const std::vector<Instruction>& insns_;
  const uint64_t insn_addr_;
  const uint64_t cmd_depth_, tok_depth_, latency_;
  std::vector<Ports> ports_;
  std::vector<Command> cmds_[3];
  std::vector<uint64_t> cmd_pop_[3];
  std::vector<uint64_t> tok_push_[4], tok_pop_[4];
  uint64_t timed_[3] = {0, 0, 0};
  uint64_t last_done_[3] = {0, 0, 0};
  Exec exec_[3];
  Request req_[kUnits];
  uint64_t arb_free_ = 0, bus_free_ = 0;
  // fetch
  FetchPhase fetch_phase_ = FetchPhase::kRequest;
  uint32_t pc_ = 0, burst_n_ = 0, burst_i_ = 0;
  uint64_t fetch_request_ = 0, fetch_prev_ = 0;
  bool finished_ = false;
  uint64_t end_ = 0;
};

}  // namespace

uint64_t estimate_cycles(const isa::HwConfig& cfg, const std::vector<isa::Instruction>& insns,
                         uint64_t insn_addr) {
  if (insn_addr % kInsnBytes != 0) {
    throw_user_error("stream cost: instruction address {} is not 16-byte aligned", insn_addr);
  }
  if (insns.empty()) throw_user_error("stream cost: an empty stream has no finish");
  if (insns.size() > UINT32_MAX) {
    throw_user_error("stream cost: {} instructions, more than {}", insns.size(), UINT32_MAX);
  }
  return Walk(cfg, insns, insn_addr).run();
}

uint64_t estimate_cycles(const isa::Program& prog) {
  return estimate_cycles(prog.config, prog.insns);
}

}  // namespace tessel::compiler::accel
