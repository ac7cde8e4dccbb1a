#include "compiler/te/tensor.h"

#include "compiler/te/operation.h"
#include "support/error.h"

namespace tessel::te {

std::string_view to_string(IterVarKind k) {
  switch (k) {
    case IterVarKind::kDataPar: return "data_par";
    case IterVarKind::kReduce: return "reduce";
    case IterVarKind::kThreadIndex: return "thread_index";
    case IterVarKind::kVirtualThread: return "virtual_thread";
  }
  return "?";
}

IterVar::IterVar(Range dom, Var var, IterVarKind kind, std::string thread_tag) {
  TESSEL_CHECK(var.defined(), "iter var without a variable");
  auto n = std::make_shared<IterVarNode>();
  n->var = std::move(var);
  n->dom = std::move(dom);
  n->kind = kind;
  n->thread_tag = std::move(thread_tag);
  node_ = std::move(n);
}

const std::string& Operation::name() const { return node_->name; }

Tensor Operation::output(int i) const {
  TESSEL_CHECK(i == 0, "operation {} has one output, asked for output {}", node_->name, i);
  return Tensor(*this, 0);
}

Tensor::Tensor(Operation op, int value_index) : op_(std::move(op)), value_index_(value_index) {
  TESSEL_CHECK(op_.defined() && value_index_ == 0, "tensor of an undefined operation or output {}", value_index_);
}

const tir::Buffer& Tensor::buffer() const { return op_->output; }
const std::vector<Expr>& Tensor::shape() const { return op_->output->shape; }
size_t Tensor::ndim() const { return op_->output->shape.size(); }
DataType Tensor::dtype() const { return op_->output->dtype; }
const std::string& Tensor::name() const { return op_->name; }

Expr Tensor::operator()(const std::vector<Expr>& indices) const {
  if (indices.size() != ndim()) {
    throw_user_error("tensor {} has {} dimensions, indexed with {} indices", name(), ndim(), indices.size());
  }
  for (size_t d = 0; d < indices.size(); ++d) {
    const Expr& e = indices[d];
    if (!e.defined() || !e.dtype().is_integer() || !e.dtype().is_scalar()) {
      throw_user_error("tensor {}: index {} is {}, not a scalar integer", name(), d,
                       e.defined() ? e.dtype().str() : std::string("undefined"));
    }
  }
  return tir::buffer_load(buffer(), indices);
}

}  // namespace tessel::te
