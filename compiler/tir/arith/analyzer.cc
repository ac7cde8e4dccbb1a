// Analyzer (facts about variables), IntervalSet and eval_set (TVM's IntSet for intervals),
// detect_linear_equation and as_const. Bounds live in const_int_bound.cc, the simplifier in
// simplify.cc.
#include <algorithm>

#include "compiler/tir/arith/analyzer_impl.h"
#include "compiler/tir/util.h"
#include "support/error.h"

namespace tessel::tir::arith {

// ---- Analyzer ----

Analyzer::Analyzer() : impl_(new Impl()) {}
Analyzer::~Analyzer() { delete impl_; }

void Analyzer::bind(const Var& v, const Range& r) {
  TESSEL_CHECK(v.defined() && r.min.defined() && r.extent.defined(), "bind of an undefined variable or range");
  ConstIntBound mn = impl_->bound(r.min);
  ConstIntBound ext = impl_->bound(r.extent);
  ConstIntBound b{mn.min, bound_ops::add(bound_ops::add(mn.max, ext.max, false), -1, false)};
  if (b.max < b.min) b.max = b.min;  // an empty range: nothing runs, any fact holds
  bind(v, b);
}

void Analyzer::bind(const Var& v, const ConstIntBound& b) {
  TESSEL_CHECK(v.defined(), "bind of an undefined variable");
  TESSEL_CHECK(b.min <= b.max, "bind of {} to the empty bound [{}, {}]", v.name(), b.min, b.max);
  impl_->bounds[v] = b;
}

void Analyzer::unbind(const Var& v) { impl_->bounds.erase(v); }

std::optional<ConstIntBound> Analyzer::fact(const Var& v) const {
  auto it = impl_->bounds.find(v);
  if (it == impl_->bounds.end()) return std::nullopt;
  return it->second;
}

ConstIntBound Analyzer::const_int_bound(const Expr& e) { return impl_->bound(e); }

Expr Analyzer::simplify(const Expr& e) { return impl_->simplify(e); }

bool Analyzer::can_prove(const Expr& cond) {
  TESSEL_CHECK(cond.defined() && cond.dtype().is_bool(), "can_prove of a non-bool expression");
  Expr s = impl_->simplify(cond);
  if (const auto* b = s.as<BroadcastNode>()) s = b->value;
  if (is_const_int(s, 1)) return true;
  return impl_->bound(s).min >= 1;
}

std::optional<int64_t> as_const(const Expr& e) {
  Analyzer a;
  Expr s = a.simplify(e);
  if (const int64_t* v = as_const_int(s)) return *v;
  return std::nullopt;
}

std::optional<int64_t> eval_int(const Expr& e, const std::map<const VarNode*, int64_t>& env) {
  const DataType t = e.dtype();
  if (!t.is_scalar() || !(t.is_integer() || t.is_bool())) return std::nullopt;
  auto in_type = [&](std::optional<int64_t> v) -> std::optional<int64_t> {
    if (v && (*v < t.min_value() || *v > t.max_value())) return std::nullopt;
    return v;
  };
  switch (e.kind()) {
    case ExprKind::kIntImm:
      return e.as<IntImmNode>()->value;
    case ExprKind::kVar: {
      auto it = env.find(e.as<VarNode>());
      if (it == env.end()) return std::nullopt;
      return in_type(it->second);
    }
    case ExprKind::kNot: {
      const std::optional<int64_t> a = eval_int(e.as<NotNode>()->a, env);
      if (!a) return std::nullopt;
      return *a == 0 ? 1 : 0;
    }
    case ExprKind::kSelect: {
      const auto* op = e.as<SelectNode>();
      const std::optional<int64_t> c = eval_int(op->cond, env);
      if (!c) return std::nullopt;
      return in_type(eval_int(*c != 0 ? op->true_value : op->false_value, env));
    }
    case ExprKind::kCast: {
      const auto* op = e.as<CastNode>();
      const DataType from = op->value.dtype();
      if (!from.is_scalar() || !(from.is_integer() || from.is_bool())) return std::nullopt;
      return in_type(eval_int(op->value, env));  // a cast that would wrap: not folded
    }
    default:
      break;
  }
  if (!is_binary(e.kind())) return std::nullopt;
  const BinaryOperands ops = binary_operands(e);
  const std::optional<int64_t> a = eval_int(*ops.a, env);
  if (!a) return std::nullopt;
  // && and || decide on their first operand as the simplifier does on constants
  if (e.kind() == ExprKind::kAnd && *a == 0) return 0;
  if (e.kind() == ExprKind::kOr && *a != 0) return 1;
  const std::optional<int64_t> b = eval_int(*ops.b, env);
  if (!b) return std::nullopt;
  const int64_t x = *a, y = *b;
  int64_t r = 0;
  switch (e.kind()) {
    case ExprKind::kAdd:
      if (__builtin_add_overflow(x, y, &r)) return std::nullopt;
      break;
    case ExprKind::kSub:
      if (__builtin_sub_overflow(x, y, &r)) return std::nullopt;
      break;
    case ExprKind::kMul:
      if (__builtin_mul_overflow(x, y, &r)) return std::nullopt;
      break;
    case ExprKind::kDiv:
    case ExprKind::kMod:
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod: {
      if (y == 0 || (x == std::numeric_limits<int64_t>::min() && y == -1)) return std::nullopt;
      const int64_t q = x / y, m = x % y;
      const bool adjust = m != 0 && ((m < 0) != (y < 0));
      if (e.kind() == ExprKind::kDiv) r = q;
      if (e.kind() == ExprKind::kMod) r = m;
      if (e.kind() == ExprKind::kFloorDiv) r = adjust ? q - 1 : q;
      if (e.kind() == ExprKind::kFloorMod) r = adjust ? m + y : m;
      break;
    }
    case ExprKind::kMin:
      r = std::min(x, y);
      break;
    case ExprKind::kMax:
      r = std::max(x, y);
      break;
    case ExprKind::kEQ:
      r = x == y;
      break;
    case ExprKind::kNE:
      r = x != y;
      break;
    case ExprKind::kLT:
      r = x < y;
      break;
    case ExprKind::kLE:
      r = x <= y;
      break;
    case ExprKind::kGT:
      r = x > y;
      break;
    case ExprKind::kGE:
      r = x >= y;
      break;
    case ExprKind::kAnd:
      r = y != 0;
      break;
    case ExprKind::kOr:
      r = y != 0;
      break;
    default:
      return std::nullopt;
  }
  return in_type(r);
}

// ---- IntervalSet ----

namespace {

Expr simp(const Expr& e) {
  if (!e.defined()) return e;
  Analyzer a;
  return a.simplify(e);
}

}  // namespace

IntervalSet IntervalSet::point(Expr value) { return IntervalSet{value, value, false}; }

IntervalSet IntervalSet::from_range(const Range& r) {
  TESSEL_CHECK(r.min.defined() && r.extent.defined(), "from_range of an undefined range");
  return IntervalSet{r.min, simp(r.min + r.extent - 1), false};
}

IntervalSet IntervalSet::everything() { return IntervalSet{}; }
IntervalSet IntervalSet::empty() { return IntervalSet{Expr(), Expr(), true}; }

bool IntervalSet::is_single_point() const {
  return is_bounded() && (min.same_as(max) || structural_equal(min, max));
}

Range IntervalSet::to_range() const {
  TESSEL_CHECK(is_bounded(), "to_range of an unbounded or empty interval set");
  return Range{min, simp(max - min + 1)};
}

namespace {

// Marks a set empty when both ends are constants in the wrong order.
IntervalSet checked(IntervalSet s) {
  if (s.is_bounded()) {
    const int64_t* a = as_const_int(s.min);
    const int64_t* b = as_const_int(s.max);
    if (a && b && *a > *b) return IntervalSet::empty();
  }
  return s;
}

Expr combine(ExprKind k, const Expr& a, const Expr& b) {
  if (!a.defined() || !b.defined()) return Expr();
  return simp(make_binary(k, a, b));
}

}  // namespace

IntervalSet union_set(const IntervalSet& a, const IntervalSet& b) {
  if (a.is_empty) return b;
  if (b.is_empty) return a;
  return IntervalSet{combine(ExprKind::kMin, a.min, b.min), combine(ExprKind::kMax, a.max, b.max), false};
}

IntervalSet intersect_set(const IntervalSet& a, const IntervalSet& b) {
  if (a.is_empty || b.is_empty) return IntervalSet::empty();
  auto pick = [](ExprKind k, const Expr& x, const Expr& y) {
    if (!x.defined()) return y;
    if (!y.defined()) return x;
    return simp(make_binary(k, x, y));
  };
  return checked(IntervalSet{pick(ExprKind::kMax, a.min, b.min), pick(ExprKind::kMin, a.max, b.max), false});
}

namespace {

class SetEvaluator {
 public:
  explicit SetEvaluator(std::map<Var, IntervalSet, VarLess> dom) : dom_(std::move(dom)) {}

  IntervalSet eval(const Expr& e) {
    IntervalSet r = eval_node(e);
    if (r.is_empty) return r;
    return checked(IntervalSet{simp(r.min), simp(r.max), false});
  }

 private:
  bool depends_on_dom(const Expr& e) {
    return uses_var_if(e, [&](const VarNode* v) {
      for (const auto& [k, s] : dom_) {
        if (k.get() == v) return true;
      }
      return false;
    });
  }

  IntervalSet eval_node(const Expr& e) {
    if (!e.dtype().is_integer()) {
      return depends_on_dom(e) ? IntervalSet::everything() : IntervalSet::point(e);
    }
    auto ops = binary_operands(e);
    switch (e.kind()) {
      case ExprKind::kIntImm: return IntervalSet::point(e);
      case ExprKind::kVar: {
        auto it = dom_.find(Var::from(e));
        return it == dom_.end() ? IntervalSet::point(e) : it->second;
      }
      case ExprKind::kAdd:
      case ExprKind::kSub: {
        IntervalSet a = eval(*ops.a), b = eval(*ops.b);
        if (a.is_empty || b.is_empty) return IntervalSet::empty();
        if (e.kind() == ExprKind::kAdd) {
          return {combine(ExprKind::kAdd, a.min, b.min), combine(ExprKind::kAdd, a.max, b.max), false};
        }
        return {combine(ExprKind::kSub, a.min, b.max), combine(ExprKind::kSub, a.max, b.min), false};
      }
      case ExprKind::kMul: {
        IntervalSet a = eval(*ops.a), b = eval(*ops.b);
        if (a.is_empty || b.is_empty) return IntervalSet::empty();
        if (const int64_t* c = const_point(b)) return scale(a, b.min, *c);
        if (const int64_t* c = const_point(a)) return scale(b, a.min, *c);
        if (a.is_single_point() && b.is_single_point()) return IntervalSet::point(simp(a.min * b.min));
        return IntervalSet::everything();
      }
      case ExprKind::kDiv:
      case ExprKind::kFloorDiv: {
        IntervalSet a = eval(*ops.a), b = eval(*ops.b);
        if (a.is_empty || b.is_empty) return IntervalSet::empty();
        const int64_t* c = const_point(b);
        if (a.is_single_point() && b.is_single_point()) return IntervalSet::point(simp(make_binary(e.kind(), a.min, b.min)));
        if (!c || *c == 0) return IntervalSet::everything();
        // Both quotients are monotone in the dividend for a fixed divisor.
        Expr lo = combine(e.kind(), a.min, b.min), hi = combine(e.kind(), a.max, b.min);
        return *c > 0 ? IntervalSet{lo, hi, false} : IntervalSet{hi, lo, false};
      }
      case ExprKind::kMod:
      case ExprKind::kFloorMod: {
        IntervalSet a = eval(*ops.a), b = eval(*ops.b);
        if (a.is_empty || b.is_empty) return IntervalSet::empty();
        if (a.is_single_point() && b.is_single_point()) return IntervalSet::point(simp(make_binary(e.kind(), a.min, b.min)));
        const int64_t* c = const_point(b);
        if (!c || *c == 0) return IntervalSet::everything();
        return mod_set(e.kind(), a, *c, e.dtype());
      }
      case ExprKind::kMin:
      case ExprKind::kMax: {
        IntervalSet a = eval(*ops.a), b = eval(*ops.b);
        if (a.is_empty) return b.is_empty ? b : IntervalSet::empty();
        if (b.is_empty) return IntervalSet::empty();
        ExprKind k = e.kind();
        // min: an unbounded lower end stays unbounded; an unbounded upper end yields to the other.
        auto lo = [&](const Expr& x, const Expr& y) {
          if (k == ExprKind::kMin) return combine(k, x, y);
          return !x.defined() ? y : !y.defined() ? x : combine(k, x, y);
        };
        auto hi = [&](const Expr& x, const Expr& y) {
          if (k == ExprKind::kMax) return combine(k, x, y);
          return !x.defined() ? y : !y.defined() ? x : combine(k, x, y);
        };
        return {lo(a.min, b.min), hi(a.max, b.max), false};
      }
      case ExprKind::kSelect: {
        const auto* s = e.as<SelectNode>();
        Expr c = simp(s->cond);
        if (const int64_t* v = as_const_int(c); v && !depends_on_dom(c)) return eval(*v ? s->true_value : s->false_value);
        return union_set(eval(s->true_value), eval(s->false_value));
      }
      case ExprKind::kCast: {
        const Expr& v = e.as<CastNode>()->value;
        DataType from = v.dtype(), to = e.dtype();
        if (from.is_integer() && to.is_integer() && from.min_value() >= to.min_value() && from.max_value() <= to.max_value()) {
          IntervalSet a = eval(v);
          if (a.is_empty) return a;
          auto c = [&](const Expr& x) { return x.defined() ? simp(cast(to.element_of(), x)) : Expr(); };
          return {c(a.min), c(a.max), false};
        }
        return depends_on_dom(e) ? IntervalSet::everything() : IntervalSet::point(e);
      }
      case ExprKind::kRamp: {
        const auto* r = e.as<RampNode>();
        IntervalSet base = eval(r->base), stride = eval(r->stride);
        if (base.is_empty || stride.is_empty) return IntervalSet::empty();
        const int64_t* c = const_point(stride);
        if (!c) return IntervalSet::everything();
        IntervalSet span = *c >= 0 ? IntervalSet{make_const(r->base.dtype(), 0), make_const(r->base.dtype(), *c * (r->lanes - 1)), false}
                                   : IntervalSet{make_const(r->base.dtype(), *c * (r->lanes - 1)), make_const(r->base.dtype(), 0), false};
        return {combine(ExprKind::kAdd, base.min, span.min), combine(ExprKind::kAdd, base.max, span.max), false};
      }
      case ExprKind::kBroadcast: return eval(e.as<BroadcastNode>()->value);
      case ExprKind::kLet: {
        const auto* l = e.as<LetNode>();
        IntervalSet v = eval(l->value);
        dom_[l->var] = v;
        IntervalSet r = eval(l->body);
        dom_.erase(l->var);
        return r;
      }
      default: break;
    }
    return depends_on_dom(e) ? IntervalSet::everything() : IntervalSet::point(e);
  }

  static const int64_t* const_point(const IntervalSet& s) {
    if (!s.is_bounded()) return nullptr;
    const int64_t* a = as_const_int(s.min);
    const int64_t* b = as_const_int(s.max);
    return (a && b && *a == *b) ? a : nullptr;
  }

  static IntervalSet scale(const IntervalSet& a, const Expr& c_expr, int64_t c) {
    if (c == 0) return IntervalSet::point(c_expr);
    Expr lo = combine(ExprKind::kMul, a.min, c_expr), hi = combine(ExprKind::kMul, a.max, c_expr);
    return c > 0 ? IntervalSet{lo, hi, false} : IntervalSet{hi, lo, false};
  }

  static IntervalSet mod_set(ExprKind k, const IntervalSet& a, int64_t c, DataType t) {
    const int64_t* lo = a.min.defined() ? as_const_int(a.min) : nullptr;
    const int64_t* hi = a.max.defined() ? as_const_int(a.max) : nullptr;
    int64_t m = c < 0 ? -c : c;
    if (k == ExprKind::kFloorMod) {
      if (lo && hi && bound_ops::floor_div(*lo, c) == bound_ops::floor_div(*hi, c)) {
        int64_t off = bound_ops::floor_div(*lo, c) * c;
        return {make_const(t, *lo - off), make_const(t, *hi - off), false};
      }
      return c > 0 ? IntervalSet{make_const(t, 0), make_const(t, c - 1), false}
                   : IntervalSet{make_const(t, c + 1), make_const(t, 0), false};
    }
    // Truncating remainder: the dividend's sign, magnitude below |c|.
    if (lo && *lo >= 0) {
      if (hi && *hi < m) return {a.min, a.max, false};
      return {make_const(t, 0), make_const(t, m - 1), false};
    }
    if (hi && *hi <= 0) {
      if (lo && *lo > -m) return {a.min, a.max, false};
      return {make_const(t, -(m - 1)), make_const(t, 0), false};
    }
    return {make_const(t, -(m - 1)), make_const(t, m - 1), false};
  }

  std::map<Var, IntervalSet, VarLess> dom_;
};

}  // namespace

IntervalSet eval_set(const Expr& e, const std::map<Var, IntervalSet, VarLess>& dom) {
  TESSEL_CHECK(e.defined(), "eval_set of an undefined expression");
  return SetEvaluator(dom).eval(e);
}

// ---- linear forms ----

namespace {

// Coefficients (undefined = 0) of e in `vars`, plus the base at the end.
std::optional<std::vector<Expr>> linear(const Expr& e, const std::vector<Var>& vars) {
  size_t n = vars.size();
  for (size_t i = 0; i < n; ++i) {
    if (e.same_as(vars[i])) {
      std::vector<Expr> c(n + 1);
      c[i] = make_const(e.dtype(), 1);
      return c;
    }
  }
  auto uses_any = [&](const Expr& x) {
    return uses_var_if(x, [&](const VarNode* v) {
      return std::any_of(vars.begin(), vars.end(), [&](const Var& w) { return w.get() == v; });
    });
  };
  auto ops = binary_operands(e);
  auto plus = [](const Expr& a, const Expr& b, bool negate_b) -> Expr {
    if (!b.defined()) return a;
    if (!a.defined()) return negate_b ? make_binary(ExprKind::kSub, make_const(b.dtype(), 0), b) : b;
    return make_binary(negate_b ? ExprKind::kSub : ExprKind::kAdd, a, b);
  };
  switch (e.kind()) {
    case ExprKind::kAdd:
    case ExprKind::kSub: {
      auto a = linear(*ops.a, vars), b = linear(*ops.b, vars);
      if (!a || !b) return std::nullopt;
      for (size_t i = 0; i <= n; ++i) (*a)[i] = plus((*a)[i], (*b)[i], e.kind() == ExprKind::kSub);
      return a;
    }
    case ExprKind::kMul: {
      auto a = linear(*ops.a, vars), b = linear(*ops.b, vars);
      if (!a || !b) return std::nullopt;
      auto is_base_only = [&](const std::vector<Expr>& c) {
        return std::all_of(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(n), [](const Expr& x) { return !x.defined(); });
      };
      const std::vector<Expr>* lin = nullptr;
      Expr factor;
      if (is_base_only(*b)) lin = &*a, factor = (*b)[n];
      else if (is_base_only(*a)) lin = &*b, factor = (*a)[n];
      else return std::nullopt;
      std::vector<Expr> out(n + 1);
      for (size_t i = 0; i <= n; ++i) {
        if ((*lin)[i].defined()) out[i] = factor.defined() ? make_binary(ExprKind::kMul, (*lin)[i], factor) : Expr();
      }
      return out;
    }
    default: break;
  }
  if (uses_any(e)) return std::nullopt;
  std::vector<Expr> c(n + 1);
  c[n] = e;
  return c;
}

}  // namespace

std::optional<std::vector<Expr>> detect_linear_equation(const Expr& e, const std::vector<Var>& vars) {
  TESSEL_CHECK(e.defined() && e.dtype().is_integer() && e.dtype().is_scalar(),
               "detect_linear_equation of a non-integer expression");
  Analyzer a;
  auto c = linear(a.simplify(e), vars);
  if (!c) return std::nullopt;
  for (Expr& x : *c) x = x.defined() ? a.simplify(x) : make_const(e.dtype(), 0);
  return c;
}

}  // namespace tessel::tir::arith
