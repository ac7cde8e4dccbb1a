#include "compiler/tir/transforms/storage_flatten.h"

#include <map>
#include <utility>
#include <vector>

#include "compiler/tir/arith/analyzer.h"
#include "compiler/tir/functor.h"
#include "compiler/tir/transforms/transform_util.h"
#include "support/error.h"

namespace tessel::tir::transforms {

namespace {

using arith::Analyzer;

// True for a buffer whose indices already are flat element offsets.
bool is_flat(const Buffer& b) {
  if (b.ndim() != 1 || !is_const_int(b->elem_offset, 0)) return false;
  return b->strides.empty() || is_const_int(b->strides[0], 1);
}

// `e` with `lanes` lanes (a scalar is broadcast).
Expr widen(const Expr& e, int lanes) {
  return lanes > 1 && e.dtype().is_scalar() ? broadcast(e, lanes) : e;
}

class Flattener : public IRMutator {
 public:
  Buffer flat(const Buffer& b) {
    if (is_flat(b)) return b;
    auto it = flat_.find(b.get());
    if (it != flat_.end()) return it->second;
    Expr span;
    if (b->strides.empty() && is_const_int(b->elem_offset, 0)) {
      span = b.num_elements();
    } else {
      std::vector<Expr> strides = b.effective_strides();
      span = b->elem_offset + 1;
      for (size_t j = 0; j < b.ndim(); ++j) span = span + (b->shape[j] - 1) * strides[j];
    }
    span = analyzer_.simplify(span);
    Buffer f = Buffer::over(b->data, b->name, b->dtype, {span}, b->scope);
    flat_.emplace(b.get(), f);
    return f;
  }

 protected:
  using IRMutator::mutate;

  Expr mutate(const BufferLoadNode* op, const Expr& self) override {
    std::vector<Expr> idx;
    bool changed = mutate_exprs(op->indices, idx);
    if (is_flat(op->buffer)) return changed ? buffer_load(op->buffer, idx) : self;
    // A single index into a buffer of other rank already is a flat offset from the data.
    if (idx.size() == 1 && op->buffer.ndim() != 1) return buffer_load(flat(op->buffer), idx);
    return buffer_load(flat(op->buffer), {flat_index(op->buffer, idx)});
  }

  Stmt mutate(const BufferStoreNode* op, const Stmt& self) override {
    Expr v = mutate_expr(op->value);
    std::vector<Expr> idx;
    bool changed = mutate_exprs(op->indices, idx);
    if (is_flat(op->buffer)) return changed || !v.same_as(op->value) ? buffer_store(op->buffer, v, idx) : self;
    if (idx.size() == 1 && op->buffer.ndim() != 1) return buffer_store(flat(op->buffer), v, idx);
    return buffer_store(flat(op->buffer), v, {flat_index(op->buffer, idx)});
  }

  Stmt mutate(const AllocateNode* op, const Stmt& self) override {
    Stmt body = mutate_stmt(op->body);
    Buffer b = flat(op->buffer);
    if (b.same_as(op->buffer) && body.same_as(op->body)) return self;
    return allocate(b, body);
  }

  Stmt mutate(const ForNode* op, const Stmt& self) override {
    return with_fact(analyzer_, op->loop_var, Range{op->min, op->extent}, [&] { return IRMutator::mutate(op, self); });
  }

  Expr mutate(const CallNode* op, const Expr& self) override {
    if (!is_access_ptr(self)) return IRMutator::mutate(op, self);
    std::vector<Expr> args = op->args;
    args[1] = analyzer_.simplify(mutate_expr(op->args[1]));
    args[2] = analyzer_.simplify(mutate_expr(op->args[2]));
    if (args[1].same_as(op->args[1]) && args[2].same_as(op->args[2])) return self;
    return call(op->dtype, op->op, std::move(args));
  }

 private:
  Expr flat_index(const Buffer& b, const std::vector<Expr>& idx) {
    TESSEL_CHECK(idx.size() == b.ndim(), "storage_flatten: buffer {} has {} dimensions, accessed with {} indices",
                 b->name, b.ndim(), idx.size());
    int lanes = 1;
    for (const Expr& i : idx) lanes = std::max(lanes, static_cast<int>(i.dtype().lanes));
    std::vector<Expr> strides = b.effective_strides();
    Expr sum = widen(b->elem_offset, lanes);
    for (size_t j = 0; j < idx.size(); ++j) {
      Expr term = widen(idx[j], lanes) * widen(strides[j], lanes);
      sum = sum + term;
    }
    return analyzer_.simplify(sum);
  }

  Analyzer analyzer_;
  std::map<const BufferNode*, Buffer> flat_;
};

}  // namespace

PrimFunc storage_flatten(const PrimFunc& f) {
  TESSEL_CHECK(f.defined(), "storage_flatten of an undefined function");
  Flattener fl;
  std::vector<std::pair<Var, Buffer>> bmap;
  bool changed = false;
  for (const auto& [param, buf] : f->buffer_map) {
    Buffer b = fl.flat(buf);
    changed |= !b.same_as(buf);
    bmap.emplace_back(param, b);
  }
  Stmt body = fl.mutate_stmt(f->body);
  if (!changed && body.same_as(f->body)) return f;
  return PrimFunc(f->name, f->params, std::move(bmap), body, f->attrs);
}

}  // namespace tessel::tir::transforms
