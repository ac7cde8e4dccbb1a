// Internal helpers of the CPU kernels (runtime/cpu/*.cc): error messages that name the step,
// argument and attribute checks, and numpy-style broadcasting. Not part of the runtime's API.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/cpu/kernels.h"
#include "support/error.h"

namespace tessel::runtime::cpu::detail {

/// "step 'name' (op)" for messages.
std::string where(const Step& step);

/// Throws UserError("<where>: <message>").
[[noreturn]] void fail(const KernelCall& call, const std::string& message);

/// Checks the number of inputs (exactly `n_in`, or at least `min_in` when n_in < 0) and outputs.
void check_arity(const KernelCall& call, int n_in, int n_out, int min_in = 0);
/// Checks dtype (and rank when rank >= 0) and that the tensor is in NCHW (plain) layout.
void check_tensor(const KernelCall& call, const TensorDesc& d, std::string_view role, DType dtype,
                  int rank = -1, bool plain_layout = true);
/// Checks that a quantised tensor's scale is finite and positive.
void check_scale(const KernelCall& call, const TensorDesc& d, std::string_view role);
/// Checks that two tensors have equal shapes.
void check_same_shape(const KernelCall& call, const TensorDesc& a, std::string_view ra,
                      const TensorDesc& b, std::string_view rb);

/// Attribute readers: a missing key returns the default when one is given, otherwise throws.
int64_t attr_int(const Step& step, const std::string& key, const int64_t* dflt);
bool attr_bool(const Step& step, const std::string& key, bool dflt);
/// An optional finite number (integer or floating): nullopt when the key is absent; throws when
/// it is present but not a finite number.
std::optional<double> attr_finite_number(const Step& step, const std::string& key);
/// A list of exactly `n` integers.
std::vector<int64_t> attr_ints(const Step& step, const std::string& key, size_t n,
                               const std::vector<int64_t>* dflt);

/// The broadcast shape of a and b (ONNX/numpy rules); throws naming the step when incompatible.
std::vector<int64_t> broadcast_shape(const KernelCall& call, const std::vector<int64_t>& a,
                                     const std::vector<int64_t>& b);
/// For an input of shape `in` broadcast to `out`: the element offset into the input of every
/// output element, in output order.
std::vector<int64_t> broadcast_offsets(const std::vector<int64_t>& in,
                                       const std::vector<int64_t>& out);

/// Pooling geometry shared by the int8 and float pools.
struct PoolGeom {
  int64_t n = 0, c = 0, ih = 0, iw = 0, oh = 0, ow = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, pt = 0, pl = 0, pb = 0, pr = 0;
  bool count_include_pad = false;
};
/// Reads kernel/stride/pads/ceil_mode (and count_include_pad when `avg`), checks the output
/// shape; input and output are the call's tensor 0.
PoolGeom pool_geom(const KernelCall& call, bool avg);

/// Throws UserError("qconv2d: invalid parameters ...") unless the QConv2dParams are consistent
/// (positive sizes and strides, non-negative pads, groups dividing both channel counts, kernel
/// within the padded input, 1 or OC multipliers and shifts), and UserError("qconv2d: working
/// memory of N bytes ...") when qconv2d_scratch_bytes(p) exceeds runtime::kMaxTensorBytes.
void check_qconv2d_params(const QConv2dParams& p);

/// Accumulators per output channel per tile of qconv2d() (8 KiB of int32), and the element count
/// its inner-loop runs are rounded up to.
inline constexpr int64_t kQConvTileElems = 2048;
inline constexpr int64_t kQConvRunAlign = 16;

/// The geometry and buffer sizes (in elements) of one qconv2d() call: the one place they are
/// computed, so that qconv2d() allocates exactly what qconv2d_scratch_bytes() reports. Every
/// product and sum is overflow-checked (UserError "qconv2d: working memory ... overflows ...").
/// `p` must pass check_qconv2d_params' shape checks (its working-memory bound excepted).
struct QConvScratch {
  int64_t ph2 = 0, pw2 = 0;      ///< rows and row pitch of one stride-phase plane
  int64_t plane = 0, chan = 0;   ///< elements of one phase plane / of one channel (all phases)
  int64_t tile_rows = 0;         ///< output rows per accumulator tile
  int64_t tile = 0;              ///< accumulators per output channel per tile (run-aligned)
  int64_t pad_elems = 0;         ///< int16 elements of the padded, phase-split input copy
  int64_t acc_elems = 0;         ///< int32 accumulators (4 channels per block)
  int64_t taps = 0;              ///< taps per output channel: IC/groups * KH * KW
  int64_t weight_elems = 0;      ///< int32 weight copy: OC * taps
  /// Bytes of all of the above (plus the int64 tap offsets).
  int64_t bytes = 0;
};
QConvScratch qconv_scratch(const QConv2dParams& p);

}  // namespace tessel::runtime::cpu::detail
