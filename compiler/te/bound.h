// Bound inference (TVM's te/schedule/bound.cc, Halide's bounds inference): the range every axis
// of every stage iterates over.
//  - A stage at the root computes its whole shape; its reduction axes cover their domains.
//  - A stage attached with compute_at(P, iv) computes the region of its tensor that one
//    iteration of P's loop iv needs: the union, over every stage reading it, of the indices it
//    reads, with the reader's loops inside the attach point relaxed to their ranges (by
//    arith::eval_set, one attach level at a time, innermost first) and the loops outside kept
//    symbolic; the union is clipped to the tensor's shape. A reader must be P itself or a stage
//    attached inside P at iv or deeper.
//  - Split and fuse pass the ranges down: split by factor f gives outer ceil(E / f) and inner f;
//    by nparts n, outer n and inner ceil(E / n); fuse gives the product.
// Derived axes range over [0, extent); root axes over [min, min + extent) with min symbolic for
// attached stages. Inlined stages are substituted into their readers first (inline_bodies).
#pragma once

#include <map>
#include <vector>

#include "compiler/te/schedule.h"

namespace tessel::te {

/// Ranges of axes, by IterVar identity.
struct Bounds {
  std::map<const IterVarNode*, Range> ranges;
  /// For the root axes of attached stages: the largest extent the region takes (what an
  /// allocation of the region needs), from the region's unclipped span and the shape.
  std::map<const IterVarNode*, int64_t> max_extent;
  /// The range of `iv`; InternalError when inference did not reach it.
  const Range& at(const IterVar& iv) const;
  /// [0, extent of at(iv)): what the loop variable of leaf `iv` runs over (a root axis used as
  /// a leaf is min + its loop variable).
  Range loop_range(const IterVar& iv) const;
};

/// The range of every axis of every non-inlined compute stage. UserError naming the stages when
/// a stage is attached to an inlined stage or to an axis that is no longer a leaf, or is read by a stage outside its attach point (a
/// stage at the root, or one attached outside the attach loop).
Bounds infer_bound(const Schedule& sch);

/// Each compute stage's body with the bodies of inlined stages substituted for their loads
/// (recursively); Reduce bodies keep their combiner and axes.
std::map<const StageNode*, Expr> inline_bodies(const Schedule& sch);

/// A stage's axes as expressions of its leaf loop variables (leaf loops run over [0, extent)).
struct StageIndex {
  /// Root axes: min + offset; derived axes: their offset; leaves: their variable.
  std::map<const IterVarNode*, Expr> value;
  /// Conditions under which the point is inside the stage's ranges, one per split whose factor
  /// does not provably divide its extent (offset < extent), data-parallel and reduction apart.
  std::vector<Expr> data_par_guards;
  std::vector<Expr> reduce_guards;
};
StageIndex stage_index(const StageNode& stage, const Bounds& bounds);

/// The position of `iv` in stage's leaves; InternalError when absent.
size_t leaf_position(const StageNode& stage, const IterVar& iv);

}  // namespace tessel::te
