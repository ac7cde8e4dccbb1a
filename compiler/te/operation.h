// Operations of the tensor expression language (TVM's te/operation.h): placeholder (an input),
// compute (a value per point of an index space, optionally a reduction) and the reduction
// expression.
//
// Reductions. `sum(A(i, k), {k})` builds a Reduce node: a tir CallNode whose op is "te.reduce"
// (so the tir printer and visitors see an opaque call) extended with the combiner, the source,
// the reduction axes and an optional initial value. A Reduce must be the whole body of a compute
// (TVM's rule): compute rejects bodies with a Reduce anywhere else. A te::CommReducer combines
// the running value `lhs` with a new element `rhs`; its identity is the start value unless the
// reduction gives `init`. A generic tir::IRMutator rebuilds a Reduce as a plain call, so te code
// rewrites Reduce bodies through their source and init (see replace_tensor in schedule.h).
//
// Shapes are constant: every extent of a placeholder, compute and reduction axis is a positive
// int32 constant (the accelerator's kernels all have static shapes). Every operation has one
// output.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compiler/tir/expr.h"
#include "compiler/tir/functor.h"
#include "compiler/te/tensor.h"

namespace tessel::te {

enum class OpKind : uint8_t { kPlaceholder, kCompute };

struct OperationNode {
  OperationNode() = default;
  ~OperationNode();
  OperationNode(const OperationNode&) = delete;
  OperationNode& operator=(const OperationNode&) = delete;

  OpKind kind = OpKind::kPlaceholder;
  std::string name;
  std::map<std::string, std::string> attrs;
  /// The output tensor's buffer (shape, dtype, name; scope global, or the cache scope).
  tir::Buffer output;
  /// compute: one data-parallel axis per output dimension, domain [0, extent).
  std::vector<IterVar> axis;
  /// compute: the axes of the top-level reduction (empty when the body is not a Reduce).
  std::vector<IterVar> reduce_axis;
  /// compute: the element value in terms of the axis variables (a Reduce for reductions).
  Expr body;
  /// compute: the tensors the body reads, in order of first read (left to right).
  std::vector<Tensor> inputs;
  /// True when the node is in the buffer->operation registry (see operation.cc).
  bool registered = false;
};

/// An input tensor of `shape` (positive int32 constants) and element type `dtype`.
/// UserError naming the tensor for a non-constant or non-positive extent or a vector dtype.
Tensor placeholder(const std::vector<Expr>& shape, DataType dtype, const std::string& name = "placeholder");

/// The axis variables compute() passes to fcompute, one per dimension.
using FCompute = std::function<Expr(const std::vector<Var>&)>;

/// A tensor of `shape` whose element at (i, j, ...) is fcompute({i, j, ...}); its dtype is the
/// body's. Axis variables are named i, j, k for up to three dimensions, i0, i1, ... beyond.
/// UserError naming the tensor when: an extent is not a positive int32 constant; the body is
/// undefined, a vector, or not a number (handle/string); a Reduce appears other than as the
/// whole body; the body uses a variable that is neither an axis nor an axis of its reduction;
/// the body reads a buffer that is not a tensor's.
Tensor compute(const std::vector<Expr>& shape, const FCompute& fcompute, const std::string& name = "compute",
               std::map<std::string, std::string> attrs = {});
/// As above with the element type declared: UserError when the body's type is not `dtype`.
Tensor compute(const std::vector<Expr>& shape, DataType dtype, const FCompute& fcompute,
               const std::string& name = "compute", std::map<std::string, std::string> attrs = {});

/// A reduction axis over `dom` (extent a positive int32 constant, min an int32 constant), its
/// variable named `name`. UserError otherwise.
IterVar reduce_axis(const Range& dom, const std::string& name = "rv");
/// reduce_axis over [0, extent).
IterVar reduce_axis(int64_t extent, const std::string& name = "rv");

/// A commutative, associative combiner: result(lhs, rhs) with identity element `identity`.
struct CommReducer {
  std::string name;  ///< "sum", "max", "min" or the caller's
  Var lhs, rhs;      ///< scalars of the reduction's type
  Expr result;       ///< in terms of lhs and rhs
  Expr identity;     ///< of the reduction's type
};
/// The combiner `combine(lhs, rhs)` over `dtype` with `identity` (cast to dtype).
CommReducer make_reducer(const std::string& name, DataType dtype, const std::function<Expr(Expr, Expr)>& combine,
                         Expr identity);

inline constexpr std::string_view kReduceOp = "te.reduce";

/// A reduction (see the file comment). As a CallNode: op "te.reduce", args {source} or
/// {source, init}, the source's dtype.
struct ReduceNode : tir::CallNode {
  ReduceNode(CommReducer c, Expr src, std::vector<IterVar> ax, Expr in);
  const CommReducer combiner;
  const Expr source;
  const std::vector<IterVar> axis;
  const Expr init;  ///< the start value; undefined means the combiner's identity
};
/// The Reduce behind `e`, or nullptr.
const ReduceNode* as_reduce(const Expr& e);

/// A compute body rewritten by `m`: for a Reduce its source and init (the combiner and axes kept;
/// `body` itself when neither changes), otherwise the whole expression.
Expr mutate_body(const Expr& body, tir::IRMutator& m);

/// A reduction of `source` over `axis` with `combiner` (its lhs/rhs of the source's type).
/// UserError when: `axis` is empty, holds a non-reduction axis or one axis twice; the source is
/// not a scalar number; `init` has another type than the source.
Expr reduce(const CommReducer& combiner, Expr source, const std::vector<IterVar>& axis, Expr init = Expr());
/// source summed over axis (identity 0).
Expr sum(Expr source, const std::vector<IterVar>& axis, Expr init = Expr());
/// The largest value (identity: the type's lowest value).
Expr max(Expr source, const std::vector<IterVar>& axis, Expr init = Expr());
/// The smallest value (identity: the type's largest value).
Expr min(Expr source, const std::vector<IterVar>& axis, Expr init = Expr());

/// The operation whose output buffer is `b` (placeholders and computes made by this library, as
/// long as they are alive), or an undefined Operation.
Operation operation_of(const tir::Buffer& b);

/// Internal (used by schedule): a compute operation like `base` with another body and its own
/// inputs resolved from the loads in `body` (the output buffer, axes and reduce axes given).
Operation make_compute_op(const std::string& name, const std::map<std::string, std::string>& attrs,
                          tir::Buffer output, std::vector<IterVar> axis, std::vector<IterVar> reduce_axis,
                          Expr body, bool register_buffer);

}  // namespace tessel::te
