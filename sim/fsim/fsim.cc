#include "sim/fsim/fsim.h"

#include <fmt/format.h>

#include <cstring>
#include <string>
#include <vector>

namespace tessel::sim {

using isa::Instruction;
using isa::Module;
using isa::Opcode;

namespace {

constexpr const char* kModuleName[3] = {"load", "compute", "store"};
constexpr const char* kTokenName[4] = {"l2g", "g2l", "g2s", "s2g"};

isa::HwConfig validated(const isa::HwConfig& cfg) {
  cfg.validate();
  return cfg;
}

}  // namespace

FunctionalSimulator::FunctionalSimulator(const isa::HwConfig& cfg, FsimSchedule schedule)
    : cfg_(validated(cfg)),
      schedule_(schedule),
      spec_(cfg_),
      datapath_(cfg_),
      cmd_{BoundedQueue<Cmd>(uint32_t(cfg_.cmd_queue_depth)),
           BoundedQueue<Cmd>(uint32_t(cfg_.cmd_queue_depth)),
           BoundedQueue<Cmd>(uint32_t(cfg_.cmd_queue_depth))},
      tokens_{TokenCounter(uint32_t(cfg_.token_queue_depth)),
              TokenCounter(uint32_t(cfg_.token_queue_depth)),
              TokenCounter(uint32_t(cfg_.token_queue_depth)),
              TokenCounter(uint32_t(cfg_.token_queue_depth))} {}

void FunctionalSimulator::clear_queues() {
  for (auto& q : cmd_) q.clear();
  for (auto& t : tokens_) t.clear();
}

RunStats FunctionalSimulator::run(Dram& dram, uint64_t insn_addr, uint32_t insn_count) {
  try {
    RunStats s = run_impl(dram, insn_addr, insn_count);
    clear_queues();
    return s;
  } catch (...) {
    clear_queues();
    datapath_.reset();
    throw;
  }
}

bool FunctionalSimulator::can_start(int m) const {
  const BoundedQueue<Cmd>& q = cmd_[m];
  if (q.empty()) return false;
  const Cmd& cmd = q.front();
  for (uint32_t k = 0; k < cmd.ports.n_pops; ++k) {
    if (tokens_[size_t(cmd.ports.pops[k])].empty()) return false;
  }
  for (uint32_t k = 0; k < cmd.ports.n_pushes; ++k) {
    if (tokens_[size_t(cmd.ports.pushes[k])].full()) return false;
  }
  if (cmd.insn.opcode == Opcode::kFinish &&
      !(cmd_[size_t(Module::kLoad)].empty() && cmd_[size_t(Module::kStore)].empty())) {
    return false;
  }
  return true;
}

std::string FunctionalSimulator::blocked_reason(int m) const {
  const Cmd& cmd = cmd_[m].front();
  std::vector<std::string> waits;
  for (uint32_t k = 0; k < cmd.ports.n_pops; ++k) {
    if (tokens_[size_t(cmd.ports.pops[k])].empty()) {
      waits.push_back(fmt::format("{} (empty)", kTokenName[size_t(cmd.ports.pops[k])]));
    }
  }
  for (uint32_t k = 0; k < cmd.ports.n_pushes; ++k) {
    const TokenCounter& t = tokens_[size_t(cmd.ports.pushes[k])];
    if (t.full()) {
      waits.push_back(fmt::format("{} (full, depth {})", kTokenName[size_t(cmd.ports.pushes[k])],
                                  t.capacity()));
    }
  }
  if (cmd.insn.opcode == Opcode::kFinish) {
    for (Module o : {Module::kLoad, Module::kStore}) {
      if (!cmd_[size_t(o)].empty()) {
        waits.push_back(fmt::format("the {} command queue to drain ({} left, head insn {})",
                                    kModuleName[size_t(o)], cmd_[size_t(o)].size(),
                                    cmd_[size_t(o)].front().index));
      }
    }
  }
  std::string joined;
  for (size_t i = 0; i < waits.size(); ++i) joined += (i ? " and " : "") + waits[i];
  return fmt::format("{} waits on {} at insn {} ({})", kModuleName[m], joined, cmd.index,
                     describe(cmd.insn));
}

bool FunctionalSimulator::execute(int m, Dram& dram, Counters& c) {
  const Cmd cmd = cmd_[m].front();
  cmd_[m].pop();
  for (uint32_t k = 0; k < cmd.ports.n_pops; ++k) tokens_[size_t(cmd.ports.pops[k])].pop();
  const Instruction& insn = cmd.insn;
  switch (insn.opcode) {
    case Opcode::kLoad: datapath_.load(insn, dram, cmd.index, c); break;
    case Opcode::kStore: datapath_.store(insn, dram, cmd.index, c); break;
    case Opcode::kGemm: datapath_.gemm(insn, cmd.index, c); break;
    case Opcode::kAlu: datapath_.alu(insn, cmd.index, c); break;
    case Opcode::kFinish: break;
  }
  for (uint32_t k = 0; k < cmd.ports.n_pushes; ++k) tokens_[size_t(cmd.ports.pushes[k])].push();
  ++c.insn_count;
  if (insn.opcode != Opcode::kFinish) return false;
  std::vector<std::string> left;
  for (size_t t = 0; t < tokens_.size(); ++t) {
    if (!tokens_[t].empty()) {
      left.push_back(fmt::format("{} holds {}", kTokenName[t], tokens_[t].count()));
    }
  }
  if (!left.empty()) {
    std::string joined;
    for (size_t i = 0; i < left.size(); ++i) joined += (i ? ", " : "") + left[i];
    throw SimError(fmt::format(
        "compute module: insn {} (FINISH): token queues not empty at finish: {} (every "
        "dependency token must be popped before FINISH)",
        cmd.index, joined));
  }
  return true;
}

RunStats FunctionalSimulator::run_impl(Dram& dram, uint64_t insn_addr, uint32_t insn_count) {
  if (insn_addr % 16 != 0) {
    throw SimError(
        fmt::format("fetch: instruction address {} is not a multiple of 16 bytes", insn_addr));
  }
  check_insn_stream(dram, insn_addr, insn_count);
  clear_queues();
  RunStats stats;
  Counters& c = stats.counters;
  uint32_t next = 0;            // next instruction fetch dispatches
  bool fetched_finish = false;  // fetch stops after dispatching FINISH
  bool have_pending = false;    // `pending` is decoded but its queue was full
  Cmd pending;
  const uint8_t* stream = dram.data() + insn_addr;
  const bool lockstep = schedule_ == FsimSchedule::kLockstep;
  static constexpr int kGreedyOrder[3] = {0, 1, 2};    // load, compute, store
  static constexpr int kLockstepOrder[3] = {2, 1, 0};  // store, compute, load
  const int* order = lockstep ? kLockstepOrder : kGreedyOrder;

  for (;;) {
    bool progress = false;
    // ---- fetch: dispatch in program order until a command queue is full ----
    while (!fetched_finish && next < insn_count) {
      if (!have_pending) {
        isa::EncodedInsn bits = isa::IsaSpec::from_bytes(stream + uint64_t(next) * 16);
        try {
          pending.insn = spec_.decode(bits);
        } catch (const UserError& e) {
          throw SimError(fmt::format("fetch: insn {} does not decode: {}", next, e.what()));
        }
        pending.index = next;
        pending.ports = token_ports(pending.insn, next);
        have_pending = true;
      }
      BoundedQueue<Cmd>& q = cmd_[size_t(pending.insn.module())];
      if (q.full()) break;
      q.push(pending);
      have_pending = false;
      fetched_finish = pending.insn.opcode == Opcode::kFinish;
      ++next;
      progress = true;
      if (lockstep) break;
    }
    // ---- modules, in a fixed order, each until it blocks ----
    for (int k = 0; k < 3; ++k) {
      const int m = order[k];
      while (can_start(m)) {
        progress = true;
        if (execute(m, dram, c)) return stats;
        if (lockstep) break;
      }
    }
    if (progress) continue;

    // ---- nothing can move: report why ----
    std::vector<std::string> blocked;
    for (int m = 0; m < 3; ++m) {
      if (!cmd_[m].empty()) blocked.push_back(blocked_reason(m));
    }
    if (have_pending) {
      const size_t qm = size_t(pending.insn.module());
      blocked.push_back(fmt::format("fetch waits on the {} command queue (full, depth {}) at insn "
                                    "{} ({})",
                                    kModuleName[qm], cmd_[qm].capacity(), pending.index,
                                    describe(pending.insn)));
    }
    if (blocked.empty()) {
      throw SimError(fmt::format(
          "fetch: the instruction stream of {} instructions ended without FINISH", insn_count));
    }
    std::string msg = "deadlock: ";
    for (size_t i = 0; i < blocked.size(); ++i) msg += (i ? "; " : "") + blocked[i];
    throw SimError(msg);
  }
}

std::unique_ptr<Simulator> make_fsim(const isa::HwConfig& cfg) {
  return std::make_unique<FunctionalSimulator>(cfg);
}

}  // namespace tessel::sim
