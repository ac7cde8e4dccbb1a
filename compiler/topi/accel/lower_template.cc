#include <algorithm>
#include <functional>
#include <numeric>
#include <map>
#include <optional>

#include "compiler/tir/arith/analyzer.h"

#include "compiler/target/accel_intrin.h"
#include "compiler/te/lower.h"
#include "compiler/tir/functor.h"
#include "compiler/tir/transforms/loop_partition.h"
#include "compiler/tir/util.h"
#include "compiler/topi/accel/schedule.h"

namespace tessel::topi::accel {

using tir::Buffer;
using tir::Expr;
using tir::Stmt;

namespace {

/// The innermost statement of a perfect loop nest when it is a store, or null.
const tir::BufferStoreNode* nest_store(const Stmt& s) { return tir::perfect_nest(s).body.as<tir::BufferStoreNode>(); }

/// The operand of an ALU step's value that reads a buffer at the store's own indices: the first
/// operand of a binary node, min/max, or shift_right.
const tir::BufferLoadNode* first_operand(const Expr& v) {
  Expr a;
  if (v.kind() == tir::ExprKind::kCall) {
    const auto* c = v.as<tir::CallNode>();
    if (c->args.size() == 2) a = c->args[0];
  } else if (auto ops = tir::binary_operands(v); ops.a) {
    a = *ops.a;
  }
  if (!a.defined() || a.kind() != tir::ExprKind::kBufferLoad) return nullptr;
  return a.as<tir::BufferLoadNode>();
}

int count_loads(const Stmt& s, const tir::VarNode* data) {
  int n = 0;
  tir::post_order_visit(s, [&](const Expr& e) {
    if (e.kind() == tir::ExprKind::kBufferLoad && e.as<tir::BufferLoadNode>()->buffer->data.get() == data) ++n;
  });
  return n;
}

bool same_shape(const Buffer& a, const Buffer& b) {
  if (a->dtype != b->dtype || a->scope != b->scope || a->shape.size() != b->shape.size()) return false;
  for (size_t i = 0; i < a->shape.size(); ++i) {
    if (!tir::structural_equal(a->shape[i], b->shape[i])) return false;
  }
  return a->strides.empty() && b->strides.empty();
}

/// Finds one out-of-place ALU nest whose source dies there: (dst, src).
struct Finder : tir::IRVisitor {
  Stmt root;
  int total_of(const tir::VarNode* v) const { return count_loads(root, v); }
  std::optional<std::pair<Buffer, Buffer>> found;
  void visit(const tir::SeqStmtNode* op) override {
    for (size_t k = 0; k < op->seq.size() && !found; ++k) {
      const Stmt& s = op->seq[k];
      if (s.kind() != tir::StmtKind::kAttrStmt) continue;
      const auto* at = s.as<tir::AttrStmtNode>();
      if (at->key != compiler::target::accel::kPragmaAlu) continue;
      const tir::BufferStoreNode* st = nest_store(at->body);
      if (!st || st->buffer->scope != tir::MemScope::kAcc) continue;
      const tir::BufferLoadNode* src = first_operand(st->value);
      if (!src || src->buffer.same_as(st->buffer) || !same_shape(src->buffer, st->buffer)) continue;
      if (src->indices.size() != st->indices.size()) continue;
      bool same_idx = true;
      for (size_t i = 0; i < st->indices.size(); ++i) same_idx = same_idx && tir::structural_equal(src->indices[i], st->indices[i]);
      if (!same_idx) continue;
      // Every load of the source is in this sequence up to this nest: it dies here.
      int before = 0;
      for (size_t j = 0; j <= k; ++j) before += count_loads(op->seq[j], src->buffer->data.get());
      if (before != total_of(src->buffer->data.get())) continue;
      found = std::make_pair(st->buffer, src->buffer);
    }
    if (!found) tir::IRVisitor::visit(op);
  }
};

/// Renames buffer `from` to `to` (its Allocate removed).
struct Rename : tir::IRMutator {
  Buffer from, to;
  Buffer mutate_buffer(const Buffer& b) override { return b.same_as(from) ? to : b; }
  Expr mutate(const tir::VarNode* op, const Expr& self) override {
    return op == from->data.get() ? Expr(to->data) : self;
  }
  Stmt mutate(const tir::AllocateNode* op, const Stmt& self) override {
    if (op->buffer.same_as(from)) return mutate_stmt(op->body);
    return tir::IRMutator::mutate(op, self);
  }
};

/// Wraps every perfect loop nest around one accel.gemm_uop (the tensorized blocks) in
/// accel.coproc_scope compute { accel.uop_kernel 0 { nest } }.
struct MarkGemm : tir::IRMutator {
  static bool is_gemm_nest(const Stmt& s) {
    Stmt cur = s;
    while (cur.kind() == tir::StmtKind::kFor) cur = cur.as<tir::ForNode>()->body;
    if (cur.kind() != tir::StmtKind::kEvaluate) return false;
    const Expr& v = cur.as<tir::EvaluateNode>()->value;
    return v.kind() == tir::ExprKind::kCall && v.as<tir::CallNode>()->op == compiler::target::accel::kGemmUop;
  }
  static Stmt wrap(const Stmt& s) {
    return compiler::target::accel::coproc_scope(
        isa::Module::kCompute, tir::attr_stmt(Expr(), std::string(compiler::target::accel::kUopKernel), Expr(0), s));
  }
  Stmt mutate(const tir::ForNode* op, const Stmt& self) override {
    if (is_gemm_nest(self)) return wrap(self);
    return tir::IRMutator::mutate(op, self);
  }
  Stmt mutate(const tir::EvaluateNode* op, const Stmt& self) override {
    if (is_gemm_nest(self)) return wrap(self);
    return tir::IRMutator::mutate(op, self);
  }
  Stmt mutate(const tir::AttrStmtNode* op, const Stmt& self) override {
    if (op->key == compiler::target::accel::kUopKernel) return self;  // already a kernel
    return tir::IRMutator::mutate(op, self);
  }
};

/// Whether `s` reads or writes buffer `data` (loads, stores and access intrinsics).
bool references(const Stmt& s, const tir::VarNode* data) {
  const tir::BufferAccess acc = tir::buffer_access(s);
  return acc.reads.count(data) > 0 || acc.writes.count(data) > 0;
}

/// The statements of a sequence, nested sequences flattened.
void flatten(const Stmt& s, std::vector<Stmt>* out) {
  if (s.kind() == tir::StmtKind::kSeqStmt) {
    for (const Stmt& x : s.as<tir::SeqStmtNode>()->seq) flatten(x, out);
  } else {
    out->push_back(s);
  }
}

/// `f` applied to the statement under a chain of Allocates (other buffers allocated between
/// a buffer's Allocate and its uses), the chain rebuilt around its result; nullopt when `f`
/// gives nullopt.
std::optional<Stmt> under_allocates(const Stmt& body, const std::function<std::optional<Stmt>(const Stmt&)>& f) {
  if (body.kind() != tir::StmtKind::kAllocate) return f(body);
  const auto* al = body.as<tir::AllocateNode>();
  std::optional<Stmt> inner = under_allocates(al->body, f);
  if (!inner) return std::nullopt;
  return tir::allocate(al->buffer, *inner);
}

struct LoopRange {
  tir::Var var;
  int64_t min = 0, extent = 0;
};

/// guard_zero_constant_tiles: see schedule.h.
struct GuardZeroTiles : tir::IRMutator {
  std::map<const tir::VarNode*, const std::vector<int32_t>*> constants;  ///< global data -> values
  std::map<const tir::VarNode*, std::vector<int64_t>> shapes;            ///< global data -> shape
  std::vector<LoopRange> loops;  ///< the loops around the statement (a non-constant one: extent -1)

  Stmt mutate(const tir::ForNode* op, const Stmt& self) override {
    const std::optional<int64_t> mn = tir::arith::as_const(op->min), ext = tir::arith::as_const(op->extent);
    loops.push_back({op->loop_var, mn ? *mn : 0, mn && ext ? *ext : -1});
    Stmt r = tir::IRMutator::mutate(op, self);
    loops.pop_back();
    return r;
  }

  Stmt mutate(const tir::AllocateNode* op, const Stmt& self) override {
    Stmt body = mutate_stmt(op->body);
    if (op->buffer->scope == tir::MemScope::kAcc) {
      if (std::optional<Stmt> g = guard(op->buffer, body)) body = *g;
    }
    return body.same_as(op->body) ? self : tir::allocate(op->buffer, body);
  }

  /// The copy of a constant into `local` and the in-place ADDs reading it, guarded by the tiles
  /// whose part of the constant is not all zero; nullopt to leave the body as it is.
  std::optional<Stmt> guard(const Buffer& local, const Stmt& body) {
    return under_allocates(body, [&](const Stmt& s) { return guard_items(local, s); });
  }

  std::optional<Stmt> guard_items(const Buffer& local, const Stmt& body) {
    const tir::VarNode* ld = local->data.get();
    std::vector<Stmt> items;
    flatten(body, &items);
    int copy_at = -1;
    std::vector<int> adds;
    const tir::BufferLoadNode* src = nullptr;
    const tir::AttrStmtNode* copy = nullptr;
    for (size_t k = 0; k < items.size(); ++k) {
      const Stmt& it = items[k];
      if (!references(it, ld)) continue;
      if (it.kind() != tir::StmtKind::kAttrStmt) return std::nullopt;
      const auto* at = it.as<tir::AttrStmtNode>();
      const tir::BufferStoreNode* st = nest_store(at->body);
      if (!st) return std::nullopt;
      if (at->key == compiler::target::accel::kPragmaDmaCopy && st->buffer.same_as(local) && copy_at < 0 &&
          st->value.kind() == tir::ExprKind::kBufferLoad &&
          constants.count(st->value.as<tir::BufferLoadNode>()->buffer->data.get())) {
        copy_at = static_cast<int>(k);
        copy = at;
        src = st->value.as<tir::BufferLoadNode>();
        continue;
      }
      // an in-place ADD of the copy: dst[i] = dst[i] + local[...]
      if (at->key != compiler::target::accel::kPragmaAlu || copy_at < 0 || st->buffer.same_as(local) ||
          st->value.kind() != tir::ExprKind::kAdd) {
        return std::nullopt;
      }
      const tir::BufferLoadNode* a = first_operand(st->value);
      if (!a || !a->buffer.same_as(st->buffer) || count_loads(at->body, ld) != 1) return std::nullopt;
      adds.push_back(static_cast<int>(k));
    }
    if (copy_at < 0 || adds.empty()) return std::nullopt;
    // the tiles: every assignment of the loops around the allocation
    int64_t tiles = 1;
    for (const LoopRange& l : loops) {
      if (l.extent < 0) return std::nullopt;
      tiles *= std::max<int64_t>(l.extent, 1);
      if (tiles > (int64_t{1} << 16)) return std::nullopt;
    }
    // the copy's source offset as a linear form of the outer and the copy's own loop variables
    std::vector<tir::Var> vars;
    for (const LoopRange& l : loops) vars.push_back(l.var);
    std::vector<LoopRange> inner;
    for (Stmt cur = copy->body; cur.kind() == tir::StmtKind::kFor; cur = cur.as<tir::ForNode>()->body) {
      const auto* f = cur.as<tir::ForNode>();
      const std::optional<int64_t> mn = tir::arith::as_const(f->min), ext = tir::arith::as_const(f->extent);
      if (!mn || !ext) return std::nullopt;
      inner.push_back({f->loop_var, *mn, *ext});
      vars.push_back(f->loop_var);
    }
    const std::vector<int64_t>& shape = shapes.at(src->buffer->data.get());
    const std::vector<int32_t>& values = *constants.at(src->buffer->data.get());
    if (src->indices.size() != shape.size()) return std::nullopt;
    std::vector<int64_t> coef(vars.size() + 1, 0);
    // per index dimension of the constant, the coefficients of the outer loops (the tile's
    // coordinate along that dimension: e.g. thread * 2 + row tile)
    std::vector<std::vector<int64_t>> dim_coef(shape.size(), std::vector<int64_t>(loops.size(), 0));
    // (each dimension's coefficients divided by their gcd below: the coordinate in tiles)
    int64_t stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      const std::optional<std::vector<Expr>> c = tir::arith::detect_linear_equation(src->indices[d], vars);
      if (!c) return std::nullopt;
      for (size_t i = 0; i < c->size(); ++i) {
        const std::optional<int64_t> v = tir::arith::as_const((*c)[i]);
        if (!v) return std::nullopt;
        coef[i] += *v * stride;
        if (i < loops.size()) dim_coef[d][i] = *v;
      }
      stride *= shape[d];
    }
    for (std::vector<int64_t>& dc : dim_coef) {
      int64_t g = 0;
      for (int64_t c : dc) g = std::gcd(g, c < 0 ? -c : c);
      if (g > 1) {
        for (int64_t& c : dc) c /= g;
      }
    }
    // tile t's loop values (the last loop varying fastest)
    const size_t n_out = loops.size();
    auto coords = [&](int64_t t) {
      std::vector<int64_t> c(n_out);
      for (size_t i = n_out; i-- > 0;) {
        const int64_t e = std::max<int64_t>(loops[i].extent, 1);
        c[i] = loops[i].min + t % e;
        t /= e;
      }
      return c;
    };
    // which tiles read a non-zero value
    std::vector<char> nonzero(static_cast<size_t>(tiles), 0);
    bool bad = false;
    for (int64_t t = 0; t < tiles && !bad; ++t) {
      const std::vector<int64_t> at = coords(t);
      int64_t base = coef.back();
      for (size_t i = 0; i < n_out; ++i) base += coef[i] * at[i];
      std::function<bool(size_t, int64_t)> any = [&](size_t j, int64_t off) -> bool {
        if (j == inner.size()) {
          if (off < 0 || off >= static_cast<int64_t>(values.size())) {
            bad = true;
            return true;
          }
          return values[static_cast<size_t>(off)] != 0;
        }
        for (int64_t x = inner[j].min; x < inner[j].min + inner[j].extent; ++x) {
          if (any(j + 1, off + coef[n_out + j] * x)) return true;
        }
        return false;
      };
      nonzero[static_cast<size_t>(t)] = any(0, base);
    }
    if (bad) return std::nullopt;
    int64_t n_nonzero = 0;
    for (char c : nonzero) n_nonzero += c;
    if (n_nonzero == tiles) return std::nullopt;
    // the condition: the tiles whose coordinate along some dimension of the constant (a linear
    // form of the loops) is in that dimension's set of all-non-zero coordinates, when that
    // describes them exactly (the zero-point border: the first and last rows and columns of
    // tiles), else one term per non-zero tile (at most 64)
    const size_t n_dims = shape.size();
    auto coord = [&](const std::vector<int64_t>& c, size_t d) {
      int64_t v = 0;
      for (size_t i = 0; i < n_out; ++i) v += dim_coef[d][i] * c[i];
      return v;
    };
    // per dimension: coordinate -> every tile at it reads a non-zero value
    std::vector<std::map<int64_t, bool>> all_nonzero(n_dims);
    for (int64_t t = 0; t < tiles; ++t) {
      const std::vector<int64_t> c = coords(t);
      for (size_t d = 0; d < n_dims; ++d) {
        auto it = all_nonzero[d].emplace(coord(c, d), true).first;
        it->second = it->second && nonzero[static_cast<size_t>(t)];
      }
    }
    bool separable = true;
    for (int64_t t = 0; t < tiles && separable; ++t) {
      const std::vector<int64_t> c = coords(t);
      bool any_in = false;
      for (size_t d = 0; d < n_dims; ++d) any_in = any_in || all_nonzero[d].at(coord(c, d));
      separable = any_in == static_cast<bool>(nonzero[static_cast<size_t>(t)]);
    }
    Expr cond;
    auto disj = [&](Expr e) { cond = cond.defined() ? tir::logical_or(cond, e) : e; };
    auto imm = [](const tir::Var& v, int64_t x) { return tir::make_const(v.dtype(), x); };
    if (n_nonzero == 0) {
      // no tile reads a non-zero value: cond stays undefined, the copy and the ADDs go
    } else if (separable) {
      for (size_t d = 0; d < n_dims; ++d) {
        const std::map<int64_t, bool>& in = all_nonzero[d];
        if (in.size() < 2) continue;  // one coordinate: all or none of the tiles (then another
                                      // dimension decides, or every tile is non-zero)
        // the coordinate as an expression of the loops
        Expr e;
        tir::DataType dt = tir::DataType::int32();
        for (size_t i = 0; i < n_out; ++i) {
          if (dim_coef[d][i] == 0) continue;
          dt = loops[i].var.dtype();
          Expr term = dim_coef[d][i] == 1 ? Expr(loops[i].var) : Expr(loops[i].var) * imm(loops[i].var, dim_coef[d][i]);
          e = e.defined() ? e + term : term;
        }
        if (!e.defined()) continue;
        // runs of consecutive coordinates (in the order they occur) that are all non-zero
        std::vector<std::pair<int64_t, bool>> v(in.begin(), in.end());
        for (size_t a = 0; a < v.size();) {
          if (!v[a].second) {
            ++a;
            continue;
          }
          size_t b = a;
          while (b < v.size() && v[b].second) ++b;
          const int64_t lo = v[a].first, hi = v[b - 1].first;
          if (b - a == v.size()) {
            disj(tir::bool_imm(true));
          } else if (a == 0) {
            disj(hi == lo ? tir::eq(e, tir::make_const(dt, lo)) : tir::lt(e, tir::make_const(dt, hi + 1)));
          } else if (b == v.size()) {
            disj(hi == lo ? tir::eq(e, tir::make_const(dt, lo)) : tir::ge(e, tir::make_const(dt, lo)));
          } else if (hi == lo) {
            disj(tir::eq(e, tir::make_const(dt, lo)));
          } else {
            disj(tir::logical_and(tir::ge(e, tir::make_const(dt, lo)), tir::lt(e, tir::make_const(dt, hi + 1))));
          }
          a = b;
        }
      }
      if (!cond.defined()) return std::nullopt;  // (a non-zero tile that no dimension tells apart)
    } else {
      if (n_nonzero > 64) return std::nullopt;
      for (int64_t t = 0; t < tiles; ++t) {
        if (!nonzero[static_cast<size_t>(t)]) continue;
        const std::vector<int64_t> c = coords(t);
        Expr conj;
        for (size_t i = 0; i < n_out; ++i) {
          if (loops[i].extent <= 1) continue;
          Expr e = tir::eq(Expr(loops[i].var), imm(loops[i].var, c[i]));
          conj = conj.defined() ? tir::logical_and(conj, e) : e;
        }
        disj(conj.defined() ? conj : tir::bool_imm(true));
      }
    }
    std::vector<Stmt> out;
    for (size_t k = 0; k < items.size(); ++k) {
      const bool guarded = static_cast<int>(k) == copy_at || std::count(adds.begin(), adds.end(), static_cast<int>(k));
      if (!guarded) {
        out.push_back(items[k]);
      } else if (cond.defined()) {
        out.push_back(tir::if_then_else(cond, items[k]));
      }  // no tile reads a non-zero value: the copy and the ADDs go
    }
    return tir::seq(out);
  }
};

/// Elements of a buffer with a constant shape, or -1.
int64_t const_size(const Buffer& b) {
  int64_t n = 1;
  for (const Expr& d : b->shape) {
    const std::optional<int64_t> v = tir::arith::as_const(d);
    if (!v) return -1;
    n *= *v;
  }
  return n;
}

/// The gemm_uop call of an Evaluate, or null.
const tir::CallNode* gemm_call(const Stmt& s) {
  if (s.kind() != tir::StmtKind::kEvaluate) return nullptr;
  const Expr& v = s.as<tir::EvaluateNode>()->value;
  if (v.kind() != tir::ExprKind::kCall) return nullptr;
  const auto* c = v.as<tir::CallNode>();
  return c->op == compiler::target::accel::kGemmUop ? c : nullptr;
}

/// Whether every use of buffer `data` in `s` is a non-reset gemm_uop (an accumulation).
bool only_accumulates(const Stmt& s, const tir::VarNode* data) {
  bool ok = true;
  struct V : tir::IRVisitor {
    const tir::VarNode* data;
    bool* ok;
    void visit_buffer(const Buffer& b) override { *ok = *ok && b->data.get() != data; }
    void visit(const tir::CallNode* op) override {
      if (op->op == compiler::target::accel::kGemmUop && !op->args.empty()) {
        const std::optional<int64_t> reset = tir::arith::as_const(op->args[0]);
        bool uses = false;
        for (const Expr& a : op->args) uses = uses || tir::uses_var_if(a, [&](const tir::VarNode* v) { return v == data; });
        if (uses && (!reset || *reset != 0)) *ok = false;
        if (uses) return;  // the accumulation itself
      }
      tir::IRVisitor::visit(op);
    }
    void visit(const tir::VarNode* op) override { *ok = *ok && op != data; }
  } v;
  v.data = data;
  v.ok = &ok;
  v.visit_stmt(s);
  return ok;
}

/// init_accumulator_from_constants: see schedule.h.
struct InitFromConstant : tir::IRMutator {
  Stmt mutate(const tir::AllocateNode* op, const Stmt& self) override {
    Stmt body = mutate_stmt(op->body);
    if (op->buffer->scope == tir::MemScope::kAcc) {
      if (std::optional<Stmt> r = fuse(op->buffer, body)) return *r;  // the allocation goes
    }
    return body.same_as(op->body) ? self : tir::allocate(op->buffer, body);
  }

  static std::optional<Stmt> fuse(const Buffer& z, const Stmt& body) {
    return under_allocates(body, [&](const Stmt& s) { return fuse_items(z, s); });
  }

  static std::optional<Stmt> fuse_items(const Buffer& z, const Stmt& body) {
    const tir::VarNode* zd = z->data.get();
    std::vector<Stmt> items;
    flatten(body, &items);
    // the copy into z and the one ADD reading it, each possibly under the same guard
    auto unguard = [](const Stmt& s, Expr* cond) -> Stmt {
      if (s.kind() == tir::StmtKind::kIfThenElse && !s.as<tir::IfThenElseNode>()->else_case.defined()) {
        *cond = s.as<tir::IfThenElseNode>()->cond;
        return s.as<tir::IfThenElseNode>()->then_case;
      }
      return s;
    };
    int copy_at = -1, add_at = -1;
    Expr copy_cond, add_cond;
    const tir::AttrStmtNode *copy = nullptr, *add = nullptr;
    for (size_t k = 0; k < items.size(); ++k) {
      if (!references(items[k], zd)) continue;
      Expr c;
      const Stmt it = unguard(items[k], &c);
      if (it.kind() != tir::StmtKind::kAttrStmt) return std::nullopt;
      const auto* at = it.as<tir::AttrStmtNode>();
      const tir::BufferStoreNode* st = nest_store(at->body);
      if (!st) return std::nullopt;
      if (copy_at < 0 && at->key == compiler::target::accel::kPragmaDmaCopy && st->buffer.same_as(z) &&
          st->value.kind() == tir::ExprKind::kBufferLoad &&
          st->value.as<tir::BufferLoadNode>()->buffer->scope == tir::MemScope::kGlobal) {
        copy_at = static_cast<int>(k);
        copy = at;
        copy_cond = c;
      } else if (copy_at >= 0 && add_at < 0 && at->key == compiler::target::accel::kPragmaAlu &&
                 st->value.kind() == tir::ExprKind::kAdd && !st->buffer.same_as(z)) {
        add_at = static_cast<int>(k);
        add = at;
        add_cond = c;
      } else {
        return std::nullopt;
      }
    }
    if (copy_at < 0 || add_at < 0) return std::nullopt;
    if (copy_cond.defined() != add_cond.defined() ||
        (copy_cond.defined() && !tir::structural_equal(copy_cond, add_cond))) {
      return std::nullopt;
    }
    // the ADD: a[idx] = a[idx] + z[zidx] over the whole of a
    const tir::PerfectNest an = tir::perfect_nest(add->body);
    const auto* ast = an.body.as<tir::BufferStoreNode>();
    const Buffer a = ast->buffer;
    const tir::BufferLoadNode* self_load = first_operand(ast->value);
    if (!self_load || !self_load->buffer.same_as(a) || a->scope != tir::MemScope::kAcc) return std::nullopt;
    for (size_t i = 0; i < ast->indices.size(); ++i) {
      if (i >= self_load->indices.size() || !tir::structural_equal(ast->indices[i], self_load->indices[i])) {
        return std::nullopt;
      }
    }
    const auto ops = tir::binary_operands(ast->value);
    if (!ops.b || ops.b->kind() != tir::ExprKind::kBufferLoad) return std::nullopt;
    const tir::BufferLoadNode* zl = ops.b->as<tir::BufferLoadNode>();
    if (!zl->buffer.same_as(z)) return std::nullopt;
    int64_t add_elems = 1;
    for (const tir::ForNode* f : an.loops) {
      const std::optional<int64_t> e = tir::arith::as_const(f->extent);
      if (!e) return std::nullopt;
      add_elems *= *e;
    }
    if (add_elems != const_size(a)) return std::nullopt;
    // the reset of a, before the copy, covering a; between it and the ADD a is only accumulated
    int reset_at = -1;
    for (int k = 0; k < copy_at; ++k) {
      const tir::PerfectNest rn = tir::perfect_nest(items[static_cast<size_t>(k)]);
      const tir::CallNode* g = gemm_call(rn.body);
      if (!g || g->args.size() < 2) continue;
      const std::optional<int64_t> reset = tir::arith::as_const(g->args[0]);
      if (!reset || *reset != 1 || !tir::uses_var_if(g->args[1], [&](const tir::VarNode* v) { return v == a->data.get(); })) {
        continue;
      }
      if (reset_at >= 0) return std::nullopt;
      reset_at = k;
    }
    if (reset_at < 0) return std::nullopt;
    for (int k = reset_at + 1; k < add_at; ++k) {
      if (k == copy_at) continue;
      if (!only_accumulates(items[static_cast<size_t>(k)], a->data.get())) return std::nullopt;
    }
    // the copy: z[u...] = g[...] with z's indices the copy's loop variables (or 0 on extent 1)
    const tir::PerfectNest cn = tir::perfect_nest(copy->body);
    const auto* cst = cn.body.as<tir::BufferStoreNode>();
    if (cst->indices.size() != zl->indices.size()) return std::nullopt;
    std::map<tir::Var, Expr, tir::VarLess> vmap;
    for (size_t d = 0; d < cst->indices.size(); ++d) {
      const Expr& ix = cst->indices[d];
      if (ix.kind() == tir::ExprKind::kVar) {
        const tir::Var v = tir::Var::from(ix);
        bool is_loop = false;
        for (const tir::ForNode* f : cn.loops) is_loop = is_loop || f->loop_var.same_as(v);
        if (!is_loop || vmap.count(v)) return std::nullopt;
        vmap[v] = zl->indices[d];
      } else {
        const std::optional<int64_t> c = tir::arith::as_const(ix);
        const std::optional<int64_t> e = tir::arith::as_const(z->shape[d]);
        if (!c || *c != 0 || !e || *e != 1) return std::nullopt;
      }
    }
    if (vmap.size() != cn.loops.size()) return std::nullopt;
    // a[idx] = g[...] over the ADD's loops: the LOAD ACC straight into the accumulator
    Stmt fill = tir::wrap_loops(an.loops, tir::buffer_store(a, tir::substitute(cst->value, vmap), ast->indices));
    fill = tir::attr_stmt(copy->node, copy->key, copy->value, fill);
    if (copy_cond.defined()) fill = tir::if_then_else(copy_cond, fill, items[static_cast<size_t>(reset_at)]);
    std::vector<Stmt> out;
    for (size_t k = 0; k < items.size(); ++k) {
      if (static_cast<int>(k) == reset_at) {
        out.push_back(fill);
      } else if (static_cast<int>(k) != copy_at && static_cast<int>(k) != add_at) {
        out.push_back(items[k]);
      }
    }
    return tir::seq(out);
  }
};

}  // namespace

tir::PrimFunc mark_gemm_kernels(const tir::PrimFunc& f) {
  MarkGemm m;
  return f.with_body(m.mutate_stmt(f->body));
}

tir::PrimFunc alu_in_place(const tir::PrimFunc& f) {
  Stmt body = f->body;
  for (;;) {
    Finder fd;
    fd.root = body;
    fd.visit_stmt(body);
    if (!fd.found) break;
    Rename r;
    r.from = fd.found->first;
    r.to = fd.found->second;
    body = r.mutate_stmt(body);
  }
  return f.with_body(body);
}

tir::PrimFunc guard_zero_constant_tiles(const tir::PrimFunc& f, const std::vector<ChannelConstant>& constants) {
  GuardZeroTiles g;
  for (const auto& [param, buf] : f->buffer_map) {
    for (const ChannelConstant& c : constants) {
      if (c.kind != ChannelConstant::Kind::kElement || buf->name != c.tensor.name()) continue;
      if (!buf->strides.empty() || const_size(buf) != static_cast<int64_t>(c.values.size())) continue;
      std::vector<int64_t> shape;
      for (const Expr& d : buf->shape) shape.push_back(*tir::arith::as_const(d));
      g.constants[buf->data.get()] = &c.values;
      g.shapes[buf->data.get()] = shape;
    }
  }
  if (g.constants.empty()) return f;
  return f.with_body(g.mutate_stmt(f->body));
}

tir::PrimFunc init_accumulator_from_constants(const tir::PrimFunc& f) {
  InitFromConstant m;
  return f.with_body(m.mutate_stmt(f->body));
}

tir::PrimFunc lower_template(const ScheduledOp& op, const std::string& name) {
  // a split that does not divide leaves the last tile's loops clipped (min extents):
  // loop_partition peels those tiles off with constant extents
  return mark_gemm_kernels(tir::transforms::loop_partition(init_accumulator_from_constants(
      guard_zero_constant_tiles(alu_in_place(te::lower(op.schedule, op.args, name)), op.constants))));
}

}  // namespace tessel::topi::accel
