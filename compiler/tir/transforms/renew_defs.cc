#include "compiler/tir/transforms/renew_defs.h"

#include <map>

#include "compiler/tir/functor.h"

namespace tessel::tir::transforms {

namespace {

class Renamer : public IRMutator {
 protected:
  using IRMutator::mutate;
  Expr mutate(const VarNode*, const Expr& self) override {
    auto it = vmap_.find(Var::from(self));
    return it == vmap_.end() ? self : it->second;
  }
  Buffer mutate_buffer(const Buffer& b) override {
    auto it = bmap_.find(b.get());
    if (it != bmap_.end()) return it->second;
    auto d = vmap_.find(b->data);
    if (d == vmap_.end()) return b;
    // Another view of renamed data: the same view over the new data variable.
    Buffer nb = Buffer::over(Var::from(d->second), b->name, b->dtype, b->shape, b->scope, b->strides, b->elem_offset);
    bmap_[b.get()] = nb;
    return nb;
  }
  Expr mutate(const LetNode* op, const Expr&) override {
    Expr v = mutate_expr(op->value);
    Var nv = fresh(op->var);
    return let(nv, v, mutate_expr(op->body));
  }
  Stmt mutate(const LetStmtNode* op, const Stmt&) override {
    Expr v = mutate_expr(op->value);
    Var nv = fresh(op->var);
    return let_stmt(nv, v, mutate_stmt(op->body));
  }
  Stmt mutate(const ForNode* op, const Stmt&) override {
    Expr mn = mutate_expr(op->min), ext = mutate_expr(op->extent);
    Var nv = fresh(op->loop_var);
    return for_loop(nv, mn, ext, op->kind, mutate_stmt(op->body), op->thread_tag);
  }
  Stmt mutate(const AttrStmtNode* op, const Stmt&) override {
    // The node an attribute is about is a name: it follows a renamed variable.
    Expr node = op->node.defined() ? mutate_expr(op->node) : op->node;
    return attr_stmt(node, op->key, mutate_expr(op->value), mutate_stmt(op->body));
  }
  Stmt mutate(const AllocateNode* op, const Stmt&) override {
    const Buffer& b = op->buffer;
    Var data = fresh(b->data);
    Buffer nb = Buffer::over(data, b->name, b->dtype, b->shape, b->scope, b->strides, b->elem_offset);
    bmap_[b.get()] = nb;
    return allocate(nb, mutate_stmt(op->body));
  }

 private:
  Var fresh(const Var& v) {
    Var nv(v.name(), v.dtype());
    vmap_[v] = nv;
    return nv;
  }
  std::map<Var, Expr, VarLess> vmap_;
  std::map<const BufferNode*, Buffer> bmap_;
};

}  // namespace

Stmt renew_defs(const Stmt& s) { return Renamer().mutate_stmt(s); }

}  // namespace tessel::tir::transforms
