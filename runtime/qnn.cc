// The reference implementation of runtime/qnn.h's quantised convolution: plain loops in the order
// of the definition, 32-bit wrapping accumulation (the GEMM core's arithmetic).
#include "runtime/qnn.h"

#include <fmt/format.h>

#include "support/error.h"

namespace tessel::runtime {

std::string requant_problem(const Requant& rq, int64_t oc) {
  const struct {
    const char* name;
    const std::vector<int32_t>& v;
  } fields[] = {{"acc_offset", rq.acc_offset}, {"acc_min", rq.acc_min}, {"acc_max", rq.acc_max},
                {"multiplier", rq.multiplier}, {"shift", rq.shift}};
  auto bad_size = [&](const std::string& name, size_t n) {
    return n != 1 && static_cast<int64_t>(n) != oc
               ? fmt::format("requant {} has {} entries, expected 1 or {} (the output channels)", name, n, oc)
               : std::string();
  };
  for (const auto& f : fields) {
    if (std::string p = bad_size(f.name, f.v.size()); !p.empty()) return p;
  }
  for (size_t c = 0; c < rq.shift.size(); ++c) {
    if (rq.shift[c] < 0 || rq.shift[c] > 31) {
      return fmt::format("requant shift[{}] {} is outside [0, 31]", c, rq.shift[c]);
    }
  }
  if (rq.low_multiplier.size() != rq.low_shift.size()) {
    return fmt::format("requant has {} low_multiplier limbs but {} low_shift limbs", rq.low_multiplier.size(),
                       rq.low_shift.size());
  }
  if (rq.low_multiplier.size() > kMaxLowLimbs) {
    return fmt::format("requant has {} low limbs, at most {} are supported", rq.low_multiplier.size(), kMaxLowLimbs);
  }
  for (size_t j = 0; j < rq.low_multiplier.size(); ++j) {
    if (std::string p = bad_size(fmt::format("low_multiplier[{}]", j), rq.low_multiplier[j].size()); !p.empty())
      return p;
    if (std::string p = bad_size(fmt::format("low_shift[{}]", j), rq.low_shift[j].size()); !p.empty()) return p;
    for (size_t c = 0; c < rq.low_shift[j].size(); ++c) {
      const int32_t t = rq.low_shift[j][c];
      if (t < 0 || t > 31) return fmt::format("requant low_shift[{}][{}] {} is outside [0, 31]", j, c, t);
    }
  }
  if (!rq.low_multiplier.empty()) {
    const size_t n = oc > 0 ? static_cast<size_t>(oc) : 1;
    for (size_t c = 0; c < n; ++c) {
      int64_t total = rq.shift_at(c);
      for (const auto& t : rq.low_shift) total += Requant::at(t, c);
      if (total > 62) {
        return fmt::format("requant channel {}: the total shift {} (shift plus the low limbs' shifts) exceeds 62", c,
                           total);
      }
    }
  }
  const size_t n = std::max(rq.acc_min.size(), rq.acc_max.size());
  for (size_t c = 0; c < n; ++c) {
    if (rq.acc_min_at(c) > rq.acc_max_at(c)) {
      return fmt::format("requant clamp of channel {}: acc_min {} exceeds acc_max {}", c, rq.acc_min_at(c),
                         rq.acc_max_at(c));
    }
  }
  if (rq.clip_lo < -128 || rq.clip_hi > 127 || rq.clip_lo > rq.clip_hi) {
    return fmt::format("requant clip [{}, {}] must satisfy -128 <= clip_lo <= clip_hi <= 127", rq.clip_lo,
                       rq.clip_hi);
  }
  return "";
}

void requant_wide_multiplier(const Requant& rq, size_t c, __int128& m, int& s) {
  using I128 = __int128;
  // m = multiplier * 2^T_L + sum_j low_multiplier[j] * 2^T_j, S = shift + T_L
  I128 low = 0;
  int t = 0;
  for (size_t j = 0; j < rq.low_limbs(); ++j) {
    low += I128{Requant::at(rq.low_multiplier[j], c)} * (I128{1} << t);
    t += Requant::at(rq.low_shift[j], c);
  }
  m = I128{rq.multiplier_at(c)} * (I128{1} << t) + low;
  s = rq.shift_at(c) + t;
}

RequantChannel requant_channel(const Requant& rq, size_t c) {
  using I128 = __int128;
  RequantChannel ch;
  ch.acc_offset = rq.acc_offset_at(c);
  ch.acc_min = rq.acc_min_at(c);
  ch.acc_max = rq.acc_max_at(c);
  ch.multiplier = rq.multiplier_at(c);
  ch.shift = rq.shift_at(c);
  int32_t out_offset = 0;
  if (rq.low_limbs() == 0) {
    requant_round_terms(ch.multiplier, ch.shift, ch.acc_offset, ch.round, out_offset);
  } else {
    I128 m = 0;
    int s = 0;
    requant_wide_multiplier(rq, c, m, s);
    // K = 2^(S-1) - off * m = Q 2^S + R, 0 <= R < 2^S; |off * m| < 2^31 * 2^93
    const I128 k = (s > 0 ? I128{1} << (s - 1) : 0) - I128{ch.acc_offset} * m;
    const I128 q = k >> s;  // floor
    I128 r = k - q * (I128{1} << s);
    ch.n_low = static_cast<int32_t>(rq.low_limbs());
    for (size_t j = 0; j < rq.low_limbs(); ++j) {
      RequantLimb& l = ch.low[j];
      l.multiplier = Requant::at(rq.low_multiplier[j], c);
      l.shift = Requant::at(rq.low_shift[j], c);
      l.round = static_cast<int32_t>(r & ((I128{1} << l.shift) - 1));
      r >>= l.shift;
    }
    ch.round = static_cast<int32_t>(r);  // R / 2^T_L < 2^shift <= 2^31
    out_offset = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(q)));
  }
  ch.out_add = wrap_add(out_offset, rq.out_zero_point);
  ch.clip_lo = rq.clip_lo;
  ch.clip_hi = rq.clip_hi;
  return ch;
}

void qconv2d_reference(const QConv2dParams& p, const int8_t* in, const int8_t* w,
                       const int32_t* bias, int8_t* out) {
  if (p.groups < 1 || p.ic % p.groups != 0 || p.oc % p.groups != 0 || p.stride_h < 1 ||
      p.stride_w < 1 || p.kh < 1 || p.kw < 1 || p.oh() < 1 || p.ow() < 1) {
    throw_user_error(
        "qconv2d_reference: invalid parameters ic={} oc={} groups={} kernel=[{}, {}] "
        "stride=[{}, {}] output=[{}, {}]",
        p.ic, p.oc, p.groups, p.kh, p.kw, p.stride_h, p.stride_w, p.oh(), p.ow());
  }
  if (const std::string problem = requant_problem(p.rq, p.oc); !problem.empty()) {
    throw_user_error("qconv2d_reference: {}", problem);
  }
  const int64_t icg = p.ic / p.groups, ocg = p.oc / p.groups;
  const int64_t oh = p.oh(), ow = p.ow();
  for (int64_t n = 0; n < p.n; ++n) {
    for (int64_t o = 0; o < p.oc; ++o) {
      const int64_t g = o / ocg;
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t x = 0; x < ow; ++x) {
          int32_t acc = bias[o];
          for (int64_t c = 0; c < icg; ++c) {
            for (int64_t ky = 0; ky < p.kh; ++ky) {
              const int64_t iy = y * p.stride_h - p.pad_top + ky;
              if (iy < 0 || iy >= p.ih) continue;
              for (int64_t kx = 0; kx < p.kw; ++kx) {
                const int64_t ix = x * p.stride_w - p.pad_left + kx;
                if (ix < 0 || ix >= p.iw) continue;
                const int32_t a = in[((n * p.ic + g * icg + c) * p.ih + iy) * p.iw + ix];
                const int32_t b = w[((o * icg + c) * p.kh + ky) * p.kw + kx];
                acc = wrap_add(acc, wrap_mul(a - p.in_zero_point, b));
              }
            }
          }
          out[((n * p.oc + o) * oh + y) * ow + x] = requantize(acc, p.rq, static_cast<size_t>(o));
        }
      }
    }
  }
}

}  // namespace tessel::runtime
