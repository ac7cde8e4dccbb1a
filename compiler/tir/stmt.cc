#include "compiler/tir/stmt.h"

#include "support/error.h"

namespace tessel::tir {

std::string_view to_string(ForKind k) {
  switch (k) {
    case ForKind::kSerial: return "serial";
    case ForKind::kParallel: return "parallel";
    case ForKind::kVectorized: return "vectorized";
    case ForKind::kUnrolled: return "unrolled";
    case ForKind::kThreadBinding: return "thread_binding";
    case ForKind::kVirtualThread: return "vthread";
  }
  return "?";
}

Stmt let_stmt(Var var, Expr value, Stmt body) {
  TESSEL_CHECK(var.defined() && value.defined() && body.defined(), "let statement operand undefined");
  TESSEL_CHECK(var.dtype() == value.dtype(), "let {}: variable {} bound to {}", var.name(), var.dtype().str(),
               value.dtype().str());
  return Stmt(std::make_shared<LetStmtNode>(std::move(var), std::move(value), std::move(body)));
}

Stmt attr_stmt(Expr node, std::string key, Expr value, Stmt body) {
  TESSEL_CHECK(!key.empty() && body.defined(), "attribute needs a key and a body");
  TESSEL_CHECK(value.defined(), "attribute {} needs a value", key);
  return Stmt(std::make_shared<AttrStmtNode>(std::move(node), std::move(key), std::move(value), std::move(body)));
}

Stmt assert_stmt(Expr cond, std::string message, Stmt body) {
  TESSEL_CHECK(cond.defined() && cond.dtype().is_bool(), "assert condition must be bool");
  TESSEL_CHECK(body.defined(), "assert needs a body");
  return Stmt(std::make_shared<AssertStmtNode>(std::move(cond), std::move(message), std::move(body)));
}

Stmt allocate(Buffer buffer, Stmt body) {
  TESSEL_CHECK(buffer.defined() && body.defined(), "allocate needs a buffer and a body");
  return Stmt(std::make_shared<AllocateNode>(std::move(buffer), std::move(body)));
}

Stmt buffer_store(Buffer buffer, Expr value, std::vector<Expr> indices) {
  TESSEL_CHECK(buffer.defined() && value.defined(), "store needs a buffer and a value");
  int lanes = 1;
  for (const Expr& i : indices) {
    TESSEL_CHECK(i.defined() && i.dtype().is_integer(), "index of buffer {} is not an integer", buffer->name);
    if (i.dtype().lanes > 1) lanes = i.dtype().lanes;
  }
  if (value.dtype().is_scalar() && lanes > 1) value = broadcast(value, lanes);
  TESSEL_CHECK(value.dtype() == buffer->dtype.with_lanes(lanes), "store of {} into buffer {} of {} ({} lanes)",
               value.dtype().str(), buffer->name, buffer->dtype.str(), lanes);
  return Stmt(std::make_shared<BufferStoreNode>(std::move(buffer), std::move(value), std::move(indices)));
}

Stmt for_loop(Var var, Expr min, Expr extent, ForKind kind, Stmt body, std::string thread_tag) {
  TESSEL_CHECK(var.defined() && min.defined() && extent.defined() && body.defined(), "loop operand undefined");
  TESSEL_CHECK(var.dtype().is_integer() && var.dtype().is_scalar(), "loop variable {} has type {}", var.name(),
               var.dtype().str());
  auto fit = [&](Expr e) {
    if (e.dtype() != var.dtype()) {
      const int64_t* c = as_const_int(e);
      TESSEL_CHECK(c != nullptr, "loop {}: bound of type {} for a {} variable", var.name(), e.dtype().str(),
                   var.dtype().str());
      e = make_const(var.dtype(), *c);
    }
    return e;
  };
  min = fit(std::move(min));
  extent = fit(std::move(extent));
  TESSEL_CHECK(kind == ForKind::kThreadBinding ? !thread_tag.empty()
                                                : thread_tag.empty() || (kind == ForKind::kVirtualThread && thread_tag == "cthread"),
               "loop {}: a thread tag goes with thread-binding loops (and \"cthread\" with virtual-thread loops) only",
               var.name());
  return Stmt(std::make_shared<ForNode>(std::move(var), std::move(min), std::move(extent), kind, std::move(body),
                                        std::move(thread_tag)));
}

Stmt if_then_else(Expr cond, Stmt then_case, Stmt else_case) {
  TESSEL_CHECK(cond.defined() && cond.dtype().is_bool() && cond.dtype().is_scalar(), "if condition must be a bool");
  TESSEL_CHECK(then_case.defined(), "if needs a then case");
  return Stmt(std::make_shared<IfThenElseNode>(std::move(cond), std::move(then_case), std::move(else_case)));
}

Stmt seq(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (Stmt& s : stmts) {
    if (!s.defined()) continue;
    if (const auto* q = s.as<SeqStmtNode>()) {
      for (const Stmt& c : q->seq) flat.push_back(c);
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.size() == 1) return flat[0];
  return Stmt(std::make_shared<SeqStmtNode>(std::move(flat)));
}

Stmt evaluate(Expr value) {
  TESSEL_CHECK(value.defined(), "evaluate of an undefined expression");
  return Stmt(std::make_shared<EvaluateNode>(std::move(value)));
}

Stmt no_op() { return Stmt(std::make_shared<SeqStmtNode>(std::vector<Stmt>{})); }

bool is_no_op(const Stmt& s) {
  if (!s.defined()) return true;
  if (const auto* q = s.as<SeqStmtNode>()) return q->seq.empty();
  if (const auto* e = s.as<EvaluateNode>()) return e->value.as<IntImmNode>() != nullptr;
  return false;
}

}  // namespace tessel::tir
