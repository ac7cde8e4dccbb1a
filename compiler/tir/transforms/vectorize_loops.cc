#include "compiler/tir/transforms/vectorize_loops.h"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "compiler/tir/arith/analyzer.h"
#include "compiler/tir/functor.h"
#include "compiler/tir/intrinsics.h"
#include "compiler/tir/printer.h"
#include "compiler/tir/transforms/simplify.h"
#include "compiler/tir/transforms/transform_util.h"
#include "compiler/tir/util.h"
#include "support/error.h"

namespace tessel::tir::transforms {

namespace {

using arith::Analyzer;

constexpr int64_t kMaxLanes = 65535;

// `e` with `lanes` lanes (a scalar is broadcast).
Expr widen(const Expr& e, int lanes) { return lanes > 1 && e.dtype().is_scalar() ? broadcast(e, lanes) : e; }

// What the body may not contain, and the buffer accesses the dependence rule looks at.
class LegalityChecker : public IRVisitor {
 public:
  std::string reason;

  void check(const Stmt& body) {
    visit_stmt(body);
    if (!reason.empty()) return;
    for (const VarNode* data : written_) {
      const std::vector<Access>& acc = accesses_[data];
      for (const Access& a : acc) {
        if (a.buffer != acc[0].buffer || !structural_equal_indices(a.indices, acc[0].indices)) {
          reason = fmt::format("buffer '{}' is written and also accessed at other indices (a dependence between iterations)",
                               acc[0].buffer->name);
          return;
        }
      }
    }
  }

  void visit_expr(const Expr& e) override {
    if (!reason.empty() || !e.defined()) return;
    if (e.dtype().is_vector()) {
      reason = "an expression is already a vector (" + to_text(e) + ")";
      return;
    }
    IRVisitor::visit_expr(e);
  }
  void visit_stmt(const Stmt& s) override {
    if (reason.empty()) IRVisitor::visit_stmt(s);
  }

 protected:
  using IRVisitor::visit;
  void visit(const ForNode* op) override { reason = fmt::format("nested loop '{}'", op->loop_var.name()); }
  void visit(const AllocateNode* op) override { reason = fmt::format("allocation of '{}' inside the body", op->buffer->name); }
  void visit(const CallNode* op) override {
    if (op->op == intrin::kAccessPtr) {
      reason = "an access_ptr region";
      return;
    }
    if (!intrin::is_pure(op->op)) {
      reason = fmt::format("call '{}' has side effects", op->op);
      return;
    }
    IRVisitor::visit(op);
  }
  void visit(const BufferLoadNode* op) override {
    accesses_[op->buffer->data.get()].push_back({op->buffer.get(), &op->indices});
    IRVisitor::visit(op);
  }
  void visit(const BufferStoreNode* op) override {
    accesses_[op->buffer->data.get()].push_back({op->buffer.get(), &op->indices});
    written_.push_back(op->buffer->data.get());
    IRVisitor::visit(op);
  }

 private:
  struct Access {
    const BufferNode* buffer;
    const std::vector<Expr>* indices;
  };
  static bool structural_equal_indices(const std::vector<Expr>* a, const std::vector<Expr>* b) {
    if (a->size() != b->size()) return false;
    for (size_t i = 0; i < a->size(); ++i) {
      if (!structural_equal((*a)[i], (*b)[i])) return false;
    }
    return true;
  }
  std::map<const VarNode*, std::vector<Access>> accesses_;
  std::vector<const VarNode*> written_;
};

// Rewrites a loop body on vectors of `lanes` lanes; on failure `reason` says why.
class Widener : public IRMutator {
 public:
  Widener(Analyzer& an, const Var& v, const Expr& mn, int lanes)
      : an_(an), var_(v), lanes_(lanes), ramp_(ramp(mn, make_const(v.dtype(), 1), lanes)) {}

  std::string reason;

  Expr mutate_expr(const Expr& e) override {
    if (!e.defined() || !reason.empty()) return e;
    if (is_binary(e.kind())) {
      auto ops = binary_operands(e);
      Expr a = mutate_expr(*ops.a), b = mutate_expr(*ops.b);
      if (!reason.empty() || (a.same_as(*ops.a) && b.same_as(*ops.b))) return e;
      int l = std::max(a.dtype().lanes, b.dtype().lanes);
      return make_binary(e.kind(), widen(a, l), widen(b, l));
    }
    return IRMutator::mutate_expr(e);
  }
  Stmt mutate_stmt(const Stmt& s) override {
    if (!s.defined() || !reason.empty()) return s;
    return IRMutator::mutate_stmt(s);
  }

 protected:
  using IRMutator::mutate;

  Expr mutate(const VarNode*, const Expr& self) override {
    if (self.same_as(var_)) return ramp_;
    auto it = vars_.find(Var::from(self));
    return it == vars_.end() ? self : it->second;
  }
  Expr mutate(const SelectNode* op, const Expr& self) override {
    Expr c = mutate_expr(op->cond), t = mutate_expr(op->true_value), f = mutate_expr(op->false_value);
    if (!reason.empty()) return self;
    if (c.same_as(op->cond) && t.same_as(op->true_value) && f.same_as(op->false_value)) return self;
    int l = std::max({c.dtype().lanes, t.dtype().lanes, f.dtype().lanes});
    return select(c, widen(t, l), widen(f, l));
  }
  Expr mutate(const BufferLoadNode* op, const Expr& self) override {
    std::vector<Expr> idx;
    if (!mutate_exprs(op->indices, idx) || !reason.empty()) return self;
    if (!linear_indices(op->buffer, idx)) return self;
    return buffer_load(op->buffer, std::move(idx));
  }
  Expr mutate(const LetNode* op, const Expr& self) override {
    Expr v = mutate_expr(op->value);
    if (!reason.empty()) {
      reason = fmt::format("let '{}' is bound to a value that cannot be vectorised ({})", op->var.name(), reason);
      return self;
    }
    Var nv = op->var;
    if (v.dtype().is_vector()) {
      v = an_.simplify(v);
      if (v.as<RampNode>() || v.as<BroadcastNode>()) {
        vars_[op->var] = v;
        return mutate_expr(op->body);
      }
      nv = Var(op->var.name(), v.dtype());
      vars_[op->var] = nv;
    }
    Expr body = mutate_expr(op->body);
    if (!reason.empty() || (v.same_as(op->value) && body.same_as(op->body))) return self;
    return let(nv, v, body);
  }
  Expr mutate(const CallNode* op, const Expr& self) override {
    std::vector<Expr> args;
    if (!mutate_exprs(op->args, args) || !reason.empty()) return self;
    int l = 1;
    for (const Expr& a : args) l = std::max(l, static_cast<int>(a.dtype().lanes));
    for (Expr& a : args) {
      if (!a.dtype().is_handle()) a = widen(a, l);
    }
    return call(op->dtype.with_lanes(l), op->op, std::move(args));
  }

  Stmt mutate(const BufferStoreNode* op, const Stmt& self) override {
    Expr v = mutate_expr(op->value);
    std::vector<Expr> idx;
    mutate_exprs(op->indices, idx);
    if (!reason.empty()) return self;
    if (!linear_indices(op->buffer, idx)) return self;
    bool distinct = false;
    for (const Expr& i : idx) {
      const auto* r = i.as<RampNode>();
      if (r && an_.can_prove(ne(r->stride, make_const(r->stride.dtype(), 0)))) distinct = true;
    }
    if (!distinct) {
      reason = fmt::format("the lanes of the store to '{}' may hit one element", op->buffer->name);
      return self;
    }
    return buffer_store(op->buffer, an_.simplify(widen(v, lanes_)), std::move(idx));
  }
  Stmt mutate(const IfThenElseNode* op, const Stmt& self) override {
    Expr c = mutate_expr(op->cond);
    if (!reason.empty()) return self;
    if (c.dtype().is_vector()) {
      reason = "the if condition depends on the loop variable";
      return self;
    }
    Stmt t = mutate_stmt(op->then_case);
    Stmt e = op->else_case.defined() ? mutate_stmt(op->else_case) : Stmt();
    if (!reason.empty()) return self;
    return if_then_else(c, t, e);
  }
  Stmt mutate(const AssertStmtNode* op, const Stmt& self) override {
    Expr c = mutate_expr(op->cond);
    if (!reason.empty()) return self;
    if (c.dtype().is_vector()) {
      reason = "the assert condition depends on the loop variable";
      return self;
    }
    return assert_stmt(c, op->message, mutate_stmt(op->body));
  }
  Stmt mutate(const AttrStmtNode* op, const Stmt& self) override {
    Expr v = mutate_expr(op->value);
    if (!reason.empty()) return self;
    if (v.dtype().is_vector()) {
      reason = fmt::format("the value of attribute '{}' depends on the loop variable", op->key);
      return self;
    }
    return attr_stmt(op->node, op->key, v, mutate_stmt(op->body));
  }
  Stmt mutate(const LetStmtNode* op, const Stmt& self) override {
    Expr v = mutate_expr(op->value);
    if (!reason.empty()) {
      reason = fmt::format("let '{}' is bound to a value that cannot be vectorised ({})", op->var.name(), reason);
      return self;
    }
    if (v.dtype().is_vector()) {
      v = an_.simplify(v);
      if (v.as<RampNode>() || v.as<BroadcastNode>()) {
        // A linear value is substituted, so indices built from it stay Ramps.
        vars_[op->var] = v;
        return mutate_stmt(op->body);
      }
      Var nv(op->var.name(), v.dtype());
      vars_[op->var] = nv;
      Stmt body = mutate_stmt(op->body);
      if (!reason.empty()) return self;
      return let_stmt(nv, v, body);
    }
    Stmt body = mutate_stmt(op->body);
    if (!reason.empty()) return self;
    return let_stmt(op->var, v, body);
  }

 private:
  // Simplifies the vector indices in place; false (with a reason) when one is not a Ramp or
  // Broadcast.
  bool linear_indices(const Buffer& b, std::vector<Expr>& idx) {
    for (Expr& i : idx) {
      if (i.dtype().is_scalar()) continue;
      i = an_.simplify(i);
      if (!i.as<RampNode>() && !i.as<BroadcastNode>()) {
        reason = fmt::format("an index of '{}' is not linear in '{}' ({})", b->name, var_.name(), to_text(i));
        return false;
      }
    }
    return true;
  }

  Analyzer& an_;
  Var var_;
  int lanes_;
  Expr ramp_;
  std::map<Var, Expr, VarLess> vars_;
};

class LoopVectorizer : public IRMutator {
 public:
  explicit LoopVectorizer(std::vector<std::string>* serial) : serial_(serial) {}

 protected:
  using IRMutator::mutate;

  Stmt mutate(const ForNode* op, const Stmt& self) override {
    Stmt body = with_fact(an_, op->loop_var, Range{op->min, op->extent}, [&] { return mutate_stmt(op->body); });
    if (op->kind != ForKind::kVectorized) {
      if (body.same_as(op->body)) return self;
      return for_loop(op->loop_var, op->min, op->extent, op->kind, body, op->thread_tag);
    }
    Expr ext = an_.simplify(op->extent);
    const int64_t* n = as_const_int(ext);
    if (!n) throw_user_error("vectorize: loop '{}' has non-constant extent {}", op->loop_var.name(), to_text(ext));
    if (*n > kMaxLanes) {
      throw_user_error("vectorize: loop '{}' has {} lanes, more than {}", op->loop_var.name(), *n, kMaxLanes);
    }
    if (*n <= 0) return no_op();
    if (*n == 1) return simplify(substitute(body, op->loop_var, op->min), an_);
    LegalityChecker check;
    check.check(body);
    std::string reason = check.reason;
    if (reason.empty()) {
      Widener w(an_, op->loop_var, op->min, static_cast<int>(*n));
      Stmt v = w.mutate_stmt(body);
      if (w.reason.empty()) return v;
      reason = w.reason;
    }
    if (serial_) serial_->push_back(fmt::format("loop '{}' stays serial: {}", op->loop_var.name(), reason));
    return for_loop(op->loop_var, op->min, op->extent, ForKind::kSerial, body, "");
  }

 private:
  Analyzer an_;
  std::vector<std::string>* serial_;
};

}  // namespace

Stmt vectorize_loops(const Stmt& s, std::vector<std::string>* serial) {
  TESSEL_CHECK(s.defined(), "vectorize_loops of an undefined statement");
  return LoopVectorizer(serial).mutate_stmt(s);
}

PrimFunc vectorize_loops(const PrimFunc& f, std::vector<std::string>* serial) {
  TESSEL_CHECK(f.defined(), "vectorize_loops of an undefined function");
  Stmt body = vectorize_loops(f->body, serial);
  return body.same_as(f->body) ? f : f.with_body(body);
}

}  // namespace tessel::tir::transforms
