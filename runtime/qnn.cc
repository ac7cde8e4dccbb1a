// The reference implementation of runtime/qnn.h's quantised convolution: plain loops in the order
// of the definition, 32-bit wrapping accumulation (the GEMM core's arithmetic).
#include "runtime/qnn.h"

#include <fmt/format.h>

#include "support/error.h"

namespace tessel::runtime {

void qconv2d_reference(const QConv2dParams& p, const int8_t* in, const int8_t* w,
                       const int32_t* bias, int8_t* out) {
  if (p.groups < 1 || p.ic % p.groups != 0 || p.oc % p.groups != 0 || p.stride_h < 1 ||
      p.stride_w < 1 || p.kh < 1 || p.kw < 1 || p.oh() < 1 || p.ow() < 1) {
    throw_user_error(
        "qconv2d_reference: invalid parameters ic={} oc={} groups={} kernel=[{}, {}] "
        "stride=[{}, {}] output=[{}, {}]",
        p.ic, p.oc, p.groups, p.kh, p.kw, p.stride_h, p.stride_w, p.oh(), p.ow());
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
