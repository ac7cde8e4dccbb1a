// tessel_testgen: seeded random Programs for simulator tests (fsim unit tests, fsim vs cycle vs
// rtl conformance). For ANY valid HwConfig the generated Program
//  - is accepted by the stream verifier and follows the dependency-token protocol of
//    ../shared/reference/isa.md section 4: every pop has a matching earlier push in program order,
//    every token is popped before FINISH, at most min(regions, token_queue_depth) tokens are ever
//    outstanding per queue, so it never deadlocks for any command/token queue depth >= 1;
//  - keeps every SRAM index in bounds after the loop nest, and every DRAM access inside its
//    segment;
//  - is race-free: load writes an INP/WGT region only after compute released it (g2l), compute
//    reads it only after load filled it (l2g), store reads an OUT region only after compute
//    finished it (g2s) and compute rewrites it only after store drained it (s2g); loads never
//    read the segment that stores write. So every correct model, whatever its timing, produces
//    the same DRAM bytes;
//  - is self-contained: it starts by resetting all of ACC (and so OUT) and reads only SRAM rows it
//    wrote itself, so results do not depend on what a previous run left in the scratchpads.
//
// Shape of the Program: a prologue (compute: LOAD UOP of one zero uop, GEMM reset of every ACC
// row), then `blocks` rounds; round b uses INP/WGT region b % R and ACC/OUT region b % S
// (R = S = regions, clamped to the buffer depths and the token queue depth):
//   load:    LOAD INP (pads optional) [+ extra INP loads], LOAD WGT; pops g2l from round R on,
//            pushes l2g on its last instruction;
//   compute: LOAD UOP of this round's micro-ops, optional LOAD ACC / ACC_8BIT (pads optional),
//            GEMMs (some with reset_reg), ALU ops (all five, immediate and vector forms); pops l2g
//            (and s2g from round S on) first, pushes g2l and g2s last;
//   store:   STOREs of OUT rows of the region to the "out" segment; pops g2s, pushes s2g;
//   optional zero-size instructions (x_size 0, no flags) sprinkled in every module;
// and an epilogue: load pops the remaining g2l tokens and compute the remaining s2g tokens with
// zero-size instructions, then FINISH.
//
// Segments (names, kinds): "uop" kConst (encoded micro-ops), "inp" kInput (random int8),
// "wgt" kConst (random int8), "acc" kConst (random int32), "acc8" kConst (random int8),
// "out" kOutput (zero). The generator is deterministic: the same (config, seed, options) give a
// byte-identical Program on every platform (it uses its own splitmix64, not <random>
// distributions).
#pragma once

#include <cstdint>

#include "isa/config.h"
#include "isa/program.h"

namespace tessel::testgen {

/// What a random Program contains. Every count is an upper bound the generator may lower to fit
/// the configuration's buffers.
struct RandomProgramOptions {
  /// Number of load -> compute -> store rounds (>= 1). The Program has roughly 8-20 instructions
  /// per round plus 3 + 2*regions for the prologue and epilogue.
  uint32_t blocks = 8;
  /// Buffer regions = rounds that may be in flight at once, i.e. tokens outstanding per queue
  /// (queue pressure). 2 is double buffering; large values (e.g. 64) let the load module run far
  /// ahead and fill the l2g queue. Clamped to [1, min(token_queue_depth, INP/WGT/ACC depth)].
  uint32_t regions = 2;
  // ---- instruction kinds ----
  bool gemm = true;        ///< GEMM instructions (with and without reset_reg)
  bool alu = true;         ///< ALU instructions (MIN, MAX, ADD, SHR, MUL; imm and vector)
  bool acc_load = true;    ///< LOAD ACC (int32 from DRAM)
  bool acc8_load = true;   ///< LOAD ACC_8BIT (int8 sign-extended)
  bool padding = true;     ///< pads on INP/ACC/ACC_8BIT loads
  bool zero_size = true;   ///< extra zero-size (token-only / no-op) instructions
  bool extra_loads = true; ///< more than one INP load per round
  // ---- sizes ----
  uint32_t max_iter = 4;       ///< iter_out and iter_in of GEMM/ALU are in [1, max_iter] (<= 64)
  uint32_t max_uops = 8;       ///< micro-ops per GEMM/ALU instruction, in [1, max_uops]
  uint32_t max_gemms = 3;      ///< GEMM instructions per round, in [1, max_gemms] (0: none)
  uint32_t max_alus = 3;       ///< ALU instructions per round, in [1, max_alus] (0: none)
  uint32_t max_pad = 3;        ///< each pad in [0, max_pad] (<= 15) when padding
  uint32_t max_x_size = 16;    ///< elements per loaded/stored row (<= 64)
  uint32_t max_y_size = 8;     ///< rows per load/store (<= 64)
};

/// Generates a random Program for `cfg`. Throws UserError on an impossible config
/// (HwConfig::validate) or on options out of range: blocks, regions, max_iter, max_uops,
/// max_x_size or max_y_size 0; max_pad > 15; max_iter, max_x_size or max_y_size > 64.
/// The Program's config is `cfg`, its name "random_<seed>"; Program::uops lists every micro-op of
/// the "uop" segment in order.
isa::Program random_program(const isa::HwConfig& cfg, uint64_t seed,
                            const RandomProgramOptions& options = {});

}  // namespace tessel::testgen
