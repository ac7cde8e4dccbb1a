#include "compiler/backend/accel/plan.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "support/error.h"

namespace tessel::compiler::accel {

using isa::AluOp;

namespace {

constexpr int32_t kImmMin = -32768, kImmMax = 32767;  // 16-bit signed ALU immediate
bool fits_imm(int64_t v) { return v >= kImmMin && v <= kImmMax; }

}  // namespace

LayerPlan make_plan(const std::string& layer, const runtime::QConv2dParams& p,
                    const std::vector<int32_t>& bias, const std::vector<int32_t>& weight_sums,
                    bool border_correction, bool init_every_tile) {
  const runtime::Requant& rq = p.rq;
  const size_t oc = static_cast<size_t>(p.oc);
  if (const std::string problem = runtime::requant_problem(rq, p.oc); !problem.empty()) {
    throw_user_error("layer '{}': {}", layer, problem);
  }
  if (bias.size() != oc) {
    throw_user_error("layer '{}': bias holds {} values, expected oc {}", layer, bias.size(), oc);
  }
  LayerPlan plan;
  auto add_row = [&](std::string name, auto value_of) {
    std::vector<int32_t> v(oc);
    for (size_t c = 0; c < oc; ++c) v[c] = value_of(c);
    plan.const_rows.push_back(std::move(v));
    plan.const_row_names.push_back(std::move(name));
    return static_cast<int64_t>(plan.const_rows.size() - 1);
  };
  // Steps work on region `dst_region` of the tile's accumulators (AluStep::dst_region; 0 but
  // for the low limbs' scratch copies), with an immediate, a constant row or a region as source.
  int dst_region = 0;
  auto base_step = [&](AluOp op, std::string what) {
    AluStep s;
    s.op = op;
    s.dst_region = dst_region;
    s.what = std::move(what);
    return s;
  };
  auto imm_step = [&](AluOp op, int32_t imm, std::string what) {
    AluStep s = base_step(op, std::move(what));
    s.use_imm = true;
    s.imm = imm;
    return s;
  };
  auto row_step = [&](AluOp op, int64_t row, std::string what) {
    AluStep s = base_step(op, std::move(what));
    s.use_imm = false;
    s.const_row = row;
    return s;
  };
  auto region_step = [&](AluOp op, int src, std::string what) {
    AluStep s = base_step(op, std::move(what));
    s.use_imm = false;
    s.src_region = src;
    plan.requant.push_back(std::move(s));
  };
  // The zero-point correction -in_zero_point * (sum of w[o] over the taps inside the input) is
  // the constant -in_zero_point * sum(w[o]) wherever the window lies inside the input: that
  // constant joins the bias row; the rest (non-zero only for windows touching the padding) is
  // the init tensor that the tiles with such outputs load (acc_init_tensor).
  // With init_every_tile, every tile instead loads the whole addend (bias + correction + folded
  // rounding) from the init tensor and there is no bias row.
  plan.acc_init_tensor = p.in_zero_point != 0 && border_correction;
  plan.init_every_tile = plan.acc_init_tensor && init_every_tile;
  plan.bias = bias;
  if (p.in_zero_point != 0 && !plan.init_every_tile) {
    if (weight_sums.size() != oc) {
      throw_user_error("layer '{}': {} weight sums for the zero-point correction, expected oc {}",
                       layer, weight_sums.size(), oc);
    }
    for (size_t c = 0; c < oc; ++c) {
      plan.bias[c] = runtime::wrap_add(plan.bias[c],
                                       runtime::wrap_mul(-p.in_zero_point, weight_sums[c]));
    }
  }
  // The chain of runtime/qnn.h, channel by channel.
  std::vector<runtime::RequantChannel> ch(oc);
  for (size_t c = 0; c < oc; ++c) ch[c] = runtime::requant_channel(rq, c);
  auto values = [&](auto field) {
    std::vector<int32_t> v(oc);
    for (size_t c = 0; c < oc; ++c) v[c] = field(ch[c]);
    return v;
  };
  auto all_equal = [](const std::vector<int32_t>& v, int32_t x) {
    return std::all_of(v.begin(), v.end(), [&](int32_t e) { return e == x; });
  };
  auto uniform = [&](const std::vector<int32_t>& v) { return v.empty() || all_equal(v, v[0]); };
  // One step: an immediate when one value serves every channel and fits 16 bits, else a row.
  auto step = [&](AluOp op, const std::vector<int32_t>& v, const std::string& what) {
    if (uniform(v) && fits_imm(v[0])) {
      plan.requant.push_back(imm_step(op, v[0], what));
    } else {
      plan.requant.push_back(row_step(op, add_row(what, [&](size_t c) { return v[c]; }), what));
    }
  };
  // When the accumulators get a per-channel addend anyway (the bias row or an every-tile init
  // tensor), the leading ADD steps of the chain (those before any other op) are folded into
  // that addend: all are 32-bit wrapping adds, so the sum is bit-identical and one ALU op per
  // element is saved for each.
  bool fold = plan.init_every_tile ||
              std::any_of(plan.bias.begin(), plan.bias.end(), [](int32_t b) { return b != 0; });
  auto add_step = [&](const std::vector<int32_t>& v, const std::string& what) {
    if (all_equal(v, 0)) return;
    if (fold) {
      for (size_t c = 0; c < oc; ++c) plan.bias[c] = runtime::wrap_add(plan.bias[c], v[c]);
      plan.folded_round += (plan.folded_round.empty() ? "" : " + ") + what;
      return;
    }
    step(AluOp::kAdd, v, what);
  };
  auto other_step = [&](AluOp op, const std::vector<int32_t>& v, const std::string& what) {
    fold = false;
    step(op, v, what);
  };
  add_step(values([](const runtime::RequantChannel& c) { return c.acc_offset; }), "acc_offset");
  if (rq.clamps_low()) other_step(AluOp::kMax, values([](const runtime::RequantChannel& c) { return c.acc_min; }), "clamp lo");
  if (rq.clamps_high()) other_step(AluOp::kMin, values([](const runtime::RequantChannel& c) { return c.acc_max; }), "clamp hi");
  // the low limbs (runtime/qnn.h): limb j on scratch region j mod 2
  const int n_low = static_cast<int>(rq.low_limbs());
  plan.scratch_regions = std::min(n_low, 2);
  if (n_low > 0) fold = false;
  for (int j = 0; j < n_low; ++j) {
    dst_region = 1 + j % 2;
    const std::string limb = fmt::format("limb {} ", j);
    plan.requant.push_back(imm_step(AluOp::kMul, 0, limb + "copy: clear"));
    region_step(AluOp::kAdd, 0, limb + "copy: add x");
    step(AluOp::kMul, values([&](const runtime::RequantChannel& c) { return c.low[j].multiplier; }), limb + "multiplier");
    if (j > 0) region_step(AluOp::kAdd, 1 + (j - 1) % 2, limb + "add limb " + std::to_string(j - 1));
    const auto rd = values([&](const runtime::RequantChannel& c) { return c.low[j].round; });
    if (!all_equal(rd, 0)) step(AluOp::kAdd, rd, limb + "round digit");
    const auto sh = values([&](const runtime::RequantChannel& c) { return c.low[j].shift; });
    if (!all_equal(sh, 0)) step(AluOp::kShr, sh, limb + "shift");
  }
  dst_region = 0;
  const auto mult = values([](const runtime::RequantChannel& c) { return c.multiplier; });
  if (!all_equal(mult, 1)) other_step(AluOp::kMul, mult, "multiplier");
  if (n_low > 0) region_step(AluOp::kAdd, 1 + (n_low - 1) % 2, fmt::format("add limb {}", n_low - 1));
  // a channel with shift 0 adds 0 and shifts by 0 (runtime/qnn.h)
  add_step(values([](const runtime::RequantChannel& c) { return c.round; }), "round shift");
  const auto shifts = values([](const runtime::RequantChannel& c) { return c.shift; });
  if (!all_equal(shifts, 0)) other_step(AluOp::kShr, shifts, "shift");
  fold = false;
  const bool out_offset = !all_equal(values([&](const runtime::RequantChannel& c) {
                                       return runtime::wrap_add(c.out_add, -rq.out_zero_point);
                                     }),
                                     0);
  add_step(values([](const runtime::RequantChannel& c) { return c.out_add; }),
           out_offset ? "out_offset + out_zero_point" : "out_zero_point");
  if (!plan.init_every_tile &&
      std::any_of(plan.bias.begin(), plan.bias.end(), [](int32_t b) { return b != 0; })) {
    plan.bias_row = add_row("bias", [&](size_t c) { return plan.bias[c]; });
  }
  // The STORE narrows by truncation, so the clip is applied unless the clamp already bounds
  // every channel's result: with both clamp bounds set and no step of the chain between them
  // and the clip wrapping at either bound, the chain is monotone in x, so its results lie
  // between its values at acc_min and acc_max.
  bool lo_needed = false, hi_needed = false;
  for (size_t c = 0; c < oc; ++c) {
    const runtime::RequantChannel& k = ch[c];
    auto tail = [&](int64_t x) -> std::optional<int64_t> {
      auto wraps = [](int64_t v) { return v < INT32_MIN || v > INT32_MAX; };
      int64_t y = 0;
      for (int32_t j = 0; j < k.n_low; ++j) {
        const int64_t p = x * k.low[j].multiplier;
        if (wraps(p) || wraps(p + y) || wraps(p + y + k.low[j].round)) return std::nullopt;
        y = (p + y + k.low[j].round) >> k.low[j].shift;
      }
      const int64_t p = x * k.multiplier;
      if (wraps(p) || wraps(p + y)) return std::nullopt;
      const int64_t prod = p + y + k.round;
      if (prod < INT32_MIN || prod > INT32_MAX) return std::nullopt;
      const int64_t out = (prod >> k.shift) + k.out_add;
      if (out < INT32_MIN || out > INT32_MAX) return std::nullopt;
      return out;
    };
    bool negative = k.multiplier < 0;
    for (int32_t j = 0; j < k.n_low; ++j) negative = negative || k.low[j].multiplier < 0;
    const auto a = tail(k.acc_min), b = tail(k.acc_max);
    if (!a || !b || (negative && k.n_low > 0)) {  // limbs of both signs: not monotone
      lo_needed = hi_needed = true;
      break;
    }
    lo_needed = lo_needed || std::min(*a, *b) < rq.clip_lo;
    hi_needed = hi_needed || std::max(*a, *b) > rq.clip_hi;
  }
  if (lo_needed) plan.requant.push_back(imm_step(AluOp::kMax, rq.clip_lo, "clip_lo"));
  if (hi_needed) plan.requant.push_back(imm_step(AluOp::kMin, rq.clip_hi, "clip_hi"));
  return plan;
}

}  // namespace tessel::compiler::accel
