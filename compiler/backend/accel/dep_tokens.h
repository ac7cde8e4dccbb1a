// Dependency-token insertion for an accelerator instruction stream (VTA's decoupled
// access-execute protocol, ../shared/reference/isa.md section 4), computed from the SRAM regions
// each instruction reads and writes rather than written by hand per operator.
//
// Algorithm: every instruction gets read/write regions (buffer + closed index interval, the hull of
// its rectangle or loop nest; OUT is the ACC index space; a LOAD writes its pad rows and
// columns too, so a pads-only LOAD, y_size 0 with pads, writes its pad rows, and x_size 0 is no
// access). For a consumer instruction i of module
// Q and each adjacent producer module P (load<->compute, compute<->store), j* = the latest
// earlier P instruction that conflicts with i (RAW, WAR or WAW on an overlapping region). If j* is
// later than the last P instruction Q already synchronised with, P pushes a token after j* and i
// pops it. Pushes therefore sit only where a later pop needs them, tokens of one queue are pushed
// and popped in the same order, and every dependency points backwards in program order, so the
// stream cannot deadlock. Finally the VTA-style ending is appended (load no-op pushing to
// compute, store no-op pushing to compute, compute no-op popping both, FINISH), so every token
// queue is empty at FINISH and FINISH waits for the last load and store.
#pragma once

#include <cstdint>
#include <vector>

#include "isa/config.h"
#include "isa/instruction.h"

namespace tessel::compiler::accel {

/// One SRAM access of an instruction: rows [lo, hi] (inclusive) of `buffer`.
struct SramRegion {
  isa::MemType buffer = isa::MemType::kInp;  ///< kUop, kInp, kWgt or kAcc (OUT reported as kAcc)
  int64_t lo = 0, hi = -1;
  bool overlaps(const SramRegion& o) const {
    return buffer == o.buffer && lo <= o.hi && o.lo <= hi;
  }
};

/// The regions one instruction reads and writes.
struct Access {
  std::vector<SramRegion> reads, writes;
};

/// Computes the SRAM accesses of every instruction of `insns`. GEMM/ALU regions need the micro-ops
/// in the UOP buffer, so LOAD UOP instructions are replayed from `dram_uops`, the micro-ops of
/// the DRAM image starting at element `uop_dram_base` (a LOAD UOP with dram_base d reads
/// dram_uops[d - uop_dram_base ...]). Throws UserError naming the instruction index when a LOAD
/// UOP reads outside `dram_uops` or a GEMM/ALU uses a micro-op never loaded.
std::vector<Access> compute_accesses(const std::vector<isa::Instruction>& insns,
                                     const isa::HwConfig& cfg,
                                     const std::vector<isa::Uop>& dram_uops,
                                     uint64_t uop_dram_base);

/// Sets the pop/push flags of `insns` (any existing flags are cleared first; `insns` must not
/// contain FINISH) and appends the ending described above (4 instructions). Arguments as
/// compute_accesses(); LOAD/STORE dram_base fields are image-relative element indices. Throws
/// UserError as compute_accesses() does, if `insns` contains a FINISH, or if a LOAD and a STORE
/// touch a common DRAM byte (ordering them would need a token chain through compute, which the
/// adjacent-module insertion does not build; one layer's Program never needs it), naming both
/// instructions and the bytes.
void insert_dependency_tokens(std::vector<isa::Instruction>& insns, const isa::HwConfig& cfg,
                              const std::vector<isa::Uop>& dram_uops, uint64_t uop_dram_base);

}  // namespace tessel::compiler::accel
