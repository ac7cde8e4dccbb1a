// TIR expressions: typed, immutable nodes shared by reference, in the manner of Halide's IR.h and
// TVM's tir/expr.h. An `Expr` is a handle (a shared pointer to a const node); nodes never change
// after construction, so sub-trees are shared freely and a mutator rebuilds only the path it
// changes. Every constructor checks its operand types and throws tessel::InternalError on a
// mismatch (building ill-typed IR is a compiler bug, never a user error).
//
// Integer division comes in two flavours, as in TVM: `div`/`mod` truncate toward zero (C
// semantics) and `floordiv`/`floormod` round toward negative infinity (the remainder has the
// divisor's sign). Index arithmetic uses the floor forms; the simplifier proves them equal to the
// truncating ones where operands are non-negative.
//
// Also here: `Var` (a variable with identity: two Vars with the same name are different
// variables), `Range` (min, extent) and `Buffer` (a typed, shaped view of memory in a scope).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/tir/dtype.h"

namespace tessel::tir {

/// Every expression node kind. The order is the printer's and the visitors' dispatch order.
enum class ExprKind : uint8_t {
  kIntImm,
  kFloatImm,
  kStringImm,
  kVar,
  kAdd,
  kSub,
  kMul,
  kDiv,  ///< truncating integer division or float division
  kMod,  ///< truncating remainder (sign of the dividend)
  kFloorDiv,
  kFloorMod,
  kMin,
  kMax,
  kEQ,
  kNE,
  kLT,
  kLE,
  kGT,
  kGE,
  kAnd,
  kOr,
  kNot,
  kSelect,
  kCast,
  kBufferLoad,
  kRamp,
  kBroadcast,
  kLet,
  kCall,
};

/// The operator text of a binary kind ("+", "floordiv", "<", "&&", ...); "" for others.
std::string_view binary_op_name(ExprKind k);
/// True for kAdd..kOr (the two-operand kinds).
bool is_binary(ExprKind k);
/// True for kEQ..kGE.
bool is_comparison(ExprKind k);

/// Base of all expression nodes.
struct ExprNode {
  ExprNode(ExprKind k, DataType t) : kind(k), dtype(t) {}
  virtual ~ExprNode() = default;
  ExprNode(const ExprNode&) = delete;
  ExprNode& operator=(const ExprNode&) = delete;
  const ExprKind kind;
  const DataType dtype;
};

/// A handle to an immutable expression node; may be null (a default-constructed Expr).
class Expr {
 public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> n) : node_(std::move(n)) {}
  /// An int32 immediate (the type of loop bounds and indices).
  Expr(int value);  // NOLINT(google-explicit-constructor): `x + 1` reads as intended
  bool defined() const { return node_ != nullptr; }
  const ExprNode* get() const { return node_.get(); }
  const ExprNode* operator->() const { return node_.get(); }
  ExprKind kind() const { return node_->kind; }
  DataType dtype() const { return node_->dtype; }
  /// The node as `T` when its kind is T::kKind, else nullptr.
  template <typename T>
  const T* as() const {
    return node_ && node_->kind == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
  }
  /// True when both handles point at the same node (not structural equality).
  bool same_as(const Expr& o) const { return node_ == o.node_; }
  const std::shared_ptr<const ExprNode>& ptr() const { return node_; }

 private:
  std::shared_ptr<const ExprNode> node_;
};

// ---- leaves ----

struct IntImmNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kIntImm;
  IntImmNode(DataType t, int64_t v) : ExprNode(kKind, t), value(v) {}
  const int64_t value;
};
struct FloatImmNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kFloatImm;
  FloatImmNode(DataType t, double v) : ExprNode(kKind, t), value(v) {}
  const double value;
};
/// A string constant; appears only as an intrinsic call argument or an attribute value.
struct StringImmNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kStringImm;
  explicit StringImmNode(std::string v) : ExprNode(kKind, DataType::handle()), value(std::move(v)) {}
  const std::string value;
};
/// A variable. Identity is the node's address; `name` is only a hint for printing.
struct VarNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kVar;
  VarNode(std::string n, DataType t) : ExprNode(kKind, t), name(std::move(n)) {}
  const std::string name;
};

/// A handle to a VarNode (never null once constructed with a name).
class Var : public Expr {
 public:
  Var() = default;
  /// A new variable, distinct from every other, of type `t` (int32 by default).
  explicit Var(std::string name, DataType t = DataType::int32());
  /// Wraps an Expr known to be a Var; InternalError otherwise.
  static Var from(const Expr& e);
  const VarNode* get() const { return static_cast<const VarNode*>(Expr::get()); }
  const VarNode* operator->() const { return get(); }
  const std::string& name() const { return get()->name; }
};

/// Orders Vars by identity for use as map keys (std::map<Var, T, VarLess>).
struct VarLess {
  bool operator()(const Var& a, const Var& b) const { return a.get() < b.get(); }
};

// ---- operators ----

/// Two-operand node; `kKind` is one of kAdd..kOr. Comparisons and kAnd/kOr have bool type.
template <ExprKind K>
struct BinaryNode : ExprNode {
  static constexpr ExprKind kKind = K;
  BinaryNode(DataType t, Expr x, Expr y) : ExprNode(K, t), a(std::move(x)), b(std::move(y)) {}
  const Expr a, b;
};
using AddNode = BinaryNode<ExprKind::kAdd>;
using SubNode = BinaryNode<ExprKind::kSub>;
using MulNode = BinaryNode<ExprKind::kMul>;
using DivNode = BinaryNode<ExprKind::kDiv>;
using ModNode = BinaryNode<ExprKind::kMod>;
using FloorDivNode = BinaryNode<ExprKind::kFloorDiv>;
using FloorModNode = BinaryNode<ExprKind::kFloorMod>;
using MinNode = BinaryNode<ExprKind::kMin>;
using MaxNode = BinaryNode<ExprKind::kMax>;
using EQNode = BinaryNode<ExprKind::kEQ>;
using NENode = BinaryNode<ExprKind::kNE>;
using LTNode = BinaryNode<ExprKind::kLT>;
using LENode = BinaryNode<ExprKind::kLE>;
using GTNode = BinaryNode<ExprKind::kGT>;
using GENode = BinaryNode<ExprKind::kGE>;
using AndNode = BinaryNode<ExprKind::kAnd>;
using OrNode = BinaryNode<ExprKind::kOr>;

/// The operands of any binary node (nullptr pair for other kinds).
struct BinaryOperands {
  const Expr* a = nullptr;
  const Expr* b = nullptr;
};
BinaryOperands binary_operands(const Expr& e);

struct NotNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kNot;
  explicit NotNode(Expr x) : ExprNode(kKind, x.dtype()), a(std::move(x)) {}
  const Expr a;
};
/// cond ? t : f, evaluating both sides (no short circuit); cond is bool with t's lanes or scalar.
struct SelectNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kSelect;
  SelectNode(Expr c, Expr t, Expr f)
      : ExprNode(kKind, t.dtype()), cond(std::move(c)), true_value(std::move(t)), false_value(std::move(f)) {}
  const Expr cond, true_value, false_value;
};
/// Conversion to `dtype` (same lane count): integer narrowing wraps (two's complement), float to
/// integer truncates toward zero.
struct CastNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kCast;
  CastNode(DataType t, Expr v) : ExprNode(kKind, t), value(std::move(v)) {}
  const Expr value;
};
/// base, base + stride, ..., base + (lanes-1)*stride: a vector index.
struct RampNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kRamp;
  RampNode(Expr b, Expr s, int l)
      : ExprNode(kKind, b.dtype().with_lanes(l)), base(std::move(b)), stride(std::move(s)), lanes(l) {}
  const Expr base, stride;
  const int lanes;
};
/// `lanes` copies of a scalar.
struct BroadcastNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kBroadcast;
  BroadcastNode(Expr v, int l) : ExprNode(kKind, v.dtype().with_lanes(l)), value(std::move(v)), lanes(l) {}
  const Expr value;
  const int lanes;
};
/// let var = value in body.
struct LetNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kLet;
  LetNode(Var v, Expr val, Expr b) : ExprNode(kKind, b.dtype()), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
  const Var var;
  const Expr value, body;
};
/// A call of a named intrinsic (see intrinsics.h for the ones the passes know). Pure unless the
/// intrinsic says otherwise.
struct CallNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kCall;
  CallNode(DataType t, std::string o, std::vector<Expr> a) : ExprNode(kKind, t), op(std::move(o)), args(std::move(a)) {}
  const std::string op;
  const std::vector<Expr> args;
};

// ---- ranges and buffers ----

/// The half-open interval [min, min + extent).
struct Range {
  Expr min;
  Expr extent;
  /// [min, min + extent) with int32 constants.
  static Range from_min_extent(Expr min, Expr extent);
};

/// Where a buffer lives. The accelerator scopes are its on-chip SRAMs (docs/isa.md): input,
/// weight and accumulator scratchpads and the micro-op cache.
enum class MemScope : uint8_t { kGlobal, kInp, kWgt, kAcc, kUop, kLocal, kShared };
/// "global", "local.inp_buffer", "local.wgt_buffer", "local.acc_buffer", "local.uop_buffer",
/// "local", "shared" (VTA's scope names for the scratchpads).
std::string_view to_string(MemScope s);
/// Inverse of to_string; UserError naming the text for anything else.
MemScope parse_mem_scope(std::string_view text);

/// A typed, shaped view of memory: element (i0, ..., ik) lives at
/// data[elem_offset + sum(i_j * stride_j)], strides in elements. Empty `strides` means compact
/// row-major (the last dimension varies fastest).
struct BufferNode {
  Var data;                   ///< handle variable naming the memory
  DataType dtype;             ///< element type (scalar)
  std::vector<Expr> shape;    ///< extents, outermost first
  std::vector<Expr> strides;  ///< elements per step of each dimension, or empty
  Expr elem_offset;           ///< in elements; int32 0 by default
  std::string name;
  MemScope scope = MemScope::kGlobal;
};

/// A handle to a BufferNode. Buffers compare by identity.
class Buffer {
 public:
  Buffer() = default;
  /// A new buffer with its own data variable named `name`.
  Buffer(std::string name, DataType dtype, std::vector<Expr> shape, MemScope scope = MemScope::kGlobal,
         std::vector<Expr> strides = {}, Expr elem_offset = Expr());
  /// A new buffer over an existing data variable.
  static Buffer over(Var data, std::string name, DataType dtype, std::vector<Expr> shape,
                     MemScope scope = MemScope::kGlobal, std::vector<Expr> strides = {},
                     Expr elem_offset = Expr());
  bool defined() const { return node_ != nullptr; }
  const BufferNode* get() const { return node_.get(); }
  const BufferNode* operator->() const { return node_.get(); }
  bool same_as(const Buffer& o) const { return node_ == o.node_; }
  /// Number of dimensions.
  size_t ndim() const { return node_->shape.size(); }
  /// The strides to use for indexing: `strides` or, when empty, the compact row-major ones.
  std::vector<Expr> effective_strides() const;
  /// The flat element offset of `indices` (elem_offset + sum(i_j * stride_j)).
  Expr flat_index(const std::vector<Expr>& indices) const;
  /// Elements covered by the shape (product of extents).
  Expr num_elements() const;

 private:
  std::shared_ptr<const BufferNode> node_;
};

/// Orders Buffers by identity.
struct BufferLess {
  bool operator()(const Buffer& a, const Buffer& b) const { return a.get() < b.get(); }
};

/// buffer[indices]; lanes > 1 when an index is a vector (a Ramp).
struct BufferLoadNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kBufferLoad;
  BufferLoadNode(DataType t, Buffer b, std::vector<Expr> i) : ExprNode(kKind, t), buffer(std::move(b)), indices(std::move(i)) {}
  const Buffer buffer;
  const std::vector<Expr> indices;
};

// ---- constructors (type-checked; InternalError on a mismatch) ----

Expr make_const(DataType t, int64_t value);  ///< IntImm (integers, bool) or FloatImm (floats)
Expr make_float(DataType t, double value);
Expr int_imm(int64_t value, DataType t = DataType::int32());
Expr bool_imm(bool value);
Expr string_imm(std::string value);
/// Binary node of kind `k` (kAdd..kOr). Operands must have the same type; comparisons return
/// bool with the operands' lanes; kAnd/kOr need bool operands.
Expr make_binary(ExprKind k, Expr a, Expr b);
Expr add(Expr a, Expr b);
Expr sub(Expr a, Expr b);
Expr mul(Expr a, Expr b);
Expr div(Expr a, Expr b);  ///< truncating for integers
Expr mod(Expr a, Expr b);  ///< truncating remainder
Expr floordiv(Expr a, Expr b);
Expr floormod(Expr a, Expr b);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr eq(Expr a, Expr b);
Expr ne(Expr a, Expr b);
Expr lt(Expr a, Expr b);
Expr le(Expr a, Expr b);
Expr gt(Expr a, Expr b);
Expr ge(Expr a, Expr b);
Expr logical_and(Expr a, Expr b);
Expr logical_or(Expr a, Expr b);
Expr logical_not(Expr a);
Expr select(Expr cond, Expr t, Expr f);
/// Cast to `t`; returns `v` itself when it already has type `t`.
Expr cast(DataType t, Expr v);
Expr ramp(Expr base, Expr stride, int lanes);
Expr broadcast(Expr value, int lanes);
Expr let(Var var, Expr value, Expr body);
Expr call(DataType t, std::string op, std::vector<Expr> args);
/// buffer[indices]: one index per dimension (or one flat index after storage_flatten).
Expr buffer_load(Buffer buffer, std::vector<Expr> indices);

/// Operator sugar for building index arithmetic (same checks as the named constructors).
Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator-(Expr a);
/// Truncating division and remainder (C semantics), as div() and mod(). There is no operator==:
/// use eq() (== on handles would read as identity).
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);

/// The value of an integer or bool immediate, or nullptr.
const int64_t* as_const_int(const Expr& e);
/// True when `e` is an integer immediate equal to `v`.
bool is_const_int(const Expr& e, int64_t v);

}  // namespace tessel::tir
