// Integer arithmetic analysis of TIR expressions (TVM's arith: Analyzer, ConstIntBound, IntSet,
// DetectLinearEquation; Halide's Simplify and Bounds):
//  - constant integer bounds of an expression given ranges of its variables;
//  - symbolic interval sets (an expression's range as expressions of the variables it keeps,
//    the core of bound inference);
//  - a simplifier (constant folding, canonical linear sums, floordiv/floormod and min/max
//    elimination by bounds, comparisons decided by bounds);
//  - linear-form detection (coefficients of chosen variables, for DMA strides and micro-op
//    index arithmetic).
// Arithmetic is exact: constant folding that would overflow the expression's type is not done.
// Like TVM, the analyses assume that integer +, -, * of a type do not overflow that type (index
// arithmetic): bounds are clipped to the type's range. Casts are the exception: a cast that may
// wrap gives the target type's whole range. Unsigned arithmetic is only constant-folded and
// decided by bounds (no canonical sums, since it wraps by definition).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "compiler/tir/expr.h"

namespace tessel::tir::arith {

/// Inclusive bounds [min, max] of an integer expression; kNegInf/kPosInf when unbounded.
struct ConstIntBound {
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
  int64_t min = kNegInf;
  int64_t max = kPosInf;
  bool is_const() const { return min == max && min != kNegInf && max != kPosInf; }
  friend bool operator==(const ConstIntBound&, const ConstIntBound&) = default;
};

/// A symbolic inclusive interval [min, max]. An undefined `min` (`max`) means unbounded below
/// (above). `is_empty` marks the empty set.
struct IntervalSet {
  Expr min;
  Expr max;
  bool is_empty = false;
  /// {value}.
  static IntervalSet point(Expr value);
  /// [range.min, range.min + range.extent - 1].
  static IntervalSet from_range(const Range& r);
  /// The whole integer line.
  static IntervalSet everything();
  static IntervalSet empty();
  bool is_everything() const { return !is_empty && !min.defined() && !max.defined(); }
  bool is_bounded() const { return !is_empty && min.defined() && max.defined(); }
  /// True when min and max are the same expression (structurally).
  bool is_single_point() const;
  /// [min, max] as a Range (extent = max - min + 1, simplified); InternalError when unbounded.
  Range to_range() const;
};

/// The smallest interval holding both (bounds combined with min/max, simplified).
IntervalSet union_set(const IntervalSet& a, const IntervalSet& b);
/// The intersection (bounds combined with max/min, simplified).
IntervalSet intersect_set(const IntervalSet& a, const IntervalSet& b);

/// Holds variable facts and answers questions about expressions under them. Not thread-safe;
/// cheap to construct.
class Analyzer {
 public:
  Analyzer();
  ~Analyzer();
  Analyzer(const Analyzer&) = delete;
  Analyzer& operator=(const Analyzer&) = delete;

  /// `v` lies in [r.min, r.min + r.extent) (constant parts are used for ConstIntBound, the
  /// symbolic range for interval sets). A later bind of the same variable replaces the earlier.
  void bind(const Var& v, const Range& r);
  /// `v` lies in [min, max] (inclusive constants).
  void bind(const Var& v, const ConstIntBound& b);
  /// Forgets every fact about `v`.
  void unbind(const Var& v);
  /// The bound given to `v` by the last bind() (after turning a Range into constants), or
  /// std::nullopt when `v` is not bound. Lets a pass restore the facts it changed.
  std::optional<ConstIntBound> fact(const Var& v) const;

  /// Bounds of an integer (or bool: 0/1) expression under the bound variables; unbound
  /// variables take their type's range.
  ConstIntBound const_int_bound(const Expr& e);
  /// An equivalent, simpler expression of the same type (see the file comment).
  Expr simplify(const Expr& e);
  /// True when `cond` (bool) simplifies to true under the facts; false means "not proven".
  bool can_prove(const Expr& cond);

 private:
  struct Impl;
  Impl* impl_;
};

/// The interval of values `e` takes when each variable of `dom` ranges over its set (variables
/// not in `dom` stay symbolic). Sound: the result holds every value; it is exact for sums,
/// products by constants, floordiv/floormod by positive constants, min and max of such terms.
IntervalSet eval_set(const Expr& e, const std::map<Var, IntervalSet, VarLess>& dom);

/// Coefficients of `e` as a linear form of `vars`: returns c with e == sum(c[i] * vars[i]) +
/// c[vars.size()] where no c[i] uses any of `vars`; std::nullopt when `e` is not linear in them
/// (TVM's DetectLinearEquation). Coefficients and base are simplified.
std::optional<std::vector<Expr>> detect_linear_equation(const Expr& e, const std::vector<Var>& vars);

/// Integer value of `e` after simplification, if it is a constant.
std::optional<int64_t> as_const(const Expr& e);

/// The value of a scalar integer or bool expression with its variables bound to integers by
/// `env` (keyed by VarNode), computed directly in int64 without building or simplifying any
/// expression: immediates, variables in env, + - * (truncating) div and mod, floordiv,
/// floormod, min, max, the comparisons, && || !, select (only the chosen branch is evaluated)
/// and casts between integer types. nullopt, never a wrong value, for anything else: a
/// variable not in env, a division or modulo by zero, a result outside its type's range
/// (int64 overflow included), float, vector or handle types, loads, lets and calls; so
/// whenever it returns a value, as_const(substitute(e, env)) is that value.
std::optional<int64_t> eval_int(const Expr& e, const std::map<const VarNode*, int64_t>& env);

}  // namespace tessel::tir::arith
