// Integer semantics of the quantised layers Tessel runs, defined once. The CPU kernels implement
// them directly; the accelerator backend lowers them to GEMM + ALU instructions that must give
// bit-identical results. Tensors are int8 with a zero point (real = scale * (q - zero_point));
// uint8 models are moved to int8 at import by subtracting 128 from data and zero points.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

namespace tessel::runtime {

/// Requantisation of an int32 accumulator to int8, per output channel c: the chain of ALU ops
/// that the accelerator runs as written, defined here once (every step wraps at 32 bits like
/// the ALU; the CPU kernels and the accelerator lowering both evaluate exactly this):
///   x = acc + acc_offset[c]                               (ALU ADD; folded into the bias)
///   x = min(max(x, acc_min[c]), acc_max[c])               (ALU MAX, MIN: the clamp)
///   x = x * multiplier[c]                                 (ALU MUL, low 32 bits)
///   x = (x + round(c)) >> shift[c]                        (ALU ADD, SHR; arithmetic shift)
///   x = x + out_offset(c) + out_zero_point                (ALU ADD)
///   x = min(max(x, clip_lo), clip_hi)                     (ALU MAX, MIN)
/// with K(c) = 2^(shift[c]-1) (0 for shift 0) - acc_offset[c] * multiplier[c] (exact, int64),
/// round(c) = K mod 2^shift[c] in [0, 2^shift[c]) and out_offset(c) = floor(K / 2^shift[c])
/// (to 32 bits, wrapping).
///
/// Exact value (one rounding, the tie rule): whenever no step above wraps, the result is
///   clip(floor(a * m / 2^s + 1/2) + out_zero_point),  a = clamp(acc, acc_min - off, acc_max - off)
/// with m = multiplier[c], s = shift[c], off = acc_offset[c]: the product a * (m / 2^s) rounded
/// once, to the nearest integer, ties toward +infinity (round half up; e.g. 2.5 -> 3,
/// -2.5 -> -2). acc_offset only moves the window that the 32-bit steps see (it centres the
/// multiplication; compiler/passes/requant.h chooses it) and does not change that value. The
/// clamp changes no result when its bounds are saturation points (every accumulator beyond
/// them gives clip_lo or clip_hi anyway). compiler/passes/requant.h derives requantisations for
/// which, for every accumulator the layer can produce, no step wraps and m / 2^s approximates
/// the layer's scale within a stated bound.
///
/// For power-of-two scales multiplier is 1, acc_offset 0 and there is no clamp (add-round, shift,
/// clip). Every per-channel field has one entry per output channel, or one entry for all
/// channels. Ranges: 0 <= shift <= 31; acc_min <= acc_max; -128 <= clip_lo <= clip_hi <= 127
/// (runtime::cpu::parse_requant checks them).
struct Requant {
  std::vector<int32_t> acc_offset{0};
  std::vector<int32_t> acc_min{INT32_MIN};  ///< INT32_MIN everywhere: no lower clamp
  std::vector<int32_t> acc_max{INT32_MAX};  ///< INT32_MAX everywhere: no upper clamp
  std::vector<int32_t> multiplier{1};
  std::vector<int32_t> shift{0};
  int32_t out_zero_point = 0;
  int32_t clip_lo = -128;
  int32_t clip_hi = 127;

  static int32_t at(const std::vector<int32_t>& v, size_t c) { return v.size() == 1 ? v[0] : v[c]; }
  int32_t acc_offset_at(size_t c) const { return at(acc_offset, c); }
  int32_t acc_min_at(size_t c) const { return at(acc_min, c); }
  int32_t acc_max_at(size_t c) const { return at(acc_max, c); }
  int32_t multiplier_at(size_t c) const { return at(multiplier, c); }
  int32_t shift_at(size_t c) const { return at(shift, c); }
  /// Whether any channel clamps from below (above).
  bool clamps_low() const {
    for (int32_t v : acc_min)
      if (v != INT32_MIN) return true;
    return false;
  }
  bool clamps_high() const {
    for (int32_t v : acc_max)
      if (v != INT32_MAX) return true;
    return false;
  }
};

/// 32-bit wrapping helpers (the ALU's arithmetic).
inline int32_t wrap_add(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
inline int32_t wrap_mul(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
}

/// The chain of one output channel with round(c) and out_offset(c) + out_zero_point resolved:
/// the per-element work of Requant, branch-free (a shift of 0 has round 0), so that loops over
/// elements vectorise. `shift` must lie in [0, 31].
struct RequantChannel {
  int32_t acc_offset = 0, acc_min = INT32_MIN, acc_max = INT32_MAX;
  int32_t multiplier = 1, round = 0, shift = 0;
  int32_t out_add = 0;  ///< out_offset(c) + out_zero_point, wrapping
  int32_t clip_lo = -128, clip_hi = 127;

  /// The chain of Requant on one accumulator.
  int8_t apply(int32_t acc) const { return apply(*this, acc); }
  /// The same, with the channel by value (for loops storing int8 results, which could otherwise
  /// alias the constants and keep the loop from vectorising).
  static int8_t apply(RequantChannel k, int32_t acc) {
    int32_t x = wrap_add(acc, k.acc_offset);
    x = std::min(std::max(x, k.acc_min), k.acc_max);
    x = wrap_mul(x, k.multiplier);
    x = wrap_add(x, k.round) >> k.shift;
    x = wrap_add(x, k.out_add);
    return static_cast<int8_t>(std::min(std::max(x, k.clip_lo), k.clip_hi));
  }
};

/// round(c) and out_offset(c) of Requant for multiplier m, shift s in [0, 31] and acc_offset
/// off: K = 2^(s-1) - off * m = out_offset * 2^s + round with 0 <= round < 2^s (out_offset
/// wrapped to 32 bits).
inline void requant_round_terms(int32_t m, int32_t s, int32_t off, int32_t& round, int32_t& out_offset) {
  const int64_t k = (s > 0 ? int64_t{1} << (s - 1) : 0) - static_cast<int64_t>(off) * m;
  const int64_t q = k >> s;  // floor division by 2^s (arithmetic shift of a signed value)
  round = static_cast<int32_t>(k - q * (int64_t{1} << s));
  out_offset = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(q)));
}

/// Channel `c` of `rq` (c < the layer's output channels; fields of one entry serve all).
inline RequantChannel requant_channel(const Requant& rq, size_t c) {
  RequantChannel ch;
  ch.acc_offset = rq.acc_offset_at(c);
  ch.acc_min = rq.acc_min_at(c);
  ch.acc_max = rq.acc_max_at(c);
  ch.multiplier = rq.multiplier_at(c);
  ch.shift = rq.shift_at(c);
  int32_t out_offset = 0;
  requant_round_terms(ch.multiplier, ch.shift, ch.acc_offset, ch.round, out_offset);
  ch.out_add = wrap_add(out_offset, rq.out_zero_point);
  ch.clip_lo = rq.clip_lo;
  ch.clip_hi = rq.clip_hi;
  return ch;
}

/// What makes `rq` invalid for a layer of `oc` output channels, as a lower-case sentence with
/// the values ("requant shift[3] 40 is outside [0, 31]"), or "" when it is valid: every
/// per-channel field has 1 or `oc` entries, 0 <= shift <= 31, acc_min <= acc_max per channel,
/// -128 <= clip_lo <= clip_hi <= 127. Implemented in runtime/qnn.cc; the JSON parser
/// (runtime::cpu::parse_requant), the CPU kernels and the accelerator plan all use it.
std::string requant_problem(const Requant& rq, int64_t oc);

/// Applies `rq` to one accumulator of output channel `c`; returns the int8 result.
inline int8_t requantize(int32_t acc, const Requant& rq, size_t c) { return requant_channel(rq, c).apply(acc); }

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
/// not positive, the output would be empty, or requant_problem() finds a problem. Implemented in runtime/qnn.cc.
void qconv2d_reference(const QConv2dParams& p, const int8_t* in, const int8_t* w,
                       const int32_t* bias, int8_t* out);

}  // namespace tessel::runtime
