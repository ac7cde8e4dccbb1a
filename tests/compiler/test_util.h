// Helpers of the compiler tests: paths of staged models and data, raw float files, a tiny ONNX
// model builder (protobuf) for import tests, and an IR graph builder for pass tests.
#pragma once

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"
#include "runtime/graph_executor.h"

namespace tessel::compiler::testing {

/// `${TESSEL_SOURCE_DIR}/<root>/<rel>` if it exists, else `${TESSEL_SOURCE_DIR}/../shared/<root>/<rel>`.
inline std::string staged_path(const std::string& root, const std::string& rel) {
  const std::filesystem::path a = std::filesystem::path(TESSEL_SOURCE_DIR) / root / rel;
  if (std::filesystem::exists(a)) return a.string();
  return (std::filesystem::path(TESSEL_SOURCE_DIR) / ".." / "shared" / root / rel).string();
}
inline std::string model_path(const std::string& rel) { return staged_path("models", rel); }
inline std::string data_path(const std::string& rel) { return staged_path("data", rel); }

/// Reads a raw little-endian float32 file.
inline std::vector<float> read_f32(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<float> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), v.size() * 4);
  return v;
}

inline runtime::HostTensor host_f32(std::vector<int64_t> shape, const std::vector<float>& v) {
  runtime::HostTensor h;
  h.dtype = runtime::DType::kF32;
  h.shape = std::move(shape);
  h.bytes.resize(v.size() * 4);
  std::memcpy(h.bytes.data(), v.data(), h.bytes.size());
  return h;
}

inline std::vector<float> floats(const runtime::HostTensor& h) {
  std::vector<float> v(h.bytes.size() / 4);
  std::memcpy(v.data(), h.bytes.data(), v.size() * 4);
  return v;
}

inline size_t argmax(const std::vector<float>& v) {
  return static_cast<size_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

// ---- ONNX builder ----

inline onnx::TensorProto f32_tensor(const std::string& name, std::vector<int64_t> dims, const std::vector<float>& v) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto_DataType_FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  for (float x : v) t.add_float_data(x);
  return t;
}

inline onnx::TensorProto i64_tensor(const std::string& name, std::vector<int64_t> dims, const std::vector<int64_t>& v) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto_DataType_INT64);
  for (int64_t d : dims) t.add_dims(d);
  for (int64_t x : v) t.add_int64_data(x);
  return t;
}

/// A model with one float input `x` of `shape` and one output `y`; add nodes/initializers.
struct OnnxBuilder {
  onnx::ModelProto model;
  explicit OnnxBuilder(std::vector<int64_t> shape, int64_t opset = 13, const std::string& in_name = "x",
                       const std::string& dim_param = "") {
    model.set_ir_version(7);
    auto* op = model.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    auto* g = model.mutable_graph();
    g->set_name("test");
    auto* in = g->add_input();
    in->set_name(in_name);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    for (size_t k = 0; k < shape.size(); ++k) {
      auto* d = tt->mutable_shape()->add_dim();
      if (k == 0 && !dim_param.empty()) d->set_dim_param(dim_param);
      else d->set_dim_value(shape[k]);
    }
  }
  onnx::NodeProto* node(const std::string& op, const std::string& name, std::vector<std::string> ins,
                        std::vector<std::string> outs) {
    auto* n = model.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& i : ins) n->add_input(i);
    for (auto& o : outs) n->add_output(o);
    return n;
  }
  static void ints(onnx::NodeProto* n, const std::string& key, std::vector<int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto_AttributeType_INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void integer(onnx::NodeProto* n, const std::string& key, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto_AttributeType_INT);
    a->set_i(v);
  }
  void init(const onnx::TensorProto& t) { *model.mutable_graph()->add_initializer() = t; }
  void output(const std::string& name) { model.mutable_graph()->add_output()->set_name(name); }
  std::string bytes() const { return model.SerializeAsString(); }
  /// Writes the model to a file under the test's temporary directory; returns its path.
  std::string save(const std::string& file) const {
    const auto p = std::filesystem::temp_directory_path() / ("tessel_compiler_test_" + file);
    std::ofstream f(p, std::ios::binary);
    f << bytes();
    return p.string();
  }
};

// ---- IR builder ----

/// Adds a float activation value of `shape`.
inline int act(ir::Graph& g, const std::string& name, std::vector<int64_t> shape, ir::DType d = ir::DType::kF32) {
  ir::Value v;
  v.name = name;
  v.dtype = d;
  v.shape = std::move(shape);
  v.shape_known = true;
  return g.add_value(std::move(v));
}

/// Adds a node; returns its index.
inline size_t add_node(ir::Graph& g, const std::string& op, const std::string& name, std::vector<int> ins,
                       std::vector<int> outs, nlohmann::json attrs = nlohmann::json::object(),
                       const std::string& domain = "") {
  ir::Node n;
  n.op = op;
  n.name = name;
  n.domain = domain;
  n.source_op = op;
  n.inputs = std::move(ins);
  n.outputs = std::move(outs);
  n.attrs = std::move(attrs);
  g.nodes.push_back(std::move(n));
  return g.nodes.size() - 1;
}

/// Index of the first node with `op`, or -1.
inline int find_op(const ir::Graph& g, const std::string& op) {
  for (size_t k = 0; k < g.nodes.size(); ++k)
    if (g.nodes[k].op == op) return static_cast<int>(k);
  return -1;
}
inline int count_op(const ir::Graph& g, const std::string& op) {
  int c = 0;
  for (const auto& n : g.nodes) c += n.op == op;
  return c;
}

}  // namespace tessel::compiler::testing
