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
///   y = 0; for each low limb j = 0 .. L-1 (L = low_multiplier.size(), often 0):
///     y = (x * low_multiplier[j][c] + y + round_j(c)) >> low_shift[j][c]
///                                                         (on a copy of x: ALU MUL, ADD, ADD, SHR)
///   x = x * multiplier[c] + y                             (ALU MUL, low 32 bits; ALU ADD)
///   x = (x + round(c)) >> shift[c]                        (ALU ADD, SHR; arithmetic shift)
///   x = x + out_offset(c) + out_zero_point                (ALU ADD)
///   x = min(max(x, clip_lo), clip_hi)                     (ALU MAX, MIN)
/// The limbs make up one multiplier m(c) and one shift S(c) wider than 32 bits:
///   m = multiplier * 2^T_L + sum_j low_multiplier[j] * 2^T_j,   S = shift + T_L,
/// with T_j = low_shift[0] + ... + low_shift[j-1] (T_0 = 0). With
/// K(c) = 2^(S-1) (0 for S = 0) - acc_offset[c] * m (exact, 128-bit), R = K mod 2^S in [0, 2^S)
/// and out_offset(c) = floor(K / 2^S) (to 32 bits, wrapping), round_j(c) is digit j of R in the
/// mixed radix of the limbs, floor(R / 2^T_j) mod 2^low_shift[j], and round(c) = floor(R / 2^T_L).
/// Each limb's floor division is exact (floor((a 2^t + b) / 2^s) = floor((a + floor(b / 2^t)) /
/// 2^(s-t)) for integers), so the chain computes floor((x * m + R) / 2^S) as one rounding.
///
/// Exact value (one rounding, the tie rule): whenever no step above wraps, the result is
///   clip(floor(a * m / 2^S + 1/2) + out_zero_point),  a = clamp(acc, acc_min - off, acc_max - off)
/// with off = acc_offset[c]: the product a * (m / 2^S) rounded once, to the nearest integer,
/// ties toward +infinity (round half up; e.g. 2.5 -> 3, -2.5 -> -2). acc_offset only moves
/// the window that the 32-bit steps see (it centres the multiplication; compiler/passes/
/// requant.h chooses it) and does not change that value. The clamp changes no result when its
/// bounds are saturation points (every accumulator beyond them gives clip_lo or clip_hi
/// anyway). compiler/passes/requant.h derives requantisations for which, for every accumulator
/// the layer can produce, no step wraps and the result is round(acc * M) for the layer's scale M
/// (low limbs where a 32-bit multiplier cannot give that).
///
/// For power-of-two scales multiplier is 1, acc_offset 0 and there is no clamp (add-round, shift,
/// clip). Every per-channel field (each low limb's too) has one entry per output channel, or one
/// entry for all channels. Ranges: 0 <= shift, low_shift <= 31; at most kMaxLowLimbs low limbs,
/// low_multiplier and low_shift of the same length; S = shift + T_L <= 62; acc_min <= acc_max;
/// -128 <= clip_lo <= clip_hi <= 127 (runtime::cpu::parse_requant checks them).
struct Requant {
  std::vector<int32_t> acc_offset{0};
  std::vector<int32_t> acc_min{INT32_MIN};  ///< INT32_MIN everywhere: no lower clamp
  std::vector<int32_t> acc_max{INT32_MAX};  ///< INT32_MAX everywhere: no upper clamp
  std::vector<int32_t> multiplier{1};
  std::vector<int32_t> shift{0};
  /// Low limbs of the multiplier, least significant first: low_multiplier[j] and low_shift[j]
  /// are per-channel lists (1 or OC entries). Empty: the one-limb chain.
  std::vector<std::vector<int32_t>> low_multiplier;
  std::vector<std::vector<int32_t>> low_shift;
  int32_t out_zero_point = 0;
  int32_t clip_lo = -128;
  int32_t clip_hi = 127;

  static int32_t at(const std::vector<int32_t>& v, size_t c) { return v.size() == 1 ? v[0] : v[c]; }
  int32_t acc_offset_at(size_t c) const { return at(acc_offset, c); }
  int32_t acc_min_at(size_t c) const { return at(acc_min, c); }
  int32_t acc_max_at(size_t c) const { return at(acc_max, c); }
  int32_t multiplier_at(size_t c) const { return at(multiplier, c); }
  int32_t shift_at(size_t c) const { return at(shift, c); }
  size_t low_limbs() const { return low_multiplier.size(); }
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

/// The most low limbs a Requant may have (8 limbs in all: enough for a 24-bit float32 scale
/// with unsaturated accumulators up to about 2^27 in magnitude).
inline constexpr size_t kMaxLowLimbs = 7;

/// One low limb of a channel's chain with its digit of the rounding term resolved.
struct RequantLimb {
  int32_t multiplier = 0, round = 0, shift = 0;
};

/// The chain of one output channel with the rounding digits and out_offset(c) + out_zero_point
/// resolved: the per-element work of Requant, branch-free (a shift of 0 has round 0), so that
/// loops over elements vectorise. Every shift must lie in [0, 31] and n_low <= kMaxLowLimbs.
struct RequantChannel {
  int32_t acc_offset = 0, acc_min = INT32_MIN, acc_max = INT32_MAX;
  int32_t multiplier = 1, round = 0, shift = 0;
  int32_t out_add = 0;  ///< out_offset(c) + out_zero_point, wrapping
  int32_t clip_lo = -128, clip_hi = 127;
  int32_t n_low = 0;                   ///< low limbs in use
  RequantLimb low[kMaxLowLimbs] = {};  ///< least significant first

  /// The chain of Requant on one accumulator.
  int8_t apply(int32_t acc) const { return apply(*this, acc); }
  /// The same, with the channel by value (for loops storing int8 results, which could otherwise
  /// alias the constants and keep the loop from vectorising).
  static int8_t apply(RequantChannel k, int32_t acc) {
    int32_t x = wrap_add(acc, k.acc_offset);
    x = std::min(std::max(x, k.acc_min), k.acc_max);
    int32_t y = 0;
    for (int32_t j = 0; j < k.n_low; ++j) {
      const RequantLimb& l = k.low[j];
      y = wrap_add(wrap_add(wrap_mul(x, l.multiplier), y), l.round) >> l.shift;
    }
    x = wrap_add(wrap_mul(x, k.multiplier), y);
    x = wrap_add(x, k.round) >> k.shift;
    x = wrap_add(x, k.out_add);
    return static_cast<int8_t>(std::min(std::max(x, k.clip_lo), k.clip_hi));
  }
  /// apply() for a channel without low limbs (n_low == 0), in the one-limb form that
  /// vectorises best; the same value.
  static int8_t apply_one_limb(RequantChannel k, int32_t acc) {
    int32_t x = wrap_add(acc, k.acc_offset);
    x = std::min(std::max(x, k.acc_min), k.acc_max);
    x = wrap_mul(x, k.multiplier);
    x = wrap_add(x, k.round) >> k.shift;
    x = wrap_add(x, k.out_add);
    return static_cast<int8_t>(std::min(std::max(x, k.clip_lo), k.clip_hi));
  }
};

/// round(c) and out_offset(c) of a one-limb Requant for multiplier m, shift s in [0, 31] and
/// acc_offset off: K = 2^(s-1) - off * m = out_offset * 2^s + round with 0 <= round < 2^s
/// (out_offset wrapped to 32 bits).
inline void requant_round_terms(int32_t m, int32_t s, int32_t off, int32_t& round, int32_t& out_offset) {
  const int64_t k = (s > 0 ? int64_t{1} << (s - 1) : 0) - static_cast<int64_t>(off) * m;
  const int64_t q = k >> s;  // floor division by 2^s (arithmetic shift of a signed value)
  round = static_cast<int32_t>(k - q * (int64_t{1} << s));
  out_offset = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(q)));
}

/// The whole multiplier m(c) and shift S(c) of channel `c` (Requant's limbs combined; exact
/// for S <= 62, which requant_problem() checks).
void requant_wide_multiplier(const Requant& rq, size_t c, __int128& m, int& s);

/// Channel `c` of `rq` (c < the layer's output channels; fields of one entry serve all). `rq`
/// must be valid (requant_problem() returns "").
RequantChannel requant_channel(const Requant& rq, size_t c);

/// What makes `rq` invalid for a layer of `oc` output channels, as a lower-case sentence with
/// the values ("requant shift[3] 40 is outside [0, 31]"), or "" when it is valid: every
/// per-channel field has 1 or `oc` entries, 0 <= shift <= 31, at most kMaxLowLimbs low limbs
/// with 1 or `oc` entries each and shifts in [0, 31], a total shift S <= 62 per channel,
/// acc_min <= acc_max per channel, -128 <= clip_lo <= clip_hi <= 127. Implemented in runtime/qnn.cc; the JSON parser
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
