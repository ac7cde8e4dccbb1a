// Tensor intrinsics (TVM's decl_tensor_intrin and tensorize): a hardware operation declared as
// a small compute (e.g. a 16x16x16 GEMM C[i, j] = sum(A[i, k] * B[k, j])) plus a function that
// builds the statement replacing a matching loop nest (an intrinsic call on buffers bound to the
// matched regions).
//
// Matching (at lowering, for Stage::tensorize(iv, intrin)): the loops from leaf iv inwards are
// the tensorized loops. Every root axis of the stage must be an affine function of at most one
// tensorized loop with coefficient 1 (a tensorized axis, extent = that loop's) or of none (an
// outer axis). The stage's data-parallel axes align with the intrinsic's from the last one
// backwards, and so do the reduction axes: an aligned axis is tensorized with the intrinsic
// axis' extent, or outer when the intrinsic axis has extent 1; axes before the aligned ones
// must be outer. The stage's body, with tensorized axes rebased to the region start and tensors
// paired with the intrinsic's inputs in order of first read, must then equal the intrinsic's
// body structurally (after simplification), with the same combiner. Guards inside the region
// (a split that does not divide) are not allowed.
//
// The builder gets one buffer per intrinsic input and one for the output, each over the realised
// tensor's memory (same data variable and scope), with the intrinsic's shape, the realised
// buffer's innermost strides and the region start as elem_offset. When reduction loops remain
// outside the tensorized loops, lowering calls the builder for a reset (before the first outer
// reduction loop, under the data-parallel loops between) and for an update (inside); otherwise
// for the whole body.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/te/bound.h"
#include "compiler/te/operation.h"
#include "compiler/tir/stmt.h"

namespace tessel::te {

/// Which statement the builder is asked for.
enum class IntrinPart : uint8_t {
  kBody,    ///< the whole computation (reductions start from the identity)
  kReset,   ///< set the output region to the reduction's start value
  kUpdate,  ///< accumulate into the output region
};

/// What the builder gets.
struct IntrinCall {
  std::vector<tir::Buffer> inputs;  ///< in the declaration's input order
  tir::Buffer output;
  IntrinPart part = IntrinPart::kBody;
};
using IntrinBuilder = std::function<tir::Stmt(const IntrinCall&)>;

struct TensorIntrinNode {
  std::string name;
  Operation op;                ///< the declared compute
  std::vector<Tensor> inputs;  ///< its placeholders, in order of first read
  IntrinBuilder build;
};
using TensorIntrin = std::shared_ptr<const TensorIntrinNode>;

/// Declares intrinsic `name` computing `out` (a compute whose inputs are all placeholders).
/// UserError naming the intrinsic otherwise or when `build` is empty.
TensorIntrin decl_tensor_intrin(const Tensor& out, IntrinBuilder build, const std::string& name);

/// Internal (lower.cc): the realised buffer of a tensor buffer and the offsets subtracted from
/// its indices (empty: none).
struct RealizedBuffer {
  tir::Buffer buffer;
  std::vector<Expr> offsets;
};
using RealizedLookup = std::function<RealizedBuffer(const tir::Buffer&)>;

/// Internal (lower.cc): checks that the stage's loops from leaf position `tpos` inwards match
/// the stage's intrinsic and returns the builder's statement for `part`, wrapped in the stage's
/// guards that do not involve the tensorized loops. `body` is the stage's inlined body; `vmap`
/// substitutes leaf variables (the fresh variables of a reset nest). UserError naming the stage,
/// the axis, the intrinsic and the mismatch.
tir::Stmt tensorize_stage(const StageNode& stage, size_t tpos, const Bounds& bounds, const Expr& body,
                          const RealizedLookup& realized, IntrinPart part,
                          const std::map<Var, Expr, tir::VarLess>& vmap);

}  // namespace tessel::te
