#include "compiler/te/bound.h"

#include <algorithm>

#include "compiler/tir/arith/analyzer.h"
#include "compiler/tir/functor.h"
#include "compiler/tir/printer.h"
#include "compiler/tir/util.h"
#include "support/error.h"

namespace tessel::te {

namespace arith = tir::arith;

const Range& Bounds::at(const IterVar& iv) const {
  auto it = ranges.find(iv.get());
  TESSEL_CHECK(it != ranges.end(), "no inferred range for axis {}", iv.name());
  return it->second;
}

Range Bounds::loop_range(const IterVar& iv) const { return Range::from_min_extent(0, at(iv).extent); }

size_t leaf_position(const StageNode& stage, const IterVar& iv) {
  for (size_t i = 0; i < stage.leaf_iter_vars.size(); ++i) {
    if (stage.leaf_iter_vars[i].same_as(iv)) return i;
  }
  throw_internal_error("axis {} is not a leaf of stage {}", iv.name(), stage.op->name);
}

namespace {

/// Substitutes inlined stages' bodies for their loads.
class Inliner : public tir::IRMutator {
 public:
  explicit Inliner(const std::map<const tir::BufferNode*, std::pair<const StageNode*, Expr>>& inl) : inl_(inl) {}

 protected:
  Expr mutate(const tir::BufferLoadNode* op, const Expr& self) override {
    Expr e = tir::IRMutator::mutate(op, self);
    const auto* load = e.as<tir::BufferLoadNode>();
    auto it = inl_.find(load->buffer.get());
    if (it == inl_.end()) return e;
    const StageNode* s = it->second.first;
    std::map<Var, Expr, tir::VarLess> vmap;
    for (size_t d = 0; d < s->op->axis.size(); ++d) vmap[s->op->axis[d].var()] = load->indices[d];
    return tir::substitute(it->second.second, vmap);
  }

 private:
  const std::map<const tir::BufferNode*, std::pair<const StageNode*, Expr>>& inl_;
};

Expr ceil_div(const Expr& a, int64_t b) { return tir::floordiv(a + tir::int_imm(b - 1), tir::int_imm(b)); }

}  // namespace

std::map<const StageNode*, Expr> inline_bodies(const Schedule& sch) {
  std::map<const tir::BufferNode*, std::pair<const StageNode*, Expr>> inl;
  std::map<const StageNode*, Expr> out;
  for (const Stage& s : sch->stages) {
    if (s->op->kind != OpKind::kCompute) continue;
    Inliner m(inl);
    Expr body = mutate_body(s->op->body, m);
    out[s.get()] = body;
    if (s->attach_type == AttachKind::kInline) inl[s->op->output.get()] = {s.get(), body};
  }
  return out;
}

StageIndex stage_index(const StageNode& stage, const Bounds& bounds) {
  StageIndex idx;
  arith::Analyzer ana;
  for (const IterVar& iv : stage.leaf_iter_vars) idx.value[iv.get()] = iv.var();
  auto ext = [&](const IterVar& iv) { return bounds.at(iv).extent; };
  for (auto it = stage.relations.rbegin(); it != stage.relations.rend(); ++it) {
    const IterVarRelation& r = *it;
    if (r.kind == IterVarRelation::Kind::kSplit) {
      Expr inner_ext = ext(r.inner);
      Expr v = ana.simplify(idx.value.at(r.outer.get()) * inner_ext + idx.value.at(r.inner.get()));
      idx.value[r.parent.get()] = v;
      Expr pe = ext(r.parent);
      bool divides = ana.can_prove(tir::eq(ana.simplify(ext(r.outer) * inner_ext), pe));
      if (!divides) {
        Expr g = tir::lt(v, pe);
        (r.parent.kind() == IterVarKind::kReduce ? idx.reduce_guards : idx.data_par_guards).push_back(g);
      }
    } else {
      Expr f = idx.value.at(r.fused.get());
      Expr ie = ext(r.inner);
      idx.value[r.outer.get()] = ana.simplify(tir::floordiv(f, ie));
      idx.value[r.inner.get()] = ana.simplify(tir::floormod(f, ie));
    }
  }
  for (const IterVar& iv : stage.root_iter_vars()) {
    idx.value[iv.get()] = ana.simplify(bounds.at(iv).min + idx.value.at(iv.get()));
  }
  // guards were built innermost relation first; report them outermost first
  std::reverse(idx.data_par_guards.begin(), idx.data_par_guards.end());
  std::reverse(idx.reduce_guards.begin(), idx.reduce_guards.end());
  return idx;
}

namespace {

void pass_down(const StageNode& s, Bounds& b, arith::Analyzer& ana) {
  for (const IterVarRelation& r : s.relations) {
    if (r.kind == IterVarRelation::Kind::kSplit) {
      Expr e = b.at(r.parent).extent;
      Expr outer, inner;
      if (r.factor > 0) {
        inner = tir::int_imm(r.factor);
        outer = ana.simplify(ceil_div(e, r.factor));
      } else {
        outer = tir::int_imm(r.nparts);
        inner = ana.simplify(ceil_div(e, r.nparts));
      }
      b.ranges[r.outer.get()] = Range::from_min_extent(0, outer);
      b.ranges[r.inner.get()] = Range::from_min_extent(0, inner);
    } else {
      b.ranges[r.fused.get()] = Range::from_min_extent(0, ana.simplify(b.at(r.outer).extent * b.at(r.inner).extent));
    }
  }
  for (const IterVar& iv : s.leaf_iter_vars) ana.bind(iv.var(), b.loop_range(iv));
}

struct Level {
  const StageNode* stage;
  size_t begin, end;  // leaves [begin, end) are relaxed
};

std::vector<Level> levels_of(const Stage& reader, const Stage& s) {
  const StageNode* p = s->attach_stage.get();
  size_t pos = leaf_position(*p, s->attach_ivar);
  if (reader.get() == p) return {{p, pos + 1, p->leaf_iter_vars.size()}};
  std::vector<Level> lv{{reader.get(), 0, reader->leaf_iter_vars.size()}};
  const StageNode* cur = reader.get();
  while (cur->attach_type == AttachKind::kScope) {
    const StageNode* par = cur->attach_stage.get();
    size_t x = leaf_position(*par, cur->attach_ivar);
    if (par == p) {
      if (x < pos) break;
      lv.push_back({p, pos + 1, x + 1});
      return lv;
    }
    lv.push_back({par, 0, x + 1});
    cur = par;
  }
  throw_user_error("stage {} is computed at axis {} of stage {} but is also read by stage {}, outside that loop",
                   s->op->name, s->attach_ivar.name(), p->op->name, reader->op->name);
}

}  // namespace

Bounds infer_bound(const Schedule& sch) {
  Bounds b;
  arith::Analyzer ana;
  std::map<const StageNode*, Expr> bodies = inline_bodies(sch);
  const auto& stages = sch->stages;
  for (const Stage& s : stages) {
    if (s->attach_type != AttachKind::kScope) continue;
    const auto& leaves = s->attach_stage->leaf_iter_vars;
    if (std::none_of(leaves.begin(), leaves.end(), [&](const IterVar& l) { return l.same_as(s->attach_ivar); })) {
      throw_user_error("stage {}: compute_at axis {} of stage {}, which is no longer a leaf (split or fused afterwards)",
                       s.name(), s->attach_ivar.name(), s->attach_stage.name());
    }
  }
  for (auto it = stages.rbegin(); it != stages.rend(); ++it) {
    const Stage& s = *it;
    const OperationNode* op = s->op.get();
    if (op->kind != OpKind::kCompute || s->attach_type == AttachKind::kInline) continue;
    for (const IterVar& r : op->reduce_axis) b.ranges[r.get()] = r.dom();
    if (s->attach_type == AttachKind::kRoot) {
      for (const IterVar& a : op->axis) b.ranges[a.get()] = a.dom();
    } else {
      if (s->attach_stage->attach_type == AttachKind::kInline) {
        throw_user_error("stage {}: compute_at stage {}, which is inlined", op->name, s->attach_stage.name());
      }
      size_t nd = op->axis.size();
      std::vector<arith::IntervalSet> region(nd, arith::IntervalSet::empty());
      for (const Stage& q : stages) {
        auto bit = bodies.find(q.get());
        if (bit == bodies.end() || q->attach_type == AttachKind::kInline) continue;
        std::vector<const tir::BufferLoadNode*> loads;
        Expr body = bit->second;
        tir::post_order_visit(body, [&](const Expr& e) {
          const auto* l = e.as<tir::BufferLoadNode>();
          if (l && l->buffer.same_as(op->output)) loads.push_back(l);
        });
        if (loads.empty()) continue;
        std::vector<Level> levels = levels_of(q, s);
        StageIndex qi = stage_index(*q.get(), b);
        std::map<Var, Expr, tir::VarLess> vmap;
        for (const IterVar& r : q->root_iter_vars()) vmap[r.var()] = qi.value.at(r.get());
        for (const tir::BufferLoadNode* l : loads) {
          for (size_t d = 0; d < nd; ++d) {
            arith::IntervalSet set = arith::IntervalSet::point(tir::substitute(l->indices[d], vmap));
            for (const Level& lv : levels) {
              std::map<Var, arith::IntervalSet, tir::VarLess> dom;
              for (size_t k = lv.begin; k < lv.end; ++k) {
                const IterVar& leaf = lv.stage->leaf_iter_vars[k];
                dom[leaf.var()] = arith::IntervalSet::from_range(b.loop_range(leaf));
              }
              arith::IntervalSet lo = set.min.defined() ? arith::eval_set(set.min, dom) : set;
              arith::IntervalSet hi = set.max.defined() ? arith::eval_set(set.max, dom) : set;
              set = arith::IntervalSet{lo.min, hi.max, false};
            }
            region[d] = arith::union_set(region[d], set);
          }
        }
      }
      for (size_t d = 0; d < nd; ++d) {
        const arith::IntervalSet& u = region[d];
        Expr shape = op->axis[d].dom().extent;
        Expr lo = 0, extent = shape;
        int64_t max_ext = *tir::as_const_int(shape);
        if (u.is_bounded()) {
          lo = ana.can_prove(tir::ge(u.min, 0)) ? ana.simplify(u.min) : ana.simplify(tir::max(u.min, 0));
          extent = ana.simplify(u.max - lo + 1);
          if (!ana.can_prove(tir::le(u.max, shape - 1))) extent = ana.simplify(tir::min(extent, ana.simplify(shape - lo)));
          arith::ConstIntBound span = ana.const_int_bound(ana.simplify(u.max - u.min + 1));
          max_ext = std::min({max_ext, span.max, ana.const_int_bound(extent).max});
        }
        b.ranges[op->axis[d].get()] = Range::from_min_extent(lo, extent);
        b.max_extent[op->axis[d].get()] = max_ext;
      }
    }
    pass_down(*s.get(), b, ana);
  }
  return b;
}

}  // namespace tessel::te
