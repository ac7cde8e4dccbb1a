#include "compiler/tir/transforms/simplify.h"

#include <optional>
#include <utility>

#include "compiler/tir/functor.h"
#include "compiler/tir/intrinsics.h"
#include "compiler/tir/util.h"
#include "support/error.h"

namespace tessel::tir::transforms {

namespace {

using arith::Analyzer;
using arith::ConstIntBound;

// The condition under likely(), or the condition itself.
const Expr& strip_likely(const Expr& c) {
  const auto* call = c.as<CallNode>();
  if (call && call->op == intrin::kLikely && call->args.size() == 1) return call->args[0];
  return c;
}

// For `v op c` (v a variable, c a constant): the bounds v has where the condition is `holds`.
std::optional<std::pair<Var, ConstIntBound>> var_fact(const Expr& cond, bool holds) {
  const Expr& c = strip_likely(cond);
  if (!is_comparison(c.kind()) || c.kind() == ExprKind::kEQ || c.kind() == ExprKind::kNE) return std::nullopt;
  auto ops = binary_operands(c);
  const auto* v = ops.a->as<VarNode>();
  const int64_t* k = as_const_int(*ops.b);
  if (!v || !k || !ops.a->dtype().is_integer()) return std::nullopt;
  ExprKind kind = c.kind();
  if (!holds) {
    switch (kind) {
      case ExprKind::kLT: kind = ExprKind::kGE; break;
      case ExprKind::kLE: kind = ExprKind::kGT; break;
      case ExprKind::kGT: kind = ExprKind::kLE; break;
      default: kind = ExprKind::kLT; break;
    }
  }
  ConstIntBound b;
  switch (kind) {
    case ExprKind::kLT:
      if (*k == ConstIntBound::kNegInf) return std::nullopt;
      b.max = *k - 1;
      break;
    case ExprKind::kLE: b.max = *k; break;
    case ExprKind::kGT:
      if (*k == ConstIntBound::kPosInf) return std::nullopt;
      b.min = *k + 1;
      break;
    default: b.min = *k; break;
  }
  return std::make_pair(Var::from(*ops.a), b);
}

class StmtSimplifier : public IRMutator {
 public:
  explicit StmtSimplifier(Analyzer& a) : analyzer_(a) {}

  Expr mutate_expr(const Expr& e) override { return e.defined() ? analyzer_.simplify(e) : e; }

 protected:
  Stmt mutate(const ForNode* op, const Stmt& self) override {
    Expr mn = mutate_expr(op->min), ext = mutate_expr(op->extent);
    ConstIntBound eb = analyzer_.const_int_bound(ext);
    if (eb.max <= 0) return no_op();
    bool inlinable = op->kind == ForKind::kSerial || op->kind == ForKind::kParallel ||
                     op->kind == ForKind::kUnrolled || op->kind == ForKind::kVectorized;
    if (inlinable && is_const_int(ext, 1)) return mutate_stmt(substitute(op->body, op->loop_var, mn));
    std::optional<ConstIntBound> saved = analyzer_.fact(op->loop_var);
    analyzer_.bind(op->loop_var, Range{mn, ext});
    Stmt body = mutate_stmt(op->body);
    restore(op->loop_var, saved);
    if (is_no_op(body)) return no_op();
    if (mn.same_as(op->min) && ext.same_as(op->extent) && body.same_as(op->body)) return self;
    return for_loop(op->loop_var, mn, ext, op->kind, body, op->thread_tag);
  }

  Stmt mutate(const IfThenElseNode* op, const Stmt& self) override {
    Expr c = mutate_expr(op->cond);
    if (const int64_t* v = as_const_int(strip_likely(c))) {
      if (*v) return mutate_stmt(op->then_case);
      return op->else_case.defined() ? mutate_stmt(op->else_case) : no_op();
    }
    Stmt t = in_branch(c, true, op->then_case);
    Stmt e = op->else_case.defined() ? in_branch(c, false, op->else_case) : Stmt();
    if (e.defined() && is_no_op(e)) e = Stmt();
    if (is_no_op(t) && !e.defined()) return no_op();
    if (c.same_as(op->cond) && t.same_as(op->then_case) && e.same_as(op->else_case)) return self;
    return if_then_else(c, t, e);
  }

  Stmt mutate(const LetStmtNode* op, const Stmt& self) override {
    Expr v = mutate_expr(op->value);
    bool is_int = v.dtype().is_scalar() && (v.dtype().is_integer() || v.dtype().is_bool());
    std::optional<ConstIntBound> saved = analyzer_.fact(op->var);
    if (is_int) analyzer_.bind(op->var, analyzer_.const_int_bound(v));
    Stmt body = mutate_stmt(op->body);
    if (is_int) restore(op->var, saved);
    if (v.same_as(op->value) && body.same_as(op->body)) return self;
    return let_stmt(op->var, v, body);
  }

  // The node an attribute is about (a Var) is a name, not a value: it is kept as it is.
  Stmt mutate(const AttrStmtNode* op, const Stmt& self) override {
    Expr v = mutate_expr(op->value);
    Stmt body = mutate_stmt(op->body);
    if (v.same_as(op->value) && body.same_as(op->body)) return self;
    return attr_stmt(op->node, op->key, v, body);
  }

  Stmt mutate(const SeqStmtNode* op, const Stmt& self) override {
    std::vector<Stmt> out;
    bool changed = false;
    for (const Stmt& s : op->seq) {
      Stmt m = mutate_stmt(s);
      changed |= !m.same_as(s);
      if (is_no_op(m)) {
        changed = true;
        continue;
      }
      out.push_back(m);
    }
    if (!changed) return self;
    return seq(std::move(out));
  }

 private:
  // Mutates a branch with the fact the condition gives (when it is a simple variable bound).
  Stmt in_branch(const Expr& cond, bool holds, const Stmt& s) {
    auto fact = var_fact(cond, holds);
    if (!fact) return mutate_stmt(s);
    std::optional<ConstIntBound> saved = analyzer_.fact(fact->first);
    ConstIntBound old = analyzer_.const_int_bound(fact->first);
    ConstIntBound now{std::max(old.min, fact->second.min), std::min(old.max, fact->second.max)};
    if (now.min > now.max) return mutate_stmt(s);  // the branch cannot run; leave it to the bounds
    analyzer_.bind(fact->first, now);
    Stmt r = mutate_stmt(s);
    restore(fact->first, saved);
    return r;
  }

  void restore(const Var& v, const std::optional<ConstIntBound>& saved) {
    if (saved) analyzer_.bind(v, *saved);
    else analyzer_.unbind(v);
  }

  Analyzer& analyzer_;
};

}  // namespace

Stmt simplify(const Stmt& s, arith::Analyzer& analyzer) {
  TESSEL_CHECK(s.defined(), "simplify of an undefined statement");
  return StmtSimplifier(analyzer).mutate_stmt(s);
}

PrimFunc simplify(const PrimFunc& f) {
  TESSEL_CHECK(f.defined(), "simplify of an undefined function");
  arith::Analyzer a;
  Stmt body = simplify(f->body, a);
  return body.same_as(f->body) ? f : f.with_body(body);
}

}  // namespace tessel::tir::transforms
