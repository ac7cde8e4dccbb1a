// The SystemC model behind CycleSimulator: modules fetch, load, compute and store connected by
// bounded command queues and the four dependency-token queues, and a memory unit that owns the
// shared DRAM bus and applies each instruction's effect through sim::Datapath. The timing rules
// are in timing.h; the model is described in docs/cycle-model.md.
//
// Time: one accelerator cycle is kRawPerCycle raw sc_time units. Modules only act at whole cycles;
// the memory unit acts at half cycles: every request made during cycle c (in whatever delta
// order SystemC runs the modules) is committed at c + 1/2 in a fixed priority order (fetch, load,
// compute, store), so bus arbitration and the order of DRAM/SRAM effects never depend on the
// scheduler. Commands fetch dispatches carry the cycle they enter the queue ("date"), so fetch can
// dispatch a whole burst without one context switch per instruction.
//
// The hierarchy is configuration-agnostic and built once per process; each run installs a
// RunState (config, queues of its depths, DRAM, datapath) and drives sc_start() until starvation.
// At the end of a run (or on an error) the state's abort flag makes every thread unwind to its
// idle wait, so the next run starts from scratch at a fresh base cycle.
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <systemc>

#include "isa/program.h"
#include "sim/common/queues.h"
#include "sim/cycle/engine.h"
#include "sim/cycle/timing.h"

namespace tessel::sim::cycle {
namespace {

using isa::Instruction;
using isa::Module;
using isa::Opcode;
using isa::TokenQueue;
using sc_core::sc_event;
using sc_core::sc_time;

/// Raw sc_time units per cycle; half of it is the commit point of the memory unit.
constexpr uint64_t kRawPerCycle = 2;

/// Stack of each SystemC thread: room for decoding, fmt messages and exception unwinding.
constexpr std::size_t kThreadStackBytes = std::size_t(1) << 20;

/// Units in commit-priority order: index 0 is fetch, 1 + int(isa::Module) the three modules.
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

/// Thrown inside a module thread when the run is being torn down; caught at the thread's top.
struct RunAborted {};

/// One entry of a command queue.
struct Command {
  Instruction insn;
  uint32_t index = 0;
  uint64_t date = 0;  ///< absolute cycle from which the command is in the queue
};

/// What a unit is waiting for (for deadlock and cycle-limit messages).
enum class Wait : uint8_t {
  kIdle,        ///< exec unit: command queue empty; fetch: before its first request
  kCommand,     ///< exec unit: the head command is dated in the future
  kTokenPop,    ///< token queue empty
  kTokenSpace,  ///< token queue full (a push of this instruction would not fit)
  kQueueSpace,  ///< fetch: the target command queue is full
  kExecute,     ///< executing until `until`
  kDrain,       ///< compute: FINISH waits for load and store to complete their instructions
  kDone,        ///< fetch: dispatched FINISH
};

struct UnitState {
  Wait wait = Wait::kIdle;
  int queue = 0;          ///< TokenQueue (token waits) or Module (fetch's queue-space wait)
  uint32_t insn = 0;      ///< instruction index concerned
  Instruction insn_body;  ///< that instruction (for its description)
  uint64_t until = 0;     ///< absolute end cycle of kExecute
};

/// A request to the memory unit, made during one cycle and committed at its half.
struct CommitSlot {
  bool pending = false;
  // inputs
  const Command* cmd = nullptr;  ///< exec units
  uint32_t fetch_pc = 0;         ///< fetch: first instruction index
  uint32_t fetch_count = 0;      ///< fetch: instructions in the burst
  // outputs
  uint64_t end = 0;        ///< absolute cycle the instruction / burst completes
  uint64_t busy = 0;       ///< cycles of work (beats, uops, pad rows)
  uint64_t dram_wait = 0;  ///< cycles waiting for DRAM latency or the bus
};

/// The state of one run.
struct RunState {
  explicit RunState(const RunInput& in)
      : in(in),
        cmd{BoundedQueue<Command>(uint32_t(in.cfg->cmd_queue_depth)),
            BoundedQueue<Command>(uint32_t(in.cfg->cmd_queue_depth)),
            BoundedQueue<Command>(uint32_t(in.cfg->cmd_queue_depth))},
        tok{TokenCounter(uint32_t(in.cfg->token_queue_depth)),
            TokenCounter(uint32_t(in.cfg->token_queue_depth)),
            TokenCounter(uint32_t(in.cfg->token_queue_depth)),
            TokenCounter(uint32_t(in.cfg->token_queue_depth))} {}

  const RunInput& in;
  uint64_t base = 0;  ///< absolute cycle of the run's cycle 0
  BoundedQueue<Command> cmd[3];
  TokenCounter tok[4];
  uint64_t bus_free = 0;  ///< first absolute cycle the bus data channel is free
  CommitSlot slot[kNumUnits];
  ModuleStats stats[kNumUnits];
  UnitState unit[kNumUnits];
  Counters counters;
  uint64_t dispatched[3] = {0, 0, 0};
  uint64_t completed[3] = {0, 0, 0};
  bool fetch_done = false;
  uint32_t finish_index = 0;
  bool done = false;
  uint64_t end_cycle = 0;
  bool abort = false;
  std::exception_ptr error;
  std::vector<uint8_t> fetch_buf;
};

/// Events shared by the units (the "wires" between the modules).
struct Channels {
  sc_event start;          ///< a run begins (notified at its base cycle)
  sc_event cmd_pushed[3];  ///< fetch pushed into a command queue (by isa::Module)
  sc_event cmd_popped[3];  ///< a module popped its command queue
  sc_event tok_changed[4]; ///< a token queue changed (by isa::TokenQueue)
  sc_event granted[kNumUnits];  ///< the memory unit committed a unit's request
  sc_event exec_completed; ///< load or store completed an instruction
  sc_event commit;         ///< a request is pending for the current half cycle
  RunState* rs = nullptr;  ///< the run in progress, null between runs
};

uint64_t now_cycle() { return sc_core::sc_time_stamp().value() / kRawPerCycle; }
sc_time raw(uint64_t v) { return sc_time::from_value(v); }

void abort_run(Channels& ch) {
  RunState& rs = *ch.rs;
  rs.abort = true;
  for (auto& e : ch.cmd_pushed) e.notify(sc_core::SC_ZERO_TIME);
  for (auto& e : ch.cmd_popped) e.notify(sc_core::SC_ZERO_TIME);
  for (auto& e : ch.tok_changed) e.notify(sc_core::SC_ZERO_TIME);
  for (auto& e : ch.granted) e.notify(sc_core::SC_ZERO_TIME);
  ch.exec_completed.notify(sc_core::SC_ZERO_TIME);
}

void record_error(Channels& ch, std::exception_ptr e) {
  if (!ch.rs->error) ch.rs->error = e;
  abort_run(ch);
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
    const uint64_t now = sc_core::sc_time_stamp().value();
    if (target > now) wait(raw(target - now));
    check_abort();
  }
  void wait_event(sc_event& e) {
    wait(e);
    check_abort();
  }
  /// Posts this unit's request to the memory unit and waits for its commit.
  void commit(int unit) {
    rs().slot[unit].pending = true;
    ch_.commit.notify(raw(kRawPerCycle / 2));
    wait_event(ch_.granted[unit]);
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

/// Fetch: reads bursts of instructions over the bus, decodes them and dispatches each, in program
/// order, one per cycle, into its module's command queue, blocking while that queue is full.
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
    CommitSlot& slot = s.slot[kFetchUnit];
    uint32_t pc = 0;
    while (pc < in.insn_count) {
      const uint32_t k = std::min(kFetchBurstInsns, in.insn_count - pc);
      slot.fetch_pc = pc;
      slot.fetch_count = k;
      us.wait = Wait::kExecute;
      us.insn = pc;
      commit(kFetchUnit);
      st.busy_cycles += slot.busy;
      st.stall_dram_cycles += slot.dram_wait;
      uint64_t cur = slot.end;
      for (uint32_t i = 0; i < k; ++i) {
        const uint32_t index = pc + i;
        const Instruction insn = decode(s, i, index);
        const Module m = insn.module();
        BoundedQueue<Command>& q = s.cmd[int(m)];
        if (q.full()) {
          us.wait = Wait::kQueueSpace;
          us.queue = int(m);
          us.insn = index;
          us.insn_body = insn;
          while (q.full()) wait_event(ch_.cmd_popped[int(m)]);
          us.wait = Wait::kExecute;
          const uint64_t p = now_cycle();
          if (p > cur) {
            st.stall_queue_cycles += p - cur;
            cur = p;
          }
        }
        q.push(Command{insn, index, cur});
        ch_.cmd_pushed[int(m)].notify();
        ++s.dispatched[int(m)];
        ++st.insns;
        st.busy_cycles += kDispatchCycles;
        cur += kDispatchCycles;
        if (insn.opcode == Opcode::kFinish) {
          s.fetch_done = true;
          s.finish_index = index;
          us.wait = Wait::kDone;
          us.insn = index;
          return;
        }
      }
      pc += k;
      if (pc < in.insn_count) wait_until(cur);
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

/// One of the three executing modules (load, compute, store): pops a command, pops its tokens,
/// waits for room for its pushes, has the memory unit apply and time it, waits for its end and
/// pushes its tokens.
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
    BoundedQueue<Command>& q = s.cmd[mi];
    ModuleStats& st = s.stats[unit_];
    UnitState& us = s.unit[unit_];
    CommitSlot& slot = s.slot[unit_];
    uint64_t free_at = s.base;
    while (true) {
      us.wait = Wait::kIdle;
      while (q.empty()) wait_event(ch_.cmd_pushed[mi]);
      const Command cmd = q.front();
      us.insn = cmd.index;
      us.insn_body = cmd.insn;
      if (sc_core::sc_time_stamp().value() % kRawPerCycle != 0) wait_until(now_cycle() + 1);
      if (cmd.date > now_cycle()) {
        us.wait = Wait::kCommand;
        wait_until(cmd.date);
      }
      q.pop();
      ch_.cmd_popped[mi].notify();
      const uint64_t t_cmd = now_cycle();
      st.stall_queue_cycles += t_cmd - free_at;
      if (cmd.insn.opcode == Opcode::kFinish) {
        // FINISH starts once load and store have completed everything fetch gave them (fetch
        // stops at FINISH, so those counts are final), as in fsim.
        while (!drained(s)) {
          us.wait = Wait::kDrain;
          wait_event(ch_.exec_completed);
        }
        st.stall_queue_cycles += now_cycle() - t_cmd;
      }
      const uint64_t t_drain = now_cycle();

      const TokenPorts ports = token_ports(cmd.insn, cmd.index);
      for (uint32_t i = 0; i < ports.n_pops; ++i) {
        const int tq = int(ports.pops[i]);
        if (s.tok[tq].empty()) {
          us.wait = Wait::kTokenPop;
          us.queue = tq;
          while (s.tok[tq].empty()) wait_event(ch_.tok_changed[tq]);
        }
        s.tok[tq].pop();
        ch_.tok_changed[tq].notify();
      }
      const uint64_t t_tok = now_cycle();
      st.stall_token_cycles += t_tok - t_drain;
      for (uint32_t i = 0; i < ports.n_pushes; ++i) {
        const int tq = int(ports.pushes[i]);
        if (s.tok[tq].full()) {
          us.wait = Wait::kTokenSpace;
          us.queue = tq;
          while (s.tok[tq].full()) wait_event(ch_.tok_changed[tq]);
        }
      }
      const uint64_t t_start = now_cycle();
      st.stall_queue_cycles += t_start - t_tok;

      slot.cmd = &cmd;
      us.wait = Wait::kExecute;
      commit(unit_);
      us.until = slot.end;
      wait_until(slot.end);
      const uint64_t end = now_cycle();
      st.busy_cycles += slot.busy;
      st.stall_dram_cycles += slot.dram_wait;
      for (uint32_t i = 0; i < ports.n_pushes; ++i) {
        const int tq = int(ports.pushes[i]);
        s.tok[tq].push();
        ch_.tok_changed[tq].notify();
      }
      ++st.insns;
      ++s.counters.insn_count;
      ++s.completed[mi];
      if (s.in.trace != nullptr) {
        s.in.trace->push_back(InsnTiming{cmd.index, module_, cmd.insn.opcode, cmd.date - s.base,
                                         t_start - s.base, end - s.base});
      }
      if (module_ != Module::kCompute) ch_.exec_completed.notify();
      if (cmd.insn.opcode == Opcode::kFinish) {
        s.done = true;
        s.end_cycle = end;
      }
      free_at = end;
    }
  }

  static bool drained(const RunState& s) {
    return s.completed[int(Module::kLoad)] == s.dispatched[int(Module::kLoad)] &&
           s.completed[int(Module::kStore)] == s.dispatched[int(Module::kStore)];
  }

  Module module_;
  int unit_;
};

/// The DRAM and its bus, and the point where instructions take effect. At the half of every
/// cycle in which requests were made, it commits them in unit order: applies the instruction
/// through the Datapath (or reads a fetch burst) and reserves the bus data channel.
class MemoryUnit : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(MemoryUnit);
  MemoryUnit(sc_core::sc_module_name name, Channels& ch) : sc_module(name), ch_(ch) {
    SC_METHOD(on_commit);
    sensitive << ch_.commit;
    dont_initialize();
  }

 private:
  void on_commit() {
    RunState* s = ch_.rs;
    if (s == nullptr) return;
    const uint64_t c = now_cycle();
    for (int u = 0; u < kNumUnits; ++u) {
      CommitSlot& slot = s->slot[u];
      if (!slot.pending) continue;
      slot.pending = false;
      if (!s->abort) {
        try {
          if (u == kFetchUnit) {
            fetch(*s, slot, c);
          } else {
            execute(*s, slot, c);
          }
        } catch (...) {
          record_error(ch_, std::current_exception());
        }
      }
      ch_.granted[u].notify();
    }
  }

  /// Reserves the bus for a read of `beats` requested at cycle c; returns the first beat's cycle.
  static uint64_t read_beats(RunState& s, uint64_t c, uint64_t beats) {
    const uint64_t first = std::max(c + uint64_t(s.in.cfg->dram_latency), s.bus_free);
    s.bus_free = first + beats;
    return first;
  }

  static void fetch(RunState& s, CommitSlot& slot, uint64_t c) {
    const uint64_t addr = s.in.insn_addr + uint64_t(slot.fetch_pc) * 16;
    const uint64_t bytes = uint64_t(slot.fetch_count) * 16;
    try {
      s.in.dram->check_range(addr, bytes, "instruction fetch");
    } catch (const UserError& e) {
      throw SimError(fmt::format("fetch: instructions {} to {}: {}", slot.fetch_pc,
                                 slot.fetch_pc + slot.fetch_count - 1, e.what()));
    }
    s.fetch_buf.resize(bytes);
    s.in.dram->read(addr, s.fetch_buf.data(), bytes);
    const uint64_t beats = fetch_beats(*s.in.cfg, slot.fetch_count);
    const uint64_t first = read_beats(s, c, beats);
    slot.end = first + beats;
    slot.busy = beats;
    slot.dram_wait = first - c;
  }

  static void execute(RunState& s, CommitSlot& slot, uint64_t c) {
    const Instruction& insn = slot.cmd->insn;
    const uint32_t index = slot.cmd->index;
    const isa::HwConfig& cfg = *s.in.cfg;
    Datapath& dp = *s.in.datapath;
    switch (insn.opcode) {
      case Opcode::kLoad: {
        dp.load(insn, *s.in.dram, index, s.counters);
        const uint64_t beats = transfer_beats(cfg, insn);
        const uint64_t pads = pad_rows(insn);
        if (beats == 0) {
          const uint64_t n = std::max(kIssueCycles, pads);
          slot.end = c + n;
          slot.busy = n;
          slot.dram_wait = 0;
        } else {
          const uint64_t first = read_beats(s, c, beats);
          slot.end = first + beats + pads;
          slot.busy = beats + pads;
          slot.dram_wait = first - c;
        }
        break;
      }
      case Opcode::kStore: {
        dp.store(insn, *s.in.dram, index, s.counters);
        const uint64_t beats = transfer_beats(cfg, insn);
        if (beats == 0) {
          slot.end = c + kIssueCycles;
          slot.busy = kIssueCycles;
          slot.dram_wait = 0;
        } else {
          const uint64_t first = std::max(c, s.bus_free);
          s.bus_free = first + beats;
          const uint64_t latency = uint64_t(cfg.dram_latency);
          slot.end = first + beats + latency;
          slot.busy = beats;
          slot.dram_wait = (first - c) + latency;
        }
        break;
      }
      case Opcode::kGemm:
      case Opcode::kAlu: {
        if (insn.opcode == Opcode::kGemm) {
          dp.gemm(insn, index, s.counters);
        } else {
          dp.alu(insn, index, s.counters);
        }
        const uint64_t n = compute_cycles(insn);
        slot.end = c + n;
        slot.busy = n;
        slot.dram_wait = 0;
        break;
      }
      case Opcode::kFinish:
        slot.end = c + kIssueCycles;
        slot.busy = kIssueCycles;
        slot.dram_wait = 0;
        break;
    }
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
        memory_("memory", ch) {}

  Channels ch;

 private:
  FetchUnit fetch_;
  ExecUnit load_;
  ExecUnit compute_;
  ExecUnit store_;
  MemoryUnit memory_;
};

std::mutex& engine_mutex() {
  static std::mutex m;
  return m;
}

/// The process-wide model, elaborated on first use (caller holds engine_mutex()). Never
/// destroyed: SystemC objects must outlive the kernel.
Top& top() {
  static Top* t = [] {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_DO_NOTHING);
    Top* p = new Top("tessel_cycle");
    // Run the initialisation phase: every thread reaches its idle wait on `start`.
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    return p;
  }();
  return *t;
}

std::string describe_unit(const RunState& s, int u, uint64_t base) {
  const UnitState& us = s.unit[u];
  const std::string name = unit_name(u);
  auto insn = [&] { return fmt::format("instruction {} ({})", us.insn, describe(us.insn_body)); };
  switch (us.wait) {
    case Wait::kIdle:
      return name + (u == kFetchUnit ? " has not started" : " is idle (command queue empty)");
    case Wait::kCommand:
      return fmt::format("{} waits for {} to reach its command queue", name, insn());
    case Wait::kTokenPop:
      return fmt::format("{} waits to pop token queue {} (empty) for {}", name,
                         token_name(TokenQueue(us.queue)), insn());
    case Wait::kTokenSpace:
      return fmt::format("{} waits to push into token queue {} (full, depth {}) for {}", name,
                         token_name(TokenQueue(us.queue)), s.in.cfg->token_queue_depth, insn());
    case Wait::kQueueSpace:
      return fmt::format("fetch waits to dispatch {} into the {} command queue (full, depth {})",
                         insn(), unit_name(unit_of(Module(us.queue))),
                         s.in.cfg->cmd_queue_depth);
    case Wait::kExecute:
      if (u == kFetchUnit) {
        return fmt::format("fetch reads or dispatches instructions from index {}", us.insn);
      }
      return fmt::format("{} executes {} until cycle {}", name, insn(),
                         us.until >= base ? us.until - base : 0);
    case Wait::kDrain:
      return fmt::format(
          "compute waits for load ({} instruction(s) left) and store ({} left) to complete "
          "before {}",
          s.dispatched[int(Module::kLoad)] - s.completed[int(Module::kLoad)],
          s.dispatched[int(Module::kStore)] - s.completed[int(Module::kStore)], insn());
    case Wait::kDone:
      return fmt::format("fetch has dispatched every instruction up to finish (instruction {})",
                         us.insn);
  }
  return name;
}

std::string describe_units(const RunState& s, uint64_t base) {
  std::string out;
  for (int u = 0; u < kNumUnits; ++u) {
    if (!out.empty()) out += "; ";
    out += describe_unit(s, u, base);
  }
  return out;
}

}  // namespace

RunStats run_on_engine(const RunInput& in) {
  std::lock_guard<std::mutex> lock(engine_mutex());
  Top& t = top();
  Channels& ch = t.ch;
  RunState s(in);

  const uint64_t now_raw = sc_core::sc_time_stamp().value();
  s.base = now_raw / kRawPerCycle + 1;
  s.bus_free = s.base;
  const uint64_t max_raw = ~uint64_t(0) / 2;
  if (in.cycle_limit > max_raw / kRawPerCycle - s.base) {
    throw UserError(fmt::format("cycle limit {} is too large for the simulation time range",
                                in.cycle_limit));
  }
  ch.rs = &s;
  ch.start.notify(raw(s.base * kRawPerCycle - now_raw));
  const uint64_t limit_raw = (s.base + in.cycle_limit) * kRawPerCycle;
  try {
    sc_core::sc_start(raw(limit_raw - now_raw), sc_core::SC_EXIT_ON_STARVATION);
  } catch (const sc_core::sc_report& r) {
    ch.rs = nullptr;
    throw_internal_error("the SystemC kernel failed during a cycle run: {}", r.what());
  }

  std::exception_ptr error = s.error;
  if (!error && !s.done) {
    const uint64_t at = now_cycle() >= s.base ? now_cycle() - s.base : 0;
    const std::string units = describe_units(s, s.base);
    if (sc_core::sc_pending_activity()) {
      error = std::make_exception_ptr(SimError(fmt::format(
          "run stopped at the cycle limit of {} cycles: {}", in.cycle_limit, units)));
    } else {
      error = std::make_exception_ptr(SimError(
          fmt::format("deadlock at cycle {}: no module can make progress: {}", at, units)));
    }
  }
  if (!error) {
    for (int q = 0; q < 4; ++q) {
      if (!s.tok[q].empty()) {
        error = std::make_exception_ptr(SimError(fmt::format(
            "compute module: insn {} (FINISH): token queue {} holds {} token(s) at finish (every "
            "dependency token must be popped before FINISH)",
            s.finish_index, token_name(TokenQueue(q)), s.tok[q].count())));
        break;
      }
    }
  }

  // Unwind every thread to its idle wait, so the next run starts clean.
  abort_run(ch);
  try {
    sc_core::sc_start();
  } catch (const sc_core::sc_report& r) {
    ch.rs = nullptr;
    throw_internal_error("the SystemC kernel failed ending a cycle run: {}", r.what());
  }
  ch.rs = nullptr;

  if (error) std::rethrow_exception(error);
  RunStats r;
  r.cycles = s.end_cycle - s.base;
  r.counters = s.counters;
  r.fetch = s.stats[kFetchUnit];
  r.load = s.stats[unit_of(Module::kLoad)];
  r.compute = s.stats[unit_of(Module::kCompute)];
  r.store = s.stats[unit_of(Module::kStore)];
  return r;
}

}  // namespace tessel::sim::cycle

/// libsystemc defines main() calling sc_main(); Tessel's programs have their own main(), but the
/// symbol must resolve when linking libsystemc. Weak, so a program may define its own; never
/// called by Tessel.
extern "C" __attribute__((weak)) int sc_main(int, char**) { return 0; }
