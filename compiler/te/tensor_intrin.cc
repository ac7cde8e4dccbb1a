#include "compiler/te/tensor_intrin.h"

#include "compiler/tir/arith/analyzer.h"
#include "compiler/tir/functor.h"
#include "compiler/tir/intrinsics.h"
#include "compiler/tir/printer.h"
#include "compiler/tir/util.h"
#include "support/error.h"

namespace tessel::te {

namespace arith = tir::arith;

TensorIntrin decl_tensor_intrin(const Tensor& out, IntrinBuilder build, const std::string& name) {
  if (!out.defined() || out.op()->kind != OpKind::kCompute) {
    throw_user_error("tensor intrinsic {}: the declaration is not a compute", name);
  }
  for (const Tensor& t : out.op()->inputs) {
    if (t.op()->kind != OpKind::kPlaceholder) {
      throw_user_error("tensor intrinsic {}: input {} is not a placeholder", name, t.name());
    }
  }
  if (!build) throw_user_error("tensor intrinsic {}: no builder", name);
  auto n = std::make_shared<TensorIntrinNode>();
  n->name = name;
  n->op = out.op();
  n->inputs = out.op()->inputs;
  n->build = std::move(build);
  return n;
}

namespace {

/// The buffers of the loads under `e`, in order of first read (left to right), with their first
/// load.
std::vector<const tir::BufferLoadNode*> first_loads(const Expr& e) {
  std::vector<const tir::BufferLoadNode*> out;
  struct V : tir::IRVisitor {
    std::vector<const tir::BufferLoadNode*>* out;
    void visit(const tir::BufferLoadNode* op) override {
      bool seen = false;
      for (const auto* l : *out) seen = seen || l->buffer.same_as(op->buffer);
      if (!seen) out->push_back(op);
      tir::IRVisitor::visit(op);
    }
  } v;
  v.out = &out;
  v.visit_expr(e);
  return out;
}

struct LoadRebaser : tir::IRMutator {
  struct Pair {
    tir::Buffer from, to;
    std::vector<Expr> start;  // per dimension of `from`
  };
  std::vector<Pair> pairs;
  arith::Analyzer* ana = nullptr;
  std::string error;  // set when a load reads outside the intrinsic's dimensions

 protected:
  Expr mutate(const tir::BufferLoadNode* op, const Expr& self) override {
    Expr e = tir::IRMutator::mutate(op, self);
    const auto* l = e.as<tir::BufferLoadNode>();
    for (const Pair& p : pairs) {
      if (!l->buffer.same_as(p.from)) continue;
      size_t lead = p.from->shape.size() - p.to->shape.size();
      std::vector<Expr> idx;
      for (size_t d = 0; d < l->indices.size(); ++d) {
        Expr rel = ana->simplify(l->indices[d] - p.start[d]);
        if (d < lead) {
          if (!tir::is_const_int(rel, 0) && error.empty()) {
            error = "tensor " + p.from->name + " is read over more dimensions than the intrinsic's input " + p.to->name;
          }
          continue;
        }
        idx.push_back(rel);
      }
      return tir::buffer_load(p.to, idx);
    }
    return e;
  }
};

}  // namespace

tir::Stmt tensorize_stage(const StageNode& stage, size_t tpos, const Bounds& bounds, const Expr& body,
                          const RealizedLookup& realized, IntrinPart part,
                          const std::map<Var, Expr, tir::VarLess>& vmap) {
  const IterVar& tleaf = stage.leaf_iter_vars[tpos];
  const TensorIntrin& intrin = stage.iter_var_attrs.at(tleaf.get()).tensor_intrin;
  const OperationNode* iop = intrin->op.get();
  auto fail = [&](const std::string& detail) {
    throw_user_error("tensorize of stage {} at axis {} with intrinsic {}: {}", stage.op->name, tleaf.name(), intrin->name,
                     detail);
  };
  arith::Analyzer ana;
  StageIndex idx = stage_index(stage, bounds);
  std::vector<Var> tvars;
  for (size_t k = tpos; k < stage.leaf_iter_vars.size(); ++k) tvars.push_back(stage.leaf_iter_vars[k].var());

  struct AxisInfo {
    bool tensorized = false;
    int64_t extent = 1;
    Expr base;
  };
  std::map<const IterVarNode*, AxisInfo> info;
  std::vector<int> uses(tvars.size(), 0);
  for (const IterVar& a : stage.root_iter_vars()) {
    auto coeffs = arith::detect_linear_equation(idx.value.at(a.get()), tvars);
    if (!coeffs) fail("axis " + a.name() + " is not an affine function of the tensorized loops");
    AxisInfo ai;
    ai.base = (*coeffs)[tvars.size()].defined() ? (*coeffs)[tvars.size()] : Expr(0);
    for (size_t t = 0; t < tvars.size(); ++t) {
      const Expr& c = (*coeffs)[t];
      if (!c.defined() || tir::is_const_int(c, 0)) continue;
      if (!tir::is_const_int(c, 1)) fail("axis " + a.name() + " uses tensorized loop " + tvars[t].name() + " with coefficient " + tir::to_text(c));
      if (ai.tensorized) fail("axis " + a.name() + " uses two tensorized loops");
      ai.tensorized = true;
      ++uses[t];
      const int64_t* e = tir::as_const_int(bounds.at(stage.leaf_iter_vars[tpos + t]).extent);
      if (!e) fail("tensorized loop " + tvars[t].name() + " has a non-constant extent");
      ai.extent = *e;
    }
    info[a.get()] = ai;
  }
  for (size_t t = 0; t < tvars.size(); ++t) {
    if (uses[t] != 1) fail("tensorized loop " + tvars[t].name() + " is not the inner part of exactly one axis");
  }
  std::vector<Expr> outer_guards;
  for (const auto* gs : {&idx.data_par_guards, &idx.reduce_guards}) {
    for (const Expr& g : *gs) {
      for (const Var& t : tvars) {
        if (tir::uses_var(g, t)) fail("the tensorized loops have a partial tile (" + tir::to_text(g) + ")");
      }
      outer_guards.push_back(g);
    }
  }

  std::map<Var, Expr, tir::VarLess> smap, imap, zero;
  auto align = [&](const std::vector<IterVar>& sa, const std::vector<IterVar>& ia, const char* what) {
    size_t n = sa.size(), m = ia.size();
    if (m > n) fail(fmt::format("the intrinsic has {} {} axes, the stage {}", m, what, n));
    for (size_t d = 0; d < n; ++d) {
      const AxisInfo& ai = info.at(sa[d].get());
      if (d < n - m) {
        if (ai.tensorized) fail("axis " + sa[d].name() + " is tensorized but the intrinsic has no axis for it");
        smap[sa[d].var()] = ai.base;
        continue;
      }
      const IterVar& iv = ia[d - (n - m)];
      int64_t iext = *tir::as_const_int(iv.dom().extent);
      zero[iv.var()] = tir::make_const(iv.var().dtype(), 0);
      if (ai.tensorized) {
        if (ai.extent != iext) {
          fail(fmt::format("axis {} has extent {}, the intrinsic's axis {} {}", sa[d].name(), ai.extent, iv.name(), iext));
        }
        smap[sa[d].var()] = ai.base + iv.var();
      } else {
        if (iext != 1) fail(fmt::format("axis {} is not tensorized, the intrinsic's axis {} has extent {}", sa[d].name(), iv.name(), iext));
        smap[sa[d].var()] = ai.base;
        imap[iv.var()] = tir::make_const(iv.var().dtype(), 0);
      }
    }
  };
  align(stage.op->axis, iop->axis, "data-parallel");
  align(stage.op->reduce_axis, iop->reduce_axis, "reduction");

  const ReduceNode* sred = as_reduce(body);
  const ReduceNode* ired = as_reduce(iop->body);
  if ((sred != nullptr) != (ired != nullptr)) {
    fail(sred ? "the stage is a reduction, the intrinsic is not" : "the intrinsic is a reduction, the stage is not");
  }
  if (sred) {
    bool same = sred->combiner.name == ired->combiner.name &&
                tir::structural_equal(sred->combiner.result, ired->combiner.result, true) &&
                tir::structural_equal(sred->combiner.identity, ired->combiner.identity);
    if (!same) fail("the combiner " + sred->combiner.name + " does not match the declaration's " + ired->combiner.name);
    if (sred->init.defined() != ired->init.defined() ||
        (sred->init.defined() && !tir::structural_equal(tir::substitute(sred->init, smap), tir::substitute(ired->init, imap)))) {
      fail("the init of the reduction does not match the declaration's");
    }
  }
  Expr s_expr = tir::substitute(sred ? sred->source : body, smap);
  Expr i_expr = tir::substitute(ired ? ired->source : iop->body, imap);
  std::vector<const tir::BufferLoadNode*> sl = first_loads(s_expr), il = first_loads(i_expr);
  if (sl.size() != il.size()) fail(fmt::format("the stage reads {} tensors, the intrinsic {}", sl.size(), il.size()));
  LoadRebaser rb;
  rb.ana = &ana;
  for (size_t p = 0; p < sl.size(); ++p) {
    const tir::Buffer& from = sl[p]->buffer;
    const tir::Buffer& to = il[p]->buffer;
    size_t n = from->shape.size(), m = to->shape.size();
    if (m > n) fail(fmt::format("tensor {} has {} dimensions, the intrinsic's input {} {}", from->name, n, to->name, m));
    std::vector<Expr> start;
    for (size_t d = 0; d < n; ++d) {
      Expr s0 = tir::substitute(sl[p]->indices[d], zero);
      if (d >= n - m) s0 = s0 - tir::substitute(il[p]->indices[d - (n - m)], zero);
      start.push_back(ana.simplify(s0));
    }
    rb.pairs.push_back({from, to, start});
  }
  Expr s_rebased = ana.simplify(rb.mutate_expr(s_expr));
  if (!rb.error.empty()) fail(rb.error);
  Expr i_simpl = ana.simplify(i_expr);
  if (!tir::structural_equal(s_rebased, i_simpl)) {
    fail("the body in the declaration's terms " + tir::to_text(s_rebased) + " does not match the declaration " +
         tir::to_text(i_simpl));
  }

  auto bind = [&](const tir::Buffer& tensor_buf, const tir::Buffer& decl, const std::vector<Expr>& start) {
    RealizedBuffer r = realized(tensor_buf);
    std::vector<Expr> at;
    for (size_t d = 0; d < start.size(); ++d) {
      Expr e = r.offsets.empty() ? start[d] : start[d] - r.offsets[d];
      at.push_back(ana.simplify(tir::substitute(e, vmap)));
    }
    std::vector<Expr> strides = r.buffer.effective_strides();
    std::vector<Expr> inner(strides.end() - static_cast<long>(decl->shape.size()), strides.end());
    for (Expr& s : inner) s = ana.simplify(s);
    return tir::Buffer::over(r.buffer->data, decl->name, decl->dtype, decl->shape, r.buffer->scope, inner,
                             ana.simplify(r.buffer.flat_index(at)));
  };
  IntrinCall call;
  call.part = part;
  for (const Tensor& in : intrin->inputs) {
    for (size_t p = 0; p < il.size(); ++p) {
      if (il[p]->buffer.same_as(in.buffer())) call.inputs.push_back(bind(sl[p]->buffer, in.buffer(), rb.pairs[p].start));
    }
  }
  if (call.inputs.size() != intrin->inputs.size()) fail("the intrinsic declares inputs its body does not read");
  std::map<Var, Expr, tir::VarLess> tzero;
  for (const Var& t : tvars) tzero[t] = tir::make_const(t.dtype(), 0);
  std::vector<Expr> out_start;
  for (const IterVar& a : stage.op->axis) out_start.push_back(tir::substitute(idx.value.at(a.get()), tzero));
  call.output = bind(stage.op->output, iop->output, out_start);
  tir::Stmt s = intrin->build(call);
  if (!s.defined()) fail("the builder returned no statement");
  for (auto it = outer_guards.rbegin(); it != outer_guards.rend(); ++it) {
    s = tir::if_then_else(tir::intrin::likely(tir::substitute(*it, vmap)), s);
  }
  return s;
}

}  // namespace tessel::te
