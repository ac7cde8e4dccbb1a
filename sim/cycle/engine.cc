// The SystemC model behind CycleSimulator: fetch, load, compute and store threads and the memory
// arbiter, timed exactly as docs/microarchitecture.md (the contract with the RTL), event by event
// and without a clock. docs/cycle-model.md describes the organisation; the per-instruction rules
// are isa::timing (isa/timing.h), the DRAM data bus is sim::BusSchedule.
//
// How the model gets the RTL's cycles without simulating every cycle: every queue of the RTL has
// a registered occupancy, so an event in cycle e (a dispatch, a token push in D, a pop in S) is
// visible from e + 1 only, and every start condition of section 4 is monotone (a queue has one
// producer and one consumer, so a condition that holds for the waiting module stays true until
// that module acts). Hence the start cycle of an instruction is a maximum:
//   S = max(previous D + 1, dispatch + 1, push cycle of each token it pops + 1,
//           pop cycle that made room in each queue it pushes + 1, last load/store D + 1 (FINISH)),
// and every thread computes its instructions' cycles as soon as the cycles they depend on are
// known, often ahead of simulated time. Only the arbiter (section 2.2) must decide in time order:
// its grant in cycle t depends on which masters request in t. Every request is registered before
// the cycle it is made in (a DMA requests from S + 1, fetch from its last dispatch + 1), so the
// arbiter, an SC_METHOD that runs at the half of the cycles where a grant is possible, sees every
// competing request. Threads act at whole cycles; a thread applies its instruction's effect
// (sim::Datapath) in cycle S of simulated time, after the producer of every token it popped.
//
// The hierarchy is configuration-agnostic and built once per process; each run installs a
// RunState (config, DRAM, datapath, the run's records) and drives sc_start() until starvation.
// At the end of a run (or on an error) the abort event makes every thread unwind to its idle
// wait, so the next run starts from scratch at a fresh base cycle.
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <systemc>

#include "isa/program.h"
#include "isa/timing.h"
#include "sim/common/bus_schedule.h"
#include "sim/common/queues.h"
#include "sim/common/systemc_models.h"
#include "sim/cycle/engine.h"

namespace tessel::sim::cycle {
namespace {

using isa::Instruction;
using isa::Module;
using isa::Opcode;
using isa::TokenQueue;
using isa::timing::Burst;
using isa::timing::kFetchBurstInsns;
using isa::timing::kInsnBytes;
using sc_core::sc_event;
using sc_core::sc_time;

/// Raw sc_time units per cycle: threads act at whole cycles, the arbiter at the half.
constexpr uint64_t kRawPerCycle = 2;

/// Stack of each SystemC thread: room for decoding, fmt messages and exception unwinding.
constexpr std::size_t kThreadStackBytes = std::size_t(1) << 20;

/// Units, in the arbiter's priority order (= Master): fetch, then 1 + int(isa::Module).
constexpr int kFetchUnit = 0;
constexpr int kNumUnits = 4;
int unit_of(Module m) { return 1 + int(m); }

const char* unit_name(int u) {
  static const char* const kNames[kNumUnits] = {"fetch", "load", "compute", "store"};
  return kNames[u];
}
const char* token_name(TokenQueue q) {
  static const char* const kNames[4] = {"l2g", "g2l", "g2s", "s2g"};
  return kNames[int(q)];
}

/// Thrown inside a thread when the run is being torn down; caught at the thread's top.
struct RunAborted {};

/// One dispatched command.
struct Command {
  Instruction insn;
  uint32_t index = 0;
  uint64_t dispatch = 0;  ///< absolute dispatch cycle
};

/// What a unit is doing (for deadlock and cycle-limit messages).
enum class Wait : uint8_t {
  kIdle,         ///< exec unit: no command dispatched yet; fetch: before its first request
  kTokenPop,     ///< blocked: the token it must pop has not been pushed
  kTokenSpace,   ///< blocked: the pop that makes room in a queue it pushes has not happened
  kDrain,        ///< FINISH: a load or store instruction has not been timed yet
  kStart,        ///< every start condition known: waits for its start cycle
  kBus,          ///< exec unit: waits for the arbiter to grant its bursts
  kFetchBus,     ///< fetch: waits for the arbiter to grant a fetch burst
  kQueueSpace,   ///< fetch: the target command queue is full
  kDone,         ///< fetch: dispatched FINISH
};

struct UnitState {
  Wait wait = Wait::kIdle;
  int queue = 0;          ///< TokenQueue of a token wait, isa::Module of fetch's queue wait
  uint32_t insn = 0;      ///< instruction index concerned
  Instruction insn_body;  ///< that instruction (for its description)
  uint64_t request = 0;   ///< kBus/kFetchBus: absolute request cycle
  // kStart: the absolute cycles from which each start condition holds, and the start cycle.
  uint64_t cmd_ready = 0, pop_ready = 0, room_ready = 0, drain_ready = 0, start = 0;
  int pop_queue = 0, room_queue = 0;
  // The last instruction started (exec units).
  bool has_last = false;
  uint32_t last_insn = 0;
  Instruction last_body;
  uint64_t last_done = 0;  ///< absolute D
};

/// One master's sequence of bursts, presented to the arbiter.
struct BusRequest {
  bool pending = false;
  bool granted = false;
  bool write = false;
  uint32_t insn = 0;
  uint64_t request = 0;       ///< absolute cycle from which it is requested
  std::vector<Burst> bursts;
  // result (absolute cycles)
  uint64_t grant = 0, first = 0, last = 0, response = 0;
};

/// The state of one run. Cycles are absolute (the run's cycle 0 is `base`).
struct RunState {
  explicit RunState(const RunInput& input)
      : in(input),
        cmd_depth(uint64_t(input.cfg->cmd_queue_depth)),
        token_depth(uint64_t(input.cfg->token_queue_depth)),
        bus(uint64_t(input.cfg->dram_latency)) {}

  const RunInput& in;
  uint64_t cmd_depth;
  uint64_t token_depth;
  uint64_t base = 0;
  std::vector<Command> cmds[3];          ///< by isa::Module, in dispatch order
  std::vector<uint64_t> cmd_pop[3];      ///< S of each command, in order
  std::vector<uint64_t> tok_push[4];     ///< push cycle (D) of each token, by TokenQueue
  std::vector<uint64_t> tok_pop[4];      ///< pop cycle (S) of each token
  uint64_t timed[3] = {0, 0, 0};         ///< instructions whose D is known, by module
  uint64_t last_done[3] = {0, 0, 0};     ///< the latest of those D
  BusSchedule bus;
  uint64_t arb_free = 0;                 ///< first cycle the arbiter can grant again
  BusRequest req[kNumUnits];
  ModuleStats stats[kNumUnits];
  UnitState unit[kNumUnits];
  Counters counters;
  bool done = false;
  uint64_t end_cycle = 0;  ///< FINISH's D
  uint32_t finish_index = 0;
  bool abort = false;
  std::exception_ptr error;
  std::vector<uint8_t> fetch_buf;
};

/// Events shared by the units (the "wires" between the modules).
struct Channels {
  sc_event start;             ///< a run begins (notified at its base cycle)
  sc_event abort;             ///< the run is over: every thread unwinds
  sc_event cmd_pushed[3];     ///< fetch dispatched into a command queue (by isa::Module)
  sc_event cmd_popped[3];     ///< a module popped its command queue
  sc_event tok_pushed[4];     ///< a token push was timed (by isa::TokenQueue)
  sc_event tok_popped[4];     ///< a token pop happened
  sc_event granted[kNumUnits];  ///< the arbiter granted a unit's request
  sc_event exec_timed;        ///< a load or store instruction's D became known
  sc_event arbitrate;         ///< wakes the arbiter (at the half of a cycle)
  RunState* rs = nullptr;     ///< the run in progress, null between runs
};

uint64_t now_raw() { return sc_core::sc_time_stamp().value(); }
uint64_t now_cycle() { return now_raw() / kRawPerCycle; }
sc_time raw(uint64_t v) { return sc_time::from_value(v); }

void abort_run(Channels& ch) {
  RunState& rs = *ch.rs;
  rs.abort = true;
  ch.abort.notify(sc_core::SC_ZERO_TIME);
  for (auto& e : ch.cmd_pushed) e.notify(sc_core::SC_ZERO_TIME);
  for (auto& e : ch.cmd_popped) e.notify(sc_core::SC_ZERO_TIME);
  for (auto& e : ch.tok_pushed) e.notify(sc_core::SC_ZERO_TIME);
  for (auto& e : ch.tok_popped) e.notify(sc_core::SC_ZERO_TIME);
  for (auto& e : ch.granted) e.notify(sc_core::SC_ZERO_TIME);
  ch.exec_timed.notify(sc_core::SC_ZERO_TIME);
  ch.arbitrate.cancel();
}

void record_error(Channels& ch, std::exception_ptr e) {
  if (!ch.rs->error) ch.rs->error = e;
  abort_run(ch);
}

/// Schedules the arbiter for the earliest cycle in which it could grant a pending request.
void schedule_arbiter(Channels& ch) {
  RunState& s = *ch.rs;
  uint64_t next = UINT64_MAX;
  for (const BusRequest& q : s.req) {
    if (q.pending) next = std::min(next, std::max(s.arb_free, q.request));
  }
  if (next == UINT64_MAX) return;
  const uint64_t target = next * kRawPerCycle + kRawPerCycle / 2;
  const uint64_t now = now_raw();
  // A request is registered before its cycle and arb_free lies after the last grant, so the
  // target is always in the future.
  TESSEL_CHECK(target > now, "arbiter scheduled in the past (cycle {})", next);
  ch.arbitrate.notify(raw(target - now));  // an earlier pending notification wins
}

/// Common helpers of the thread-based units.
class UnitBase : public sc_core::sc_module {
 protected:
  UnitBase(sc_core::sc_module_name name, Channels& ch) : sc_module(name), ch_(ch) {}

  RunState& rs() { return *ch_.rs; }
  void check_abort() {
    if (ch_.rs == nullptr || ch_.rs->abort) throw RunAborted{};
  }
  /// Waits until the start of absolute cycle `c` (returns at once if it is not in the future).
  void wait_until(uint64_t c) {
    const uint64_t target = c * kRawPerCycle;
    const uint64_t now = now_raw();
    if (target > now) wait(raw(target - now), ch_.abort);
    check_abort();
  }
  void wait_event(sc_event& e) {
    wait(e);
    check_abort();
  }
  /// Presents the bursts in rs().req[unit] (filled by the caller) from cycle `request` and
  /// waits for their grant; the result is in rs().req[unit].
  void request_bus(int unit, uint64_t request, bool write, uint32_t insn) {
    BusRequest& q = rs().req[unit];
    q.pending = true;
    q.granted = false;
    q.write = write;
    q.insn = insn;
    q.request = request;
    schedule_arbiter(ch_);
    while (!q.granted) wait_event(ch_.granted[unit]);
  }
  /// Runs `body` for every run, forever; errors end the run.
  template <typename Body>
  void serve(Body body) {
    while (true) {
      wait(ch_.start);
      if (ch_.rs == nullptr) continue;
      try {
        body();
      } catch (const RunAborted&) {
      } catch (const sc_core::sc_unwind_exception&) {
        throw;
      } catch (...) {
        record_error(ch_, std::current_exception());
      }
    }
  }
  Channels& ch_;
};

/// Fetch (section 3): reads bursts of up to 8 instructions, dispatches them one per cycle from
/// the cycle after the burst's last beat, each when its command queue has room, and requests the
/// next burst the cycle after the last dispatch. Stops after FINISH.
class FetchUnit : public UnitBase {
 public:
  SC_HAS_PROCESS(FetchUnit);
  FetchUnit(sc_core::sc_module_name name, Channels& ch) : UnitBase(name, ch) {
    SC_THREAD(thread);
    set_stack_size(kThreadStackBytes);
  }

 private:
  void thread() {
    serve([this] { body(); });
  }

  void body() {
    RunState& s = rs();
    const RunInput& in = s.in;
    ModuleStats& st = s.stats[kFetchUnit];
    UnitState& us = s.unit[kFetchUnit];
    BusRequest& q = s.req[kFetchUnit];
    uint32_t pc = 0;
    uint64_t request = s.base;
    while (pc < in.insn_count) {
      const uint32_t n = std::min(kFetchBurstInsns, in.insn_count - pc);
      const uint64_t addr = in.insn_addr + uint64_t(pc) * kInsnBytes;
      const uint64_t bytes = uint64_t(n) * kInsnBytes;
      try {
        in.dram->check_range(addr, bytes, "instruction fetch");
      } catch (const UserError& e) {
        throw SimError(fmt::format("fetch: instructions {} to {}: {}", pc, pc + n - 1, e.what()));
      }
      q.bursts.clear();
      const uint64_t beats = isa::timing::append_fetch_bursts(*in.cfg, addr, n, q.bursts);
      us.wait = Wait::kFetchBus;
      us.insn = pc;
      us.request = request;
      request_bus(kFetchUnit, request, false, pc);
      s.fetch_buf.resize(bytes);
      in.dram->read(addr, s.fetch_buf.data(), bytes);
      const uint64_t first = q.first;
      st.busy_cycles += beats;
      st.stall_dram_cycles += first - request;
      if (in.record != nullptr) {
        in.record->fetches.push_back(FetchRecord{pc, n, request - s.base, q.grant - s.base,
                                                 first - s.base, beats});
      }
      uint64_t prev = first + beats - 1;  // the first dispatch is at F + B at the earliest
      for (uint32_t i = 0; i < n; ++i) {
        const uint32_t index = pc + i;
        const Instruction insn = decode(s, i, index);
        const int m = int(insn.module());
        const uint64_t earliest = prev + 1;
        uint64_t d = earliest;
        const uint64_t c = s.cmds[m].size();
        if (c >= s.cmd_depth) {
          // Room needs the pop of command c - depth, visible the cycle after it.
          const uint64_t k = c - s.cmd_depth;
          if (s.cmd_pop[m].size() <= k) {
            us.wait = Wait::kQueueSpace;
            us.queue = m;
            us.insn = index;
            us.insn_body = insn;
            while (s.cmd_pop[m].size() <= k) wait_event(ch_.cmd_popped[m]);
          }
          d = std::max(d, s.cmd_pop[m][k] + 1);
        }
        st.stall_queue_cycles += d - earliest;
        st.busy_cycles += 1;
        ++st.insns;
        s.cmds[m].push_back(Command{insn, index, d});
        ch_.cmd_pushed[m].notify();
        if (in.record != nullptr) {
          in.record->dispatches.push_back(
              RunRecord::Dispatch{index, Module(m), earliest - s.base, d - s.base});
        }
        prev = d;
        if (insn.opcode == Opcode::kFinish) {
          us.wait = Wait::kDone;
          us.insn = index;
          return;
        }
      }
      pc += n;
      request = prev + 1;
    }
    throw SimError(fmt::format(
        "fetch: the instruction stream of {} instructions at byte address {} ends without a "
        "finish (last instruction index {})",
        in.insn_count, in.insn_addr, in.insn_count - 1));
  }

  /// Decodes instruction `i` of the fetch buffer and checks what dispatch needs.
  static Instruction decode(RunState& s, uint32_t i, uint32_t index) {
    Instruction insn;
    try {
      insn = s.in.spec->decode(isa::IsaSpec::from_bytes(&s.fetch_buf[size_t(i) * 16]));
    } catch (const Error& e) {
      throw SimError(fmt::format("fetch: instruction {} at byte address {} cannot be decoded: {}",
                                 index, s.in.insn_addr + uint64_t(index) * 16, e.what()));
    }
    token_ports(insn, index);  // throws SimError for a flag the module does not have
    return insn;
  }
};

/// One of the three execution modules (section 4): takes its commands in order, starts each in
/// the first cycle its start conditions hold on visible state, applies it through the datapath
/// in that cycle, times it (section 5) and pushes its tokens in its done cycle.
class ExecUnit : public UnitBase {
 public:
  SC_HAS_PROCESS(ExecUnit);
  ExecUnit(sc_core::sc_module_name name, Channels& ch, Module m)
      : UnitBase(name, ch), module_(m), unit_(unit_of(m)) {
    SC_THREAD(thread);
    set_stack_size(kThreadStackBytes);
  }

 private:
  void thread() {
    serve([this] { body(); });
  }

  void body() {
    RunState& s = rs();
    const int mi = int(module_);
    ModuleStats& st = s.stats[unit_];
    UnitState& us = s.unit[unit_];
    uint64_t free = s.base;  // previous D + 1
    for (size_t c = 0;; ++c) {
      us.wait = Wait::kIdle;
      while (s.cmds[mi].size() <= c) wait_event(ch_.cmd_pushed[mi]);
      const Command cmd = s.cmds[mi][c];
      const Instruction& insn = cmd.insn;
      us.insn = cmd.index;
      us.insn_body = insn;
      const TokenPorts ports = token_ports(insn, cmd.index);

      // Section 4's conditions, each as the first cycle from which it holds.
      InsnRecord rec;
      const uint64_t cmd_ready = cmd.dispatch + 1;
      uint64_t pop_ready = 0, room_ready = 0, drain_ready = 0;
      int pop_q = 0, room_q = 0;
      for (uint32_t i = 0; i < ports.n_pops; ++i) {
        const int q = int(ports.pops[i]);
        const uint64_t k = s.tok_pop[q].size();  // this module is q's only consumer
        if (s.tok_push[q].size() <= k) {
          us.wait = Wait::kTokenPop;
          us.queue = q;
          while (s.tok_push[q].size() <= k) wait_event(ch_.tok_pushed[q]);
        }
        if (s.tok_push[q][k] + 1 > pop_ready) {
          pop_ready = s.tok_push[q][k] + 1;
          pop_q = q;
        }
        rec.pops[i] = TokenRef{TokenQueue(q), k};
      }
      for (uint32_t i = 0; i < ports.n_pushes; ++i) {
        const int q = int(ports.pushes[i]);
        const uint64_t k = s.tok_push[q].size();  // this module is q's only producer
        if (k >= s.token_depth) {
          const uint64_t j = k - s.token_depth;
          if (s.tok_pop[q].size() <= j) {
            us.wait = Wait::kTokenSpace;
            us.queue = q;
            while (s.tok_pop[q].size() <= j) wait_event(ch_.tok_popped[q]);
          }
          if (s.tok_pop[q][j] + 1 > room_ready) {
            room_ready = s.tok_pop[q][j] + 1;
            room_q = q;
          }
        }
        rec.pushes[i] = TokenRef{TokenQueue(q), k};
      }
      if (insn.opcode == Opcode::kFinish) {
        // Every load and store fetch dispatched (final: fetch stops at FINISH) must be done.
        const int lm = int(Module::kLoad), sm = int(Module::kStore);
        while (s.timed[lm] < s.cmds[lm].size() || s.timed[sm] < s.cmds[sm].size()) {
          us.wait = Wait::kDrain;
          wait_event(ch_.exec_timed);
        }
        if (s.timed[lm] > 0) drain_ready = std::max(drain_ready, s.last_done[lm] + 1);
        if (s.timed[sm] > 0) drain_ready = std::max(drain_ready, s.last_done[sm] + 1);
      }
      const uint64_t start = std::max({free, cmd_ready, pop_ready, room_ready, drain_ready});
      us.wait = Wait::kStart;
      us.cmd_ready = cmd_ready;
      us.pop_ready = pop_ready;
      us.room_ready = room_ready;
      us.drain_ready = drain_ready;
      us.pop_queue = pop_q;
      us.room_queue = room_q;
      us.start = start;
      // Every input of S was recorded no later than its own cycle, so S lies after the current
      // time: the request of cycle S + 1 reaches the arbiter before it decides that cycle.
      TESSEL_CHECK(start * kRawPerCycle >= now_raw(), "{} instruction {} starts in the past",
                   unit_name(unit_), cmd.index);
      wait_until(start);

      // Cycle S: pop the command and the tokens (visible to their producers from S + 1).
      s.cmd_pop[mi].push_back(start);
      ch_.cmd_popped[mi].notify();
      for (uint32_t i = 0; i < ports.n_pops; ++i) {
        const int q = int(ports.pops[i]);
        s.tok_pop[q].push_back(start);
        ch_.tok_popped[q].notify();
      }
      // Stall attribution, cycle by cycle from `free` to S - 1, to the first failing condition
      // in the order command queue (queue), pop tokens (token), push room (queue), drain (queue).
      {
        const uint64_t a = std::max(free, std::min(start, cmd_ready));
        const uint64_t b = std::max(a, std::min(start, pop_ready));
        const uint64_t cc = std::max(b, std::min(start, room_ready));
        st.stall_queue_cycles += (a - free) + (cc - b) + (start - cc);
        st.stall_token_cycles += b - a;
      }

      us.has_last = true;
      us.last_insn = cmd.index;
      us.last_body = insn;
      us.last_done = UINT64_MAX;  // until its done cycle is known
      const uint64_t done = execute(s, insn, cmd.index, start, st, us, rec);
      us.last_done = done;

      for (uint32_t i = 0; i < ports.n_pushes; ++i) {
        const int q = int(ports.pushes[i]);
        s.tok_push[q].push_back(done);
        ch_.tok_pushed[q].notify();
      }
      ++s.timed[mi];
      s.last_done[mi] = std::max(s.last_done[mi], done);
      if (module_ != Module::kCompute) ch_.exec_timed.notify();
      ++st.insns;
      ++s.counters.insn_count;
      if (s.in.trace != nullptr) {
        s.in.trace->push_back(InsnTiming{cmd.index, module_, insn.opcode, cmd.dispatch - s.base,
                                         start - s.base, done - s.base});
      }
      if (s.in.record != nullptr) {
        rec.index = cmd.index;
        rec.module = module_;
        rec.insn = insn;
        rec.dispatch = cmd.dispatch - s.base;
        rec.free = free - s.base;
        auto rel = [&](uint64_t v) { return v > s.base ? v - s.base : 0; };
        rec.cmd_ready = rel(cmd_ready);
        rec.pop_ready = rel(pop_ready);
        rec.room_ready = rel(room_ready);
        rec.drain_ready = rel(drain_ready);
        rec.pop_queue = TokenQueue(pop_q);
        rec.room_queue = TokenQueue(room_q);
        rec.start = start - s.base;
        rec.done = done - s.base;
        if (rec.beats > 0) rec.first_beat -= s.base;
        rec.n_pops = ports.n_pops;
        rec.n_pushes = ports.n_pushes;
        s.in.record->insns.push_back(rec);
      }
      if (insn.opcode == Opcode::kFinish) {
        s.done = true;
        s.end_cycle = done;
        s.finish_index = cmd.index;
      }
      free = done + 1;
    }
  }

  /// Applies `insn` (started in cycle `start`) through the datapath and returns its done cycle
  /// (section 5), requesting its bursts from the arbiter when it moves data. Adds its busy and
  /// DRAM-stall cycles to `st`; fills the timing fields of `rec` (absolute first beat).
  uint64_t execute(RunState& s, const Instruction& insn, uint32_t index, uint64_t start,
                   ModuleStats& st, UnitState& us, InsnRecord& rec) {
    const isa::HwConfig& cfg = *s.in.cfg;
    Datapath& dp = *s.in.datapath;
    switch (insn.opcode) {
      case Opcode::kLoad: {
        dp.load(insn, *s.in.dram, index, s.counters);
        const uint64_t pads = isa::timing::pad_elems(insn);
        rec.pads = pads;
        if (insn.x_size == 0 || insn.y_size == 0) {
          st.busy_cycles += std::max<uint64_t>(1, pads);
          return isa::timing::beatless_load_done(insn, start);
        }
        BusRequest& q = s.req[unit_];
        q.bursts.clear();
        const uint64_t beats = isa::timing::append_dma_bursts(cfg, insn, q.bursts);
        us.wait = Wait::kBus;
        us.request = start + 1;
        request_bus(unit_, start + 1, false, index);
        TESSEL_CHECK(q.last + 1 - q.first == beats, "load beats not contiguous");
        const uint64_t first = q.first;
        const uint64_t waiting = first - start - 1;  // S + 1 .. F - 1
        st.busy_cycles += beats + pads;
        st.stall_dram_cycles += waiting - std::min(waiting, pads);
        rec.beats = beats;
        rec.first_beat = first;
        return isa::timing::dma_read_done(start, pads, first, beats);
      }
      case Opcode::kStore: {
        dp.store(insn, *s.in.dram, index, s.counters);
        if (insn.x_size == 0 || insn.y_size == 0) {
          st.busy_cycles += 1;
          return start;
        }
        BusRequest& q = s.req[unit_];
        q.bursts.clear();
        const uint64_t beats = isa::timing::append_dma_bursts(cfg, insn, q.bursts);
        us.wait = Wait::kBus;
        us.request = start + 1;
        request_bus(unit_, start + 1, true, index);
        TESSEL_CHECK(q.last + 1 - q.first == beats, "store beats not contiguous");
        const uint64_t first = q.first;
        const uint64_t done = isa::timing::store_done(uint64_t(cfg.dram_latency), first, beats);
        TESSEL_CHECK(done == q.response, "store response at {} but the bus says {}", done,
                     q.response);
        st.busy_cycles += beats;
        st.stall_dram_cycles += (first - start - 1) + (done - (first + beats - 1));
        rec.beats = beats;
        rec.first_beat = first;
        return done;
      }
      case Opcode::kGemm:
      case Opcode::kAlu: {
        if (insn.opcode == Opcode::kGemm) {
          dp.gemm(insn, index, s.counters);
        } else {
          dp.alu(insn, index, s.counters);
        }
        const uint64_t n = loop_uops(insn);
        rec.uops = n;
        st.busy_cycles += std::max<uint64_t>(1, n);
        return isa::timing::compute_done(insn, start);
      }
      case Opcode::kFinish:
        st.busy_cycles += 1;
        return start;
    }
    throw_internal_error("instruction {} has an unknown opcode", index);
  }

  Module module_;
  int unit_;
};

/// The memory arbiter (section 2.2) in front of the DRAM bus (section 2.3, sim::BusSchedule).
/// Runs at the half of a cycle t in which a grant is possible: grants the highest-priority
/// master (fetch > load > compute > store) requesting in t, all bursts of its sequence in
/// t, t + 1, ... (the lock), and reserves their beats on the bus.
class Arbiter : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Arbiter);
  Arbiter(sc_core::sc_module_name name, Channels& ch) : sc_module(name), ch_(ch) {
    SC_METHOD(on_arbitrate);
    sensitive << ch_.arbitrate;
    dont_initialize();
  }

 private:
  void on_arbitrate() {
    RunState* s = ch_.rs;
    if (s == nullptr || s->abort) return;
    try {
      const uint64_t t = now_cycle();
      if (t >= s->arb_free) {
        for (int u = 0; u < kNumUnits; ++u) {
          BusRequest& q = s->req[u];
          if (q.pending && q.request <= t) {
            grant(*s, u, t);
            break;
          }
        }
      }
      schedule_arbiter(ch_);
    } catch (...) {
      record_error(ch_, std::current_exception());
    }
  }

  void grant(RunState& s, int u, uint64_t t) {
    BusRequest& q = s.req[u];
    for (size_t i = 0; i < q.bursts.size(); ++i) {
      const BusSlot slot = s.bus.reserve(q.write, t + i, q.bursts[i].beats);
      if (i == 0) q.first = slot.first;
      q.last = slot.last;
      q.response = slot.response;
      if (s.in.record != nullptr) {
        s.in.record->bus.push_back(BusRecord{Master(u), q.insn, q.write, q.bursts[i].addr,
                                             q.bursts[i].beats, t + i - s.base,
                                             slot.first - s.base, slot.last - s.base,
                                             slot.response - s.base});
      }
    }
    s.arb_free = t + q.bursts.size();
    q.grant = t;
    q.pending = false;
    q.granted = true;
    ch_.granted[u].notify();
  }

  Channels& ch_;
};

/// The whole accelerator.
class Top : public sc_core::sc_module {
 public:
  explicit Top(sc_core::sc_module_name name)
      : sc_module(name),
        fetch_("fetch", ch),
        load_("load", ch, Module::kLoad),
        compute_("compute", ch, Module::kCompute),
        store_("store", ch, Module::kStore),
        arbiter_("arbiter", ch) {}

  Channels ch;

 private:
  FetchUnit fetch_;
  ExecUnit load_;
  ExecUnit compute_;
  ExecUnit store_;
  Arbiter arbiter_;
};

/// Every SystemC model of the process (cycle, rtl) shares one kernel: runs are serialised by
/// systemc_kernel_mutex() and all models are constructed before the first sc_start()
/// (sim/common/systemc_models.h).
Top* g_top = nullptr;

void construct_top() {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  g_top = new Top("tessel_cycle");
}

const SystemcModelRegistration kRegistration("cycle", &construct_top);

/// The process-wide model, elaborated on first use of any SystemC model (caller holds
/// systemc_kernel_mutex()). Never destroyed: SystemC objects must outlive the kernel.
Top& top() {
  elaborate_systemc_models([] {
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_DO_NOTHING);
    // Run the initialisation phase: every thread reaches its idle wait on `start`.
    const SanitizerStackRestore restore_stack;
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
  });
  if (g_top == nullptr) {
    throw_internal_error("the cycle model's SystemC modules were not elaborated (another SystemC "
                         "model started the kernel without sim/common/systemc_models.h)");
  }
  return *g_top;
}

/// What unit `u` is doing at absolute cycle `now` (for deadlock and cycle-limit messages).
std::string describe_unit(const RunState& s, int u, uint64_t now) {
  const UnitState& us = s.unit[u];
  const std::string name = unit_name(u);
  const uint64_t base = s.base;
  auto rel = [base](uint64_t c) { return c >= base ? c - base : 0; };
  auto insn = [&] { return fmt::format("instruction {} ({})", us.insn, describe(us.insn_body)); };
  if (u != kFetchUnit && us.has_last && us.last_done != UINT64_MAX && us.last_done >= now) {
    return fmt::format("{} executes instruction {} ({}) until cycle {}", name, us.last_insn,
                       describe(us.last_body), rel(us.last_done));
  }
  auto token_wait = [&](int q) {
    return fmt::format("{} waits to pop token queue {} (empty) for {}", name,
                       token_name(TokenQueue(q)), insn());
  };
  auto room_wait = [&](int q) {
    return fmt::format("{} waits to push into token queue {} (full, depth {}) for {}", name,
                       token_name(TokenQueue(q)), s.token_depth, insn());
  };
  auto drain_wait = [&] {
    const int lm = int(Module::kLoad), sm = int(Module::kStore);
    return fmt::format(
        "compute waits for load ({} instruction(s) left) and store ({} left) to complete "
        "before {}",
        s.cmds[lm].size() - s.timed[lm], s.cmds[sm].size() - s.timed[sm], insn());
  };
  switch (us.wait) {
    case Wait::kIdle:
      return name + (u == kFetchUnit ? " has not started" : " is idle (command queue empty)");
    case Wait::kTokenPop:
      return token_wait(us.queue);
    case Wait::kTokenSpace:
      return room_wait(us.queue);
    case Wait::kDrain:
      return drain_wait();
    case Wait::kStart:
      if (now < us.cmd_ready) {
        return fmt::format("{} waits for {} to reach its command queue (cycle {})", name, insn(),
                           rel(us.cmd_ready));
      }
      if (now < us.pop_ready) return token_wait(us.pop_queue);
      if (now < us.room_ready) return room_wait(us.room_queue);
      if (now < us.drain_ready) {
        return fmt::format("compute waits for load and store to complete before {}", insn());
      }
      return fmt::format("{} starts {} in cycle {}", name, insn(), rel(us.start));
    case Wait::kBus:
      return fmt::format("{} executes {}: its bursts wait for the DRAM bus (requested from "
                         "cycle {})",
                         name, insn(), rel(us.request));
    case Wait::kFetchBus:
      return fmt::format("fetch waits for the DRAM bus to read instructions from index {} "
                         "(requested from cycle {})",
                         us.insn, rel(us.request));
    case Wait::kQueueSpace:
      return fmt::format("fetch waits to dispatch {} into the {} command queue (full, depth {})",
                         insn(), unit_name(unit_of(Module(us.queue))), s.cmd_depth);
    case Wait::kDone:
      return fmt::format("fetch has dispatched every instruction up to finish (instruction {})",
                         us.insn);
  }
  return name;
}

std::string describe_units(const RunState& s, uint64_t now) {
  std::string out;
  for (int u = 0; u < kNumUnits; ++u) {
    if (!out.empty()) out += "; ";
    out += describe_unit(s, u, now);
  }
  return out;
}

}  // namespace

RunStats run_on_engine(const RunInput& in) {
  std::lock_guard<std::mutex> lock(systemc_kernel_mutex());
  Top& t = top();
  Channels& ch = t.ch;
  RunState s(in);

  const uint64_t start_raw = now_raw();
  s.base = start_raw / kRawPerCycle + 1;
  s.arb_free = s.base;
  const uint64_t max_raw = ~uint64_t(0) / 2;
  if (in.cycle_limit > max_raw / kRawPerCycle - s.base) {
    throw UserError(fmt::format("cycle limit {} is too large for the simulation time range",
                                in.cycle_limit));
  }
  if (in.record != nullptr) in.record->dram_latency = uint64_t(in.cfg->dram_latency);
  ch.rs = &s;
  ch.start.notify(raw(s.base * kRawPerCycle - start_raw));
  const uint64_t limit_raw = (s.base + in.cycle_limit) * kRawPerCycle;
  try {
    const SanitizerStackRestore restore_stack;
    sc_core::sc_start(raw(limit_raw - start_raw), sc_core::SC_EXIT_ON_STARVATION);
  } catch (const sc_core::sc_report& r) {
    ch.rs = nullptr;
    throw_internal_error("the SystemC kernel failed during a cycle run: {}", r.what());
  }

  const uint64_t stop = now_cycle();
  std::exception_ptr error = s.error;
  const bool over_limit = s.done && s.end_cycle + 1 - s.base > in.cycle_limit;
  if (!error && (!s.done || over_limit)) {
    if (over_limit || sc_core::sc_pending_activity()) {
      error = std::make_exception_ptr(SimError(fmt::format(
          "run stopped at the cycle limit of {} cycles: {}", in.cycle_limit,
          describe_units(s, stop))));
    } else {
      // Threads time instructions ahead of simulated time, so the last event may precede the
      // last done cycle: the deadlock holds from the cycle after the last known activity.
      uint64_t at = stop;
      for (int m = 0; m < 3; ++m) {
        if (s.timed[m] > 0) at = std::max(at, s.last_done[m] + 1);
        if (!s.cmds[m].empty()) at = std::max(at, s.cmds[m].back().dispatch + 1);
      }
      error = std::make_exception_ptr(SimError(
          fmt::format("deadlock at cycle {}: no module can make progress: {}", at - s.base,
                      describe_units(s, at))));
    }
  }
  if (!error) {
    for (int q = 0; q < 4; ++q) {
      const uint64_t left = s.tok_push[q].size() - s.tok_pop[q].size();
      if (left > 0) {
        error = std::make_exception_ptr(SimError(fmt::format(
            "compute module: insn {} (FINISH): token queue {} holds {} token(s) at finish (every "
            "dependency token must be popped before FINISH)",
            s.finish_index, token_name(TokenQueue(q)), left)));
        break;
      }
    }
  }

  // Unwind every thread to its idle wait, so the next run starts clean.
  abort_run(ch);
  try {
    const SanitizerStackRestore restore_stack;
    sc_core::sc_start();
  } catch (const sc_core::sc_report& r) {
    ch.rs = nullptr;
    throw_internal_error("the SystemC kernel failed ending a cycle run: {}", r.what());
  }
  ch.rs = nullptr;

  if (error) {
    // Keep what was done before the run stopped (threads may have timed instructions ahead).
    if (in.trace != nullptr) {
      const uint64_t rel_stop = stop >= s.base ? stop - s.base : 0;
      std::erase_if(*in.trace, [rel_stop](const InsnTiming& x) { return x.end >= rel_stop; });
    }
    std::rethrow_exception(error);
  }
  RunStats r;
  r.cycles = s.end_cycle + 1 - s.base;
  r.counters = s.counters;
  r.fetch = s.stats[kFetchUnit];
  r.load = s.stats[unit_of(Module::kLoad)];
  r.compute = s.stats[unit_of(Module::kCompute)];
  r.store = s.stats[unit_of(Module::kStore)];
  if (in.record != nullptr) in.record->cycles = r.cycles;
  return r;
}

}  // namespace tessel::sim::cycle

/// libsystemc defines main() calling sc_main(); Tessel's programs have their own main(), but the
/// symbol must resolve when linking libsystemc. Weak, so a program may define its own; never
/// called by Tessel.
extern "C" __attribute__((weak)) int sc_main(int, char**) { return 0; }
