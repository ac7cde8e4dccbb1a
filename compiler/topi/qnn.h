// The int8 requantisation epilogue and the quantised element-wise add of the residual blocks as
// te compute stages, with exactly runtime/qnn.h's integer semantics.
//
// Requantisation (runtime/qnn.h Requant, in the resolved per-channel form RequantChannel that
// runtime::requant_channel() computes): for an int32 accumulator x of channel c,
//   x = x + acc_offset[c]                                     (ADD)
//   x = min(max(x, acc_min[c]), acc_max[c])                   (MAX, MIN)
//   y = 0; for each low limb j: y = (x * low_mul[j][c] + y + low_round[j][c]) >> low_shift[j][c]
//   x = x * multiplier[c] + y                                 (MUL, ADD)
//   x = (x + round[c]) >> shift[c]                            (ADD, SHR; arithmetic)
//   x = x + out_add[c]                                        (ADD: out_offset + out_zero_point)
//   out = int8(min(max(x, clip_lo), clip_hi))                 (MAX, MIN, then the int8 store)
// Every step is int32 and wraps at 32 bits, like the accelerator's ALU and RequantChannel::apply.
// One compute stage per ALU step (named "<name>.<step>"), so that accelerator schedules can give
// each its own pragma_alu nest; a step that cannot change any value (ADD 0, MAX INT32_MIN, MIN
// INT32_MAX, MUL 1, SHR 0) is left out, which changes no result; so is a clip bound that the
// clamp already guarantees: when, for every channel, the chain after the clamp maps acc_min and
// acc_max to values within [clip_lo, clip_hi] without wrapping, and is monotone (no low limbs,
// or every multiplier of one sign >= 0), every result lies between those two values (the
// accelerator path's rule, compiler/backend/accel/plan.cc); with no clamp, no limbs and
// multiplier 1, ADD acc_offset and ADD round are one ADD of their wrapping sum (the step
// "<name>.round", field "round"). A field with one entry is an
// immediate in the body; a field with one entry per channel is an int32 [C] placeholder
// ("<name>.<field>") whose contents the caller binds (RequantOps::constants). Under an
// ImmPolicy with imm_bits > 0, a one-entry value that does not fit a signed imm_bits-bit
// immediate becomes a constant operand too (see ImmPolicy).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/te/operation.h"
#include "compiler/topi/nn.h"

namespace tessel::topi {

using te::Tensor;

/// One low limb of the multiplier, per channel (1 or C entries each).
struct RequantLimbParams {
  std::vector<int32_t> multiplier, round, shift;
};

/// The resolved chain of runtime/qnn.h (RequantChannel's fields), per channel: each vector has
/// 1 entry (all channels) or C. Shifts lie in [0, 31]; clip_lo <= clip_hi within [-128, 127].
struct RequantParams {
  std::vector<int32_t> acc_offset{0}, acc_min{INT32_MIN}, acc_max{INT32_MAX};
  std::vector<int32_t> multiplier{1}, round{0}, shift{0}, out_add{0};
  std::vector<RequantLimbParams> low;  ///< least significant first (at most 7)
  int32_t clip_lo = -128, clip_hi = 127;
};

/// A constant operand of the epilogue: its placeholder and its contents (row-major, one entry
/// per element of the placeholder), and how its values vary, which tells an accelerator
/// schedule how often a tile must load it:
///  - kUniform: every element one value (a wide immediate under ImmPolicy: one accumulator
///    element, loaded once for the whole kernel);
///  - kChannel: a per-channel field ([C], or packed [C/lanes][B][lanes] under
///    ImmPolicy::packed_channels: loaded once per output-channel tile);
///  - kElement: one value per output element (a template's own operand, e.g. the conv2d
///    template's zero-point border tensor: loaded with every tile).
struct ChannelConstant {
  enum class Kind { kUniform, kChannel, kElement };
  Tensor tensor;
  std::vector<int32_t> values;
  Kind kind = Kind::kChannel;
};

/// Where one-entry fields go. imm_bits 0 (the default): every one-entry field is an immediate
/// in the body (any int32). imm_bits in [2, 32]: a one-entry value outside [-2^(imm_bits-1),
/// 2^(imm_bits-1) - 1] (the accelerator ALU's immediate has 16 bits) is read instead from an
/// int32 placeholder "<name>.<field>" whose shape is the last `const_dims` dimensions of the
/// stage (1 <= const_dims <= its rank), every element the value, indexed by the stage's last
/// const_dims indices: with const_dims 2 on a packed [..][B][BO] stage, one accumulator element
/// (BATCH x BLOCK_OUT int32) that an accelerator schedule loads once into acc. The value
/// computed is the same either way.
///
/// packed_channels: a per-channel field (C entries) is an int32 placeholder "<name>.<field>"
/// [C/lanes][B][lanes] instead of [C], for a packed stage (NCHWnc, rank 6, or packed dense,
/// rank 4 with `packed`): dimension 0 the channel block (the stage's dimension 1), 1 the batch
/// lane (the stage's dimension rank-2), 2 the channel lane (the last), element [cb][b][o] =
/// values[cb * lanes + o] for every b. Indexed by the stage's indices 1, rank-2 and rank-1, one
/// channel block's values are one accumulator element (BATCH x BLOCK_OUT int32) that an
/// accelerator schedule loads into acc and reads as the ALU's vector operand. The value computed
/// is the same as with [C].
///
/// stack_channels (with packed_channels): the F per-channel fields of the chain are the rows of
/// one int32 placeholder "<name>.channel" [F][C/lanes][B][lanes] (one ChannelConstant, kChannel,
/// in the constants where the chain's first per-channel field is; row k the k-th per-channel
/// field in chain order, each row laid out as the unstacked [C/lanes][B][lanes]), so a tile's
/// slice of every field, rows [0, F) x its channel blocks, is one 2-D copy (an accelerator: one
/// LOAD ACC of F rows, paying DRAM_LATENCY once instead of F times). The row-major values are
/// those of the unstacked constants one after another. Without packed_channels it has no effect.
struct ImmPolicy {
  int imm_bits = 0;
  size_t const_dims = 0;
  bool packed_channels = false;
  bool stack_channels = false;
};

/// One ALU step of the chain as built: the stage, its ALU operation name ("add", "max", "min",
/// "mul", "shr") and its operand: an immediate, a per-channel constant, or another stage's
/// tensor (the limb sum).
struct RequantStep {
  Tensor tensor;
  std::string op;
  bool is_imm = true;
  int32_t imm = 0;
  Tensor operand;  ///< a ChannelConstant's tensor or a step's tensor when !is_imm
  /// ImmPolicy::stack_channels: the operand's row in the stacked "<name>.channel"; else -1
  int64_t stack_row = -1;
};

/// The epilogue as built: `out` is the int8 result; `steps` are the int32 stages in order
/// (the chain's main line and its limb stages), `constants` the per-channel tensors to bind.
struct RequantOps {
  Tensor out;
  std::vector<RequantStep> steps;
  std::vector<ChannelConstant> constants;
  std::vector<Tensor> loads;  ///< qadd: the operands converted to int32 (int32(a), int32(b))
};

/// The chain of the file comment on int32 `acc` (channel index as topi::bias_add: dimension 1,
/// or block * lanes + lane for NCHWnc and, with `packed`, packed dense). UserError naming the
/// field when a field has neither 1 nor C entries, a shift is outside [0, 31], there are more
/// than 7 limbs, or the clip range is not within [-128, 127]; when acc is not int32; when `imm`
/// has imm_bits outside {0} and [2, 32] or const_dims outside [1, rank of acc] (with imm_bits > 0),
/// or packed_channels on a stage that is neither rank 6 nor rank 4 with `packed`.
RequantOps requantize(const Tensor& acc, const RequantParams& p, bool packed = false,
                      const std::string& name = "requant", const ImmPolicy& imm = {});

/// Bias and input zero point of the packed layers (runtime/qnn.h qconv2d_reference):
///   acc[o, y, x] = bias[o] + sum over the taps of (y, x) inside the input of (x - zx) * w[o]
/// while the accelerator's GEMM sums x * w over every tap, the padding reading 0:
///   acc = gemm + bias[o] - zx * (sum of w[o] over all taps) + zx * (sum of w[o] over the taps
///         of (y, x) in the padding)
/// The first two terms are per channel (zero_point_channel_addend), the last one depends on the
/// output position, and is 0 unless the window of (y, x) reaches into the padding.

/// -x_zero_point * (sum of output lane o's weights over every tap and input lane), int32
/// wrapping, for each output lane o (OCB * BO entries). `w` holds the packed weights' values
/// row-major, `w_shape` their shape: conv2d [OCB][ICB][KH][KW][BO][BI] or dense [OCB][KB][BO][BI]
/// (padding lanes must hold zero weights, as runtime/cpu pack_nchwnc leaves them). UserError
/// when w_shape has another rank, w does not have its element count, or x_zero_point is outside
/// [-128, 127].
std::vector<int32_t> zero_point_channel_addend(const std::vector<int64_t>& w_shape, const std::vector<int8_t>& w,
                                               int32_t x_zero_point);

/// Whether the window of some output position reaches into the padding: an input row index
/// y * stride_h - pad_top + ky * dilation_h outside [0, h) for some output row y and tap ky, or
/// the same for columns (kh, kw: the kernel; the output extents of conv_output_size). UserError
/// as conv_output_size.
bool conv2d_window_touches_padding(int64_t h, int64_t w, int64_t kh, int64_t kw, const Conv2dAttrs& attrs);

/// The position-dependent term for packed conv2d, int32 [OCB][OH][OW][B][BO] row-major (B =
/// x_shape[4], the batch lanes; every batch lane and batch block the same value, so the tensor
/// has no batch-block dimension):
///   border[cb, y, x, b, o] = x_zero_point * sum over the taps (ky, kx) of (y, x) whose input
///       position (y * sh - pad_top + ky * dh, x * sw - pad_left + kx * dw) lies in the padding,
///       and every input block and lane, of w[cb, ., ky, kx, o, .]      (int32 wrapping)
/// 0 where the window lies inside the input. x_shape [N/B][ICB][H][W][B][BI], w_shape and w as
/// zero_point_channel_addend (rank 6). UserError for other ranks, sizes or zero points.
std::vector<int32_t> conv2d_zero_point_border(const std::vector<int64_t>& x_shape, const std::vector<int64_t>& w_shape,
                                              const std::vector<int8_t>& w, const Conv2dAttrs& attrs,
                                              int32_t x_zero_point);

/// The quantised add of two int8 tensors of one shape (the residual blocks' qadd):
///   acc = (int32(a) - a_zero_point) * a_multiplier + (int32(b) - b_zero_point) * b_multiplier
///   out = requantize(acc) with `rq` (one entry per field: per-tensor scales)
/// every step int32 wrapping. With equal scales (multipliers 1, rq the identity plus out_add =
/// the output zero point) it is runtime/cpu's qadd exactly; `relu` of qadd is clip_lo = the
/// output zero point. Stages: the loads "<name>.a" = int32(a) and "<name>.b" (RequantOps::
/// loads), the steps "<name>.a_zp" (ADD -a_zero_point, left out for 0), "<name>.a_mul" (MUL,
/// left out for 1), the same for b, "<name>.sum" (ADD of the two), then the chain. Wide
/// multipliers, rounds and offsets follow `imm` (constant operands "<name>.a_multiplier",
/// "<name>.round", ...). UserError for operands of other types or shapes, zero points outside
/// [-128, 127], rq fields with more than one entry, or `imm` as requantize.
///
/// compiler/passes/qadd_scheme.h's QaddScheme is this chain with a_multiplier, b_multiplier,
/// rq.round = {round}, rq.shift = {shift}, rq.out_add = {y_zero_point} and rq.clip_lo/clip_hi.
RequantOps qadd(const Tensor& a, const Tensor& b, int32_t a_zero_point, int32_t a_multiplier, int32_t b_zero_point,
                int32_t b_multiplier, const RequantParams& rq, const std::string& name = "qadd",
                const ImmPolicy& imm = {});

}  // namespace tessel::topi
