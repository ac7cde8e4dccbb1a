#include "compiler/backend/accel/passes/fold_uop_loops.h"

#include <fmt/format.h>

#include "support/error.h"

namespace tessel::compiler::accel {

using isa::Instruction;
using isa::Opcode;

namespace {

/// Folds one micro-op body with its enclosing loops (outer, inner; either may be absent).
Stmt fold_body(const Stmt* outer, const Stmt* inner, const Stmt& body, LoweringContext& ctx) {
  Instruction in = body.insn;
  in.iter_out = outer ? to_u32(outer->extent, "iter_out") : 1;
  in.iter_in = inner ? to_u32(inner->extent, "iter_in") : 1;
  auto factor = [&](const Stmt* loop, auto member) -> uint32_t {
    if (!loop || loop->extent == 1) return 0;  // a single iteration never uses its factor
    const int64_t c = (body.uops.front().*member).coef(loop->name);
    for (const UopExpr& u : body.uops) {
      TESSEL_CHECK((u.*member).coef(loop->name) == c,
                   "micro-ops of '{}' disagree on the factor of loop {}", body.name, loop->name);
    }
    return to_u32(c, "factor");
  };
  TESSEL_CHECK(!body.uops.empty(), "empty micro-op body '{}'", body.name);
  in.dst_factor_out = factor(outer, &UopExpr::dst);
  in.dst_factor_in = factor(inner, &UopExpr::dst);
  in.src_factor_out = factor(outer, &UopExpr::src);
  in.src_factor_in = factor(inner, &UopExpr::src);
  if (in.opcode == Opcode::kGemm) {
    in.wgt_factor_out = factor(outer, &UopExpr::wgt);
    in.wgt_factor_in = factor(inner, &UopExpr::wgt);
  }
  std::vector<isa::Uop> kernel;
  for (const UopExpr& u : body.uops) {
    kernel.push_back({to_u32(u.dst.base, "uop dst"), to_u32(u.src.base, "uop src"),
                      to_u32(u.wgt.base, "uop wgt")});
  }
  Stmt s = make_insn(in, body.name, body.vthread);
  s.kernel = ctx.intern_kernel(kernel);
  return s;
}

void fold_stmt(Stmt& s, LoweringContext& ctx) {
  for (Stmt& c : s.body) {
    if (c.kind == StmtKind::kFor && c.body.size() == 1 && c.body[0].kind == StmtKind::kFor &&
        c.body[0].body.size() == 1 && c.body[0].body[0].kind == StmtKind::kUopBody) {
      c = fold_body(&c, &c.body[0], c.body[0].body[0], ctx);
    } else if (c.kind == StmtKind::kFor && c.body.size() == 1 &&
               c.body[0].kind == StmtKind::kUopBody) {
      c = fold_body(nullptr, &c, c.body[0], ctx);
    } else if (c.kind == StmtKind::kUopBody) {
      c = fold_body(nullptr, nullptr, c, ctx);
    } else {
      TESSEL_CHECK(c.kind != StmtKind::kFor, "loop {} cannot be folded into one instruction",
                   c.name);
      fold_stmt(c, ctx);
    }
  }
}

}  // namespace

void fold_uop_loops(Stmt& root, LoweringContext& ctx) {
  ctx.clear_kernels();
  fold_stmt(root, ctx);
}

}  // namespace tessel::compiler::accel
