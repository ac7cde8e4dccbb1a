#include "compiler/te/lower.h"

#include <algorithm>
#include <set>

#include "compiler/te/bound.h"
#include "compiler/te/tensor_intrin.h"
#include "compiler/tir/arith/analyzer.h"
#include "compiler/tir/functor.h"
#include "compiler/tir/intrinsics.h"
#include "compiler/tir/printer.h"
#include "compiler/tir/transforms/simplify.h"
#include "compiler/tir/util.h"
#include "compiler/tir/verifier.h"
#include "support/error.h"

namespace tessel::te {

namespace arith = tir::arith;

namespace {

/// Where a tensor lives in the lowered function.
struct Realize {
  tir::Buffer buffer;
  std::vector<Expr> offsets;  ///< subtracted from every index; empty = none
};

/// Rewrites tensor buffers to the buffers they are realised in.
class RealizeRewriter : public tir::IRMutator {
 public:
  explicit RealizeRewriter(const std::map<const tir::BufferNode*, Realize>& r) : r_(r) {}

 protected:
  Expr mutate(const tir::BufferLoadNode* op, const Expr& self) override {
    Expr e = tir::IRMutator::mutate(op, self);
    const auto* l = e.as<tir::BufferLoadNode>();
    auto it = r_.find(l->buffer.get());
    if (it == r_.end() || (it->second.buffer.same_as(l->buffer) && it->second.offsets.empty())) return e;
    return tir::buffer_load(it->second.buffer, rebase(l->indices, it->second));
  }
  tir::Stmt mutate(const tir::BufferStoreNode* op, const tir::Stmt& self) override {
    tir::Stmt s = tir::IRMutator::mutate(op, self);
    const auto* st = s.as<tir::BufferStoreNode>();
    auto it = r_.find(st->buffer.get());
    if (it == r_.end() || (it->second.buffer.same_as(st->buffer) && it->second.offsets.empty())) return s;
    return tir::buffer_store(it->second.buffer, st->value, rebase(st->indices, it->second));
  }

 private:
  static std::vector<Expr> rebase(const std::vector<Expr>& idx, const Realize& r) {
    if (r.offsets.empty()) return idx;
    std::vector<Expr> out;
    for (size_t d = 0; d < idx.size(); ++d) out.push_back(idx[d] - r.offsets[d]);
    return out;
  }
  const std::map<const tir::BufferNode*, Realize>& r_;
};

class Lowerer {
 public:
  Lowerer(const Schedule& sch, const std::vector<Tensor>& args) : sch_(sch), args_(args) {}

  tir::PrimFunc run(const std::string& name) {
    check_args();
    bounds_ = infer_bound(sch_);
    bodies_ = inline_bodies(sch_);
    for (auto it = sch_->stages.rbegin(); it != sch_->stages.rend(); ++it) {
      const Stage& s = *it;
      if (!computed(s)) continue;
      for (const IterVar& iv : s->leaf_iter_vars) ana_.bind(iv.var(), bounds_.loop_range(iv));
    }
    std::vector<Stage> root_allocs;
    for (const Stage& s : sch_->stages) {
      if (!computed(s)) continue;
      const tir::BufferNode* key = s->op->output.get();
      if (is_arg(s)) {
        realize_[key] = {s->op->output, {}};
      } else if (s->attach_type == AttachKind::kRoot) {
        realize_[key] = {s->op->output, {}};
        root_allocs.push_back(s);
      } else {
        realize_[key] = region_buffer(s);
      }
    }
    std::vector<tir::Stmt> seq;
    for (const Stage& s : sch_->stages) {
      if (computed(s) && s->attach_type == AttachKind::kRoot) seq.push_back(make_stage(s));
    }
    tir::Stmt body = tir::seq(std::move(seq));
    for (auto it = root_allocs.rbegin(); it != root_allocs.rend(); ++it) {
      body = tir::allocate(realize_.at((*it)->op->output.get()).buffer, body);
    }
    body = RealizeRewriter(realize_).mutate_stmt(body);
    std::vector<Var> params;
    std::vector<std::pair<Var, tir::Buffer>> bmap;
    for (const Tensor& t : args_) {
      params.push_back(t.buffer()->data);
      bmap.emplace_back(t.buffer()->data, t.buffer());
    }
    tir::PrimFunc f(name, params, bmap, body);
    f = tir::transforms::simplify(f);
    tir::check_well_formed(f, "te.lower");
    return f;
  }

 private:
  static bool computed(const Stage& s) {
    return s->op->kind == OpKind::kCompute && s->attach_type != AttachKind::kInline;
  }
  bool is_arg(const Stage& s) const {
    return std::any_of(args_.begin(), args_.end(), [&](const Tensor& t) { return t.buffer().same_as(s->op->output); });
  }

  void check_args() {
    std::set<const tir::BufferNode*> seen;
    for (const Tensor& t : args_) {
      if (!t.defined()) throw_user_error("lower: an undefined argument");
      Stage s = sch_[t];
      if (!seen.insert(t.buffer().get()).second) throw_user_error("lower: argument {} is listed twice", t.name());
      if (s->attach_type == AttachKind::kInline) throw_user_error("lower: argument {} is computed inline", t.name());
    }
    for (const Stage& s : sch_->stages) {
      if (s->is_output && !is_arg(s)) throw_user_error("lower: output {} is not an argument", s.name());
    }
    std::map<const StageNode*, Expr> bodies = inline_bodies(sch_);
    for (const Stage& s : sch_->stages) {
      if (!computed(s)) continue;
      tir::post_order_visit(bodies.at(s.get()), [&](const Expr& e) {
        const auto* l = e.as<tir::BufferLoadNode>();
        if (!l) return;
        Stage p = sch_.stage_of(l->buffer);
        if (p.defined() && p->op->kind == OpKind::kPlaceholder && !is_arg(p)) {
          throw_user_error("lower: placeholder {} is read by {} but is not an argument", p.name(), s.name());
        }
      });
    }
  }

  Realize region_buffer(const Stage& s) {
    std::vector<Expr> shape, offsets;
    for (const IterVar& a : s->op->axis) {
      const Range& r = bounds_.at(a);
      arith::ConstIntBound cb = ana_.const_int_bound(r.extent);
      if (auto it = bounds_.max_extent.find(a.get()); it != bounds_.max_extent.end()) cb.max = std::min(cb.max, it->second);
      if (cb.max == arith::ConstIntBound::kPosInf || cb.max <= 0) {
        throw_user_error("stage {}: the region of axis {} has no constant upper bound (extent {})", s.name(), a.name(),
                         tir::to_text(r.extent));
      }
      shape.push_back(tir::int_imm(cb.max));
      offsets.push_back(r.min);
    }
    return {tir::Buffer(s.name(), s->op->output->dtype, shape, s->op->output->scope), offsets};
  }

  std::vector<Stage> attached_at(const Stage& s, const IterVar& leaf) const {
    std::vector<Stage> out;
    for (const Stage& p : sch_->stages) {
      if (computed(p) && p->attach_type == AttachKind::kScope && p->attach_stage.same_as(s) &&
          p->attach_ivar.same_as(leaf)) {
        out.push_back(p);
      }
    }
    return out;
  }

  /// `inner` with the stages attached at `leaf` computed before it (and allocated around both).
  tir::Stmt with_attached(const Stage& s, const IterVar& leaf, tir::Stmt inner) {
    std::vector<Stage> ps = attached_at(s, leaf);
    if (ps.empty()) return inner;
    std::vector<tir::Stmt> seq;
    for (const Stage& p : ps) seq.push_back(make_stage(p));
    seq.push_back(std::move(inner));
    tir::Stmt body = tir::seq(std::move(seq));
    for (auto it = ps.rbegin(); it != ps.rend(); ++it) {
      if (!is_arg(*it)) body = tir::allocate(realize_.at((*it)->op->output.get()).buffer, body);
    }
    return body;
  }

  tir::Stmt make_loop(const Stage& s, const IterVar& leaf, const Var& var, tir::Stmt body) {
    Expr ext = bounds_.at(leaf).extent;
    auto it = s->iter_var_attrs.find(leaf.get());
    tir::ForKind kind = tir::ForKind::kSerial;
    std::string tag;
    if (it != s->iter_var_attrs.end()) {
      kind = it->second.for_kind;
      if (kind == tir::ForKind::kThreadBinding) tag = it->second.thread_tag;
      if (kind == tir::ForKind::kVirtualThread && it->second.thread_tag == "cthread") tag = "cthread";
    }
    if ((kind == tir::ForKind::kVectorized || kind == tir::ForKind::kUnrolled) && !tir::as_const_int(ext)) {
      throw_user_error("stage {}: {} axis {} has the non-constant extent {}", s.name(), tir::to_string(kind), leaf.name(),
                       tir::to_text(ext));
    }
    tir::Stmt loop = tir::for_loop(var, 0, ext, kind, std::move(body), tag);
    if (it != s->iter_var_attrs.end()) {
      const auto& pr = it->second.pragmas;
      for (auto p = pr.rbegin(); p != pr.rend(); ++p) loop = tir::attr_stmt(Expr(), "pragma_" + p->first, p->second, loop);
    }
    return loop;
  }

  static tir::Stmt guarded(const std::vector<Expr>& guards, tir::Stmt body) {
    for (auto it = guards.rbegin(); it != guards.rend(); ++it) body = tir::if_then_else(tir::intrin::likely(*it), body);
    return body;
  }

  /// Loops for leaves [begin, end) around `inner` (attached stages included when `attach`).
  tir::Stmt loops(const Stage& s, size_t begin, size_t end, tir::Stmt inner, bool attach,
                  const std::map<Var, Expr, tir::VarLess>* fresh = nullptr) {
    for (size_t k = end; k-- > begin;) {
      const IterVar& leaf = s->leaf_iter_vars[k];
      if (attach) inner = with_attached(s, leaf, std::move(inner));
      Var v = leaf.var();
      if (fresh) {
        auto it = fresh->find(v);
        if (it != fresh->end()) v = Var::from(it->second);
      }
      inner = make_loop(s, leaf, v, std::move(inner));
    }
    return inner;
  }

  tir::Stmt make_stage(const Stage& s) {
    const OperationNode* op = s->op.get();
    StageIndex idx = stage_index(*s.get(), bounds_);
    std::map<Var, Expr, tir::VarLess> vmap;
    for (const IterVar& r : s->root_iter_vars()) vmap[r.var()] = idx.value.at(r.get());
    std::vector<Expr> store_idx;
    for (const IterVar& a : op->axis) store_idx.push_back(idx.value.at(a.get()));
    const tir::Buffer& out = op->output;
    Expr body = bodies_.at(s.get());
    size_t n = s->leaf_iter_vars.size();
    // the first tensorized leaf: the intrinsic replaces the loops from it inwards
    size_t tpos = n;
    for (size_t k = 0; k < n; ++k) {
      auto it = s->iter_var_attrs.find(s->leaf_iter_vars[k].get());
      if (it != s->iter_var_attrs.end() && it->second.tensor_intrin) { tpos = k; break; }
    }
    const ReduceNode* red = as_reduce(body);
    if (tpos < n) {
      for (size_t k = tpos; k < n; ++k) {
        if (!attached_at(s, s->leaf_iter_vars[k]).empty()) {
          throw_user_error("stage {}: a stage is computed at axis {}, inside the tensorized loops", s.name(),
                           s->leaf_iter_vars[k].name());
        }
      }
      RealizedLookup lookup = [&](const tir::Buffer& b) {
        auto it = realize_.find(b.get());
        if (it == realize_.end()) return RealizedBuffer{b, {}};
        return RealizedBuffer{it->second.buffer, it->second.offsets};
      };
      size_t r = n;
      for (size_t k = 0; k < n; ++k) {
        if (s->leaf_iter_vars[k].kind() == IterVarKind::kReduce) { r = k; break; }
      }
      if (red && r < tpos) {
        // reduction loops outside the intrinsic: reset under the data-parallel loops between,
        // then the updates
        std::map<Var, Expr, tir::VarLess> fresh;
        std::vector<size_t> reset_leaves;
        for (size_t k = r; k < tpos; ++k) {
          const IterVar& leaf = s->leaf_iter_vars[k];
          if (leaf.kind() == IterVarKind::kReduce) {
            fresh[leaf.var()] = tir::make_const(leaf.var().dtype(), 0);  // the reset is outside these loops
            continue;
          }
          fresh[leaf.var()] = Var(leaf.name() + ".init");
          reset_leaves.push_back(k);
        }
        tir::Stmt reset = tensorize_stage(*s.get(), tpos, bounds_, body, lookup, IntrinPart::kReset, fresh);
        for (auto it = reset_leaves.rbegin(); it != reset_leaves.rend(); ++it) {
          const IterVar& leaf = s->leaf_iter_vars[*it];
          reset = make_loop(s, leaf, Var::from(fresh.at(leaf.var())), reset);
        }
        tir::Stmt update = loops(s, r, tpos, tensorize_stage(*s.get(), tpos, bounds_, body, lookup, IntrinPart::kUpdate, {}), true);
        return loops(s, 0, r, tir::seq({reset, update}), true);
      }
      return loops(s, 0, tpos, tensorize_stage(*s.get(), tpos, bounds_, body, lookup, IntrinPart::kBody, {}), true);
    }
    if (!red) {
      Expr value = tir::substitute(body, vmap);
      std::vector<Expr> guards = idx.data_par_guards;
      tir::Stmt st = guarded(guards, tir::buffer_store(out, value, store_idx));
      return loops(s, 0, n, st, true);
    }
    size_t r = n;
    for (size_t k = 0; k < n; ++k) {
      if (s->leaf_iter_vars[k].kind() == IterVarKind::kReduce) { r = k; break; }
    }
    // update
    Expr cur = tir::buffer_load(out, store_idx);
    Expr src = tir::substitute(red->source, vmap);
    Expr upd = tir::substitute(red->combiner.result, {{red->combiner.lhs, cur}, {red->combiner.rhs, src}});
    std::vector<Expr> guards = idx.data_par_guards;
    guards.insert(guards.end(), idx.reduce_guards.begin(), idx.reduce_guards.end());
    tir::Stmt update = loops(s, r, n, guarded(guards, tir::buffer_store(out, upd, store_idx)), true);
    // init: the data-parallel leaves inside the first reduction loop, with fresh variables
    std::map<Var, Expr, tir::VarLess> fresh;
    std::vector<size_t> init_leaves;
    for (size_t k = r; k < n; ++k) {
      const IterVar& leaf = s->leaf_iter_vars[k];
      if (leaf.kind() == IterVarKind::kReduce) continue;
      fresh[leaf.var()] = Var(leaf.name() + ".init");
      init_leaves.push_back(k);
    }
    Expr init_value = red->init.defined() ? tir::substitute(red->init, vmap) : red->combiner.identity;
    if (red->init.defined()) {
      tir::post_order_visit(red->init, [&](const Expr& e) {
        const auto* l = e.as<tir::BufferLoadNode>();
        if (!l) return;
        for (size_t k = r; k < n; ++k) {
          for (const Stage& p : attached_at(s, s->leaf_iter_vars[k])) {
            if (p->op->output.same_as(l->buffer)) {
              throw_user_error("stage {}: the init of the reduction reads {}, which is computed inside the reduction loops",
                               s.name(), p.name());
            }
          }
        }
      });
    }
    std::vector<Expr> init_idx, init_guards;
    for (const Expr& e : store_idx) init_idx.push_back(tir::substitute(e, fresh));
    for (const Expr& g : idx.data_par_guards) init_guards.push_back(tir::substitute(g, fresh));
    tir::Stmt init = guarded(init_guards, tir::buffer_store(out, tir::substitute(init_value, fresh), init_idx));
    for (auto it = init_leaves.rbegin(); it != init_leaves.rend(); ++it) {
      const IterVar& leaf = s->leaf_iter_vars[*it];
      init = make_loop(s, leaf, Var::from(fresh.at(leaf.var())), init);
    }
    return loops(s, 0, r, tir::seq({init, update}), true);
  }

  const Schedule& sch_;
  const std::vector<Tensor>& args_;
  Bounds bounds_;
  std::map<const StageNode*, Expr> bodies_;
  std::map<const tir::BufferNode*, Realize> realize_;
  arith::Analyzer ana_;
};

}  // namespace

tir::PrimFunc lower(const Schedule& sch, const std::vector<Tensor>& args, const std::string& name) {
  return Lowerer(sch, args).run(name);
}

}  // namespace tessel::te
