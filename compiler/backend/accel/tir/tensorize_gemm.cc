#include "compiler/backend/accel/tir/tensorize_gemm.h"

#include <algorithm>
#include <string>
#include <vector>

#include "compiler/backend/accel/tir/common.h"
#include "compiler/target/accel_intrin.h"
#include "compiler/tir/arith/analyzer.h"
#include "compiler/tir/functor.h"
#include "compiler/tir/intrinsics.h"
#include "compiler/tir/printer.h"
#include "compiler/tir/util.h"
#include "support/error.h"

namespace tessel::compiler::accel_tir {

namespace {

namespace ta = target::accel;
using tir::Expr;
using tir::MemScope;
using tir::Stmt;

class GemmMatch {
 public:
  GemmMatch(const isa::HwConfig& cfg, const PerfectNest& nest) : cfg_(cfg), nest_(nest) {}

  Stmt run() {
    const auto* st = nest_.body.as<tir::BufferStoreNode>();
    const tir::Buffer& acc = st->buffer;
    what_ = "gemm nest at " + nest_name(nest_, "the store into '" + acc->name + "'");
    const std::vector<int64_t> ext = nest_extents(nest_, what_);
    const int64_t nb = cfg_.batch(), nbi = cfg_.block_in(), nbo = cfg_.block_out();
    check_buffer(acc, tir::DataType::int32(), nb, nbo, "acc");
    const tir::Var b = trailing_var(st->indices, 2, acc, "batch");
    const tir::Var o = trailing_var(st->indices, 1, acc, "output-channel");
    const bool reset = tir::is_const_int(st->value, 0);
    Expr inp_row = 0, wgt_row = 0;
    std::vector<std::pair<tir::Var, int64_t>> inner = {{b, nb}, {o, nbo}};
    if (!reset) {
      const auto* add = st->value.as<tir::AddNode>();
      if (!add) {
        throw_user_error(
            "{}: the update {} is not acc + product (or 0 for the init); an acc store outside pragma_dma_copy and "
            "pragma_alu must be a GEMM update or init",
            what_, value_text(st));
      }
      Expr product;
      if (is_self_load(add->a, st)) {
        product = add->b;
      } else if (is_self_load(add->b, st)) {
        product = add->a;
      } else {
        throw_user_error("{}: neither operand of {} loads '{}' at the stored indices", what_, value_text(st),
                         acc->name);
      }
      const auto* mul = product.as<tir::MulNode>();
      if (!mul) throw_user_error("{}: {} is not a product int32(inp) * int32(wgt)", what_, tir::to_text(product));
      const tir::BufferLoadNode* x = widened_load(mul->a);
      const tir::BufferLoadNode* y = widened_load(mul->b);
      if (x && x->buffer->scope == MemScope::kWgt) std::swap(x, y);
      if (!x || !y || x->buffer->scope != MemScope::kInp || y->buffer->scope != MemScope::kWgt) {
        throw_user_error("{}: the product {} is not int32(<inp-scope int8 load>) * int32(<wgt-scope int8 load>)", what_,
                         tir::to_text(product));
      }
      check_buffer(x->buffer, tir::DataType::int8(), nb, nbi, "inp");
      check_buffer(y->buffer, tir::DataType::int8(), nbo, nbi, "wgt");
      const tir::Var xb = trailing_var(x->indices, 2, x->buffer, "batch");
      const tir::Var i = trailing_var(x->indices, 1, x->buffer, "reduction");
      const tir::Var yo = trailing_var(y->indices, 2, y->buffer, "output-channel");
      const tir::Var yi = trailing_var(y->indices, 1, y->buffer, "reduction");
      if (!xb.same_as(b)) {
        throw_user_error("{}: inp '{}' is indexed by '{}' where acc has its batch variable '{}'", what_,
                         x->buffer->name, xb.name(), b.name());
      }
      if (!yo.same_as(o)) {
        throw_user_error("{}: wgt '{}' is indexed by '{}' where acc has its output-channel variable '{}'", what_,
                         y->buffer->name, yo.name(), o.name());
      }
      if (!yi.same_as(i)) {
        throw_user_error("{}: inp '{}' and wgt '{}' reduce over different variables '{}' and '{}'", what_,
                         x->buffer->name, y->buffer->name, i.name(), yi.name());
      }
      if (i.same_as(b) || i.same_as(o) || b.same_as(o)) {
        throw_user_error("{}: the batch, output-channel and reduction variables must differ", what_);
      }
      inner.emplace_back(i, nbi);
      inp_row = ta::sram_ptr(cfg_, x->buffer, leading_row(x->buffer, x->indices, {b, o, i}), 1, 1);
      wgt_row = ta::sram_ptr(cfg_, y->buffer, leading_row(y->buffer, y->indices, {b, o, i}), 1, 1);
    } else if (b.same_as(o)) {
      throw_user_error("{}: the batch and output-channel variables must differ", what_);
    }
    std::vector<tir::Var> inner_vars;
    for (const auto& p : inner) inner_vars.push_back(p.first);
    const Expr acc_row = leading_row(acc, st->indices, inner_vars);
    // the innermost loops are exactly b, o (, i) with the intrinsic's extents
    const size_t n = inner.size();
    if (nest_.loops.size() < n) {
      throw_user_error("{}: {} loops, the {} intrinsic needs its {} innermost loops over {}", what_, nest_.loops.size(),
                       reset ? "reset" : "gemm", n, roles(inner));
    }
    for (size_t k = nest_.loops.size() - n; k < nest_.loops.size(); ++k) {
      const tir::Var& v = nest_.loops[k]->loop_var;
      const auto it = std::find_if(inner.begin(), inner.end(), [&](const auto& p) { return p.first.same_as(v); });
      if (it == inner.end()) {
        throw_user_error("{}: loop '{}' is among the {} innermost loops, which must be the loops over {}", what_,
                         v.name(), n, roles(inner));
      }
      if (ext[k] != it->second) {
        throw_user_error("{}: loop '{}' has extent {}, the intrinsic's dimension is {}", what_, v.name(), ext[k],
                         it->second);
      }
    }
    const std::vector<const tir::ForNode*> outer(nest_.loops.begin(), nest_.loops.end() - static_cast<long>(n));
    Stmt uop = ta::gemm_uop(reset, ta::sram_ptr(cfg_, acc, acc_row, 1, 3), inp_row, wgt_row);
    Stmt kernel = tir::attr_stmt(Expr(), std::string(ta::kUopKernel), 0, wrap_loops(outer, uop));
    return ta::coproc_scope(isa::Module::kCompute, kernel);
  }

 private:
  static std::string value_text(const tir::BufferStoreNode* st) { return tir::to_text(st->value); }

  static std::string roles(const std::vector<std::pair<tir::Var, int64_t>>& inner) {
    std::string s;
    for (const auto& [v, e] : inner) s += (s.empty() ? "'" : ", '") + v.name() + "' (" + std::to_string(e) + ")";
    return s;
  }

  bool is_self_load(const Expr& e, const tir::BufferStoreNode* st) const {
    const auto* l = e.as<tir::BufferLoadNode>();
    if (!l || !l->buffer.same_as(st->buffer) || l->indices.size() != st->indices.size()) return false;
    for (size_t k = 0; k < l->indices.size(); ++k) {
      if (!tir::structural_equal(l->indices[k], st->indices[k])) return false;
    }
    return true;
  }

  static const tir::BufferLoadNode* widened_load(const Expr& e) {
    const auto* c = e.as<tir::CastNode>();
    if (!c || c->dtype != tir::DataType::int32()) return nullptr;
    const auto* l = c->value.as<tir::BufferLoadNode>();
    return l && l->dtype == tir::DataType::int8() ? l : nullptr;
  }

  void check_buffer(const tir::Buffer& buf, tir::DataType t, int64_t rows, int64_t cols, const char* role) const {
    const size_t nd = buf.ndim();
    if (buf->dtype != t) {
      throw_user_error("{}: {} buffer '{}' holds {}, the intrinsic needs {}", what_, role, buf->name, buf->dtype.str(),
                       t.str());
    }
    const bool compact =
        buf->strides.empty() && (!buf->elem_offset.defined() || tir::is_const_int(buf->elem_offset, 0));
    if (nd < 2 || !compact || !tir::is_const_int(buf->shape[nd - 2], rows) ||
        !tir::is_const_int(buf->shape[nd - 1], cols)) {
      std::string shape;
      for (const Expr& e : buf->shape) shape += (shape.empty() ? "" : ", ") + tir::to_text(e);
      throw_user_error("{}: {} buffer '{}' of shape [{}] is not a compact [.., {}, {}] buffer", what_, role, buf->name,
                       shape, rows, cols);
    }
  }

  /// The loop variable at indices[size - from_end]; UserError naming the role otherwise.
  tir::Var trailing_var(const std::vector<Expr>& indices, size_t from_end, const tir::Buffer& buf,
                        const char* role) const {
    const Expr& e = indices[indices.size() - from_end];
    const auto* v = e.as<tir::VarNode>();
    bool bound = false;
    for (const tir::ForNode* f : nest_.loops) bound = bound || f->loop_var.get() == v;
    if (!v || !bound) {
      throw_user_error("{}: the {} index of '{}' is {}, not a variable of the nest's loops", what_, role, buf->name,
                       tir::to_text(e));
    }
    return tir::Var::from(e);
  }

  /// The leading indices flattened over the leading shape (the scratchpad row).
  Expr leading_row(const tir::Buffer& buf, const std::vector<Expr>& indices, const std::vector<tir::Var>& inner) const {
    Expr r = 0;
    const size_t nd = buf.ndim();
    for (size_t k = 0; k + 2 < nd; ++k) {
      for (const tir::Var& v : inner) {
        if (tir::uses_var(indices[k], v)) {
          throw_user_error("{}: leading index {} of '{}' uses the intrinsic's variable '{}'", what_,
                           tir::to_text(indices[k]), buf->name, v.name());
        }
      }
      r = k == 0 ? indices[k] : r * buf->shape[k] + indices[k];
    }
    tir::arith::Analyzer az;
    return az.simplify(r);
  }

  const isa::HwConfig& cfg_;
  const PerfectNest& nest_;
  std::string what_;
};

class Tensorizer : public tir::IRMutator {
 public:
  explicit Tensorizer(const isa::HwConfig& cfg) : cfg_(cfg) {}

 protected:
  using tir::IRMutator::mutate;
  Stmt mutate(const tir::AttrStmtNode* op, const Stmt& self) override {
    if (op->key == ta::kPragmaDmaCopy || op->key == ta::kPragmaAlu || op->key == ta::kUopKernel ||
        op->key == ta::kCoprocScope) {
      return self;
    }
    return tir::IRMutator::mutate(op, self);
  }
  Stmt mutate(const tir::ForNode* op, const Stmt& self) override {
    const PerfectNest nest = perfect_nest(self);
    const auto* st = nest.body.as<tir::BufferStoreNode>();
    if (st && st->buffer->scope == MemScope::kAcc) return GemmMatch(cfg_, nest).run();
    return tir::IRMutator::mutate(op, self);
  }
  Stmt mutate(const tir::BufferStoreNode* op, const Stmt& self) override {
    if (op->buffer->scope == MemScope::kAcc) return GemmMatch(cfg_, perfect_nest(self)).run();
    return self;
  }

 private:
  const isa::HwConfig& cfg_;
};

}  // namespace

tir::PrimFunc tensorize_gemm(const tir::PrimFunc& f, const isa::HwConfig& cfg) {
  Tensorizer t(cfg);
  return f.with_body(t.mutate_stmt(f->body));
}

}  // namespace tessel::compiler::accel_tir
