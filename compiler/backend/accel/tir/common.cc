#include "compiler/backend/accel/tir/common.h"

#include "compiler/tir/arith/analyzer.h"
#include "compiler/tir/functor.h"
#include "compiler/tir/intrinsics.h"
#include "compiler/tir/printer.h"
#include "support/error.h"

namespace tessel::compiler::accel_tir {

namespace {

class AllocCollector : public tir::IRVisitor {
 public:
  std::map<const tir::VarNode*, tir::Buffer>* out = nullptr;
  std::map<const tir::VarNode*, SramPlacement>* placements = nullptr;

 protected:
  using tir::IRVisitor::visit;
  void visit(const tir::AllocateNode* op) override {
    if (out) (*out)[op->buffer->data.get()] = op->buffer;
    if (placements) {
      if (const auto* a = op->body.as<tir::AttrStmtNode>(); a && a->key == kSramBase) {
        TESSEL_CHECK(a->node.same_as(op->buffer->data), "{} of another buffer inside the allocation of {}",
                     kSramBase, op->buffer->name);
        const int64_t* row = tir::as_const_int(a->value);
        TESSEL_CHECK(row != nullptr, "{} of {} is not a constant", kSramBase, op->buffer->name);
        SramPlacement p;
        p.buffer = op->buffer;
        p.row = *row;
        (*placements)[op->buffer->data.get()] = p;
      }
    }
    tir::IRVisitor::visit(op);
  }
  void visit(const tir::AttrStmtNode* op) override {
    if (placements && op->key == kSramBase) {
      const auto* v = op->node.as<tir::VarNode>();
      TESSEL_CHECK(v != nullptr && placements->count(v) != 0, "{} outside the allocation of its buffer",
                   kSramBase);
    }
    tir::IRVisitor::visit(op);
  }
};

}  // namespace

std::map<const tir::VarNode*, tir::Buffer> buffers_by_data(const tir::PrimFunc& f) {
  std::map<const tir::VarNode*, tir::Buffer> out;
  for (const auto& [param, buf] : f->buffer_map) out[buf->data.get()] = buf;
  AllocCollector c;
  c.out = &out;
  c.visit_stmt(f->body);
  return out;
}

std::map<const tir::VarNode*, SramPlacement> sram_placements(const tir::Stmt& s) {
  std::map<const tir::VarNode*, SramPlacement> out;
  AllocCollector c;
  c.placements = &out;
  c.visit_stmt(s);
  return out;
}

std::optional<AccessPtr> as_access_ptr(const tir::Expr& e) {
  const auto* c = e.as<tir::CallNode>();
  if (!c || c->op != tir::intrin::kAccessPtr || c->args.size() != 4) return std::nullopt;
  const auto* v = c->args[0].as<tir::VarNode>();
  const int64_t* mask = tir::as_const_int(c->args[3]);
  if (!v || !mask) return std::nullopt;
  return AccessPtr{v, c->args[1], c->args[2], static_cast<int>(*mask)};
}

const tir::CallNode* evaluated_call(const tir::Stmt& s) {
  const auto* ev = s.as<tir::EvaluateNode>();
  return ev ? ev->value.as<tir::CallNode>() : nullptr;
}

int64_t buffer_bytes(const tir::Buffer& buf) {
  const std::optional<int64_t> n = tir::arith::as_const(buf.num_elements());
  if (!n) {
    tir::arith::Analyzer az;
    throw_user_error("buffer '{}' has a non-constant shape ({} elements)", buf->name,
                     tir::to_text(az.simplify(buf.num_elements())));
  }
  return *n * buf->dtype.bytes();
}

int64_t scratchpad_rows(const tir::Buffer& buf, int64_t elem_bytes) {
  const int64_t bytes = buffer_bytes(buf);
  return (bytes + elem_bytes - 1) / elem_bytes;
}

std::vector<int64_t> nest_extents(const PerfectNest& nest, const std::string& what) {
  std::vector<int64_t> out;
  for (const tir::ForNode* f : nest.loops) {
    if (!tir::is_const_int(f->min, 0)) {
      throw_user_error("loop '{}' of {} starts at {}; the loop must start at 0", f->loop_var.name(), what,
                       tir::to_text(f->min));
    }
    const int64_t* e = tir::as_const_int(f->extent);
    if (!e || *e <= 0) {
      throw_user_error("loop '{}' of {} has extent {}; the extent must be a positive constant",
                       f->loop_var.name(), what, tir::to_text(f->extent));
    }
    out.push_back(*e);
  }
  return out;
}

LinearIndex linear_index(const tir::Expr& e, const PerfectNest& nest, const std::string& what,
                         const std::string& role) {
  std::vector<tir::Var> vars;
  for (const tir::ForNode* f : nest.loops) vars.push_back(f->loop_var);
  const auto lin = tir::arith::detect_linear_equation(e, vars);
  if (!lin) {
    tir::arith::Analyzer az;
    throw_user_error("{} of {}: {} is not linear in the loop variables", role, what,
                     tir::to_text(az.simplify(e)));
  }
  LinearIndex out;
  for (size_t k = 0; k < vars.size(); ++k) {
    const std::optional<int64_t> c = tir::arith::as_const((*lin)[k]);
    if (!c) {
      throw_user_error("loop '{}' of {}: {} steps by {}, not a constant", vars[k].name(), what, role,
                       tir::to_text((*lin)[k]));
    }
    out.coef.push_back(*c);
  }
  out.base = (*lin)[vars.size()];
  return out;
}

size_t element_loops_start(const PerfectNest& nest, const std::vector<int64_t>& extents,
                           const std::vector<std::pair<std::string, const LinearIndex*>>& accesses,
                           int64_t elem, const std::string& elem_text, const std::string& what) {
  int64_t p = 1;
  size_t k = nest.loops.size();
  while (p < elem && k > 0) {
    --k;
    if (extents[k] == 1) continue;
    for (const auto& [role, lin] : accesses) {
      if (lin->coef[k] != p) {
        throw_user_error(
            "loop '{}' of {}: {} steps by {}, but the innermost loops must walk one {} element "
            "contiguously (step {} here)",
            nest.loops[k]->loop_var.name(), what, role, lin->coef[k], elem_text, p);
      }
    }
    p *= extents[k];
  }
  if (p != elem) {
    throw_user_error("{}: the innermost loops cover {} values, but one {} element has {}", what, p, elem_text,
                     elem);
  }
  // extent-1 loops directly outside the element belong to it too; keep them outside (harmless)
  return k;
}

tir::Expr exact_div(const tir::Expr& e, int64_t d, const std::string& what) {
  tir::arith::Analyzer az;
  const tir::Expr m = az.simplify(tir::floormod(e, tir::make_const(e.dtype(), d)));
  if (!tir::is_const_int(m, 0)) {
    throw_user_error("{}: {} is not a multiple of the element size {}", what, tir::to_text(az.simplify(e)), d);
  }
  return az.simplify(tir::floordiv(e, tir::make_const(e.dtype(), d)));
}

std::string nest_name(const PerfectNest& nest, const std::string& fallback) {
  if (nest.loops.empty()) return fallback;
  return "loop '" + nest.loops.front()->loop_var.name() + "'";
}

namespace {

class PragmaRewriter : public tir::IRMutator {
 public:
  PragmaRewriter(std::string_view key, const std::function<tir::Stmt(const tir::Stmt&)>& lower)
      : key_(key), lower_(lower) {}

 protected:
  using tir::IRMutator::mutate;
  tir::Stmt mutate(const tir::AttrStmtNode* op, const tir::Stmt& self) override {
    if (op->key != key_) return tir::IRMutator::mutate(op, self);
    return lower_(op->body);
  }

 private:
  std::string_view key_;
  const std::function<tir::Stmt(const tir::Stmt&)>& lower_;
};

}  // namespace

tir::PrimFunc rewrite_pragma(const tir::PrimFunc& f, std::string_view key,
                             const std::function<tir::Stmt(const tir::Stmt& body)>& lower) {
  PragmaRewriter r(key, lower);
  return f.with_body(r.mutate_stmt(f->body));
}

}  // namespace tessel::compiler::accel_tir
