// Private to compiler/tir/arith: the state behind Analyzer and the helpers its parts share
// (bound analysis in const_int_bound.cc, the simplifier in simplify.cc, canonical sums).
#pragma once

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "compiler/tir/arith/analyzer.h"

namespace tessel::tir::arith {

/// Saturating interval helpers on ConstIntBound ends (kNegInf/kPosInf are infinities).
namespace bound_ops {
/// a + b, saturating; an infinite operand gives that infinity (kNegInf wins on a tie for a
/// lower end, kPosInf for an upper end: `lower` selects which).
int64_t add(int64_t a, int64_t b, bool lower);
/// a * b, saturating; 0 * infinity = 0.
int64_t mul(int64_t a, int64_t b);
/// [a] + [b], [a] - [b], [a] * [b] as intervals.
ConstIntBound add(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound neg(const ConstIntBound& a);
ConstIntBound mul(const ConstIntBound& a, const ConstIntBound& b);
/// The type's value range ([0,1] for bool, everything for float and handle).
ConstIntBound type_range(DataType t);
ConstIntBound intersect(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound unite(const ConstIntBound& a, const ConstIntBound& b);
/// Floor and truncating quotient/remainder of finite values (b != 0).
int64_t floor_div(int64_t a, int64_t b);
int64_t floor_mod(int64_t a, int64_t b);
}  // namespace bound_ops

/// An integer sum: sum(coef * term) + constant, terms in order of first appearance, each term a
/// simplified expression that is not itself a sum, a constant or a product by a constant.
struct Sum {
  explicit Sum(DataType t) : dtype(t) {}
  DataType dtype;
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t constant = 0;
  bool overflow = false;  ///< a coefficient left int64: the sum must not be used
  /// Adds scale * e, decomposing +, -, * by constants and immediates of e.
  void add_expr(const Expr& e, int64_t scale);
  void add_term(const Expr& term, int64_t coef);
  void add_constant(int64_t c);
  /// Drops zero coefficients.
  void compact();
};

/// The expression of `s` (leading positive term first, the rest in order, constant last), or
/// nullopt when a coefficient or the constant does not fit s.dtype or the sum overflowed.
std::optional<Expr> sum_to_expr(const Sum& s);

/// The facts of an Analyzer and the two analyses over them.
struct AnalyzerState {
  std::map<Var, ConstIntBound, VarLess> bounds;
  /// const_int_bound (const_int_bound.cc).
  ConstIntBound bound(const Expr& e);
  /// simplify (simplify.cc).
  Expr simplify(const Expr& e);
};

struct Analyzer::Impl : AnalyzerState {};

}  // namespace tessel::tir::arith
