// compiler/tir/arith: constant bounds, the simplifier's rules (exact printed forms), can_prove,
// interval sets, linear forms, and a randomized property test against the reference evaluator
// in tir_eval.h (fixed seeds).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "compiler/tir/arith/analyzer.h"
#include "compiler/tir/intrinsics.h"
#include "compiler/tir/printer.h"
#include "compiler/tir/util.h"
#include "support/error.h"
#include "tir_eval.h"

namespace tessel::tir::arith {
namespace {

using testing::Env;
using testing::eval_expr;
constexpr int64_t kNegInf = ConstIntBound::kNegInf;
constexpr int64_t kPosInf = ConstIntBound::kPosInf;

std::string simp(Analyzer& a, const Expr& e) { return to_text(a.simplify(e)); }

TEST(ArithConstIntBound, BasicArithmetic) {
  Analyzer a;
  Var x("x"), y("y");
  a.bind(x, Range::from_min_extent(0, 8));
  a.bind(y, ConstIntBound{-3, 4});
  EXPECT_EQ(a.const_int_bound(x), (ConstIntBound{0, 7}));
  EXPECT_EQ(a.const_int_bound(x + y), (ConstIntBound{-3, 11}));
  EXPECT_EQ(a.const_int_bound(x - y), (ConstIntBound{-4, 10}));
  EXPECT_EQ(a.const_int_bound(x * y), (ConstIntBound{-21, 28}));
  EXPECT_EQ(a.const_int_bound(floordiv(y, 2)), (ConstIntBound{-2, 2}));
  EXPECT_EQ(a.const_int_bound(div(y, 2)), (ConstIntBound{-1, 2}));
  EXPECT_EQ(a.const_int_bound(floormod(y, 3)), (ConstIntBound{0, 2}));
  EXPECT_EQ(a.const_int_bound(floormod(x, 16)), (ConstIntBound{0, 7}));
  EXPECT_EQ(a.const_int_bound(mod(y, 3)), (ConstIntBound{-2, 2}));
  EXPECT_EQ(a.const_int_bound(min(x, y)), (ConstIntBound{-3, 4}));
  EXPECT_EQ(a.const_int_bound(max(x, y)), (ConstIntBound{0, 7}));
  EXPECT_EQ(a.const_int_bound(select(x < 3, x, y + 10)), (ConstIntBound{0, 14}));
  EXPECT_EQ(a.const_int_bound(x < 8), (ConstIntBound{1, 1}));
  EXPECT_EQ(a.const_int_bound(x < y), (ConstIntBound{0, 1}));
  EXPECT_EQ(a.const_int_bound(x > 7), (ConstIntBound{0, 0}));
  EXPECT_EQ(a.const_int_bound(!(x >= 0)), (ConstIntBound{0, 0}));
  EXPECT_EQ(a.const_int_bound((x < 8) && (y < 0)), (ConstIntBound{0, 1}));
  EXPECT_EQ(a.const_int_bound((x < 8) || (y < 0)), (ConstIntBound{1, 1}));
  Var z("z");
  EXPECT_EQ(a.const_int_bound(z), (ConstIntBound{INT32_MIN, INT32_MAX}));
  EXPECT_EQ(a.const_int_bound(let(z, x * 2, z + 1)), (ConstIntBound{1, 15}));
  a.unbind(x);
  EXPECT_EQ(a.const_int_bound(x), (ConstIntBound{INT32_MIN, INT32_MAX}));
}

TEST(ArithConstIntBound, SaturatesAndCasts) {
  Analyzer a;
  Var x("x", DataType::int64()), y("y", DataType::int64());
  EXPECT_EQ(a.const_int_bound(x), (ConstIntBound{kNegInf, kPosInf}));
  EXPECT_EQ(a.const_int_bound(x * 2 + 1), (ConstIntBound{kNegInf, kPosInf}));
  a.bind(x, ConstIntBound{0, kPosInf});
  EXPECT_EQ(a.const_int_bound(x + 5), (ConstIntBound{5, kPosInf}));
  EXPECT_EQ(a.const_int_bound(x * -3), (ConstIntBound{kNegInf, 0}));
  EXPECT_EQ(a.const_int_bound(x * 0), (ConstIntBound{0, 0}));
  EXPECT_EQ(a.const_int_bound(floordiv(x, 4)), (ConstIntBound{0, kPosInf}));
  a.bind(y, ConstIntBound{int64_t{1} << 62, int64_t{1} << 62});
  EXPECT_EQ(a.const_int_bound(y * 4), (ConstIntBound{kPosInf, kPosInf}));
  // Casts: kept when they cannot wrap, else the target's range.
  Var i("i");
  a.bind(i, ConstIntBound{-5, 300});
  EXPECT_EQ(a.const_int_bound(cast(DataType::int16(), i)), (ConstIntBound{-5, 300}));
  EXPECT_EQ(a.const_int_bound(cast(DataType::int8(), i)), (ConstIntBound{-128, 127}));
  EXPECT_EQ(a.const_int_bound(cast(DataType::uint8(), i)), (ConstIntBound{0, 255}));
  EXPECT_EQ(a.const_int_bound(cast(DataType::int32(), Var("f", DataType::float32()))), (ConstIntBound{INT32_MIN, INT32_MAX}));
  Buffer b("B", DataType::int8(), {16});
  EXPECT_EQ(a.const_int_bound(buffer_load(b, {i})), (ConstIntBound{-128, 127}));
  EXPECT_EQ(a.const_int_bound(cast(DataType::int32(), buffer_load(b, {i})) + 1), (ConstIntBound{-127, 128}));
  // Vectors: over every lane.
  Var j("j");
  a.bind(j, Range::from_min_extent(0, 4));
  EXPECT_EQ(a.const_int_bound(ramp(j * 8, 2, 4)), (ConstIntBound{0, 30}));
  EXPECT_EQ(a.const_int_bound(ramp(j, -1, 4)), (ConstIntBound{-3, 3}));
  EXPECT_EQ(a.const_int_bound(broadcast(j + 1, 4)), (ConstIntBound{1, 4}));
}

TEST(ArithSimplify, CanonicalSums) {
  Analyzer a;
  Var x("x"), y("y"), z("z");
  EXPECT_EQ(simp(a, x + y - x), "y");
  EXPECT_EQ(simp(a, x * 2 * 3), "(x * 6)");
  EXPECT_EQ(simp(a, (x + 1) + 2), "(x + 3)");
  EXPECT_EQ(simp(a, (x + 1) * 4 - 4), "(x * 4)");
  EXPECT_EQ(simp(a, x - x), "0");
  EXPECT_EQ(simp(a, y + x + 2 * y - x), "(y * 3)");
  EXPECT_EQ(simp(a, (z - x) + y), "((z - x) + y)");
  EXPECT_EQ(simp(a, 0 - x - 5), "((x * -1) - 5)");
  EXPECT_EQ(simp(a, 5 - x), "(5 - x)");
  EXPECT_EQ(simp(a, (x - 3) - (y - 3)), "(x - y)");
  EXPECT_EQ(simp(a, x * y - y * x), "((x * y) - (y * x))");
  EXPECT_EQ(simp(a, x * y + x * y), "((x * y) * 2)");
  EXPECT_EQ(simp(a, Expr(2) + 3 * 4), "14");
  // The same input gives the same output every time (order of first appearance).
  for (int k = 0; k < 3; ++k) EXPECT_EQ(simp(a, z + y * 2 + x - y + 7 - z), "((y + x) + 7)");
  // Folding that would leave int32 is not done.
  Expr big = make_const(DataType::int32(), INT32_MAX);
  EXPECT_EQ(simp(a, big + 1), "(2147483647 + 1)");
  EXPECT_EQ(simp(a, x + big + 1 - 1), "(x + 2147483647)");
  Var w("w", DataType::int64());
  EXPECT_EQ(simp(a, w + 1 + 2), "(w + int64(3))");
}

TEST(ArithSimplify, DivisionByConstants) {
  Analyzer a;
  Var x("x"), y("y"), n("n");
  a.bind(y, Range::from_min_extent(0, 8));
  EXPECT_EQ(simp(a, floordiv(x * 8 + y, 8)), "x");
  EXPECT_EQ(simp(a, floormod(x * 8 + y, 8)), "y");
  EXPECT_EQ(simp(a, floordiv(y, 8)), "0");
  EXPECT_EQ(simp(a, floormod(y, 8)), "y");
  EXPECT_EQ(simp(a, floordiv(x * 16 + y, 8)), "(x * 2)");
  EXPECT_EQ(simp(a, floordiv(x * 8 + y + 8, 8)), "(x + 1)");
  EXPECT_EQ(simp(a, floormod(x * 8 + y + 9, 8)), "floormod((y + 1), 8)");
  Var w("w");
  a.bind(w, Range::from_min_extent(0, 16));
  EXPECT_EQ(simp(a, floordiv(x * 16 + w, 8)), "((x * 2) + floordiv(w, 8))");
  EXPECT_EQ(simp(a, floormod(x * 16 + w, 8)), "floormod(w, 8)");
  EXPECT_EQ(simp(a, floordiv(floordiv(n, 4), 2)), "floordiv(n, 8)");
  EXPECT_EQ(simp(a, floormod(floormod(n, 16), 4)), "floormod(n, 4)");
  EXPECT_EQ(simp(a, floordiv(n, 1)), "n");
  EXPECT_EQ(simp(a, floormod(n, 1)), "0");
  EXPECT_EQ(simp(a, floordiv(n, 8)), "floordiv(n, 8)");
  EXPECT_EQ(simp(a, floordiv(Expr(-7), 2)), "-4");
  EXPECT_EQ(simp(a, floormod(Expr(-7), 2)), "1");
  EXPECT_EQ(simp(a, div(Expr(-7), 2)), "-3");
  EXPECT_EQ(simp(a, mod(Expr(-7), 2)), "-1");
  EXPECT_EQ(simp(a, div(Expr(7), 0)), "(7 / 0)");
  // Truncating forms become floor forms on non-negative operands only.
  EXPECT_EQ(simp(a, div(w, 4)), "floordiv(w, 4)");
  EXPECT_EQ(simp(a, mod(w * 4 + y, 4)), "floormod(y, 4)");
  EXPECT_EQ(simp(a, div(n, 4)), "(n / 4)");
  EXPECT_EQ(simp(a, mod(w, 32)), "w");
}

TEST(ArithSimplify, MinMaxAndComparisons) {
  Analyzer a;
  Var x("x"), y("y"), n("n"), m("m");
  a.bind(x, ConstIntBound{0, 3});
  a.bind(y, ConstIntBound{4, 9});
  EXPECT_EQ(simp(a, min(x, y)), "x");
  EXPECT_EQ(simp(a, max(x, y)), "y");
  EXPECT_EQ(simp(a, min(n, n)), "n");
  EXPECT_EQ(simp(a, min(n, n + 1)), "n");
  EXPECT_EQ(simp(a, max(n - 2, n)), "n");
  EXPECT_EQ(simp(a, min(Expr(3), 5)), "3");
  EXPECT_EQ(simp(a, max(Expr(3), 5)), "5");
  EXPECT_EQ(simp(a, min(min(n, 4), 8)), "min(n, 4)");
  EXPECT_EQ(simp(a, min(n, m)), "min(n, m)");
  EXPECT_EQ(simp(a, x < 4), "True");
  EXPECT_EQ(simp(a, x >= 4), "False");
  EXPECT_EQ(simp(a, x < y), "True");
  EXPECT_EQ(simp(a, n + 1 < m + 1), "(n < m)");
  EXPECT_EQ(simp(a, n - m < 0), "(n < m)");
  EXPECT_EQ(simp(a, 3 < n), "(n > 3)");
  EXPECT_EQ(simp(a, n * 2 < 8), "(n < 4)");
  EXPECT_EQ(simp(a, n * 2 < 7), "(n < 4)");
  EXPECT_EQ(simp(a, n * 2 <= 7), "(n <= 3)");
  EXPECT_EQ(simp(a, n * 2 > 7), "(n > 3)");
  EXPECT_EQ(simp(a, n * 2 >= 7), "(n >= 4)");
  EXPECT_EQ(simp(a, eq(n * 2, 7)), "False");
  EXPECT_EQ(simp(a, ne(n * 2, 7)), "True");
  EXPECT_EQ(simp(a, eq(n * 4, m * 2 + 6)), "((n * 2) == (m + 3))");
  EXPECT_EQ(simp(a, n >= m), "(n >= m)");
  EXPECT_EQ(simp(a, n - n < 1), "True");
}

TEST(ArithSimplify, BoolSelectCastLet) {
  Analyzer a;
  Var n("n"), m("m"), b("b", DataType::bool_());
  EXPECT_EQ(simp(a, bool_imm(true) && b), "b");
  EXPECT_EQ(simp(a, bool_imm(false) && b), "False");
  EXPECT_EQ(simp(a, bool_imm(false) || b), "b");
  EXPECT_EQ(simp(a, bool_imm(true) || b), "True");
  EXPECT_EQ(simp(a, !(!b)), "b");
  EXPECT_EQ(simp(a, !(n < m)), "(n >= m)");
  EXPECT_EQ(simp(a, !eq(n, m)), "(n != m)");
  EXPECT_EQ(simp(a, b && b), "b");
  EXPECT_EQ(simp(a, select(bool_imm(true), n, m)), "n");
  EXPECT_EQ(simp(a, select(bool_imm(false), n, m)), "m");
  EXPECT_EQ(simp(a, select(b, n + 1, 1 + n)), "(n + 1)");
  EXPECT_EQ(simp(a, select(b, n, m)), "select(b, n, m)");
  EXPECT_EQ(simp(a, cast(DataType::int8(), Expr(300))), "int8(44)");
  EXPECT_EQ(simp(a, cast(DataType::int8(), Expr(-129))), "int8(127)");
  EXPECT_EQ(simp(a, cast(DataType::uint8(), Expr(-1))), "uint8(255)");
  EXPECT_EQ(simp(a, cast(DataType::float32(), Expr(3))), "float32(3)");
  EXPECT_EQ(simp(a, cast(DataType::int32(), make_float(DataType::float32(), -2.5))), "-2");
  EXPECT_EQ(simp(a, cast(DataType::bool_(), Expr(2))), "True");
  Var t("t");
  EXPECT_EQ(simp(a, let(t, 3, t * n + t)), "((n * 3) + 3)");
  EXPECT_EQ(simp(a, let(t, m, t + t)), "(m * 2)");
  EXPECT_EQ(simp(a, let(t, n * m, t + 1)), "(let t = (n * m) in (t + 1))");
  EXPECT_EQ(simp(a, let(t, n * m, n)), "n");
  EXPECT_EQ(simp(a, intrin::likely(n + 1 < m + 1)), "tir.likely<bool>((n < m))");
  Var x("x");
  a.bind(x, ConstIntBound{0, 3});
  EXPECT_EQ(simp(a, intrin::likely(x < 4)), "tir.likely<bool>(True)");
  EXPECT_EQ(simp(a, let(t, x * 2, t < 7)), "True");
}

TEST(ArithSimplify, FloatsAndVectors) {
  Analyzer a;
  Var f("f", DataType::float32());
  Expr one = make_float(DataType::float32(), 1.0);
  Expr zero = make_float(DataType::float32(), 0.0);
  EXPECT_EQ(simp(a, f * one), "(f * float32(1))");
  EXPECT_EQ(simp(a, f + zero), "(f + float32(0))");
  EXPECT_EQ(simp(a, make_float(DataType::float32(), 0.5) + one), "float32(1.5)");
  EXPECT_EQ(simp(a, make_float(DataType::float32(), 0.5) < one), "True");
  EXPECT_EQ(simp(a, one / zero), "(float32(1) / float32(0))");
  Var x("x");
  EXPECT_EQ(simp(a, ramp(x, 1, 4) + broadcast(Expr(2), 4)), "ramp((x + 2), 1, 4)");
  EXPECT_EQ(simp(a, broadcast(Expr(2), 4) + ramp(x, 1, 4)), "ramp((x + 2), 1, 4)");
  EXPECT_EQ(simp(a, ramp(x, 1, 4) * broadcast(Expr(3), 4)), "ramp((x * 3), 3, 4)");
  EXPECT_EQ(simp(a, ramp(x, 1, 4) + ramp(x, 2, 4)), "ramp((x * 2), 3, 4)");
  EXPECT_EQ(simp(a, ramp(x, 2, 4) - ramp(x, 2, 4)), "broadcast(0, 4)");
  EXPECT_EQ(simp(a, broadcast(x, 4) * broadcast(Expr(2), 4) - broadcast(x, 4)), "broadcast(x, 4)");
  EXPECT_EQ(simp(a, broadcast(x + 1, 4) < broadcast(x, 4)), "broadcast(False, 4)");
  EXPECT_EQ(simp(a, ramp(x, 0, 4)), "broadcast(x, 4)");
}

TEST(ArithSimplify, ResultIsTheInputWhenNothingChanges) {
  Analyzer a;
  Var x("x"), y("y");
  Expr e = floordiv(x, 8) + y * 3;
  EXPECT_TRUE(a.simplify(e).same_as(e));
  Expr c = x < y;
  EXPECT_TRUE(a.simplify(c).same_as(c));
}

TEST(ArithCanProve, BoundsAndSimplification) {
  Analyzer a;
  Var i("i"), j("j"), n("n");
  a.bind(i, Range::from_min_extent(0, 16));
  a.bind(j, Range::from_min_extent(0, 4));
  EXPECT_TRUE(a.can_prove(i < 16));
  EXPECT_TRUE(a.can_prove(i * 4 + j < 64));
  EXPECT_FALSE(a.can_prove(i * 4 + j < 63));
  EXPECT_TRUE(a.can_prove(n + 1 > n));
  EXPECT_TRUE(a.can_prove(floordiv(i * 4 + j, 4) <= i));
  EXPECT_FALSE(a.can_prove(n < 5));
  EXPECT_TRUE(a.can_prove(bool_imm(true)));
  EXPECT_FALSE(a.can_prove(bool_imm(false)));
  EXPECT_THROW(a.can_prove(i), InternalError);
}

TEST(ArithIntervalSet, EvalSet) {
  Var i("i"), j("j"), n("n");
  std::map<Var, IntervalSet, VarLess> dom;
  dom[i] = IntervalSet::from_range(Range::from_min_extent(0, n));
  dom[j] = IntervalSet::from_range(Range::from_min_extent(0, 4));
  auto txt = [](const IntervalSet& s) {
    if (s.is_empty) return std::string("empty");
    return "[" + (s.min.defined() ? to_text(s.min) : "-inf") + ", " + (s.max.defined() ? to_text(s.max) : "+inf") + "]";
  };
  EXPECT_EQ(txt(dom[i]), "[0, (n - 1)]");
  EXPECT_EQ(txt(eval_set(i * 4 + j, dom)), "[0, ((n * 4) - 1)]");
  EXPECT_EQ(txt(eval_set(i - j, dom)), "[-3, (n - 1)]");
  EXPECT_EQ(txt(eval_set(j * -2 + 1, dom)), "[-5, 1]");
  EXPECT_EQ(txt(eval_set(floordiv(i, 2), dom)), "[0, floordiv((n - 1), 2)]");
  EXPECT_EQ(txt(eval_set(floordiv(j, -2), dom)), "[-2, 0]");
  EXPECT_EQ(txt(eval_set(floormod(i, 8), dom)), "[0, 7]");
  EXPECT_EQ(txt(eval_set(floormod(j + 4, 8), dom)), "[4, 7]");
  EXPECT_EQ(txt(eval_set(min(i, 10), dom)), "[0, min((n - 1), 10)]");
  EXPECT_EQ(txt(eval_set(max(j, n), dom)), "[max(0, n), max(3, n)]");
  EXPECT_EQ(txt(eval_set(select(i < 2, j, j + 10), dom)), "[0, 13]");
  EXPECT_EQ(txt(eval_set(n + 1, dom)), "[(n + 1), (n + 1)]");
  EXPECT_TRUE(eval_set(n + 1, dom).is_single_point());
  EXPECT_EQ(txt(eval_set(i * j, dom)), "[-inf, +inf]");
  EXPECT_EQ(txt(eval_set(cast(DataType::int64(), j), dom)), "[int64(0), int64(3)]");
  EXPECT_EQ(txt(eval_set(cast(DataType::int8(), j), dom)), "[-inf, +inf]");
  EXPECT_EQ(txt(eval_set(ramp(j * 8, 1, 8), dom)), "[0, 31]");
  Buffer b("B", DataType::int32(), {16});
  EXPECT_EQ(txt(eval_set(buffer_load(b, {j}), dom)), "[-inf, +inf]");
  EXPECT_EQ(txt(eval_set(buffer_load(b, {n}), dom)), "[B[n], B[n]]");
  EXPECT_EQ(dom[j].to_range().extent.as<IntImmNode>()->value, 4);
  EXPECT_EQ(to_text(dom[i].to_range().extent), "n");
  EXPECT_THROW(IntervalSet::everything().to_range(), InternalError);
}

TEST(ArithIntervalSet, UnionAndIntersect) {
  Var n("n");
  IntervalSet a{Expr(0), Expr(7)}, b{Expr(4), Expr(12)}, c{Expr(20), Expr(30)};
  IntervalSet u = union_set(a, b);
  EXPECT_EQ(to_text(u.min) + " " + to_text(u.max), "0 12");
  IntervalSet x = intersect_set(a, b);
  EXPECT_EQ(to_text(x.min) + " " + to_text(x.max), "4 7");
  EXPECT_TRUE(intersect_set(a, c).is_empty);
  EXPECT_TRUE(union_set(IntervalSet::empty(), a).is_bounded());
  EXPECT_TRUE(intersect_set(IntervalSet::empty(), a).is_empty);
  IntervalSet e = union_set(a, IntervalSet::everything());
  EXPECT_TRUE(e.is_everything());
  IntervalSet s = intersect_set(IntervalSet{Expr(0), Expr()}, IntervalSet{Expr(), n});
  EXPECT_EQ(to_text(s.min) + " " + to_text(s.max), "0 n");
  IntervalSet p = union_set(IntervalSet::point(n), IntervalSet::point(n + 2));
  EXPECT_EQ(to_text(p.min) + " " + to_text(p.max), "n (n + 2)");
}

TEST(ArithLinear, DetectLinearEquation) {
  Var i("i"), j("j"), n("n");
  auto txt = [](const std::optional<std::vector<Expr>>& c) {
    if (!c) return std::string("none");
    std::string s;
    for (const Expr& e : *c) s += (s.empty() ? "" : " | ") + to_text(e);
    return s;
  };
  EXPECT_EQ(txt(detect_linear_equation(i * 4 + j * 2 + 3, {i, j})), "4 | 2 | 3");
  EXPECT_EQ(txt(detect_linear_equation(i * n + j + n, {i, j})), "n | 1 | n");
  EXPECT_EQ(txt(detect_linear_equation((i + 1) * (n + 2), {i})), "(n + 2) | (n + 2)");
  EXPECT_EQ(txt(detect_linear_equation(n * 3, {i, j})), "0 | 0 | (n * 3)");
  EXPECT_EQ(txt(detect_linear_equation(i - i + j, {i, j})), "0 | 1 | 0");
  EXPECT_EQ(txt(detect_linear_equation(i * j, {i, j})), "none");
  EXPECT_EQ(txt(detect_linear_equation(floordiv(i, 2), {i})), "none");
  EXPECT_EQ(txt(detect_linear_equation(i * i, {i})), "none");
  EXPECT_EQ(txt(detect_linear_equation(floordiv(i * 8 + j, 8) , {i})), "1 | floordiv(j, 8)");
  EXPECT_EQ(as_const(Expr(3) * 4 + 1), std::optional<int64_t>(13));
  EXPECT_EQ(as_const(i - i + 2), std::optional<int64_t>(2));
  EXPECT_EQ(as_const(i + 2), std::nullopt);
}

// ---- randomized property test ----

class Gen {
 public:
  Gen(uint32_t seed, std::vector<Var> vars) : rng_(seed), vars_(std::move(vars)) {}
  int pick(int n) { return static_cast<int>(rng_() % static_cast<uint32_t>(n)); }
  Expr leaf() {
    if (pick(3) == 0) return Expr(pick(15) - 5);
    return vars_[pick(static_cast<int>(vars_.size()))];
  }
  Expr expr(int depth) {
    if (depth == 0 || pick(5) == 0) return leaf();
    Expr a = expr(depth - 1);
    switch (pick(13)) {
      case 0:
      case 1: return a + expr(depth - 1);
      case 2: return a - expr(depth - 1);
      case 3: return a * Expr(pick(7) - 3);
      case 4: return pick(4) == 0 ? a * expr(depth - 1) : Expr(pick(5) + 1) * a;
      case 5: return floordiv(a, Expr(kDivisors[pick(6)]));
      case 6: return floormod(a, Expr(kDivisors[pick(6)]));
      case 7: return pick(2) ? div(a, Expr(pick(4) + 1)) : mod(a, Expr(pick(4) + 2));
      case 8: return min(a, expr(depth - 1));
      case 9: return max(a, expr(depth - 1));
      case 10: return select(cond(depth - 1), a, expr(depth - 1));
      case 11: return a + Expr(pick(9) - 4);
      default: return floordiv(a * Expr(kDivisors[pick(6)]) + expr(depth - 1), Expr(kDivisors[pick(6)]));
    }
  }
  Expr cond(int depth) {
    Expr a = expr(depth), b = expr(depth);
    switch (pick(8)) {
      case 0: return a < b;
      case 1: return a <= b;
      case 2: return a > b;
      case 3: return a >= b;
      case 4: return eq(a, b);
      case 5: return ne(a, b);
      case 6: return (a < b) && (b < Expr(pick(9)));
      default: return !(a < b) || (a > Expr(pick(5)));
    }
  }

 private:
  static constexpr int kDivisors[6] = {1, 2, 3, 4, 8, -3};
  std::mt19937 rng_;
  std::vector<Var> vars_;
};

struct Domain {
  Var v;
  int64_t lo, hi;
};

// Returns true when the simplifier changed the expression (to measure the test's reach).
bool check_property(const Expr& e, const std::vector<Domain>& doms, uint32_t seed, int index) {
  Analyzer a;
  for (const auto& d : doms) a.bind(d.v, ConstIntBound{d.lo, d.hi});
  Expr s = a.simplify(e);
  bool changed = !s.same_as(e);
  ConstIntBound bound = a.const_int_bound(e);
  ConstIntBound sbound = a.const_int_bound(s);
  // eval_set over the first variable; the others stay symbolic.
  std::map<Var, IntervalSet, VarLess> dom;
  dom[doms[0].v] = IntervalSet{Expr(static_cast<int>(doms[0].lo)), Expr(static_cast<int>(doms[0].hi))};
  IntervalSet set = e.dtype().is_bool() ? IntervalSet::everything() : eval_set(e, dom);
  EXPECT_FALSE(set.is_empty);
  std::string where = "seed " + std::to_string(seed) + " #" + std::to_string(index) + ": " + to_text(e) + "  =>  " + to_text(s);
  std::vector<int64_t> point(doms.size());
  std::function<void(size_t)> walk = [&](size_t k) {
    if (k == doms.size()) {
      Env env;
      for (size_t q = 0; q < doms.size(); ++q) env[doms[q].v.get()] = point[q];
      int64_t want = eval_expr(e, env);
      int64_t got = eval_expr(s, env);
      ASSERT_EQ(got, want) << where;
      ASSERT_LE(bound.min, want) << where;
      ASSERT_GE(bound.max, want) << where;
      ASSERT_LE(sbound.min, want) << where;
      ASSERT_GE(sbound.max, want) << where;
      if (set.min.defined()) {
        ASSERT_LE(eval_expr(set.min, env), want) << where << " set min " << to_text(set.min);
      }
      if (set.max.defined()) {
        ASSERT_GE(eval_expr(set.max, env), want) << where << " set max " << to_text(set.max);
      }
      return;
    }
    for (int64_t v = doms[k].lo; v <= doms[k].hi; ++v) {
      point[k] = v;
      walk(k + 1);
      if (::testing::Test::HasFatalFailure()) return;
    }
  };
  walk(0);
  return changed;
}

TEST(ArithProperty, RandomExpressionsAgreeWithReference) {
  Var x("x"), y("y"), z("z");
  std::vector<Domain> doms = {{x, 0, 7}, {y, -3, 4}, {z, 0, 2}};
  int changed = 0, total = 0;
  for (uint32_t seed : {1u, 2u, 3u}) {
    Gen g(seed, {x, y, z});
    for (int k = 0; k < 400; ++k) {
      Expr e = g.expr(4);
      changed += check_property(e, doms, seed, k);
      ++total;
      if (HasFatalFailure()) return;
    }
  }
  // Most random expressions give the simplifier something to do.
  EXPECT_GT(changed, total / 2) << changed << " of " << total;
}

// eval_int (emit_instructions' per-iteration evaluator) against the reference evaluator and
// against as_const(substitute(...)) on random expressions and conditions at every point of a
// small domain: it must give every value (these are all in range) and the same one; and
// nullopt, not a value, for an unbound variable, a division by zero, an int32 overflow and a
// call.
TEST(ArithProperty, EvalIntAgreesWithSubstituteAndSimplify) {
  Var x("x"), y("y");
  int64_t checked = 0;
  for (uint32_t seed : {21u, 22u}) {
    Gen g(seed, {x, y});
    for (int k = 0; k < 300; ++k) {
      const Expr e = k % 3 == 2 ? g.cond(3) : g.expr(4);
      for (int64_t vx = -3; vx <= 5; vx += 2) {
        for (int64_t vy = -2; vy <= 6; vy += 3) {
          const std::map<const VarNode*, int64_t> env{{x.get(), vx}, {y.get(), vy}};
          Env ref_env(env.begin(), env.end());
          const std::optional<int64_t> got = eval_int(e, env);
          ASSERT_TRUE(got.has_value()) << to_text(e) << " at x=" << vx << " y=" << vy;
          ASSERT_EQ(*got, eval_expr(e, ref_env)) << to_text(e) << " at x=" << vx << " y=" << vy;
          std::map<Var, Expr, VarLess> sub{{x, Expr(static_cast<int>(vx))}, {y, Expr(static_cast<int>(vy))}};
          ASSERT_EQ(got, as_const(substitute(e, sub))) << to_text(e);
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 2 * 300 * 5 * 3);
  const std::map<const VarNode*, int64_t> env{{x.get(), 0}};
  EXPECT_EQ(eval_int(x + y, env), std::nullopt);                    // y unbound
  EXPECT_EQ(eval_int(floordiv(Expr(7), x), env), std::nullopt);     // by zero
  EXPECT_EQ(eval_int(Expr(2147483647) + Expr(1), env), std::nullopt);  // int32 overflow
  EXPECT_EQ(eval_int(select(eq(x, 0), Expr(3), floordiv(Expr(1), x)), env), 3);  // the branch taken
  EXPECT_EQ(eval_int(call(DataType::int32(), "f", {x}), env), std::nullopt);
}

TEST(ArithProperty, RandomConditionsAgreeWithReference) {
  Var x("x"), y("y");
  std::vector<Domain> doms = {{x, -4, 6}, {y, 0, 9}};
  for (uint32_t seed : {11u, 12u}) {
    Gen g(seed, {x, y});
    for (int k = 0; k < 400; ++k) {
      Expr c = g.cond(3);
      (void)check_property(c, doms, seed, k);
      if (HasFatalFailure()) return;
      Analyzer a;
      for (const auto& d : doms) a.bind(d.v, ConstIntBound{d.lo, d.hi});
      // can_prove only says yes when the condition holds everywhere.
      if (a.can_prove(c)) {
        for (int64_t vx = -4; vx <= 6; ++vx) {
          for (int64_t vy = 0; vy <= 9; ++vy) {
            Env env{{x.get(), vx}, {y.get(), vy}};
            ASSERT_EQ(eval_expr(c, env), 1) << to_text(c);
          }
        }
      }
    }
  }
}

TEST(ArithProperty, SimplifyIsIdempotentAndDeterministic) {
  Var x("x"), y("y"), z("z");
  Gen g(7, {x, y, z});
  for (int k = 0; k < 300; ++k) {
    Expr e = g.expr(4);
    Analyzer a;
    a.bind(x, ConstIntBound{0, 7});
    Expr s1 = a.simplify(e);
    Expr s2 = a.simplify(e);
    EXPECT_EQ(to_text(s1), to_text(s2));
  }
}

}  // namespace
}  // namespace tessel::tir::arith
