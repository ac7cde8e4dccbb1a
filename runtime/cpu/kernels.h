// The CPU kernel set of the Executable (contract: the op table below; the compiler emits these ops
// in Step::op and the graph executor runs them). Every kernel reads shapes, dtypes, layouts and
// quantisation parameters from the TensorDescs and its attributes from Step::attrs (JSON), checks
// them all before touching data, and throws tessel::UserError naming the step, the op and the
// problem ("step 'conv1' (qconv2d): input 0 has 3 dimensions, expected 4").
//
// Conventions shared by all kernels:
//  - Tensors are dense, little-endian, in the TensorDesc's dtype and layout. 4-D activations are
//    NCHW unless the op packs or unpacks NCHWnc.
//  - Quantised tensors are int8 with real = scale * (q - zero_point).
//  - "rhe" is round half to even (std::nearbyint in the default rounding mode); "sat" clamps to
//    [-128, 127].
//  - quantize/dequantize evaluate their formula in float (as ONNX QuantizeLinear /
//    DequantizeLinear define it for float32); requantize, qadd, avgpool, global_avgpool and the
//    requantisation inside concat evaluate it in double from the float scales.
//  - The integer conv (qconv2d) is bit-exact with runtime/qnn.h (32-bit wrapping accumulation).
//
// | op             | inputs -> outputs               | attrs                                      |
// |----------------|---------------------------------|--------------------------------------------|
// | quantize       | f32 -> i8                       | {}                                         |
// | dequantize     | i8 -> f32                       | {}                                         |
// | requantize     | i8 -> i8                        | {}                                         |
// | qconv2d        | x i8 NCHW, w i8 OIHW, bias i32  | stride [h,w], pads [t,l,b,r], groups,      |
// |                |   [OC] -> y i8 NCHW             | in_zero_point, requant {multiplier[],      |
// |                |                                 | shift[], out_zero_point, clip_lo, clip_hi, |
// |                |                                 | optional acc_offset[], acc_min[],          |
// |                |                                 | acc_max[], low_multiplier[][],             |
// |                |                                 | low_shift[][]} (runtime/qnn.h Requant)     |
// | qadd           | a i8, b i8 -> y i8 (broadcast)  | relu (bool, default false)                 |
// | qclip          | i8 -> i8                        | lo, hi                                     |
// | maxpool        | i8 -> i8                        | kernel, stride, pads, ceil_mode (opt.)     |
// | avgpool        | i8 -> i8                        | kernel, stride, pads, count_include_pad,   |
// |                |                                 | ceil_mode (optional)                       |
// | global_avgpool | i8 [N,C,H,W] -> i8 [N,C,1,1]    | {}                                         |
// | reshape        | any -> any (same dtype)         | {}                                         |
// | concat         | n x T -> T                      | axis (negative counts from the end)        |
// | softmax        | f32 -> f32                      | axis (default -1)                          |
// | relu_f32       | f32 -> f32                      | {}                                         |
// | clip_f32       | f32 -> f32                      | lo, hi (optional finite numbers; absent:   |
// |                |                                 | unbounded): min(max(x, lo), hi)            |
// | add_f32        | f32, f32 -> f32 (broadcast)     | {}                                         |
// | mul_f32        | f32, f32 -> f32 (broadcast)     | {}                                         |
// | conv2d_f32     | x, w [, bias] -> y (f32 NCHW)   | stride, pads, groups, dilations (opt.)     |
// | matmul_f32     | a, b -> y (ONNX MatMul)         | {}                                         |
// | maxpool_f32    | f32 -> f32                      | as maxpool                                 |
// | avgpool_f32    | f32 -> f32                      | as avgpool                                 |
// | pack_nchwnc    | i8 NCHW -> i8 NCHWnc            | {} (blocks from the output TensorDesc)     |
// | unpack_nchwnc  | i8 NCHWnc -> i8 NCHW            | {}                                         |
//
// Pool and convolution output sizes: window_output_size() below (ONNX's rule, including
// ceil_mode's dropped last window); the output TensorDesc must have exactly that shape. Pools
// need every pad smaller than the kernel (as ONNX Runtime does).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/executable.h"
#include "runtime/qnn.h"

namespace tessel::runtime::cpu {

/// A tensor as a kernel sees it: its description and its bytes (size = desc->size_bytes()).
struct ConstTensorView {
  const TensorDesc* desc = nullptr;
  const uint8_t* data = nullptr;
};
struct TensorView {
  const TensorDesc* desc = nullptr;
  uint8_t* data = nullptr;
};

/// One kernel invocation: the step (for its name, op and attrs) and its bound tensors, in the
/// order of Step::inputs / Step::outputs.
struct KernelCall {
  const Step* step = nullptr;
  std::vector<ConstTensorView> inputs;
  std::vector<TensorView> outputs;
};

/// A CPU kernel. Throws UserError on invalid shapes, dtypes, layouts or attributes.
using KernelFn = void (*)(const KernelCall& call);

/// Returns the kernel registered for `op`; throws UserError("unknown cpu op 'x' in step 'y';
/// valid ops: ...") when there is none. `step_name` is only used in the message.
KernelFn find_kernel(std::string_view op, std::string_view step_name = "");
/// True when `op` names a kernel of this set.
bool has_kernel(std::string_view op);
/// Every registered op name, sorted.
std::vector<std::string> kernel_names();
/// Looks up and runs the kernel of `call.step->op`.
void run_kernel(const KernelCall& call);

// ---- typed entry points (also used by the graph executor and tests) ----

/// Parses the qconv2d attributes of `step` and the shapes of x [N,C,H,W], w [OC,C/groups,KH,KW]
/// and y [N,OC,OH,OW] into QConv2dParams, checking every value (positive strides, non-negative
/// pads, groups dividing C and OC, w's second dimension = C/groups, y's shape = the conv's
/// output, requant ranges of runtime/qnn.h, one or OC multipliers/shifts, in_zero_point in
/// [-128, 127], the working memory of qconv2d_scratch_bytes() within runtime::kMaxTensorBytes).
/// Throws UserError naming the step and the value.
QConv2dParams parse_qconv2d(const Step& step, const TensorDesc& x, const TensorDesc& w,
                            const TensorDesc& y);
/// Parses a "requant" JSON object (see runtime/qnn.h for the fields and ranges) for `oc` output
/// channels; `where` names the step in errors. acc_offset, acc_min and acc_max may be absent
/// (0, INT32_MIN, INT32_MAX: no clamp); "low_multiplier" and "low_shift" (lists of per-channel
/// lists, one per low limb, at most kMaxLowLimbs) come together or not at all; "pre_shift" is
/// accepted only as 0 (the field of a removed double-rounding form). Throws UserError naming
/// the field and the value.
Requant parse_requant(const nlohmann::json& j, int64_t oc, std::string_view where);

/// The number of positions of a sliding window (convolution or pool) along one spatial dimension,
/// ONNX's rule: with the padded extent p = in + pad_begin + pad_end,
///   out = floor((p - kernel) / stride) + 1, or, with ceil_mode, ceil((p - kernel) / stride) + 1
/// less the last position when that window would start in the end padding (at or after
/// in + pad_begin): ONNX (and PyTorch) drop such windows. This is the one implementation of the
/// rule: the compiler's shape inference (ir::window_2d), the float reference interpreter and the
/// CPU pool and convolution kernels all call it. Sizes in elements. Returns 0 when the kernel is
/// larger than the padded extent. Throws UserError("window: ...") for in < 1, negative pads,
/// kernel or stride < 1, or a padded extent that overflows int64.
int64_t window_output_size(int64_t in, int64_t pad_begin, int64_t pad_end, int64_t kernel,
                           int64_t stride, bool ceil_mode);

/// Bytes of working memory qconv2d() allocates for `p`: the zero-point-subtracted, zero-padded
/// int16 copy of one group's input channels split into stride phases (plus its zeroed tail), the
/// int32 accumulator tiles, the int32 copy of the weights and the int64 tap offsets. Every product
/// is overflow-checked: throws UserError("qconv2d: working memory ... overflows ...") when it does
/// not fit int64. `p` must pass qconv2d's parameter checks (positive sizes and strides,
/// non-negative pads, kernel within the padded input).
int64_t qconv2d_scratch_bytes(const QConv2dParams& p);

/// The optimised integer convolution: same arguments and bit-exact results as
/// qconv2d_reference() of runtime/qnn.h (in NCHW int8, w OIHW int8, bias int32 [OC], out NCHW
/// int8; sizes in elements). Single-threaded: per group and block of 4 output channels it
/// accumulates int32 output-row tiles from a zero-point-subtracted, zero-padded int16 copy of
/// the input, split into stride phases (padding contributes 0, as in qnn.h); method in
/// runtime/cpu/qconv2d.cc. `pad_scratch` holds that copy and `acc_scratch` the accumulators
/// (grown as needed, reused across calls so repeated calls do not allocate; the int32 weight
/// copy and tap offsets live in thread-local buffers that are reused too). The inner loops are
/// compiled for AVX2 and for baseline x86-64 and picked at load time (integer arithmetic:
/// identical results either way). Throws UserError("qconv2d: invalid parameters ...") for
/// inconsistent QConv2dParams, and UserError("qconv2d: working memory of N bytes ...") when
/// qconv2d_scratch_bytes(p) exceeds runtime::kMaxTensorBytes, before allocating anything.
void qconv2d(const QConv2dParams& p, const int8_t* in, const int8_t* w, const int32_t* bias,
             int8_t* out, std::vector<int16_t>& pad_scratch, std::vector<int32_t>& acc_scratch);
/// Convenience overload with its own scratch buffers.
void qconv2d(const QConv2dParams& p, const int8_t* in, const int8_t* w, const int32_t* bias,
             int8_t* out);

/// Packs an int8 NCHW tensor of logical shape [n, c, h, w] into NCHWnc with blocks (bn, bc):
/// out[(((N/bn)*(C/bc) + ...)] laid out as [ceil(n/bn)][ceil(c/bc)][h][w][bn][bc]; batch and
/// channel padding is written as 0. `out` holds ceil(n/bn)*bn * ceil(c/bc)*bc * h * w bytes.
void pack_nchwnc(const int8_t* in, int64_t n, int64_t c, int64_t h, int64_t w, int64_t bn,
                 int64_t bc, int8_t* out);
/// Inverse of pack_nchwnc (padding lanes are dropped).
void unpack_nchwnc(const int8_t* in, int64_t n, int64_t c, int64_t h, int64_t w, int64_t bn,
                   int64_t bc, int8_t* out);

/// The numpy/ONNX broadcast of shapes `a` and `b`: aligned at the last dimension, missing leading
/// dimensions count as 1, and each dimension pair must be equal or contain a 1 (the result takes
/// the other). Used by the broadcasting kernels and by the compiler's shape inference. Throws
/// UserError("shapes [2] and [3] cannot be broadcast (dimension 0: 2 vs 3)") when they are
/// incompatible; callers add what they were checking (a step, a node) to the message.
std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

/// sat(rhe(v) + zero_point): rounds v half to even, adds the zero point, clamps to [-128, 127].
/// NaN gives sat(zero_point); +-inf saturate.
int8_t rhe_sat(double v, int32_t zero_point);

}  // namespace tessel::runtime::cpu
