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
//    the configured command-queue and token-queue depths runs every instruction to completion.
//    As in fsim and the cycle model (sim/common/queues.h), a module starts its head instruction
//    only when every token queue it pops holds a token and every token queue it pushes holds
//    fewer than TOKEN_QUEUE_DEPTH tokens (its own pops do not make that room); pops are taken at
//    the start, pushes after the instruction. Every queue has one producer and one consumer, so
//    these start conditions are monotone and the verdict does not depend on the interleaving:
//    a stream is rejected here exactly when fsim and the cycle model report a deadlock with the
//    same depths (tests/compiler/test_queue_depth_agreement.cc). The message names each blocked
//    module, its instruction, the queue and, for a full one, TOKEN_QUEUE_DEPTH.
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
//  - race: every two accesses of different modules to the same row of a shared scratchpad, or
//    to the same DRAM byte, at least one of them a write, are ordered by happens-before. Shared
//    scratchpads and their rows (as sim/common/datapath.cc accesses them):
//      INP, WGT  written by the load module (LOAD INP/WGT: every row of the rectangle, pad rows
//                included), read by compute (GEMM without reset_reg: rows uop.src + nest offset
//                and uop.wgt + nest offset of every iteration, using the micro-ops resident in
//                the uop buffer when it runs);
//      OUT       written by compute (GEMM and ALU: rows uop.dst + nest offset, reset GEMMs
//                included; LOAD ACC/ACC_8BIT: every row of the rectangle, pads included), read
//                by the store module (STORE: rows sram_base .. sram_base + y_size*x_size - 1).
//    UOP and ACC are accessed by compute only, so they cannot race. DRAM is written by the store
//    module only (STORE OUT) and read by the load module (LOAD INP, WGT) and by compute (LOAD
//    UOP, ACC, ACC_8BIT); a LOAD or STORE touches the bytes of y_size rows
//    [(dram_base + r*x_stride) * E, (dram_base + r*x_stride + x_size) * E), r < y_size, with E =
//    dram_elem_bytes(config, memory type) (pads are not DRAM bytes; x_size 0 or y_size 0
//    touches none). Addresses are compared image-relative, as dram_base is in a Program: the
//    runtime places the image contiguously, so two footprints overlap on the device iff they
//    overlap here. The store module is in order, so two STOREs never race; a STORE and a LOAD
//    race when they share a byte (read-after-write or write-after-read) unordered.
//    Happens-before is the transitive closure of (a) program order within a module, (b) token
//    edges: the k-th push into a token queue (after its instruction completes) happens before the
//    k-th pop from it (before its instruction starts), and (c) FINISH after every load and store
//    instruction (FINISH accesses no memory, so (c) orders nothing the rule checks). Ordering may
//    be transitive through the third module (a STORE before a LOAD INP needs store -> s2g ->
//    compute -> g2l -> load). Checked with 3-entry vector clocks (load, compute, store) along the
//    abstract execution of the deadlock rule: it retires instructions in an order consistent with
//    happens-before, so whether a stream has a race does not depend on the queue depths (which
//    unordered pair is reported may); a stream that deadlocks is checked up to the deadlock. Per
//    scratchpad row the last writer and the last reader of each module are kept; a GEMM/ALU is
//    checked on the distinct rows its loop nest touches, computed once per distinct nest
//    (micro-op range and loop fields) between LOAD UOPs without walking every iteration, so the
//    cost is proportional to the rows touched. For DRAM the retired STOREs not yet ordered before
//    both the load and the compute module, and the retired LOADs not yet ordered before the store
//    module, are kept (ordered ones are dropped: in a pipelined stream only the few in flight
//    remain, at most 64 in the compiled ResNet-18 layers); a retiring LOAD (STORE) is compared
//    with those STOREs (LOADs) only when it meets the union extent of every STORE's (LOAD's)
//    bytes so far, each by its extent [first byte, last byte + 1), and byte-exactly, row by row,
//    only for an unordered pair whose extents overlap (none in the compiled Programs, whose
//    footprints each lie in one segment, no segment both loaded and stored). The whole rule costs about 0.1-1.4 ms per ResNet-18 layer on top of
//    the other rules, 0.01-0.1 ms of it for DRAM, measured with the default configuration.
//    One diagnostic per instruction whose retirement (second of an unordered pair in the abstract
//    execution) finds a conflict, for its conflict on the lowest scratchpad (inp, wgt, out), then
//    lowest row, DRAM last (lowest first common byte range, [first, end) in image bytes). The
//    message names the pair in stream order, the later instruction first (the diagnostic is
//    attached to it), and the fix orders the earlier instruction's module before the later's:
//    read-after-write "insn 9 (compute GEMM) reads inp row 12 that insn 7 (load LOAD INP) writes,
//    with no dependency token ordering them: add a push/pop from load to compute";
//    write-after-read "insn 9 (store STORE OUT) writes dram bytes [768, 784) that insn 5 (load
//    LOAD INP) reads earlier, with no dependency token ordering them: add a push/pop chain from
//    load to store" ("chain" when the two modules are load and store, which no queue joins).
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

/// True when `d` is non-empty and every diagnostic is a deadlock (VerifyRule::kDeadlock): the
/// stream is legal but does not fit the configured queue depths.
bool only_deadlocks(const std::vector<Diagnostic>& d);

/// Throws UserError with the first diagnostic's message (plus how many more there are) if
/// check_program() finds anything.
void verify(const Program& p, const VerifyOptions& opt = {});

/// "GEMM", "LOAD INP", "ALU ADD", ...: how diagnostics name an instruction.
std::string describe_insn(const Instruction& insn);

}  // namespace tessel::isa
