// Operations. The buffer->operation registry lets compute() find the tensors a body reads: a body
// is a TIR expression whose tensor reads are BufferLoads (tensor.h), and the registry maps each
// operation's output buffer back to the operation. Entries are weak and removed when the
// operation dies, so the registry never keeps an operation alive.
#include "compiler/te/operation.h"

#include <limits>
#include <mutex>
#include <set>
#include <unordered_map>

#include "compiler/tir/functor.h"
#include "compiler/tir/printer.h"
#include "compiler/tir/util.h"
#include "support/error.h"

namespace tessel::te {
namespace {

struct Registry {
  std::mutex mu;
  std::unordered_map<const tir::BufferNode*, std::pair<const OperationNode*, std::weak_ptr<const OperationNode>>> ops;
};
Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: operations may outlive static destruction order
  return *r;
}

void register_op(const std::shared_ptr<OperationNode>& n) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto [it, fresh] = r.ops.try_emplace(n->output.get(), n.get(), n);
  if (!fresh) {
    if (!it->second.second.expired()) return;
    it->second = {n.get(), n};
  }
  n->registered = true;
}

std::vector<Expr> check_shape(const std::vector<Expr>& shape, const std::string& what, const std::string& name) {
  std::vector<Expr> out;
  for (size_t d = 0; d < shape.size(); ++d) {
    const Expr& e = shape[d];
    const int64_t* c = e.defined() ? tir::as_const_int(e) : nullptr;
    if (!c || !e.dtype().is_integer() || *c <= 0 || *c > std::numeric_limits<int32_t>::max()) {
      throw_user_error("{} {}: extent {} of dimension {} is not a positive int32 constant", what, name,
                       e.defined() ? tir::to_text(e) : std::string("undefined"), d);
    }
    out.push_back(tir::int_imm(*c));
  }
  return out;
}

std::string axis_name(size_t d, size_t ndim) {
  static const char* kNames[] = {"i", "j", "k"};
  if (ndim <= 3) return kNames[d];
  return "i" + std::to_string(d);
}

/// Finds Reduce nodes below the top of a body and the variables and buffers it uses.
class BodyScan : public tir::IRVisitor {
 public:
  std::vector<const tir::VarNode*> vars;
  std::vector<tir::Buffer> buffers;
  int reduces = 0;

 protected:
  void visit(const tir::VarNode* op) override {
    for (const auto* v : vars) if (v == op) return;
    vars.push_back(op);
  }
  void visit(const tir::BufferLoadNode* op) override {
    bool seen = false;
    for (const auto& b : buffers) seen = seen || b.same_as(op->buffer);
    if (!seen) buffers.push_back(op->buffer);
    tir::IRVisitor::visit(op);
  }
  void visit(const tir::LetNode* op) override {
    visit_expr(op->value);
    size_t before = vars.size();
    visit_expr(op->body);
    // the let variable is bound here, not free
    for (size_t i = before; i < vars.size(); ++i) {
      if (vars[i] == op->var.get()) { vars.erase(vars.begin() + static_cast<long>(i)); break; }
    }
  }
  void visit(const tir::CallNode* op) override {
    if (op->op == kReduceOp) ++reduces;
    tir::IRVisitor::visit(op);
  }
};

}  // namespace

OperationNode::~OperationNode() {
  if (!registered) return;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.ops.find(output.get());
  if (it != r.ops.end() && it->second.first == this) r.ops.erase(it);
}

Operation operation_of(const tir::Buffer& b) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.ops.find(b.get());
  if (it == r.ops.end()) return Operation();
  return Operation(it->second.second.lock());
}

Tensor placeholder(const std::vector<Expr>& shape, DataType dtype, const std::string& name) {
  if (!dtype.is_scalar() || dtype.is_handle()) {
    throw_user_error("placeholder {}: element type {} is not a scalar number", name, dtype.str());
  }
  auto n = std::make_shared<OperationNode>();
  n->kind = OpKind::kPlaceholder;
  n->name = name;
  n->output = tir::Buffer(name, dtype, check_shape(shape, "placeholder", name));
  register_op(n);
  return Tensor(Operation(n), 0);
}

Operation make_compute_op(const std::string& name, const std::map<std::string, std::string>& attrs,
                          tir::Buffer output, std::vector<IterVar> axis, std::vector<IterVar> reduce_axis,
                          Expr body, bool register_buffer) {
  auto n = std::make_shared<OperationNode>();
  n->kind = OpKind::kCompute;
  n->name = name;
  n->attrs = attrs;
  n->output = std::move(output);
  n->axis = std::move(axis);
  n->reduce_axis = std::move(reduce_axis);
  n->body = std::move(body);
  BodyScan scan;
  scan.visit_expr(n->body);
  for (const tir::Buffer& b : scan.buffers) {
    Operation src = operation_of(b);
    if (!src.defined()) {
      throw_user_error("compute {}: the body reads buffer {}, which is not a tensor's", name, b->name);
    }
    n->inputs.push_back(src.output(0));
  }
  if (register_buffer) register_op(n);
  return Operation(n);
}

namespace {

Tensor compute_impl(const std::vector<Expr>& shape, const DataType* dtype, const FCompute& fcompute,
                    const std::string& name, std::map<std::string, std::string> attrs) {
  std::vector<Expr> ext = check_shape(shape, "compute", name);
  std::vector<IterVar> axis;
  std::vector<Var> vars;
  for (size_t d = 0; d < ext.size(); ++d) {
    Var v(axis_name(d, ext.size()));
    vars.push_back(v);
    axis.emplace_back(Range::from_min_extent(0, ext[d]), v, IterVarKind::kDataPar);
  }
  Expr body = fcompute(vars);
  if (!body.defined()) throw_user_error("compute {}: fcompute returned an undefined expression", name);
  DataType t = body.dtype();
  if (!t.is_scalar() || t.is_handle()) {
    throw_user_error("compute {}: the body has type {}; a tensor element must be a scalar number", name, t.str());
  }
  if (dtype && *dtype != t) {
    throw_user_error("compute {}: the body has type {}, declared {}", name, t.str(), dtype->str());
  }
  std::vector<IterVar> raxis;
  BodyScan scan;
  const ReduceNode* red = as_reduce(body);
  if (red) {
    raxis = red->axis;
    scan.visit_expr(red->source);
    if (red->init.defined()) scan.visit_expr(red->init);
  } else {
    scan.visit_expr(body);
  }
  if (scan.reduces > 0) {
    throw_user_error("compute {}: a reduction must be the whole body, found one nested inside {}", name,
                     tir::to_text(body));
  }
  for (const tir::VarNode* v : scan.vars) {
    bool ok = false;
    for (const Var& a : vars) ok = ok || a.get() == v;
    for (const IterVar& r : raxis) ok = ok || r.var().get() == v;
    if (!ok) {
      throw_user_error("compute {}: the body uses variable {}, which is neither an axis nor a reduction axis of it",
                       name, v->name);
    }
  }
  tir::Buffer out(name, t, ext);
  Operation op = make_compute_op(name, attrs, out, std::move(axis), std::move(raxis), body, true);
  return op.output(0);
}

}  // namespace

Tensor compute(const std::vector<Expr>& shape, const FCompute& fcompute, const std::string& name,
               std::map<std::string, std::string> attrs) {
  return compute_impl(shape, nullptr, fcompute, name, std::move(attrs));
}

Tensor compute(const std::vector<Expr>& shape, DataType dtype, const FCompute& fcompute, const std::string& name,
               std::map<std::string, std::string> attrs) {
  return compute_impl(shape, &dtype, fcompute, name, std::move(attrs));
}

IterVar reduce_axis(const Range& dom, const std::string& name) {
  const int64_t* mn = dom.min.defined() ? tir::as_const_int(dom.min) : nullptr;
  const int64_t* ex = dom.extent.defined() ? tir::as_const_int(dom.extent) : nullptr;
  if (!mn || !ex || *ex <= 0 || !dom.min.dtype().is_integer() || !dom.extent.dtype().is_integer() ||
      *ex > std::numeric_limits<int32_t>::max() || *mn < std::numeric_limits<int32_t>::min() ||
      *mn > std::numeric_limits<int32_t>::max() - *ex) {
    throw_user_error("reduce axis {}: the range must have int32 constant min and positive extent, got min {} extent {}",
                     name, dom.min.defined() ? tir::to_text(dom.min) : std::string("undefined"),
                     dom.extent.defined() ? tir::to_text(dom.extent) : std::string("undefined"));
  }
  return IterVar(Range::from_min_extent(tir::int_imm(*mn), tir::int_imm(*ex)), Var(name), IterVarKind::kReduce);
}

IterVar reduce_axis(int64_t extent, const std::string& name) {
  return reduce_axis(Range::from_min_extent(0, tir::int_imm(extent)), name);
}

CommReducer make_reducer(const std::string& name, DataType dtype, const std::function<Expr(Expr, Expr)>& combine,
                         Expr identity) {
  CommReducer r;
  r.name = name;
  r.lhs = Var("x", dtype);
  r.rhs = Var("y", dtype);
  r.result = combine(r.lhs, r.rhs);
  if (!r.result.defined() || r.result.dtype() != dtype) {
    throw_user_error("reducer {}: the combination has type {}, expected {}", name,
                     r.result.defined() ? r.result.dtype().str() : std::string("undefined"), dtype.str());
  }
  r.identity = tir::cast(dtype, std::move(identity));
  return r;
}

ReduceNode::ReduceNode(CommReducer c, Expr src, std::vector<IterVar> ax, Expr in)
    : tir::CallNode(src.dtype(), std::string(kReduceOp),
                    in.defined() ? std::vector<Expr>{src, in} : std::vector<Expr>{src}),
      combiner(std::move(c)), source(std::move(src)), axis(std::move(ax)), init(std::move(in)) {}

const ReduceNode* as_reduce(const Expr& e) {
  const auto* c = e.as<tir::CallNode>();
  if (!c || c->op != kReduceOp) return nullptr;
  return dynamic_cast<const ReduceNode*>(c);
}

Expr mutate_body(const Expr& body, tir::IRMutator& m) {
  if (const ReduceNode* r = as_reduce(body)) {
    Expr src = m.mutate_expr(r->source);
    Expr init = r->init.defined() ? m.mutate_expr(r->init) : Expr();
    if (src.same_as(r->source) && init.same_as(r->init)) return body;
    return reduce(r->combiner, src, r->axis, init);
  }
  return m.mutate_expr(body);
}

Expr reduce(const CommReducer& combiner, Expr source, const std::vector<IterVar>& axis, Expr init) {
  const std::string& name = combiner.name;
  if (!source.defined()) throw_user_error("reduction {}: undefined source", name);
  DataType t = source.dtype();
  if (!t.is_scalar() || t.is_handle()) {
    throw_user_error("reduction {}: the source has type {}; it must be a scalar number", name, t.str());
  }
  if (combiner.lhs.dtype() != t) {
    throw_user_error("reduction {}: the combiner is over {}, the source has type {}", name, combiner.lhs.dtype().str(),
                     t.str());
  }
  if (axis.empty()) throw_user_error("reduction {}: no reduction axis", name);
  for (size_t i = 0; i < axis.size(); ++i) {
    if (!axis[i].defined() || axis[i].kind() != IterVarKind::kReduce) {
      throw_user_error("reduction {}: axis {} is not a reduction axis (kind {})", name,
                       axis[i].defined() ? axis[i].name() : std::string("undefined"),
                       axis[i].defined() ? to_string(axis[i].kind()) : "none");
    }
    for (size_t j = 0; j < i; ++j) {
      if (axis[j].same_as(axis[i])) throw_user_error("reduction {}: axis {} appears twice", name, axis[i].name());
    }
  }
  if (init.defined() && init.dtype() != t) {
    throw_user_error("reduction {}: init has type {}, the source {}", name, init.dtype().str(), t.str());
  }
  return Expr(std::make_shared<ReduceNode>(combiner, std::move(source), axis, std::move(init)));
}

namespace {
Expr lowest(DataType t) {
  if (t.is_float()) return tir::make_float(t, static_cast<double>(std::numeric_limits<float>::lowest()));
  return tir::make_const(t, t.min_value());
}
Expr highest(DataType t) {
  if (t.is_float()) return tir::make_float(t, static_cast<double>(std::numeric_limits<float>::max()));
  return tir::make_const(t, t.max_value());
}
DataType type_of(const Expr& e) {
  if (!e.defined()) throw_user_error("reduction: undefined source");
  if (!e.dtype().is_scalar() || e.dtype().is_handle()) {
    throw_user_error("reduction: the source has type {}; it must be a scalar number", e.dtype().str());
  }
  return e.dtype();
}
}  // namespace

Expr sum(Expr source, const std::vector<IterVar>& axis, Expr init) {
  DataType t = type_of(source);
  Expr zero = t.is_float() ? tir::make_float(t, 0.0) : tir::make_const(t.element_of(), 0);
  return reduce(make_reducer("sum", t, [](Expr a, Expr b) { return tir::add(a, b); }, zero), std::move(source), axis,
                std::move(init));
}

Expr max(Expr source, const std::vector<IterVar>& axis, Expr init) {
  DataType t = type_of(source);
  return reduce(make_reducer("max", t, [](Expr a, Expr b) { return tir::max(a, b); }, lowest(t)), std::move(source),
                axis, std::move(init));
}

Expr min(Expr source, const std::vector<IterVar>& axis, Expr init) {
  DataType t = type_of(source);
  return reduce(make_reducer("min", t, [](Expr a, Expr b) { return tir::min(a, b); }, highest(t)), std::move(source),
                axis, std::move(init));
}

}  // namespace tessel::te
