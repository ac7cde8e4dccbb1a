// Visitor and mutator over TIR (in the manner of TVM's StmtExprVisitor/StmtExprMutator and
// Halide's IRVisitor/IRMutator). Override the `visit`/`mutate` overload of the node kinds a pass
// cares about and call the base to recurse. The mutator is copy-on-write: when no child changes,
// it returns the original handle, so `result.same_as(input)` tells a pass that nothing happened.
#pragma once

#include "compiler/tir/function.h"

namespace tessel::tir {

/// Read-only traversal of expressions and statements, children in field order.
class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  /// Dispatches on the node kind; a null handle is ignored.
  virtual void visit_expr(const Expr& e);
  virtual void visit_stmt(const Stmt& s);
  /// Called for the buffer of every BufferLoad, BufferStore and Allocate, before its indices or
  /// body; the default visits nothing (shapes are not traversed).
  virtual void visit_buffer(const Buffer&) {}

 protected:
  virtual void visit(const IntImmNode*) {}
  virtual void visit(const FloatImmNode*) {}
  virtual void visit(const StringImmNode*) {}
  virtual void visit(const VarNode*) {}
  virtual void visit(const AddNode* op);
  virtual void visit(const SubNode* op);
  virtual void visit(const MulNode* op);
  virtual void visit(const DivNode* op);
  virtual void visit(const ModNode* op);
  virtual void visit(const FloorDivNode* op);
  virtual void visit(const FloorModNode* op);
  virtual void visit(const MinNode* op);
  virtual void visit(const MaxNode* op);
  virtual void visit(const EQNode* op);
  virtual void visit(const NENode* op);
  virtual void visit(const LTNode* op);
  virtual void visit(const LENode* op);
  virtual void visit(const GTNode* op);
  virtual void visit(const GENode* op);
  virtual void visit(const AndNode* op);
  virtual void visit(const OrNode* op);
  virtual void visit(const NotNode* op);
  virtual void visit(const SelectNode* op);
  virtual void visit(const CastNode* op);
  virtual void visit(const BufferLoadNode* op);
  virtual void visit(const RampNode* op);
  virtual void visit(const BroadcastNode* op);
  virtual void visit(const LetNode* op);
  virtual void visit(const CallNode* op);

  virtual void visit(const LetStmtNode* op);
  virtual void visit(const AttrStmtNode* op);
  virtual void visit(const AssertStmtNode* op);
  virtual void visit(const AllocateNode* op);
  virtual void visit(const BufferStoreNode* op);
  virtual void visit(const ForNode* op);
  virtual void visit(const IfThenElseNode* op);
  virtual void visit(const SeqStmtNode* op);
  virtual void visit(const EvaluateNode* op);
};

/// Rebuilding traversal. Each `mutate` overload receives the node and its handle (`self`) and
/// returns the replacement; the defaults mutate the children and rebuild only on a change.
class IRMutator {
 public:
  virtual ~IRMutator() = default;
  /// Dispatches on the node kind; a null handle is returned unchanged.
  virtual Expr mutate_expr(const Expr& e);
  virtual Stmt mutate_stmt(const Stmt& s);
  /// The buffer to use in place of `b` at a BufferLoad, BufferStore or Allocate; default `b`.
  virtual Buffer mutate_buffer(const Buffer& b) { return b; }

 protected:
  virtual Expr mutate(const IntImmNode*, const Expr& self) { return self; }
  virtual Expr mutate(const FloatImmNode*, const Expr& self) { return self; }
  virtual Expr mutate(const StringImmNode*, const Expr& self) { return self; }
  virtual Expr mutate(const VarNode*, const Expr& self) { return self; }
  virtual Expr mutate(const AddNode* op, const Expr& self);
  virtual Expr mutate(const SubNode* op, const Expr& self);
  virtual Expr mutate(const MulNode* op, const Expr& self);
  virtual Expr mutate(const DivNode* op, const Expr& self);
  virtual Expr mutate(const ModNode* op, const Expr& self);
  virtual Expr mutate(const FloorDivNode* op, const Expr& self);
  virtual Expr mutate(const FloorModNode* op, const Expr& self);
  virtual Expr mutate(const MinNode* op, const Expr& self);
  virtual Expr mutate(const MaxNode* op, const Expr& self);
  virtual Expr mutate(const EQNode* op, const Expr& self);
  virtual Expr mutate(const NENode* op, const Expr& self);
  virtual Expr mutate(const LTNode* op, const Expr& self);
  virtual Expr mutate(const LENode* op, const Expr& self);
  virtual Expr mutate(const GTNode* op, const Expr& self);
  virtual Expr mutate(const GENode* op, const Expr& self);
  virtual Expr mutate(const AndNode* op, const Expr& self);
  virtual Expr mutate(const OrNode* op, const Expr& self);
  virtual Expr mutate(const NotNode* op, const Expr& self);
  virtual Expr mutate(const SelectNode* op, const Expr& self);
  virtual Expr mutate(const CastNode* op, const Expr& self);
  virtual Expr mutate(const BufferLoadNode* op, const Expr& self);
  virtual Expr mutate(const RampNode* op, const Expr& self);
  virtual Expr mutate(const BroadcastNode* op, const Expr& self);
  virtual Expr mutate(const LetNode* op, const Expr& self);
  virtual Expr mutate(const CallNode* op, const Expr& self);

  virtual Stmt mutate(const LetStmtNode* op, const Stmt& self);
  virtual Stmt mutate(const AttrStmtNode* op, const Stmt& self);
  virtual Stmt mutate(const AssertStmtNode* op, const Stmt& self);
  virtual Stmt mutate(const AllocateNode* op, const Stmt& self);
  virtual Stmt mutate(const BufferStoreNode* op, const Stmt& self);
  virtual Stmt mutate(const ForNode* op, const Stmt& self);
  virtual Stmt mutate(const IfThenElseNode* op, const Stmt& self);
  virtual Stmt mutate(const SeqStmtNode* op, const Stmt& self);
  virtual Stmt mutate(const EvaluateNode* op, const Stmt& self);

  /// Mutates every element; true when any changed.
  bool mutate_exprs(const std::vector<Expr>& in, std::vector<Expr>& out);

 private:
  template <typename Node>
  Expr mutate_binary(const Node* op, const Expr& self);
};

}  // namespace tessel::tir
