// The schedule cost model of the accelerator backend: the cycles of an emitted instruction stream,
// computed from the stream itself by the timing rules of docs/microarchitecture.md (fetch bursts
// and dispatch into the command queues, the three modules running in order, the dependency token
// queues, the memory arbiter and the DRAM data bus, the per-instruction durations of isa/timing.h).
// One model of the stream, with no knowledge of how the lowering produced it, so it stays right
// when the passes change. It includes and links no simulator (the compiler may not: see
// scripts/check_layering.py); it follows the same rules as the cycle model (sim/cycle), as a plain
// queue walk.
#pragma once

#include <cstdint>
#include <vector>

#include "isa/config.h"
#include "isa/instruction.h"
#include "isa/program.h"

namespace tessel::compiler::accel {

/// Cycles of one run of `insns` on `cfg` (its run-time settings too: DRAM latency, command and
/// token queue depths), from fetch's first request to FINISH: the cycle in which FINISH is done
/// plus one, the definition of RunStats::cycles (docs/microarchitecture.md section 1).
///
/// DRAM addresses (LOAD/STORE dram_base) are taken as they are; the instruction stream is taken
/// to start at byte address `insn_addr` (16-byte aligned). Only the offsets of both within a bus
/// word matter, so a Program placed at kImageAlign-aligned addresses (as the runtime and
/// sim::load_program place it) gives the same result with image-relative dram_base values and
/// insn_addr = 0.
///
/// Linear in the instructions and the rows their LOADs/STOREs move (millions of instructions a
/// second). Throws UserError when `insn_addr` is not 16-byte aligned, when the stream has no
/// FINISH, when an instruction uses a dependency flag its module does not have (load: pop_prev,
/// push_prev; store: pop_next, push_next), or when the stream deadlocks (a module waits on a token
/// that is never pushed, or on room that is never freed); the message names the instruction.
/// Instruction semantics (scratchpad ranges and the like) are not checked: isa::verify does that.
uint64_t estimate_cycles(const isa::HwConfig& cfg, const std::vector<isa::Instruction>& insns,
                         uint64_t insn_addr = 0);

/// estimate_cycles(prog.config, prog.insns): the cycles of a Program as the runtime runs it.
uint64_t estimate_cycles(const isa::Program& prog);

}  // namespace tessel::compiler::accel
