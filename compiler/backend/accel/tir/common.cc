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

}  // namespace tessel::compiler::accel_tir
