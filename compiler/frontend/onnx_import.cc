#include "compiler/frontend/onnx_import.h"

#include <fmt/format.h>
#include <onnx/defs/schema.h>
#include <google/protobuf/io/coded_stream.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "compiler/ir/op_util.h"
#include "runtime/executable.h"
#include "support/checked.h"
#include "support/error.h"
#include "support/file_read.h"
#include "support/text.h"

namespace tessel::compiler::frontend {
namespace {

using ir::DType;
using nlohmann::json;
using support::quote;

// ---------------------------------------------------------------- what ONNX defines

/// One formal input or output of an operator: its name and whether it may be omitted (an empty
/// name, or left off at the end). The last one of a list may be variadic (1 or more).
struct FormalParam {
  FormalParam() = default;
  /// A parameter with no type information (com.microsoft's table).
  FormalParam(std::string n, bool opt, bool var) : name(std::move(n)), optional(opt), variadic(var) {}
  std::string name;
  bool optional = false;
  bool variadic = false;
  /// The schema's type string: a type parameter ("T") or one type ("tensor(int64)"); "" when
  /// the definition gives none (com.microsoft's table).
  std::string type_str;
  /// The types the schema allows here ("tensor(float)", ...), sorted; empty = not checked.
  std::vector<std::string> types;
};

/// An operator's definition at one opset: attributes with their types and whether they are
/// required, and the formal inputs and outputs with their arity bounds. From ONNX's own schema
/// registry for ai.onnx, from kMicrosoftOps for com.microsoft.
struct OpDef {
  std::string what;  ///< "Clip at opset 13" for messages
  std::map<std::string, std::pair<onnx::AttributeProto_AttributeType, bool>> attrs;  ///< name -> (type, required)
  std::vector<FormalParam> inputs, outputs;
  int min_inputs = 0, max_inputs = 0, min_outputs = 0, max_outputs = 0;
};

/// The last ai.onnx opset of the ONNX release whose schemas are linked (17 for ONNX 1.12). Tessel
/// accepts opset 18 too: none of the operators it supports changed in opset 18 (the changes were
/// Reduce*, Split, Pad, Resize, ScatterND, the bitwise operators, CenterCropPad, Col2Im, LpPool,
/// OptionalHasElement/GetElement, GroupNormalization), so a model at opset 18 is checked against
/// the definitions current at the last known opset, which are the opset-18 ones.
int last_schema_opset() {
  static const int v = [] {
    const auto& m = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    const auto it = m.find(onnx::ONNX_DOMAIN);
    return it == m.end() ? 17 : it->second.second;
  }();
  return v;
}

std::vector<FormalParam> formal(const std::vector<onnx::OpSchema::FormalParameter>& ps) {
  std::vector<FormalParam> v;
  for (const auto& p : ps) {
    FormalParam f(p.GetName(), p.GetOption() == onnx::OpSchema::Optional, p.GetOption() == onnx::OpSchema::Variadic);
    f.type_str = p.GetTypeStr();
    for (const onnx::DataType t : p.GetTypes()) f.types.push_back(*t);
    std::sort(f.types.begin(), f.types.end());
    v.push_back(std::move(f));
  }
  return v;
}

/// com.microsoft operators have no schema in libonnx; these are ONNX Runtime's contrib
/// definitions (domain version 1) of the two Tessel supports.
const std::map<std::string, OpDef>& microsoft_ops() {
  static const std::map<std::string, OpDef> t = [] {
    std::map<std::string, OpDef> m;
    OpDef add;
    add.what = "com.microsoft QLinearAdd (version 1)";
    add.inputs = {{"A", false, false},       {"A_scale", false, false}, {"A_zero_point", true, false},
                  {"B", false, false},       {"B_scale", false, false}, {"B_zero_point", true, false},
                  {"C_scale", false, false}, {"C_zero_point", true, false}};
    add.outputs = {{"C", false, false}};
    add.min_inputs = 7;
    add.max_inputs = 8;
    add.min_outputs = add.max_outputs = 1;
    m["QLinearAdd"] = add;
    OpDef gap;
    gap.what = "com.microsoft QLinearGlobalAveragePool (version 1)";
    gap.attrs = {{"channels_last", {onnx::AttributeProto_AttributeType_INT, false}}};
    gap.inputs = {{"X", false, false},
                  {"x_scale", false, false},
                  {"x_zero_point", false, false},
                  {"y_scale", false, false},
                  {"y_zero_point", false, false}};
    gap.outputs = {{"Y", false, false}};
    gap.min_inputs = gap.max_inputs = 5;
    gap.min_outputs = gap.max_outputs = 1;
    m["QLinearGlobalAveragePool"] = gap;
    return m;
  }();
  return t;
}

/// The definition of `op` in `domain` ("ai.onnx" or "com.microsoft") at `opset`; throws naming
/// the node when the operator is not defined there.
OpDef op_def(const ir::Node& n, const std::string& domain, int64_t opset) {
  if (domain == "com.microsoft") {
    const auto it = microsoft_ops().find(n.op);
    if (it == microsoft_ops().end()) ir::throw_unsupported(n, fmt::format("operator {}::{} not supported", domain, n.op));
    return it->second;
  }
  const int at = static_cast<int>(std::min<int64_t>(opset, last_schema_opset()));
  const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(n.op, at, onnx::ONNX_DOMAIN);
  if (s == nullptr) {
    const onnx::OpSchema* first = onnx::OpSchemaRegistry::Schema(n.op, 1 << 30, onnx::ONNX_DOMAIN);
    ir::throw_unsupported(n, first ? fmt::format("operator ai.onnx::{} is not defined at opset {} (the model's opset)",
                                                 n.op, opset)
                                   : fmt::format("operator ai.onnx::{} not supported", n.op));
  }
  if (s->Deprecated())
    ir::throw_unsupported(n, fmt::format("operator ai.onnx::{} is deprecated at opset {}", n.op, opset));
  OpDef d;
  d.what = fmt::format("{} at opset {}", n.op, opset);
  for (const auto& [name, a] : s->attributes()) d.attrs[name] = {a.type, a.required};
  d.inputs = formal(s->inputs());
  d.outputs = formal(s->outputs());
  d.min_inputs = s->min_input();
  d.max_inputs = s->max_input();
  d.min_outputs = s->min_output();
  d.max_outputs = s->max_output();
  return d;
}

std::string attr_type_name(onnx::AttributeProto_AttributeType t) { return onnx::AttributeProto_AttributeType_Name(t); }

/// Checks the node's attributes, inputs and outputs against what the operator defines at the
/// model's opset: every attribute known and of its type, required attributes present, input and
/// output counts within bounds, and empty (omitted) inputs / outputs only where optional.
void check_against_definition(const ir::Node& n, const onnx::NodeProto& np, const OpDef& d) {
  std::set<std::string> seen;
  for (const auto& a : np.attribute()) {
    if (!seen.insert(a.name()).second) ir::throw_unsupported(n, fmt::format("attribute {} given twice", quote(a.name())));
    if (!a.ref_attr_name().empty())
      ir::throw_unsupported(n, fmt::format("attribute {} refers to a function attribute ({}); not supported",
                                           quote(a.name()), quote(a.ref_attr_name())));
    const auto it = d.attrs.find(a.name());
    if (it == d.attrs.end()) {
      std::string hint;
      for (const FormalParam& p : d.inputs)
        if (p.name == a.name()) hint = fmt::format(" (at this opset {} is an input)", quote(a.name()));
      ir::throw_unsupported(n, fmt::format("attribute {} is not defined by {}{}", quote(a.name()), d.what, hint));
    }
    if (a.type() != it->second.first)
      ir::throw_unsupported(n, fmt::format("attribute {} has type {}; {} defines it as {}", quote(a.name()),
                                           attr_type_name(a.type()), d.what, attr_type_name(it->second.first)));
  }
  for (const auto& [name, def] : d.attrs)
    if (def.second && !seen.count(name))
      ir::throw_unsupported(n, fmt::format("attribute {} is required by {}", quote(name), d.what));

  auto check_params = [&](const char* kind, const google::protobuf::RepeatedPtrField<std::string>& names,
                          const std::vector<FormalParam>& formals, int lo, int hi) {
    const int count = names.size();
    const std::string kinds = count == 1 ? kind : std::string(kind) + "s";
    if (count > hi) ir::throw_unsupported(n, fmt::format("has {} {}; {} takes at most {}", count, kinds, d.what, hi));
    if (count < lo) ir::throw_unsupported(n, fmt::format("has {} {}; {} needs at least {}", count, kinds, d.what, lo));
    for (int i = 0; i < count; ++i) {
      if (!names.Get(i).empty() || formals.empty()) continue;
      const FormalParam& p = formals[std::min<size_t>(static_cast<size_t>(i), formals.size() - 1)];
      if (!p.optional)
        ir::throw_unsupported(n, fmt::format("{} {} ({}) has an empty name, but {} requires it", kind, i, quote(p.name),
                                             d.what));
    }
  };
  check_params("input", np.input(), d.inputs, d.min_inputs, d.max_inputs);
  check_params("output", np.output(), d.outputs, d.min_outputs, d.max_outputs);
}

/// The type rules of an operator's formal inputs (ir::Node::input_types), from its definition.
std::vector<ir::InputTypeRule> input_type_rules(const OpDef& d) {
  std::vector<ir::InputTypeRule> rules;
  for (const FormalParam& p : d.inputs) {
    ir::InputTypeRule r;
    r.name = p.name;
    r.allowed = p.types;
    if (!p.type_str.empty() && p.type_str.rfind("tensor(", 0) != 0) r.param = p.type_str;
    rules.push_back(std::move(r));
  }
  return rules;
}

// ---------------------------------------------------------------- what Tessel implements

/// One supported operator: the attributes Tessel implements (every other attribute the operator
/// defines is an error) and a checker of Tessel's restrictions on their values. Every supported
/// operator computes one output (output 0); a requested second output is an error.
struct OpSpec {
  std::set<std::string> attrs;
  std::function<void(const ir::Node&)> check;
  std::string extra_outputs;  ///< message for a requested output beyond the first
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
    ir::throw_unsupported(n, fmt::format("auto_pad {} not supported", quote(ap)));
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
    t["ai.onnx::Conv"] = {conv_attrs, conv_check, ""};
    t["ai.onnx::QLinearConv"] = {conv_attrs, conv_check, ""};
    t["ai.onnx::Gemm"] = {{"alpha", "beta", "transA", "transB"}, none, ""};
    t["ai.onnx::MatMul"] = {{}, none, ""};
    t["ai.onnx::QLinearMatMul"] = {{}, none, ""};
    t["ai.onnx::Add"] = {{}, none, ""};
    t["ai.onnx::Mul"] = {{}, none, ""};
    t["ai.onnx::Relu"] = {{}, none, ""};
    t["ai.onnx::Clip"] = {{"min", "max"}, none, ""};
    t["ai.onnx::MaxPool"] = {{"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"},
                             [](const ir::Node& n) {
                               require_all_one(n, "dilations");
                               require_value(n, "storage_order", 0);
                               check_auto_pad(n);
                               check_2d_kernel(n);
                             },
                             "the indices output is not supported"};
    t["ai.onnx::AveragePool"] = {{"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"},
                                 [](const ir::Node& n) {
                                   check_auto_pad(n);
                                   check_2d_kernel(n);
                                 },
                                 ""};
    t["ai.onnx::GlobalAveragePool"] = {{}, none, ""};
    t["com.microsoft::QLinearGlobalAveragePool"] = {
        {"channels_last"}, [](const ir::Node& n) { require_value(n, "channels_last", 0); }, ""};
    t["com.microsoft::QLinearAdd"] = {{}, none, ""};
    t["ai.onnx::Reshape"] = {{"allowzero"}, none, ""};
    t["ai.onnx::Flatten"] = {{"axis"}, none, ""};
    t["ai.onnx::Softmax"] = {{"axis"}, none, ""};
    t["ai.onnx::Concat"] = {{"axis"}, none, ""};
    // momentum only affects training (the running statistics); inference does not read it.
    t["ai.onnx::BatchNormalization"] = {{"epsilon", "momentum", "training_mode", "spatial"},
                                        [](const ir::Node& n) {
                                          require_value(n, "training_mode", 0);
                                          require_value(n, "spatial", 1);
                                        },
                                        "training outputs (mean, var) are not supported"};
    t["ai.onnx::QuantizeLinear"] = {{"axis"}, none, ""};
    t["ai.onnx::DequantizeLinear"] = {{"axis"}, none, ""};
    t["ai.onnx::Identity"] = {{}, none, ""};
    t["ai.onnx::Shape"] = {{"start", "end"}, none, ""};
    t["ai.onnx::Gather"] = {{"axis"}, none, ""};
    t["ai.onnx::Unsqueeze"] = {{"axes"}, none, ""};
    t["ai.onnx::Squeeze"] = {{"axes"}, none, ""};
    t["ai.onnx::Constant"] = {{"value", "value_float", "value_floats", "value_int", "value_ints"}, none, ""};
    return t;
  }();
  return table;
}

// ---------------------------------------------------------------- tensors and attributes

DType convert_dtype(int32_t onnx_type, const std::string& what) {
  switch (onnx_type) {
    case onnx::TensorProto_DataType_FLOAT: return DType::kF32;
    case onnx::TensorProto_DataType_UINT8: return DType::kU8;
    case onnx::TensorProto_DataType_INT8: return DType::kI8;
    case onnx::TensorProto_DataType_INT32: return DType::kI32;
    case onnx::TensorProto_DataType_INT64: return DType::kI64;
    default:
      throw_user_error("{}: data type {} ({}) not supported (only FLOAT, UINT8, INT8, INT32, INT64)", what,
                       onnx::TensorProto_DataType_IsValid(onnx_type) ? onnx::TensorProto_DataType_Name(onnx_type)
                                                                     : std::string("unknown"),
                       onnx_type);
  }
}

/// Reads a TensorProto into a constant value (not yet added to a graph). The size is computed
/// with overflow checks and bounded (runtime::kMaxTensorBytes for the tensor, `*total` +
/// kMaxTotalTensorBytes for all constants) before anything is allocated.
ir::Value read_tensor(const onnx::TensorProto& t, const std::string& what, int64_t* total) {
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
  if (t.has_segment()) throw_user_error("{}: segmented tensor data is not supported", what);
  const int64_t bytes = ir::bounded_tensor_bytes(v.shape, v.dtype, what);
  *total = support::checked_add(*total, bytes, what);
  if (*total > runtime::kMaxTotalTensorBytes)
    throw_user_error("{}: the model's constants exceed the {}-byte (8 GiB) limit in all ({} bytes)", what,
                     runtime::kMaxTotalTensorBytes, *total);
  const int64_t n = ir::shape_elements(v.shape);
  if (t.has_raw_data()) {
    if (static_cast<int64_t>(t.raw_data().size()) != bytes)
      throw_user_error("{}: raw_data has {} bytes, expected {} for shape {}", what, t.raw_data().size(), bytes,
                       ir::shape_string(v.shape));
    v.data.assign(t.raw_data().begin(), t.raw_data().end());
    return v;
  }
  auto check_count = [&](int64_t got, const char* field) {
    if (got != n)
      throw_user_error("{}: {} has {} elements, expected {} for shape {}", what, field, got, n, ir::shape_string(v.shape));
  };
  v.data.resize(static_cast<size_t>(bytes));
  switch (v.dtype) {
    case DType::kF32: {
      check_count(t.float_data_size(), "float_data");
      if (n > 0) std::memcpy(v.data.data(), t.float_data().data(), v.data.size());
      break;
    }
    case DType::kU8:
    case DType::kI8: {
      check_count(t.int32_data_size(), "int32_data");
      const int64_t lo = v.dtype == DType::kU8 ? 0 : -128, hi = v.dtype == DType::kU8 ? 255 : 127;
      for (int64_t i = 0; i < n; ++i) {
        const int32_t x = t.int32_data(static_cast<int>(i));
        if (x < lo || x > hi)
          throw_user_error("{}: element {} is {}, outside the {} range [{}, {}]", what, i, x, ir::to_string(v.dtype), lo, hi);
        v.data[static_cast<size_t>(i)] = static_cast<uint8_t>(x);
      }
      break;
    }
    case DType::kI32: {
      check_count(t.int32_data_size(), "int32_data");
      if (n > 0) std::memcpy(v.data.data(), t.int32_data().data(), v.data.size());
      break;
    }
    case DType::kI64: {
      check_count(t.int64_data_size(), "int64_data");
      if (n > 0) std::memcpy(v.data.data(), t.int64_data().data(), v.data.size());
      break;
    }
  }
  return v;
}

/// Clip's min / max (attributes before opset 11, inputs from 11) may be +-inf: "no bound".
bool clip_bound_attr(const ir::Node& n, const std::string& attr) {
  return n.op == "Clip" && n.domain.empty() && (attr == "min" || attr == "max");
}

/// A float attribute must be finite (Clip's bounds may be +-inf). A Constant's value_float(s) is
/// checked with the other constants (check_finite_constants), where its consumers are known.
void check_finite_attr(const ir::Node& n, const onnx::AttributeProto& a, float x) {
  if (n.op == "Constant") return;
  if (std::isnan(x) || (std::isinf(x) && !clip_bound_attr(n, a.name())))
    ir::throw_unsupported(n, fmt::format("attribute {} has the non-finite value {}", quote(a.name()), x));
}

json convert_attr(const onnx::AttributeProto& a, const ir::Node& n) {
  switch (a.type()) {
    case onnx::AttributeProto_AttributeType_INT: return a.i();
    case onnx::AttributeProto_AttributeType_FLOAT: check_finite_attr(n, a, a.f()); return a.f();
    case onnx::AttributeProto_AttributeType_STRING: return a.s();
    case onnx::AttributeProto_AttributeType_INTS: {
      json j = json::array();
      for (int64_t x : a.ints()) j.push_back(x);
      return j;
    }
    case onnx::AttributeProto_AttributeType_FLOATS: {
      json j = json::array();
      for (float x : a.floats()) {
        check_finite_attr(n, a, x);
        j.push_back(x);
      }
      return j;
    }
    default:
      ir::throw_unsupported(n, fmt::format("attribute {} of type {} not supported", quote(a.name()),
                                           attr_type_name(a.type())));
  }
}

std::string canonical_domain(const std::string& d) { return d.empty() ? "ai.onnx" : d; }

/// Every float constant must be finite. The one exception: a constant read only as a Clip's min
/// or max input (opset >= 11) may hold +-inf, which means "no bound" there. `what[v]` describes
/// constant v in messages.
void check_finite_constants(const ir::Graph& g, const std::map<int, std::string>& what) {
  const auto consumers = g.consumers();
  for (const auto& [v, desc] : what) {
    const ir::Value& val = g.values[v];
    if (val.dtype != DType::kF32) continue;
    const size_t count = val.data.size() / sizeof(float);
    int clip_bound_only = -1;  // computed at the first +-inf
    for (size_t i = 0; i < count; ++i) {
      float x;
      std::memcpy(&x, val.data.data() + i * sizeof(float), sizeof(float));
      if (std::isfinite(x)) continue;
      if (clip_bound_only < 0) {
        clip_bound_only = !g.is_output(v) && !consumers[v].empty();
        for (int c : consumers[v]) {
          const ir::Node& m = g.nodes[c];
          for (size_t k = 0; k < m.inputs.size(); ++k)
            if (m.inputs[k] == v && !(m.op == "Clip" && m.domain.empty() && (k == 1 || k == 2))) clip_bound_only = 0;
        }
      }
      if (clip_bound_only == 1 && !std::isnan(x)) continue;
      throw_user_error("{} has the non-finite value {} at element {} (of {}); only a Clip bound may be +-inf", desc, x,
                       i, count);
    }
  }
}

}  // namespace

std::vector<std::string> supported_operators() {
  std::vector<std::string> v;
  for (const auto& [k, spec] : op_table()) v.push_back(k);
  std::sort(v.begin(), v.end());
  return v;
}

bool DeclaredInput::has_symbolic_dim() const {
  return std::find(dims.begin(), dims.end(), int64_t{0}) != dims.end();
}

// Protobuf's default recursion limit (io::CodedInputStream), and the higher one used only to
// tell a too-deep model from a damaged one (1000 levels of a small message fit the stack, also
// under ASan).
constexpr int kProtobufRecursionLimit = 100;
constexpr int kDiagnosticRecursionLimit = 1000;

ir::Graph import_onnx_bytes(const std::string& bytes, const std::string& what_in, int64_t batch,
                            std::vector<DeclaredInput>* declared) {
  const std::string what = quote(what_in);
  if (declared) declared->clear();
  if (batch < 1) throw_user_error("batch {} is invalid (must be >= 1)", batch);
  onnx::ModelProto model;
  if (bytes.empty()) throw_user_error("{} is not a valid onnx model: the file is empty", what);
  if (!model.ParseFromString(bytes)) {
    // Protobuf gives no reason. One it can be told apart from damage: messages nested deeper than
    // its recursion limit (100; graphs nest in attributes), which parses with a higher limit.
    onnx::ModelProto deeper;
    google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                              static_cast<int>(std::min<size_t>(bytes.size(), INT_MAX)));
    in.SetRecursionLimit(kDiagnosticRecursionLimit);
    if (bytes.size() <= INT_MAX && deeper.ParseFromCodedStream(&in) && in.ConsumedEntireMessage()) {
      throw_user_error("{} is not a valid onnx model: its messages nest more than {} deep (protobuf's recursion "
                       "limit; graphs nest inside node attributes)",
                       what, kProtobufRecursionLimit);
    }
    throw_user_error("{} is not a valid onnx model: protobuf parsing failed ({} bytes; truncated or not "
                     "an onnx file)",
                     what, bytes.size());
  }
  if (!model.has_graph() || model.graph().node_size() == 0)
    throw_user_error("{} is not a valid onnx model: it has no graph nodes", what);
  if (model.ir_version() <= 0)
    throw_user_error("{} is not a valid onnx model: ir_version {} is missing or invalid", what,
                     model.ir_version());

  // Every name the model gives is UTF-8, as ONNX's protobuf strings must be: names travel into
  // the executable's JSON header and reports, which hold UTF-8 text only.
  {
    const onnx::GraphProto& gp = model.graph();
    auto utf8 = [&](const std::string& s, const std::string& where) {
      if (!support::is_utf8(s)) {
        throw_user_error("{}: {} {} is not valid UTF-8 (ONNX strings are UTF-8)", what, where, quote(s));
      }
    };
    utf8(gp.name(), "the graph name");
    for (const auto& init : gp.initializer()) utf8(init.name(), "initializer name");
    for (const auto& in : gp.input()) utf8(in.name(), "graph input name");
    for (const auto& out : gp.output()) utf8(out.name(), "graph output name");
    for (const auto& vi : gp.value_info()) utf8(vi.name(), "value_info name");
    for (int i = 0; i < gp.node_size(); ++i) {
      const onnx::NodeProto& np = gp.node(i);
      utf8(np.name(), fmt::format("node {} name", i));
      const std::string node = np.name().empty() ? fmt::format("node {}", i) : fmt::format("node {}", quote(np.name()));
      utf8(np.op_type(), node + ": op_type");
      utf8(np.domain(), node + ": domain");
      for (const auto& x : np.input()) utf8(x, node + ": input name");
      for (const auto& x : np.output()) utf8(x, node + ": output name");
      for (const auto& a : np.attribute()) {
        utf8(a.name(), node + ": attribute name");
        if (a.type() == onnx::AttributeProto::STRING) utf8(a.s(), fmt::format("{}: attribute {} value", node, quote(a.name())));
        for (const auto& x : a.strings()) utf8(x, fmt::format("{}: attribute {} value", node, quote(a.name())));
      }
    }
  }

  ir::Graph g;
  const onnx::GraphProto& gp = model.graph();
  g.name = gp.name();
  g.opset = -1;
  std::map<std::string, int64_t> imports;  // canonical domain -> version
  for (const auto& os : model.opset_import()) {
    const std::string d = canonical_domain(os.domain());
    if (imports.count(d))
      throw_user_error("{}: the model imports the {} opset twice (versions {} and {})", what, quote(d), imports[d],
                       os.version());
    imports[d] = os.version();
  }
  if (!imports.count("ai.onnx")) throw_user_error("{}: the model does not import the ai.onnx opset", what);
  g.opset = imports["ai.onnx"];
  if (g.opset < 7 || g.opset > 18)
    throw_user_error("{}: ai.onnx opset {} not supported (7..18)", what, g.opset);

  // Every name is defined once (ONNX graphs are SSA): by an initializer, a graph input or one
  // output of one node. The one overlap ONNX allows is a graph input that an initializer of the
  // same name gives a default (required before IR version 4, still legal after).
  std::map<std::string, int> ids;
  std::map<std::string, std::string> defined_by;  // name -> what defined it, for messages
  auto define = [&](ir::Value v, const std::string& where) {
    if (v.name.empty()) throw_user_error("{}: {} has an empty name", what, where);
    if (ids.count(v.name)) {
      throw_user_error("{}: value {} is defined twice: by {} and by {}", what, quote(v.name), defined_by[v.name],
                       where);
    }
    const std::string name = v.name;
    const int id = g.add_value(std::move(v));
    ids[name] = id;
    defined_by[name] = where;
    return id;
  };

  int64_t const_bytes = 0;
  std::map<int, std::string> constants;  // value id -> description, for the finiteness check
  for (int i = 0; i < gp.initializer_size(); ++i) {
    const auto& init = gp.initializer(i);
    const std::string desc = fmt::format("initializer {}", quote(init.name()));
    constants[define(read_tensor(init, desc, &const_bytes), fmt::format("initializer {} ({})", i, quote(init.name())))] =
        desc;
  }

  std::map<std::string, int> listed_inputs;  // graph input name -> its index in graph.input
  for (int i = 0; i < gp.input_size(); ++i) {
    const auto& in = gp.input(i);
    if (const auto seen = listed_inputs.find(in.name()); seen != listed_inputs.end()) {
      throw_user_error("{}: value {} is defined twice: by graph input {} and by graph input {}", what, quote(in.name()),
                       seen->second, i);
    }
    listed_inputs[in.name()] = i;
    if (ids.count(in.name())) continue;  // an initializer's graph input (its default value)
    const std::string where = fmt::format("graph input {}", quote(in.name()));
    if (!in.type().has_tensor_type()) throw_user_error("{}: {} is not a tensor", what, where);
    const auto& tt = in.type().tensor_type();
    if (tt.elem_type() != onnx::TensorProto_DataType_FLOAT)
      throw_user_error("{}: {} has type {}; only float32 graph inputs are supported", what, where,
                       onnx::TensorProto_DataType_IsValid(tt.elem_type())
                           ? onnx::TensorProto_DataType_Name(tt.elem_type())
                           : fmt::format("{}", tt.elem_type()));
    ir::Value v;
    v.name = in.name();
    v.dtype = DType::kF32;
    if (!tt.has_shape()) throw_user_error("{}: {} has no shape", what, where);
    DeclaredInput decl;
    decl.name = in.name();
    for (const auto& d : tt.shape().dim()) {
      if (d.has_dim_value()) {
        if (d.dim_value() <= 0) throw_user_error("{}: {} has dimension {}", what, where, d.dim_value());
        v.shape.push_back(d.dim_value());
        decl.dims.push_back(d.dim_value());
      } else if (v.shape.empty()) {
        v.shape.push_back(batch);  // a symbolic ("batch_size") or unknown batch dimension
        decl.dims.push_back(0);
      } else {
        // Only the batch dimension (axis 0) takes --batch; binding a symbolic height or width
        // to it would give a 1x1 image and errors far from the cause.
        throw_user_error("{}: {} dimension {} is {}; only the batch dimension (axis 0) may be symbolic (it takes "
                         "--batch); give the model fixed sizes for the others",
                         what, where, v.shape.size(),
                         d.has_dim_param() && !d.dim_param().empty() ? fmt::format("symbolic ({})", quote(d.dim_param()))
                                                                     : std::string("unknown"));
      }
    }
    if (declared) declared->push_back(std::move(decl));
    v.shape_known = true;
    g.inputs.push_back(define(std::move(v), fmt::format("graph input {} ({})", i, quote(in.name()))));
  }
  if (g.inputs.empty()) throw_user_error("{}: the graph has no (non-initializer) inputs", what);

  int counter = 0;
  for (const auto& np : gp.node()) {
    ir::Node n;
    n.op = np.op_type();
    const std::string domain = canonical_domain(np.domain());
    n.domain = domain == "ai.onnx" ? "" : domain;
    n.name = np.name().empty() ? fmt::format("{}_{}", np.op_type(), counter) : np.name();
    n.source_op = n.op;
    ++counter;
    const std::string key = domain + "::" + n.op;
    const auto spec = op_table().find(key);
    if (spec == op_table().end()) ir::throw_unsupported(n, fmt::format("operator {} not supported", key));
    if (!imports.count(domain))
      ir::throw_unsupported(n, fmt::format("the model does not import the {} domain of its operator", quote(domain)));
    // What the operator defines at the model's opset (ONNX's schema), then what Tessel implements.
    const OpDef def = op_def(n, domain, g.opset);
    check_against_definition(n, np, def);
    for (const auto& a : np.attribute()) {
      if (!spec->second.attrs.count(a.name()))
        ir::throw_unsupported(n, fmt::format("attribute {} not supported", quote(a.name())));
      if (n.op == "Constant" && a.type() == onnx::AttributeProto_AttributeType_TENSOR) continue;
      n.attrs[a.name()] = convert_attr(a, n);
    }
    if (n.op == "Constant" && domain == "ai.onnx") {
      // A Constant node defines a constant value directly (exactly one value attribute).
      if (np.attribute_size() != 1) ir::throw_unsupported(n, "expected exactly one value attribute");
      ir::Value v;
      const auto& a = np.attribute(0);
      const std::string desc = fmt::format("{}: value {}", ir::describe(n), quote(np.output(0)));
      if (a.name() == "value") {
        v = read_tensor(a.t(), desc, &const_bytes);
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
      } else {  // value_ints (the table admits no other)
        v.dtype = DType::kI64;
        v.data = ir::to_bytes(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
        v.shape = {a.ints_size()};
      }
      v.name = np.output(0);
      v.shape_known = true;
      v.is_const = true;
      constants[define(std::move(v), ir::describe(n))] = desc;
      continue;
    }
    for (const auto& in : np.input()) {
      if (in.empty()) {
        n.inputs.push_back(-1);
        continue;
      }
      const auto f = ids.find(in);
      if (f == ids.end())
        throw_user_error("{}: input {} is not defined before use (the graph is not topologically sorted or "
                         "refers to a missing value)",
                         ir::describe(n), quote(in));
      n.inputs.push_back(f->second);
    }
    // Trailing omitted inputs carry no information.
    while (!n.inputs.empty() && n.inputs.back() < 0) n.inputs.pop_back();
    // Element types known at import (constants and graph inputs) against the operator's type
    // constraints; shape inference checks the rest once every type is known.
    n.input_types = input_type_rules(def);
    n.input_types_source = def.what;
    ir::check_input_types(g, n, [&](size_t i) {
      const ir::Value& v = g.values[static_cast<size_t>(n.inputs[i])];
      return v.is_const || std::find(g.inputs.begin(), g.inputs.end(), n.inputs[i]) != g.inputs.end();
    });
    for (int k = 0; k < np.output_size(); ++k) {
      const std::string& out = np.output(k);
      if (k == 0) {
        if (out.empty()) ir::throw_unsupported(n, "output 0 has an empty name");
      } else if (!out.empty()) {
        ir::throw_unsupported(n, spec->second.extra_outputs.empty()
                                     ? fmt::format("output {} ({}) is not supported", k, quote(out))
                                     : spec->second.extra_outputs);
      } else {
        continue;  // an omitted optional output
      }
      ir::Value v;
      v.name = out;
      n.outputs.push_back(define(std::move(v), fmt::format("output {} of {}", k, ir::describe(n))));
    }
    spec->second.check(n);
    g.nodes.push_back(std::move(n));
  }

  for (const auto& out : gp.output()) {
    const auto f = ids.find(out.name());
    if (f == ids.end())
      throw_user_error("{}: graph output {} is not produced by any node", what, quote(out.name()));
    g.outputs.push_back(f->second);
  }
  if (g.outputs.empty()) throw_user_error("{}: the graph has no outputs", what);
  check_finite_constants(g, constants);
  g.topo_sort();
  return g;
}

ir::Graph import_onnx_file(const std::string& path, int64_t batch, std::vector<DeclaredInput>* declared) {
  ir::Graph g = import_onnx_bytes(support::read_file_bounded_string(path, support::kMaxModelFileBytes, "an ONNX model"),
                                  path, batch, declared);
  // The model is named after its file ("mnist-12"), which is more telling than graph names.
  const std::string base = path.substr(path.find_last_of('/') + 1);
  g.name = base.size() > 5 && base.ends_with(".onnx") ? base.substr(0, base.size() - 5) : base;
  return g;
}

}  // namespace tessel::compiler::frontend
