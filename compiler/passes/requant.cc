#include "compiler/passes/requant.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>

#include "compiler/ir/qnn_attrs.h"
#include "support/error.h"

namespace tessel::compiler::passes {
namespace {

constexpr int64_t kI32Min = INT32_MIN, kI32Max = INT32_MAX;

bool fits32(int64_t v) { return v >= kI32Min && v <= kI32Max; }

using I128 = __int128;

/// floor(a / b) and ceil(a / b) for b > 0.
template <typename T>
T floor_div(T a, T b) {
  const T q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}
/// The 128-bit form: one division (the remainder from a multiplication), and a 64-bit division
/// when both operands fit 64 bits, as nearly all do (exact_one_limb divides thousands of times
/// per channel; a 128-bit division is a library call several times slower).
template <>
__int128 floor_div<__int128>(__int128 a, __int128 b) {
  constexpr __int128 kMin64 = std::numeric_limits<int64_t>::min(), kMax64 = std::numeric_limits<int64_t>::max();
  if (a > kMin64 && a <= kMax64 && b > kMin64 && b <= kMax64) {
    return floor_div<int64_t>(static_cast<int64_t>(a), static_cast<int64_t>(b));
  }
  const __int128 q = a / b;
  return (q * b != a && a < 0) ? q - 1 : q;
}
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

enum class Form { kPlain = 0, kClamp = 1, kCentred = 2 };
const char* form_name(Form f) {
  switch (f) {
    case Form::kPlain: return "plain";
    case Form::kClamp: return "clamp";
    case Form::kCentred: return "centred";
  }
  return "?";
}

/// One channel's chain and its figures.
struct Channel {
  int32_t multiplier = 1, shift = 0, acc_offset = 0, acc_min = INT32_MIN, acc_max = INT32_MAX;
  std::vector<std::pair<int32_t, int32_t>> low;  ///< low limbs (multiplier, shift), least significant first
  double scale = 0, error = 0;
};

/// The chain for multiplier m >= 0 and shift s of a channel with scale `big_m` and range `r`
/// in form `f`, or nullopt when some step would wrap for an accumulator in the range.
std::optional<Channel> try_chain(double big_m, AccRange r, int32_t zp, int32_t clip_lo, int32_t clip_hi, Form f,
                                 int s, int64_t m) {
  const int64_t two_s = int64_t{1} << s;
  const int64_t h = s > 0 ? two_s / 2 : 0;
  // Saturation points of out(a) = floor((a*m + h) / 2^s) + zp: L is the largest a with
  // out(a) <= clip_lo, U the smallest with out(a) >= clip_hi. out is non-decreasing in a, so
  // clamping a to [L, U] changes no clipped result.
  // [xl, xh]: the range clamped to [L, U], i.e. the accumulators whose result is not saturated
  // and the saturation points next to them. When the whole range saturates to one side, one
  // point of smallest magnitude that saturates serves all (its result is the same clip bound).
  int64_t xl = r.lo, xh = r.hi;
  if (m > 0) {
    const int64_t big_u = ceil_div((int64_t{clip_hi} - zp) * two_s - h, m);
    const int64_t big_l = floor_div((int64_t{clip_lo} - zp + 1) * two_s - h - 1, m);
    if (big_u <= r.lo) {
      xl = xh = std::max<int64_t>(big_u, 0);
    } else if (big_l >= r.hi) {
      xl = xh = std::min<int64_t>(big_l, 0);
    } else {
      xl = std::max(r.lo, big_l);
      xh = std::min(r.hi, big_u);
    }
  }
  const bool clamp = f != Form::kPlain;
  const int64_t span_lo = clamp ? xl : r.lo, span_hi = clamp ? xh : r.hi;  // what the MUL sees
  int64_t off = 0;
  if (f == Form::kCentred && m > 0) {
    // What the 32-bit steps see is x * m + round = acc * m + h - Q * 2^s with
    // Q = floor((h + c * m) / 2^s), c = -off (runtime/qnn.h): choose Q nearest the middle of
    // (acc * m + h) / 2^s over the span, so that the product is centred on 0 (the rounding term,
    // up to 2^s, included), and the smallest c that gives it.
    const I128 mid2 = (I128{span_lo} + span_hi) * m + 2 * I128{h};  // twice the middle of acc * m + h
    const I128 big_q = floor_div(mid2 + two_s, 2 * I128{two_s});
    I128 c = -floor_div(-(big_q * two_s - h), I128{m});  // ceil((Q * 2^s - h) / m)
    // acc + off must not wrap for any acc in [lo, hi]
    c = std::clamp<I128>(c, I128{r.hi} - kI32Max, I128{r.lo} - kI32Min);
    off = -static_cast<int64_t>(c);
  }
  if (!fits32(off) || !fits32(r.lo + off) || !fits32(r.hi + off)) return std::nullopt;
  const int64_t x0 = span_lo + off, x1 = span_hi + off;
  if (!fits32(x0) || !fits32(x1)) return std::nullopt;
  const int64_t k = h - off * m;  // |off * m| < 2^62
  const int64_t q = floor_div(k, two_s);
  const int64_t round = k - q * two_s;
  const int64_t p0 = x0 * m + round, p1 = x1 * m + round;
  // neither the product nor the rounding add may wrap (each step of the chain stays exact)
  if (!fits32(x0 * m) || !fits32(x1 * m) || !fits32(p0) || !fits32(p1)) return std::nullopt;
  const int64_t add = q + zp;
  if (!fits32(add) || !fits32(floor_div(p0, two_s) + add) || !fits32(floor_div(p1, two_s) + add)) return std::nullopt;
  Channel ch;
  ch.multiplier = static_cast<int32_t>(m);
  ch.shift = s;
  ch.acc_offset = static_cast<int32_t>(off);
  if (clamp) {
    ch.acc_min = static_cast<int32_t>(x0);
    ch.acc_max = static_cast<int32_t>(x1);
  }
  ch.scale = std::ldexp(static_cast<double>(m), -s);
  ch.error = static_cast<double>(std::max(std::llabs(xl), std::llabs(xh))) * std::fabs(ch.scale - big_m);
  return ch;
}

/// The chain of the largest shift in [0, 31] that does not wrap in form `f`, or nullopt.
std::optional<Channel> best_chain(double big_m, AccRange r, int32_t zp, int32_t clip_lo, int32_t clip_hi, Form f) {
  for (int s = 31; s >= 0; --s) {
    const int64_t m = std::llround(std::ldexp(big_m, s));
    if (m > kI32Max) continue;
    if (auto ch = try_chain(big_m, r, zp, clip_lo, clip_hi, f, s, m)) return ch;
  }
  return std::nullopt;
}

/// Exponent e when x is exactly 2^e, else nullopt.
std::optional<int> exact_log2(double x) {
  int e = 0;
  const double f = std::frexp(x, &e);  // x = f * 2^e, f in [0.5, 1)
  if (f != 0.5) return std::nullopt;
  return e - 1;
}

void collapse(std::vector<int32_t>& v) {
  for (int32_t x : v)
    if (x != v[0]) return;
  v.resize(1);
}

int bits_of(I128 m) {
  int b = 0;
  while (m > 0) {
    ++b;
    m >>= 1;
  }
  return b;
}

/// M = mant / 2^e exactly, mant odd (M > 0 finite; e may be negative).
void exact_dyadic(double big_m, int64_t& mant, int& e) {
  int x = 0;
  const double f = std::frexp(big_m, &x);  // M = f 2^x, f in [0.5, 1)
  mant = static_cast<int64_t>(std::ldexp(f, 53));
  e = 53 - x;
  while (mant % 2 == 0) {
    mant /= 2;
    --e;
  }
}

/// The one-channel Requant of `ch` (for evaluating its chain).
runtime::Requant single(const Channel& ch, int32_t zp, int32_t clip_lo, int32_t clip_hi) {
  runtime::Requant rq;
  rq.multiplier = {ch.multiplier};
  rq.shift = {ch.shift};
  rq.acc_offset = {ch.acc_offset};
  rq.acc_min = {ch.acc_min};
  rq.acc_max = {ch.acc_max};
  for (const auto& [lm, lt] : ch.low) {
    rq.low_multiplier.push_back({lm});
    rq.low_shift.push_back({lt});
  }
  rq.out_zero_point = zp;
  rq.clip_lo = clip_lo;
  rq.clip_hi = clip_hi;
  return rq;
}

/// The smallest accumulator a with floor(a * M + 1/2) + zp >= v, i.e. ceil((v - zp - 1/2) / M)
/// (M > 0), in exact arithmetic.
I128 level_threshold(int64_t mant, int e, int32_t zp, int32_t v) {
  // (2 (v - zp) - 1) / (2 M) = (2 (v - zp) - 1) 2^e / (2 mant) for -60 <= e <= 100:
  // |numerator| < 2^9 2^100, denominator <= 2^54 2^60
  I128 num = I128{2} * (int64_t{v} - zp) - 1;
  I128 den = I128{2} * mant;
  if (e >= 0) {
    num *= I128{1} << e;
  } else {
    den *= I128{1} << -e;
  }
  return -floor_div(-num, den);
}

/// Whether the chain of `ch` gives clip(floor(acc * M + 1/2) + zp) for every acc in `r`:
/// both are non-decreasing step functions of acc (the chain because no step wraps over `r`,
/// which try_chain / wide_chain establish), so they are equal iff, for every output level v
/// in (clip_lo, clip_hi], both first reach v at the same accumulator - about 256 comparisons
/// instead of one per accumulator.
bool rounds_exactly(const Channel& ch, double big_m, AccRange r, int32_t zp, int32_t clip_lo, int32_t clip_hi) {
  const runtime::RequantChannel k = runtime::requant_channel(single(ch, zp, clip_lo, clip_hi), 0);
  auto f = [&](int64_t a) { return int{k.apply(static_cast<int32_t>(a))}; };
  if (!(big_m > 0)) {
    for (int64_t a : {r.lo, r.hi})
      if (f(a) != std::clamp<int32_t>(zp, clip_lo, clip_hi)) return false;
    return true;
  }
  int64_t mant = 0;
  int e = 0;
  exact_dyadic(big_m, mant, e);
  if (e > 100 || e < -60) {
    // M < 2^-47: every |acc * M| < 2^31 2^-47 < 1/2, the result is clip(zp); M > 2^60: every
    // accumulator but 0 saturates (|acc * M| > 255). The step functions agree iff they agree
    // at the ends and next to 0.
    const bool tiny = e > 100;
    for (int64_t a : {r.lo, r.hi, int64_t{-1}, int64_t{0}, int64_t{1}}) {
      if (a < r.lo || a > r.hi) continue;
      const int32_t want = tiny || a == 0 ? std::clamp<int32_t>(zp, clip_lo, clip_hi) : a > 0 ? clip_hi : clip_lo;
      if (f(a) != want) return false;
    }
    return true;
  }
  for (int32_t v = clip_lo + 1; v <= clip_hi; ++v) {
    const I128 t = level_threshold(mant, e, zp, v);
    if (t <= r.lo) {
      if (f(r.lo) < v) return false;
    } else if (t > r.hi) {
      if (f(r.hi) >= v) return false;
    } else {
      const int64_t a = static_cast<int64_t>(t);
      if (f(a) < v || f(a - 1) >= v) return false;
    }
  }
  return true;
}

/// The 32-bit multipliers m, per shift s, for which every level's threshold (level_threshold)
/// is that of floor((a m + h) / 2^s) + zp over `r` (each threshold t bounds t m and (t - 1) m):
/// an interval [lo, hi], empty when lo > hi. They do not depend on the chain's form, so
/// exact_one_limb's forms share one instance per channel; each shift's interval is computed on
/// first use and kept.
class FeasibleMultipliers {
 public:
  FeasibleMultipliers(double big_m, AccRange r, int32_t zp, int32_t clip_lo, int32_t clip_hi)
      : r_(r), zp_(zp), clip_lo_(clip_lo) {
    int64_t mant = 0;
    int e = 0;
    exact_dyadic(big_m, mant, e);
    in_range_ = !(e > 100 || e < -60);  // level_threshold's range (rounds_exactly handles these)
    if (!in_range_) return;
    for (int32_t v = clip_lo + 1; v <= clip_hi; ++v) thr_.push_back(level_threshold(mant, e, zp, v));
  }
  /// False when M is outside level_threshold's range (no one-limb chain is searched).
  bool in_range() const { return in_range_; }
  /// [m_lo, m_hi] for shift s in [0, 31].
  std::pair<I128, I128> at(int s) {
    auto& slot = by_shift_[static_cast<size_t>(s)];
    if (!slot) slot = compute(s);
    return *slot;
  }

 private:
  std::pair<I128, I128> compute(int s) const {
    const I128 two_s = I128{1} << s, h = s > 0 ? two_s / 2 : 0;
    I128 m_lo = 0, m_hi = kI32Max;  // feasible multipliers
    // a m >= b (lower = true) or a m < b, for a != 0
    auto bound = [&](int64_t a, I128 b, bool at_least) {
      if (a == 0) {
        // 0 >= b or 0 < b must hold whatever m is
        if (at_least ? !(0 >= b) : !(0 < b)) m_lo = m_hi + 1;
        return;
      }
      if (!at_least) b -= 1;  // a m <= b - 1
      // a m >= b: a > 0 -> m >= ceil(b / a); a < 0 -> m <= floor(b / a); and <= likewise
      const bool lower = (a > 0) == at_least;
      if (lower) {
        m_lo = std::max(m_lo, a > 0 ? -floor_div(-b, I128{a}) : -floor_div(b, I128{-a}));
      } else {
        m_hi = std::min(m_hi, a > 0 ? floor_div(b, I128{a}) : floor_div(-b, I128{-a}));
      }
    };
    for (size_t i = 0; i < thr_.size() && m_lo <= m_hi; ++i) {
      const int32_t v = clip_lo_ + 1 + static_cast<int32_t>(i);
      const I128 b = (I128{v} - zp_) * two_s - h;  // out(a) >= v <=> a m >= b
      const I128 t = thr_[i];
      if (t <= r_.lo) {
        bound(r_.lo, b, true);
      } else if (t > r_.hi) {
        bound(r_.hi, b, false);
      } else {
        bound(static_cast<int64_t>(t), b, true);
        bound(static_cast<int64_t>(t) - 1, b, false);
      }
    }
    return {m_lo, m_hi};
  }

  AccRange r_;
  int32_t zp_, clip_lo_;
  bool in_range_ = false;
  std::vector<I128> thr_;
  std::array<std::optional<std::pair<I128, I128>>, 32> by_shift_{};
};

/// A one-limb chain in form `f` that rounds exactly like M over `r`, or nullopt: for each
/// shift from 31 down, the multiplier nearest M 2^s in that shift's feasible interval
/// (feasible_multipliers, computed for the same M, r, zp and clip bounds) is tried (try_chain;
/// rounds_exactly confirms).
std::optional<Channel> exact_one_limb(FeasibleMultipliers& feasible, double big_m, AccRange r, int32_t zp,
                                      int32_t clip_lo, int32_t clip_hi, Form f) {
  if (!feasible.in_range()) return std::nullopt;
  for (int s = 31; s >= 0; --s) {
    const auto [m_lo, m_hi] = feasible.at(s);
    if (m_lo > m_hi) continue;
    const I128 want = std::llround(std::ldexp(big_m, s));
    const int64_t m = static_cast<int64_t>(std::clamp(want, m_lo, m_hi));
    if (auto ch = try_chain(big_m, r, zp, clip_lo, clip_hi, f, s, m)) {
      if (rounds_exactly(*ch, big_m, r, zp, clip_lo, clip_hi)) return ch;
    }
  }
  return std::nullopt;
}

/// A chain with low limbs whose multiplier is M itself (m / 2^S = M exactly), so that it
/// rounds exactly like M: the clamp to the saturation points and the centring offset of the
/// centred form, then the fewest limbs (at most runtime::kMaxLowLimbs low ones) and, for that
/// number, the smallest total low shift for which no step of the chain wraps at either end of
/// the clamped range (every step is non-decreasing in x, so the ends bound it). nullopt when
/// none fits.
std::optional<Channel> wide_chain(double big_m, AccRange r, int32_t zp, int32_t clip_lo, int32_t clip_hi) {
  int64_t mant = 0;
  int e = 0;
  exact_dyadic(big_m, mant, e);
  if (e <= 0 || e > 62) return std::nullopt;  // an integer M (one limb is exact) or a tiny one
  const int big_s = e;
  const I128 two_s = I128{1} << big_s, h = two_s / 2, m = mant;
  // saturation points (try_chain's, in 128 bits)
  const I128 big_u = -floor_div(-((I128{clip_hi} - zp) * two_s - h), m);
  const I128 big_l = floor_div((I128{clip_lo} - zp + 1) * two_s - h - 1, m);
  I128 xl = r.lo, xh = r.hi;
  if (big_u <= r.lo) {
    xl = xh = std::max<I128>(big_u, 0);
  } else if (big_l >= r.hi) {
    xl = xh = std::min<I128>(big_l, 0);
  } else {
    xl = std::max<I128>(r.lo, big_l);
    xh = std::min<I128>(r.hi, big_u);
  }
  // the centring offset (try_chain's centred form)
  const I128 mid2 = (xl + xh) * m + 2 * h;
  const I128 big_q = floor_div(mid2 + two_s, 2 * two_s);
  I128 c = -floor_div(-(big_q * two_s - h), m);
  c = std::clamp<I128>(c, I128{r.hi} - kI32Max, I128{r.lo} - kI32Min);
  const I128 off = -c;
  auto fits = [](I128 v) { return v >= kI32Min && v <= kI32Max; };
  if (!fits(off) || !fits(r.lo + off) || !fits(r.hi + off) || !fits(xl + off) || !fits(xh + off)) return std::nullopt;
  const int64_t x0 = static_cast<int64_t>(xl + off), x1 = static_cast<int64_t>(xh + off);
  const I128 k = h - off * m;
  const I128 q = floor_div(k, two_s);
  const I128 rr = k - q * two_s;
  if (!fits(q + zp)) return std::nullopt;
  for (size_t n = 1; n <= runtime::kMaxLowLimbs; ++n) {
    const int nn = static_cast<int>(n);
    for (int t = std::max(nn, big_s - 31); t <= std::min(big_s, 31 * nn); ++t) {
      std::vector<int> lt(n);
      for (int j = 0; j < nn; ++j) lt[static_cast<size_t>(j)] = t / nn + (j < t % nn ? 1 : 0);
      std::vector<int64_t> lm(n), dig(n);
      int tj = 0;
      for (size_t j = 0; j < n; ++j) {
        lm[j] = static_cast<int64_t>((m >> tj) & ((I128{1} << lt[j]) - 1));
        dig[j] = static_cast<int64_t>((rr >> tj) & ((I128{1} << lt[j]) - 1));
        tj += lt[j];
      }
      const I128 top = m >> t, top_round = rr >> t;
      const int top_shift = big_s - t;
      if (top > kI32Max || top_shift > 31) continue;
      bool ok = true;
      for (int64_t x : {x0, x1}) {
        I128 y = 0;
        for (size_t j = 0; j < n && ok; ++j) {
          const I128 p = I128{x} * lm[j];
          ok = fits(p) && fits(p + y) && fits(p + y + dig[j]);
          y = floor_div(p + y + dig[j], I128{1} << lt[j]);
        }
        const I128 p = I128{x} * top;
        ok = ok && fits(p) && fits(p + y) && fits(p + y + top_round);
        if (!ok) break;
        const I128 out = floor_div(p + y + top_round, I128{1} << top_shift) + q + zp;
        ok = fits(floor_div(p + y + top_round, I128{1} << top_shift)) && fits(out);
        if (!ok) break;
      }
      if (!ok) continue;
      Channel ch;
      ch.multiplier = static_cast<int32_t>(top);
      ch.shift = top_shift;
      ch.acc_offset = static_cast<int32_t>(off);
      ch.acc_min = static_cast<int32_t>(x0);
      ch.acc_max = static_cast<int32_t>(x1);
      for (size_t j = 0; j < n; ++j) ch.low.emplace_back(static_cast<int32_t>(lm[j]), lt[j]);
      ch.scale = big_m;
      ch.error = 0;
      return ch;
    }
  }
  return std::nullopt;
}

}  // namespace

runtime::Requant derive_requant(const std::vector<double>& m, const std::vector<AccRange>& acc,
                                int32_t out_zero_point, const std::string& where, int32_t clip_lo, int32_t clip_hi,
                                RequantFigures* figures, bool exact) {
  TESSEL_CHECK(!m.empty() && m.size() == acc.size(), "{}: {} scales for {} accumulator ranges", where, m.size(),
               acc.size());
  TESSEL_CHECK(clip_lo >= -128 && clip_lo <= clip_hi && clip_hi <= 127 && out_zero_point >= -128 &&
                   out_zero_point <= 127,
               "{}: clip [{}, {}] or zero point {} out of range", where, clip_lo, clip_hi, out_zero_point);
  for (size_t c = 0; c < m.size(); ++c) {
    // 0 only from a float32 product that underflows (every scale is positive): its results are
    // the zero point, as ONNX Runtime's
    if (!(m[c] >= 0.0) || !std::isfinite(m[c]))
      throw_user_error("{}: requantisation scale s_in*s_w/s_out = {} of channel {} must be finite and not negative",
                       where, m[c], c);
    if (acc[c].lo > acc[c].hi || !fits32(acc[c].lo) || !fits32(acc[c].hi))
      throw_user_error(
          "{}: accumulator range [{}, {}] of channel {} does not fit 32 bits (the layer's int32 accumulation would "
          "wrap; its weight or bias values are too large for its scales)",
          where, acc[c].lo, acc[c].hi, c);
  }
  const size_t oc = m.size();
  runtime::Requant rq;
  rq.out_zero_point = out_zero_point;
  rq.clip_lo = clip_lo;
  rq.clip_hi = clip_hi;
  RequantFigures fig;
  auto finish = [&](std::vector<Channel> chans, const char* form, std::vector<int> inexact = {}) {
    rq.multiplier.clear();
    rq.shift.clear();
    rq.acc_offset.clear();
    rq.acc_min.clear();
    rq.acc_max.clear();
    fig = RequantFigures{};
    fig.form = form;
    for (size_t c = 0; c < oc; ++c) {
      const Channel& ch = chans[c];
      rq.multiplier.push_back(ch.multiplier);
      rq.shift.push_back(ch.shift);
      rq.acc_offset.push_back(ch.acc_offset);
      rq.acc_min.push_back(ch.acc_min);
      rq.acc_max.push_back(ch.acc_max);
      fig.scale.push_back(ch.scale);
      fig.rel_error.push_back(m[c] > 0 ? std::fabs(ch.scale - m[c]) / m[c] : 0.0);
      fig.max_error_lsb.push_back(ch.error);
      // the whole multiplier, multiplier * 2^T + sum_j low_j * 2^T_j (runtime/qnn.h)
      I128 whole = 0;
      int t = 0;
      for (const auto& [lm, lt] : ch.low) {
        whole += I128{lm} << t;
        t += lt;
      }
      fig.multiplier_bits.push_back(bits_of(whole + (I128{ch.multiplier} << t)));
      fig.limbs.push_back(1 + static_cast<int>(ch.low.size()));
    }
    size_t n_low = 0;
    for (const Channel& ch : chans) n_low = std::max(n_low, ch.low.size());
    rq.low_multiplier.assign(n_low, {});
    rq.low_shift.assign(n_low, {});
    for (size_t j = 0; j < n_low; ++j) {
      for (const Channel& ch : chans) {
        // a channel with fewer limbs: limbs of multiplier 0 and shift 0 pass y on unchanged
        rq.low_multiplier[j].push_back(j < ch.low.size() ? ch.low[j].first : 0);
        rq.low_shift[j].push_back(j < ch.low.size() ? ch.low[j].second : 0);
      }
      collapse(rq.low_multiplier[j]);
      collapse(rq.low_shift[j]);
    }
    for (auto* v : {&rq.multiplier, &rq.shift, &rq.acc_offset, &rq.acc_min, &rq.acc_max}) collapse(*v);
    fig.inexact_channels = std::move(inexact);
    if (figures) *figures = fig;
    return rq;
  };
  // Power-of-two scales: add-round, arithmetic shift, clip (multiplier 1), when the rounding add
  // cannot wrap.
  {
    std::vector<Channel> chans(oc);
    bool pow2 = true;
    for (size_t c = 0; c < oc && pow2; ++c) {
      const auto e = exact_log2(m[c]);
      pow2 = e && *e <= 0;
      if (!pow2) break;
      if (*e < -31) {
        // M <= 2^-32: every |acc * M| < 1/2, so the result is the zero point; shift 31 gives it
        // too (floor((acc + 2^30) / 2^31) = 0) for accumulators in [-2^30, 2^30)
        pow2 = acc[c].lo >= -(int64_t{1} << 30) && acc[c].hi < (int64_t{1} << 30);
        chans[c].shift = 31;
        chans[c].scale = m[c];  // the results are those of M
        continue;
      }
      const int s = -*e;
      pow2 = acc[c].hi + (s > 0 ? int64_t{1} << (s - 1) : 0) <= kI32Max;
      chans[c].shift = s;
      chans[c].scale = m[c];
    }
    if (pow2) return finish(std::move(chans), "power of two");
  }
  // Degenerate scales and clips: a constant output, or scales that leave nothing to round.
  std::vector<bool> fixed(oc, false);
  std::vector<Channel> special(oc);
  for (size_t c = 0; c < oc; ++c) {
    if (clip_lo == clip_hi || m[c] < std::ldexp(1.0, -32)) {
      // every result is clip(zp): the clip is one value, or every |acc * M| < 2^31 * 2^-32 = 1/2
      special[c].multiplier = 0;
      special[c].scale = 0;
      fixed[c] = true;
    } else if (m[c] >= std::ldexp(1.0, 30)) {
      // every accumulator but 0 saturates, with M and with M' = 2^30 alike; clamped to [-1, 1]
      // so that the product cannot wrap
      special[c].multiplier = 1 << 30;
      special[c].acc_min = -1;
      special[c].acc_max = 1;
      special[c].scale = std::ldexp(1.0, 30);
      fixed[c] = true;
    }
  }
  std::vector<Channel> best;
  double best_error = std::numeric_limits<double>::infinity();
  const char* best_form = nullptr;
  for (Form f : {Form::kPlain, Form::kClamp, Form::kCentred}) {
    std::vector<Channel> chans(oc);
    double error = 0;
    bool ok = true;
    for (size_t c = 0; c < oc && ok; ++c) {
      if (fixed[c]) {
        chans[c] = special[c];
        continue;
      }
      const auto ch = best_chain(m[c], acc[c], out_zero_point, clip_lo, clip_hi, f);
      ok = ch.has_value();
      if (ok) {
        chans[c] = *ch;
        error = std::max(error, ch->error);
      }
    }
    if (!ok) continue;
    if (error < best_error) {
      best_error = error;
      best = std::move(chans);
      best_form = form_name(f);
    }
    if (best_error <= kNegligibleErrorLsb) break;
  }
  TESSEL_CHECK(best_form != nullptr, "{}: no requantisation chain fits 32 bits", where);
  // Exactness: a channel whose chain does not round exactly like M (an output differs from
  // round(acc * M) for some accumulator in its range) gets an exact one-limb chain when some
  // 32-bit multiplier gives one, else the low limbs of wide_chain.
  std::string form = best_form;
  std::vector<int> inexact;
  for (size_t c = 0; c < oc; ++c) {
    if (rounds_exactly(best[c], m[c], acc[c], out_zero_point, clip_lo, clip_hi)) continue;
    if (!exact) {
      inexact.push_back(static_cast<int>(c));
      continue;
    }
    std::optional<Channel> ch;
    FeasibleMultipliers feasible(m[c], acc[c], out_zero_point, clip_lo, clip_hi);
    for (Form f : {Form::kPlain, Form::kClamp, Form::kCentred}) {
      if (!ch) ch = exact_one_limb(feasible, m[c], acc[c], out_zero_point, clip_lo, clip_hi, f);
    }
    if (!ch) {
      ch = wide_chain(m[c], acc[c], out_zero_point, clip_lo, clip_hi);
      if (ch) form = "wide";
    }
    if (ch) {
      best[c] = *ch;
    } else {
      inexact.push_back(static_cast<int>(c));
    }
  }
  return finish(std::move(best), form.c_str(), std::move(inexact));
}

AccRange channel_acc_range(const std::vector<int64_t>& w, int64_t bias, int64_t dlo, int64_t dhi) {
  AccRange r{bias, bias};
  for (int64_t wk : w) {
    r.hi += std::max(wk * dlo, wk * dhi);
    r.lo += std::min(wk * dlo, wk * dhi);
  }
  return r;
}

std::vector<AccRange> qconv2d_acc_ranges(const ir::Graph& g, const ir::Node& n) {
  const ir::Value& x = g.values[n.inputs[0]];
  const ir::Value& w = g.values[n.inputs[1]];
  TESSEL_CHECK(x.quant && w.shape.size() == 4 && w.shape[0] > 0, "{}: qconv2d without input parameters or weights",
               ir::describe(n));
  const int64_t oc = w.shape[0];
  const int64_t per = w.num_elements() / oc;
  const int32_t zx = x.quant->zero_point.at(0);
  // x - zx lies in [dlo, dhi] (padding taps contribute 0, inside that range as dlo <= 0 <= dhi).
  const int64_t dlo = -128 - zx, dhi = 127 - zx;
  const auto wi = g.const_i64(n.inputs[1]);
  const auto bi = g.const_i64(n.inputs[2]);
  std::vector<AccRange> r(static_cast<size_t>(oc));
  std::vector<int64_t> wc(static_cast<size_t>(per));
  for (int64_t c = 0; c < oc; ++c) {
    std::copy(wi.begin() + c * per, wi.begin() + (c + 1) * per, wc.begin());
    r[static_cast<size_t>(c)] = channel_acc_range(wc, bi[c], dlo, dhi);
  }
  return r;
}

std::vector<double> qconv2d_scales(const ir::Graph& g, const ir::Node& n) {
  const ir::Value& x = g.values[n.inputs[0]];
  const ir::Value& w = g.values[n.inputs[1]];
  const ir::Value& y = g.values[n.outputs[0]];
  TESSEL_CHECK(x.quant && w.quant && y.quant, "{}: qconv2d without quantisation parameters", ir::describe(n));
  const int64_t oc = w.shape.at(0);
  std::vector<double> m(static_cast<size_t>(oc));
  for (int64_t c = 0; c < oc; ++c) {
    // The scale product in float32, as ONNX Runtime's QLinearConv / QLinearMatMul form it.
    const float s_w = w.quant->scale_at(w.quant->per_tensor() ? 0 : static_cast<size_t>(c));
    m[static_cast<size_t>(c)] = static_cast<double>(x.quant->scale[0] * s_w / y.quant->scale[0]);
  }
  return m;
}

void requant(ir::Graph& g, PassContext& ctx) {
  for (ir::Node& n : g.nodes) {
    if (!n.is_tessel() || n.op != "qconv2d") continue;
    const ir::Value& y = g.values[n.outputs[0]];
    TESSEL_CHECK(y.quant, "{}: qconv2d without output parameters", ir::describe(n));
    // fuse_activation (which runs first) leaves a fused clip in attrs["requant"].
    int32_t clip_lo = -128, clip_hi = 127;
    if (const auto it = n.attrs.find("requant"); it != n.attrs.end() && it->is_object()) {
      clip_lo = it->value("clip_lo", -128);
      clip_hi = it->value("clip_hi", 127);
    }
    const runtime::Requant rq = derive_requant(qconv2d_scales(g, n), qconv2d_acc_ranges(g, n), y.quant->zero_point[0],
                                               ir::describe(n), clip_lo, clip_hi, nullptr, ctx.exact_requant);
    n.attrs["requant"] = ir::requant_to_json(rq);
  }
}

}  // namespace tessel::compiler::passes
