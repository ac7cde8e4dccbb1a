// Tensor files for the command line and the tests: NumPy .npy (format versions 1.0, 2.0, 3.0) and
// raw little-endian binaries whose element type and shape are given by the caller or by the file
// name (e.g. "imagenet_cat_f32_1x3x224x224.bin", "t10k_first16_u8_16x28x28.bin").
//
// The .npy layout follows NumPy's format specification (numpy/lib/format.py, "NEP 1"): the magic
// "\x93NUMPY", a major and minor version byte, a little-endian header length (2 bytes for 1.0,
// 4 bytes for 2.0 and 3.0), an ASCII Python-dict header with the keys 'descr', 'fortran_order'
// and 'shape', then the raw data in C order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessel::support {

/// Element types Tessel reads from tensor files. Every reader converts them to float32 by value
/// (a uint8 255 becomes 255.0f; no scaling).
enum class FileDType : uint8_t { kF32 = 0, kF64 = 1, kU8 = 2, kI8 = 3 };

/// The short name used in file names and messages: "f32", "f64", "u8", "i8".
const char* to_string(FileDType t);
/// Parses "f32", "f64", "u8", "i8"; std::nullopt for anything else.
std::optional<FileDType> parse_file_dtype(const std::string& s);
/// Bytes per element of `t` (4, 8, 1, 1).
size_t file_dtype_bytes(FileDType t);

/// A dense float32 tensor in C (row-major) order. data.size() == product of shape (1 for a
/// 0-d shape).
struct FloatTensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
  /// What the values were stored as in the file they came from.
  FileDType source_dtype = FileDType::kF32;
};

/// Product of the dimensions (1 for an empty shape). Throws UserError on a negative dimension
/// or when the product overflows int64.
int64_t num_elements(const std::vector<int64_t>& shape);
/// "[1, 3, 224, 224]".
std::string shape_to_string(const std::vector<int64_t>& shape);
/// Parses "1,3,224,224" or "1x3x224x224" (positive integers only). Throws UserError naming the
/// text and the offending token.
std::vector<int64_t> parse_shape(const std::string& text);

/// Decodes an in-memory .npy file. Supported 'descr' values: '<f4', '>f4', '<f8', '>f8', '|u1',
/// '|i1' (also written '<u1', '<i1'...); C order only. Throws UserError naming `what` (the file
/// name for messages) on a bad magic, an unsupported version or dtype, fortran_order True, a
/// malformed header, or a data size that differs from the header's shape.
FloatTensor decode_npy(const std::vector<uint8_t>& bytes, const std::string& what);
/// Reads (at most kMaxTensorFileBytes, support/file_read.h) and decodes a .npy file. Throws
/// IoError if the file cannot be read, UserError as above or when it is longer.
FloatTensor read_npy(const std::string& path);

/// Encodes a float32 tensor as a version 1.0 .npy ('<f4', C order). The header is padded with
/// spaces so that the data starts at a multiple of 64 bytes (the format's alignment). Throws UserError
/// when data.size() differs from the product of `shape`.
std::vector<uint8_t> encode_npy_f32(const std::vector<int64_t>& shape, const std::vector<float>& data);
/// Writes encode_npy_f32() to `path` atomically (write_file_bytes); throws IoError if the file
/// cannot be written.
void write_npy_f32(const std::string& path, const std::vector<int64_t>& shape,
                   const std::vector<float>& data);

/// Element type and shape encoded in a raw tensor file name: the last "_<dtype>_<d0>x<d1>x..."
/// before the ".bin" extension, e.g. "kws_sample6_f32_1x1x49x10.bin" -> (f32, [1,1,49,10]).
struct NameSpec {
  FileDType dtype = FileDType::kF32;
  std::vector<int64_t> shape;
};
/// Returns the spec for names that follow the pattern, std::nullopt for names that do not. Throws
/// UserError for a name that has the pattern but is malformed: a known dtype followed by a bad
/// shape ("x_f32_0x28.bin", "x_f32_1xx28.bin", "x_f32_.bin") or a dtype-like token that is not
/// f32/u8/i8/f64 followed by a shape ("x_q7_1x1x28x28.bin").
std::optional<NameSpec> spec_from_file_name(const std::string& path);

/// Reads a raw little-endian binary of `dtype` elements with `shape`. Throws IoError if the file
/// cannot be read and UserError when its size is not exactly num_elements(shape) * element bytes
/// (the message gives both byte counts and the shape); reading stops one byte past that size, so
/// an endless file (/dev/zero) is "holds more than N bytes, the limit for shape [..] of f32".
FloatTensor read_raw(const std::string& path, FileDType dtype, const std::vector<int64_t>& shape);

/// Reads a tensor file by extension: ".npy" -> read_npy; anything else is a raw binary whose
/// dtype and shape come from spec_from_file_name(), float32 when the name has no spec. `shape`
/// (--shape) may only say what the file itself says: a .npy header's shape, or the shape in a raw
/// file's name, must equal it exactly (UserError naming the file and both shapes otherwise, with
/// a --nhwc hint when they are an NHWC/NCHW permutation); it gives the shape of a raw file whose
/// name has none. Throws UserError when a raw file has neither a shape in its name nor `shape`,
/// and as read_npy / read_raw (a raw file whose byte size disagrees with its shape).
FloatTensor read_tensor_file(const std::string& path,
                             const std::optional<std::vector<int64_t>>& shape = std::nullopt);

// Files are read with support/file_read.h read_file_bounded(), a limit for each kind.
/// Writes a whole file atomically (support/atomic_file.h: a temporary file renamed over `path`, so a
/// failure leaves the previous file as it was); throws IoError("cannot write <path>: <reason>").
void write_file_bytes(const std::string& path, const std::vector<uint8_t>& bytes);

}  // namespace tessel::support
