// The stream verifier: checks a Program before anything runs it, so that an illegal stream is a
// UserError naming the instruction instead of a simulator crash, hang or wrong answer.
// Rules (../shared/reference/isa.md sections 2-4):
//  - config: the Program's HwConfig is valid (HwConfig::validate).
//  - fields: every instruction and micro-op encodes (values fit their fields, enums known).
//  - mem-type: STORE only from OUT; LOAD of OUT is illegal.
//  - pad: pads on UOP/WGT loads and on STOREs are illegal.
//  - deps: the load module must not pop_prev/push_prev, the store module must not
//    pop_next/push_next (it has no such neighbour).
//  - token-balance: per token queue, pushes == pops over the whole stream.
//  - deadlock: an abstract, deterministic, in-order execution of fetch and the three modules with
//    the configured command-queue and token-queue depths (pops before an instruction, pushes after
//    it, a push to a full queue waits) runs every instruction to completion.
//  - finish: the stream ends with FINISH, has no other FINISH, and no token queue holds a token
//    when FINISH completes. FINISH starts once load and store have completed every instruction
//    (docs/microarchitecture.md section 4), and the deadlock check models that wait.
//  - sram-bounds: every LOAD/STORE rectangle (pads included) and every GEMM/ALU loop nest stays
//    inside its scratchpad; uop_end <= the uop buffer depth. Loop nests are bounded using the
//    micro-ops in the uop buffer at that point of the stream, tracked from the LOAD UOP
//    instructions and the micro-ops encoded in the Program image.
//  - dram-bounds: every LOAD/STORE touches only bytes of the Program image (optional).
//  - uop: micro-ops used by GEMM/ALU were loaded; uop_bgn <= uop_end; the Program's uop table
//    matches its "uop" segment.
//  - race: every two accesses of different modules to the same row of a shared scratchpad, at
//    least one of them a write, are ordered by happens-before. Shared scratchpads and their rows
//    (as sim/common/datapath.cc accesses them):
//      INP, WGT  written by the load module (LOAD INP/WGT: every row of the rectangle, pad rows
//                included), read by compute (GEMM without reset_reg: rows uop.src + nest offset
//                and uop.wgt + nest offset of every iteration, using the micro-ops resident in
//                the uop buffer when it runs);
//      OUT       written by compute (GEMM and ALU: rows uop.dst + nest offset, reset GEMMs
//                included; LOAD ACC/ACC_8BIT: every row of the rectangle, pads included), read
//                by the store module (STORE: rows sram_base .. sram_base + y_size*x_size - 1).
//    UOP and ACC are accessed by compute only, so they cannot race. Happens-before is the
//    transitive closure of (a) program order within a module, (b) token edges: the k-th push
//    into a token queue (after its instruction completes) happens before the k-th pop from it
//    (before its instruction starts), and (c) FINISH after every load and store instruction
//    (FINISH accesses no scratchpad, so (c) orders nothing the rule checks). Ordering may be
//    transitive through the third module. Checked with 3-entry vector clocks (load, compute,
//    store) along the abstract execution of the deadlock rule: it retires instructions in an
//    order consistent with happens-before, so whether a stream has a race does not depend on the
//    queue depths (which unordered pair is reported may); a stream that deadlocks is checked up
//    to the deadlock. Per row the last writer and the last reader of each module are kept; a
//    GEMM/ALU is checked on the distinct rows its loop nest touches, computed once per distinct
//    nest (micro-op range and loop fields) between LOAD UOPs without walking every iteration, so
//    the cost is proportional to the rows touched (about 0.1-1.4 ms per ResNet-18 layer on top
//    of the other rules, measured with the default configuration). One diagnostic per
//    racing instruction (the one named first, whose access the abstract execution retires
//    second), for its conflict on the lowest scratchpad (inp, wgt, out), then lowest row, e.g.
//    "insn 7 (compute GEMM) reads inp row 12 written by insn 9 (load LOAD INP) with no dependency
//    token ordering them: add a push/pop between load and compute".
//    Out of scope: DRAM races (a STORE and a LOAD of the same DRAM bytes with no ordering) are
//    not checked; ordering those is the stream author's responsibility.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "isa/program.h"

namespace tessel::isa {

/// The rule a diagnostic comes from (see the list above).
enum class VerifyRule : uint8_t {
  kConfig,
  kFields,
  kMemType,
  kPad,
  kDeps,
  kTokenBalance,
  kDeadlock,
  kFinish,
  kSramBounds,
  kDramBounds,
  kUop,
  kRace,
};
/// "config", "fields", "mem-type", "pad", "deps", "token-balance", "deadlock", "finish",
/// "sram-bounds", "dram-bounds", "uop", "race".
std::string_view to_string(VerifyRule r);

struct VerifyOptions {
  /// Check that every LOAD/STORE lies inside the Program image (dram_base is image-relative, in
  /// elements of the memory type). Turn off for streams whose DRAM is laid out elsewhere.
  bool check_dram_bounds = true;
};

/// One problem found by the verifier.
struct Diagnostic {
  VerifyRule rule = VerifyRule::kFields;
  std::optional<size_t> insn;  ///< index into Program::insns, when the problem has one
  std::string message;         ///< e.g. "insn 12 (GEMM): acc index 2050 out of range 0..2047"
};

/// Runs every rule and returns all problems, sorted by instruction index (stream-wide problems,
/// which have no index, last). Empty means the Program is legal. If the config is invalid, the
/// only diagnostic is that (nothing else can be checked). Does not throw UserError.
std::vector<Diagnostic> check_program(const Program& p, const VerifyOptions& opt = {});

/// Throws UserError with the first diagnostic's message (plus how many more there are) if
/// check_program() finds anything.
void verify(const Program& p, const VerifyOptions& opt = {});

/// "GEMM", "LOAD INP", "ALU ADD", ...: how diagnostics name an instruction.
std::string describe_insn(const Instruction& insn);

}  // namespace tessel::isa
