// The executable format (".tsx"):
//   bytes [0, 8)        magic "TSLEXEC1"
//   bytes [8, 16)       header length H, uint64 little-endian
//   bytes [16, 16+H)    JSON header (UTF-8, keys sorted, compact), described below
//   bytes [16+H, end)   blob area: constant tensor data and serialised Programs, back to back,
//                       at the offsets (relative to the blob area) named in the header
// Header: {"format_version": 1, "config": HwConfig JSON, "model_name", "inputs", "outputs",
//          "tensors": [{name, dtype, shape, layout, block_n, block_c, quantized, scale,
//                       zero_point, data_offset, data_size}],
//          "steps": [{name, op, inputs, outputs, attrs, placement, program, input_segments,
//                     output_segments}],
//          "programs": [{name, offset, size}]}
// The blob area must be used exactly (no gaps, no trailing bytes) so that a file has one valid
// reading and serialize(deserialize(b)) == b.
#include "runtime/executable.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include "support/error.h"

namespace tessel::runtime {

namespace {
constexpr char kMagic[8] = {'T', 'S', 'L', 'E', 'X', 'E', 'C', '1'};
constexpr int kFormatVersion = 1;

Layout layout_from_string(const std::string& s) {
  if (s == "nchw") return Layout::kNCHW;
  if (s == "nchwnc") return Layout::kNCHWnc;
  throw_user_error("executable: unknown layout '{}' (valid: nchw, nchwnc)", s);
}
std::string_view layout_name(Layout l) { return l == Layout::kNCHW ? "nchw" : "nchwnc"; }

DType dtype_from_string(const std::string& s) {
  for (DType t : {DType::kF32, DType::kI8, DType::kI32, DType::kI64}) {
    if (to_string(t) == s) return t;
  }
  throw_user_error("executable: unknown dtype '{}' (valid: f32, i8, i32, i64)", s);
}

void put_u64(uint8_t* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}

// Reads a required member with a type check; errors name the path.
const nlohmann::json& member(const nlohmann::json& j, const char* key, const std::string& path) {
  if (!j.is_object()) throw_user_error("executable: {} is not a JSON object", path);
  auto it = j.find(key);
  if (it == j.end()) throw_user_error("executable: {} is missing '{}'", path, key);
  return *it;
}
int64_t get_i64(const nlohmann::json& j, const char* key, const std::string& path) {
  const auto& v = member(j, key, path);
  if (!v.is_number_integer()) {
    throw_user_error("executable: {}.{} must be an integer, got {}", path, key, v.dump());
  }
  return v.get<int64_t>();
}
std::string get_str(const nlohmann::json& j, const char* key, const std::string& path) {
  const auto& v = member(j, key, path);
  if (!v.is_string()) {
    throw_user_error("executable: {}.{} must be a string, got {}", path, key, v.dump());
  }
  return v.get<std::string>();
}
bool get_bool(const nlohmann::json& j, const char* key, const std::string& path) {
  const auto& v = member(j, key, path);
  if (!v.is_boolean()) {
    throw_user_error("executable: {}.{} must be a boolean, got {}", path, key, v.dump());
  }
  return v.get<bool>();
}
template <typename T>
std::vector<T> get_int_list(const nlohmann::json& j, const char* key, const std::string& path) {
  const auto& v = member(j, key, path);
  if (!v.is_array()) throw_user_error("executable: {}.{} must be a list, got {}", path, key, v.dump());
  std::vector<T> out;
  for (const auto& e : v) {
    if (!e.is_number_integer() || e.get<int64_t>() < std::numeric_limits<T>::min() ||
        e.get<int64_t>() > std::numeric_limits<T>::max()) {
      throw_user_error("executable: {}.{} must hold integers, got {}", path, key, e.dump());
    }
    out.push_back(static_cast<T>(e.get<int64_t>()));
  }
  return out;
}
std::vector<std::string> get_str_list(const nlohmann::json& j, const char* key,
                                      const std::string& path) {
  const auto& v = member(j, key, path);
  if (!v.is_array()) throw_user_error("executable: {}.{} must be a list, got {}", path, key, v.dump());
  std::vector<std::string> out;
  for (const auto& e : v) {
    if (!e.is_string()) throw_user_error("executable: {}.{} must hold strings, got {}", path, key, e.dump());
    out.push_back(e.get<std::string>());
  }
  return out;
}

}  // namespace

std::string_view to_string(DType t) {
  switch (t) {
    case DType::kF32: return "f32";
    case DType::kI8: return "i8";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
  }
  throw_internal_error("to_string: invalid dtype {}", static_cast<int>(t));
}

size_t dtype_bytes(DType t) {
  switch (t) {
    case DType::kF32: return 4;
    case DType::kI8: return 1;
    case DType::kI32: return 4;
    case DType::kI64: return 8;
  }
  throw_internal_error("dtype_bytes: invalid dtype {}", static_cast<int>(t));
}

int64_t TensorDesc::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw_user_error("tensor '{}' has a negative dimension {}", name, d);
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) {
      throw_user_error("tensor '{}' has too many elements", name);
    }
    n *= d;
  }
  return n;
}

int64_t TensorDesc::size_bytes() const {
  const int64_t eb = static_cast<int64_t>(dtype_bytes(dtype));
  if (layout == Layout::kNCHW) return num_elements() * eb;
  if (shape.size() != 4) {
    throw_user_error("tensor '{}' is NCHWnc but has {} dimensions, expected 4", name, shape.size());
  }
  if (block_n < 1 || block_c < 1) {
    throw_user_error("tensor '{}' has NCHWnc blocks n={} c={}, expected positive", name, block_n,
                     block_c);
  }
  (void)num_elements();  // checks the dimensions
  const int64_t n = (shape[0] + block_n - 1) / block_n * block_n;
  const int64_t c = (shape[1] + block_c - 1) / block_c * block_c;
  return n * c * shape[2] * shape[3] * eb;
}

std::vector<uint8_t> Executable::serialize() const {
  nlohmann::json h = nlohmann::json::object();
  h["format_version"] = kFormatVersion;
  h["config"] = nlohmann::json::parse(config.to_json());
  h["model_name"] = model_name;
  h["inputs"] = inputs;
  h["outputs"] = outputs;
  std::vector<uint8_t> blobs;
  nlohmann::json ts = nlohmann::json::array();
  for (const TensorDesc& t : tensors) {
    if (!std::isfinite(t.quant.scale)) {
      throw_user_error("executable: tensor '{}' has a non-finite scale {}", t.name, t.quant.scale);
    }
    nlohmann::json jt = nlohmann::json::object();
    jt["name"] = t.name;
    jt["dtype"] = std::string(to_string(t.dtype));
    jt["shape"] = t.shape;
    jt["layout"] = std::string(layout_name(t.layout));
    jt["block_n"] = t.block_n;
    jt["block_c"] = t.block_c;
    jt["quantized"] = t.quantized;
    jt["scale"] = t.quant.scale;
    jt["zero_point"] = t.quant.zero_point;
    jt["data_offset"] = blobs.size();
    jt["data_size"] = t.data.size();
    blobs.insert(blobs.end(), t.data.begin(), t.data.end());
    ts.push_back(std::move(jt));
  }
  h["tensors"] = std::move(ts);
  nlohmann::json ss = nlohmann::json::array();
  for (const Step& s : steps) {
    nlohmann::json js = nlohmann::json::object();
    js["name"] = s.name;
    js["op"] = s.op;
    js["inputs"] = s.inputs;
    js["outputs"] = s.outputs;
    js["attrs"] = s.attrs;
    js["placement"] = s.placement == Placement::kCpu ? "cpu" : "accel";
    js["program"] = s.program;
    js["input_segments"] = s.input_segments;
    js["output_segments"] = s.output_segments;
    ss.push_back(std::move(js));
  }
  h["steps"] = std::move(ss);
  nlohmann::json ps = nlohmann::json::array();
  for (const isa::Program& p : programs) {
    const std::vector<uint8_t> b = p.serialize();
    nlohmann::json jp = nlohmann::json::object();
    jp["name"] = p.name;
    jp["offset"] = blobs.size();
    jp["size"] = b.size();
    blobs.insert(blobs.end(), b.begin(), b.end());
    ps.push_back(std::move(jp));
  }
  h["programs"] = std::move(ps);
  const std::string text = h.dump();  // keys sorted (std::map), compact: byte-stable
  std::vector<uint8_t> out(16 + text.size() + blobs.size());
  std::memcpy(out.data(), kMagic, 8);
  put_u64(out.data() + 8, text.size());
  std::memcpy(out.data() + 16, text.data(), text.size());
  if (!blobs.empty()) std::memcpy(out.data() + 16 + text.size(), blobs.data(), blobs.size());
  return out;
}

Executable Executable::deserialize(const std::vector<uint8_t>& bytes) {
  if (bytes.size() < 16) {
    throw_user_error("executable: {} bytes is too short for the 16-byte header", bytes.size());
  }
  if (std::memcmp(bytes.data(), kMagic, 8) != 0) {
    throw_user_error("executable: bad magic (expected \"TSLEXEC1\")");
  }
  uint64_t hlen = 0;
  for (int i = 0; i < 8; ++i) hlen |= uint64_t{bytes[8 + static_cast<size_t>(i)]} << (8 * i);
  if (hlen > bytes.size() - 16) {
    throw_user_error("executable: header length {} exceeds the {} bytes after the preamble", hlen,
                     bytes.size() - 16);
  }
  nlohmann::json h;
  try {
    h = nlohmann::json::parse(bytes.begin() + 16, bytes.begin() + 16 + static_cast<std::ptrdiff_t>(hlen));
  } catch (const nlohmann::json::exception& e) {
    throw_user_error("executable: malformed JSON header: {}", e.what());
  }
  const uint64_t blob_base = 16 + hlen;
  const uint64_t blob_size = bytes.size() - blob_base;
  uint64_t blob_used = 0;  // blobs must tile the area in order
  auto take_blob = [&](int64_t off, int64_t size, const std::string& what) {
    if (off < 0 || size < 0 || static_cast<uint64_t>(off) != blob_used ||
        static_cast<uint64_t>(size) > blob_size - blob_used) {
      throw_user_error("executable: {} blob [{}, +{}) is not the next {} bytes of the {}-byte blob "
                       "area (expected offset {})",
                       what, off, size, size, blob_size, blob_used);
    }
    blob_used += static_cast<uint64_t>(size);
    return bytes.begin() + static_cast<std::ptrdiff_t>(blob_base + static_cast<uint64_t>(off));
  };

  Executable exe;
  const int64_t version = get_i64(h, "format_version", "header");
  if (version != kFormatVersion) {
    throw_user_error("executable: format_version {} is not supported (expected {})", version,
                     kFormatVersion);
  }
  exe.config = isa::HwConfig::from_json(member(h, "config", "header").dump());
  exe.model_name = get_str(h, "model_name", "header");
  exe.inputs = get_int_list<int>(h, "inputs", "header");
  exe.outputs = get_int_list<int>(h, "outputs", "header");

  const auto& ts = member(h, "tensors", "header");
  if (!ts.is_array()) throw_user_error("executable: header.tensors must be a list");
  for (size_t i = 0; i < ts.size(); ++i) {
    const std::string path = fmt::format("tensors[{}]", i);
    const auto& jt = ts[i];
    TensorDesc t;
    t.name = get_str(jt, "name", path);
    t.dtype = dtype_from_string(get_str(jt, "dtype", path));
    t.shape = get_int_list<int64_t>(jt, "shape", path);
    t.layout = layout_from_string(get_str(jt, "layout", path));
    const int64_t bn = get_i64(jt, "block_n", path), bc = get_i64(jt, "block_c", path);
    if (bn < 1 || bn > INT32_MAX || bc < 1 || bc > INT32_MAX) {
      throw_user_error("executable: tensor '{}' has blocks n={} c={}, expected positive int32",
                       t.name, bn, bc);
    }
    t.block_n = static_cast<int32_t>(bn);
    t.block_c = static_cast<int32_t>(bc);
    t.quantized = get_bool(jt, "quantized", path);
    const auto& sc = member(jt, "scale", path);
    if (!sc.is_number()) throw_user_error("executable: {}.scale must be a number, got {}", path, sc.dump());
    t.quant.scale = sc.get<float>();
    const int64_t zp = get_i64(jt, "zero_point", path);
    if (zp < INT32_MIN || zp > INT32_MAX) throw_user_error("executable: {}.zero_point {} out of range", path, zp);
    t.quant.zero_point = static_cast<int32_t>(zp);
    const int64_t size_bytes = t.size_bytes();  // validates shape and blocks
    const int64_t off = get_i64(jt, "data_offset", path), size = get_i64(jt, "data_size", path);
    if (size != 0 && size != size_bytes) {
      throw_user_error("executable: constant tensor '{}' has {} bytes of data, its shape needs {}",
                       t.name, size, size_bytes);
    }
    auto it = take_blob(off, size, fmt::format("tensor '{}'", t.name));
    t.data.assign(it, it + size);
    exe.tensors.push_back(std::move(t));
  }

  const auto& ps = member(h, "programs", "header");
  if (!ps.is_array()) throw_user_error("executable: header.programs must be a list");
  // Programs follow all tensor blobs in the area; read them after the tensors (order checked).
  const auto& ss = member(h, "steps", "header");
  if (!ss.is_array()) throw_user_error("executable: header.steps must be a list");
  for (size_t i = 0; i < ps.size(); ++i) {
    const std::string path = fmt::format("programs[{}]", i);
    const int64_t off = get_i64(ps[i], "offset", path), size = get_i64(ps[i], "size", path);
    auto it = take_blob(off, size, path);
    exe.programs.push_back(isa::Program::deserialize(std::vector<uint8_t>(it, it + size)));
  }
  if (blob_used != blob_size) {
    throw_user_error("executable: {} trailing bytes after the last blob", blob_size - blob_used);
  }

  const int ntensors = static_cast<int>(exe.tensors.size());
  auto check_index = [&](int idx, const std::string& what) {
    if (idx < 0 || idx >= ntensors) {
      throw_user_error("executable: {} refers to tensor {}, but there are {} tensors", what, idx,
                       ntensors);
    }
  };
  for (size_t i = 0; i < ss.size(); ++i) {
    const std::string path = fmt::format("steps[{}]", i);
    const auto& js = ss[i];
    Step s;
    s.name = get_str(js, "name", path);
    s.op = get_str(js, "op", path);
    s.inputs = get_int_list<int>(js, "inputs", path);
    s.outputs = get_int_list<int>(js, "outputs", path);
    s.attrs = member(js, "attrs", path);
    if (!s.attrs.is_object()) throw_user_error("executable: {}.attrs must be an object", path);
    const std::string pl = get_str(js, "placement", path);
    if (pl == "cpu") {
      s.placement = Placement::kCpu;
    } else if (pl == "accel") {
      s.placement = Placement::kAccel;
    } else {
      throw_user_error("executable: {}.placement '{}' is not 'cpu' or 'accel'", path, pl);
    }
    s.program = static_cast<int>(get_i64(js, "program", path));
    s.input_segments = get_str_list(js, "input_segments", path);
    s.output_segments = get_str_list(js, "output_segments", path);
    for (int idx : s.inputs) check_index(idx, fmt::format("step '{}' input", s.name));
    for (int idx : s.outputs) check_index(idx, fmt::format("step '{}' output", s.name));
    if (s.placement == Placement::kAccel &&
        (s.program < 0 || s.program >= static_cast<int>(exe.programs.size()))) {
      throw_user_error("executable: step '{}' runs program {}, but there are {} programs", s.name,
                       s.program, exe.programs.size());
    }
    exe.steps.push_back(std::move(s));
  }
  for (int idx : exe.inputs) check_index(idx, "graph input");
  for (int idx : exe.outputs) check_index(idx, "graph output");
  return exe;
}

void Executable::save(const std::string& path) const {
  const std::vector<uint8_t> bytes = serialize();
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw_io_error("cannot open '{}' for writing", path);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw_io_error("cannot write {} bytes to '{}'", bytes.size(), path);
}

Executable Executable::load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw_io_error("cannot open executable '{}'", path);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) throw_io_error("cannot read executable '{}'", path);
  try {
    return deserialize(bytes);
  } catch (const UserError& e) {
    throw UserError(fmt::format("{}: {}", path, e.what()));
  }
}

}  // namespace tessel::runtime
