#include <cstring>

#include "compiler/driver/compile.h"
#include "compiler/frontend/onnx_import.h"
#include "compiler/passes/shape_inference.h"
#include "compiler/reference/interpreter.h"
#include "support/error.h"

namespace tessel::compiler {

struct ReferenceModel::Impl {
  ir::Graph graph;
};

ReferenceModel::ReferenceModel() : impl_(std::make_unique<Impl>()) {}
ReferenceModel::~ReferenceModel() = default;
ReferenceModel::ReferenceModel(ReferenceModel&&) noexcept = default;
ReferenceModel& ReferenceModel::operator=(ReferenceModel&&) noexcept = default;

ReferenceModel ReferenceModel::load(const std::string& onnx_path, int64_t batch) {
  ReferenceModel m;
  m.impl_->graph = frontend::import_onnx_file(onnx_path, batch);
  // Shape inference checks every attribute against the shapes and bounds every tensor, so a
  // reference run never allocates for (or computes with) a node the compiler would reject.
  passes::PassContext ctx;
  passes::shape_inference(m.impl_->graph, ctx);
  return m;
}

std::vector<std::string> ReferenceModel::input_names() const {
  std::vector<std::string> v;
  for (int i : impl_->graph.inputs) v.push_back(impl_->graph.values[i].name);
  return v;
}

std::vector<std::vector<int64_t>> ReferenceModel::input_shapes() const {
  std::vector<std::vector<int64_t>> v;
  for (int i : impl_->graph.inputs) v.push_back(impl_->graph.values[i].shape);
  return v;
}

std::vector<runtime::HostTensor> ReferenceModel::run(const std::vector<runtime::HostTensor>& inputs) const {
  const ir::Graph& g = impl_->graph;
  if (inputs.size() != g.inputs.size())
    throw_user_error("model '{}' has {} inputs, {} given", g.name, g.inputs.size(), inputs.size());
  std::vector<reference::RefTensor> ins;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const runtime::HostTensor& h = inputs[k];
    const ir::Value& v = g.values[g.inputs[k]];
    if (h.dtype != runtime::DType::kF32 || h.shape != v.shape)
      throw_user_error("input '{}' is {}{}, the model expects f32{}", v.name, runtime::to_string(h.dtype),
                       ir::shape_string(h.shape), ir::shape_string(v.shape));
    const int64_t n = ir::shape_elements(h.shape);
    if (static_cast<int64_t>(h.bytes.size()) != n * 4)
      throw_user_error("input '{}' has {} bytes, expected {}", v.name, h.bytes.size(), n * 4);
    reference::RefTensor t;
    t.shape = h.shape;
    t.f.resize(n);
    if (n > 0) std::memcpy(t.f.data(), h.bytes.data(), h.bytes.size());
    ins.push_back(std::move(t));
  }
  const auto outs = reference::run_graph(g, ins);
  std::vector<runtime::HostTensor> result;
  for (const auto& t : outs) {
    runtime::HostTensor h;
    h.dtype = runtime::DType::kF32;
    h.shape = t.shape;
    std::vector<float> f = t.f;
    if (t.dtype != ir::DType::kF32) f.assign(t.i.begin(), t.i.end());  // integer outputs as float values
    h.bytes.resize(f.size() * 4);
    if (!f.empty()) std::memcpy(h.bytes.data(), f.data(), h.bytes.size());
    result.push_back(std::move(h));
  }
  return result;
}

}  // namespace tessel::compiler
