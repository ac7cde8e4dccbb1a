#include "compiler/passes/qadd_scheme.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "runtime/cpu/kernels.h"
#include "support/error.h"

namespace tessel::compiler::passes {
namespace {

constexpr int kPairs = 256 * 256;
constexpr int kMaxShift = 30;
constexpr int64_t kImmMin = -32768, kImmMax = 32767;

bool fits32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

/// floor(a / 2^s) for any sign.
int64_t floor_shift(int64_t a, int s) { return a >> s; }

struct Pair {
  int qa, qb;
};
Pair pair_of(int i) { return {i / 256 - 128, i % 256 - 128}; }

/// The round-term interval of one (A, B, s) over all pairs, and the pairs that set its bounds.
struct Interval {
  int64_t lo = INT64_MIN, hi = INT64_MAX;
  int lo_pair = -1, hi_pair = -1;
  bool empty() const { return lo > hi; }
};

Interval round_interval(const QaddQuant& q, const std::vector<int8_t>& want, int32_t clip_lo, int32_t clip_hi,
                        int64_t a_mul, int64_t b_mul, int s) {
  Interval iv;
  const int64_t one = int64_t{1} << s;
  const int64_t zy = q.y_zero_point;
  auto raise = [&](int64_t v, int i) {
    if (v > iv.lo) iv.lo = v, iv.lo_pair = i;
  };
  auto lower = [&](int64_t v, int i) {
    if (v < iv.hi) iv.hi = v, iv.hi_pair = i;
  };
  if (clip_lo == clip_hi) return iv;  // every output is the one clip value
  for (int i = 0; i < kPairs; ++i) {
    const Pair p = pair_of(i);
    const int64_t x = (p.qa - q.a_zero_point) * a_mul + (p.qb - q.b_zero_point) * b_mul;
    const int64_t r = want[static_cast<size_t>(i)];
    if (r == clip_hi) {
      raise((clip_hi - zy) * one - x, i);  // (x + R) >> s >= clip_hi - zy
    } else if (r == clip_lo) {
      lower((clip_lo - zy + 1) * one - 1 - x, i);  // (x + R) >> s <= clip_lo - zy
    } else {
      raise((r - zy) * one - x, i);
      lower((r - zy + 1) * one - 1 - x, i);
    }
    // the interval only shrinks: once empty, the pairs that set its bounds contradict each other
    if (iv.empty()) return iv;
  }
  return iv;
}

/// Whether no step of the chain wraps for any pair.
bool no_wrap(const QaddQuant& q, int64_t a_mul, int64_t b_mul, int64_t round) {
  if (!fits32(a_mul) || !fits32(b_mul) || !fits32(round)) return false;
  // every term is linear in (qa, qb): the extremes lie at the corners of the box
  for (int qa : {-128, 127}) {
    for (int qb : {-128, 127}) {
      const int64_t xa = (qa - q.a_zero_point) * a_mul, xb = (qb - q.b_zero_point) * b_mul;
      if (!fits32(xa) || !fits32(xb) || !fits32(xa + xb) || !fits32(xa + xb + round)) return false;
    }
  }
  return true;
}

std::string pair_text(int i) {
  const Pair p = pair_of(i);
  return fmt::format("({}, {})", p.qa, p.qb);
}

}  // namespace

bool QaddScheme::fits_imm16() const {
  for (int64_t v : {int64_t{a_multiplier}, int64_t{b_multiplier}, int64_t{round}}) {
    if (v < kImmMin || v > kImmMax) return false;
  }
  return true;
}

int8_t QaddScheme::apply(int8_t qa, int8_t qb, int32_t a_zero_point, int32_t b_zero_point) const {
  const int64_t x = int64_t{qa - a_zero_point} * a_multiplier + int64_t{qb - b_zero_point} * b_multiplier + round;
  const int64_t y = floor_shift(x, shift) + y_zero_point;
  return static_cast<int8_t>(std::clamp<int64_t>(y, clip_lo, clip_hi));
}

int8_t qadd_reference(const QaddQuant& q, int8_t qa, int8_t qb) {
  const double sa = q.a_scale, sb = q.b_scale, sy = q.y_scale;
  const int32_t za = q.a_zero_point, zb = q.b_zero_point, zy = q.y_zero_point;
  int8_t r = runtime::cpu::rhe_sat((sa * (qa - za) + sb * (qb - zb)) / sy, zy);
  if (q.relu && r < zy) r = static_cast<int8_t>(std::clamp(zy, -128, 127));
  return r;
}

namespace {

QaddSchemeResult search_qadd_scheme(const QaddQuant& q);

/// The memo key: the bits of every field of q.
std::array<uint32_t, 7> memo_key(const QaddQuant& q) {
  auto bits = [](float f) {
    uint32_t u = 0;
    std::memcpy(&u, &f, sizeof u);
    return u;
  };
  return {bits(q.a_scale), bits(q.b_scale), bits(q.y_scale), static_cast<uint32_t>(q.a_zero_point),
          static_cast<uint32_t>(q.b_zero_point), static_cast<uint32_t>(q.y_zero_point), q.relu ? 1u : 0u};
}

}  // namespace

QaddSchemeResult find_qadd_scheme(const QaddQuant& q) {
  static std::mutex mu;
  static std::map<std::array<uint32_t, 7>, QaddSchemeResult> memo;
  const auto key = memo_key(q);
  {
    const std::lock_guard<std::mutex> lock(mu);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
  }
  QaddSchemeResult r = search_qadd_scheme(q);  // throws for bad scales or zero points (not memoised)
  const std::lock_guard<std::mutex> lock(mu);
  return memo.emplace(key, std::move(r)).first->second;
}

namespace {

QaddSchemeResult search_qadd_scheme(const QaddQuant& q) {
  for (const auto& [what, s] : {std::pair{"a", q.a_scale}, std::pair{"b", q.b_scale}, std::pair{"y", q.y_scale}}) {
    if (!std::isfinite(s) || !(s > 0)) throw_user_error("qadd scheme: scale of {} is {}, expected finite and > 0", what, s);
  }
  for (const auto& [what, z] :
       {std::pair{"a", q.a_zero_point}, std::pair{"b", q.b_zero_point}, std::pair{"y", q.y_zero_point}}) {
    if (z < -128 || z > 127) throw_user_error("qadd scheme: zero point of {} is {}, expected [-128, 127]", what, z);
  }
  std::vector<int8_t> want(kPairs);
  int ties = 0;
  for (int i = 0; i < kPairs; ++i) {
    const Pair p = pair_of(i);
    want[static_cast<size_t>(i)] = qadd_reference(q, static_cast<int8_t>(p.qa), static_cast<int8_t>(p.qb));
    const double v = (double(q.a_scale) * (p.qa - q.a_zero_point) + double(q.b_scale) * (p.qb - q.b_zero_point)) /
                     double(q.y_scale);
    ties += v - std::floor(v) == 0.5;
  }
  QaddScheme base;
  base.y_zero_point = q.y_zero_point;
  base.clip_lo = q.relu ? q.y_zero_point : -128;
  base.clip_hi = 127;
  const double alpha = double(q.a_scale) / double(q.y_scale), beta = double(q.b_scale) / double(q.y_scale);
  // the neighbours of the rounded multipliers, nearest first
  std::vector<std::pair<int, int>> deltas;
  for (int da : {0, -1, 1}) {
    for (int db : {0, -1, 1}) deltas.push_back({da, db});
  }
  auto rank = [](int d) { return d == 0 ? 0 : (d == -1 ? 1 : 2); };
  std::stable_sort(deltas.begin(), deltas.end(), [&](const auto& l, const auto& r) {
    const int nl = std::abs(l.first) + std::abs(l.second), nr = std::abs(r.first) + std::abs(r.second);
    if (nl != nr) return nl < nr;
    if (l.first != r.first) return rank(l.first) < rank(r.first);
    return rank(l.second) < rank(r.second);
  });
  std::string conflict;
  int last_shift = -1;
  for (int s = 0; s <= kMaxShift; ++s) {
    const double scale = std::ldexp(1.0, s);
    const int64_t a0 = std::llround(alpha * scale), b0 = std::llround(beta * scale);
    bool any_fits = false;
    for (const auto& [da, db] : deltas) {
      const int64_t a_mul = a0 + da, b_mul = b0 + db;
      if (!no_wrap(q, a_mul, b_mul, 0)) continue;
      any_fits = true;
      const Interval iv = round_interval(q, want, base.clip_lo, base.clip_hi, a_mul, b_mul, s);
      if (iv.empty()) {
        if (da == 0 && db == 0) {
          last_shift = s;
          conflict = fmt::format("pairs (qa, qb) = {} and {} need round terms >= {} and <= {}", pair_text(iv.lo_pair),
                                 pair_text(iv.hi_pair), iv.lo, iv.hi);
        }
        continue;
      }
      const int64_t half = s == 0 ? 0 : (int64_t{1} << (s - 1));
      const int64_t round = std::clamp(half, iv.lo, iv.hi);
      if (!no_wrap(q, a_mul, b_mul, round)) continue;
      QaddScheme sc = base;
      sc.a_multiplier = static_cast<int32_t>(a_mul);
      sc.b_multiplier = static_cast<int32_t>(b_mul);
      sc.round = static_cast<int32_t>(round);
      sc.shift = s;
      // the interval is exact by construction; the exhaustive evaluation is the proof
      for (int i = 0; i < kPairs; ++i) {
        const Pair p = pair_of(i);
        if (sc.apply(static_cast<int8_t>(p.qa), static_cast<int8_t>(p.qb), q.a_zero_point, q.b_zero_point) !=
            want[static_cast<size_t>(i)]) {
          throw InternalError(fmt::format("qadd scheme: shift {} multipliers {}, {} round {} differ at {}", s, a_mul,
                                          b_mul, round, pair_text(i)));
        }
      }
      return {sc, ""};
    }
    if (!any_fits) break;  // larger shifts only grow the multipliers
  }
  if (last_shift < 0) {
    return {std::nullopt, fmt::format("no exact int32 scheme: the multipliers wrap int32 at every shift "
                                      "(scale ratios {} and {})",
                                      alpha, beta)};
  }
  return {std::nullopt, fmt::format("no exact int32 scheme up to shift {}: {} ({} pairs are exact ties rounded to even)",
                                    last_shift, conflict, ties)};
}

}  // namespace

}  // namespace tessel::compiler::passes
