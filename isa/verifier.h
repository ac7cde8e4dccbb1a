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
//  - finish: the stream ends with FINISH, has no other FINISH, and FINISH cannot complete while
//    the load or store module still has work or a token queue is non-empty (checked on the
//    schedule that runs compute as early as possible).
//  - sram-bounds: every LOAD/STORE rectangle (pads included) and every GEMM/ALU loop nest stays
//    inside its scratchpad; uop_end <= the uop buffer depth. Loop nests are bounded using the
//    micro-ops in the uop buffer at that point of the stream, tracked from the LOAD UOP
//    instructions and the micro-ops encoded in the Program image.
//  - dram-bounds: every LOAD/STORE touches only bytes of the Program image (optional).
//  - uop: micro-ops used by GEMM/ALU were loaded; uop_bgn <= uop_end; the Program's uop table
//    matches its "uop" segment.
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
};
/// "config", "fields", "mem-type", "pad", "deps", "token-balance", "deadlock", "finish",
/// "sram-bounds", "dram-bounds", "uop".
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
