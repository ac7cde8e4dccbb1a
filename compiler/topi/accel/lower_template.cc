#include <map>
#include <optional>

#include "compiler/target/accel_intrin.h"
#include "compiler/te/lower.h"
#include "compiler/tir/functor.h"
#include "compiler/tir/util.h"
#include "compiler/topi/accel/schedule.h"

namespace tessel::topi::accel {

using tir::Buffer;
using tir::Expr;
using tir::Stmt;

namespace {

/// The innermost statement of a perfect loop nest, or null.
const tir::BufferStoreNode* nest_store(const Stmt& s) {
  Stmt cur = s;
  while (cur.kind() == tir::StmtKind::kFor) cur = cur.as<tir::ForNode>()->body;
  return cur.kind() == tir::StmtKind::kBufferStore ? cur.as<tir::BufferStoreNode>() : nullptr;
}

/// The operand of an ALU step's value that reads a buffer at the store's own indices: the first
/// operand of a binary node, min/max, or shift_right.
const tir::BufferLoadNode* first_operand(const Expr& v) {
  Expr a;
  if (v.kind() == tir::ExprKind::kCall) {
    const auto* c = v.as<tir::CallNode>();
    if (c->args.size() == 2) a = c->args[0];
  } else if (auto ops = tir::binary_operands(v); ops.a) {
    a = *ops.a;
  }
  if (!a.defined() || a.kind() != tir::ExprKind::kBufferLoad) return nullptr;
  return a.as<tir::BufferLoadNode>();
}

int count_loads(const Stmt& s, const tir::VarNode* data) {
  int n = 0;
  tir::post_order_visit(s, [&](const Expr& e) {
    if (e.kind() == tir::ExprKind::kBufferLoad && e.as<tir::BufferLoadNode>()->buffer->data.get() == data) ++n;
  });
  return n;
}

bool same_shape(const Buffer& a, const Buffer& b) {
  if (a->dtype != b->dtype || a->scope != b->scope || a->shape.size() != b->shape.size()) return false;
  for (size_t i = 0; i < a->shape.size(); ++i) {
    if (!tir::structural_equal(a->shape[i], b->shape[i])) return false;
  }
  return a->strides.empty() && b->strides.empty();
}

/// Finds one out-of-place ALU nest whose source dies there: (dst, src).
struct Finder : tir::IRVisitor {
  Stmt root;
  int total_of(const tir::VarNode* v) const { return count_loads(root, v); }
  std::optional<std::pair<Buffer, Buffer>> found;
  void visit(const tir::SeqStmtNode* op) override {
    for (size_t k = 0; k < op->seq.size() && !found; ++k) {
      const Stmt& s = op->seq[k];
      if (s.kind() != tir::StmtKind::kAttrStmt) continue;
      const auto* at = s.as<tir::AttrStmtNode>();
      if (at->key != compiler::target::accel::kPragmaAlu) continue;
      const tir::BufferStoreNode* st = nest_store(at->body);
      if (!st || st->buffer->scope != tir::MemScope::kAcc) continue;
      const tir::BufferLoadNode* src = first_operand(st->value);
      if (!src || src->buffer.same_as(st->buffer) || !same_shape(src->buffer, st->buffer)) continue;
      if (src->indices.size() != st->indices.size()) continue;
      bool same_idx = true;
      for (size_t i = 0; i < st->indices.size(); ++i) same_idx = same_idx && tir::structural_equal(src->indices[i], st->indices[i]);
      if (!same_idx) continue;
      // Every load of the source is in this sequence up to this nest: it dies here.
      int before = 0;
      for (size_t j = 0; j <= k; ++j) before += count_loads(op->seq[j], src->buffer->data.get());
      if (before != total_of(src->buffer->data.get())) continue;
      found = std::make_pair(st->buffer, src->buffer);
    }
    if (!found) tir::IRVisitor::visit(op);
  }
};

/// Renames buffer `from` to `to` (its Allocate removed).
struct Rename : tir::IRMutator {
  Buffer from, to;
  Buffer mutate_buffer(const Buffer& b) override { return b.same_as(from) ? to : b; }
  Expr mutate(const tir::VarNode* op, const Expr& self) override {
    return op == from->data.get() ? Expr(to->data) : self;
  }
  Stmt mutate(const tir::AllocateNode* op, const Stmt& self) override {
    if (op->buffer.same_as(from)) return mutate_stmt(op->body);
    return tir::IRMutator::mutate(op, self);
  }
};

/// Wraps every perfect loop nest around one accel.gemm_uop (the tensorized blocks) in
/// accel.coproc_scope compute { accel.uop_kernel 0 { nest } }.
struct MarkGemm : tir::IRMutator {
  static bool is_gemm_nest(const Stmt& s) {
    Stmt cur = s;
    while (cur.kind() == tir::StmtKind::kFor) cur = cur.as<tir::ForNode>()->body;
    if (cur.kind() != tir::StmtKind::kEvaluate) return false;
    const Expr& v = cur.as<tir::EvaluateNode>()->value;
    return v.kind() == tir::ExprKind::kCall && v.as<tir::CallNode>()->op == compiler::target::accel::kGemmUop;
  }
  static Stmt wrap(const Stmt& s) {
    return compiler::target::accel::coproc_scope(
        isa::Module::kCompute, tir::attr_stmt(Expr(), std::string(compiler::target::accel::kUopKernel), Expr(0), s));
  }
  Stmt mutate(const tir::ForNode* op, const Stmt& self) override {
    if (is_gemm_nest(self)) return wrap(self);
    return tir::IRMutator::mutate(op, self);
  }
  Stmt mutate(const tir::EvaluateNode* op, const Stmt& self) override {
    if (is_gemm_nest(self)) return wrap(self);
    return tir::IRMutator::mutate(op, self);
  }
  Stmt mutate(const tir::AttrStmtNode* op, const Stmt& self) override {
    if (op->key == compiler::target::accel::kUopKernel) return self;  // already a kernel
    return tir::IRMutator::mutate(op, self);
  }
};

}  // namespace

tir::PrimFunc mark_gemm_kernels(const tir::PrimFunc& f) {
  MarkGemm m;
  return f.with_body(m.mutate_stmt(f->body));
}

tir::PrimFunc alu_in_place(const tir::PrimFunc& f) {
  Stmt body = f->body;
  for (;;) {
    Finder fd;
    fd.root = body;
    fd.visit_stmt(body);
    if (!fd.found) break;
    Rename r;
    r.from = fd.found->first;
    r.to = fd.found->second;
    body = r.mutate_stmt(body);
  }
  return f.with_body(body);
}

tir::PrimFunc lower_template(const ScheduledOp& op, const std::string& name) {
  return mark_gemm_kernels(alu_in_place(te::lower(op.schedule, op.args, name)));
}

}  // namespace tessel::topi::accel
