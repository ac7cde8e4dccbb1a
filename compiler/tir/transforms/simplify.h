// Pass: simplify (TVM's tir.transform.Simplify, Halide's Simplify on statements). Every
// expression is rewritten by arith::Analyzer::simplify with the facts in scope:
//  - each loop variable is bound to its range [min, min + extent) inside its body;
//  - a LetStmt variable is bound to the bounds of its value inside its body;
//  - inside the branches of `if (v < c)` (also <=, >, >=, with v a variable and c a constant,
//    optionally wrapped in likely()) the then-branch knows the condition and the else-branch its
//    negation.
// Statements: a loop of extent 0 is removed; a serial, parallel, unrolled or vectorized loop of
// extent 1 is replaced by its body with the loop variable replaced by min (thread-binding and
// virtual-thread loops are kept); an If with a constant condition (or likely(constant)) becomes
// the branch taken (nothing when there is no else); a loop or If whose body became a no-op is
// removed; no-ops are dropped from sequences. Copy-on-write: an unchanged statement is returned
// as the same handle.
#pragma once

#include "compiler/tir/arith/analyzer.h"
#include "compiler/tir/function.h"

namespace tessel::tir::transforms {

/// The function with its body simplified (a fresh Analyzer; parameters carry no facts).
PrimFunc simplify(const PrimFunc& f);
/// `s` simplified under the facts already in `analyzer` (which is left as it was on return).
Stmt simplify(const Stmt& s, arith::Analyzer& analyzer);

}  // namespace tessel::tir::transforms
