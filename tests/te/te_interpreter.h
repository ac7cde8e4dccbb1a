// A reference interpreter for lowered te functions: runs a PrimFunc over integer buffers
// (every value an int64; stores wrap to the buffer's type; floordiv/floormod round toward
// negative infinity; tir.shift_right is arithmetic). Loops of every kind run serially in order; Allocate gives fresh memory
// whose every element must be written before it is read (a read of an unwritten element, an
// index out of the buffer or an unknown node throws std::logic_error naming it). Independent of
// compiler/te and compiler/tir/arith on purpose: it is the oracle the lowering is checked against.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/tir/function.h"
#include "compiler/tir/intrinsics.h"
#include "tests/tir/tir_eval.h"

namespace tessel::te::testing {

using tir::Expr;
using tir::ExprKind;
using tir::Stmt;
using tir::StmtKind;

class Interpreter {
 public:
  /// Runs `f` with its parameter buffers' contents given by buffer name (each of the buffer's
  /// element count); returns every parameter buffer's contents after the run.
  std::map<std::string, std::vector<int64_t>> run(const tir::PrimFunc& f,
                                                  std::map<std::string, std::vector<int64_t>> buffers) {
    for (const auto& [param, buf] : f->buffer_map) {
      auto it = buffers.find(buf->name);
      if (it == buffers.end()) throw std::logic_error("no contents for buffer " + buf->name);
      Memory m;
      m.data = it->second;
      m.written.assign(m.data.size(), true);
      if (static_cast<int64_t>(m.data.size()) != elements(buf)) {
        throw std::logic_error("buffer " + buf->name + " needs " + std::to_string(elements(buf)) + " elements");
      }
      mem_[buf->data.get()] = std::move(m);
    }
    exec(f->body);
    std::map<std::string, std::vector<int64_t>> out;
    for (const auto& [param, buf] : f->buffer_map) out[buf->name] = mem_.at(buf->data.get()).data;
    return out;
  }
  /// Number of stores executed.
  int64_t stores() const { return stores_; }

 private:
  struct Memory {
    std::vector<int64_t> data;
    std::vector<bool> written;
  };

  int64_t elements(const tir::Buffer& b) {
    int64_t n = 1;
    for (const Expr& e : b->shape) n *= eval(e);
    return n;
  }

  static int64_t wrap(int64_t v, tir::DataType t) {
    if (t.is_bool()) return v != 0;
    if (t.bits >= 64) return v;
    uint64_t mask = (uint64_t{1} << t.bits) - 1;
    uint64_t u = static_cast<uint64_t>(v) & mask;
    if (t.is_int() && (u >> (t.bits - 1))) return static_cast<int64_t>(u) - static_cast<int64_t>(mask) - 1;
    return static_cast<int64_t>(u);
  }

  size_t address(const tir::Buffer& b, const std::vector<Expr>& indices) {
    auto it = mem_.find(b->data.get());
    if (it == mem_.end()) throw std::logic_error("buffer " + b->name + " accessed outside its allocation");
    std::vector<Expr> strides = b.effective_strides();
    if (indices.size() != b->shape.size()) throw std::logic_error("buffer " + b->name + ": wrong index count");
    int64_t flat = b->elem_offset.defined() ? eval(b->elem_offset) : 0;
    for (size_t d = 0; d < indices.size(); ++d) {
      int64_t i = eval(indices[d]), ext = eval(b->shape[d]);
      if (i < 0 || i >= ext) {
        throw std::logic_error("buffer " + b->name + ": index " + std::to_string(i) + " of dimension " +
                               std::to_string(d) + " outside [0, " + std::to_string(ext) + ")");
      }
      flat += i * eval(strides[d]);
    }
    if (flat < 0 || flat >= static_cast<int64_t>(it->second.data.size())) {
      throw std::logic_error("buffer " + b->name + ": flat index " + std::to_string(flat) + " out of memory");
    }
    return static_cast<size_t>(flat);
  }

  int64_t eval(const Expr& e) {
    auto ops = tir::binary_operands(e);
    auto ev = [&](const Expr& x) { return eval(x); };
    switch (e.kind()) {
      case ExprKind::kIntImm: return e.as<tir::IntImmNode>()->value;
      case ExprKind::kVar: {
        auto it = env_.find(e.as<tir::VarNode>());
        if (it == env_.end()) throw std::logic_error("unbound variable " + e.as<tir::VarNode>()->name);
        return it->second;
      }
      case ExprKind::kAdd: return wrap(ev(*ops.a) + ev(*ops.b), e.dtype());
      case ExprKind::kSub: return wrap(ev(*ops.a) - ev(*ops.b), e.dtype());
      case ExprKind::kMul: return wrap(ev(*ops.a) * ev(*ops.b), e.dtype());
      case ExprKind::kDiv:
      case ExprKind::kMod:
      case ExprKind::kFloorDiv:
      case ExprKind::kFloorMod: {
        int64_t a = ev(*ops.a), b = ev(*ops.b);
        if (b == 0) throw std::logic_error("division by zero");
        if (e.kind() == ExprKind::kDiv) return a / b;
        if (e.kind() == ExprKind::kMod) return a % b;
        if (e.kind() == ExprKind::kFloorDiv) return tir::testing::ref_floordiv(a, b);
        return tir::testing::ref_floormod(a, b);
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
      case ExprKind::kNot: return !ev(e.as<tir::NotNode>()->a);
      case ExprKind::kSelect: {
        const auto* s = e.as<tir::SelectNode>();
        return ev(s->cond) ? ev(s->true_value) : ev(s->false_value);
      }
      case ExprKind::kCast: return wrap(ev(e.as<tir::CastNode>()->value), e.dtype());
      case ExprKind::kBufferLoad: {
        const auto* l = e.as<tir::BufferLoadNode>();
        size_t a = address(l->buffer, l->indices);
        const Memory& m = mem_.at(l->buffer->data.get());
        if (!m.written[a]) throw std::logic_error("read of unwritten element " + std::to_string(a) + " of " + l->buffer->name);
        return m.data[a];
      }
      case ExprKind::kCall: {
        const auto* c = e.as<tir::CallNode>();
        if (c->op == tir::intrin::kLikely) return ev(c->args[0]);
        if (c->op == tir::intrin::kShiftRight || c->op == tir::intrin::kShiftLeft) {
          int64_t a = ev(c->args[0]), b = ev(c->args[1]);
          if (b < 0 || b >= 64) throw std::logic_error("shift by " + std::to_string(b));
          // Arithmetic shift right (floor division by 2^b); shift left wraps to the call's type.
          return c->op == tir::intrin::kShiftRight ? (a >> b)
                                                    : wrap(static_cast<int64_t>(static_cast<uint64_t>(a) << b), e.dtype());
        }
        throw std::logic_error("cannot evaluate call " + c->op);
      }
      default: throw std::logic_error("cannot evaluate expression kind " + std::to_string(static_cast<int>(e.kind())));
    }
  }

  void exec(const Stmt& s) {
    switch (s.kind()) {
      case StmtKind::kFor: {
        const auto* f = s.as<tir::ForNode>();
        int64_t mn = eval(f->min), ext = eval(f->extent);
        for (int64_t i = mn; i < mn + ext; ++i) {
          env_[f->loop_var.get()] = i;
          exec(f->body);
        }
        env_.erase(f->loop_var.get());
        return;
      }
      case StmtKind::kIfThenElse: {
        const auto* i = s.as<tir::IfThenElseNode>();
        if (eval(i->cond)) exec(i->then_case);
        else if (i->else_case.defined()) exec(i->else_case);
        return;
      }
      case StmtKind::kSeqStmt:
        for (const Stmt& x : s.as<tir::SeqStmtNode>()->seq) exec(x);
        return;
      case StmtKind::kLetStmt: {
        const auto* l = s.as<tir::LetStmtNode>();
        env_[l->var.get()] = eval(l->value);
        exec(l->body);
        env_.erase(l->var.get());
        return;
      }
      case StmtKind::kAttrStmt: exec(s.as<tir::AttrStmtNode>()->body); return;
      case StmtKind::kAllocate: {
        const auto* a = s.as<tir::AllocateNode>();
        Memory m;
        m.data.assign(static_cast<size_t>(elements(a->buffer)), 0);
        m.written.assign(m.data.size(), false);
        auto saved = mem_.find(a->buffer->data.get());
        if (saved != mem_.end()) throw std::logic_error("allocation of " + a->buffer->name + " twice");
        mem_[a->buffer->data.get()] = std::move(m);
        exec(a->body);
        mem_.erase(a->buffer->data.get());
        return;
      }
      case StmtKind::kBufferStore: {
        const auto* b = s.as<tir::BufferStoreNode>();
        int64_t v = wrap(eval(b->value), b->buffer->dtype);
        size_t a = address(b->buffer, b->indices);
        Memory& m = mem_.at(b->buffer->data.get());
        m.data[a] = v;
        m.written[a] = true;
        ++stores_;
        return;
      }
      case StmtKind::kEvaluate: eval(s.as<tir::EvaluateNode>()->value); return;
      default: throw std::logic_error("cannot run statement kind " + std::to_string(static_cast<int>(s.kind())));
    }
  }

  std::map<const tir::VarNode*, int64_t> env_;
  std::map<const tir::VarNode*, Memory> mem_;
  int64_t stores_ = 0;
};

}  // namespace tessel::te::testing
