#include "compiler/tir/transforms/unroll_loops.h"

#include <utility>
#include <vector>

#include "compiler/tir/functor.h"
#include "compiler/tir/printer.h"
#include "compiler/tir/transforms/renew_defs.h"
#include "compiler/tir/transforms/simplify.h"
#include "compiler/tir/transforms/transform_util.h"
#include "compiler/tir/util.h"
#include "support/error.h"

namespace tessel::tir::transforms {

namespace {

using arith::Analyzer;

bool contains_loop(const Stmt& s) {
  struct Finder : IRVisitor {
    bool found = false;
    void visit_stmt(const Stmt& x) override {
      if (!found) IRVisitor::visit_stmt(x);
    }
    using IRVisitor::visit;
    void visit(const ForNode*) override { found = true; }
  } f;
  f.visit_stmt(s);
  return f.found;
}

class Unroller : public IRMutator {
 public:
  Unroller(Analyzer& a, const UnrollOptions& o) : an_(a), opt_(o) {}

 protected:
  using IRMutator::mutate;

  Stmt mutate(const ForNode* op, const Stmt& self) override {
    bool unroll = op->kind == ForKind::kUnrolled;
    if (!unroll && op->kind == ForKind::kSerial && opt_.max_auto_extent > 0 && !contains_loop(op->body)) {
      const int64_t* e = as_const_int(an_.simplify(op->extent));
      unroll = e && *e <= opt_.max_auto_extent;
    }
    Stmt body = with_fact(an_, op->loop_var, Range{op->min, op->extent}, [&] { return mutate_stmt(op->body); });
    if (!unroll) {
      if (body.same_as(op->body)) return self;
      return for_loop(op->loop_var, op->min, op->extent, op->kind, body, op->thread_tag);
    }
    Expr ext = an_.simplify(op->extent);
    const int64_t* n = as_const_int(ext);
    if (!n) throw_user_error("unroll: loop '{}' has non-constant extent {}", op->loop_var.name(), to_text(ext));
    if (*n > opt_.max_extent) {
      throw_user_error("unroll: loop '{}' has {} iterations, more than the limit {}", op->loop_var.name(), *n,
                       opt_.max_extent);
    }
    std::vector<Stmt> copies;
    DataType t = op->loop_var.dtype();
    for (int64_t k = 0; k < *n; ++k) {
      Expr value = an_.simplify(op->min + make_const(t, k));
      Stmt copy = substitute(k == 0 ? body : renew_defs(body), op->loop_var, value);
      copy = simplify(copy, an_);
      if (!is_no_op(copy)) copies.push_back(std::move(copy));
    }
    return seq(std::move(copies));
  }

 private:
  Analyzer& an_;
  const UnrollOptions& opt_;
};

}  // namespace

Stmt unroll_loops(const Stmt& s, arith::Analyzer& analyzer, const UnrollOptions& options) {
  TESSEL_CHECK(s.defined(), "unroll_loops of an undefined statement");
  return Unroller(analyzer, options).mutate_stmt(s);
}

Stmt unroll_loops(const Stmt& s, const UnrollOptions& options) {
  arith::Analyzer a;
  return unroll_loops(s, a, options);
}

PrimFunc unroll_loops(const PrimFunc& f, const UnrollOptions& options) {
  TESSEL_CHECK(f.defined(), "unroll_loops of an undefined function");
  Stmt body = unroll_loops(f->body, options);
  return body.same_as(f->body) ? f : f.with_body(body);
}

}  // namespace tessel::tir::transforms
