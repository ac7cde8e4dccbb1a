#include "compiler/passes/requant.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <optional>

#include "compiler/ir/qnn_attrs.h"
#include "support/error.h"

namespace tessel::compiler::passes {
namespace {

constexpr int kMultiplierBits = 14;  // significant bits of a non-power-of-two multiplier

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

}  // namespace

runtime::Requant derive_requant(const std::vector<double>& m, const std::vector<int64_t>& acc_bound,
                                int32_t out_zero_point, const std::string& where) {
  TESSEL_CHECK(!m.empty() && m.size() == acc_bound.size(), "{}: {} multipliers for {} bounds", where, m.size(),
               acc_bound.size());
  for (size_t c = 0; c < m.size(); ++c) {
    if (!(m[c] > 0.0) || !std::isfinite(m[c]))
      throw_user_error("{}: requantisation scale s_in*s_w/s_out = {} of channel {} must be positive and finite", where,
                       m[c], c);
    if (acc_bound[c] >= (int64_t{1} << 31))
      throw_user_error("{}: accumulator bound {} of channel {} does not fit 32 bits", where, acc_bound[c], c);
  }
  runtime::Requant rq;
  rq.out_zero_point = out_zero_point;
  // Power-of-two scales: add-round, arithmetic shift, clip (multiplier 1).
  bool pow2 = true;
  std::vector<int32_t> shifts;
  for (double x : m) {
    const auto e = exact_log2(x);
    if (!e || *e > 0 || *e < -31) {
      pow2 = false;
      break;
    }
    shifts.push_back(-*e);
  }
  if (pow2) {
    rq.pre_shift = 0;
    rq.multiplier = {1};
    rq.shift = shifts;
    collapse(rq.shift);
    return rq;
  }
  // General: common pre_shift so that (|acc| >> p) * 2^14 < 2^31 for every channel.
  int64_t worst = 0;
  for (int64_t b : acc_bound) worst = std::max(worst, b);
  int p = 0;
  while (((worst >> p) + 1) * (int64_t{1} << kMultiplierBits) >= (int64_t{1} << 31)) ++p;
  rq.pre_shift = p;
  rq.multiplier.clear();
  rq.shift.clear();
  for (size_t c = 0; c < m.size(); ++c) {
    int e = 0;
    std::frexp(m[c], &e);               // m = f * 2^e, f in [0.5, 1): floor(log2 m) = e - 1
    int total = kMultiplierBits - e;    // m * 2^total in [2^13, 2^14)
    int s = total - p;
    if (s < 0) s = 0;
    if (s > 31) s = 31;
    total = s + p;
    int64_t mult = std::llround(std::ldexp(m[c], total));
    // Keep |acc >> p| * mult below 2^31 (only binds when the clamp s = 0 raised the multiplier).
    const int64_t limit = ((int64_t{1} << 31) - 1) / ((acc_bound[c] >> p) + 1);
    if (mult > limit) mult = limit;
    rq.multiplier.push_back(static_cast<int32_t>(mult));
    rq.shift.push_back(s);
  }
  bool same = true;
  for (size_t c = 1; c < m.size(); ++c)
    same = same && rq.multiplier[c] == rq.multiplier[0] && rq.shift[c] == rq.shift[0];
  if (same) {
    rq.multiplier.resize(1);
    rq.shift.resize(1);
  }
  return rq;
}

void requant(ir::Graph& g, PassContext&) {
  for (ir::Node& n : g.nodes) {
    if (!n.is_tessel() || n.op != "qconv2d") continue;
    const ir::Value& x = g.values[n.inputs[0]];
    const ir::Value& w = g.values[n.inputs[1]];
    const ir::Value& y = g.values[n.outputs[0]];
    TESSEL_CHECK(x.quant && w.quant && y.quant, "{}: qconv2d without quantisation parameters", ir::describe(n));
    const int64_t oc = w.shape[0];
    const int64_t per = w.num_elements() / oc;
    const int32_t zx = x.quant->zero_point.at(0);
    const int64_t max_dx = std::max<int64_t>(127 - zx, zx + 128);
    const auto wi = g.const_i64(n.inputs[1]);
    const auto bi = g.const_i64(n.inputs[2]);
    std::vector<double> m(oc);
    std::vector<int64_t> bound(oc);
    for (int64_t c = 0; c < oc; ++c) {
      int64_t sum = 0;
      for (int64_t k = 0; k < per; ++k) sum += std::llabs(wi[c * per + k]);
      bound[c] = std::llabs(bi[c]) + sum * max_dx;
      const double s_w = w.quant->scale_at(w.quant->per_tensor() ? 0 : static_cast<size_t>(c));
      m[c] = static_cast<double>(x.quant->scale[0]) * s_w / static_cast<double>(y.quant->scale[0]);
    }
    const runtime::Requant rq = derive_requant(m, bound, y.quant->zero_point[0], ir::describe(n));
    n.attrs["requant"] = ir::requant_to_json(rq);
  }
}

}  // namespace tessel::compiler::passes
