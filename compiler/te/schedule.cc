#include "compiler/te/schedule.h"

#include <algorithm>
#include <set>

#include "compiler/tir/functor.h"
#include "compiler/tir/util.h"
#include "support/error.h"

namespace tessel::te {
namespace {

const char* kind_word(IterVarKind k) { return k == IterVarKind::kReduce ? "reduction" : "data-parallel"; }

void check_not_placeholder(const StageNode* s, const char* what) {
  if (s->op->kind == OpKind::kPlaceholder) {
    throw_user_error("stage {}: {} of a placeholder, which has no loops to schedule", s->op->name, what);
  }
}

bool contains(const std::vector<IterVar>& v, const IterVar& iv) {
  return std::any_of(v.begin(), v.end(), [&](const IterVar& x) { return x.same_as(iv); });
}

/// Position of `iv` among the leaves; UserError naming the stage, the primitive and the axis.
size_t leaf_pos(const StageNode* s, const IterVar& iv, const char* what) {
  check_not_placeholder(s, what);
  if (!iv.defined()) throw_user_error("stage {}: {} of an undefined axis", s->op->name, what);
  for (size_t i = 0; i < s->leaf_iter_vars.size(); ++i) {
    if (s->leaf_iter_vars[i].same_as(iv)) return i;
  }
  if (contains(s->all_iter_vars, iv)) {
    throw_user_error("stage {}: {} of axis {}, which is not a leaf axis (already split or fused)", s->op->name, what,
                     iv.name());
  }
  throw_user_error("stage {}: {} of axis {}, which is not an axis of this stage", s->op->name, what, iv.name());
}

void check_unannotated(const StageNode* s, const IterVar& iv, const char* what) {
  if (s->iter_var_attrs.count(iv.get())) {
    throw_user_error("stage {}: {} of axis {}, which already carries a loop annotation", s->op->name, what, iv.name());
  }
}

IterVar derived(const IterVar& parent, const std::string& suffix) {
  return IterVar(Range(), Var(parent.name() + suffix), parent.kind());
}

class BufferReplacer : public tir::IRMutator {
 public:
  BufferReplacer(const tir::Buffer& from, const tir::Buffer& to) : from_(from), to_(to) {}
  tir::Buffer mutate_buffer(const tir::Buffer& b) override { return b.same_as(from_) ? to_ : b; }

 private:
  tir::Buffer from_, to_;
};

bool reads(const Operation& op, const tir::Buffer& b) {
  return std::any_of(op->inputs.begin(), op->inputs.end(), [&](const Tensor& t) { return t.buffer().same_as(b); });
}

/// True when `consumer` reads `producer`'s tensor directly or through other stages.
bool consumes(const StageNode* producer, const StageNode* consumer) {
  std::shared_ptr<const ScheduleNode> sch = producer->schedule.lock();
  if (!sch) return reads(consumer->op, producer->op->output);
  std::set<const tir::BufferNode*> reached{producer->op->output.get()};
  for (const Stage& s : sch->stages) {  // topological order: one pass suffices
    for (const Tensor& t : s->op->inputs) {
      if (reached.count(t.buffer().get())) {
        if (s.get() == consumer) return true;
        reached.insert(s->op->output.get());
      }
    }
  }
  return false;
}

}  // namespace

std::vector<IterVar> StageNode::root_iter_vars() const {
  std::vector<IterVar> r = op->axis;
  r.insert(r.end(), op->reduce_axis.begin(), op->reduce_axis.end());
  return r;
}

const std::string& Stage::name() const { return node_->op->name; }

std::pair<IterVar, IterVar> Stage::split(const IterVar& parent, int64_t factor) {
  StageNode* s = node_.get();
  size_t pos = leaf_pos(s, parent, "split");
  check_unannotated(s, parent, "split");
  if (factor <= 0) throw_user_error("stage {}: split of axis {} by factor {}; it must be positive", s->op->name, parent.name(), factor);
  IterVarRelation r;
  r.kind = IterVarRelation::Kind::kSplit;
  r.parent = parent;
  r.outer = derived(parent, ".outer");
  r.inner = derived(parent, ".inner");
  r.factor = factor;
  s->relations.push_back(r);
  s->all_iter_vars.push_back(r.outer);
  s->all_iter_vars.push_back(r.inner);
  s->leaf_iter_vars[pos] = r.outer;
  s->leaf_iter_vars.insert(s->leaf_iter_vars.begin() + static_cast<long>(pos) + 1, r.inner);
  return {r.outer, r.inner};
}

std::pair<IterVar, IterVar> Stage::split_nparts(const IterVar& parent, int64_t nparts) {
  StageNode* s = node_.get();
  if (nparts <= 0) {
    leaf_pos(s, parent, "split_nparts");
    throw_user_error("stage {}: split_nparts of axis {} into {} parts; it must be positive", s->op->name, parent.name(), nparts);
  }
  auto [outer, inner] = split(parent, 1);
  s->relations.back().factor = 0;
  s->relations.back().nparts = nparts;
  return {outer, inner};
}

IterVar Stage::fuse(const IterVar& outer, const IterVar& inner) {
  StageNode* s = node_.get();
  size_t po = leaf_pos(s, outer, "fuse");
  size_t pi = leaf_pos(s, inner, "fuse");
  check_unannotated(s, outer, "fuse");
  check_unannotated(s, inner, "fuse");
  if (pi != po + 1) {
    throw_user_error("stage {}: fuse of {} and {}, which are not adjacent leaf axes (positions {} and {})", s->op->name,
                     outer.name(), inner.name(), po, pi);
  }
  if ((outer.kind() == IterVarKind::kReduce) != (inner.kind() == IterVarKind::kReduce)) {
    throw_user_error("stage {}: fuse of {} axis {} with {} axis {}", s->op->name, kind_word(outer.kind()), outer.name(),
                     kind_word(inner.kind()), inner.name());
  }
  IterVarRelation r;
  r.kind = IterVarRelation::Kind::kFuse;
  r.outer = outer;
  r.inner = inner;
  r.fused = IterVar(Range(), Var(outer.name() + "." + inner.name() + ".fused"), outer.kind());
  s->relations.push_back(r);
  s->all_iter_vars.push_back(r.fused);
  s->leaf_iter_vars[po] = r.fused;
  s->leaf_iter_vars.erase(s->leaf_iter_vars.begin() + static_cast<long>(pi));
  return r.fused;
}

void Stage::reorder(const std::vector<IterVar>& order) {
  StageNode* s = node_.get();
  std::vector<size_t> pos;
  for (size_t i = 0; i < order.size(); ++i) {
    pos.push_back(leaf_pos(s, order[i], "reorder"));
    for (size_t j = 0; j < i; ++j) {
      if (order[j].same_as(order[i])) throw_user_error("stage {}: reorder lists axis {} twice", s->op->name, order[i].name());
    }
  }
  std::vector<size_t> sorted = pos;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < order.size(); ++i) s->leaf_iter_vars[sorted[i]] = order[i];
}

std::array<IterVar, 4> Stage::tile(const IterVar& x, const IterVar& y, int64_t x_factor, int64_t y_factor) {
  auto [xo, xi] = split(x, x_factor);
  auto [yo, yi] = split(y, y_factor);
  reorder({xo, yo, xi, yi});
  return {xo, yo, xi, yi};
}

void Stage::compute_at(const Stage& parent, const IterVar& iv) {
  StageNode* s = node_.get();
  check_not_placeholder(s, "compute_at");
  if (!parent.defined()) throw_user_error("stage {}: compute_at an undefined stage", s->op->name);
  if (parent.same_as(*this)) throw_user_error("stage {}: compute_at itself", s->op->name);
  if (!consumes(s, parent.get())) {
    throw_user_error("stage {}: compute_at stage {}, which does not read {}", s->op->name, parent.name(), s->op->name);
  }
  leaf_pos(parent.get(), iv, "compute_at target");
  s->attach_type = AttachKind::kScope;
  s->attach_stage = parent;
  s->attach_ivar = iv;
}

void Stage::compute_inline() {
  StageNode* s = node_.get();
  check_not_placeholder(s, "compute_inline");
  if (s->is_output) throw_user_error("stage {}: compute_inline of an output of the schedule", s->op->name);
  if (!s->op->reduce_axis.empty()) throw_user_error("stage {}: compute_inline of a reduction", s->op->name);
  s->attach_type = AttachKind::kInline;
  s->attach_stage = Stage();
  s->attach_ivar = IterVar();
}

void Stage::compute_root() {
  StageNode* s = node_.get();
  check_not_placeholder(s, "compute_root");
  s->attach_type = AttachKind::kRoot;
  s->attach_stage = Stage();
  s->attach_ivar = IterVar();
}

namespace {

void set_kind(StageNode* s, const IterVar& iv, tir::ForKind kind, const std::string& tag, const char* what) {
  leaf_pos(s, iv, what);
  IterVarAttr& a = s->iter_var_attrs[iv.get()];
  if (a.for_kind != tir::ForKind::kSerial || a.tensor_intrin) {
    std::string had = a.tensor_intrin ? std::string("tensorized") : std::string(tir::to_string(a.for_kind));
    throw_user_error("stage {}: {} of axis {}, which is already {}", s->op->name, what, iv.name(), had);
  }
  a.for_kind = kind;
  a.thread_tag = tag;
}

}  // namespace

namespace {
bool known_tag(const std::string& tag) {
  static const std::set<std::string> kTags = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z", "threadIdx.x",
                                              "threadIdx.y", "threadIdx.z", "vthread", "cthread"};
  return kTags.count(tag) > 0;
}
}  // namespace

IterVar thread_axis(const std::string& tag, const std::string& name) {
  if (!known_tag(tag)) {
    throw_user_error("thread_axis: unknown thread tag '{}' (blockIdx.x|y|z, threadIdx.x|y|z, vthread, cthread)", tag);
  }
  return IterVar(Range(), Var(name.empty() ? tag : name),
                 tag == "vthread" || tag == "cthread" ? IterVarKind::kVirtualThread : IterVarKind::kThreadIndex, tag);
}

void Stage::bind(const IterVar& iv, const IterVar& thread) {
  if (!thread.defined() || (thread.kind() != IterVarKind::kThreadIndex && thread.kind() != IterVarKind::kVirtualThread)) {
    throw_user_error("stage {}: bind of axis {} to {}, which is not a thread axis", name(),
                     iv.defined() ? iv.name() : std::string("undefined"),
                     thread.defined() ? thread.name() + " (kind " + std::string(to_string(thread.kind())) + ")"
                                      : std::string("an undefined axis"));
  }
  bind(iv, thread->thread_tag);
}

void Stage::bind(const IterVar& iv, const std::string& thread_tag) {
  StageNode* s = node_.get();
  leaf_pos(s, iv, "bind");
  if (!known_tag(thread_tag)) {
    throw_user_error(
        "stage {}: bind of axis {} to unknown thread tag '{}' (blockIdx.x|y|z, threadIdx.x|y|z, vthread, cthread)",
                     s->op->name, iv.name(), thread_tag);
  }
  if (iv.kind() == IterVarKind::kReduce) {
    throw_user_error("stage {}: bind of reduction axis {} to {}", s->op->name, iv.name(), thread_tag);
  }
  // A GPU axis binds one loop of a stage; virtual threads may nest (one loop per bound axis, as
  // TVM's vthread axes vx, vy), each its own virtual-thread loop.
  const bool virtual_thread = thread_tag == "vthread" || thread_tag == "cthread";
  for (const auto& [k, a] : s->iter_var_attrs) {
    if (!virtual_thread && a.thread_tag == thread_tag) {
      throw_user_error("stage {}: bind of axis {} to {}, which another axis of the stage is bound to", s->op->name,
                       iv.name(), thread_tag);
    }
  }
  if (virtual_thread) set_kind(s, iv, tir::ForKind::kVirtualThread, thread_tag, "bind");
  else set_kind(s, iv, tir::ForKind::kThreadBinding, thread_tag, "bind");
}

void Stage::parallel(const IterVar& iv) {
  if (iv.defined() && iv.kind() == IterVarKind::kReduce) {
    leaf_pos(node_.get(), iv, "parallel");
    throw_user_error("stage {}: parallel of reduction axis {}", name(), iv.name());
  }
  set_kind(node_.get(), iv, tir::ForKind::kParallel, "", "parallel");
}

void Stage::vectorize(const IterVar& iv) {
  if (iv.defined() && iv.kind() == IterVarKind::kReduce) {
    leaf_pos(node_.get(), iv, "vectorize");
    throw_user_error("stage {}: vectorize of reduction axis {}", name(), iv.name());
  }
  set_kind(node_.get(), iv, tir::ForKind::kVectorized, "", "vectorize");
}

void Stage::unroll(const IterVar& iv) { set_kind(node_.get(), iv, tir::ForKind::kUnrolled, "", "unroll"); }

void Stage::pragma(const IterVar& iv, const std::string& key, Expr value) {
  StageNode* s = node_.get();
  leaf_pos(s, iv, "pragma");
  if (key.empty()) throw_user_error("stage {}: pragma of axis {} with an empty key", s->op->name, iv.name());
  if (!value.defined()) throw_user_error("stage {}: pragma {} of axis {} without a value", s->op->name, key, iv.name());
  s->iter_var_attrs[iv.get()].pragmas.emplace_back(key, std::move(value));
}

void Stage::tensorize(const IterVar& iv, std::shared_ptr<const TensorIntrinNode> intrin) {
  StageNode* s = node_.get();
  leaf_pos(s, iv, "tensorize");
  if (!intrin) throw_user_error("stage {}: tensorize of axis {} with no intrinsic", s->op->name, iv.name());
  IterVarAttr& a = s->iter_var_attrs[iv.get()];
  if (a.for_kind != tir::ForKind::kSerial || a.tensor_intrin) {
    throw_user_error("stage {}: tensorize of axis {}, which is already {}", s->op->name, iv.name(),
                     a.tensor_intrin ? std::string("tensorized") : std::string(tir::to_string(a.for_kind)));
  }
  a.tensor_intrin = std::move(intrin);
}

// ---- schedule ----

namespace {

Stage make_stage(const Operation& op) {
  auto n = std::make_shared<StageNode>();
  n->op = op;
  n->origin_op = op;
  n->all_iter_vars = n->root_iter_vars();
  n->leaf_iter_vars = n->all_iter_vars;
  return Stage(n);
}

void post_order(const Operation& op, std::set<const OperationNode*>& seen, std::vector<Operation>& order) {
  if (!seen.insert(op.get()).second) return;
  for (const Tensor& t : op->inputs) post_order(t.op(), seen, order);
  order.push_back(op);
}

}  // namespace

Schedule create_schedule(const std::vector<Tensor>& outputs) {
  if (outputs.empty()) throw_user_error("create_schedule: no output tensors");
  auto n = std::make_shared<ScheduleNode>();
  n->outputs = outputs;
  std::set<const OperationNode*> seen;
  std::vector<Operation> order;
  for (const Tensor& t : outputs) {
    if (!t.defined()) throw_user_error("create_schedule: an undefined output tensor");
    post_order(t.op(), seen, order);
  }
  for (const Operation& op : order) {
    Stage s = make_stage(op);
    for (const Tensor& t : outputs) s->is_output = s->is_output || t.op().same_as(op);
    s->schedule = n;
    n->stages.push_back(s);
  }
  return Schedule(n);
}

Stage Schedule::stage_of(const tir::Buffer& b) const {
  for (const Stage& s : node_->stages) {
    if (s->op->output.same_as(b)) return s;
  }
  return Stage();
}

Stage Schedule::operator[](const Tensor& t) const {
  if (!t.defined()) throw_user_error("schedule: lookup of an undefined tensor");
  Stage s = stage_of(t.buffer());
  if (!s.defined()) throw_user_error("schedule: tensor {} is not in this schedule", t.name());
  return s;
}

Expr replace_tensor(const Expr& body, const tir::Buffer& from, const tir::Buffer& to) {
  BufferReplacer m(from, to);
  return mutate_body(body, m);
}

namespace {

size_t position_of(const ScheduleNode* n, const Stage& s) {
  for (size_t i = 0; i < n->stages.size(); ++i) {
    if (n->stages[i].same_as(s)) return i;
  }
  throw_internal_error("stage {} is not in its schedule", s.name());
}

std::string cache_name(const Tensor& t, tir::MemScope scope) { return t.name() + "." + std::string(tir::to_string(scope)); }

}  // namespace

Tensor Schedule::cache_read(const Tensor& t, tir::MemScope scope, const std::vector<Tensor>& readers) {
  Stage src = (*this)[t];
  if (readers.empty()) throw_user_error("cache_read of {}: no readers given", t.name());
  std::vector<Stage> rs;
  for (const Tensor& r : readers) {
    Stage rst = (*this)[r];
    if (!reads(rst->op, t.buffer())) throw_user_error("cache_read of {}: reader {} does not read {}", t.name(), r.name(), t.name());
    rs.push_back(rst);
  }
  std::string name = cache_name(t, scope);
  tir::Buffer buf(name, t.dtype(), t.shape(), scope);
  std::vector<IterVar> axis;
  std::vector<Var> vars;
  for (size_t d = 0; d < t.ndim(); ++d) {
    Var v(t.ndim() <= 3 ? std::string(1, "ijk"[d]) : "i" + std::to_string(d));
    vars.push_back(v);
    axis.emplace_back(Range::from_min_extent(0, t.shape()[d]), v, IterVarKind::kDataPar);
  }
  std::vector<Expr> idx(vars.begin(), vars.end());
  Operation cop = make_compute_op(name, {}, buf, axis, {}, tir::buffer_load(t.buffer(), idx), true);
  for (Stage& rst : rs) {
    const OperationNode* o = rst->op.get();
    rst->op = make_compute_op(o->name, o->attrs, o->output, o->axis, o->reduce_axis,
                              replace_tensor(o->body, t.buffer(), buf), false);
  }
  Stage cs = make_stage(cop);
  cs->schedule = node_;
  node_->stages.insert(node_->stages.begin() + static_cast<long>(position_of(node_.get(), src)) + 1, cs);
  return cop.output(0);
}

Tensor Schedule::cache_write(const Tensor& t, tir::MemScope scope) {
  Stage st = (*this)[t];
  StageNode* s = st.get();
  check_not_placeholder(s, "cache_write");
  if (!s->relations.empty() || !s->iter_var_attrs.empty()) {
    throw_user_error("stage {}: cache_write after the stage was split, fused or annotated", s->op->name);
  }
  for (const Stage& o : node_->stages) {
    if (o->attach_type == AttachKind::kScope && o->attach_stage.same_as(st)) {
      throw_user_error("stage {}: cache_write after stage {} was attached to it", s->op->name, o.name());
    }
  }
  const OperationNode* o = s->op.get();
  std::string name = cache_name(t, scope);
  std::map<Var, Expr, tir::VarLess> vmap;
  std::vector<IterVar> axis, raxis;
  for (const IterVar& iv : o->axis) {
    IterVar n(iv.dom(), Var(iv.name()), iv.kind());
    vmap[iv.var()] = n.var();
    axis.push_back(n);
  }
  for (const IterVar& iv : o->reduce_axis) {
    IterVar n(iv.dom(), Var(iv.name()), iv.kind());
    vmap[iv.var()] = n.var();
    raxis.push_back(n);
  }
  Expr body;
  if (const ReduceNode* r = as_reduce(o->body)) {
    body = reduce(r->combiner, tir::substitute(r->source, vmap), raxis,
                  r->init.defined() ? tir::substitute(r->init, vmap) : Expr());
  } else {
    body = tir::substitute(o->body, vmap);
  }
  tir::Buffer buf(name, t.dtype(), t.shape(), scope);
  Operation cop = make_compute_op(name, o->attrs, buf, axis, raxis, body, true);
  std::vector<Expr> idx;
  for (const IterVar& iv : o->axis) idx.push_back(iv.var());
  s->op = make_compute_op(o->name, o->attrs, o->output, o->axis, {}, tir::buffer_load(buf, idx), false);
  s->all_iter_vars = s->root_iter_vars();
  s->leaf_iter_vars = s->all_iter_vars;
  Stage cs = make_stage(cop);
  cs->schedule = node_;
  node_->stages.insert(node_->stages.begin() + static_cast<long>(position_of(node_.get(), st)), cs);
  return cop.output(0);
}

}  // namespace tessel::te
