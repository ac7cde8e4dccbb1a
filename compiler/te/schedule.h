// Schedules (TVM's te/schedule.h, Halide's Func scheduling): how each operation of a tensor graph
// is computed, without changing what it computes. create_schedule() makes one Stage per
// operation in topological order (producers before consumers); the primitives below rewrite the
// stage's iteration axes (split, fuse, reorder, tile), say where it is computed (at the root of
// the function, inside a consumer's loop with compute_at, or substituted into its consumers with
// compute_inline), add cache stages in on-chip memory scopes (cache_read, cache_write) and mark
// loops (bind to a GPU thread axis or a virtual thread, parallel, vectorize, unroll, pragmas,
// tensorize). Lowering (lower.h) turns the result into a TIR PrimFunc.
//
// Axes. A stage's root axes are its operation's axes followed by its reduction axes; split and
// fuse derive new axes (recorded as relations, in order) and the leaf axes, outermost first, are
// the loops lowering emits. Split factors and part counts are positive constants. Every
// primitive raises UserError naming the stage and the axis when it cannot apply:
//  - split/fuse/reorder/bind/... of an axis that is not an axis of the stage, or not a leaf;
//  - split/fuse of an axis that already carries a loop annotation;
//  - reorder listing an axis twice; fuse of axes that are not adjacent leaves (outer first) or
//    of a data-parallel with a reduction axis;
//  - compute_at to a stage that does not read this stage's tensor (directly or through other
//    stages), or at an axis that is not
//    a leaf of it (attachments cannot cycle: a consumer never feeds its producer); compute_inline of an output, of a
//    reduction or of a placeholder;
//  - bind to an unknown tag or of a reduction axis; parallel/vectorize of a reduction axis; a
//    second loop kind on one axis;
//  - any primitive on a placeholder stage.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "compiler/te/operation.h"
#include "compiler/tir/stmt.h"

namespace tessel::te {

struct TensorIntrinNode;

/// Where a stage is computed.
enum class AttachKind : uint8_t {
  kRoot,    ///< its own loop nest at the top of the function, over its whole shape
  kInline,  ///< substituted into every consumer (no loops, no buffer)
  kScope,   ///< inside a consumer's loop (compute_at), over the region the consumer needs
};

/// An axis derivation. kSplit: parent = outer * factor + inner, with either `factor` (the inner
/// extent) or `nparts` (the outer extent) given and the other 0. kFuse: fused = outer *
/// extent(inner) + inner.
struct IterVarRelation {
  enum class Kind : uint8_t { kSplit, kFuse } kind = Kind::kSplit;
  IterVar parent, outer, inner, fused;
  int64_t factor = 0;
  int64_t nparts = 0;
};

/// The loop annotation of a leaf axis.
struct IterVarAttr {
  tir::ForKind for_kind = tir::ForKind::kSerial;
  std::string thread_tag;  ///< kThreadBinding: "blockIdx.x", ...; "vthread" for kVirtualThread
  std::vector<std::pair<std::string, Expr>> pragmas;  ///< (key, value) in order given
  std::shared_ptr<const TensorIntrinNode> tensor_intrin;  ///< tensorize: the intrinsic
};

struct StageNode;

/// A handle to one stage of a schedule (shared with the schedule: changes through any handle
/// are seen by all).
class Stage {
 public:
  Stage() = default;
  explicit Stage(std::shared_ptr<StageNode> n) : node_(std::move(n)) {}
  bool defined() const { return node_ != nullptr; }
  StageNode* get() const { return node_.get(); }
  StageNode* operator->() const { return node_.get(); }
  bool same_as(const Stage& o) const { return node_ == o.node_; }
  /// The stage's (current) operation name.
  const std::string& name() const;

  /// Splits leaf `parent` into (outer, inner) with inner extent `factor` (> 0); the outer extent
  /// is ceil(extent / factor) and lowering guards the tail when factor does not divide.
  std::pair<IterVar, IterVar> split(const IterVar& parent, int64_t factor);
  /// Splits leaf `parent` into `nparts` (> 0) outer iterations of ceil(extent / nparts) inner.
  std::pair<IterVar, IterVar> split_nparts(const IterVar& parent, int64_t nparts);
  /// Fuses adjacent leaves `outer`, `inner` (outer immediately before inner) into one axis.
  IterVar fuse(const IterVar& outer, const IterVar& inner);
  /// Puts the listed leaves in this order at the positions they occupy (others stay put).
  void reorder(const std::vector<IterVar>& order);
  /// split(x, xf), split(y, yf), reorder(xo, yo, xi, yi); returns {xo, yo, xi, yi}.
  std::array<IterVar, 4> tile(const IterVar& x, const IterVar& y, int64_t x_factor, int64_t y_factor);
  /// Computes this stage inside `parent`'s loop `iv` (a leaf of parent), over the region of this
  /// stage's tensor one iteration of that loop reads.
  void compute_at(const Stage& parent, const IterVar& iv);
  /// Substitutes this stage's body into its consumers.
  void compute_inline();
  /// Back to the default: computed at the root over the whole shape.
  void compute_root();
  /// Binds leaf `iv` to a GPU axis ("blockIdx.x|y|z", "threadIdx.x|y|z": a thread-binding loop)
  /// or to "vthread" / "cthread" (a virtual-thread loop with that thread tag; TVM's two kinds:
  /// a vthread's threads share the allocations inside it that do not depend on the thread, a
  /// cthread's threads each get their own copy of every one: tir::transforms::
  /// inject_virtual_threads). A GPU tag binds at most one axis of a stage (UserError for a
  /// second); several axes may bind "vthread" / "cthread" (nested virtual-thread loops, the
  /// thread count their product).
  void bind(const IterVar& iv, const std::string& thread_tag);
  /// bind(iv, thread's tag) for an axis made by thread_axis (kind kThreadIndex or
  /// kVirtualThread); UserError for another kind.
  void bind(const IterVar& iv, const IterVar& thread);
  void parallel(const IterVar& iv);
  void vectorize(const IterVar& iv);
  void unroll(const IterVar& iv);
  /// Annotates leaf `iv`'s loop with pragma `key` ("dma_copy", "alu", ...) = value: lowering
  /// wraps the loop in AttrStmt "pragma_<key>".
  void pragma(const IterVar& iv, const std::string& key, Expr value = Expr(1));
  /// Replaces the loop nest from leaf `iv` inwards by the intrinsic (tensor_intrin.h); checked
  /// against the declaration when lowering.
  void tensorize(const IterVar& iv, std::shared_ptr<const TensorIntrinNode> intrin);

 private:
  std::shared_ptr<StageNode> node_;
};

struct StageNode {
  Operation op;         ///< current operation (cache primitives rewrite bodies)
  Operation origin_op;  ///< the operation the stage was made for (what schedule[tensor] finds)
  std::vector<IterVar> all_iter_vars;   ///< root axes, then derived ones in creation order
  std::vector<IterVar> leaf_iter_vars;  ///< the loops, outermost first
  std::vector<IterVarRelation> relations;
  std::map<const IterVarNode*, IterVarAttr> iter_var_attrs;
  AttachKind attach_type = AttachKind::kRoot;
  Stage attach_stage;  ///< kScope: the consumer
  IterVar attach_ivar;  ///< kScope: its leaf axis
  bool is_output = false;
  /// The schedule holding the stage (for the checks that look at other stages).
  std::weak_ptr<const struct ScheduleNode> schedule;
  /// The root axes: op->axis then op->reduce_axis.
  std::vector<IterVar> root_iter_vars() const;
  /// The stage's tensor (output 0 of op; its buffer is the same as origin_op's).
  Tensor tensor() const { return op.output(0); }
};

struct ScheduleNode {
  std::vector<Tensor> outputs;
  std::vector<Stage> stages;  ///< topological order: every stage after the stages it reads
};

/// A handle to a schedule.
class Schedule {
 public:
  Schedule() = default;
  explicit Schedule(std::shared_ptr<ScheduleNode> n) : node_(std::move(n)) {}
  const ScheduleNode* get() const { return node_.get(); }
  const ScheduleNode* operator->() const { return node_.get(); }
  /// The stage computing `t` (also through a cache primitive's rewrite); UserError naming the
  /// tensor when it is not in the schedule.
  Stage operator[](const Tensor& t) const;
  /// The stage whose tensor's buffer is `b`, or an undefined Stage.
  Stage stage_of(const tir::Buffer& b) const;

  /// A stage copying `t` into a new tensor in `scope` (named "<t>.<scope>"), read by `readers`
  /// (tensors of this schedule reading t) instead of t. Returns the new tensor. UserError when
  /// `readers` is empty or one of them does not read t.
  Tensor cache_read(const Tensor& t, tir::MemScope scope, const std::vector<Tensor>& readers);
  /// Moves `t`'s computation into a new stage writing a tensor in `scope` ("<t>.<scope>"); t's
  /// stage becomes a copy out of it. Returns the new tensor. UserError when t is a placeholder
  /// or its stage was already split, fused, annotated or is the target of a compute_at.
  Tensor cache_write(const Tensor& t, tir::MemScope scope);

 private:
  std::shared_ptr<ScheduleNode> node_;
};

/// A thread axis to bind leaves to: kind kVirtualThread for tags "vthread" and "cthread", else kThreadIndex
/// (tags as Stage::bind; UserError for another tag). Its variable is named `name`, or the tag.
IterVar thread_axis(const std::string& tag, const std::string& name = "");

/// One stage per operation reachable from `outputs`, producers first (depth-first, inputs in
/// first-read order). UserError when `outputs` is empty.
Schedule create_schedule(const std::vector<Tensor>& outputs);

/// `body` with every load of `from`'s buffer replaced by the same load of `to`'s buffer
/// (Reduce bodies keep their combiner and axes).
Expr replace_tensor(const Expr& body, const tir::Buffer& from, const tir::Buffer& to);

}  // namespace tessel::te
