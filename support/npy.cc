#include "support/npy.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>

#include "support/atomic_file.h"
#include "support/checked.h"
#include "support/error.h"
#include "support/file_read.h"
#include "support/text.h"

namespace tessel::support {
namespace {

constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr size_t kNpyMagicLen = 6;

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The float64 at `p` (byte order `big`).
double load_f64(const uint8_t* p, bool big) {
  uint64_t u = 0;
  for (int i = 0; i < 8; ++i) u |= uint64_t{p[big ? 7 - i : i]} << (8 * i);
  return std::bit_cast<double>(u);
}

// Reads one element of `dtype` at `p` (byte order `big`) as float.
float load_element(const uint8_t* p, FileDType dtype, bool big) {
  switch (dtype) {
    case FileDType::kU8:
      return static_cast<float>(p[0]);
    case FileDType::kI8:
      return static_cast<float>(static_cast<int8_t>(p[0]));
    case FileDType::kF32: {
      uint32_t u = 0;
      for (int i = 0; i < 4; ++i) u |= uint32_t{p[big ? 3 - i : i]} << (8 * i);
      return std::bit_cast<float>(u);
    }
    case FileDType::kF64:
      return static_cast<float>(load_f64(p, big));
  }
  throw_internal_error("unhandled file dtype {}", static_cast<int>(dtype));
}

// The elements as float32. A finite float64 beyond float32's range would become an infinity
// and be reported as "non-finite" later: it is an error here, naming the file (`what`, quoted)
// and the element.
std::vector<float> convert(const uint8_t* p, size_t count, FileDType dtype, bool big, const std::string& what) {
  std::vector<float> out(count);
  const size_t eb = file_dtype_bytes(dtype);
  for (size_t i = 0; i < count; ++i) {
    out[i] = load_element(p + i * eb, dtype, big);
    if (dtype == FileDType::kF64 && std::isinf(out[i])) {
      if (const double d = load_f64(p + i * eb, big); std::isfinite(d)) {
        throw_user_error("{} element {} is {:g}, beyond float32's range (+-{:g}); the model's tensors are float32",
                         what, i, d, static_cast<double>(std::numeric_limits<float>::max()));
      }
    }
  }
  return out;
}

// A minimal parser for the header dict NumPy writes: {'key': value, ...} with string, bool and
// tuple-of-int values.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& what) : s_(text), what_(what) {}

  void parse(std::string& descr, bool& fortran, std::vector<int64_t>& shape) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    skip_ws();
    expect('{');
    while (true) {
      skip_ws();
      if (peek() == '}') break;
      const std::string key = parse_string();
      skip_ws();
      expect(':');
      skip_ws();
      if (key == "descr") {
        descr = parse_string();
        have_descr = true;
      } else if (key == "fortran_order") {
        fortran = parse_bool();
        have_fortran = true;
      } else if (key == "shape") {
        shape = parse_tuple();
        have_shape = true;
      } else {
        fail(fmt::format("unknown header key {}", support::quote(key)));
      }
      skip_ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      skip_ws();
      if (peek() != '}') fail(fmt::format("expected ',' or '}}' at header byte {}", i_));
    }
    if (!have_descr || !have_fortran || !have_shape) {
      fail("header lacks one of 'descr', 'fortran_order', 'shape'");
    }
    ++i_;  // the '}'
    // Only the padding follows the dict: spaces and the final newline.
    for (size_t k = i_; k < s_.size(); ++k) {
      if (s_[k] != ' ' && !(s_[k] == '\n' && k + 1 == s_.size())) {
        fail(fmt::format("header byte {} after the dict is {}, not the space padding", k,
                         support::quote(std::string_view(&s_[k], 1))));
      }
    }
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw_user_error("malformed .npy file {}: {}", what_, why);
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n')) ++i_;
  }
  void expect(char c) {
    if (peek() != c) fail(fmt::format("expected {} at header byte {}", support::quote(std::string_view(&c, 1)), i_));
    ++i_;
  }
  std::string parse_string() {
    const char q = peek();
    if (q != '\'' && q != '"') fail(fmt::format("expected a quoted string at header byte {}", i_));
    ++i_;
    const size_t end = s_.find(q, i_);
    if (end == std::string::npos) fail("unterminated string in header");
    std::string out = s_.substr(i_, end - i_);
    i_ = end + 1;
    return out;
  }
  bool parse_bool() {
    if (s_.compare(i_, 4, "True") == 0) {
      i_ += 4;
      return true;
    }
    if (s_.compare(i_, 5, "False") == 0) {
      i_ += 5;
      return false;
    }
    fail(fmt::format("expected True or False at header byte {}", i_));
  }
  std::vector<int64_t> parse_tuple() {
    expect('(');
    std::vector<int64_t> dims;
    while (true) {
      skip_ws();
      if (peek() == ')') {
        ++i_;
        break;
      }
      if (!std::isdigit(static_cast<unsigned char>(peek()))) {
        fail(fmt::format("expected a dimension at header byte {}", i_));
      }
      int64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) fail("dimension too large");
        v = v * 10 + (s_[i_++] - '0');
      }
      if (peek() == 'L') ++i_;  // Python 2 long suffix
      dims.push_back(v);
      skip_ws();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      skip_ws();
      if (peek() != ')') fail(fmt::format("expected ',' or ')' at header byte {}", i_));
    }
    return dims;
  }

  const std::string& s_;
  const std::string& what_;
  size_t i_ = 0;
};

}  // namespace

const char* to_string(FileDType t) {
  switch (t) {
    case FileDType::kF32: return "f32";
    case FileDType::kF64: return "f64";
    case FileDType::kU8: return "u8";
    case FileDType::kI8: return "i8";
  }
  return "?";
}

std::optional<FileDType> parse_file_dtype(const std::string& s) {
  if (s == "f32") return FileDType::kF32;
  if (s == "f64") return FileDType::kF64;
  if (s == "u8") return FileDType::kU8;
  if (s == "i8") return FileDType::kI8;
  return std::nullopt;
}

size_t file_dtype_bytes(FileDType t) {
  switch (t) {
    case FileDType::kF32: return 4;
    case FileDType::kF64: return 8;
    case FileDType::kU8:
    case FileDType::kI8: return 1;
  }
  return 0;
}

int64_t num_elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw_user_error("negative dimension {} in shape {}", d, shape_to_string(shape));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) {
      throw_user_error("shape {} has too many elements", shape_to_string(shape));
    }
    n *= d;
  }
  return n;
}

std::string shape_to_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::vector<int64_t> parse_shape(const std::string& text) {
  std::vector<int64_t> dims;
  if (text.empty()) throw_user_error("empty shape");
  size_t i = 0;
  while (i <= text.size()) {
    size_t j = text.find_first_of(",x", i);
    if (j == std::string::npos) j = text.size();
    const std::string tok = text.substr(i, j - i);
    if (tok.empty() || tok.size() > 12 ||
        !std::all_of(tok.begin(), tok.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      throw_user_error("bad shape {}: {} is not a positive integer", support::quote(text), support::quote(tok));
    }
    const int64_t v = std::stoll(tok);
    if (v <= 0) throw_user_error("bad shape {}: dimension {} is not positive", support::quote(text), v);
    dims.push_back(v);
    i = j + 1;
  }
  num_elements(dims);  // overflow check
  return dims;
}

FloatTensor decode_npy(const std::vector<uint8_t>& bytes, const std::string& what_in) {
  const std::string what = support::quote(what_in);
  if (bytes.size() < kNpyMagicLen + 4 || std::memcmp(bytes.data(), kNpyMagic, kNpyMagicLen) != 0) {
    throw_user_error("malformed .npy file {}: missing the \\x93NUMPY magic ({} bytes in file)", what,
                     bytes.size());
  }
  const int major = bytes[6];
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = size_t{bytes[8]} | size_t{bytes[9]} << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw_user_error("malformed .npy file {}: truncated header", what);
    header_len = size_t{bytes[8]} | size_t{bytes[9]} << 8 | size_t{bytes[10]} << 16 |
                 size_t{bytes[11]} << 24;
    header_start = 12;
  } else {
    throw_user_error("unsupported .npy version {}.{} in {} (1.0, 2.0 and 3.0 are supported)", major,
                     int{bytes[7]}, what);
  }
  if (header_len > bytes.size() - header_start) {
    throw_user_error("malformed .npy file {}: header of {} bytes but only {} bytes follow", what,
                     header_len, bytes.size() - header_start);
  }
  const std::string header(reinterpret_cast<const char*>(bytes.data() + header_start), header_len);
  // The format: an ASCII Python literal dict, padded with spaces and terminated by '\n'. Any
  // other byte (a NUL, a control byte, a non-ASCII byte) makes it no such literal: NumPy rejects
  // it, and so does Tessel.
  if (header.empty() || header.back() != '\n') {
    throw_user_error("malformed .npy file {}: the header of {} bytes does not end with a newline", what,
                     header_len);
  }
  for (size_t i = 0; i + 1 < header.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(header[i]);
    if (c < 0x20 || c > 0x7e) {
      throw_user_error("malformed .npy file {}: header byte {} is 0x{:02x}, not printable ASCII (the header "
                       "is a Python literal padded with spaces and ended by one newline)",
                       what, i, c);
    }
  }
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
  HeaderParser(header, what).parse(descr, fortran, shape);
  if (fortran) throw_user_error("unsupported .npy file {}: fortran_order is True (C order only)", what);
  // descr is a byte order ('<', '>', '|', '=') and a kind ("f4"); NumPy also reads a kind without
  // the order ("u1": native order, which for 1-byte kinds is no order at all).
  const bool has_order = !descr.empty() && std::string_view("<>|=").find(descr[0]) != std::string_view::npos;
  const char order = has_order ? descr[0] : '=';
  const std::string kind = has_order ? descr.substr(1) : descr;
  std::optional<FileDType> dtype;
  if (kind == "f4") dtype = FileDType::kF32;
  if (kind == "f8") dtype = FileDType::kF64;
  if (kind == "u1") dtype = FileDType::kU8;
  if (kind == "i1") dtype = FileDType::kI8;
  if (!dtype) {
    throw_user_error("unsupported .npy dtype {} in {} (float32, float64, uint8 and int8 are read)",
                     support::quote(descr), what);
  }
  int64_t count = 0;
  try {
    count = num_elements(shape);
  } catch (const UserError& e) {
    throw_user_error("malformed .npy file {}: {}", what, e.what());
  }
  const size_t data_start = header_start + header_len;
  const size_t have = bytes.size() - data_start;
  const size_t eb = file_dtype_bytes(*dtype);
  if (static_cast<uint64_t>(count) > std::numeric_limits<size_t>::max() / eb ||
      have != static_cast<size_t>(count) * eb) {
    throw_user_error("malformed .npy file {}: shape {} of {} needs {} data bytes but the file has {}",
                     what, shape_to_string(shape), descr, static_cast<uint64_t>(count) * eb, have);
  }
  FloatTensor t;
  t.shape = shape;
  t.source_dtype = *dtype;
  t.data = convert(bytes.data() + data_start, static_cast<size_t>(count), *dtype, order == '>', what);
  return t;
}

FloatTensor read_npy(const std::string& path) {
  return decode_npy(read_file_bounded(path, kMaxTensorFileBytes, "a .npy tensor file"), path);
}

std::vector<uint8_t> encode_npy_f32(const std::vector<int64_t>& shape, const std::vector<float>& data) {
  const int64_t count = num_elements(shape);
  if (static_cast<uint64_t>(count) != data.size()) {
    throw_user_error("cannot write .npy: shape {} has {} elements but {} values were given",
                     shape_to_string(shape), count, data.size());
  }
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) dims += ", ";
    dims += std::to_string(shape[i]);
  }
  if (shape.size() == 1) dims += ",";  // NumPy writes a 1-tuple as "(5,)"
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  const size_t unpadded = kNpyMagicLen + 4 + header.size() + 1;  // +1 for the final '\n'
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out(kNpyMagic, kNpyMagic + kNpyMagicLen);
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<uint8_t>(header.size() & 0xff));
  out.push_back(static_cast<uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  for (float f : data) {
    const uint32_t u = std::bit_cast<uint32_t>(f);
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(u >> (8 * i)));
  }
  return out;
}

void write_npy_f32(const std::string& path, const std::vector<int64_t>& shape,
                   const std::vector<float>& data) {
  write_file_bytes(path, encode_npy_f32(shape, data));
}

namespace {

// "f32", "u16", "q7", "int8", "bf16": letters of a numeric type followed by a bit count.
bool looks_like_dtype(const std::string& s) {
  static const char* const kPrefixes[] = {"f", "u", "i", "q", "s", "bf", "fp", "int", "uint", "float"};
  const size_t digits = s.find_first_of("0123456789");
  if (digits == std::string::npos || digits == 0) return false;
  if (s.find_first_not_of("0123456789", digits) != std::string::npos) return false;
  const std::string prefix = s.substr(0, digits);
  return std::any_of(std::begin(kPrefixes), std::end(kPrefixes), [&](const char* p) { return prefix == p; });
}

}  // namespace

std::optional<NameSpec> spec_from_file_name(const std::string& path) {
  std::string name = base_name(path);
  if (!ends_with(name, ".bin")) return std::nullopt;
  name.resize(name.size() - 4);
  // ..._<dtype>_<dims>
  const size_t us2 = name.find_last_of('_');
  if (us2 == std::string::npos || us2 == 0) return std::nullopt;
  const size_t us1 = name.find_last_of('_', us2 - 1);
  if (us1 == std::string::npos) return std::nullopt;
  const std::string dtype_text = name.substr(us1 + 1, us2 - us1 - 1);
  const std::string dims = name.substr(us2 + 1);
  const auto dtype = parse_file_dtype(dtype_text);
  // A dims token made of digits and 'x' (starting with a digit) marks the pattern.
  const bool dims_like = !dims.empty() && dims[0] >= '0' && dims[0] <= '9' &&
                         dims.find_first_not_of("0123456789x") == std::string::npos;
  if (!dtype) {
    if (dims_like && looks_like_dtype(dtype_text)) {
      throw_user_error("{}: element type {} in the file name suffix '_{}_{}' is not one of f32, u8, i8, f64",
                       support::quote(path), support::quote(dtype_text), dtype_text, dims);
    }
    return std::nullopt;
  }
  if (!dims_like) {
    // A known dtype followed by something that starts like a number ("-1x28x28", "+1x1x28x28")
    // or is made of shape characters only is a malformed shape, never a name without a spec.
    if (dims.empty() || dims.find_first_not_of("0123456789x,+-") == std::string::npos ||
        dims[0] == '+' || dims[0] == '-' || (dims[0] >= '0' && dims[0] <= '9')) {
      throw_user_error("{}: the file name suffix '_{}_{}' has no valid shape (expected dimensions like "
                       "1x3x224x224)",
                       support::quote(path), dtype_text, dims);
    }
    return std::nullopt;
  }
  try {
    return NameSpec{*dtype, parse_shape(dims)};
  } catch (const UserError& e) {
    throw_user_error("{}: the file name suffix '_{}_{}' has a malformed shape: {}", support::quote(path), dtype_text, dims,
                     e.what());
  }
}

FloatTensor read_raw(const std::string& path, FileDType dtype, const std::vector<int64_t>& shape) {
  const uint64_t count = static_cast<uint64_t>(num_elements(shape));
  const uint64_t want = support::checked_mul(static_cast<int64_t>(count), static_cast<int64_t>(file_dtype_bytes(dtype)),
                                             "raw tensor file");
  // The shape says how long the file is: reading stops one byte past it (an endless /dev/zero
  // included).
  const std::vector<uint8_t> bytes =
      read_file_bounded(path, want, fmt::format("shape {} of {}", shape_to_string(shape), to_string(dtype)));
  if (bytes.size() != want) {
    throw_user_error("{} holds {} bytes but shape {} of {} needs {} bytes", support::quote(path), bytes.size(),
                     shape_to_string(shape), to_string(dtype), want);
  }
  FloatTensor t;
  t.shape = shape;
  t.source_dtype = dtype;
  t.data = convert(bytes.data(), count, dtype, false, support::quote(path));
  return t;
}

FloatTensor read_tensor_file(const std::string& path, const std::optional<std::vector<int64_t>>& shape) {
  if (ends_with(path, ".npy")) {
    FloatTensor t = read_npy(path);
    // The file's header is the truth about its bytes: a --shape that says otherwise would
    // reinterpret them (NHWC data read as NCHW), so it is an error, never a reshape.
    if (shape && *shape != t.shape) {
      throw_user_error("{} holds shape {} ({}, {} elements) by its .npy header, but --shape gives {} ({} "
                       "elements); drop --shape (the header is used){}",
                       quote(path), shape_to_string(t.shape), to_string(t.source_dtype), t.data.size(),
                       shape_to_string(*shape), num_elements(*shape),
                       t.shape.size() == 4 && shape->size() == 4 && t.shape[0] == (*shape)[0] &&
                               t.shape[1] == (*shape)[2] && t.shape[2] == (*shape)[3] && t.shape[3] == (*shape)[1]
                           ? ", and pass --nhwc if the data is NHWC"
                           : "");
    }
    return t;
  }
  const auto spec = spec_from_file_name(path);
  if (!shape && !spec) {
    throw_user_error(
        "{} is a raw binary without a shape: pass --shape (e.g. --shape 1,3,224,224) or name it "
        "like x_f32_1x3x224x224.bin",
        quote(path));
  }
  // A shape in the file name is the file's own: --shape must agree with it.
  if (shape && spec && *shape != spec->shape) {
    throw_user_error("{} holds shape {} by its file name, but --shape gives {}; drop --shape (the name is used)",
                     quote(path), shape_to_string(spec->shape), shape_to_string(*shape));
  }
  return read_raw(path, spec ? spec->dtype : FileDType::kF32, shape ? *shape : spec->shape);
}

void write_file_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  write_file_atomic(path, bytes);
}

}  // namespace tessel::support
