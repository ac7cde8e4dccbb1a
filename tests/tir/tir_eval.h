// A reference evaluator for the TIR tests: scalar integer expressions evaluated exactly in int64
// (floordiv/floormod round toward negative infinity, div/mod truncate, casts wrap). Statements
// run on tir_interpreter.h. Independent of compiler/tir/arith on purpose: it is the
// oracle the simplifier and the transforms are checked against.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "compiler/tir/intrinsics.h"
#include "compiler/tir/stmt.h"

namespace tessel::tir::testing {

/// Variable values by identity.
using Env = std::map<const VarNode*, int64_t>;

inline int64_t ref_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline int64_t ref_floormod(int64_t a, int64_t b) { return a - ref_floordiv(a, b) * b; }

/// The value of a scalar integer/bool expression; std::logic_error for what it does not know
/// (loads, unknown calls, floats) or a division by zero.
inline int64_t eval_expr(const Expr& e, Env& env) {
  auto ops = binary_operands(e);
  auto ev = [&](const Expr& x) { return eval_expr(x, env); };
  switch (e.kind()) {
    case ExprKind::kIntImm: return e.as<IntImmNode>()->value;
    case ExprKind::kVar: {
      auto it = env.find(e.as<VarNode>());
      if (it == env.end()) throw std::logic_error("unbound variable " + e.as<VarNode>()->name);
      return it->second;
    }
    case ExprKind::kAdd: return ev(*ops.a) + ev(*ops.b);
    case ExprKind::kSub: return ev(*ops.a) - ev(*ops.b);
    case ExprKind::kMul: return ev(*ops.a) * ev(*ops.b);
    case ExprKind::kDiv:
    case ExprKind::kMod:
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod: {
      int64_t a = ev(*ops.a), b = ev(*ops.b);
      if (b == 0) throw std::logic_error("division by zero");
      if (e.kind() == ExprKind::kDiv) return a / b;
      if (e.kind() == ExprKind::kMod) return a % b;
      if (e.kind() == ExprKind::kFloorDiv) return ref_floordiv(a, b);
      return ref_floormod(a, b);
    }
    case ExprKind::kMin: return std::min(ev(*ops.a), ev(*ops.b));
    case ExprKind::kMax: return std::max(ev(*ops.a), ev(*ops.b));
    case ExprKind::kEQ: return ev(*ops.a) == ev(*ops.b);
    case ExprKind::kNE: return ev(*ops.a) != ev(*ops.b);
    case ExprKind::kLT: return ev(*ops.a) < ev(*ops.b);
    case ExprKind::kLE: return ev(*ops.a) <= ev(*ops.b);
    case ExprKind::kGT: return ev(*ops.a) > ev(*ops.b);
    case ExprKind::kGE: return ev(*ops.a) >= ev(*ops.b);
    case ExprKind::kAnd: return ev(*ops.a) && ev(*ops.b);
    case ExprKind::kOr: return ev(*ops.a) || ev(*ops.b);
    case ExprKind::kNot: return !ev(e.as<NotNode>()->a);
    case ExprKind::kSelect: {
      const auto* s = e.as<SelectNode>();
      int64_t t = ev(s->true_value), f = ev(s->false_value);
      return ev(s->cond) ? t : f;
    }
    case ExprKind::kCast: {
      int64_t v = ev(e.as<CastNode>()->value);
      DataType t = e.dtype();
      if (t.is_bool()) return v != 0;
      if (t.bits >= 64) return v;
      uint64_t mask = (uint64_t{1} << t.bits) - 1;
      uint64_t u = static_cast<uint64_t>(v) & mask;
      if (t.is_int() && (u >> (t.bits - 1))) return static_cast<int64_t>(u) - static_cast<int64_t>(mask) - 1;
      return static_cast<int64_t>(u);
    }
    case ExprKind::kLet: {
      const auto* l = e.as<LetNode>();
      int64_t v = ev(l->value);
      auto [it, fresh] = env.emplace(l->var.get(), v);
      if (!fresh) throw std::logic_error("let rebinds " + l->var.name());
      int64_t r = ev(l->body);
      env.erase(l->var.get());
      return r;
    }
    case ExprKind::kCall: {
      const auto* c = e.as<CallNode>();
      if (c->op == intrin::kLikely) return ev(c->args[0]);
      throw std::logic_error("cannot evaluate call " + c->op);
    }
    default: throw std::logic_error("cannot evaluate expression kind " + std::to_string(static_cast<int>(e.kind())));
  }
}

}  // namespace tessel::tir::testing
