// Per-instruction timelines of the timed models (cycle, rtl) and their comparison, so two runs can
// be checked instruction by instruction (docs/microarchitecture.md: start cycle S and done cycle D
// of every instruction in every module; fetch's dispatch cycle).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "isa/instruction.h"

namespace tessel::sim {

/// When one instruction ran, in cycles from the start of its run (fetch's first request is in
/// cycle 0).
struct InsnTiming {
  uint32_t index = 0;         ///< position in the stream (0-based)
  isa::Module module = isa::Module::kCompute;
  isa::Opcode opcode = isa::Opcode::kFinish;
  uint64_t dispatch = 0;      ///< cycle fetch pushed it into its module's command queue
  uint64_t start = 0;         ///< S: cycle its command and tokens were popped
  uint64_t end = 0;           ///< D: cycle it completed (its tokens pushed in this cycle)
  bool operator==(const InsnTiming&) const = default;
};

/// The first point where two timelines disagree.
struct TimelineDivergence {
  uint32_t index = 0;          ///< instruction index
  std::string what;            ///< "dispatch", "start", "end", "module", "opcode" or "missing"
  uint64_t cycle = 0;          ///< the earlier of the two disagreeing cycles (for ordering)
  std::string message;         ///< one line naming the instruction, the module and both values
};

/// Sorts a timeline by instruction index (the order compare_timelines expects).
void sort_by_index(std::vector<InsnTiming>& timeline);

/// Compares two timelines of the same stream (`a_name`/`b_name` label them in the message, e.g.
/// "cycle" and "rtl"). Returns nullopt when every instruction has the same module, opcode,
/// dispatch, start and end cycle in both; otherwise the divergence with the smallest cycle (an
/// instruction present in only one timeline diverges at its dispatch cycle). Inputs in any order.
std::optional<TimelineDivergence> compare_timelines(std::vector<InsnTiming> a,
                                                    std::vector<InsnTiming> b,
                                                    const std::string& a_name,
                                                    const std::string& b_name);

}  // namespace tessel::sim
