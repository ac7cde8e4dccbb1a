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
  for (const auto& f : fields) {
    if (f.v.size() != 1 && static_cast<int64_t>(f.v.size()) != oc) {
      return fmt::format("requant {} has {} entries, expected 1 or {} (the output channels)", f.name, f.v.size(),
                         oc);
    }
  }
  for (size_t c = 0; c < rq.shift.size(); ++c) {
    if (rq.shift[c] < 0 || rq.shift[c] > 31) {
      return fmt::format("requant shift[{}] {} is outside [0, 31]", c, rq.shift[c]);
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
