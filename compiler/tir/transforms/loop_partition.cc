#include "compiler/tir/transforms/loop_partition.h"

#include <map>
#include <optional>
#include <utility>

#include "compiler/tir/functor.h"
#include "compiler/tir/intrinsics.h"
#include "compiler/tir/transforms/renew_defs.h"
#include "compiler/tir/transforms/simplify.h"
#include "compiler/tir/transforms/transform_util.h"
#include "compiler/tir/util.h"
#include "support/error.h"

namespace tessel::tir::transforms {

namespace {

using arith::Analyzer;
using arith::ConstIntBound;

constexpr int64_t kLimit = int64_t{1} << 40;  // split points beyond this are not attempted

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

// A chosen split: the If to remove (none for a clipped range: the pieces' simplification
// decides the min/max) and the iterations [lo, hi] where its condition holds.
struct Split {
  const IfThenElseNode* branch = nullptr;
  int64_t lo = 0, hi = 0;
};

// Finds the first `if (likely(cond))` under a loop over `var` in [m, last] whose condition is
// provably true on a non-empty sub-range.
class SplitFinder {
 public:
  SplitFinder(Analyzer& a, Var var, int64_t m, int64_t last) : an_(a), var_(std::move(var)), m_(m), last_(last) {}

  std::optional<Split> find(const Stmt& s) {
    if (!s.defined()) return std::nullopt;
    switch (s.kind()) {
      case StmtKind::kFor: {
        const auto* f = s.as<ForNode>();
        // a clipped range (a tile's last, smaller piece: extent min(f, E - i * f)) is decided
        // by a min/max whose operands compare linearly in var_
        if (auto r = try_clip(f->min)) return r;
        if (auto r = try_clip(f->extent)) return r;
        return with_fact(an_, f->loop_var, Range{f->min, f->extent}, [&] { return find(f->body); });
      }
      case StmtKind::kIfThenElse: {
        const auto* i = s.as<IfThenElseNode>();
        if (auto r = try_branch(i)) return r;
        if (auto r = find(i->then_case)) return r;
        return find(i->else_case);
      }
      case StmtKind::kSeqStmt:
        for (const Stmt& x : s.as<SeqStmtNode>()->seq) {
          if (auto r = find(x)) return r;
        }
        return std::nullopt;
      case StmtKind::kLetStmt: {
        const auto* l = s.as<LetStmtNode>();
        if (!l->value.dtype().is_integer() || !l->value.dtype().is_scalar()) return find(l->body);
        return with_fact(an_, l->var, an_.const_int_bound(l->value), [&] { return find(l->body); });
      }
      case StmtKind::kAttrStmt: return find(s.as<AttrStmtNode>()->body);
      case StmtKind::kAssertStmt: return find(s.as<AssertStmtNode>()->body);
      case StmtKind::kAllocate: return find(s.as<AllocateNode>()->body);
      default: return std::nullopt;
    }
  }

 private:
  std::optional<Split> try_branch(const IfThenElseNode* op) {
    const auto* call = op->cond.as<CallNode>();
    if (!call || call->op != intrin::kLikely || call->args.size() != 1) return std::nullopt;
    std::optional<Split> r = try_cond(call->args[0]);
    if (r) r->branch = op;
    return r;
  }

  /// The first min(a, b) (a <= b decides it) or max(a, b) (a >= b) in `e`, outermost first,
  /// whose condition holds on a proper sub-range of the loop: splitting there lets each piece's
  /// simplification fold it (a sub-range that is the whole loop would not shrink anything).
  std::optional<Split> try_clip(const Expr& e) {
    if (!e.defined() || !e.dtype().is_int() || !e.dtype().is_scalar()) return std::nullopt;
    if (e.kind() == ExprKind::kMin || e.kind() == ExprKind::kMax) {
      const BinaryOperands ops = binary_operands(e);
      const Expr c = e.kind() == ExprKind::kMin ? (*ops.a <= *ops.b) : (*ops.a >= *ops.b);
      if (std::optional<Split> r = try_cond(c); r && (r->lo > m_ || r->hi < last_)) return r;
      // the other operand's side: where the min is b (the max is b)
      const Expr d = e.kind() == ExprKind::kMin ? (*ops.b <= *ops.a) : (*ops.b >= *ops.a);
      if (std::optional<Split> r = try_cond(d); r && (r->lo > m_ || r->hi < last_)) return r;
    }
    if (is_binary(e.kind())) {
      const BinaryOperands ops = binary_operands(e);
      if (auto r = try_clip(*ops.a)) return r;
      return try_clip(*ops.b);
    }
    if (const auto* c = e.as<CastNode>()) return try_clip(c->value);
    return std::nullopt;
  }

  /// The iterations [lo, hi] of the loop where the comparison `cond` (linear in var_ with a
  /// constant coefficient) provably holds, or nullopt.
  std::optional<Split> try_cond(const Expr& cond) {
    Expr c = an_.simplify(cond);
    ExprKind k = c.kind();
    if (k != ExprKind::kLT && k != ExprKind::kLE && k != ExprKind::kGT && k != ExprKind::kGE) return std::nullopt;
    auto ops = binary_operands(c);
    if (!ops.a->dtype().is_int() || !ops.a->dtype().is_scalar()) return std::nullopt;
    auto lin = arith::detect_linear_equation(*ops.a - *ops.b, {var_});
    if (!lin) return std::nullopt;
    const int64_t* a = as_const_int((*lin)[0]);
    if (!a || *a == 0 || *a > kLimit || *a < -kLimit) return std::nullopt;
    ConstIntBound b = an_.const_int_bound((*lin)[1]);
    // cond is a*i + B op 0 for every B in [b.min, b.max]; it holds for all of them when
    // a*i <= K (for < and <=) or a*i >= K (for > and >=).
    bool upper = k == ExprKind::kLT || k == ExprKind::kLE;
    int64_t end = upper ? b.max : b.min;
    if (end <= -kLimit || end >= kLimit) return std::nullopt;
    int64_t K = k == ExprKind::kLT ? -end - 1 : k == ExprKind::kLE ? -end : k == ExprKind::kGT ? 1 - end : -end;
    int64_t lo = m_, hi = last_;
    bool i_below = upper == (*a > 0);  // the solution is i <= bound (else i >= bound)
    if (i_below) hi = std::min(hi, floor_div(K, *a));
    else lo = std::max(lo, ceil_div(K, *a));
    if (lo > hi) return std::nullopt;
    return Split{nullptr, lo, hi};
  }

  Analyzer& an_;
  Var var_;
  int64_t m_, last_;
};

// Replaces one If (by identity) with its then-branch.
class TakeThen : public IRMutator {
 public:
  explicit TakeThen(const IfThenElseNode* target) : target_(target) {}

 protected:
  Stmt mutate(const IfThenElseNode* op, const Stmt& self) override {
    if (op == target_) return mutate_stmt(op->then_case);
    return IRMutator::mutate(op, self);
  }

 private:
  const IfThenElseNode* target_;
};

class Partitioner : public IRMutator {
 public:
  explicit Partitioner(Analyzer& a) : an_(a) {}

 protected:
  Stmt mutate(const ForNode* op, const Stmt& self) override {
    if (op->kind == ForKind::kSerial) {
      if (auto r = partition(op)) return *r;
    }
    Stmt body = with_fact(an_, op->loop_var, Range{op->min, op->extent}, [&] { return mutate_stmt(op->body); });
    if (body.same_as(op->body)) return self;
    return for_loop(op->loop_var, op->min, op->extent, op->kind, body, op->thread_tag);
  }

 private:
  std::optional<Stmt> partition(const ForNode* op) {
    const int64_t* m = as_const_int(an_.simplify(op->min));
    const int64_t* e = as_const_int(an_.simplify(op->extent));
    if (!m || !e || *e < 1 || *m <= -kLimit || *m >= kLimit || *e >= kLimit) return std::nullopt;
    int64_t last = *m + *e - 1;
    std::optional<Split> split = with_fact(an_, op->loop_var, ConstIntBound{*m, last},
                                           [&] { return SplitFinder(an_, op->loop_var, *m, last).find(op->body); });
    if (!split) return std::nullopt;
    DataType t = op->loop_var.dtype();
    std::vector<Stmt> pieces;
    auto piece = [&](int64_t lo, int64_t hi, const Stmt& body, bool fresh) {
      if (lo > hi) return;
      Stmt loop = for_loop(op->loop_var, make_const(t, lo), make_const(t, hi - lo + 1), ForKind::kSerial, body, "");
      if (fresh) loop = renew_defs(loop);
      pieces.push_back(mutate_stmt(simplify(loop, an_)));
    };
    piece(*m, split->lo - 1, op->body, true);
    piece(split->lo, split->hi, split->branch ? TakeThen(split->branch).mutate_stmt(op->body) : op->body, false);
    piece(split->hi + 1, last, op->body, true);
    std::vector<Stmt> kept;
    for (Stmt& s : pieces) {
      if (!is_no_op(s)) kept.push_back(std::move(s));
    }
    return seq(std::move(kept));
  }

  Analyzer& an_;
};

}  // namespace

Stmt loop_partition(const Stmt& s, arith::Analyzer& analyzer) {
  TESSEL_CHECK(s.defined(), "loop_partition of an undefined statement");
  return Partitioner(analyzer).mutate_stmt(s);
}

PrimFunc loop_partition(const PrimFunc& f) {
  TESSEL_CHECK(f.defined(), "loop_partition of an undefined function");
  arith::Analyzer a;
  Stmt body = loop_partition(f->body, a);
  return body.same_as(f->body) ? f : f.with_body(body);
}

}  // namespace tessel::tir::transforms
