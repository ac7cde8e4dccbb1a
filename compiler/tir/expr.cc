#include "compiler/tir/expr.h"

#include <cmath>

#include "support/error.h"

namespace tessel::tir {

std::string_view binary_op_name(ExprKind k) {
  switch (k) {
    case ExprKind::kAdd: return "+";
    case ExprKind::kSub: return "-";
    case ExprKind::kMul: return "*";
    case ExprKind::kDiv: return "/";
    case ExprKind::kMod: return "%";
    case ExprKind::kFloorDiv: return "floordiv";
    case ExprKind::kFloorMod: return "floormod";
    case ExprKind::kMin: return "min";
    case ExprKind::kMax: return "max";
    case ExprKind::kEQ: return "==";
    case ExprKind::kNE: return "!=";
    case ExprKind::kLT: return "<";
    case ExprKind::kLE: return "<=";
    case ExprKind::kGT: return ">";
    case ExprKind::kGE: return ">=";
    case ExprKind::kAnd: return "&&";
    case ExprKind::kOr: return "||";
    default: return "";
  }
}

bool is_binary(ExprKind k) { return k >= ExprKind::kAdd && k <= ExprKind::kOr; }
bool is_comparison(ExprKind k) { return k >= ExprKind::kEQ && k <= ExprKind::kGE; }

Expr::Expr(int value) : node_(std::make_shared<IntImmNode>(DataType::int32(), value)) {}

Var::Var(std::string name, DataType t) : Expr(std::make_shared<VarNode>(std::move(name), t)) {}

Var Var::from(const Expr& e) {
  TESSEL_CHECK(e.as<VarNode>() != nullptr, "expression is not a variable");
  Var v;
  static_cast<Expr&>(v) = e;
  return v;
}

BinaryOperands binary_operands(const Expr& e) {
  if (!e.defined()) return {};
  switch (e.kind()) {
#define TESSEL_OPERANDS(K)                                                \
  case ExprKind::K: {                                                     \
    const auto* n = static_cast<const BinaryNode<ExprKind::K>*>(e.get()); \
    return {&n->a, &n->b};                                                \
  }
    TESSEL_OPERANDS(kAdd)
    TESSEL_OPERANDS(kSub)
    TESSEL_OPERANDS(kMul)
    TESSEL_OPERANDS(kDiv)
    TESSEL_OPERANDS(kMod)
    TESSEL_OPERANDS(kFloorDiv)
    TESSEL_OPERANDS(kFloorMod)
    TESSEL_OPERANDS(kMin)
    TESSEL_OPERANDS(kMax)
    TESSEL_OPERANDS(kEQ)
    TESSEL_OPERANDS(kNE)
    TESSEL_OPERANDS(kLT)
    TESSEL_OPERANDS(kLE)
    TESSEL_OPERANDS(kGT)
    TESSEL_OPERANDS(kGE)
    TESSEL_OPERANDS(kAnd)
    TESSEL_OPERANDS(kOr)
#undef TESSEL_OPERANDS
    default: return {};
  }
}

Range Range::from_min_extent(Expr min, Expr extent) { return Range{std::move(min), std::move(extent)}; }

std::string_view to_string(MemScope s) {
  switch (s) {
    case MemScope::kGlobal: return "global";
    case MemScope::kInp: return "local.inp_buffer";
    case MemScope::kWgt: return "local.wgt_buffer";
    case MemScope::kAcc: return "local.acc_buffer";
    case MemScope::kUop: return "local.uop_buffer";
    case MemScope::kLocal: return "local";
    case MemScope::kShared: return "shared";
  }
  return "?";
}

MemScope parse_mem_scope(std::string_view text) {
  for (MemScope s : {MemScope::kGlobal, MemScope::kInp, MemScope::kWgt, MemScope::kAcc, MemScope::kUop,
                     MemScope::kLocal, MemScope::kShared}) {
    if (to_string(s) == text) return s;
  }
  throw_user_error("unknown memory scope '{}'", text);
}

// ---- buffers ----

Buffer::Buffer(std::string name, DataType dtype, std::vector<Expr> shape, MemScope scope,
               std::vector<Expr> strides, Expr elem_offset) {
  *this = over(Var(name, DataType::handle()), name, dtype, std::move(shape), scope, std::move(strides),
               std::move(elem_offset));
}

Buffer Buffer::over(Var data, std::string name, DataType dtype, std::vector<Expr> shape, MemScope scope,
                    std::vector<Expr> strides, Expr elem_offset) {
  TESSEL_CHECK(data.defined() && data.dtype().is_handle(), "buffer {} needs a handle data variable", name);
  TESSEL_CHECK(dtype.is_scalar() && !dtype.is_handle(), "buffer {} element type {}", name, dtype.str());
  TESSEL_CHECK(strides.empty() || strides.size() == shape.size(), "buffer {}: {} strides for {} dimensions",
               name, strides.size(), shape.size());
  for (const Expr& e : shape) TESSEL_CHECK(e.defined() && e.dtype().is_integer() && e.dtype().is_scalar(), "buffer {} shape", name);
  for (const Expr& e : strides) TESSEL_CHECK(e.defined() && e.dtype().is_integer() && e.dtype().is_scalar(), "buffer {} strides", name);
  auto n = std::make_shared<BufferNode>();
  n->data = std::move(data);
  n->dtype = dtype;
  n->shape = std::move(shape);
  n->strides = std::move(strides);
  n->elem_offset = elem_offset.defined() ? std::move(elem_offset) : Expr(0);
  n->name = std::move(name);
  n->scope = scope;
  Buffer b;
  b.node_ = std::move(n);
  return b;
}

std::vector<Expr> Buffer::effective_strides() const {
  if (!node_->strides.empty()) return node_->strides;
  std::vector<Expr> s(node_->shape.size());
  Expr acc = 1;
  for (size_t i = node_->shape.size(); i-- > 0;) {
    s[i] = acc;
    acc = is_const_int(acc, 1) ? node_->shape[i] : mul(acc, node_->shape[i]);
  }
  return s;
}

Expr Buffer::flat_index(const std::vector<Expr>& indices) const {
  TESSEL_CHECK(indices.size() == ndim(), "buffer {}: {} indices for {} dimensions", node_->name,
               indices.size(), ndim());
  std::vector<Expr> strides = effective_strides();
  Expr idx = node_->elem_offset;
  for (size_t i = 0; i < indices.size(); ++i) {
    Expr term = is_const_int(strides[i], 1) ? indices[i] : mul(indices[i], strides[i]);
    idx = is_const_int(idx, 0) ? term : add(idx, term);
  }
  return idx;
}

Expr Buffer::num_elements() const {
  Expr n = 1;
  for (const Expr& e : node_->shape) n = is_const_int(n, 1) ? e : mul(n, e);
  return n;
}

// ---- constructors ----

Expr make_const(DataType t, int64_t value) {
  if (t.is_float()) return make_float(t, static_cast<double>(value));
  TESSEL_CHECK(t.is_integer() || t.is_bool(), "integer constant of type {}", t.str());
  if (t.is_vector()) return broadcast(make_const(t.element_of(), value), t.lanes);
  TESSEL_CHECK(value >= t.min_value() && value <= t.max_value(), "constant {} does not fit {}", value, t.str());
  return Expr(std::make_shared<IntImmNode>(t, value));
}

Expr make_float(DataType t, double value) {
  TESSEL_CHECK(t.is_float(), "float constant of type {}", t.str());
  if (t.is_vector()) return broadcast(make_float(t.element_of(), value), t.lanes);
  return Expr(std::make_shared<FloatImmNode>(t, value));
}

Expr int_imm(int64_t value, DataType t) { return make_const(t, value); }
Expr bool_imm(bool value) { return make_const(DataType::bool_(), value ? 1 : 0); }
Expr string_imm(std::string value) { return Expr(std::make_shared<StringImmNode>(std::move(value))); }

namespace {

// Matches operand types the way a reader of `x + 1` expects: an integer immediate takes the
// other side's integer type when its value fits, and a scalar is broadcast to a vector's lanes.
void match_types(Expr& a, Expr& b) {
  TESSEL_CHECK(a.defined() && b.defined(), "operand of a binary expression is undefined");
  auto adapt = [](Expr& imm, const Expr& other) {
    const auto* i = imm.as<IntImmNode>();
    DataType t = other.dtype().element_of();
    if (i && imm.dtype() != t && (t.is_integer()) && i->value >= t.min_value() && i->value <= t.max_value()) {
      imm = make_const(t, i->value);
    } else if (const auto* f = imm.as<FloatImmNode>(); f && t.is_float() && imm.dtype() != t) {
      imm = make_float(t, f->value);
    } else if (i && t.is_float()) {
      imm = make_float(t, static_cast<double>(i->value));
    }
  };
  if (a.dtype().element_of() != b.dtype().element_of()) {
    if (a.as<IntImmNode>() || a.as<FloatImmNode>()) adapt(a, b);
    else if (b.as<IntImmNode>() || b.as<FloatImmNode>()) adapt(b, a);
  }
  if (a.dtype().is_scalar() && b.dtype().is_vector()) a = broadcast(a, b.dtype().lanes);
  if (b.dtype().is_scalar() && a.dtype().is_vector()) b = broadcast(b, a.dtype().lanes);
}

template <ExprKind K>
Expr make_bin(DataType t, Expr a, Expr b) {
  return Expr(std::make_shared<BinaryNode<K>>(t, std::move(a), std::move(b)));
}

}  // namespace

Expr make_binary(ExprKind k, Expr a, Expr b) {
  TESSEL_CHECK(a.defined() && b.defined(), "operand of '{}' is undefined", binary_op_name(k));
  TESSEL_CHECK(a.dtype() == b.dtype(), "operands of '{}' have types {} and {}", binary_op_name(k),
               a.dtype().str(), b.dtype().str());
  DataType t = a.dtype();
  TESSEL_CHECK(!t.is_handle(), "'{}' on handles", binary_op_name(k));
  if (k == ExprKind::kAnd || k == ExprKind::kOr) {
    TESSEL_CHECK(t.is_bool(), "operands of '{}' must be bool, not {}", binary_op_name(k), t.str());
  }
  if (k == ExprKind::kMod || k == ExprKind::kFloorDiv || k == ExprKind::kFloorMod) {
    TESSEL_CHECK(t.is_integer(), "'{}' on {}", binary_op_name(k), t.str());
  }
  DataType rt = is_comparison(k) ? DataType::bool_(t.lanes) : t;
  switch (k) {
    case ExprKind::kAdd: return make_bin<ExprKind::kAdd>(rt, a, b);
    case ExprKind::kSub: return make_bin<ExprKind::kSub>(rt, a, b);
    case ExprKind::kMul: return make_bin<ExprKind::kMul>(rt, a, b);
    case ExprKind::kDiv: return make_bin<ExprKind::kDiv>(rt, a, b);
    case ExprKind::kMod: return make_bin<ExprKind::kMod>(rt, a, b);
    case ExprKind::kFloorDiv: return make_bin<ExprKind::kFloorDiv>(rt, a, b);
    case ExprKind::kFloorMod: return make_bin<ExprKind::kFloorMod>(rt, a, b);
    case ExprKind::kMin: return make_bin<ExprKind::kMin>(rt, a, b);
    case ExprKind::kMax: return make_bin<ExprKind::kMax>(rt, a, b);
    case ExprKind::kEQ: return make_bin<ExprKind::kEQ>(rt, a, b);
    case ExprKind::kNE: return make_bin<ExprKind::kNE>(rt, a, b);
    case ExprKind::kLT: return make_bin<ExprKind::kLT>(rt, a, b);
    case ExprKind::kLE: return make_bin<ExprKind::kLE>(rt, a, b);
    case ExprKind::kGT: return make_bin<ExprKind::kGT>(rt, a, b);
    case ExprKind::kGE: return make_bin<ExprKind::kGE>(rt, a, b);
    case ExprKind::kAnd: return make_bin<ExprKind::kAnd>(rt, a, b);
    case ExprKind::kOr: return make_bin<ExprKind::kOr>(rt, a, b);
    default: break;
  }
  throw_internal_error("make_binary: kind {} is not binary", static_cast<int>(k));
}

#define TESSEL_TIR_BIN(fn, K)                \
  Expr fn(Expr a, Expr b) {                  \
    match_types(a, b);                       \
    return make_binary(K, std::move(a), std::move(b)); \
  }
TESSEL_TIR_BIN(add, ExprKind::kAdd)
TESSEL_TIR_BIN(sub, ExprKind::kSub)
TESSEL_TIR_BIN(mul, ExprKind::kMul)
TESSEL_TIR_BIN(div, ExprKind::kDiv)
TESSEL_TIR_BIN(mod, ExprKind::kMod)
TESSEL_TIR_BIN(floordiv, ExprKind::kFloorDiv)
TESSEL_TIR_BIN(floormod, ExprKind::kFloorMod)
TESSEL_TIR_BIN(min, ExprKind::kMin)
TESSEL_TIR_BIN(max, ExprKind::kMax)
TESSEL_TIR_BIN(eq, ExprKind::kEQ)
TESSEL_TIR_BIN(ne, ExprKind::kNE)
TESSEL_TIR_BIN(lt, ExprKind::kLT)
TESSEL_TIR_BIN(le, ExprKind::kLE)
TESSEL_TIR_BIN(gt, ExprKind::kGT)
TESSEL_TIR_BIN(ge, ExprKind::kGE)
TESSEL_TIR_BIN(logical_and, ExprKind::kAnd)
TESSEL_TIR_BIN(logical_or, ExprKind::kOr)
#undef TESSEL_TIR_BIN

Expr logical_not(Expr a) {
  TESSEL_CHECK(a.defined() && a.dtype().is_bool(), "operand of '!' must be bool");
  return Expr(std::make_shared<NotNode>(std::move(a)));
}

Expr select(Expr cond, Expr t, Expr f) {
  TESSEL_CHECK(cond.defined() && t.defined() && f.defined(), "select operand undefined");
  match_types(t, f);
  TESSEL_CHECK(t.dtype() == f.dtype(), "select branches have types {} and {}", t.dtype().str(), f.dtype().str());
  TESSEL_CHECK(cond.dtype().is_bool(), "select condition has type {}", cond.dtype().str());
  if (cond.dtype().is_scalar() && t.dtype().is_vector()) cond = broadcast(cond, t.dtype().lanes);
  TESSEL_CHECK(cond.dtype().lanes == t.dtype().lanes, "select condition lanes {} for {}", cond.dtype().lanes,
               t.dtype().str());
  return Expr(std::make_shared<SelectNode>(std::move(cond), std::move(t), std::move(f)));
}

Expr cast(DataType t, Expr v) {
  TESSEL_CHECK(v.defined(), "cast of undefined expression");
  if (v.dtype() == t) return v;
  if (t.is_vector() && v.dtype().is_scalar()) v = broadcast(v, t.lanes);
  TESSEL_CHECK(t.lanes == v.dtype().lanes, "cast of {} to {}", v.dtype().str(), t.str());
  TESSEL_CHECK(!t.is_handle() && !v.dtype().is_handle(), "cast between {} and {}", v.dtype().str(), t.str());
  return Expr(std::make_shared<CastNode>(t, std::move(v)));
}

Expr ramp(Expr base, Expr stride, int lanes) {
  TESSEL_CHECK(base.defined() && stride.defined(), "ramp operand undefined");
  match_types(base, stride);
  TESSEL_CHECK(base.dtype().is_scalar() && base.dtype().is_integer() && base.dtype() == stride.dtype(),
               "ramp of {} by {}", base.dtype().str(), stride.dtype().str());
  TESSEL_CHECK(lanes > 1, "ramp with {} lanes", lanes);
  return Expr(std::make_shared<RampNode>(std::move(base), std::move(stride), lanes));
}

Expr broadcast(Expr value, int lanes) {
  TESSEL_CHECK(value.defined() && value.dtype().is_scalar(), "broadcast of a non-scalar");
  TESSEL_CHECK(lanes > 1, "broadcast to {} lanes", lanes);
  return Expr(std::make_shared<BroadcastNode>(std::move(value), lanes));
}

Expr let(Var var, Expr value, Expr body) {
  TESSEL_CHECK(var.defined() && value.defined() && body.defined(), "let operand undefined");
  TESSEL_CHECK(var.dtype() == value.dtype(), "let {}: variable {} bound to {}", var.name(), var.dtype().str(),
               value.dtype().str());
  return Expr(std::make_shared<LetNode>(std::move(var), std::move(value), std::move(body)));
}

Expr call(DataType t, std::string op, std::vector<Expr> args) {
  for (const Expr& a : args) TESSEL_CHECK(a.defined(), "argument of {} undefined", op);
  return Expr(std::make_shared<CallNode>(t, std::move(op), std::move(args)));
}

Expr buffer_load(Buffer buffer, std::vector<Expr> indices) {
  TESSEL_CHECK(buffer.defined(), "load from an undefined buffer");
  int lanes = 1;
  for (const Expr& i : indices) {
    TESSEL_CHECK(i.defined() && i.dtype().is_integer(), "index of buffer {} has type {}", buffer->name,
                 i.defined() ? i.dtype().str() : "undefined");
    if (i.dtype().lanes > 1) {
      TESSEL_CHECK(lanes == 1 || lanes == i.dtype().lanes, "buffer {}: indices with {} and {} lanes", buffer->name,
                   lanes, i.dtype().lanes);
      lanes = i.dtype().lanes;
    }
  }
  DataType t = buffer->dtype.with_lanes(lanes);
  return Expr(std::make_shared<BufferLoadNode>(t, std::move(buffer), std::move(indices)));
}

Expr operator+(Expr a, Expr b) { return add(std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return sub(std::move(a), std::move(b)); }
Expr operator*(Expr a, Expr b) { return mul(std::move(a), std::move(b)); }
Expr operator-(Expr a) {
  DataType t = a.dtype();
  return sub(t.is_float() ? make_float(t, 0.0) : make_const(t, 0), std::move(a));
}
Expr operator/(Expr a, Expr b) { return div(std::move(a), std::move(b)); }
Expr operator%(Expr a, Expr b) { return mod(std::move(a), std::move(b)); }
Expr operator<(Expr a, Expr b) { return lt(std::move(a), std::move(b)); }
Expr operator<=(Expr a, Expr b) { return le(std::move(a), std::move(b)); }
Expr operator>(Expr a, Expr b) { return gt(std::move(a), std::move(b)); }
Expr operator>=(Expr a, Expr b) { return ge(std::move(a), std::move(b)); }
Expr operator&&(Expr a, Expr b) { return logical_and(std::move(a), std::move(b)); }
Expr operator||(Expr a, Expr b) { return logical_or(std::move(a), std::move(b)); }
Expr operator!(Expr a) { return logical_not(std::move(a)); }

const int64_t* as_const_int(const Expr& e) {
  const auto* n = e.as<IntImmNode>();
  return n ? &n->value : nullptr;
}

bool is_const_int(const Expr& e, int64_t v) {
  const int64_t* p = as_const_int(e);
  return p && *p == v;
}

}  // namespace tessel::tir
