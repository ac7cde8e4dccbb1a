#include "compiler/backend/accel/tir/inject_alu.h"

#include <string>
#include <vector>

#include "compiler/backend/accel/tir/common.h"
#include "compiler/target/accel_intrin.h"
#include "compiler/tir/arith/analyzer.h"
#include "compiler/tir/functor.h"
#include "compiler/tir/intrinsics.h"
#include "compiler/tir/printer.h"
#include "compiler/tir/transforms/renew_defs.h"
#include "compiler/tir/util.h"
#include "support/error.h"

namespace tessel::compiler::accel_tir {

namespace {

namespace ta = target::accel;
using tir::Expr;
using tir::MemScope;
using tir::Stmt;

constexpr int64_t kImmMin = -32768, kImmMax = 32767;  // the 16-bit signed ALU immediate

class AluLowering {
 public:
  AluLowering(const isa::HwConfig& cfg, const Stmt& body) : cfg_(cfg), nest_(perfect_nest(body)) {}

  Stmt run() {
    what_ = "the pragma_alu nest" + (nest_.loops.empty() ? std::string() : " at " + nest_name(nest_, ""));
    const auto* st = nest_.body.as<tir::BufferStoreNode>();
    if (!st) throw_user_error("{} is not a loop nest around one buffer store: {}", what_, tir::to_text(nest_.body));
    st_ = st;
    const std::vector<int64_t> ext = nest_extents(nest_, what_);
    const tir::Buffer& dst = st->buffer;
    if (dst->scope != MemScope::kAcc || dst->dtype != tir::DataType::int32()) {
      throw_user_error("{} stores into {} buffer '{}' of {}; the ALU updates int32 acc-scope buffers", what_,
                       tir::to_string(dst->scope), dst->name, dst->dtype.str());
    }
    parse(st->value);
    if (first_ && (first_->buffer.same_as(dst) || (src_ && src_->buffer.same_as(dst)))) {
      throw_user_error("{}: {} reads '{}' at other indices than it stores (an out-of-place update must read "
                       "other acc buffers)", what_, tir::to_text(st->value), dst->name);
    }
    const int64_t elem = int64_t{cfg_.batch()} * cfg_.block_out();
    const std::string elem_text = fmt::format("{}x{} local.acc_buffer", cfg_.batch(), cfg_.block_out());
    const LinearIndex ld =
        linear_index(dst.flat_index(st->indices), nest_, what_, fmt::format("the index of '{}'", dst->name));
    std::vector<std::pair<std::string, const LinearIndex*>> acc = {{fmt::format("'{}'", dst->name), &ld}};
    LinearIndex ls, lf;
    if (src_) {
      ls = linear_index(src_->buffer.flat_index(src_->indices), nest_, what_,
                        fmt::format("the index of the operand '{}'", src_->buffer->name));
      acc.emplace_back(fmt::format("the operand '{}'", src_->buffer->name), &ls);
    }
    if (first_) {
      lf = linear_index(first_->buffer.flat_index(first_->indices), nest_, what_,
                        fmt::format("the index of the operand '{}'", first_->buffer->name));
      acc.emplace_back(fmt::format("the operand '{}'", first_->buffer->name), &lf);
    }
    const size_t outer = element_loops_start(nest_, ext, acc, elem, elem_text, what_);
    auto row_of = [&](const LinearIndex& lin, const std::string& name) {
      Expr r = exact_div(lin.base, elem, what_ + ": the first value of " + name);
      for (size_t k = 0; k < outer; ++k) {
        if (lin.coef[k] % elem != 0) {
          throw_user_error("loop '{}' of {}: {} steps by {}, not a multiple of the element size {}",
                           nest_.loops[k]->loop_var.name(), what_, name, lin.coef[k], elem);
        }
        if (lin.coef[k] != 0) r = r + nest_.loops[k]->loop_var * int(lin.coef[k] / elem);
      }
      tir::arith::Analyzer az;
      return az.simplify(r);
    };
    const Expr dst_row = row_of(ld, "'" + dst->name + "'");
    const Expr dst_ptr = ta::sram_ptr(cfg_, dst, dst_row, 1, 3);
    const Expr src_ptr =
        src_ ? ta::sram_ptr(cfg_, src_->buffer, row_of(ls, "'" + src_->buffer->name + "'"), 1, 1) : dst_ptr;
    const std::vector<const tir::ForNode*> loops(nest_.loops.begin(), nest_.loops.begin() + static_cast<long>(outer));
    auto kernel = [&](isa::AluOp op, bool use_imm, int64_t imm, const Expr& s) {
      Stmt uop = ta::alu_uop(op, use_imm, static_cast<int32_t>(imm), dst_ptr, s);
      return ta::coproc_scope(isa::Module::kCompute,
                              tir::attr_stmt(Expr(), std::string(ta::kUopKernel), 1, wrap_loops(loops, uop)));
    };
    if (!first_) return kernel(op_, !src_, imm_, src_ptr);
    // out of place, dst = a op v: the ALU only updates dst, so dst = dst * 0, dst = dst + a, then
    // dst = dst op v (three instructions)
    const Expr a_ptr = ta::sram_ptr(cfg_, first_->buffer, row_of(lf, "'" + first_->buffer->name + "'"), 1, 1);
    // (the copies get fresh loop variables: the function stays single-assignment)
    return tir::seq({kernel(isa::AluOp::kMul, true, 0, dst_ptr),
                     tir::transforms::renew_defs(kernel(isa::AluOp::kAdd, false, 0, a_ptr)),
                     tir::transforms::renew_defs(kernel(op_, !src_, imm_, src_ptr))});
  }

 private:
  static bool is_acc_load(const Expr& e) {
    const auto* l = e.as<tir::BufferLoadNode>();
    return l && l->buffer->scope == MemScope::kAcc && l->dtype == tir::DataType::int32();
  }

  bool is_self(const Expr& e) const {
    const auto* l = e.as<tir::BufferLoadNode>();
    if (!l || !l->buffer.same_as(st_->buffer) || l->indices.size() != st_->indices.size()) return false;
    for (size_t k = 0; k < l->indices.size(); ++k) {
      if (!tir::structural_equal(l->indices[k], st_->indices[k])) return false;
    }
    return true;
  }

  /// The second operand: an int32 immediate or an acc-scope int32 load.
  void operand(const Expr& v, bool negate) {
    if (const int64_t* c = tir::as_const_int(v)) {
      const int64_t x = negate ? -*c : *c;
      if (x < kImmMin || x > kImmMax) {
        throw_user_error("{}: the immediate {} does not fit the 16-bit signed ALU immediate field [{}, {}]", what_, x,
                         kImmMin, kImmMax);
      }
      imm_ = x;
      return;
    }
    const auto* l = v.as<tir::BufferLoadNode>();
    if (negate || !l || l->buffer->scope != MemScope::kAcc || l->dtype != tir::DataType::int32()) {
      throw_user_error("{}: the operand {} is not {}", what_, tir::to_text(v),
                       negate ? "a constant (a vector operand cannot be negated)"
                              : "an int32 constant or an int32 acc-scope buffer load");
    }
    src_ = l;
  }

  void parse(const Expr& value) {
    const std::string form =
        "dst = a op v with op +, *, max, min, shift_right (or a - imm, shift_left(a, imm)), a the stored element "
        "or an acc load, and v an immediate or an acc load";
    auto commutative = [&](const Expr& a, const Expr& b, isa::AluOp op) {
      op_ = op;
      if (is_self(a)) {
        operand(b, false);
      } else if (is_self(b)) {
        operand(a, false);
      } else if (is_acc_load(a)) {
        first_ = a.as<tir::BufferLoadNode>();
        operand(b, false);
      } else if (is_acc_load(b)) {
        first_ = b.as<tir::BufferLoadNode>();
        operand(a, false);
      } else {
        throw_user_error("{}: {} reads neither the stored element of '{}' nor another acc buffer ({})", what_,
                         tir::to_text(value), st_->buffer->name, form);
      }
    };
    auto ordered = [&](const Expr& a, const Expr& b, isa::AluOp op, bool negate) {
      op_ = op;
      if (!is_self(a)) {
        if (!is_acc_load(a)) {
          throw_user_error("{}: {} takes neither the stored element of '{}' nor an acc load as its first operand ({})",
                           what_, tir::to_text(value), st_->buffer->name, form);
        }
        first_ = a.as<tir::BufferLoadNode>();
      }
      operand(b, negate);
    };
    if (const auto* n = value.as<tir::AddNode>()) return commutative(n->a, n->b, isa::AluOp::kAdd);
    if (const auto* n = value.as<tir::MulNode>()) return commutative(n->a, n->b, isa::AluOp::kMul);
    if (const auto* n = value.as<tir::MaxNode>()) return commutative(n->a, n->b, isa::AluOp::kMax);
    if (const auto* n = value.as<tir::MinNode>()) return commutative(n->a, n->b, isa::AluOp::kMin);
    if (const auto* n = value.as<tir::SubNode>()) {
      if (!tir::as_const_int(n->b)) {
        throw_user_error("{}: {} subtracts a non-constant (the ALU has no vector subtraction)", what_,
                         tir::to_text(value));
      }
      return ordered(n->a, n->b, isa::AluOp::kAdd, true);
    }
    if (const auto* c = value.as<tir::CallNode>(); c && c->args.size() == 2) {
      if (c->op == tir::intrin::kShiftRight) return ordered(c->args[0], c->args[1], isa::AluOp::kShr, false);
      if (c->op == tir::intrin::kShiftLeft) {
        if (!tir::as_const_int(c->args[1])) {
          throw_user_error("{}: {} shifts left by a non-constant", what_, tir::to_text(value));
        }
        return ordered(c->args[0], c->args[1], isa::AluOp::kShr, true);
      }
    }
    throw_user_error("{}: {} is not an ALU operation ({})", what_, tir::to_text(value), form);
  }

  const isa::HwConfig& cfg_;
  PerfectNest nest_;
  std::string what_;
  const tir::BufferStoreNode* st_ = nullptr;
  isa::AluOp op_ = isa::AluOp::kAdd;
  int64_t imm_ = 0;
  const tir::BufferLoadNode* src_ = nullptr;
  const tir::BufferLoadNode* first_ = nullptr;  ///< the out-of-place form's first operand a
};

}  // namespace

tir::PrimFunc inject_alu(const tir::PrimFunc& f, const isa::HwConfig& cfg) {
  return rewrite_pragma(f, ta::kPragmaAlu, [&](const Stmt& body) { return AluLowering(cfg, body).run(); });
}

}  // namespace tessel::compiler::accel_tir
