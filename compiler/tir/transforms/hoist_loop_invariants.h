// Pass: hoist_loop_invariants (loop-invariant code motion of whole statements, as TVM's
// HoistIfThenElse/HoistExpression do for conditions; here for loads of weights that every output
// row reuses). In a serial loop
//   for i in [m, m + n): { S1; S2; ...; Sk }
// a statement Sj of the body's top-level sequence moves in front of the loop when
//  - it does not use i (the only variable bound between it and the loop);
//  - it does not read a buffer the loop writes (its own writes included: B[0] = B[0] + 1 stays);
//  - no other statement of the loop writes a buffer it reads or writes;
//  - every other statement of the loop that reads a buffer it writes comes after it (so each
//    iteration's readers already saw its value);
//  - it contains no call of unknown effect (below);
//  - the loop provably runs at least once (n >= 1 under the enclosing loop ranges).
// Hoisted statements keep their order; hoisting repeats until nothing moves (a statement whose
// input the hoisted ones wrote can follow them), inner loops are processed first, so a statement
// invariant in several loops moves past all of them, and a loop left with an empty body
// disappears.
//
// Buffers read and written: BufferLoad and BufferStore, and, for calls, their tir.access_ptr
// arguments (intrinsics.h: data, offset, extent, rw mask; read = 1, write = 2), so intrinsic
// calls whose memory effects are all access_ptr regions (the accelerator's DMA loads and stores)
// count as pure reads and writes of those buffers and can be hoisted. A call that is not pure and
// has no access_ptr argument has unknown effects: it is never hoisted, and it may write buffers of
// the scopes in HoistOptions::opaque_call_scopes (default: the accumulator, which GEMM and ALU
// micro-op calls write without naming it), so a statement reading or writing a buffer of those
// scopes does not leave a loop that contains such a call; nor does one touching a buffer whose
// scope the pass cannot see (one named only by access_ptr: the PrimFunc form knows its buffer
// map and allocations, the statement form only the buffers loads, stores and allocations name).
// Other memory is assumed untouched by calls of unknown effect.
//
// Preconditions: a well-formed statement. No errors. Copy-on-write: when nothing moves the
// input handle is returned.
#pragma once

#include <set>

#include "compiler/tir/arith/analyzer.h"
#include "compiler/tir/function.h"

namespace tessel::tir::transforms {

struct HoistOptions {
  /// Scopes that calls of unknown effect may write.
  std::set<MemScope> opaque_call_scopes{MemScope::kAcc};
};

/// `s` with loop-invariant statements hoisted, under the facts of `analyzer` (left as it was).
Stmt hoist_loop_invariants(const Stmt& s, arith::Analyzer& analyzer, const HoistOptions& options = {});
/// Statement form with a fresh Analyzer.
Stmt hoist_loop_invariants(const Stmt& s, const HoistOptions& options = {});
/// The function with its body's invariants hoisted.
PrimFunc hoist_loop_invariants(const PrimFunc& f, const HoistOptions& options = {});

}  // namespace tessel::tir::transforms
