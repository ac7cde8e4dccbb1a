#include "compiler/tir/functor.h"

#include "support/error.h"

namespace tessel::tir {

// ---- visitor ----

void IRVisitor::visit_expr(const Expr& e) {
  if (!e.defined()) return;
  switch (e.kind()) {
#define TESSEL_CASE(K, N) \
  case ExprKind::K: visit(static_cast<const N*>(e.get())); return;
    TESSEL_CASE(kIntImm, IntImmNode)
    TESSEL_CASE(kFloatImm, FloatImmNode)
    TESSEL_CASE(kStringImm, StringImmNode)
    TESSEL_CASE(kVar, VarNode)
    TESSEL_CASE(kAdd, AddNode)
    TESSEL_CASE(kSub, SubNode)
    TESSEL_CASE(kMul, MulNode)
    TESSEL_CASE(kDiv, DivNode)
    TESSEL_CASE(kMod, ModNode)
    TESSEL_CASE(kFloorDiv, FloorDivNode)
    TESSEL_CASE(kFloorMod, FloorModNode)
    TESSEL_CASE(kMin, MinNode)
    TESSEL_CASE(kMax, MaxNode)
    TESSEL_CASE(kEQ, EQNode)
    TESSEL_CASE(kNE, NENode)
    TESSEL_CASE(kLT, LTNode)
    TESSEL_CASE(kLE, LENode)
    TESSEL_CASE(kGT, GTNode)
    TESSEL_CASE(kGE, GENode)
    TESSEL_CASE(kAnd, AndNode)
    TESSEL_CASE(kOr, OrNode)
    TESSEL_CASE(kNot, NotNode)
    TESSEL_CASE(kSelect, SelectNode)
    TESSEL_CASE(kCast, CastNode)
    TESSEL_CASE(kBufferLoad, BufferLoadNode)
    TESSEL_CASE(kRamp, RampNode)
    TESSEL_CASE(kBroadcast, BroadcastNode)
    TESSEL_CASE(kLet, LetNode)
    TESSEL_CASE(kCall, CallNode)
#undef TESSEL_CASE
  }
  throw_internal_error("visit_expr: unknown expression kind {}", static_cast<int>(e.kind()));
}

void IRVisitor::visit_stmt(const Stmt& s) {
  if (!s.defined()) return;
  switch (s.kind()) {
#define TESSEL_CASE(K, N) \
  case StmtKind::K: visit(static_cast<const N*>(s.get())); return;
    TESSEL_CASE(kLetStmt, LetStmtNode)
    TESSEL_CASE(kAttrStmt, AttrStmtNode)
    TESSEL_CASE(kAssertStmt, AssertStmtNode)
    TESSEL_CASE(kAllocate, AllocateNode)
    TESSEL_CASE(kBufferStore, BufferStoreNode)
    TESSEL_CASE(kFor, ForNode)
    TESSEL_CASE(kIfThenElse, IfThenElseNode)
    TESSEL_CASE(kSeqStmt, SeqStmtNode)
    TESSEL_CASE(kEvaluate, EvaluateNode)
#undef TESSEL_CASE
  }
  throw_internal_error("visit_stmt: unknown statement kind {}", static_cast<int>(s.kind()));
}

#define TESSEL_VISIT_BIN(N)            \
  void IRVisitor::visit(const N* op) { \
    visit_expr(op->a);                 \
    visit_expr(op->b);                 \
  }
TESSEL_VISIT_BIN(AddNode)
TESSEL_VISIT_BIN(SubNode)
TESSEL_VISIT_BIN(MulNode)
TESSEL_VISIT_BIN(DivNode)
TESSEL_VISIT_BIN(ModNode)
TESSEL_VISIT_BIN(FloorDivNode)
TESSEL_VISIT_BIN(FloorModNode)
TESSEL_VISIT_BIN(MinNode)
TESSEL_VISIT_BIN(MaxNode)
TESSEL_VISIT_BIN(EQNode)
TESSEL_VISIT_BIN(NENode)
TESSEL_VISIT_BIN(LTNode)
TESSEL_VISIT_BIN(LENode)
TESSEL_VISIT_BIN(GTNode)
TESSEL_VISIT_BIN(GENode)
TESSEL_VISIT_BIN(AndNode)
TESSEL_VISIT_BIN(OrNode)
#undef TESSEL_VISIT_BIN

void IRVisitor::visit(const NotNode* op) { visit_expr(op->a); }
void IRVisitor::visit(const SelectNode* op) {
  visit_expr(op->cond);
  visit_expr(op->true_value);
  visit_expr(op->false_value);
}
void IRVisitor::visit(const CastNode* op) { visit_expr(op->value); }
void IRVisitor::visit(const BufferLoadNode* op) {
  visit_buffer(op->buffer);
  for (const Expr& i : op->indices) visit_expr(i);
}
void IRVisitor::visit(const RampNode* op) {
  visit_expr(op->base);
  visit_expr(op->stride);
}
void IRVisitor::visit(const BroadcastNode* op) { visit_expr(op->value); }
void IRVisitor::visit(const LetNode* op) {
  visit_expr(op->value);
  visit_expr(op->body);
}
void IRVisitor::visit(const CallNode* op) {
  for (const Expr& a : op->args) visit_expr(a);
}

void IRVisitor::visit(const LetStmtNode* op) {
  visit_expr(op->value);
  visit_stmt(op->body);
}
void IRVisitor::visit(const AttrStmtNode* op) {
  visit_expr(op->node);
  visit_expr(op->value);
  visit_stmt(op->body);
}
void IRVisitor::visit(const AssertStmtNode* op) {
  visit_expr(op->cond);
  visit_stmt(op->body);
}
void IRVisitor::visit(const AllocateNode* op) {
  visit_buffer(op->buffer);
  visit_stmt(op->body);
}
void IRVisitor::visit(const BufferStoreNode* op) {
  visit_buffer(op->buffer);
  visit_expr(op->value);
  for (const Expr& i : op->indices) visit_expr(i);
}
void IRVisitor::visit(const ForNode* op) {
  visit_expr(op->min);
  visit_expr(op->extent);
  visit_stmt(op->body);
}
void IRVisitor::visit(const IfThenElseNode* op) {
  visit_expr(op->cond);
  visit_stmt(op->then_case);
  visit_stmt(op->else_case);
}
void IRVisitor::visit(const SeqStmtNode* op) {
  for (const Stmt& s : op->seq) visit_stmt(s);
}
void IRVisitor::visit(const EvaluateNode* op) { visit_expr(op->value); }

// ---- mutator ----

Expr IRMutator::mutate_expr(const Expr& e) {
  if (!e.defined()) return e;
  switch (e.kind()) {
#define TESSEL_CASE(K, N) \
  case ExprKind::K: return mutate(static_cast<const N*>(e.get()), e);
    TESSEL_CASE(kIntImm, IntImmNode)
    TESSEL_CASE(kFloatImm, FloatImmNode)
    TESSEL_CASE(kStringImm, StringImmNode)
    TESSEL_CASE(kVar, VarNode)
    TESSEL_CASE(kAdd, AddNode)
    TESSEL_CASE(kSub, SubNode)
    TESSEL_CASE(kMul, MulNode)
    TESSEL_CASE(kDiv, DivNode)
    TESSEL_CASE(kMod, ModNode)
    TESSEL_CASE(kFloorDiv, FloorDivNode)
    TESSEL_CASE(kFloorMod, FloorModNode)
    TESSEL_CASE(kMin, MinNode)
    TESSEL_CASE(kMax, MaxNode)
    TESSEL_CASE(kEQ, EQNode)
    TESSEL_CASE(kNE, NENode)
    TESSEL_CASE(kLT, LTNode)
    TESSEL_CASE(kLE, LENode)
    TESSEL_CASE(kGT, GTNode)
    TESSEL_CASE(kGE, GENode)
    TESSEL_CASE(kAnd, AndNode)
    TESSEL_CASE(kOr, OrNode)
    TESSEL_CASE(kNot, NotNode)
    TESSEL_CASE(kSelect, SelectNode)
    TESSEL_CASE(kCast, CastNode)
    TESSEL_CASE(kBufferLoad, BufferLoadNode)
    TESSEL_CASE(kRamp, RampNode)
    TESSEL_CASE(kBroadcast, BroadcastNode)
    TESSEL_CASE(kLet, LetNode)
    TESSEL_CASE(kCall, CallNode)
#undef TESSEL_CASE
  }
  throw_internal_error("mutate_expr: unknown expression kind {}", static_cast<int>(e.kind()));
}

Stmt IRMutator::mutate_stmt(const Stmt& s) {
  if (!s.defined()) return s;
  switch (s.kind()) {
#define TESSEL_CASE(K, N) \
  case StmtKind::K: return mutate(static_cast<const N*>(s.get()), s);
    TESSEL_CASE(kLetStmt, LetStmtNode)
    TESSEL_CASE(kAttrStmt, AttrStmtNode)
    TESSEL_CASE(kAssertStmt, AssertStmtNode)
    TESSEL_CASE(kAllocate, AllocateNode)
    TESSEL_CASE(kBufferStore, BufferStoreNode)
    TESSEL_CASE(kFor, ForNode)
    TESSEL_CASE(kIfThenElse, IfThenElseNode)
    TESSEL_CASE(kSeqStmt, SeqStmtNode)
    TESSEL_CASE(kEvaluate, EvaluateNode)
#undef TESSEL_CASE
  }
  throw_internal_error("mutate_stmt: unknown statement kind {}", static_cast<int>(s.kind()));
}

bool IRMutator::mutate_exprs(const std::vector<Expr>& in, std::vector<Expr>& out) {
  bool changed = false;
  out.clear();
  out.reserve(in.size());
  for (const Expr& e : in) {
    out.push_back(mutate_expr(e));
    changed |= !out.back().same_as(e);
  }
  return changed;
}

template <typename Node>
Expr IRMutator::mutate_binary(const Node* op, const Expr& self) {
  Expr a = mutate_expr(op->a);
  Expr b = mutate_expr(op->b);
  if (a.same_as(op->a) && b.same_as(op->b)) return self;
  // Re-typed operands (a vectorised side) are matched as the named constructors do.
  switch (Node::kKind) {
    case ExprKind::kAdd: return add(a, b);
    case ExprKind::kSub: return sub(a, b);
    case ExprKind::kMul: return mul(a, b);
    case ExprKind::kDiv: return div(a, b);
    case ExprKind::kMod: return mod(a, b);
    case ExprKind::kFloorDiv: return floordiv(a, b);
    case ExprKind::kFloorMod: return floormod(a, b);
    case ExprKind::kMin: return min(a, b);
    case ExprKind::kMax: return max(a, b);
    case ExprKind::kEQ: return eq(a, b);
    case ExprKind::kNE: return ne(a, b);
    case ExprKind::kLT: return lt(a, b);
    case ExprKind::kLE: return le(a, b);
    case ExprKind::kGT: return gt(a, b);
    case ExprKind::kGE: return ge(a, b);
    case ExprKind::kAnd: return logical_and(a, b);
    case ExprKind::kOr: return logical_or(a, b);
    default: break;
  }
  throw_internal_error("mutate_binary on a non-binary kind");
}

#define TESSEL_MUTATE_BIN(N) \
  Expr IRMutator::mutate(const N* op, const Expr& self) { return mutate_binary(op, self); }
TESSEL_MUTATE_BIN(AddNode)
TESSEL_MUTATE_BIN(SubNode)
TESSEL_MUTATE_BIN(MulNode)
TESSEL_MUTATE_BIN(DivNode)
TESSEL_MUTATE_BIN(ModNode)
TESSEL_MUTATE_BIN(FloorDivNode)
TESSEL_MUTATE_BIN(FloorModNode)
TESSEL_MUTATE_BIN(MinNode)
TESSEL_MUTATE_BIN(MaxNode)
TESSEL_MUTATE_BIN(EQNode)
TESSEL_MUTATE_BIN(NENode)
TESSEL_MUTATE_BIN(LTNode)
TESSEL_MUTATE_BIN(LENode)
TESSEL_MUTATE_BIN(GTNode)
TESSEL_MUTATE_BIN(GENode)
TESSEL_MUTATE_BIN(AndNode)
TESSEL_MUTATE_BIN(OrNode)
#undef TESSEL_MUTATE_BIN

Expr IRMutator::mutate(const NotNode* op, const Expr& self) {
  Expr a = mutate_expr(op->a);
  return a.same_as(op->a) ? self : logical_not(a);
}
Expr IRMutator::mutate(const SelectNode* op, const Expr& self) {
  Expr c = mutate_expr(op->cond), t = mutate_expr(op->true_value), f = mutate_expr(op->false_value);
  if (c.same_as(op->cond) && t.same_as(op->true_value) && f.same_as(op->false_value)) return self;
  return select(c, t, f);
}
Expr IRMutator::mutate(const CastNode* op, const Expr& self) {
  Expr v = mutate_expr(op->value);
  if (v.same_as(op->value)) return self;
  return cast(op->dtype.with_lanes(v.dtype().lanes), v);
}
Expr IRMutator::mutate(const BufferLoadNode* op, const Expr& self) {
  Buffer b = mutate_buffer(op->buffer);
  std::vector<Expr> idx;
  bool changed = mutate_exprs(op->indices, idx);
  if (!changed && b.same_as(op->buffer)) return self;
  return buffer_load(b, std::move(idx));
}
Expr IRMutator::mutate(const RampNode* op, const Expr& self) {
  Expr b = mutate_expr(op->base), s = mutate_expr(op->stride);
  if (b.same_as(op->base) && s.same_as(op->stride)) return self;
  return ramp(b, s, op->lanes);
}
Expr IRMutator::mutate(const BroadcastNode* op, const Expr& self) {
  Expr v = mutate_expr(op->value);
  if (v.same_as(op->value)) return self;
  if (v.dtype().is_vector()) return v;  // already widened by a vectorising mutator
  return broadcast(v, op->lanes);
}
Expr IRMutator::mutate(const LetNode* op, const Expr& self) {
  Expr v = mutate_expr(op->value), b = mutate_expr(op->body);
  if (v.same_as(op->value) && b.same_as(op->body)) return self;
  return let(op->var, v, b);
}
Expr IRMutator::mutate(const CallNode* op, const Expr& self) {
  std::vector<Expr> args;
  if (!mutate_exprs(op->args, args)) return self;
  return call(op->dtype, op->op, std::move(args));
}

Stmt IRMutator::mutate(const LetStmtNode* op, const Stmt& self) {
  Expr v = mutate_expr(op->value);
  Stmt b = mutate_stmt(op->body);
  if (v.same_as(op->value) && b.same_as(op->body)) return self;
  return let_stmt(op->var, v, b);
}
Stmt IRMutator::mutate(const AttrStmtNode* op, const Stmt& self) {
  Expr n = mutate_expr(op->node), v = mutate_expr(op->value);
  Stmt b = mutate_stmt(op->body);
  if (n.same_as(op->node) && v.same_as(op->value) && b.same_as(op->body)) return self;
  return attr_stmt(n, op->key, v, b);
}
Stmt IRMutator::mutate(const AssertStmtNode* op, const Stmt& self) {
  Expr c = mutate_expr(op->cond);
  Stmt b = mutate_stmt(op->body);
  if (c.same_as(op->cond) && b.same_as(op->body)) return self;
  return assert_stmt(c, op->message, b);
}
Stmt IRMutator::mutate(const AllocateNode* op, const Stmt& self) {
  Buffer buf = mutate_buffer(op->buffer);
  Stmt b = mutate_stmt(op->body);
  if (buf.same_as(op->buffer) && b.same_as(op->body)) return self;
  return allocate(buf, b);
}
Stmt IRMutator::mutate(const BufferStoreNode* op, const Stmt& self) {
  Buffer buf = mutate_buffer(op->buffer);
  Expr v = mutate_expr(op->value);
  std::vector<Expr> idx;
  bool changed = mutate_exprs(op->indices, idx);
  if (!changed && buf.same_as(op->buffer) && v.same_as(op->value)) return self;
  return buffer_store(buf, v, std::move(idx));
}
Stmt IRMutator::mutate(const ForNode* op, const Stmt& self) {
  Expr mn = mutate_expr(op->min), ext = mutate_expr(op->extent);
  Stmt b = mutate_stmt(op->body);
  if (mn.same_as(op->min) && ext.same_as(op->extent) && b.same_as(op->body)) return self;
  return for_loop(op->loop_var, mn, ext, op->kind, b, op->thread_tag);
}
Stmt IRMutator::mutate(const IfThenElseNode* op, const Stmt& self) {
  Expr c = mutate_expr(op->cond);
  Stmt t = mutate_stmt(op->then_case), e = mutate_stmt(op->else_case);
  if (c.same_as(op->cond) && t.same_as(op->then_case) && e.same_as(op->else_case)) return self;
  return if_then_else(c, t, e);
}
Stmt IRMutator::mutate(const SeqStmtNode* op, const Stmt& self) {
  std::vector<Stmt> out;
  out.reserve(op->seq.size());
  bool changed = false;
  for (const Stmt& s : op->seq) {
    out.push_back(mutate_stmt(s));
    changed |= !out.back().same_as(s);
  }
  if (!changed) return self;
  return seq(std::move(out));
}
Stmt IRMutator::mutate(const EvaluateNode* op, const Stmt& self) {
  Expr v = mutate_expr(op->value);
  return v.same_as(op->value) ? self : evaluate(v);
}

}  // namespace tessel::tir
