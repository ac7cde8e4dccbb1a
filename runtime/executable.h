// The executable format the compiler writes and the runtime's graph executor runs: typed tensors,
// an ordered list of steps (CPU kernels and accelerator Programs), and the Programs themselves.
// Serialised as one binary file (".tsx"): magic "TSLEXEC1", format version, checksummed JSON header,
// then raw blobs, each with its CRC-32 in the header.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "isa/config.h"
#include "isa/program.h"

namespace tessel::runtime {

/// The largest tensor (activation, constant or kernel workspace) Tessel allocates: 1 GiB, in
/// bytes of the tensor's layout. The compiler rejects a model any of whose tensors (after shape
/// inference) is larger, naming the node and the size, before anything is allocated; the
/// executable loader and the graph executor check it again for executables from elsewhere.
inline constexpr int64_t kMaxTensorBytes = int64_t{1} << 30;
/// The largest sum of the bytes of all tensors of one executable (what the graph executor may
/// hold at once): 8 GiB.
inline constexpr int64_t kMaxTotalTensorBytes = int64_t{8} << 30;

/// Element types. Quantised tensors are always kI8 with QuantParams (uint8 models are shifted
/// by -128 at import).
enum class DType : uint8_t { kF32 = 0, kI8 = 1, kI32 = 2, kI64 = 3 };
/// "f32", "i8", "i32", "i64" (the names used in the serialised header and in messages).
std::string_view to_string(DType t);
/// Bytes per element: 4, 1, 4, 8.
size_t dtype_bytes(DType t);

/// Memory layouts. kNCHWnc is VTA's packed activation layout [N/n][C/c][H][W][n][c] with
/// n = BATCH and c = BLOCK (the tensor's `block_n`, `block_c`); channels are zero-padded up to a
/// multiple of c. Shapes are always stored logically (NCHW) in TensorDesc::shape.
enum class Layout : uint8_t { kNCHW = 0, kNCHWnc = 1 };

/// real = scale * (q - zero_point).
struct QuantParams {
  float scale = 1.0f;
  int32_t zero_point = 0;
  bool operator==(const QuantParams&) const = default;
};

/// A tensor of the executable: an input, an output, an intermediate, or a constant.
struct TensorDesc {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;          ///< logical shape (NCHW order for 4-D)
  Layout layout = Layout::kNCHW;
  int32_t block_n = 1, block_c = 1;    ///< for kNCHWnc
  bool quantized = false;
  QuantParams quant;
  std::vector<uint8_t> data;           ///< constant contents (little-endian), empty otherwise
  bool is_constant() const { return !data.empty(); }
  /// Product of the logical shape (1 for a scalar). UserError on a negative dimension or an
  /// element count that overflows int64.
  int64_t num_elements() const;
  /// Bytes of the tensor in its layout (NCHWnc rounds N and C up to the blocks). UserError as
  /// num_elements(), and for an NCHWnc tensor that is not 4-D or has non-positive blocks.
  int64_t size_bytes() const;
};

/// Where a step runs.
enum class Placement : uint8_t { kCpu = 0, kAccel = 1 };

/// One step. `op` names a CPU kernel of runtime/cpu/kernels.h (e.g. "qconv2d", "maxpool",
/// "quantize"); a step with placement kAccel runs `programs[program]` on the device, and its
/// `op`/`attrs` still describe the same computation so the runtime can run it on the CPU too
/// (to time the CPU and to check the accelerator bit-exactly).
struct Step {
  std::string name;             ///< ONNX node name(s) it came from, for reports and errors
  std::string op;
  std::vector<int> inputs;      ///< tensor indices
  std::vector<int> outputs;     ///< tensor indices
  nlohmann::json attrs = nlohmann::json::object();
  Placement placement = Placement::kCpu;
  int program = -1;             ///< index into Executable::programs when placement is kAccel
  /// For kAccel: which Program segment each input/output binds to (same order as inputs /
  /// outputs); tensors bound to segments must be in the layout the Program expects.
  std::vector<std::string> input_segments, output_segments;
};

/// A compiled model.
struct Executable {
  isa::HwConfig config;
  std::string model_name;
  /// How the compiler requantised: "exact" (every output round(acc * M) exactly), "approximate"
  /// (one 32-bit multiplier per channel, compiler CompileOptions::exact_requant false), or ""
  /// for a file written before the mode was recorded (reported as "not recorded").
  std::string requant_mode;
  std::vector<TensorDesc> tensors;
  std::vector<Step> steps;
  std::vector<isa::Program> programs;
  std::vector<int> inputs;   ///< graph inputs (tensor indices), float32 NCHW as in the ONNX model
  std::vector<int> outputs;  ///< graph outputs

  /// Byte-identical for identical executables. Layout (format version 2): "TSLEXEC1", the JSON
  /// header length H (uint64 little-endian), the format version (uint32 LE, 2), the CRC-32
  /// (zlib crc32) of the preceding 20 bytes and the header (uint32 LE), the JSON header (keys
  /// sorted, compact; tensors with dtype, shape, layout, blocks, quantisation and the offset, size
  /// and CRC-32 of their constant data, steps with all fields, programs with offset, size and
  /// CRC-32), then the blob area: constant tensor data in tensor order followed by
  /// isa::Program::serialize() of each Program, back to back.
  /// UserError if a scale is not finite (JSON cannot hold it) or a string (a tensor, step, Program
  /// or model name, an attribute) is not valid UTF-8, naming its header path and the quoted name.
  std::vector<uint8_t> serialize() const;
  /// Inverse of serialize(). Every checksum is checked before the section it covers is used, so
  /// a corrupted file is rejected before anything in it runs. Throws UserError on malformed
  /// data: short or truncated input, bad magic, a format version 1 file (older tessel) or any
  /// other version than 2, a header length past the end, a checksum mismatch (naming the
  /// section: "header", "tensors[3] (the data of tensor 'w')", "programs[0] (program 'conv')"),
  /// malformed JSON, a missing or mistyped field, an unknown dtype/layout/placement, constant data
  /// whose size does not match the shape, blobs that do not tile the blob area exactly (trailing
  /// bytes included), an invalid Program blob, or a tensor/Program index out of range.
  static Executable deserialize(const std::vector<uint8_t>& bytes);
  /// Writes serialize() to `path` atomically (support::write_file_atomic: a failure leaves the
  /// previous file as it was). Throws IoError, and UserError as serialize().
  void save(const std::string& path) const;
  /// Throws IoError when the file cannot be read, UserError (prefixed with the path) when it is
  /// malformed.
  static Executable load(const std::string& path);
};

}  // namespace tessel::runtime
