#include "compiler/tir/util.h"

#include <cmath>
#include <cstring>

#include "compiler/tir/intrinsics.h"
#include "support/error.h"

namespace tessel::tir {

namespace {

class PostOrder : public IRVisitor {
 public:
  explicit PostOrder(const std::function<void(const Expr&)>& fn) : fn_(fn) {}
  void visit_expr(const Expr& e) override {
    if (!e.defined()) return;
    IRVisitor::visit_expr(e);
    fn_(e);
  }

 private:
  const std::function<void(const Expr&)>& fn_;
};

class VarUse : public IRVisitor {
 public:
  explicit VarUse(const std::function<bool(const VarNode*)>& pred) : pred_(pred) {}
  bool found = false;
  void visit_expr(const Expr& e) override {
    if (!found) IRVisitor::visit_expr(e);
  }
  void visit_stmt(const Stmt& s) override {
    if (!found) IRVisitor::visit_stmt(s);
  }

 protected:
  void visit(const VarNode* op) override { found = found || pred_(op); }
  void visit(const ForNode* op) override {
    found = found || pred_(op->loop_var.get());
    IRVisitor::visit(op);
  }
  void visit_buffer(const Buffer& b) override { found = found || pred_(b->data.get()); }

 private:
  const std::function<bool(const VarNode*)>& pred_;
};

class Substituter : public IRMutator {
 public:
  explicit Substituter(const std::map<Var, Expr, VarLess>& vmap) : vmap_(vmap) {}

 protected:
  using IRMutator::mutate;
  Expr mutate(const VarNode* op, const Expr& self) override {
    auto it = vmap_.find(Var::from(self));
    return it == vmap_.end() ? self : it->second;
  }
  void check_binder(const Var& v) {
    TESSEL_CHECK(!vmap_.count(v), "substitute: variable {} is rebound inside the scope", v.name());
  }
  Expr mutate(const LetNode* op, const Expr& self) override {
    check_binder(op->var);
    return IRMutator::mutate(op, self);
  }
  Stmt mutate(const LetStmtNode* op, const Stmt& self) override {
    check_binder(op->var);
    return IRMutator::mutate(op, self);
  }
  Stmt mutate(const ForNode* op, const Stmt& self) override {
    check_binder(op->loop_var);
    return IRMutator::mutate(op, self);
  }

 private:
  const std::map<Var, Expr, VarLess>& vmap_;
};

// Structural comparison with a correspondence of bound (and optionally free) variables.
class Equal {
 public:
  explicit Equal(bool map_free) : map_free_(map_free) {}

  bool var(const VarNode* a, const VarNode* b) {
    if (a->dtype != b->dtype) return false;
    auto it = vars_.find(a);
    if (it != vars_.end()) return it->second == b;
    if (a == b) {  // a free variable on both sides: it corresponds to itself from now on
      auto back = back_.find(b);
      if (back != back_.end()) return back->second == a;
      return bind(a, b);
    }
    if (!map_free_) return false;
    return bind(a, b);
  }
  bool bind(const VarNode* a, const VarNode* b) {
    if (a->dtype != b->dtype) return false;
    auto it = vars_.find(a);
    if (it != vars_.end()) return it->second == b;
    if (back_.count(b)) return back_[b] == a;
    vars_[a] = b;
    back_[b] = a;
    return true;
  }
  bool buffer(const Buffer& a, const Buffer& b) {
    auto it = bufs_.find(a.get());
    if (it != bufs_.end()) return it->second == b.get();
    if (!buffer_fields(a, b)) return false;
    bufs_[a.get()] = b.get();
    return true;
  }
  bool buffer_fields(const Buffer& a, const Buffer& b) {
    if (a->dtype != b->dtype || a->scope != b->scope || a->shape.size() != b->shape.size() ||
        a->strides.size() != b->strides.size()) {
      return false;
    }
    // Bound data variables (Allocate, parameters) were bound before; free ones follow var()'s rule
    // (identity unless map_free_vars), so loads of two distinct free buffers never compare equal.
    if (!var(a->data.get(), b->data.get())) return false;
    return exprs(a->shape, b->shape) && exprs(a->strides, b->strides) && expr(a->elem_offset, b->elem_offset);
  }
  bool exprs(const std::vector<Expr>& a, const std::vector<Expr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!expr(a[i], b[i])) return false;
    }
    return true;
  }
  bool expr(const Expr& a, const Expr& b) {
    if (a.defined() != b.defined()) return false;
    // No shortcut on identical handles: a shared sub-tree may hold variables that correspond
    // to different ones on the two sides.
    if (!a.defined()) return true;
    if (a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
    if (is_binary(a.kind())) {
      auto x = binary_operands(a), y = binary_operands(b);
      return expr(*x.a, *y.a) && expr(*x.b, *y.b);
    }
    switch (a.kind()) {
      case ExprKind::kIntImm: return a.as<IntImmNode>()->value == b.as<IntImmNode>()->value;
      case ExprKind::kFloatImm: {
        double x = a.as<FloatImmNode>()->value, y = b.as<FloatImmNode>()->value;
        return std::memcmp(&x, &y, sizeof x) == 0;
      }
      case ExprKind::kStringImm: return a.as<StringImmNode>()->value == b.as<StringImmNode>()->value;
      case ExprKind::kVar: return var(a.as<VarNode>(), b.as<VarNode>());
      case ExprKind::kNot: return expr(a.as<NotNode>()->a, b.as<NotNode>()->a);
      case ExprKind::kSelect: {
        auto *x = a.as<SelectNode>(), *y = b.as<SelectNode>();
        return expr(x->cond, y->cond) && expr(x->true_value, y->true_value) && expr(x->false_value, y->false_value);
      }
      case ExprKind::kCast: return expr(a.as<CastNode>()->value, b.as<CastNode>()->value);
      case ExprKind::kBufferLoad: {
        auto *x = a.as<BufferLoadNode>(), *y = b.as<BufferLoadNode>();
        return buffer(x->buffer, y->buffer) && exprs(x->indices, y->indices);
      }
      case ExprKind::kRamp: {
        auto *x = a.as<RampNode>(), *y = b.as<RampNode>();
        return x->lanes == y->lanes && expr(x->base, y->base) && expr(x->stride, y->stride);
      }
      case ExprKind::kBroadcast: {
        auto *x = a.as<BroadcastNode>(), *y = b.as<BroadcastNode>();
        return x->lanes == y->lanes && expr(x->value, y->value);
      }
      case ExprKind::kLet: {
        auto *x = a.as<LetNode>(), *y = b.as<LetNode>();
        return expr(x->value, y->value) && bind(x->var.get(), y->var.get()) && expr(x->body, y->body);
      }
      case ExprKind::kCall: {
        auto *x = a.as<CallNode>(), *y = b.as<CallNode>();
        return x->op == y->op && exprs(x->args, y->args);
      }
      default: return false;
    }
  }
  bool stmt(const Stmt& a, const Stmt& b) {
    if (a.defined() != b.defined()) return false;
    if (!a.defined()) return true;
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
      case StmtKind::kLetStmt: {
        auto *x = a.as<LetStmtNode>(), *y = b.as<LetStmtNode>();
        return expr(x->value, y->value) && bind(x->var.get(), y->var.get()) && stmt(x->body, y->body);
      }
      case StmtKind::kAttrStmt: {
        auto *x = a.as<AttrStmtNode>(), *y = b.as<AttrStmtNode>();
        if (x->key != y->key || !expr(x->value, y->value)) return false;
        if (x->node.defined() != y->node.defined()) return false;
        if (x->node.defined()) {
          const auto *vx = x->node.as<VarNode>(), *vy = y->node.as<VarNode>();
          bool ok = (vx && vy) ? (var(vx, vy) || bind(vx, vy)) : expr(x->node, y->node);
          if (!ok) return false;
        }
        return stmt(x->body, y->body);
      }
      case StmtKind::kAssertStmt: {
        auto *x = a.as<AssertStmtNode>(), *y = b.as<AssertStmtNode>();
        return x->message == y->message && expr(x->cond, y->cond) && stmt(x->body, y->body);
      }
      case StmtKind::kAllocate: {
        auto *x = a.as<AllocateNode>(), *y = b.as<AllocateNode>();
        if (!bind(x->buffer->data.get(), y->buffer->data.get())) return false;
        return buffer(x->buffer, y->buffer) && stmt(x->body, y->body);
      }
      case StmtKind::kBufferStore: {
        auto *x = a.as<BufferStoreNode>(), *y = b.as<BufferStoreNode>();
        return buffer(x->buffer, y->buffer) && expr(x->value, y->value) && exprs(x->indices, y->indices);
      }
      case StmtKind::kFor: {
        auto *x = a.as<ForNode>(), *y = b.as<ForNode>();
        return x->kind == y->kind && x->thread_tag == y->thread_tag && expr(x->min, y->min) &&
               expr(x->extent, y->extent) && bind(x->loop_var.get(), y->loop_var.get()) && stmt(x->body, y->body);
      }
      case StmtKind::kIfThenElse: {
        auto *x = a.as<IfThenElseNode>(), *y = b.as<IfThenElseNode>();
        return expr(x->cond, y->cond) && stmt(x->then_case, y->then_case) && stmt(x->else_case, y->else_case);
      }
      case StmtKind::kSeqStmt: {
        auto *x = a.as<SeqStmtNode>(), *y = b.as<SeqStmtNode>();
        if (x->seq.size() != y->seq.size()) return false;
        for (size_t i = 0; i < x->seq.size(); ++i) {
          if (!stmt(x->seq[i], y->seq[i])) return false;
        }
        return true;
      }
      case StmtKind::kEvaluate: return expr(a.as<EvaluateNode>()->value, b.as<EvaluateNode>()->value);
    }
    return false;
  }

 private:
  bool map_free_;
  std::map<const VarNode*, const VarNode*> vars_, back_;
  std::map<const BufferNode*, const BufferNode*> bufs_;
};

class AccessCollector : public IRVisitor {
 public:
  BufferAccess acc;

 protected:
  using IRVisitor::visit;
  void visit(const BufferLoadNode* op) override {
    acc.reads.insert(op->buffer->data.get());
    IRVisitor::visit(op);
  }
  void visit(const BufferStoreNode* op) override {
    acc.writes.insert(op->buffer->data.get());
    IRVisitor::visit(op);
  }
  void visit(const CallNode* op) override {
    if (op->op == intrin::kAccessPtr && op->args.size() == 4) {
      const auto* data = op->args[0].as<VarNode>();
      const int64_t* mask = as_const_int(op->args[3]);
      if (data && mask) {
        if (*mask & 1) acc.reads.insert(data);
        if (*mask & 2) acc.writes.insert(data);
      }
    }
    IRVisitor::visit(op);
  }
};

}  // namespace

void post_order_visit(const Expr& e, const std::function<void(const Expr&)>& fn) {
  PostOrder v(fn);
  v.visit_expr(e);
}
void post_order_visit(const Stmt& s, const std::function<void(const Expr&)>& fn) {
  PostOrder v(fn);
  v.visit_stmt(s);
}

bool uses_var_if(const Expr& e, const std::function<bool(const VarNode*)>& pred) {
  VarUse v(pred);
  v.visit_expr(e);
  return v.found;
}
bool uses_var_if(const Stmt& s, const std::function<bool(const VarNode*)>& pred) {
  VarUse v(pred);
  v.visit_stmt(s);
  return v.found;
}
bool uses_var(const Expr& e, const Var& var) {
  return uses_var_if(e, [&](const VarNode* n) { return n == var.get(); });
}
bool uses_var(const Stmt& s, const Var& var) {
  return uses_var_if(s, [&](const VarNode* n) { return n == var.get(); });
}

Expr substitute(const Expr& e, const std::map<Var, Expr, VarLess>& vmap) {
  if (vmap.empty()) return e;
  Substituter s(vmap);
  return s.mutate_expr(e);
}
Stmt substitute(const Stmt& st, const std::map<Var, Expr, VarLess>& vmap) {
  if (vmap.empty()) return st;
  Substituter s(vmap);
  return s.mutate_stmt(st);
}
Expr substitute(const Expr& e, const Var& v, const Expr& value) { return substitute(e, {{v, value}}); }
Stmt substitute(const Stmt& s, const Var& v, const Expr& value) { return substitute(s, {{v, value}}); }

bool structural_equal(const Expr& a, const Expr& b, bool map_free_vars) { return Equal(map_free_vars).expr(a, b); }
bool structural_equal(const Stmt& a, const Stmt& b, bool map_free_vars) { return Equal(map_free_vars).stmt(a, b); }

bool structural_equal(const PrimFunc& a, const PrimFunc& b) {
  if (a->name != b->name || a->attrs != b->attrs || a->params.size() != b->params.size() ||
      a->buffer_map.size() != b->buffer_map.size()) {
    return false;
  }
  Equal eq(false);
  for (size_t i = 0; i < a->params.size(); ++i) {
    if (!eq.bind(a->params[i].get(), b->params[i].get())) return false;
  }
  for (size_t i = 0; i < a->buffer_map.size(); ++i) {
    if (!eq.var(a->buffer_map[i].first.get(), b->buffer_map[i].first.get())) return false;
    // Shape variables of parameter buffers are free in the body: bind them by position.
    const Buffer &x = a->buffer_map[i].second, &y = b->buffer_map[i].second;
    if (x->shape.size() != y->shape.size()) return false;
    for (size_t d = 0; d < x->shape.size(); ++d) {
      const auto *vx = x->shape[d].as<VarNode>(), *vy = y->shape[d].as<VarNode>();
      if (vx && vy && !eq.var(vx, vy) && !eq.bind(vx, vy)) return false;
    }
    if (!eq.bind(x->data.get(), y->data.get()) || !eq.buffer(x, y)) return false;
  }
  return eq.stmt(a->body, b->body);
}

BufferAccess buffer_access(const Stmt& s) {
  AccessCollector c;
  c.visit_stmt(s);
  return c.acc;
}

PerfectNest perfect_nest(const Stmt& s) {
  PerfectNest n;
  Stmt cur = s;
  while (const auto* f = cur.as<ForNode>()) {
    n.loops.push_back(f);
    cur = f->body;
  }
  n.body = cur;
  return n;
}

Stmt wrap_loops(const std::vector<const ForNode*>& loops, const Stmt& body) {
  Stmt s = body;
  for (size_t k = loops.size(); k-- > 0;) {
    const ForNode* f = loops[k];
    s = for_loop(f->loop_var, f->min, f->extent, f->kind, s, f->thread_tag);
  }
  return s;
}

}  // namespace tessel::tir
