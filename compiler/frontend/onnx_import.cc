#include "compiler/frontend/onnx_import.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "support/error.h"

namespace tessel::compiler::frontend {
namespace {

using ir::DType;
using nlohmann::json;

/// One supported operator: the attributes it may carry and a checker for their values.
struct OpSpec {
  std::set<std::string> attrs;
  std::function<void(const ir::Node&)> check;
};

void require_all_one(const ir::Node& n, const std::string& key) {
  const auto v = ir::attr_ints(n, key, {});
  for (int64_t x : v)
    if (x != 1) ir::throw_unsupported(n, fmt::format("{} [{}] not supported", key, fmt::join(v, ",")));
}

void require_value(const ir::Node& n, const std::string& key, int64_t want) {
  const int64_t v = ir::attr_int(n, key, want);
  if (v != want) ir::throw_unsupported(n, fmt::format("{} {} not supported (only {})", key, v, want));
}

void check_auto_pad(const ir::Node& n) {
  const std::string ap = ir::attr_string(n, "auto_pad", "NOTSET");
  if (ap != "NOTSET" && ap != "SAME_UPPER" && ap != "SAME_LOWER" && ap != "VALID")
    ir::throw_unsupported(n, fmt::format("auto_pad '{}' not supported", ap));
}

void check_2d_kernel(const ir::Node& n) {
  const auto k = ir::attr_ints(n, "kernel_shape", {});
  if (!k.empty() && k.size() != 2)
    ir::throw_unsupported(n, fmt::format("kernel_shape [{}] not supported (only 2-D)", fmt::join(k, ",")));
}

const std::map<std::string, OpSpec>& op_table() {
  static const std::map<std::string, OpSpec> table = [] {
    std::map<std::string, OpSpec> t;
    auto none = [](const ir::Node&) {};
    auto conv_check = [](const ir::Node& n) {
      require_all_one(n, "dilations");
      check_auto_pad(n);
      check_2d_kernel(n);
    };
    const std::set<std::string> conv_attrs = {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"};
    t["ai.onnx::Conv"] = {conv_attrs, conv_check};
    t["ai.onnx::QLinearConv"] = {conv_attrs, conv_check};
    t["ai.onnx::Gemm"] = {{"alpha", "beta", "transA", "transB"}, none};
    t["ai.onnx::MatMul"] = {{}, none};
    t["ai.onnx::QLinearMatMul"] = {{}, none};
    t["ai.onnx::Add"] = {{}, none};
    t["ai.onnx::Mul"] = {{}, none};
    t["ai.onnx::Relu"] = {{}, none};
    t["ai.onnx::Clip"] = {{"min", "max"}, none};
    t["ai.onnx::MaxPool"] = {{"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"},
                             [](const ir::Node& n) {
                               require_all_one(n, "dilations");
                               require_value(n, "storage_order", 0);
                               check_auto_pad(n);
                               check_2d_kernel(n);
                               if (n.outputs.size() > 1) ir::throw_unsupported(n, "the indices output is not supported");
                             }};
    t["ai.onnx::AveragePool"] = {{"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"},
                                 [](const ir::Node& n) {
                                   check_auto_pad(n);
                                   check_2d_kernel(n);
                                 }};
    t["ai.onnx::GlobalAveragePool"] = {{}, none};
    t["com.microsoft::QLinearGlobalAveragePool"] = {{"channels_last"}, [](const ir::Node& n) {
                                                      require_value(n, "channels_last", 0);
                                                    }};
    t["com.microsoft::QLinearAdd"] = {{}, none};
    t["ai.onnx::Reshape"] = {{"allowzero"}, [](const ir::Node& n) { require_value(n, "allowzero", 0); }};
    t["ai.onnx::Flatten"] = {{"axis"}, none};
    t["ai.onnx::Softmax"] = {{"axis"}, none};
    t["ai.onnx::Concat"] = {{"axis"}, none};
    t["ai.onnx::BatchNormalization"] = {{"epsilon", "momentum", "training_mode", "spatial"},
                                        [](const ir::Node& n) {
                                          require_value(n, "training_mode", 0);
                                          require_value(n, "spatial", 1);
                                          if (n.outputs.size() > 1)
                                            ir::throw_unsupported(n, "training outputs (mean, var) are not supported");
                                        }};
    t["ai.onnx::QuantizeLinear"] = {{"axis"}, none};
    t["ai.onnx::DequantizeLinear"] = {{"axis"}, none};
    t["ai.onnx::Identity"] = {{}, none};
    t["ai.onnx::Shape"] = {{"start", "end"}, none};
    t["ai.onnx::Gather"] = {{"axis"}, none};
    t["ai.onnx::Unsqueeze"] = {{"axes"}, none};
    t["ai.onnx::Squeeze"] = {{"axes"}, none};
    return t;
  }();
  return table;
}

DType convert_dtype(int32_t onnx_type, const std::string& what) {
  switch (onnx_type) {
    case onnx::TensorProto_DataType_FLOAT: return DType::kF32;
    case onnx::TensorProto_DataType_UINT8: return DType::kU8;
    case onnx::TensorProto_DataType_INT8: return DType::kI8;
    case onnx::TensorProto_DataType_INT32: return DType::kI32;
    case onnx::TensorProto_DataType_INT64: return DType::kI64;
    default:
      throw_user_error("{}: data type {} ({}) not supported (only FLOAT, UINT8, INT8, INT32, INT64)", what,
                       onnx::TensorProto_DataType_Name(onnx_type), onnx_type);
  }
}

/// Reads a TensorProto into a constant value (not yet added to a graph).
ir::Value read_tensor(const onnx::TensorProto& t, const std::string& what) {
  ir::Value v;
  v.name = t.name();
  v.dtype = convert_dtype(t.data_type(), what);
  for (int64_t d : t.dims()) {
    if (d < 0) throw_user_error("{}: negative dimension {}", what, d);
    v.shape.push_back(d);
  }
  v.shape_known = true;
  v.is_const = true;
  if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
    throw_user_error("{}: external tensor data is not supported", what);
  const int64_t n = ir::shape_elements(v.shape);
  const size_t eb = ir::dtype_bytes(v.dtype);
  v.data.resize(static_cast<size_t>(n) * eb);
  if (t.has_raw_data()) {
    if (t.raw_data().size() != v.data.size())
      throw_user_error("{}: raw_data has {} bytes, expected {} for shape {}", what, t.raw_data().size(),
                       v.data.size(), ir::shape_string(v.shape));
    if (!v.data.empty()) std::memcpy(v.data.data(), t.raw_data().data(), v.data.size());
    return v;
  }
  auto check_count = [&](int64_t got) {
    if (got != n)
      throw_user_error("{}: has {} elements, expected {} for shape {}", what, got, n, ir::shape_string(v.shape));
  };
  switch (v.dtype) {
    case DType::kF32: {
      check_count(t.float_data_size());
      std::memcpy(v.data.data(), t.float_data().data(), v.data.size());
      break;
    }
    case DType::kU8:
    case DType::kI8: {
      check_count(t.int32_data_size());
      for (int64_t i = 0; i < n; ++i) v.data[i] = static_cast<uint8_t>(t.int32_data(i));
      break;
    }
    case DType::kI32: {
      check_count(t.int32_data_size());
      std::memcpy(v.data.data(), t.int32_data().data(), v.data.size());
      break;
    }
    case DType::kI64: {
      check_count(t.int64_data_size());
      std::memcpy(v.data.data(), t.int64_data().data(), v.data.size());
      break;
    }
  }
  return v;
}

json convert_attr(const onnx::AttributeProto& a, const ir::Node& n) {
  switch (a.type()) {
    case onnx::AttributeProto_AttributeType_INT: return a.i();
    case onnx::AttributeProto_AttributeType_FLOAT: return a.f();
    case onnx::AttributeProto_AttributeType_STRING: return a.s();
    case onnx::AttributeProto_AttributeType_INTS: {
      json j = json::array();
      for (int64_t x : a.ints()) j.push_back(x);
      return j;
    }
    case onnx::AttributeProto_AttributeType_FLOATS: {
      json j = json::array();
      for (float x : a.floats()) j.push_back(x);
      return j;
    }
    default:
      ir::throw_unsupported(n, fmt::format("attribute '{}' of type {} not supported", a.name(),
                                           onnx::AttributeProto_AttributeType_Name(a.type())));
  }
}

std::string canonical_domain(const std::string& d) { return d.empty() ? "ai.onnx" : d; }

}  // namespace

std::vector<std::string> supported_operators() {
  std::vector<std::string> v;
  for (const auto& [k, spec] : op_table()) v.push_back(k);
  v.push_back("ai.onnx::Constant");
  std::sort(v.begin(), v.end());
  return v;
}

bool DeclaredInput::has_symbolic_dim() const {
  return std::find(dims.begin(), dims.end(), int64_t{0}) != dims.end();
}

ir::Graph import_onnx_bytes(const std::string& bytes, const std::string& what, int64_t batch,
                            std::vector<DeclaredInput>* declared) {
  if (declared) declared->clear();
  if (batch < 1) throw_user_error("batch {} is invalid (must be >= 1)", batch);
  onnx::ModelProto model;
  if (bytes.empty()) throw_user_error("'{}' is not a valid onnx model: the file is empty", what);
  if (!model.ParseFromString(bytes))
    throw_user_error("'{}' is not a valid onnx model: protobuf parsing failed ({} bytes; truncated or not "
                     "an onnx file)",
                     what, bytes.size());
  if (!model.has_graph() || model.graph().node_size() == 0)
    throw_user_error("'{}' is not a valid onnx model: it has no graph nodes", what);
  if (model.ir_version() <= 0)
    throw_user_error("'{}' is not a valid onnx model: ir_version {} is missing or invalid", what,
                     model.ir_version());

  ir::Graph g;
  const onnx::GraphProto& gp = model.graph();
  g.name = gp.name();
  g.opset = -1;
  for (const auto& os : model.opset_import())
    if (os.domain().empty() || os.domain() == "ai.onnx") g.opset = os.version();
  if (g.opset < 0) throw_user_error("'{}': the model does not import the ai.onnx opset", what);
  if (g.opset < 7 || g.opset > 18)
    throw_user_error("'{}': ai.onnx opset {} not supported (7..18)", what, g.opset);

  std::map<std::string, int> ids;
  auto define = [&](ir::Value v, const std::string& where) {
    if (v.name.empty()) throw_user_error("'{}': {} has an empty name", what, where);
    if (ids.count(v.name)) throw_user_error("'{}': value '{}' is defined twice ({})", what, v.name, where);
    const std::string name = v.name;
    const int id = g.add_value(std::move(v));
    ids[name] = id;
    return id;
  };

  for (const auto& init : gp.initializer())
    define(read_tensor(init, fmt::format("initializer '{}'", init.name())), "initializer");

  for (const auto& in : gp.input()) {
    if (ids.count(in.name())) continue;  // old-style models list initializers as inputs
    const std::string where = fmt::format("graph input '{}'", in.name());
    if (!in.type().has_tensor_type()) throw_user_error("'{}': {} is not a tensor", what, where);
    const auto& tt = in.type().tensor_type();
    if (tt.elem_type() != onnx::TensorProto_DataType_FLOAT)
      throw_user_error("'{}': {} has type {}; only float32 graph inputs are supported", what, where,
                       onnx::TensorProto_DataType_Name(tt.elem_type()));
    ir::Value v;
    v.name = in.name();
    v.dtype = DType::kF32;
    if (!tt.has_shape()) throw_user_error("'{}': {} has no shape", what, where);
    DeclaredInput decl;
    decl.name = in.name();
    for (const auto& d : tt.shape().dim()) {
      if (d.has_dim_value()) {
        if (d.dim_value() <= 0) throw_user_error("'{}': {} has dimension {}", what, where, d.dim_value());
        v.shape.push_back(d.dim_value());
        decl.dims.push_back(d.dim_value());
      } else {
        v.shape.push_back(batch);  // symbolic ("batch_size") or unknown dimension
        decl.dims.push_back(0);
      }
    }
    if (declared) declared->push_back(std::move(decl));
    v.shape_known = true;
    g.inputs.push_back(define(std::move(v), where));
  }
  if (g.inputs.empty()) throw_user_error("'{}': the graph has no (non-initializer) inputs", what);

  int counter = 0;
  for (const auto& np : gp.node()) {
    ir::Node n;
    n.op = np.op_type();
    n.domain = np.domain() == "ai.onnx" ? "" : np.domain();
    n.name = np.name().empty() ? fmt::format("{}_{}", np.op_type(), counter) : np.name();
    n.source_op = n.op;
    ++counter;
    for (const auto& a : np.attribute()) {
      if (n.attrs.contains(a.name())) ir::throw_unsupported(n, fmt::format("attribute '{}' given twice", a.name()));
      if (n.op == "Constant" && a.type() == onnx::AttributeProto_AttributeType_TENSOR) continue;
      n.attrs[a.name()] = convert_attr(a, n);
    }
    const std::string key = canonical_domain(np.domain()) + "::" + n.op;
    if (n.op == "Constant" && canonical_domain(np.domain()) == "ai.onnx") {
      // A Constant node defines a constant value directly.
      if (np.output_size() != 1) ir::throw_unsupported(n, "expected one output");
      ir::Value v;
      if (np.attribute_size() != 1) ir::throw_unsupported(n, "expected exactly one value attribute");
      const auto& a = np.attribute(0);
      if (a.name() == "value") {
        v = read_tensor(a.t(), ir::describe(n));
      } else if (a.name() == "value_float") {
        v.dtype = DType::kF32;
        v.data = ir::to_bytes(std::vector<float>{a.f()});
      } else if (a.name() == "value_floats") {
        v.dtype = DType::kF32;
        v.data = ir::to_bytes(std::vector<float>(a.floats().begin(), a.floats().end()));
        v.shape = {a.floats_size()};
      } else if (a.name() == "value_int") {
        v.dtype = DType::kI64;
        v.data = ir::to_bytes(std::vector<int64_t>{a.i()});
      } else if (a.name() == "value_ints") {
        v.dtype = DType::kI64;
        v.data = ir::to_bytes(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
        v.shape = {a.ints_size()};
      } else {
        ir::throw_unsupported(n, fmt::format("attribute '{}' not supported", a.name()));
      }
      v.name = np.output(0);
      v.shape_known = true;
      v.is_const = true;
      define(std::move(v), ir::describe(n));
      continue;
    }
    const auto it = op_table().find(key);
    if (it == op_table().end()) ir::throw_unsupported(n, fmt::format("operator {} not supported", key));
    for (const auto& [name, val] : n.attrs.items())
      if (!it->second.attrs.count(name)) ir::throw_unsupported(n, fmt::format("attribute '{}' not supported", name));
    for (const auto& in : np.input()) {
      if (in.empty()) {
        n.inputs.push_back(-1);
        continue;
      }
      const auto f = ids.find(in);
      if (f == ids.end())
        throw_user_error("{}: input '{}' is not defined before use (the graph is not topologically sorted or "
                         "refers to a missing value)",
                         ir::describe(n), in);
      n.inputs.push_back(f->second);
    }
    for (const auto& out : np.output()) {
      if (out.empty()) {
        ir::throw_unsupported(n, "empty output names are not supported");
      }
      ir::Value v;
      v.name = out;
      n.outputs.push_back(define(std::move(v), ir::describe(n)));
    }
    it->second.check(n);
    g.nodes.push_back(std::move(n));
  }

  for (const auto& out : gp.output()) {
    const auto f = ids.find(out.name());
    if (f == ids.end()) throw_user_error("'{}': graph output '{}' is not produced by any node", what, out.name());
    g.outputs.push_back(f->second);
  }
  if (g.outputs.empty()) throw_user_error("'{}': the graph has no outputs", what);
  g.topo_sort();
  return g;
}

ir::Graph import_onnx_file(const std::string& path, int64_t batch, std::vector<DeclaredInput>* declared) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw_io_error("cannot open onnx model '{}'", path);
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) throw_io_error("cannot read onnx model '{}'", path);
  ir::Graph g = import_onnx_bytes(ss.str(), path, batch, declared);
  // The model is named after its file ("mnist-12"), which is more telling than graph names.
  const std::string base = path.substr(path.find_last_of('/') + 1);
  g.name = base.size() > 5 && base.ends_with(".onnx") ? base.substr(0, base.size() - 5) : base;
  return g;
}

}  // namespace tessel::compiler::frontend
