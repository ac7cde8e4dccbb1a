#include "compiler/tir/verifier.h"

#include <fmt/format.h>

#include <set>

#include "compiler/tir/functor.h"
#include "compiler/tir/printer.h"
#include "support/error.h"

namespace tessel::tir {

namespace {

class Verifier : public IRVisitor {
 public:
  std::vector<std::string> errors;

  void define(const Var& v, std::string_view what) {
    if (!bound_.insert(v.get()).second) {
      errors.push_back(fmt::format("{} '{}' is bound twice", what, v.name()));
    }
    live_.insert(v.get());
  }
  void undefine(const Var& v) { live_.erase(v.get()); }
  void define_free(const Expr& e) {
    if (const auto* v = e.as<VarNode>()) {
      bound_.insert(v);
      live_.insert(v);
    }
  }

  void visit_buffer(const Buffer& b) override {
    if (!live_.count(b->data.get())) {
      errors.push_back(fmt::format("buffer '{}' is used outside the scope of its data variable '{}'", b->name,
                                   b->data.name()));
    }
  }

 protected:
  using IRVisitor::visit;
  void visit(const VarNode* op) override {
    if (!live_.count(op)) errors.push_back(fmt::format("variable '{}' is used where it is not defined", op->name));
  }
  void visit(const LetNode* op) override {
    visit_expr(op->value);
    define(op->var, "let variable");
    visit_expr(op->body);
    undefine(op->var);
  }
  void visit(const SelectNode* op) override {
    if (!op->cond.dtype().is_bool()) errors.push_back("select condition is not bool");
    IRVisitor::visit(op);
  }
  void check_indices(const Buffer& b, const std::vector<Expr>& idx, std::string_view what) {
    if (idx.size() != b->shape.size() && idx.size() != 1) {
      errors.push_back(fmt::format("{} of buffer '{}' has {} indices for {} dimensions", what, b->name, idx.size(),
                                   b->shape.size()));
    }
    for (const Expr& i : idx) {
      if (!i.dtype().is_integer()) errors.push_back(fmt::format("{} of buffer '{}' has a {} index", what, b->name, i.dtype().str()));
    }
  }
  void visit(const BufferLoadNode* op) override {
    check_indices(op->buffer, op->indices, "load");
    IRVisitor::visit(op);
  }
  void visit(const BufferStoreNode* op) override {
    check_indices(op->buffer, op->indices, "store");
    IRVisitor::visit(op);
  }
  void visit(const LetStmtNode* op) override {
    visit_expr(op->value);
    define(op->var, "let variable");
    visit_stmt(op->body);
    undefine(op->var);
  }
  void visit(const AttrStmtNode* op) override {
    // The node of a virtual-thread or thread-extent attribute is the variable it introduces.
    if ((op->key == "virtual_thread" || op->key == "thread_extent") && op->node.as<VarNode>()) {
      Var v = Var::from(op->node);
      visit_expr(op->value);
      define(v, "thread variable");
      visit_stmt(op->body);
      undefine(v);
      return;
    }
    IRVisitor::visit(op);
  }
  void visit(const AssertStmtNode* op) override {
    if (!op->cond.dtype().is_bool()) errors.push_back(fmt::format("assert '{}' has a non-bool condition", op->message));
    IRVisitor::visit(op);
  }
  void visit(const AllocateNode* op) override {
    const Buffer& b = op->buffer;
    for (const Expr& e : b->shape) {
      const int64_t* c = as_const_int(e);
      if (!c || *c <= 0) errors.push_back(fmt::format("allocate '{}' has a non-constant or non-positive extent {}", b->name, to_text(e)));
    }
    define(b->data, "buffer data variable");
    visit_stmt(op->body);
    undefine(b->data);
  }
  void visit(const ForNode* op) override {
    visit_expr(op->min);
    visit_expr(op->extent);
    const std::string& n = op->loop_var.name();
    if (op->min.dtype() != op->loop_var.dtype() || op->extent.dtype() != op->loop_var.dtype()) {
      errors.push_back(fmt::format("loop '{}' has bounds of another type than its variable", n));
    }
    if ((op->kind == ForKind::kVectorized || op->kind == ForKind::kUnrolled) && !as_const_int(op->extent)) {
      errors.push_back(fmt::format("{} loop '{}' has a non-constant extent {}", to_string(op->kind), n, to_text(op->extent)));
    }
    const bool tag_ok = op->kind == ForKind::kThreadBinding
                            ? !op->thread_tag.empty()
                            : op->thread_tag.empty() || (op->kind == ForKind::kVirtualThread && op->thread_tag == "cthread");
    if (!tag_ok) {
      errors.push_back(fmt::format(
          "loop '{}': a thread tag goes with thread-binding loops (and \"cthread\" with virtual-thread loops) only", n));
    }
    if (const int64_t* c = as_const_int(op->extent); c && *c < 0) {
      errors.push_back(fmt::format("loop '{}' has a negative extent {}", n, *c));
    }
    define(op->loop_var, "loop variable");
    visit_stmt(op->body);
    undefine(op->loop_var);
  }
  void visit(const IfThenElseNode* op) override {
    if (!op->cond.dtype().is_bool()) errors.push_back("if condition is not bool");
    IRVisitor::visit(op);
  }

 private:
  std::set<const VarNode*> bound_;
  std::set<const VarNode*> live_;
};

}  // namespace

std::vector<std::string> verify(const PrimFunc& f) {
  Verifier v;
  for (const Var& p : f->params) v.define(p, "parameter");
  for (const auto& [p, b] : f->buffer_map) {
    if (!b->data.same_as(p)) v.define(b->data, "buffer data variable");
    for (const Expr& e : b->shape) v.define_free(e);
    for (const Expr& e : b->strides) v.define_free(e);
    v.define_free(b->elem_offset);
  }
  v.visit_stmt(f->body);
  return v.errors;
}

void check_well_formed(const PrimFunc& f, const std::string& pass) {
  std::vector<std::string> errs = verify(f);
  if (errs.empty()) return;
  std::string msg = fmt::format("TIR of '{}' after pass {} is not well formed:", f->name, pass);
  for (const std::string& e : errs) msg += "\n  " + e;
  throw InternalError(msg);
}

}  // namespace tessel::tir
