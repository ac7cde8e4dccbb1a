// Tessel's operator library on the tensor expression language (TVM's topi): the compute
// definitions of the layers the accelerator and the CPU run, as te tensors whose default
// schedule (te::create_schedule) lowers to plain loop nests. Schedules for the accelerator live
// in topi/accel/.
//
// Integer semantics. Inputs of the convolutions, dense layers and pools are int8; products are
// taken in int32 (int32(a) * int32(b)) and summed in int32, wrapping at 32 bits as
// runtime/qnn.h's qconv2d_reference does. The requantisation epilogue (topi/qnn.h) evaluates
// runtime/qnn.h's Requant chain step by step with the same 32-bit wrapping, so results are bit
// for bit those of the runtime's CPU kernels.
//
// Layouts.
//  - NCHW: activations [N][C][H][W], weights OIHW [OC][IC/groups][KH][KW].
//  - Packed NCHWnc (the accelerator's): activations [N/n][C/c][H][W][n][c] with n = BATCH and
//    c = BLOCK_IN (or BLOCK_OUT for outputs); weights [O/o][I/i][KH][KW][o][i] with o =
//    BLOCK_OUT and i = BLOCK_IN; N, C, O and I are counted in blocks here (the shapes are the
//    padded ones; padding lanes hold zero, see runtime/cpu pack_nchwnc).
//  - Dense: x [M][K], w [N][K] (ONNX Gemm with transB), out [M][N]; packed dense x
//    [M/b][K/i][b][i], w [N/o][K/i][o][i], out [M/b][N/o][b][o].
// Every function raises UserError naming the operator and the offending value when shapes,
// dtypes or attributes do not fit (the messages are lower-case sentences).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/te/operation.h"

namespace tessel::topi {

using te::Tensor;
using tir::Expr;

/// Geometry of a 2-D convolution: strides, asymmetric pads (top, left, bottom, right),
/// dilations and groups. Every stride and dilation must be >= 1, pads >= 0, groups >= 1.
struct Conv2dAttrs {
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t groups = 1;
};

/// Output extent of one spatial dimension: (in + pad_begin + pad_end - dilation * (kernel - 1)
/// - 1) / stride + 1 (floor). UserError naming `op` when the window does not fit the padded
/// input (the output would be empty).
int64_t conv_output_size(const std::string& op, int64_t in, int64_t pad_begin, int64_t pad_end, int64_t kernel,
                         int64_t stride, int64_t dilation);

/// The padded input stage of `x` (any rank >= 4, spatial dimensions 2 and 3, so both NCHW and
/// NCHWnc): shape[2] + pad_top + pad_bottom rows, shape[3] + pad_left + pad_right columns,
///   out[.., y, x, ..] = select(pad_top <= y < pad_top + H && pad_left <= x < pad_left + W,
///                              x[.., y - pad_top, x - pad_left, ..], pad_value)
/// with pad_value cast to x's dtype. Returns `x` itself when every pad is 0. UserError for a
/// tensor of rank < 4 or a negative pad.
Tensor pad_spatial(const Tensor& x, int64_t pad_top, int64_t pad_left, int64_t pad_bottom, int64_t pad_right,
                   int64_t pad_value, const std::string& name = "pad");

/// 2-D convolution in NCHW, int32 accumulators without bias:
///   x int8 [N][IC][H][W], w int8 [OC][IC/groups][KH][KW] -> out int32 [N][OC][OH][OW]
///   out[n, o, y, x] = sum over c < IC/groups, ky < KH, kx < KW of
///     (int32(xp[n, g * IC/groups + c, y * sh + ky * dh, x * sw + kx * dw]) - in_zero_point)
///       * int32(w[o, c, ky, kx]),     g = o / (OC/groups)
/// where xp is pad_spatial(x, pads, in_zero_point) (the padding is the real zero, so padded
/// taps contribute nothing). With in_zero_point 0 the product is int32(xp) * int32(w) (no
/// subtraction). Depthwise: groups = IC = OC (or OC a multiple of IC). UserError for other
/// dtypes or ranks, groups not dividing IC and OC, w's second dimension not IC/groups,
/// in_zero_point outside [-128, 127], or an empty output.
Tensor conv2d_nchw(const Tensor& x, const Tensor& w, const Conv2dAttrs& attrs, int32_t in_zero_point = 0,
                   const std::string& name = "conv2d");

/// Depthwise 2-D convolution: conv2d_nchw with groups = IC (w [IC * m][1][KH][KW]); `attrs`'
/// groups is ignored.
Tensor depthwise_conv2d_nchw(const Tensor& x, const Tensor& w, Conv2dAttrs attrs, int32_t in_zero_point = 0,
                             const std::string& name = "depthwise_conv2d");

/// 2-D convolution in packed NCHWnc, int32 accumulators without bias:
///   x int8 [N/n][IC/ic][H][W][n][ic], w int8 [OC/oc][(IC/groups)/ic][KH][KW][oc][ic]
///   -> out int32 [N/n][OC/oc][OH][OW][n][oc]
///   out[bn, bo, y, x, b, o] = sum over bc < (IC/groups)/ic, ky, kx, i < ic of
///     int32(xp[bn, g * (IC/groups)/ic + bc, y * sh + ky * dh, x * sw + kx * dw, b, i])
///       * int32(w[bo, bc, ky, kx, o, i]),     g = bo / ((OC/groups)/oc)
/// (channel counts in lanes: IC = IC/ic blocks * ic). xp = pad_spatial(x, pads, 0): the packed
/// form has no zero point (the accelerator's GEMM multiplies raw int8; the zero point is folded
/// into the bias by the caller). With groups > 1 every group must cover whole blocks on both
/// sides. UserError for other dtypes or ranks, mismatched block sizes (w's ic vs x's), groups
/// not dividing the channel blocks, or an empty output.
Tensor conv2d_nchwnc(const Tensor& x, const Tensor& w, const Conv2dAttrs& attrs, const std::string& name = "conv2d");

/// Dense layer: x int8 [M][K], w int8 [N][K] -> out int32 [M][N],
///   out[m, n] = sum over k of (int32(x[m, k]) - in_zero_point) * int32(w[n, k])
/// (int32(x) * int32(w) when in_zero_point is 0). UserError for other dtypes or ranks or
/// mismatched K.
Tensor dense(const Tensor& x, const Tensor& w, int32_t in_zero_point = 0, const std::string& name = "dense");

/// Packed dense: x int8 [M/b][K/i][b][i], w int8 [N/o][K/i][o][i] -> out int32 [M/b][N/o][b][o],
///   out[bm, bn, b, o] = sum over bk, i of int32(x[bm, bk, b, i]) * int32(w[bn, bk, o, i]).
/// UserError for other dtypes or ranks or mismatched K blocks.
Tensor dense_packed(const Tensor& x, const Tensor& w, const std::string& name = "dense");

/// Bias addition on int32 accumulators: out[idx] = acc[idx] + bias[channel(idx)], bias int32
/// [C]. NCHW: channel(idx) = idx[1]; NCHWnc (rank 6) and packed dense (rank 4 with
/// `packed`): idx[1] * lanes + idx[last]. Dense [M][N]: idx[1]. UserError when bias is not int32
/// of that many channels.
Tensor bias_add(const Tensor& acc, const Tensor& bias, bool packed = false, const std::string& name = "bias_add");

/// The channel index of element `idx` of a tensor of rank `rank` (as bias_add), and the number
/// of channels of `t`.
Expr channel_index(const std::vector<tir::Var>& idx, const Tensor& t, bool packed);
int64_t channel_count(const Tensor& t, bool packed);

/// Pool geometry (NCHW int8): kernel, strides and asymmetric pads, each pad smaller than its
/// kernel (ONNX Runtime's rule). Output sizes: floor((in + pads - kernel) / stride) + 1.
struct Pool2dAttrs {
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  bool count_include_pad = false;  ///< average pooling: divide by the padded window size
};

/// Max pooling, x int8 [N][C][H][W] -> int8 [N][C][OH][OW]:
///   out[n, c, y, x] = max over ky, kx of xp[n, c, y * sh + ky, x * sw + kx]
/// with xp padded by -128 (the lowest int8: never the maximum of a window, which always holds
/// one real element). UserError for another dtype or rank, a pad not smaller than the kernel,
/// or an empty output.
Tensor max_pool2d(const Tensor& x, const Pool2dAttrs& attrs, const std::string& name = "max_pool");

/// Average pooling with scale ratio 1 (input and output scales equal: runtime/cpu avgpool with
/// x.scale = y.scale), x int8 [N][C][H][W] -> int8 [N][C][OH][OW]:
///   s = sum over the window of int32(xp) - in_zero_point * count,  xp padded by 0
///   out = clamp(rhe(s / divisor) + out_zero_point, -128, 127)
/// where count is the number of real (unpadded) elements in the window, divisor is kh * kw
/// with count_include_pad, else count, and rhe rounds half to even (integer form: q =
/// floor(s / d), r = s - q d; q + 1 when 2r > d, q + (q mod 2) when 2r = d). UserError as
/// max_pool2d, and for zero points outside [-128, 127].
Tensor avg_pool2d(const Tensor& x, const Pool2dAttrs& attrs, int32_t in_zero_point = 0, int32_t out_zero_point = 0,
                  const std::string& name = "avg_pool");

/// Element-wise a + b for tensors of one shape and dtype (wrapping in that dtype). UserError
/// otherwise.
Tensor add(const Tensor& a, const Tensor& b, const std::string& name = "add");
/// max(x, 0) in x's dtype.
Tensor relu(const Tensor& x, const std::string& name = "relu");
/// min(max(x, lo), hi) in x's dtype; UserError when lo > hi or a bound does not fit the dtype.
Tensor clip(const Tensor& x, int64_t lo, int64_t hi, const std::string& name = "clip");
/// x converted to `dtype` (wrapping to its width).
Tensor cast(const Tensor& x, tir::DataType dtype, const std::string& name = "cast");

/// A tensor's constant extents as integers.
std::vector<int64_t> const_shape(const Tensor& t);

}  // namespace tessel::topi
