#include "compiler/ir/graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <queue>
#include <set>
#include <unordered_map>

#include "support/checked.h"
#include "support/error.h"
#include "support/text.h"

namespace tessel::compiler::ir {

std::string_view to_string(DType t) {
  switch (t) {
    case DType::kF32: return "f32";
    case DType::kI8: return "i8";
    case DType::kU8: return "u8";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
  }
  return "?";
}

size_t dtype_bytes(DType t) {
  switch (t) {
    case DType::kF32: return 4;
    case DType::kI8: return 1;
    case DType::kU8: return 1;
    case DType::kI32: return 4;
    case DType::kI64: return 8;
  }
  return 1;
}

// Throws checked_product's UserError naming `shape` (a negative dimension or an overflow).
[[noreturn]] static void bad_shape(const std::vector<int64_t>& shape) {
  support::checked_product(shape, fmt::format("shape {}", shape_string(shape)));
  throw_internal_error("shape {} has no valid element count", shape_string(shape));
}

int64_t shape_elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  // The message is only built on failure (this is called for every tensor size).
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) bad_shape(shape);
  return n;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ","));
}

int64_t Value::num_elements() const { return shape_elements(shape); }

template <typename T>
static std::vector<uint8_t> raw_bytes(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}
std::vector<uint8_t> to_bytes(const std::vector<float>& v) { return raw_bytes(v); }
std::vector<uint8_t> to_bytes(const std::vector<int32_t>& v) { return raw_bytes(v); }
std::vector<uint8_t> to_bytes(const std::vector<int8_t>& v) { return raw_bytes(v); }
std::vector<uint8_t> to_bytes(const std::vector<int64_t>& v) { return raw_bytes(v); }

void Graph::sync_names() const {
  if (indexed_ > values.size()) {
    name_index_.clear();
    indexed_ = 0;
  }
  for (; indexed_ < values.size(); ++indexed_) name_index_.emplace(values[indexed_].name, static_cast<int>(indexed_));
}

bool Graph::name_used(const std::string& name) const {
  sync_names();
  const auto it = name_index_.find(name);
  if (it == name_index_.end()) return false;
  const int id = it->second;
  if (values[id].name == name) return true;
  // A stale entry (the vector was edited in place): rebuild once and look again.
  name_index_.clear();
  indexed_ = 0;
  sync_names();
  const auto again = name_index_.find(name);
  return again != name_index_.end() && values[again->second].name == name;
}

std::string Graph::unique_name(const std::string& base) {
  if (!name_used(base)) return base;
  int& next = next_suffix_.try_emplace(base, 1).first->second;
  for (;; ++next) {
    std::string n = fmt::format("{}_{}", base, next);
    if (!name_used(n)) {
      ++next;
      return n;
    }
  }
}

void Graph::rename_value(int v, const std::string& name) {
  TESSEL_CHECK(v >= 0 && static_cast<size_t>(v) < values.size(), "rename of value {} of {}", v, values.size());
  if (values[v].name == name) return;
  TESSEL_CHECK(!name_used(name), "rename of value '{}' to '{}', which names another value", values[v].name, name);
  sync_names();
  if (const auto it = name_index_.find(values[v].name); it != name_index_.end() && it->second == v)
    name_index_.erase(it);
  values[v].name = name;
  name_index_[name] = v;
}

int Graph::add_value(Value v) {
  if (name_used(v.name)) v.name = unique_name(v.name);
  values.push_back(std::move(v));
  sync_names();
  return static_cast<int>(values.size()) - 1;
}

int Graph::add_const(const std::string& name, DType dtype, std::vector<int64_t> shape,
                     std::vector<uint8_t> bytes) {
  const int64_t n = shape_elements(shape);
  TESSEL_CHECK(static_cast<int64_t>(bytes.size()) == n * static_cast<int64_t>(dtype_bytes(dtype)),
               "constant '{}' has {} bytes for shape {}", name, bytes.size(), shape_string(shape));
  Value v;
  v.name = name;
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.shape_known = true;
  v.is_const = true;
  v.data = std::move(bytes);
  return add_value(std::move(v));
}

int Graph::add_const_f32(const std::string& name, std::vector<int64_t> shape,
                         const std::vector<float>& v) {
  return add_const(name, DType::kF32, std::move(shape), to_bytes(v));
}
int Graph::add_const_i64(const std::string& name, std::vector<int64_t> shape,
                         const std::vector<int64_t>& v) {
  return add_const(name, DType::kI64, std::move(shape), to_bytes(v));
}
int Graph::add_const_i32(const std::string& name, std::vector<int64_t> shape,
                         const std::vector<int32_t>& v) {
  return add_const(name, DType::kI32, std::move(shape), to_bytes(v));
}
int Graph::add_const_i8(const std::string& name, std::vector<int64_t> shape,
                        const std::vector<int8_t>& v) {
  return add_const(name, DType::kI8, std::move(shape), to_bytes(v));
}

int Graph::producer(int v) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    for (int o : nodes[i].outputs)
      if (o == v) return static_cast<int>(i);
  return -1;
}

std::vector<std::vector<int>> Graph::consumers() const {
  std::vector<std::vector<int>> c(values.size());
  for (size_t i = 0; i < nodes.size(); ++i)
    for (int in : nodes[i].inputs)
      if (in >= 0 && (c[in].empty() || c[in].back() != static_cast<int>(i)))
        c[in].push_back(static_cast<int>(i));
  return c;
}

std::vector<int> Graph::producers() const {
  std::vector<int> p(values.size(), -1);
  for (size_t i = 0; i < nodes.size(); ++i)
    for (int o : nodes[i].outputs) p[o] = static_cast<int>(i);
  return p;
}

bool Graph::is_output(int v) const {
  return std::find(outputs.begin(), outputs.end(), v) != outputs.end();
}

void Graph::replace_uses(const std::vector<int>& to) {
  // Chains are resolved once per value (memoised in `target`), so a chain of length k costs
  // O(k) in all, however many nodes read its values.
  constexpr int kUnresolved = -1, kOnPath = -2;
  std::vector<int> target(to.size(), kUnresolved);
  std::vector<int> path;
  auto replaced = [&](int v) { return v >= 0 && static_cast<size_t>(v) < to.size() && to[v] >= 0; };
  auto resolve = [&](int v) {
    path.clear();
    int cur = v;
    while (replaced(cur)) {
      if (target[cur] >= 0) {
        cur = target[cur];
        break;
      }
      if (target[cur] == kOnPath)
        throw_internal_error("replace_uses: the replacements of value '{}' form a cycle", values[v].name);
      target[cur] = kOnPath;
      path.push_back(cur);
      cur = to[cur];
    }
    for (int p : path) target[p] = cur;
    return cur;
  };
  for (Node& n : nodes)
    for (int& in : n.inputs) in = resolve(in);
  for (int& o : outputs) o = resolve(o);
}

std::vector<char> Graph::input_mask() const {
  std::vector<char> m(values.size(), 0);
  for (int i : inputs)
    if (i >= 0 && static_cast<size_t>(i) < m.size()) m[i] = 1;
  return m;
}

void Graph::replace_uses(int from, int to) {
  for (Node& n : nodes)
    for (int& in : n.inputs)
      if (in == from) in = to;
  for (int& o : outputs)
    if (o == from) o = to;
}

std::vector<float> Graph::const_f32(int id) const {
  const Value& v = values.at(id);
  TESSEL_CHECK(v.is_const, "value '{}' is not a constant", v.name);
  const int64_t n = v.num_elements();
  std::vector<float> out(n);
  const uint8_t* p = v.data.data();
  for (int64_t i = 0; i < n; ++i) {
    switch (v.dtype) {
      case DType::kF32: { float f; std::memcpy(&f, p + 4 * i, 4); out[i] = f; break; }
      case DType::kI8: out[i] = static_cast<float>(static_cast<int8_t>(p[i])); break;
      case DType::kU8: out[i] = static_cast<float>(p[i]); break;
      case DType::kI32: { int32_t x; std::memcpy(&x, p + 4 * i, 4); out[i] = static_cast<float>(x); break; }
      case DType::kI64: { int64_t x; std::memcpy(&x, p + 8 * i, 8); out[i] = static_cast<float>(x); break; }
    }
  }
  return out;
}

std::vector<int64_t> Graph::const_i64(int id) const {
  const Value& v = values.at(id);
  TESSEL_CHECK(v.is_const, "value '{}' is not a constant", v.name);
  TESSEL_CHECK(v.dtype != DType::kF32, "value '{}' is not an integer constant", v.name);
  const int64_t n = v.num_elements();
  std::vector<int64_t> out(n);
  const uint8_t* p = v.data.data();
  for (int64_t i = 0; i < n; ++i) {
    switch (v.dtype) {
      case DType::kI8: out[i] = static_cast<int8_t>(p[i]); break;
      case DType::kU8: out[i] = p[i]; break;
      case DType::kI32: { int32_t x; std::memcpy(&x, p + 4 * i, 4); out[i] = x; break; }
      case DType::kI64: { int64_t x; std::memcpy(&x, p + 8 * i, 8); out[i] = x; break; }
      case DType::kF32: break;
    }
  }
  return out;
}

void Graph::remove_dead() {
  // Mark live nodes backwards from the outputs.
  std::vector<char> live_value(values.size(), 0);
  for (int o : outputs) live_value[o] = 1;
  std::vector<char> live_node(nodes.size(), 0);
  for (size_t k = nodes.size(); k-- > 0;) {
    bool used = false;
    for (int o : nodes[k].outputs) used = used || live_value[o];
    if (!used) continue;
    live_node[k] = 1;
    for (int in : nodes[k].inputs)
      if (in >= 0) live_value[in] = 1;
    for (int o : nodes[k].outputs) live_value[o] = 1;
  }
  for (int i : inputs) live_value[i] = 1;
  std::vector<int> remap(values.size(), -1);
  std::vector<Value> kept;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!live_value[i]) continue;
    remap[i] = static_cast<int>(kept.size());
    kept.push_back(std::move(values[i]));
  }
  std::vector<Node> kept_nodes;
  for (size_t k = 0; k < nodes.size(); ++k) {
    if (!live_node[k]) continue;
    Node n = std::move(nodes[k]);
    for (int& in : n.inputs)
      if (in >= 0) in = remap[in];
    for (int& o : n.outputs) o = remap[o];
    kept_nodes.push_back(std::move(n));
  }
  for (int& i : inputs) i = remap[i];
  for (int& o : outputs) o = remap[o];
  values = std::move(kept);
  nodes = std::move(kept_nodes);
  name_index_.clear();
  indexed_ = 0;
  next_suffix_.clear();
}

void Graph::topo_sort() {
  const std::vector<int> prod = producers();
  const std::vector<char> is_input = input_mask();
  std::vector<int> indeg(nodes.size(), 0);
  std::vector<std::vector<int>> succ(nodes.size());
  for (size_t k = 0; k < nodes.size(); ++k) {
    for (int in : nodes[k].inputs) {
      if (in < 0) continue;
      const int p = prod[in];
      if (p < 0) {
        const Value& v = values[in];
        const bool defined = v.is_const || is_input[in];
        if (!defined)
          throw_user_error("{}: input '{}' is not produced by any node, initializer or graph input",
                           describe(nodes[k]), v.name);
        continue;
      }
      succ[p].push_back(static_cast<int>(k));
      ++indeg[k];
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t k = 0; k < nodes.size(); ++k)
    if (indeg[k] == 0) ready.push(static_cast<int>(k));
  std::vector<int> order;
  while (!ready.empty()) {
    const int k = ready.top();
    ready.pop();
    order.push_back(k);
    for (int s : succ[k])
      if (--indeg[s] == 0) ready.push(s);
  }
  if (order.size() != nodes.size()) {
    for (size_t k = 0; k < nodes.size(); ++k)
      if (indeg[k] > 0) throw_user_error("{}: the graph has a cycle through this node", describe(nodes[k]));
  }
  std::vector<Node> sorted;
  sorted.reserve(nodes.size());
  for (int k : order) sorted.push_back(std::move(nodes[k]));
  nodes = std::move(sorted);
}

// The dump prints per-channel arrays of up to kDumpFullValues values in full; a longer one shows
// its first kDumpHeadValues values and "... (N values)", so a line stays readable (mobilenet's
// per-channel attributes are up to 1280 values long; the data of constants is in their fnv).
constexpr size_t kDumpFullValues = 16;
constexpr size_t kDumpHeadValues = 8;

template <typename T>
static std::string abbreviated(const std::vector<T>& v) {
  if (v.size() <= kDumpFullValues) return fmt::format("{}", fmt::join(v, ","));
  return fmt::format("{},... ({} values)", fmt::join(v.begin(), v.begin() + kDumpHeadValues, ","), v.size());
}

// nlohmann's compact dump, except that arrays longer than kDumpFullValues are abbreviated as
// above.
static std::string abbreviated_json(const nlohmann::json& j) {
  if (j.is_array()) {
    std::vector<std::string> items;
    for (const auto& e : j) items.push_back(abbreviated_json(e));
    return "[" + abbreviated(items) + "]";
  }
  if (j.is_object()) {
    std::string s = "{";
    bool first = true;
    for (auto it = j.begin(); it != j.end(); ++it) {
      s += (first ? "" : ",") + nlohmann::json(it.key()).dump() + ":" + abbreviated_json(it.value());
      first = false;
    }
    return s + "}";
  }
  return j.dump();
}

static std::string quant_string(const QuantInfo& q) {
  if (q.per_tensor()) return fmt::format("q({},{})", q.scale.at(0), q.zero_point.at(0));
  return fmt::format("q(axis={},scale=[{}],zp=[{}])", q.axis, abbreviated(q.scale), abbreviated(q.zero_point));
}

std::string Graph::type_string(int id) const {
  const Value& v = values.at(id);
  std::string s = fmt::format("{}{}", to_string(v.dtype), v.shape_known ? shape_string(v.shape) : "[?]");
  if (v.layout == runtime::Layout::kNCHWnc) s += fmt::format(" NCHW{}n{}c", v.block_n, v.block_c);
  if (v.quant) s += " " + quant_string(*v.quant);
  return s;
}

static uint64_t fnv1a(const std::vector<uint8_t>& b) {
  uint64_t h = 1469598103934665603ull;
  for (uint8_t c : b) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string Graph::dump() const {
  std::string s = fmt::format("graph '{}' opset {} {{\n", name, opset);
  for (int i : inputs) s += fmt::format("  input %{}: {}\n", values[i].name, type_string(i));
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i].is_const) continue;
    s += fmt::format("  const %{}: {} fnv={:016x}\n", values[i].name, type_string(static_cast<int>(i)),
                     fnv1a(values[i].data));
  }
  for (const Node& n : nodes) {
    std::vector<std::string> outs, ins;
    for (int o : n.outputs) outs.push_back(fmt::format("%{}: {}", values[o].name, type_string(o)));
    for (int in : n.inputs) ins.push_back(in < 0 ? std::string("none") : "%" + values[in].name);
    const std::string op = n.domain.empty() ? n.op : n.domain + "." + n.op;
    s += fmt::format("  {} = {}({})", fmt::join(outs, ", "), op, fmt::join(ins, ", "));
    if (!n.attrs.empty()) s += " " + abbreviated_json(n.attrs);
    if (n.placement == runtime::Placement::kAccel) s += " @accel";
    if (!n.placement_reason.empty()) s += fmt::format(" @cpu({})", n.placement_reason);
    s += fmt::format(" # {}\n", n.name);
  }
  std::vector<std::string> outs;
  for (int o : outputs) outs.push_back("%" + values[o].name);
  s += fmt::format("  output {}\n}}\n", fmt::join(outs, ", "));
  return s;
}

int64_t attr_int(const Node& n, const std::string& key, int64_t def) {
  auto it = n.attrs.find(key);
  if (it == n.attrs.end()) return def;
  if (!it->is_number_integer()) throw_user_error("{}: attribute '{}' must be an int", describe(n), key);
  return it->get<int64_t>();
}

float attr_float(const Node& n, const std::string& key, float def) {
  auto it = n.attrs.find(key);
  if (it == n.attrs.end()) return def;
  if (!it->is_number()) throw_user_error("{}: attribute '{}' must be a float", describe(n), key);
  return it->get<float>();
}

std::string attr_string(const Node& n, const std::string& key, const std::string& def) {
  auto it = n.attrs.find(key);
  if (it == n.attrs.end()) return def;
  if (!it->is_string()) throw_user_error("{}: attribute '{}' must be a string", describe(n), key);
  return it->get<std::string>();
}

std::vector<int64_t> attr_ints(const Node& n, const std::string& key, std::vector<int64_t> def) {
  auto it = n.attrs.find(key);
  if (it == n.attrs.end()) return def;
  if (!it->is_array()) throw_user_error("{}: attribute '{}' must be a list of ints", describe(n), key);
  std::vector<int64_t> v;
  for (const auto& e : *it) {
    if (!e.is_number_integer())
      throw_user_error("{}: attribute '{}' must be a list of ints", describe(n), key);
    v.push_back(e.get<int64_t>());
  }
  return v;
}

std::string describe(const Node& n) {
  return fmt::format("node {} ({})", support::quote(n.name), support::escape_bytes(n.op));
}

void throw_unsupported(const Node& n, const std::string& reason) {
  throw UserError(fmt::format("{}: {}", describe(n), reason));
}

}  // namespace tessel::compiler::ir
