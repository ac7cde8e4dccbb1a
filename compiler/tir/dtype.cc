#include "compiler/tir/dtype.h"

#include <charconv>
#include <limits>

#include "support/error.h"

namespace tessel::tir {

int64_t DataType::min_value() const {
  TESSEL_CHECK(code == Code::kInt || code == Code::kUInt, "min_value of {}", str());
  if (code == Code::kUInt) return 0;
  return bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
}

int64_t DataType::max_value() const {
  TESSEL_CHECK(code == Code::kInt || code == Code::kUInt, "max_value of {}", str());
  if (code == Code::kUInt) return bits >= 63 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << bits) - 1;
  return bits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
}

std::string DataType::str() const {
  std::string s;
  switch (code) {
    case Code::kInt: s = "int" + std::to_string(bits); break;
    case Code::kUInt: s = bits == 1 ? "bool" : "uint" + std::to_string(bits); break;
    case Code::kFloat: s = "float" + std::to_string(bits); break;
    case Code::kHandle: return "handle";
  }
  if (lanes > 1) s += "x" + std::to_string(lanes);
  return s;
}

DataType DataType::parse(std::string_view text) {
  auto bad = [&]() -> DataType { throw_user_error("unknown data type '{}'", text); };
  if (text == "handle") return handle();
  std::string_view rest = text;
  Code c;
  int bits = 0;
  if (rest.substr(0, 4) == "bool") {
    c = Code::kUInt;
    bits = 1;
    rest.remove_prefix(4);
  } else {
    if (rest.substr(0, 4) == "uint") {
      c = Code::kUInt;
      rest.remove_prefix(4);
    } else if (rest.substr(0, 3) == "int") {
      c = Code::kInt;
      rest.remove_prefix(3);
    } else if (rest.substr(0, 5) == "float") {
      c = Code::kFloat;
      rest.remove_prefix(5);
    } else {
      return bad();
    }
    auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), bits);
    if (ec != std::errc() || p == rest.data()) return bad();
    rest.remove_prefix(static_cast<size_t>(p - rest.data()));
    bool ok = c == Code::kFloat ? (bits == 16 || bits == 32 || bits == 64)
                                : (bits == 8 || bits == 16 || bits == 32 || bits == 64);
    if (!ok) return bad();
  }
  int lanes = 1;
  if (!rest.empty()) {
    if (rest[0] != 'x') return bad();
    rest.remove_prefix(1);
    auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), lanes);
    if (ec != std::errc() || p != rest.data() + rest.size() || lanes < 2 || lanes > 65535) return bad();
  }
  return make(c, bits, lanes);
}

}  // namespace tessel::tir
