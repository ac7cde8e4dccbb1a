// Pass: unroll_loops (TVM's tir.transform.UnrollLoop, Halide's UnrollLoops). A loop
//   for i in [m, m + n) kind unrolled: body
// with a constant extent n becomes the sequence body[i := m], body[i := m + 1], ...,
// body[i := m + n - 1], each copy simplified (transforms/simplify.h) under the ranges of the
// enclosing loops, so constant indices fold and branches decided by the copy's value of i go
// away. Loops nested inside are unrolled first (an unrolled loop inside an unrolled loop gives
// n * m copies). Every copy after the first gets fresh binders (renew_defs.h), so the result stays
// single-assignment. An extent of 0 gives a no-op. The loop's min need not be constant.
//
// Optional auto-unroll: with UnrollOptions::max_auto_extent = k > 0, a serial loop that is
// innermost in the input (its body contains no loop) and whose extent is a constant <= k is
// unrolled too. Parallel, vectorized, thread-binding and virtual-thread loops are never unrolled.
//
// Errors (UserError): an unrolled loop whose extent is not a constant after simplification
// ("unroll: loop 'i' has non-constant extent n"); an unrolled loop with more than
// UnrollOptions::max_extent iterations. Copy-on-write: without loops to unroll the input handle
// is returned.
#pragma once

#include <cstdint>

#include "compiler/tir/arith/analyzer.h"
#include "compiler/tir/function.h"

namespace tessel::tir::transforms {

struct UnrollOptions {
  /// Innermost serial loops with a constant extent up to this are unrolled; 0: only loops of
  /// kind kUnrolled.
  int64_t max_auto_extent = 0;
  /// The most iterations an unrolled loop may have (guards against code-size explosions).
  int64_t max_extent = 4096;
};

/// `s` with its unrolled loops replaced by copies of their bodies, under the facts of `analyzer`
/// (left as it was on return).
Stmt unroll_loops(const Stmt& s, arith::Analyzer& analyzer, const UnrollOptions& options = {});
/// Statement form with a fresh Analyzer.
Stmt unroll_loops(const Stmt& s, const UnrollOptions& options = {});
/// The function with its body unrolled.
PrimFunc unroll_loops(const PrimFunc& f, const UnrollOptions& options = {});

}  // namespace tessel::tir::transforms
