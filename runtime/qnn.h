// Integer semantics of the quantised layers Tessel runs, defined once. The CPU kernels implement
// them directly; the accelerator backend lowers them to GEMM + ALU instructions that must give
// bit-identical results. Tensors are int8 with a zero point (real = scale * (q - zero_point));
// uint8 models are moved to int8 at import by subtracting 128 from data and zero points.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tessel::runtime {

/// Requantisation of an int32 accumulator to int8, per output channel c, as a chain of ALU ops
/// that the accelerator runs as written (every step wraps at 32 bits like the ALU):
///   x = acc
///   if pre_shift > 0: x = (x + 2^(pre_shift-1)) >> pre_shift      (ALU ADD, SHR)
///   x = x * multiplier[c]                                         (ALU MUL, low 32 bits)
///   if shift[c] > 0:  x = (x + 2^(shift[c]-1)) >> shift[c]        (ALU ADD, SHR; arithmetic)
///   x = x + out_zero_point                                        (ALU ADD)
///   x = min(max(x, clip_lo), clip_hi)                             (ALU MAX, MIN)
/// For power-of-two scales multiplier is 1 and only `shift` is used (add-round, shift, clip).
/// `multiplier` and `shift` have one entry per output channel, or one entry for all channels.
/// Ranges: 0 <= pre_shift, shift <= 31; -128 <= clip_lo <= clip_hi <= 127.
struct Requant {
  int32_t pre_shift = 0;
  std::vector<int32_t> multiplier{1};
  std::vector<int32_t> shift{0};
  int32_t out_zero_point = 0;
  int32_t clip_lo = -128;
  int32_t clip_hi = 127;

  int32_t multiplier_at(size_t c) const { return multiplier.size() == 1 ? multiplier[0] : multiplier[c]; }
  int32_t shift_at(size_t c) const { return shift.size() == 1 ? shift[0] : shift[c]; }
};

/// 32-bit wrapping helpers (the ALU's arithmetic).
inline int32_t wrap_add(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
inline int32_t wrap_mul(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
}

/// Applies `rq` to one accumulator of output channel `c`; returns the int8 result.
inline int8_t requantize(int32_t acc, const Requant& rq, size_t c) {
  int32_t x = acc;
  if (rq.pre_shift > 0) x = wrap_add(x, int32_t{1} << (rq.pre_shift - 1)) >> rq.pre_shift;
  x = wrap_mul(x, rq.multiplier_at(c));
  const int32_t s = rq.shift_at(c);
  if (s > 0) x = wrap_add(x, int32_t{1} << (s - 1)) >> s;
  x = wrap_add(x, rq.out_zero_point);
  x = std::min(std::max(x, rq.clip_lo), rq.clip_hi);
  return static_cast<int8_t>(x);
}

/// A quantised 2-D convolution (also grouped/depthwise, and dense as a 1x1 conv on [N,K,1,1]):
///   acc[n,o,y,x] = bias[o] + sum over valid taps (c,ky,kx) of
///                  (in[n, g*ICg + c, y*sh - pt + ky, x*sw - pl + kx] - in_zero_point) * w[o,c,ky,kx]
///   out[n,o,y,x] = requantize(acc, rq, o)
/// where g = o / (OC/groups) and ICg = IC/groups; taps in the padding contribute nothing (the pad
/// value is the real zero). Layouts: in NCHW int8, w OIHW int8 [OC][IC/groups][KH][KW],
/// bias int32 [OC], out NCHW int8. Dilation is 1.
struct QConv2dParams {
  int64_t n = 1, ic = 0, ih = 0, iw = 0;
  int64_t oc = 0, kh = 1, kw = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t groups = 1;
  int32_t in_zero_point = 0;
  Requant rq;
  int64_t oh() const { return (ih + pad_top + pad_bottom - kh) / stride_h + 1; }
  int64_t ow() const { return (iw + pad_left + pad_right - kw) / stride_w + 1; }
  /// Multiply-accumulates of the layer (the useful ones, without padding or block rounding).
  int64_t macs() const { return n * oc * oh() * ow() * (ic / groups) * kh * kw; }
};

/// Reference implementation of QConv2dParams (plain loops in the order of the definition, no
/// tiling, 32-bit wrapping accumulation). Sizes in elements; in, w, bias and out as above.
/// Throws UserError when groups does not divide the channel counts, a stride or kernel size is
/// not positive, or the output would be empty. Implemented in runtime/qnn.cc.
void qconv2d_reference(const QConv2dParams& p, const int8_t* in, const int8_t* w,
                       const int32_t* bias, int8_t* out);

}  // namespace tessel::runtime
