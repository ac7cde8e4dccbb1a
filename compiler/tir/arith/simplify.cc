// The simplifier (in the manner of TVM's RewriteSimplifier + CanonicalSimplifier and Halide's
// Simplify): children first, then one rule set per node kind:
//  - signed integer +, -, * by constants: a canonical Sum (terms in order of first appearance,
//    like terms combined, constants folded); the result is rebuilt only when every coefficient
//    fits the type;
//  - floordiv/floormod by a positive constant: terms whose coefficient the divisor divides leave
//    the division, the rest is decided by its bounds; nested floordiv/floormod fold;
//    div/mod become floordiv/floormod when both operands are provably non-negative;
//  - min/max decided by the bounds of the difference of their operands;
//  - comparisons of signed integers: both sides moved into one Sum, decided by its bounds, else
//    written `positive terms op negative terms + constant` with the coefficients' gcd divided out;
//  - bool identities, select/cast/let of constants, vector ramp/broadcast arithmetic;
//  - any integer or bool scalar whose bounds are a single value becomes that constant.
// Floats: only immediates are folded (no algebraic identities, so -0.0 and NaN stay exact).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "compiler/tir/arith/analyzer_impl.h"
#include "compiler/tir/intrinsics.h"
#include "compiler/tir/util.h"
#include "support/error.h"

namespace tessel::tir::arith {

namespace {

bool fits(DataType t, int64_t v) { return v >= t.min_value() && v <= t.max_value(); }
bool is_signed_scalar(DataType t) { return t.is_int() && t.is_scalar(); }

}  // namespace

// ---- Sum ----

void Sum::add_constant(int64_t c) {
  if (__builtin_add_overflow(constant, c, &constant)) overflow = true;
}

void Sum::add_term(const Expr& term, int64_t coef) {
  for (auto& [t, c] : terms) {
    if (structural_equal(t, term)) {
      if (__builtin_add_overflow(c, coef, &c)) overflow = true;
      return;
    }
  }
  terms.emplace_back(term, coef);
}

void Sum::add_expr(const Expr& e, int64_t scale) {
  if (scale == 0) return;
  if (const int64_t* v = as_const_int(e)) {
    int64_t p;
    if (__builtin_mul_overflow(*v, scale, &p)) overflow = true;
    else add_constant(p);
    return;
  }
  auto ops = binary_operands(e);
  switch (e.kind()) {
    case ExprKind::kAdd:
      add_expr(*ops.a, scale);
      add_expr(*ops.b, scale);
      return;
    case ExprKind::kSub: {
      add_expr(*ops.a, scale);
      int64_t ns;
      if (__builtin_mul_overflow(scale, int64_t{-1}, &ns)) overflow = true;
      else add_expr(*ops.b, ns);
      return;
    }
    case ExprKind::kMul: {
      const int64_t* kb = as_const_int(*ops.b);
      const int64_t* ka = as_const_int(*ops.a);
      if (kb || ka) {
        int64_t p;
        if (__builtin_mul_overflow(scale, kb ? *kb : *ka, &p)) overflow = true;
        else add_expr(kb ? *ops.a : *ops.b, p);
        return;
      }
      break;
    }
    default: break;
  }
  add_term(e, scale);
}

void Sum::compact() {
  std::erase_if(terms, [](const auto& p) { return p.second == 0; });
}

std::optional<Expr> sum_to_expr(const Sum& s0) {
  Sum s = s0;
  s.compact();
  if (s.overflow) return std::nullopt;
  DataType t = s.dtype;
  auto ok = [&](int64_t v) { return v != std::numeric_limits<int64_t>::min() && fits(t, v) && fits(t, -v); };
  for (const auto& [x, c] : s.terms) {
    if (!ok(c)) return std::nullopt;
  }
  if (!fits(t, s.constant) || (s.constant < 0 && !ok(s.constant))) return std::nullopt;
  auto scaled = [&](const Expr& x, int64_t c) {
    return c == 1 ? x : make_binary(ExprKind::kMul, x, make_const(t, c));
  };
  std::vector<size_t> order;
  size_t lead = s.terms.size();
  for (size_t i = 0; i < s.terms.size(); ++i) {
    if (s.terms[i].second > 0) {
      lead = i;
      break;
    }
  }
  if (lead < s.terms.size()) order.push_back(lead);
  for (size_t i = 0; i < s.terms.size(); ++i) {
    if (i != lead) order.push_back(i);
  }
  Expr out;
  if (lead == s.terms.size() && !s.terms.empty() && s.constant > 0) out = make_const(t, s.constant);
  for (size_t i : order) {
    const auto& [x, c] = s.terms[i];
    if (!out.defined()) out = scaled(x, c);
    else if (c > 0) out = make_binary(ExprKind::kAdd, out, scaled(x, c));
    else out = make_binary(ExprKind::kSub, out, scaled(x, -c));
  }
  bool constant_done = lead == s.terms.size() && !s.terms.empty() && s.constant > 0;
  if (!out.defined()) return make_const(t, s.constant);
  if (!constant_done && s.constant > 0) out = make_binary(ExprKind::kAdd, out, make_const(t, s.constant));
  if (!constant_done && s.constant < 0) out = make_binary(ExprKind::kSub, out, make_const(t, -s.constant));
  return out;
}

namespace {

std::optional<int64_t> fold_int(ExprKind k, int64_t a, int64_t b, DataType t) {
  __int128 r;
  switch (k) {
    case ExprKind::kAdd: r = static_cast<__int128>(a) + b; break;
    case ExprKind::kSub: r = static_cast<__int128>(a) - b; break;
    case ExprKind::kMul: r = static_cast<__int128>(a) * b; break;
    case ExprKind::kDiv:
      if (b == 0) return std::nullopt;
      r = static_cast<__int128>(a) / b;
      break;
    case ExprKind::kMod:
      if (b == 0) return std::nullopt;
      r = static_cast<__int128>(a) % b;
      break;
    case ExprKind::kFloorDiv:
      if (b == 0) return std::nullopt;
      r = (b == -1) ? -static_cast<__int128>(a) : bound_ops::floor_div(a, b);
      break;
    case ExprKind::kFloorMod:
      if (b == 0) return std::nullopt;
      r = bound_ops::floor_mod(a, b);
      break;
    case ExprKind::kMin: r = std::min(a, b); break;
    case ExprKind::kMax: r = std::max(a, b); break;
    case ExprKind::kEQ: r = a == b; break;
    case ExprKind::kNE: r = a != b; break;
    case ExprKind::kLT: r = a < b; break;
    case ExprKind::kLE: r = a <= b; break;
    case ExprKind::kGT: r = a > b; break;
    case ExprKind::kGE: r = a >= b; break;
    case ExprKind::kAnd: r = (a != 0) && (b != 0); break;
    case ExprKind::kOr: r = (a != 0) || (b != 0); break;
    default: return std::nullopt;
  }
  if (r < static_cast<__int128>(t.min_value()) || r > static_cast<__int128>(t.max_value())) return std::nullopt;
  return static_cast<int64_t>(r);
}

std::optional<Expr> fold_float(ExprKind k, double a, double b, DataType t) {
  auto make = [&](double v) { return make_float(t, t.bits == 32 ? static_cast<double>(static_cast<float>(v)) : v); };
  switch (k) {
    case ExprKind::kAdd: return make(a + b);
    case ExprKind::kSub: return make(a - b);
    case ExprKind::kMul: return make(a * b);
    case ExprKind::kDiv:
      if (b == 0.0) return std::nullopt;
      return make(a / b);
    case ExprKind::kMin: return make(std::fmin(a, b));
    case ExprKind::kMax: return make(std::fmax(a, b));
    case ExprKind::kEQ: return bool_imm(a == b);
    case ExprKind::kNE: return bool_imm(a != b);
    case ExprKind::kLT: return bool_imm(a < b);
    case ExprKind::kLE: return bool_imm(a <= b);
    case ExprKind::kGT: return bool_imm(a > b);
    case ExprKind::kGE: return bool_imm(a >= b);
    default: return std::nullopt;
  }
}

ExprKind negate_comparison(ExprKind k) {
  switch (k) {
    case ExprKind::kEQ: return ExprKind::kNE;
    case ExprKind::kNE: return ExprKind::kEQ;
    case ExprKind::kLT: return ExprKind::kGE;
    case ExprKind::kLE: return ExprKind::kGT;
    case ExprKind::kGT: return ExprKind::kLE;
    default: return ExprKind::kLT;  // kGE
  }
}

ExprKind mirror_comparison(ExprKind k) {
  switch (k) {
    case ExprKind::kLT: return ExprKind::kGT;
    case ExprKind::kLE: return ExprKind::kGE;
    case ExprKind::kGT: return ExprKind::kLT;
    case ExprKind::kGE: return ExprKind::kLE;
    default: return k;
  }
}

int64_t ceil_div(int64_t a, int64_t b) { return -bound_ops::floor_div(-a, b); }

class Simplifier {
 public:
  explicit Simplifier(AnalyzerState& impl) : impl_(impl) {}

  Expr visit(const Expr& e) {
    Expr r = visit_node(e);
    DataType t = r.dtype();
    // Calls stay calls (likely(c) keeps its hint even when c is decided).
    if (t.is_scalar() && (t.is_integer() || t.is_bool()) && !r.as<IntImmNode>() && !r.as<CallNode>()) {
      ConstIntBound b = impl_.bound(r);
      if (b.is_const() && fits(t, b.min)) return make_const(t, b.min);
    }
    return r;
  }

 private:
  Expr visit_node(const Expr& e) {
    if (is_binary(e.kind())) return visit_binary(e);
    switch (e.kind()) {
      case ExprKind::kIntImm:
      case ExprKind::kFloatImm:
      case ExprKind::kStringImm:
      case ExprKind::kVar: return e;
      case ExprKind::kNot: return visit_not(e);
      case ExprKind::kSelect: return visit_select(e);
      case ExprKind::kCast: return visit_cast(e);
      case ExprKind::kBufferLoad: {
        const auto* l = e.as<BufferLoadNode>();
        std::vector<Expr> idx;
        bool changed = visit_all(l->indices, idx);
        return changed ? buffer_load(l->buffer, std::move(idx)) : e;
      }
      case ExprKind::kRamp: {
        const auto* r = e.as<RampNode>();
        Expr b = visit(r->base), s = visit(r->stride);
        if (is_const_int(s, 0)) return broadcast(b, r->lanes);
        return (b.same_as(r->base) && s.same_as(r->stride)) ? e : ramp(b, s, r->lanes);
      }
      case ExprKind::kBroadcast: {
        const auto* b = e.as<BroadcastNode>();
        Expr v = visit(b->value);
        return v.same_as(b->value) ? e : broadcast(v, b->lanes);
      }
      case ExprKind::kLet: return visit_let(e);
      case ExprKind::kCall: {
        const auto* c = e.as<CallNode>();
        std::vector<Expr> args;
        bool changed = visit_all(c->args, args);
        return changed ? call(c->dtype, c->op, std::move(args)) : e;
      }
      default: break;
    }
    throw_internal_error("simplify: unknown expression kind {}", static_cast<int>(e.kind()));
  }

  bool visit_all(const std::vector<Expr>& in, std::vector<Expr>& out) {
    bool changed = false;
    for (const Expr& x : in) {
      out.push_back(visit(x));
      changed |= !out.back().same_as(x);
    }
    return changed;
  }

  static Expr rebuild(const Expr& e, ExprKind k, const Expr& a, const Expr& b) {
    auto ops = binary_operands(e);
    if (ops.a && a.same_as(*ops.a) && b.same_as(*ops.b)) return e;
    return make_binary(k, a, b);
  }

  Expr visit_binary(const Expr& e) {
    auto ops = binary_operands(e);
    return binary(e, e.kind(), visit(*ops.a), visit(*ops.b));
  }

  // Rewrites k(a, b) for simplified a and b; `e` is the original node (returned when nothing
  // changes) or null.
  Expr binary(const Expr& e, ExprKind k, const Expr& a, const Expr& b) {
    DataType t = a.dtype();
    if (t.is_vector()) return vector_binary(e, k, a, b);
    if (is_comparison(k)) return compare(e, k, a, b);
    if (k == ExprKind::kAnd || k == ExprKind::kOr) return logical(e, k, a, b);
    if (t.is_float()) {
      const auto* fa = a.as<FloatImmNode>();
      const auto* fb = b.as<FloatImmNode>();
      if (fa && fb) {
        if (auto r = fold_float(k, fa->value, fb->value, t)) return *r;
      }
      return rebuild(e, k, a, b);
    }
    const int64_t* ca = as_const_int(a);
    const int64_t* cb = as_const_int(b);
    if (ca && cb) {
      if (auto r = fold_int(k, *ca, *cb, t)) return make_const(t, *r);
      return rebuild(e, k, a, b);
    }
    if (!is_signed_scalar(t)) return unsigned_binary(e, k, a, b);
    switch (k) {
      case ExprKind::kAdd:
      case ExprKind::kSub: {
        Sum s{t};
        s.add_expr(a, 1);
        s.add_expr(b, k == ExprKind::kAdd ? 1 : -1);
        if (auto r = sum_to_expr(s)) return *r;
        return rebuild(e, k, a, b);
      }
      case ExprKind::kMul: {
        if (ca || cb) {
          Sum s{t};
          s.add_expr(ca ? b : a, ca ? *ca : *cb);
          if (auto r = sum_to_expr(s)) return *r;
        }
        return rebuild(e, k, a, b);
      }
      case ExprKind::kDiv:
      case ExprKind::kMod: {
        if (cb && *cb == 1) return k == ExprKind::kDiv ? a : make_const(t, 0);
        if (impl_.bound(a).min >= 0 && impl_.bound(b).min > 0) {
          return binary(Expr(), k == ExprKind::kDiv ? ExprKind::kFloorDiv : ExprKind::kFloorMod, a, b);
        }
        return rebuild(e, k, a, b);
      }
      case ExprKind::kFloorDiv:
        if (cb && *cb > 0) return floordiv_const(e, a, *cb);
        return rebuild(e, k, a, b);
      case ExprKind::kFloorMod:
        if (cb && *cb > 0) return floormod_const(e, a, *cb);
        return rebuild(e, k, a, b);
      case ExprKind::kMin:
      case ExprKind::kMax: return min_max(e, k, a, b);
      default: break;
    }
    return rebuild(e, k, a, b);
  }

  // Unsigned integers wrap, so only identities that hold modulo 2^bits are used.
  Expr unsigned_binary(const Expr& e, ExprKind k, const Expr& a, const Expr& b) {
    DataType t = a.dtype();
    const int64_t* cb = as_const_int(b);
    const int64_t* ca = as_const_int(a);
    switch (k) {
      case ExprKind::kAdd:
        if (cb && *cb == 0) return a;
        if (ca && *ca == 0) return b;
        break;
      case ExprKind::kSub:
        if (cb && *cb == 0) return a;
        break;
      case ExprKind::kMul:
        if (cb && *cb == 1) return a;
        if (ca && *ca == 1) return b;
        if ((cb && *cb == 0) || (ca && *ca == 0)) return make_const(t, 0);
        break;
      case ExprKind::kDiv:
      case ExprKind::kFloorDiv:
        if (cb && *cb == 1) return a;
        break;
      case ExprKind::kMod:
      case ExprKind::kFloorMod:
        if (cb && *cb == 1) return make_const(t, 0);
        break;
      case ExprKind::kMin:
      case ExprKind::kMax: {
        if (structural_equal(a, b)) return a;
        ConstIntBound ba = impl_.bound(a), bb = impl_.bound(b);
        bool a_le_b = ba.max <= bb.min, b_le_a = bb.max <= ba.min;
        if (k == ExprKind::kMin && a_le_b) return a;
        if (k == ExprKind::kMin && b_le_a) return b;
        if (k == ExprKind::kMax && a_le_b) return b;
        if (k == ExprKind::kMax && b_le_a) return a;
        break;
      }
      default: break;
    }
    return rebuild(e, k, a, b);
  }

  std::optional<Expr> to_expr(const Sum& s) { return sum_to_expr(s); }

  Expr floordiv_const(const Expr& e, const Expr& a, int64_t c) {
    DataType t = a.dtype();
    if (c == 1) return a;
    if (const auto* inner = a.as<FloorDivNode>()) {
      const int64_t* c2 = as_const_int(inner->b);
      int64_t prod;
      if (c2 && *c2 > 0 && !__builtin_mul_overflow(c, *c2, &prod) && fits(t, prod)) {
        return floordiv_const(Expr(), inner->a, prod);
      }
    }
    Sum s{t};
    s.add_expr(a, 1);
    s.compact();
    if (s.overflow) return rebuild(e, ExprKind::kFloorDiv, a, make_const(t, c));
    Sum q{t}, r{t};
    for (const auto& [x, k] : s.terms) {
      if (k % c == 0) q.add_term(x, k / c);
      else r.add_term(x, k);
    }
    r.add_constant(s.constant);
    std::optional<Expr> rx = to_expr(r);
    if (!rx) return rebuild(e, ExprKind::kFloorDiv, a, make_const(t, c));
    ConstIntBound br = impl_.bound(*rx);
    if (br.min != ConstIntBound::kNegInf && br.max != ConstIntBound::kPosInf &&
        bound_ops::floor_div(br.min, c) == bound_ops::floor_div(br.max, c)) {
      q.add_constant(bound_ops::floor_div(br.min, c));
    } else if (q.terms.empty()) {
      return rebuild(e, ExprKind::kFloorDiv, a, make_const(t, c));
    } else {
      q.add_term(make_binary(ExprKind::kFloorDiv, *rx, make_const(t, c)), 1);
    }
    if (auto out = to_expr(q)) return *out;
    return rebuild(e, ExprKind::kFloorDiv, a, make_const(t, c));
  }

  Expr floormod_const(const Expr& e, const Expr& a, int64_t c) {
    DataType t = a.dtype();
    if (c == 1) return make_const(t, 0);
    if (const auto* inner = a.as<FloorModNode>()) {
      const int64_t* c2 = as_const_int(inner->b);
      if (c2 && *c2 > 0 && *c2 % c == 0) return floormod_const(Expr(), inner->a, c);
    }
    Sum s{t};
    s.add_expr(a, 1);
    s.compact();
    if (s.overflow) return rebuild(e, ExprKind::kFloorMod, a, make_const(t, c));
    Sum r{t};
    for (const auto& [x, k] : s.terms) {
      if (k % c != 0) r.add_term(x, k);
    }
    r.add_constant(bound_ops::floor_mod(s.constant, c));
    std::optional<Expr> rx = to_expr(r);
    if (!rx) return rebuild(e, ExprKind::kFloorMod, a, make_const(t, c));
    ConstIntBound br = impl_.bound(*rx);
    if (br.min != ConstIntBound::kNegInf && br.max != ConstIntBound::kPosInf &&
        bound_ops::floor_div(br.min, c) == bound_ops::floor_div(br.max, c)) {
      r.add_constant(-bound_ops::floor_div(br.min, c) * c);
      if (auto out = to_expr(r)) return *out;
    }
    Expr m = make_binary(ExprKind::kFloorMod, *rx, make_const(t, c));
    auto ops = binary_operands(e);
    if (ops.a && structural_equal(m, e)) return e;
    return m;
  }

  Expr min_max(const Expr& e, ExprKind k, const Expr& a, const Expr& b) {
    if (structural_equal(a, b)) return a;
    DataType t = a.dtype();
    Sum d{t};
    d.add_expr(a, 1);
    d.add_expr(b, -1);
    ConstIntBound bd;
    if (auto dx = to_expr(d)) bd = impl_.bound(*dx);
    else bd = bound_ops::add(impl_.bound(a), bound_ops::neg(impl_.bound(b)));
    bool a_le_b = bd.max <= 0, b_le_a = bd.min >= 0;
    if (k == ExprKind::kMin) {
      if (a_le_b) return a;
      if (b_le_a) return b;
    } else {
      if (b_le_a) return a;
      if (a_le_b) return b;
    }
    return rebuild(e, k, a, b);
  }

  Expr compare(const Expr& e, ExprKind k, const Expr& a, const Expr& b) {
    const ExprKind k0 = k;
    DataType t = a.dtype();
    if (t.is_float()) {
      const auto* fa = a.as<FloatImmNode>();
      const auto* fb = b.as<FloatImmNode>();
      if (fa && fb) {
        if (auto r = fold_float(k, fa->value, fb->value, t)) return *r;
      }
      return rebuild(e, k, a, b);
    }
    const int64_t* ca = as_const_int(a);
    const int64_t* cb = as_const_int(b);
    if (ca && cb) return bool_imm(*fold_int(k, *ca, *cb, DataType::int64()) != 0);
    if (!is_signed_scalar(t)) {
      Expr r = rebuild(e, k, a, b);
      ConstIntBound br = impl_.bound(r);
      if (br.is_const()) return bool_imm(br.min != 0);
      return r;
    }
    Sum s{t};
    s.add_expr(a, 1);
    s.add_expr(b, -1);
    s.compact();
    if (s.overflow || s.constant == std::numeric_limits<int64_t>::min()) return rebuild(e, k, a, b);
    if (s.terms.empty()) return bool_imm(*fold_int(k, s.constant, 0, DataType::int64()) != 0);
    // Now S op C with S the terms and C = -constant.
    int64_t c = -s.constant;
    Sum terms{t};
    terms.terms = s.terms;
    if (auto sx = to_expr(terms)) {
      ConstIntBound bs = impl_.bound(*sx);
      auto decided = [&](bool yes, bool no) -> std::optional<Expr> {
        if (yes) return bool_imm(true);
        if (no) return bool_imm(false);
        return std::nullopt;
      };
      std::optional<Expr> d;
      switch (k) {
        case ExprKind::kEQ: d = decided(bs.min == c && bs.max == c, c < bs.min || c > bs.max); break;
        case ExprKind::kNE: d = decided(c < bs.min || c > bs.max, bs.min == c && bs.max == c); break;
        case ExprKind::kLT: d = decided(bs.max < c, bs.min >= c); break;
        case ExprKind::kLE: d = decided(bs.max <= c, bs.min > c); break;
        case ExprKind::kGT: d = decided(bs.min > c, bs.max <= c); break;
        default: d = decided(bs.min >= c, bs.max < c); break;
      }
      if (d) return *d;
    }
    int64_t g = 0;
    for (const auto& [x, coef] : s.terms) g = std::gcd(g, coef < 0 ? -coef : coef);
    if (g > 1) {
      switch (k) {
        case ExprKind::kLT: c = bound_ops::floor_div(c - 1, g) + 1; break;
        case ExprKind::kLE: c = bound_ops::floor_div(c, g); break;
        case ExprKind::kGT: c = ceil_div(c + 1, g) - 1; break;
        case ExprKind::kGE: c = ceil_div(c, g); break;
        default:
          if (c % g != 0) return bool_imm(k == ExprKind::kNE);
          c /= g;
          break;
      }
      for (auto& [x, coef] : s.terms) coef /= g;
    }
    bool any_positive = std::any_of(s.terms.begin(), s.terms.end(), [](const auto& p) { return p.second > 0; });
    if (!any_positive) {
      for (auto& [x, coef] : s.terms) coef = -coef;
      c = -c;
      k = mirror_comparison(k);
    }
    Sum lhs{t}, rhs{t};
    for (const auto& [x, coef] : s.terms) {
      if (coef > 0) lhs.add_term(x, coef);
      else rhs.add_term(x, -coef);
    }
    rhs.add_constant(c);
    auto lx = to_expr(lhs);
    auto rx = to_expr(rhs);
    if (!lx || !rx) return rebuild(e, k0, a, b);
    Expr out = make_binary(k, *lx, *rx);
    if (e.defined() && structural_equal(out, e)) return e;
    return out;
  }

  Expr logical(const Expr& e, ExprKind k, const Expr& a, const Expr& b) {
    const int64_t* ca = as_const_int(a);
    const int64_t* cb = as_const_int(b);
    if (k == ExprKind::kAnd) {
      if ((ca && *ca == 0) || (cb && *cb == 0)) return bool_imm(false);
      if (ca) return b;
      if (cb) return a;
    } else {
      if ((ca && *ca != 0) || (cb && *cb != 0)) return bool_imm(true);
      if (ca) return b;
      if (cb) return a;
    }
    if (structural_equal(a, b)) return a;
    return rebuild(e, k, a, b);
  }

  Expr vector_binary(const Expr& e, ExprKind k, const Expr& a, const Expr& b) {
    const auto* ba = a.as<BroadcastNode>();
    const auto* bb = b.as<BroadcastNode>();
    int lanes = a.dtype().lanes;
    if (ba && bb) return broadcast(binary(Expr(), k, ba->value, bb->value), lanes);
    const auto* ra = a.as<RampNode>();
    const auto* rb = b.as<RampNode>();
    if (a.dtype().is_integer()) {
      if (k == ExprKind::kAdd || k == ExprKind::kSub) {
        if (ra && bb) return make_ramp(binary(Expr(), k, ra->base, bb->value), ra->stride, lanes);
        if (ra && rb) {
          return make_ramp(binary(Expr(), k, ra->base, rb->base), binary(Expr(), k, ra->stride, rb->stride), lanes);
        }
        if (ba && rb) {
          Expr stride = k == ExprKind::kAdd ? rb->stride : binary(Expr(), ExprKind::kSub, make_const(rb->stride.dtype(), 0), rb->stride);
          return make_ramp(binary(Expr(), k, ba->value, rb->base), stride, lanes);
        }
      }
      if (k == ExprKind::kMul) {
        if (ra && bb) {
          return make_ramp(binary(Expr(), k, ra->base, bb->value), binary(Expr(), k, ra->stride, bb->value), lanes);
        }
        if (ba && rb) {
          return make_ramp(binary(Expr(), k, rb->base, ba->value), binary(Expr(), k, rb->stride, ba->value), lanes);
        }
      }
    }
    return rebuild(e, k, a, b);
  }

  static Expr make_ramp(const Expr& base, const Expr& stride, int lanes) {
    if (is_const_int(stride, 0)) return broadcast(base, lanes);
    return ramp(base, stride, lanes);
  }

  Expr visit_not(const Expr& e) {
    const Expr& x = e.as<NotNode>()->a;
    Expr a = visit(x);
    if (const int64_t* c = as_const_int(a)) return bool_imm(*c == 0);
    if (const auto* n = a.as<NotNode>()) return n->a;
    if (const auto* b = a.as<BroadcastNode>()) return broadcast(visit(logical_not(b->value)), b->lanes);
    if (is_comparison(a.kind())) {
      auto ops = binary_operands(a);
      if (!ops.a->dtype().is_float()) return binary(Expr(), negate_comparison(a.kind()), *ops.a, *ops.b);
    }
    return a.same_as(x) ? e : logical_not(a);
  }

  Expr visit_select(const Expr& e) {
    const auto* s = e.as<SelectNode>();
    Expr c = visit(s->cond);
    const int64_t* cc = as_const_int(c);
    if (const auto* bc = c.as<BroadcastNode>()) cc = as_const_int(bc->value);
    if (cc) return visit(*cc ? s->true_value : s->false_value);
    Expr t = visit(s->true_value), f = visit(s->false_value);
    if (structural_equal(t, f)) return t;
    if (c.same_as(s->cond) && t.same_as(s->true_value) && f.same_as(s->false_value)) return e;
    return select(c, t, f);
  }

  Expr visit_cast(const Expr& e) {
    DataType t = e.dtype();
    const Expr& x = e.as<CastNode>()->value;
    Expr v = visit(x);
    if (const auto* b = v.as<BroadcastNode>()) return broadcast(visit(cast(t.element_of(), b->value)), b->lanes);
    if (const int64_t* c = as_const_int(v)) {
      if (t.is_bool()) return bool_imm(*c != 0);
      if (t.is_float()) return make_float(t, t.bits == 32 ? static_cast<double>(static_cast<float>(*c)) : static_cast<double>(*c));
      if (t.is_integer()) {
        if (fits(t, *c)) return make_const(t, *c);
        if (t.bits < 64) {
          // Two's-complement wrap to the target width.
          uint64_t mask = (uint64_t{1} << t.bits) - 1;
          uint64_t u = static_cast<uint64_t>(*c) & mask;
          int64_t w = static_cast<int64_t>(u);
          if (t.is_int() && (u >> (t.bits - 1)) != 0) w = static_cast<int64_t>(u) - static_cast<int64_t>(mask) - 1;
          return make_const(t, w);
        }
        if (t.is_int()) return make_const(t, *c);
      }
    }
    if (const auto* f = v.as<FloatImmNode>()) {
      if (t.is_float()) return make_float(t, t.bits == 32 ? static_cast<double>(static_cast<float>(f->value)) : f->value);
      if (t.is_integer() && std::isfinite(f->value)) {
        double tr = std::trunc(f->value);
        if (tr >= static_cast<double>(t.min_value()) && tr <= static_cast<double>(t.max_value()) && std::abs(tr) < 9.0e18) {
          return make_const(t, static_cast<int64_t>(tr));
        }
      }
    }
    return v.same_as(x) ? e : cast(t, v);
  }

  Expr visit_let(const Expr& e) {
    const auto* l = e.as<LetNode>();
    Expr v = visit(l->value);
    if (v.as<IntImmNode>() || v.as<FloatImmNode>() || v.as<VarNode>()) return visit(substitute(l->body, l->var, v));
    auto old = impl_.bounds.find(l->var);
    std::optional<ConstIntBound> saved;
    if (old != impl_.bounds.end()) saved = old->second;
    if (v.dtype().is_integer() || v.dtype().is_bool()) impl_.bounds[l->var] = impl_.bound(v);
    Expr body = visit(l->body);
    if (saved) impl_.bounds[l->var] = *saved;
    else impl_.bounds.erase(l->var);
    if (!uses_var(body, l->var)) return body;
    if (v.same_as(l->value) && body.same_as(l->body)) return e;
    return let(l->var, v, body);
  }

  AnalyzerState& impl_;
};

}  // namespace

Expr AnalyzerState::simplify(const Expr& e) {
  TESSEL_CHECK(e.defined(), "simplify of an undefined expression");
  Expr r = Simplifier(*this).visit(e);
  if (!r.same_as(e) && structural_equal(r, e)) return e;
  return r;
}

}  // namespace tessel::tir::arith
