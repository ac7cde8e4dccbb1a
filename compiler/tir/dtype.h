// TIR data types: a scalar type code, a bit width and a lane count (vectors), as Halide's Type
// and TVM's DataType. Text forms: "int32", "uint8", "float32", "bool", "handle", and
// "<scalar>x<lanes>" for vectors ("int8x16", "boolx4").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tessel::tir {

/// A value type of the loop IR. Plain value; compare with ==.
struct DataType {
  enum class Code : uint8_t { kInt = 0, kUInt = 1, kFloat = 2, kHandle = 3 };
  Code code = Code::kInt;
  uint8_t bits = 32;   ///< bits per lane: 1 (bool), 8, 16, 32, 64
  uint16_t lanes = 1;  ///< 1 for scalars

  static constexpr DataType make(Code c, int bits, int lanes = 1) {
    return DataType{c, static_cast<uint8_t>(bits), static_cast<uint16_t>(lanes)};
  }
  static constexpr DataType int8(int lanes = 1) { return make(Code::kInt, 8, lanes); }
  static constexpr DataType int16(int lanes = 1) { return make(Code::kInt, 16, lanes); }
  static constexpr DataType int32(int lanes = 1) { return make(Code::kInt, 32, lanes); }
  static constexpr DataType int64(int lanes = 1) { return make(Code::kInt, 64, lanes); }
  static constexpr DataType uint8(int lanes = 1) { return make(Code::kUInt, 8, lanes); }
  static constexpr DataType uint32(int lanes = 1) { return make(Code::kUInt, 32, lanes); }
  static constexpr DataType float32(int lanes = 1) { return make(Code::kFloat, 32, lanes); }
  static constexpr DataType float64(int lanes = 1) { return make(Code::kFloat, 64, lanes); }
  /// Booleans are 1-bit unsigned integers (the result type of comparisons).
  static constexpr DataType bool_(int lanes = 1) { return make(Code::kUInt, 1, lanes); }
  /// An opaque pointer: the data variable of a buffer.
  static constexpr DataType handle() { return make(Code::kHandle, 64, 1); }

  constexpr bool is_int() const { return code == Code::kInt; }
  constexpr bool is_uint() const { return code == Code::kUInt && bits != 1; }
  constexpr bool is_bool() const { return code == Code::kUInt && bits == 1; }
  /// Signed or unsigned integer, not bool.
  constexpr bool is_integer() const { return is_int() || is_uint(); }
  constexpr bool is_float() const { return code == Code::kFloat; }
  constexpr bool is_handle() const { return code == Code::kHandle; }
  constexpr bool is_scalar() const { return lanes == 1; }
  constexpr bool is_vector() const { return lanes > 1; }
  /// The scalar type of one lane.
  constexpr DataType element_of() const { return make(code, bits, 1); }
  /// The same scalar type with `n` lanes.
  constexpr DataType with_lanes(int n) const { return make(code, bits, n); }
  /// Bytes per lane, rounded up (bool = 1).
  constexpr int bytes() const { return (bits + 7) / 8; }

  /// The smallest and largest value of an integer or bool lane type (int64 range for 64-bit
  /// unsigned is clipped to INT64_MAX). InternalError for float/handle.
  int64_t min_value() const;
  int64_t max_value() const;

  /// Text form (see the file comment).
  std::string str() const;
  /// Parses the text form; UserError naming the text for anything else.
  static DataType parse(std::string_view text);

  friend constexpr bool operator==(const DataType& a, const DataType& b) {
    return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
  }
  friend constexpr bool operator!=(const DataType& a, const DataType& b) { return !(a == b); }
};

}  // namespace tessel::tir
