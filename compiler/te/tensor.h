// Tessel's tensor expression language (te), in the manner of TVM's te and Halide's Func: a tensor
// is declared once by what it computes (a placeholder for an input, or `compute` over an index
// space), a schedule (schedule.h) says how, and lowering (lower.h) turns both into a TIR PrimFunc.
//
// Representation of a tensor access. Every operation owns one tir::Buffer for its output (global
// scope, the tensor's shape, dtype and name, or the cache scope for a cache stage). `T(i, j)` is a
// tir BufferLoad of that buffer, so compute bodies are ordinary TIR expressions that the tir
// printer, visitor, mutator and arith understand. Within a schedule a tensor is identified by
// its buffer: lowering rewrites each load to the buffer the tensor is realised in (a function
// parameter, a full-size allocation or a region-sized one at a compute_at point).
//
// Here: IterVar (an iteration axis: a variable, its range and its kind), Operation (a handle to
// an immutable OperationNode, defined in operation.h) and Tensor (an operation's output).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/tir/expr.h"

namespace tessel::te {

using tir::DataType;
using tir::Expr;
using tir::Range;
using tir::Var;

/// What an iteration axis is: a data-parallel axis of a compute, a reduction axis, a GPU thread
/// index or a virtual thread (thread_axis in schedule.h; VTA's latency-hiding contexts), or an
/// axis consumed by tensorize. Schedules keep the kinds of split/fuse results as their parents'
/// and record loop annotations (bind, tensorize, ...) per leaf in IterVarAttr instead.
enum class IterVarKind : uint8_t { kDataPar, kReduce, kThreadIndex, kVirtualThread };
/// "data_par", "reduce", "thread_index", "virtual_thread". (A tensorized axis is marked by its IterVarAttr::tensor_intrin.)
std::string_view to_string(IterVarKind k);

struct IterVarNode {
  Var var;                 ///< the axis' variable (int32)
  Range dom;               ///< [min, min + extent); undefined for axes made by split/fuse
  IterVarKind kind = IterVarKind::kDataPar;
  std::string thread_tag;  ///< for kThreadIndex/kVirtualThread: "threadIdx.x", "vthread", ...
};

/// A handle to an immutable IterVarNode; IterVars compare by identity.
class IterVar {
 public:
  IterVar() = default;
  /// A new axis over `dom` (which may be undefined) with variable `var`.
  IterVar(Range dom, Var var, IterVarKind kind, std::string thread_tag = "");
  bool defined() const { return node_ != nullptr; }
  const IterVarNode* get() const { return node_.get(); }
  const IterVarNode* operator->() const { return node_.get(); }
  bool same_as(const IterVar& o) const { return node_ == o.node_; }
  const Var& var() const { return node_->var; }
  const std::string& name() const { return node_->var.name(); }
  IterVarKind kind() const { return node_->kind; }
  const Range& dom() const { return node_->dom; }

 private:
  std::shared_ptr<const IterVarNode> node_;
};

/// Orders IterVars by identity (map keys).
struct IterVarLess {
  bool operator()(const IterVar& a, const IterVar& b) const { return a.get() < b.get(); }
};

struct OperationNode;
class Tensor;

/// A handle to an immutable OperationNode (operation.h): a placeholder or a compute.
class Operation {
 public:
  Operation() = default;
  explicit Operation(std::shared_ptr<const OperationNode> n) : node_(std::move(n)) {}
  bool defined() const { return node_ != nullptr; }
  const OperationNode* get() const { return node_.get(); }
  const OperationNode* operator->() const { return node_.get(); }
  bool same_as(const Operation& o) const { return node_ == o.node_; }
  const std::shared_ptr<const OperationNode>& ptr() const { return node_; }
  /// The operation's name (also its output tensor's and buffer's name).
  const std::string& name() const;
  /// Output `i` (every operation has exactly one output: i must be 0; InternalError otherwise).
  Tensor output(int i) const;

 private:
  std::shared_ptr<const OperationNode> node_;
};

/// Orders Operations by identity.
struct OperationLess {
  bool operator()(const Operation& a, const Operation& b) const { return a.get() < b.get(); }
};

/// Output `value_index` of an operation. Every operation has one output, so value_index is 0;
/// it is kept so that the handle reads as TVM's (op, output index) pair.
class Tensor {
 public:
  Tensor() = default;
  Tensor(Operation op, int value_index);
  bool defined() const { return op_.defined(); }
  const Operation& op() const { return op_; }
  int value_index() const { return value_index_; }
  /// The same operation and output.
  bool same_as(const Tensor& o) const { return op_.same_as(o.op_) && value_index_ == o.value_index_; }
  /// The buffer the tensor's elements are named by in compute bodies (see the file comment).
  const tir::Buffer& buffer() const;
  const std::vector<Expr>& shape() const;
  /// Number of dimensions.
  size_t ndim() const;
  DataType dtype() const;
  const std::string& name() const;
  /// The element at `indices`: a BufferLoad of buffer(). UserError naming the tensor when the
  /// number of indices differs from ndim() or an index is not a scalar integer.
  Expr operator()(const std::vector<Expr>& indices) const;
  /// Variadic form: each index an Expr, an int or an IterVar (its variable).
  template <typename... I>
  Expr operator()(const I&... indices) const {
    return (*this)(std::vector<Expr>{index_of(indices)...});
  }

 private:
  static Expr index_of(const Expr& e) { return e; }
  static Expr index_of(int v) { return Expr(v); }
  static Expr index_of(const IterVar& iv) { return iv.var(); }

 public:

 private:
  Operation op_;
  int value_index_ = 0;
};

}  // namespace tessel::te
