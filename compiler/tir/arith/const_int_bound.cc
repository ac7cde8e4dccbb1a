// Constant integer bounds (TVM's ConstIntBoundAnalyzer): interval arithmetic over int64 with
// saturation to kNegInf/kPosInf. Integer arithmetic of a type is assumed not to overflow it (index
// arithmetic), so every result is also clipped to its type's range; casts that may wrap give
// the target type's whole range.
#include <algorithm>

#include "compiler/tir/arith/analyzer_impl.h"
#include "compiler/tir/intrinsics.h"
#include "support/error.h"

namespace tessel::tir::arith {

namespace bound_ops {

namespace {
constexpr int64_t kNegInf = ConstIntBound::kNegInf;
constexpr int64_t kPosInf = ConstIntBound::kPosInf;
bool is_inf(int64_t v) { return v == kNegInf || v == kPosInf; }
int64_t clamp128(__int128 v) {
  if (v <= static_cast<__int128>(kNegInf)) return kNegInf;
  if (v >= static_cast<__int128>(kPosInf)) return kPosInf;
  return static_cast<int64_t>(v);
}
}  // namespace

int64_t add(int64_t a, int64_t b, bool lower) {
  bool ia = is_inf(a), ib = is_inf(b);
  if (ia && ib && a != b) return lower ? kNegInf : kPosInf;
  if (ia) return a;
  if (ib) return b;
  return clamp128(static_cast<__int128>(a) + b);
}

int64_t mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (is_inf(a) || is_inf(b)) return ((a < 0) != (b < 0)) ? kNegInf : kPosInf;
  return clamp128(static_cast<__int128>(a) * b);
}

ConstIntBound add(const ConstIntBound& a, const ConstIntBound& b) {
  return {add(a.min, b.min, true), add(a.max, b.max, false)};
}

ConstIntBound neg(const ConstIntBound& a) {
  auto n = [](int64_t v) { return v == kNegInf ? kPosInf : v == kPosInf ? kNegInf : -v; };
  return {n(a.max), n(a.min)};
}

ConstIntBound mul(const ConstIntBound& a, const ConstIntBound& b) {
  int64_t c[4] = {mul(a.min, b.min), mul(a.min, b.max), mul(a.max, b.min), mul(a.max, b.max)};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

ConstIntBound type_range(DataType t) {
  if (t.is_bool()) return {0, 1};
  if (t.is_integer()) {
    ConstIntBound r{t.min_value(), t.max_value()};
    if (t.is_uint() && t.bits >= 63) r.max = kPosInf;
    return r;
  }
  return {};
}

ConstIntBound intersect(const ConstIntBound& a, const ConstIntBound& b) {
  return {std::max(a.min, b.min), std::min(a.max, b.max)};
}

ConstIntBound unite(const ConstIntBound& a, const ConstIntBound& b) {
  return {std::min(a.min, b.min), std::max(a.max, b.max)};
}

int64_t floor_div(int64_t a, int64_t b) {
  TESSEL_CHECK(b != 0, "floor_div by zero");
  if (b == -1) return a == kNegInf ? kPosInf : -a;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t floor_mod(int64_t a, int64_t b) {
  TESSEL_CHECK(b != 0, "floor_mod by zero");
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

}  // namespace bound_ops

namespace {

using bound_ops::type_range;
constexpr int64_t kNegInf = ConstIntBound::kNegInf;
constexpr int64_t kPosInf = ConstIntBound::kPosInf;
bool finite(const ConstIntBound& b) { return b.min != kNegInf && b.max != kPosInf; }

// Quotient of an infinite or finite end by a finite non-zero divisor.
int64_t div_end(int64_t a, int64_t b, bool floor) {
  if (a == kNegInf || a == kPosInf) return ((a < 0) != (b < 0)) ? kNegInf : kPosInf;
  if (floor) return bound_ops::floor_div(a, b);
  if (b == -1) return -a;
  return a / b;
}

// [a] / [b] for a divisor range excluding zero: the quotient is monotone in each operand on such
// a range, so the corners bound it.
ConstIntBound div_bound(const ConstIntBound& a, const ConstIntBound& b, bool floor) {
  if (b.min <= 0 && b.max >= 0) return {};
  if (!finite(b)) {
    // |quotient| <= |dividend| (and floor adds at most one below).
    int64_t m = std::max(a.min == kNegInf ? kPosInf : std::abs(a.min), a.max == kPosInf ? kPosInf : std::abs(a.max));
    return {m == kPosInf ? kNegInf : -m - 1, m};
  }
  int64_t c[4] = {div_end(a.min, b.min, floor), div_end(a.min, b.max, floor), div_end(a.max, b.min, floor),
                  div_end(a.max, b.max, floor)};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

ConstIntBound floormod_bound(const ConstIntBound& a, const ConstIntBound& b) {
  if (b.min > 0) {
    if (a.min >= 0 && a.max < b.min) return a;
    ConstIntBound r{0, b.max == kPosInf ? kPosInf : b.max - 1};
    if (a.min >= 0) r.max = std::min(r.max, a.max);
    return r;
  }
  if (b.max < 0) {
    if (a.max <= 0 && a.min > b.max) return a;
    return {b.min == kNegInf ? kNegInf : b.min + 1, 0};
  }
  return {};
}

ConstIntBound truncmod_bound(const ConstIntBound& a, const ConstIntBound& b) {
  if (b.min <= 0 && b.max >= 0) return {};
  // |remainder| < |divisor|, sign of the dividend.
  int64_t m = std::max(b.min == kNegInf ? kPosInf : std::abs(b.min), b.max == kPosInf ? kPosInf : std::abs(b.max));
  if (m != kPosInf) m -= 1;
  ConstIntBound r{a.min >= 0 ? 0 : std::max(a.min, m == kPosInf ? kNegInf : -m), a.max <= 0 ? 0 : std::min(a.max, m)};
  return r;
}

}  // namespace

ConstIntBound AnalyzerState::bound(const Expr& e) {
  TESSEL_CHECK(e.defined(), "const_int_bound of an undefined expression");
  DataType t = e.dtype();
  if (!t.is_integer() && !t.is_bool()) return {};
  ConstIntBound r;
  auto ops = binary_operands(e);
  switch (e.kind()) {
    case ExprKind::kIntImm: {
      int64_t v = e.as<IntImmNode>()->value;
      return {v, v};
    }
    case ExprKind::kVar: {
      auto it = bounds.find(Var::from(e));
      r = it == bounds.end() ? type_range(t) : it->second;
      break;
    }
    case ExprKind::kAdd: r = bound_ops::add(bound(*ops.a), bound(*ops.b)); break;
    case ExprKind::kSub: r = bound_ops::add(bound(*ops.a), bound_ops::neg(bound(*ops.b))); break;
    case ExprKind::kMul: r = bound_ops::mul(bound(*ops.a), bound(*ops.b)); break;
    case ExprKind::kDiv: r = div_bound(bound(*ops.a), bound(*ops.b), false); break;
    case ExprKind::kFloorDiv: r = div_bound(bound(*ops.a), bound(*ops.b), true); break;
    case ExprKind::kMod: r = truncmod_bound(bound(*ops.a), bound(*ops.b)); break;
    case ExprKind::kFloorMod: r = floormod_bound(bound(*ops.a), bound(*ops.b)); break;
    case ExprKind::kMin: {
      ConstIntBound a = bound(*ops.a), b = bound(*ops.b);
      r = {std::min(a.min, b.min), std::min(a.max, b.max)};
      break;
    }
    case ExprKind::kMax: {
      ConstIntBound a = bound(*ops.a), b = bound(*ops.b);
      r = {std::max(a.min, b.min), std::max(a.max, b.max)};
      break;
    }
    case ExprKind::kEQ:
    case ExprKind::kNE:
    case ExprKind::kLT:
    case ExprKind::kLE:
    case ExprKind::kGT:
    case ExprKind::kGE: {
      r = {0, 1};
      DataType ot = ops.a->dtype();
      if (!ot.is_integer() && !ot.is_bool()) break;
      ConstIntBound a = bound(*ops.a), b = bound(*ops.b);
      // d = a - b lies in [a.min - b.max, a.max - b.min].
      ConstIntBound d = bound_ops::add(a, bound_ops::neg(b));
      auto decide = [&](bool always, bool never) {
        if (always) r = {1, 1};
        else if (never) r = {0, 0};
      };
      switch (e.kind()) {
        case ExprKind::kEQ: decide(d.min == 0 && d.max == 0, d.min > 0 || d.max < 0); break;
        case ExprKind::kNE: decide(d.min > 0 || d.max < 0, d.min == 0 && d.max == 0); break;
        case ExprKind::kLT: decide(d.max < 0, d.min >= 0); break;
        case ExprKind::kLE: decide(d.max <= 0, d.min > 0); break;
        case ExprKind::kGT: decide(d.min > 0, d.max <= 0); break;
        default: decide(d.min >= 0, d.max < 0); break;
      }
      // Saturation keeps the sign and zero-ness of d, so the decisions above are sound.
      break;
    }
    case ExprKind::kAnd: {
      ConstIntBound a = bound(*ops.a), b = bound(*ops.b);
      r = {std::min(a.min, b.min) > 0 ? 1 : 0, (a.max > 0 && b.max > 0) ? 1 : 0};
      break;
    }
    case ExprKind::kOr: {
      ConstIntBound a = bound(*ops.a), b = bound(*ops.b);
      r = {(a.min > 0 || b.min > 0) ? 1 : 0, std::max(a.max, b.max) > 0 ? 1 : 0};
      break;
    }
    case ExprKind::kNot: {
      ConstIntBound a = bound(e.as<NotNode>()->a);
      r = {a.max > 0 ? 0 : 1, a.min > 0 ? 0 : 1};
      break;
    }
    case ExprKind::kSelect: {
      const auto* s = e.as<SelectNode>();
      ConstIntBound c = bound(s->cond);
      if (c.min > 0) r = bound(s->true_value);
      else if (c.max <= 0) r = bound(s->false_value);
      else r = bound_ops::unite(bound(s->true_value), bound(s->false_value));
      break;
    }
    case ExprKind::kCast: {
      const Expr& v = e.as<CastNode>()->value;
      ConstIntBound tr = type_range(t);
      if (t.is_bool()) {
        ConstIntBound b = v.dtype().is_integer() || v.dtype().is_bool() ? bound(v) : ConstIntBound{};
        r = (b.min > 0 || b.max < 0) ? ConstIntBound{1, 1} : (b.min == 0 && b.max == 0) ? ConstIntBound{0, 0} : tr;
      } else if (v.dtype().is_integer() || v.dtype().is_bool()) {
        ConstIntBound b = bound(v);
        r = (b.min >= tr.min && b.max <= tr.max) ? b : tr;
      } else {
        r = tr;  // float to integer: truncation of an unknown value
      }
      break;
    }
    case ExprKind::kRamp: {
      const auto* rp = e.as<RampNode>();
      ConstIntBound lanes{0, rp->lanes - 1};
      r = bound_ops::add(bound(rp->base), bound_ops::mul(bound(rp->stride), lanes));
      break;
    }
    case ExprKind::kBroadcast: r = bound(e.as<BroadcastNode>()->value); break;
    case ExprKind::kLet: {
      const auto* l = e.as<LetNode>();
      auto old = bounds.find(l->var);
      std::optional<ConstIntBound> saved;
      if (old != bounds.end()) saved = old->second;
      bounds[l->var] = (l->value.dtype().is_integer() || l->value.dtype().is_bool()) ? bound(l->value)
                                                                                   : type_range(l->var.dtype());
      r = bound(l->body);
      if (saved) bounds[l->var] = *saved;
      else bounds.erase(l->var);
      break;
    }
    case ExprKind::kCall: {
      const auto* c = e.as<CallNode>();
      if (c->op == intrin::kLikely && c->args.size() == 1) r = bound(c->args[0]);
      else r = type_range(t);
      break;
    }
    default: r = type_range(t); break;  // BufferLoad and others: the type's range
  }
  r = bound_ops::intersect(r, type_range(t));
  if (r.min > r.max) r.max = r.min;  // an empty domain: any answer holds; keep it well formed
  return r;
}

}  // namespace tessel::tir::arith
