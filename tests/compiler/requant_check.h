// Exact-arithmetic checks of a derived requantisation (compiler/passes/requant.h), shared by the
// requant unit tests and the property tests on random and real layers: the chain of
// runtime/qnn.h against the one-rounding value computed with 128-bit integers, the 32-bit
// no-wrap condition step by step, and the accuracy against the layer's scale M.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "compiler/passes/requant.h"
#include "runtime/qnn.h"

namespace tessel::compiler::testing {

using I128 = __int128;

/// clip(floor(a * m / 2^S + 1/2) + zp) with a = clamp(acc, acc_min - off, acc_max - off) and
/// m, S the whole multiplier and shift (the limbs combined): the value runtime/qnn.h promises,
/// in exact integer arithmetic.
inline int exact_requant(const runtime::Requant& rq, size_t c, int64_t acc) {
  const int64_t off = rq.acc_offset_at(c);
  const int64_t a = std::clamp<int64_t>(acc, int64_t{rq.acc_min_at(c)} - off, int64_t{rq.acc_max_at(c)} - off);
  I128 m = 0;
  int s = 0;
  runtime::requant_wide_multiplier(rq, c, m, s);
  const I128 num = I128{a} * m * 2 + (I128{1} << s);  // (2am + 2^S) / 2^(S+1)
  const I128 v = (num >> (s + 1)) + rq.out_zero_point;  // arithmetic shift = floor
  return static_cast<int>(std::clamp<I128>(v, rq.clip_lo, rq.clip_hi));
}

/// Whether some step of the 32-bit chain wraps for accumulator `acc` (each step evaluated in
/// 64 bits and compared with the int32 range), the low limbs' steps included.
inline bool chain_wraps(const runtime::RequantChannel& k, int64_t acc) {
  auto out = [](int64_t v) { return v < INT32_MIN || v > INT32_MAX; };
  int64_t x = acc + k.acc_offset;
  if (out(x)) return true;
  x = std::clamp<int64_t>(x, k.acc_min, k.acc_max);
  int64_t y = 0;
  for (int j = 0; j < k.n_low; ++j) {
    int64_t b = x * k.low[j].multiplier;
    if (out(b)) return true;
    b += y;
    if (out(b)) return true;
    b += k.low[j].round;
    if (out(b)) return true;
    y = b >> k.low[j].shift;
  }
  x *= k.multiplier;
  if (out(x)) return true;
  x += y;
  if (out(x)) return true;
  x += k.round;
  if (out(x)) return true;
  x = (x >> k.shift) + k.out_add;
  return out(x);
}

/// round half up of acc * M (M a double, so acc * M is an exact rational), plus zp, clipped.
inline int ideal_requant(double big_m, int64_t acc, int32_t zp, int32_t lo, int32_t hi) {
  int e = 0;
  const double f = std::frexp(big_m, &e);                        // M = f 2^e, f in [0.5, 1)
  const int64_t mant = static_cast<int64_t>(std::ldexp(f, 53));  // M = mant 2^(e-53)
  const int sh = 53 - e;                                         // M = mant / 2^sh
  I128 v;
  if (sh <= 0) {
    v = I128{acc} * mant * (I128{1} << -sh);
  } else if (sh < 100) {
    v = (I128{acc} * mant * 2 + (I128{1} << sh)) >> (sh + 1);
  } else {
    v = 0;  // |acc * M| < 2^31 * 2^53 / 2^100 < 1/2
  }
  return static_cast<int>(std::clamp<I128>(v + zp, lo, hi));
}

/// Checks the derived `rq` for one channel over accumulators `accs` (all inside the channel's
/// range): (1) requantize() equals exact_requant (one rounding) and no step wraps; (2) the
/// result equals round(acc * M) exactly (ideal_requant, the requirement), except, when
/// `max_error_lsb` > 0 (a channel derive_requant reports inexact), where acc * M lies within
/// max_error_lsb of a rounding boundary. Returns the number of accumulators checked; reports the
/// first failure of each kind.
inline int64_t check_channel(const runtime::Requant& rq, size_t c, double big_m, double max_error_lsb,
                             const std::vector<int64_t>& accs, const std::string& where) {
  const runtime::RequantChannel k = runtime::requant_channel(rq, c);
  bool reported_exact = false, reported_wrap = false, reported_ideal = false;
  for (int64_t acc : accs) {
    const int got = runtime::requantize(static_cast<int32_t>(acc), rq, c);
    if (!reported_exact && got != exact_requant(rq, c, acc)) {
      ADD_FAILURE() << where << " channel " << c << ": acc " << acc << " gives " << got << ", one rounding gives "
                    << exact_requant(rq, c, acc);
      reported_exact = true;
    }
    if (!reported_wrap && chain_wraps(k, acc)) {
      ADD_FAILURE() << where << " channel " << c << ": acc " << acc << " wraps a 32-bit step (M " << big_m
                    << ", chain: offset " << k.acc_offset << ", clamp [" << k.acc_min << ", " << k.acc_max
                    << "], multiplier " << k.multiplier << ", round " << k.round << ", shift " << k.shift
                    << ", add " << k.out_add << ")";
      reported_wrap = true;
    }
    const double v = static_cast<double>(acc) * big_m;
    const double frac = v - std::floor(v);
    if (!reported_ideal && (max_error_lsb == 0.0 || std::fabs(frac - 0.5) > max_error_lsb + 1e-9 * (1.0 + std::fabs(v))) &&
        got != ideal_requant(big_m, acc, rq.out_zero_point, rq.clip_lo, rq.clip_hi)) {
      ADD_FAILURE() << where << " channel " << c << ": acc " << acc << " * M = " << v << " gives " << got
                    << ", round(acc * M) gives " << ideal_requant(big_m, acc, rq.out_zero_point, rq.clip_lo, rq.clip_hi)
                    << " (stated worst-case error " << max_error_lsb << ")";
      reported_ideal = true;
    }
  }
  return static_cast<int64_t>(accs.size());
}

/// The accumulators next to every rounding boundary of round(acc * M) + zp inside [lo, hi]:
/// for each output level v, the smallest acc with acc * M >= v - zp - 1/2 (computed with 128-bit
/// integers from M's exact binary value) and the one below it. Where a requantisation is off
/// by one, it is off at one of these.
inline std::vector<int64_t> boundary_accs(double big_m, int32_t zp, passes::AccRange r) {
  std::vector<int64_t> v;
  if (!(big_m > 0)) return v;
  int e = 0;
  const double f = std::frexp(big_m, &e);
  const int64_t mant = static_cast<int64_t>(std::ldexp(f, 53));  // M = mant 2^(e-53)
  const int sh = 53 - e;
  if (sh < 0 || sh > 100) return v;
  for (int32_t level = -128; level <= 128; ++level) {
    // acc >= (2 (level - zp) - 1) 2^sh / (2 mant)
    const I128 num = (I128{2} * (level - zp) - 1) * (I128{1} << sh), den = I128{2} * mant;
    I128 t = num / den;
    if (t * den < num) ++t;  // ceil (num / den truncates toward 0)
    for (I128 a : {t - 1, t}) {
      if (a >= r.lo && a <= r.hi) v.push_back(static_cast<int64_t>(a));
    }
  }
  return v;
}

/// Accumulators to check in [lo, hi]: all of them when the range holds at most `exhaustive`
/// values; otherwise windows of +-`window` around both ends, 0 and the channel's clamp bounds,
/// the accumulators at every rounding boundary of M (boundary_accs; `big_m` > 0) and `random`
/// uniform samples.
inline std::vector<int64_t> sample_accs(const runtime::Requant& rq, size_t c, passes::AccRange r, int64_t exhaustive,
                                        int64_t window, int64_t random, std::mt19937_64& rng, double big_m = 0) {
  std::vector<int64_t> v;
  if (r.hi - r.lo + 1 <= exhaustive) {
    for (int64_t a = r.lo; a <= r.hi; ++a) v.push_back(a);
    return v;
  }
  v = boundary_accs(big_m, rq.out_zero_point, r);
  const int64_t off = rq.acc_offset_at(c);
  for (int64_t centre : {r.lo, r.hi, int64_t{0}, int64_t{rq.acc_min_at(c)} - off, int64_t{rq.acc_max_at(c)} - off}) {
    for (int64_t d = -window; d <= window; ++d) {
      const int64_t a = centre + d;
      if (a >= r.lo && a <= r.hi) v.push_back(a);
    }
  }
  std::uniform_int_distribution<int64_t> u(r.lo, r.hi);
  for (int64_t i = 0; i < random; ++i) v.push_back(u(rng));
  return v;
}

}  // namespace tessel::compiler::testing
