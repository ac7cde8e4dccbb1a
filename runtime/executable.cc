// The executable format (".tsx"), format version 2:
//   bytes [0, 8)        magic "TSLEXEC1" (the file type; the format version follows)
//   bytes [8, 16)       header length H, uint64 little-endian
//   bytes [16, 20)      format version, uint32 little-endian (2)
//   bytes [20, 24)      CRC-32 (zlib's crc32, the ISO-HDLC polynomial) of bytes [0, 20) followed by
//                       the H header bytes, uint32 little-endian
//   bytes [24, 24+H)    JSON header (UTF-8, keys sorted, compact), described below
//   bytes [24+H, end)   blob area: constant tensor data and serialised Programs, back to back,
//                       at the offsets (relative to the blob area) named in the header
// Header: {"config": HwConfig JSON, "model_name", "requant_mode" (optional), "inputs", "outputs",
//          "tensors": [{name, dtype, shape, layout, block_n, block_c, quantized, scale,
//                       zero_point, data_offset, data_size, data_crc32}],
//          "steps": [{name, op, inputs, outputs, attrs, placement, program, input_segments,
//                     output_segments}],
//          "programs": [{name, offset, size, crc32}]}
// Every section carries a CRC-32: the preamble and header together, each tensor's data and each
// Program blob. CRC-32 detects every error burst of up to 32 bits, so any change of one byte
// anywhere in a file is found before anything in it is used. Version 1 files (a JSON header
// straight after the length, no checksums) are rejected with a message that says so.
// The blob area must be used exactly (no gaps, no trailing bytes) so that a file has one valid
// reading and serialize(deserialize(b)) == b.
#include "runtime/executable.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include "support/atomic_file.h"
#include "support/error.h"
#include "support/file_read.h"
#include "support/json_text.h"
#include "support/text.h"

#include <zlib.h>

namespace tessel::runtime {

namespace {
constexpr char kMagic[8] = {'T', 'S', 'L', 'E', 'X', 'E', 'C', '1'};
constexpr uint32_t kFormatVersion = 2;
constexpr size_t kPreambleBytes = 24;

uint32_t crc32_of(uint32_t crc, const uint8_t* p, size_t n) {
  return static_cast<uint32_t>(::crc32_z(crc, p, n));
}
uint32_t crc32_of(const uint8_t* p, size_t n) { return crc32_of(static_cast<uint32_t>(::crc32_z(0, nullptr, 0)), p, n); }

void put_u32(uint8_t* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t get_u32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{p[i]} << (8 * i);
  return v;
}

Layout layout_from_string(const std::string& s) {
  if (s == "nchw") return Layout::kNCHW;
  if (s == "nchwnc") return Layout::kNCHWnc;
  throw_user_error("executable: unknown layout {} (valid: nchw, nchwnc)", support::quote(s));
}
std::string_view layout_name(Layout l) { return l == Layout::kNCHW ? "nchw" : "nchwnc"; }

DType dtype_from_string(const std::string& s) {
  for (DType t : {DType::kF32, DType::kI8, DType::kI32, DType::kI64}) {
    if (to_string(t) == s) return t;
  }
  throw_user_error("executable: unknown dtype {} (valid: f32, i8, i32, i64)", support::quote(s));
}

void put_u64(uint8_t* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}

// Reads a required member with a type check; errors name the path.
const nlohmann::json& member(const nlohmann::json& j, const char* key, const std::string& path) {
  if (!j.is_object()) throw_user_error("executable: {} is not a JSON object", path);
  auto it = j.find(key);
  if (it == j.end()) throw_user_error("executable: {} is missing {}", path, support::quote(key));
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
    if (d < 0) throw_user_error("tensor {} has a negative dimension {}", support::quote(name), d);
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) {
      throw_user_error("tensor {} has too many elements", support::quote(name));
    }
    n *= d;
  }
  return n;
}

int64_t TensorDesc::size_bytes() const {
  const int64_t eb = static_cast<int64_t>(dtype_bytes(dtype));
  if (layout == Layout::kNCHW) return num_elements() * eb;
  if (shape.size() != 4) {
    throw_user_error("tensor {} is NCHWnc but has {} dimensions, expected 4", support::quote(name), shape.size());
  }
  if (block_n < 1 || block_c < 1) {
    throw_user_error("tensor {} has NCHWnc blocks n={} c={}, expected positive", support::quote(name), block_n,
                     block_c);
  }
  (void)num_elements();  // checks the dimensions
  const int64_t n = (shape[0] + block_n - 1) / block_n * block_n;
  const int64_t c = (shape[1] + block_c - 1) / block_c * block_c;
  return n * c * shape[2] * shape[3] * eb;
}

std::vector<uint8_t> Executable::serialize() const {
  nlohmann::json h = nlohmann::json::object();
  h["config"] = nlohmann::json::parse(config.to_json());
  h["model_name"] = model_name;
  if (!requant_mode.empty()) h["requant_mode"] = requant_mode;
  h["inputs"] = inputs;
  h["outputs"] = outputs;
  std::vector<uint8_t> blobs;
  nlohmann::json ts = nlohmann::json::array();
  for (const TensorDesc& t : tensors) {
    if (!std::isfinite(t.quant.scale)) {
      throw_user_error("executable: tensor {} has a non-finite scale {}", support::quote(t.name), t.quant.scale);
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
    jt["data_crc32"] = crc32_of(t.data.data(), t.data.size());
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
    jp["crc32"] = crc32_of(b.data(), b.size());
    blobs.insert(blobs.end(), b.begin(), b.end());
    ps.push_back(std::move(jp));
  }
  h["programs"] = std::move(ps);
  // Keys sorted (std::map), compact: byte-stable. A name that is not UTF-8 is named, not dumped.
  const std::string text = support::dump_json(h, -1, "executable header");
  std::vector<uint8_t> out(kPreambleBytes + text.size() + blobs.size());
  std::memcpy(out.data(), kMagic, 8);
  put_u64(out.data() + 8, text.size());
  put_u32(out.data() + 16, kFormatVersion);
  std::memcpy(out.data() + kPreambleBytes, text.data(), text.size());
  const uint32_t hcrc = crc32_of(crc32_of(out.data(), 20), out.data() + kPreambleBytes, text.size());
  put_u32(out.data() + 20, hcrc);
  if (!blobs.empty()) std::memcpy(out.data() + kPreambleBytes + text.size(), blobs.data(), blobs.size());
  return out;
}

Executable Executable::deserialize(const std::vector<uint8_t>& bytes) {
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kMagic, 8) != 0) {
    if (bytes.size() < 8) {
      throw_user_error("executable: {} bytes is too short for the {}-byte preamble", bytes.size(), kPreambleBytes);
    }
    throw_user_error("executable: bad magic (expected \"TSLEXEC1\")");
  }
  // A version 1 file has its JSON header right after the length.
  if (bytes.size() >= 17 && bytes[16] == '{') {
    throw_user_error("executable: format version 1 (written by an older tessel, without checksums) is not "
                     "supported; this tessel reads format version {}: compile the model again",
                     kFormatVersion);
  }
  if (bytes.size() < kPreambleBytes) {
    throw_user_error("executable: {} bytes is too short for the {}-byte preamble", bytes.size(), kPreambleBytes);
  }
  const uint32_t version = get_u32(bytes.data() + 16);
  if (version != kFormatVersion) {
    throw_user_error("executable: format version {} is not supported (this tessel reads format version {})",
                     version, kFormatVersion);
  }
  uint64_t hlen = 0;
  for (int i = 0; i < 8; ++i) hlen |= uint64_t{bytes[8 + static_cast<size_t>(i)]} << (8 * i);
  if (hlen > bytes.size() - kPreambleBytes) {
    throw_user_error("executable: header length {} exceeds the {} bytes after the preamble", hlen,
                     bytes.size() - kPreambleBytes);
  }
  const uint32_t stored_hcrc = get_u32(bytes.data() + 20);
  const uint32_t hcrc = crc32_of(crc32_of(bytes.data(), 20), bytes.data() + kPreambleBytes, hlen);
  if (hcrc != stored_hcrc) {
    throw_user_error("executable: checksum mismatch in section header (stored crc32 {:08x}, computed {:08x}): "
                     "the file is corrupted",
                     stored_hcrc, hcrc);
  }
  const nlohmann::json h = support::parse_json(
      std::string_view(reinterpret_cast<const char*>(bytes.data()) + kPreambleBytes, hlen), "executable header");
  const uint64_t blob_base = kPreambleBytes + hlen;
  const uint64_t blob_size = bytes.size() - blob_base;
  uint64_t blob_used = 0;  // blobs must tile the area in order
  // `section` names the blob in messages; `stored` is the header's CRC-32 of it.
  auto take_blob = [&](int64_t off, int64_t size, int64_t stored, const std::string& section) {
    if (off < 0 || size < 0 || static_cast<uint64_t>(off) != blob_used ||
        static_cast<uint64_t>(size) > blob_size - blob_used) {
      throw_user_error("executable: {} blob [{}, +{}) is not the next {} bytes of the {}-byte blob "
                       "area (expected offset {})",
                       section, off, size, size, blob_size, blob_used);
    }
    const auto first = bytes.begin() + static_cast<std::ptrdiff_t>(blob_base + static_cast<uint64_t>(off));
    const uint32_t crc = crc32_of(bytes.data() + blob_base + static_cast<uint64_t>(off), static_cast<size_t>(size));
    if (stored < 0 || stored > 0xffffffffLL || static_cast<uint32_t>(stored) != crc) {
      throw_user_error("executable: checksum mismatch in section {} (stored crc32 {:08x}, computed {:08x}): the "
                       "file is corrupted",
                       section, static_cast<uint64_t>(stored), crc);
    }
    blob_used += static_cast<uint64_t>(size);
    return first;
  };

  Executable exe;
  exe.config = isa::HwConfig::from_json(member(h, "config", "header").dump());
  exe.model_name = get_str(h, "model_name", "header");
  if (h.contains("requant_mode")) {
    exe.requant_mode = get_str(h, "requant_mode", "header");
    if (exe.requant_mode != "exact" && exe.requant_mode != "approximate") {
      throw_user_error("header.requant_mode must be \"exact\" or \"approximate\", got {}", support::quote(exe.requant_mode));
    }
  }
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
      throw_user_error("executable: tensor {} has blocks n={} c={}, expected positive int32",
                       support::quote(t.name), bn, bc);
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
      throw_user_error("executable: constant tensor {} has {} bytes of data, its shape needs {}",
                       support::quote(t.name), size, size_bytes);
    }
    const int64_t crc = get_i64(jt, "data_crc32", path);
    auto it = take_blob(off, size, crc, fmt::format("{} (the data of tensor {})", path, support::quote(t.name)));
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
    const int64_t crc = get_i64(ps[i], "crc32", path);
    auto it = take_blob(off, size, crc, fmt::format("{} (program {})", path, support::quote(get_str(ps[i], "name", path))));
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
      throw_user_error("executable: {}.placement {} is not 'cpu' or 'accel'", path, support::quote(pl));
    }
    s.program = static_cast<int>(get_i64(js, "program", path));
    s.input_segments = get_str_list(js, "input_segments", path);
    s.output_segments = get_str_list(js, "output_segments", path);
    for (int idx : s.inputs) check_index(idx, fmt::format("step {} input", support::quote(s.name)));
    for (int idx : s.outputs) check_index(idx, fmt::format("step {} output", support::quote(s.name)));
    if (s.placement == Placement::kAccel &&
        (s.program < 0 || s.program >= static_cast<int>(exe.programs.size()))) {
      throw_user_error("executable: step {} runs program {}, but there are {} programs", support::quote(s.name),
                       s.program, exe.programs.size());
    }
    exe.steps.push_back(std::move(s));
  }
  for (int idx : exe.inputs) check_index(idx, "graph input");
  for (int idx : exe.outputs) check_index(idx, "graph output");
  return exe;
}

void Executable::save(const std::string& path) const { support::write_file_atomic(path, serialize()); }

Executable Executable::load(const std::string& path) {
  const std::vector<uint8_t> bytes = support::read_file_bounded(path, support::kMaxModelFileBytes, "an executable");
  try {
    return deserialize(bytes);
  } catch (const UserError& e) {
    throw UserError(fmt::format("{}: {}", path, e.what()));
  }
}

}  // namespace tessel::runtime
