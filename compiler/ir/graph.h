// Tessel's graph IR (Relay/Relax-like): a dataflow graph of typed values (shape, dtype, layout,
// quantisation parameters, constant contents) and nodes in topological order.
//
// Two operator dialects live in the same graph:
//  - ONNX operators as imported (Node::domain "" or "com.microsoft", Node::op the ONNX op_type,
//    attributes as in the ONNX file), and
//  - Tessel operators (Node::domain "tessel"), whose op names are exactly the CPU kernel names of
//    runtime/cpu/kernels.h ("qconv2d", "qadd", "quantize", "pack_nchwnc", ...) with the attributes
//    the kernels read. The graph passes rewrite the first dialect into the second; lowering maps
//    each Tessel node to one Executable step.
// Attributes are JSON objects (nlohmann::json keeps keys sorted, so dumps are deterministic).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/executable.h"

namespace tessel::compiler::ir {

/// Element types of IR values. kU8 only appears between import and the QDQ import pass (which
/// moves uint8 tensors to int8 by subtracting 128).
enum class DType : uint8_t { kF32 = 0, kI8 = 1, kU8 = 2, kI32 = 3, kI64 = 4 };
/// "f32", "i8", "u8", "i32", "i64".
std::string_view to_string(DType t);
/// Bytes per element (4, 1, 1, 4, 8).
size_t dtype_bytes(DType t);

/// Quantisation parameters: real = scale * (q - zero_point). Per-tensor when `axis` < 0 (one
/// scale and one zero point), otherwise one entry per index of dimension `axis`.
struct QuantInfo {
  std::vector<float> scale;
  std::vector<int32_t> zero_point;
  int axis = -1;
  bool per_tensor() const { return axis < 0; }
  float scale_at(size_t i) const { return scale.size() == 1 ? scale[0] : scale[i]; }
  int32_t zero_point_at(size_t i) const { return zero_point.size() == 1 ? zero_point[0] : zero_point[i]; }
  bool operator==(const QuantInfo&) const = default;
  /// Builds per-tensor parameters.
  static QuantInfo tensor(float scale, int32_t zero_point) { return {{scale}, {zero_point}, -1}; }
};

/// A value: a graph input, a node output, or a constant (when `data` is non-empty or
/// `is_const` is set for an empty constant).
struct Value {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;  ///< logical shape (NCHW order for 4-D); empty for scalars
  bool shape_known = false;    ///< false until shape inference (or the creator) sets `shape`
  runtime::Layout layout = runtime::Layout::kNCHW;
  int32_t block_n = 1, block_c = 1;  ///< NCHWnc blocks when layout is kNCHWnc
  std::optional<QuantInfo> quant;    ///< set on quantised values (always for Tessel i8 values)
  bool is_const = false;
  std::vector<uint8_t> data;  ///< constant contents, little-endian, dtype elements, row-major

  int64_t num_elements() const;
};

/// The type constraint of an operator's input, from its ONNX schema at the model's opset.
struct InputTypeRule {
  std::string param;                 ///< the schema's type parameter ("T"), or "" for one fixed type
  std::vector<std::string> allowed;  ///< ONNX types allowed here ("tensor(float)", ...), sorted; empty: any
  std::string name;                  ///< the formal parameter's name ("X")
};

/// A node. inputs hold value ids; -1 marks an omitted optional ONNX input.
struct Node {
  std::string name;    ///< ONNX node name (or a derived name for nodes created by passes)
  std::string op;      ///< ONNX op_type or Tessel kernel name
  std::string domain;  ///< "" (ONNX), "com.microsoft", or "tessel"
  std::vector<int> inputs, outputs;
  nlohmann::json attrs = nlohmann::json::object();
  runtime::Placement placement = runtime::Placement::kCpu;
  /// Why the placement pass kept the node on the CPU ("" on the accelerator, or when offload is
  /// off and nothing was considered):
  /// reports and the IR dump (" @cpu(<reason>)") show it.
  std::string placement_reason;
  /// Source ONNX op_type (for reports); defaults to `op` for imported nodes.
  std::string source_op;
  /// Per input, the operator's type constraint (the last rule serves a variadic tail), set by the
  /// importer from the ONNX schema and checked by ir::check_input_types; empty for nodes made by
  /// passes and for operators without schema types (com.microsoft).
  std::vector<InputTypeRule> input_types;
  std::string input_types_source;  ///< what the rules come from, for messages: "Gemm at opset 13"
  bool is_tessel() const { return domain == "tessel"; }
};

/// The graph. Values and nodes are addressed by index; nodes are kept in topological order.
struct Graph {
  std::string name;
  int64_t opset = 13;  ///< the model's ai.onnx opset version
  std::vector<Value> values;
  std::vector<Node> nodes;
  std::vector<int> inputs, outputs;  ///< graph inputs / outputs (value ids)

  /// Adds a value; returns its id. If `v.name` is taken, a suffix "_1", "_2", ... is added
  /// (unique_name). Amortised O(1) (a hash index of the names, see below).
  int add_value(Value v);
  /// Adds a constant of `dtype` and `shape` with raw little-endian `bytes`; returns its id.
  /// Throws InternalError if the byte count does not match the shape.
  int add_const(const std::string& name, DType dtype, std::vector<int64_t> shape,
                std::vector<uint8_t> bytes);
  /// Typed constant builders (element count must match the shape).
  int add_const_f32(const std::string& name, std::vector<int64_t> shape, const std::vector<float>& v);
  int add_const_i64(const std::string& name, std::vector<int64_t> shape, const std::vector<int64_t>& v);
  int add_const_i32(const std::string& name, std::vector<int64_t> shape, const std::vector<int32_t>& v);
  int add_const_i8(const std::string& name, std::vector<int64_t> shape, const std::vector<int8_t>& v);
  /// Returns a name not used by any value: `base` itself if free, else `base` + "_k" for the
  /// smallest k >= 1 that is free and not yet tried for `base` since the last remove_dead()
  /// (a per-base counter, so that k names derived from one base cost O(k), not O(k^2)).
  /// Amortised O(1) per call (plus the suffixes skipped). Deterministic: depends only on the
  /// sequence of graph edits.
  std::string unique_name(const std::string& base);
  /// True if some value is named `name`. Amortised O(1). Brings the name index up to date, so
  /// it is not safe to call from two threads on one graph even though it is const.
  bool name_used(const std::string& name) const;
  /// Renames value `v` to `name` (which must not name another value: InternalError otherwise),
  /// keeping the name index in sync. Values of a graph must be renamed through this function,
  /// not by assigning Value::name (the index would miss the new name).
  void rename_value(int v, const std::string& name);

  /// Index of the node producing value `v`, or -1 (graph input or constant). O(nodes).
  int producer(int v) const;
  /// For every value, the indices of the nodes reading it (in node order).
  std::vector<std::vector<int>> consumers() const;
  /// For every value, the index of its producing node or -1.
  std::vector<int> producers() const;
  /// True if `v` is a graph output.
  bool is_output(int v) const;
  /// Replaces every use of value `from` (node inputs and graph outputs) by `to`. O(nodes):
  /// a pass replacing many values uses the map form below once instead.
  void replace_uses(int from, int to);
  /// Replaces, in one walk over the nodes and outputs, every use of each value v with
  /// `to[v]` >= 0 by `to[v]`, following chains (v -> to[v] -> to[to[v]] ... to the first value
  /// not replaced). `to` has one entry per value or fewer (missing entries: not replaced).
  /// Throws InternalError if the replacements form a cycle. O(nodes + inputs + values).
  void replace_uses(const std::vector<int>& to);
  /// For every value, true if it is a graph input.
  std::vector<char> input_mask() const;

  /// Constant contents converted to float (any dtype); throws InternalError if `v` is not
  /// constant.
  std::vector<float> const_f32(int v) const;
  /// Constant contents converted to int64 (integer dtypes only; InternalError otherwise).
  std::vector<int64_t> const_i64(int v) const;

  /// Removes nodes none of whose outputs are used (transitively) and values no node, input or
  /// output references; renumbers ids. Graph inputs are kept even when unused. O(nodes + values)
  /// (the name index is rebuilt, the unique_name counters restart).
  void remove_dead();
  /// Stable topological sort of `nodes` (keeps the current order where dependencies allow):
  /// Kahn's algorithm with a min-heap of ready node indices, O(E log N).
  /// Throws UserError naming a node when the graph has a cycle or reads an undefined value.
  void topo_sort();

  /// Textual dump: one line per input, constant (shape and an FNV-1a checksum of its bytes),
  /// and node (outputs with types = op(inputs) {attrs} @placement # name). Deterministic.
  /// Arrays of more than 16 values (per-channel scales, zero points, long attributes) print
  /// their first 8 values followed by "... (N values)".
  std::string dump() const;
  /// The type of one value as printed by dump(), e.g. "i8[1,8,28,28] q(0.5,-3)".
  std::string type_string(int v) const;

 private:
  /// Brings name_index_ up to date with `values`: indexes values appended since the last call;
  /// rebuilds it when `values` shrank (remove_dead, or a caller replacing the vector).
  void sync_names() const;
  /// name -> id of the value with that name, for values[0, indexed_).
  mutable std::unordered_map<std::string, int> name_index_;
  mutable size_t indexed_ = 0;
  /// base -> next suffix unique_name tries for it.
  std::unordered_map<std::string, int> next_suffix_;
};

/// Reads an attribute with a default (ints, floats, strings, int lists).
int64_t attr_int(const Node& n, const std::string& key, int64_t def);
float attr_float(const Node& n, const std::string& key, float def);
std::string attr_string(const Node& n, const std::string& key, const std::string& def);
std::vector<int64_t> attr_ints(const Node& n, const std::string& key, std::vector<int64_t> def);

/// "node 'name' (op)": the prefix of error messages about a node.
std::string describe(const Node& n);
/// Throws UserError "node 'name' (op): <reason>".
[[noreturn]] void throw_unsupported(const Node& n, const std::string& reason);

/// Number of elements of a shape (1 for a scalar). Overflow-checked: throws UserError
/// "shape [..]: size overflows 64 bits (a x b)" (or naming a negative dimension).
int64_t shape_elements(const std::vector<int64_t>& shape);
/// "[1,3,224,224]".
std::string shape_string(const std::vector<int64_t>& shape);

/// Float to bytes and back (little-endian host assumed, as everywhere in Tessel).
std::vector<uint8_t> to_bytes(const std::vector<float>& v);
std::vector<uint8_t> to_bytes(const std::vector<int32_t>& v);
std::vector<uint8_t> to_bytes(const std::vector<int8_t>& v);
std::vector<uint8_t> to_bytes(const std::vector<int64_t>& v);

}  // namespace tessel::compiler::ir
