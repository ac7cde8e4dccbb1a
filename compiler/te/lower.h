// Lowering a schedule to TIR (TVM's ScheduleOps + SchedulePostProcToPrimFunc, Halide's Lower):
// one PrimFunc whose parameters are the given tensors' buffers, in order.
//  - Each stage at the root becomes a loop nest over its leaf axes (outermost first, in stage
//    order); every leaf loop runs over [0, extent) and root axes are rebuilt from the leaves:
//    split => outer * factor + inner, guarded by `if (likely(offset < extent))` when the factor
//    does not provably divide the extent; fuse => floordiv/floormod of the fused variable.
//  - A stage attached with compute_at is emitted inside the attach loop, before the rest of the
//    consumer's body there, over the region bound inference found; unless it is an argument it
//    gets an Allocate there in its memory scope, shaped by the region's largest extent, and its
//    indices are rebased to the region's start.
//  - Inlined stages are substituted into their readers. A tensor at the root that is not an
//    argument gets an Allocate around the whole body (its scope: global, or the cache scope).
//  - A reduction becomes an init nest (its data-parallel loops inside the first reduction loop,
//    fresh variables, storing the init value or the combiner's identity) followed by the update
//    nest (store of combiner(current, source)).
//  - Loop annotations: bind => For kThreadBinding with the tag (kVirtualThread for "vthread");
//    parallel/vectorize/unroll => those For kinds; pragma(key, v) => AttrStmt "pragma_<key>" = v
//    around the loop (no node); tensorize => the intrinsic's statement (tensor_intrin.h).
// The result is simplified (tir::transforms::simplify) and checked with tir's verifier.
#pragma once

#include <string>
#include <vector>

#include "compiler/te/schedule.h"
#include "compiler/tir/function.h"

namespace tessel::te {

/// The schedule as a PrimFunc named `name` with `args` as parameters (each a tensor of the
/// schedule; parameter and buffer named after the tensor). UserError naming the tensor when an
/// argument is not in the schedule, is listed twice or is inlined; when an output of the
/// schedule or a placeholder that is read is not an argument; when a vectorized or unrolled loop
/// has a non-constant extent; when an attached region has no constant upper bound; plus the
/// errors of infer_bound and tensorize.
tir::PrimFunc lower(const Schedule& sch, const std::vector<Tensor>& args, const std::string& name);

}  // namespace tessel::te
