// The exact integer form of a quantised add (qadd, the residual blocks' QLinearAdd).
//
// The CPU kernel (runtime/cpu/kernels.cc k_qadd) computes, in double,
//   y = rhe_sat((sa * (qa - za) + sb * (qb - zb)) / sy, zy)      (round half to even, saturate)
// and with `relu` y = max(y, zy). A QaddScheme is the int32 chain the accelerator's ALU runs:
//   x = (qa - za) * a_multiplier + (qb - zb) * b_multiplier + round
//   y = min(max((x >> shift) + zy, clip_lo), clip_hi)          (arithmetic shift: floor)
// with clip_lo = zy under relu, else -128, and clip_hi = 127. find_qadd_scheme only returns a
// scheme that gives exactly the kernel's value for every pair (qa, qb) in [-128, 127]^2 (all
// 65,536 are evaluated with the kernel's own double expression) and in which no step wraps
// (each product, their sum and the sum plus `round` lie in int32).
//
// Search order (the first that works is returned, so the result is deterministic):
//   shift s = 0, 1, ..., 30; at each, the multiplier pairs (A, B) with A within 1 of
//   round(sa / sy * 2^s) and B within 1 of round(sb / sy * 2^s), nearest first (by |dA| + |dB|,
//   then dA, then dB, each in the order 0, -1, +1); for each pair the set of round terms R that
//   place every pair's x >> s on the kernel's output (an interval: each pair bounds R from one
//   side or both; pairs whose kernel output saturates only bound it from one side) is
//   intersected, and R is the value of that interval nearest 2^(s-1) (round half up).
// A scheme whose multipliers and round term fit the ALU's 16-bit signed immediate is found
// first whenever one exists (smaller shifts come first).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tessel::compiler::passes {

/// The scales and zero points of one qadd: operands a, b and output y (scales > 0, finite;
/// zero points in [-128, 127]), and whether it carries the fused relu.
struct QaddQuant {
  float a_scale = 1, b_scale = 1, y_scale = 1;
  int32_t a_zero_point = 0, b_zero_point = 0, y_zero_point = 0;
  bool relu = false;
};

/// The chain of the file comment. shift in [0, 30].
struct QaddScheme {
  int32_t a_multiplier = 0, b_multiplier = 0, round = 0, shift = 0;
  int32_t y_zero_point = 0, clip_lo = -128, clip_hi = 127;
  /// Whether a_multiplier, b_multiplier and round all fit the ALU's 16-bit signed immediate
  /// (else they need int32 operand rows in ACC).
  bool fits_imm16() const;
  /// The chain's output for one pair (int64 arithmetic; no check of wrapping).
  int8_t apply(int8_t qa, int8_t qb, int32_t a_zero_point, int32_t b_zero_point) const;
};

/// The outcome of find_qadd_scheme: a scheme, or the reason none exists.
struct QaddSchemeResult {
  std::optional<QaddScheme> scheme;
  std::string reason;  ///< empty when scheme is set
};

/// The CPU kernel's output for one pair (the expression of runtime/cpu/kernels.cc k_qadd).
int8_t qadd_reference(const QaddQuant& q, int8_t qa, int8_t qb);

/// Searches the scheme of the file comment. When none exists returns the reason, naming the
/// largest shift tried and two pairs (qa, qb) whose round-term bounds contradict each other
/// there, and how many pairs are exact ties (rounded half to even by the kernel, which a
/// floor shift cannot tell apart from other halves), e.g.
///   "no exact int32 scheme up to shift 30: pairs (qa, qb) = (3, -7) and (5, -7) need round
///    terms >= 8 and <= 7 (12 pairs are exact ties rounded to even)".
/// UserError when a scale is not positive and finite or a zero point is outside [-128, 127].
/// The search is a pure function of q: its results are memoised for the process (thread-safe),
/// so the placement pass and the driver's lowering search once per distinct qadd.
QaddSchemeResult find_qadd_scheme(const QaddQuant& q);

}  // namespace tessel::compiler::passes
