#include "compiler/passes/requant.h"

#include <fmt/format.h>

#include <algorithm>
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

int bits_of(int64_t m) {
  int b = 0;
  while (m > 0) {
    ++b;
    m >>= 1;
  }
  return b;
}

}  // namespace

runtime::Requant derive_requant(const std::vector<double>& m, const std::vector<AccRange>& acc,
                                int32_t out_zero_point, const std::string& where, int32_t clip_lo, int32_t clip_hi,
                                RequantFigures* figures) {
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
  auto finish = [&](std::vector<Channel> chans, const char* form) {
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
      fig.multiplier_bits.push_back(bits_of(ch.multiplier));
    }
    for (auto* v : {&rq.multiplier, &rq.shift, &rq.acc_offset, &rq.acc_min, &rq.acc_max}) collapse(*v);
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
  return finish(std::move(best), best_form);
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

void requant(ir::Graph& g, PassContext&) {
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
                                               ir::describe(n), clip_lo, clip_hi);
    n.attrs["requant"] = ir::requant_to_json(rq);
  }
}

}  // namespace tessel::compiler::passes
