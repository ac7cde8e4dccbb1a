// Model inputs for the command line: tensor files (support/npy.h) matched against the shapes of a
// model's graph inputs and turned into runtime::HostTensor (float32, NCHW).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/graph_executor.h"
#include "support/npy.h"

namespace tessel::tools {

/// Shape equality after dropping every dimension of size 1 ([1,49,10,1] matches [1,1,49,10]:
/// the bytes are the same in C order).
bool same_squeezed(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

/// Makes the float32 NCHW tensor of shape `expected` (the model input `input_name`) from a file
/// tensor `t` read from `path`:
///  - `t.shape` equal to `expected`, or equal after dropping size-1 dimensions: used as is;
///  - `nhwc` true: `t` must be 4-D [N,H,W,C] with [N,C,H,W] == `expected`; it is transposed.
/// Throws UserError naming the file, both shapes and element counts otherwise; when the shapes are
/// an NHWC/NCHW permutation of each other and `nhwc` is false the message suggests --nhwc.
runtime::HostTensor to_model_input(const support::FloatTensor& t, const std::vector<int64_t>& expected,
                                   const std::string& input_name, const std::string& path, bool nhwc);

/// Reads one run input: support::read_tensor_file(path, shape), or, for a raw file with neither
/// `shape` nor a shape in its name, a float32 binary of shape `expected`; then to_model_input().
/// Throws IoError / UserError as those do.
runtime::HostTensor load_input(const std::string& path, const std::optional<std::vector<int64_t>>& shape,
                               const std::vector<int64_t>& expected, const std::string& input_name,
                               bool nhwc);

/// Reads calibration samples for a single-input model of input shape `expected`. A file holding
/// k times the elements of `expected` (k >= 1) is split along its first dimension into k samples
/// (its first dimension must then be k * expected[0], and the remaining dimensions must match
/// expected[1:] as in to_model_input); e.g. "t10k_first16_u8_16x28x28.bin" gives 16 samples of
/// [1,1,28,28]. Raw files without a shape in their name are float32 of shape `expected` (or a
/// multiple of it). Returns one input set (one HostTensor) per sample, in file order.
/// Throws UserError when a file's element count is not a positive multiple of `expected`'s.
std::vector<std::vector<runtime::HostTensor>> load_calibration(const std::vector<std::string>& files,
                                                               const std::vector<int64_t>& expected,
                                                               const std::string& input_name,
                                                               bool nhwc);

/// A float32 HostTensor of `shape` holding `values` (values.size() must equal the element count;
/// InternalError otherwise).
runtime::HostTensor make_f32_tensor(const std::vector<int64_t>& shape, const std::vector<float>& values);
/// The values of a HostTensor as float: kF32 as stored, kI8/kI32/kI64 converted by value.
std::vector<float> tensor_values(const runtime::HostTensor& t);

}  // namespace tessel::tools
