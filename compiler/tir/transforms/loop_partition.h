// Pass: loop_partition (TVM's LoopPartition, Halide's PartitionLoops). A serial loop
//   for i in [m, m + e): ... if (likely(cond)) { A } else { B } ...
// whose `cond` (after simplification) is a comparison <, <=, > or >= linear in i with a constant
// coefficient, and whose other part has constant bounds under the enclosing and inner loops, is
// split at the constant points where cond becomes provably true:
//   for i in [m, L): body          (prologue: cond may be false)
//   for i in [L, H]: body with the if replaced by A   (cond provably true)
//   for i in (H, m + e): body      (epilogue)
// The same split is made at a min(a, b) or max(a, b) in the range of a loop inside (a tile's
// clipped extent min(f, E - i * f), as bound inference leaves it for a split that does not
// divide: the last tile is smaller) when a <= b (a >= b for max), or b <= a, is such a
// comparison and holds on a proper sub-range of the loop: every piece then simplifies the min
// away (the last tile's loops get constant extents). Empty pieces are dropped; each piece is simplified (transforms/simplify.h), so a one-iteration
// piece loses its loop and branches decided by the piece's range disappear, and is partitioned
// again (border tiles of nested loops become their own loops). The prologue and epilogue get
// fresh loop variables (the IR stays single-assignment). Loops with non-constant min or extent,
// or without such a condition, are left as they are (their bodies are still visited).
#pragma once

#include "compiler/tir/arith/analyzer.h"
#include "compiler/tir/function.h"

namespace tessel::tir::transforms {

/// The function with its serial loops partitioned at likely() conditions (see above).
PrimFunc loop_partition(const PrimFunc& f);
/// Statement form, under the facts of `analyzer` (left as it was on return).
Stmt loop_partition(const Stmt& s, arith::Analyzer& analyzer);

}  // namespace tessel::tir::transforms
