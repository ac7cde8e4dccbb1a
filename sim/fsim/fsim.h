// fsim: Tessel's functional simulator, the golden model. Bit-exact, deterministic and fast; it
// models the three modules (load, compute, store), the fetch unit, the bounded command and
// dependency-token queues and the scratchpads, but no time (RunStats::cycles is 0).
//
// Execution model (../shared/reference/isa.md section 4, sim/common/queues.h):
//  - fetch reads instruction i from DRAM at insn_addr + 16*i when it dispatches it, decodes it
//    (IsaSpec) and, in program order, appends it to the command queue of its module
//    (cmd_queue_depth entries each); it blocks while that queue is full and stops after FINISH.
//  - a module starts the instruction at the head of its queue when every token it pops is there
//    and every token queue it pushes has room (token_queue_depth); pops happen before the
//    instruction executes, pushes after.
//  - scheduling is deterministic. The default (FsimSchedule::kGreedy): each round, fetch
//    dispatches as far as it can, then load, compute and store (in that order) each execute
//    instructions until they block. FsimSchedule::kLockstep (for tests): each round, fetch
//    dispatches at most one instruction and store, compute, load (in that order) execute at most
//    one each, so the modules interleave differently. A race-free Program (every SRAM/DRAM
//    hand-over ordered by dependency tokens) gives the same results under both.
//  - FINISH (compute) waits until the load and store command queues are empty, then pops/pushes
//    its own tokens; afterwards every token queue must be empty.
//  - when no unit can progress the run fails with a SimError listing every blocked unit, the
//    queue it waits on and the instruction index, e.g. "deadlock: load waits on g2l (empty) at
//    insn 4 (LOAD INP); compute waits on l2g (empty) at insn 7 (GEMM)".
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "isa/config.h"
#include "isa/spec.h"
#include "sim/common/datapath.h"
#include "sim/common/queues.h"
#include "sim/common/simulator.h"

namespace tessel::sim {

/// How fsim interleaves fetch and the three modules (see the file comment).
enum class FsimSchedule : uint8_t { kGreedy = 0, kLockstep = 1 };

/// The functional simulator. make_fsim() returns one as a Simulator; tests and tools that want
/// to inspect the scratchpads construct it directly.
class FunctionalSimulator final : public Simulator {
 public:
  /// Validates `cfg` (UserError on an impossible configuration) and powers on with zeroed
  /// scratchpads.
  explicit FunctionalSimulator(const isa::HwConfig& cfg,
                               FsimSchedule schedule = FsimSchedule::kGreedy);
  std::string name() const override { return "fsim"; }
  /// See Simulator::run. Errors (all SimError): insn_addr not 16-byte aligned or the stream
  /// outside DRAM, an instruction that does not decode, illegal dependency flags for the module,
  /// any datapath error (sim/common/datapath.h), a deadlock, tokens left at FINISH, a stream with
  /// no FINISH. After an error the queues, tokens and scratchpads are reset.
  RunStats run(Dram& dram, uint64_t insn_addr, uint32_t insn_count) override;
  /// The scratchpads as the last run left them.
  const Datapath& datapath() const { return datapath_; }
  const isa::HwConfig& config() const { return cfg_; }

 private:
  struct Cmd {
    isa::Instruction insn;
    uint32_t index = 0;
    TokenPorts ports;
  };
  RunStats run_impl(Dram& dram, uint64_t insn_addr, uint32_t insn_count);
  /// Whether module `m` can start the command at its queue head now.
  bool can_start(int m) const;
  /// Executes the head command of module m; returns true if it was FINISH.
  bool execute(int m, Dram& dram, Counters& c);
  std::string blocked_reason(int m) const;
  void clear_queues();

  isa::HwConfig cfg_;
  FsimSchedule schedule_;
  isa::IsaSpec spec_;
  Datapath datapath_;
  std::array<BoundedQueue<Cmd>, 3> cmd_;       ///< indexed by isa::Module
  std::array<TokenCounter, 4> tokens_;         ///< indexed by isa::TokenQueue
};

}  // namespace tessel::sim
