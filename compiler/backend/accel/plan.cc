#include "compiler/backend/accel/plan.h"

#include <algorithm>

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
  if (rq.multiplier.size() != 1 && rq.multiplier.size() != oc) {
    throw_user_error("layer '{}': requant multiplier has {} entries, expected 1 or oc {}", layer,
                     rq.multiplier.size(), oc);
  }
  if (rq.shift.size() != 1 && rq.shift.size() != oc) {
    throw_user_error("layer '{}': requant shift has {} entries, expected 1 or oc {}", layer,
                     rq.shift.size(), oc);
  }
  if (rq.pre_shift < 0 || rq.pre_shift > 31) {
    throw_user_error("layer '{}': requant pre_shift {} out of range [0, 31]", layer, rq.pre_shift);
  }
  for (size_t c = 0; c < rq.shift.size(); ++c) {
    if (rq.shift[c] < 0 || rq.shift[c] > 31) {
      throw_user_error("layer '{}': requant shift[{}] {} out of range [0, 31]", layer, c,
                       rq.shift[c]);
    }
  }
  if (rq.clip_lo < -128 || rq.clip_hi > 127 || rq.clip_lo > rq.clip_hi) {
    throw_user_error("layer '{}': requant clip [{}, {}] must satisfy -128 <= lo <= hi <= 127",
                     layer, rq.clip_lo, rq.clip_hi);
  }
  LayerPlan plan;
  auto add_row = [&](std::string name, auto value_of) {
    std::vector<int32_t> v(oc);
    for (size_t c = 0; c < oc; ++c) v[c] = value_of(c);
    plan.const_rows.push_back(std::move(v));
    plan.const_row_names.push_back(std::move(name));
    return static_cast<int64_t>(plan.const_rows.size() - 1);
  };
  auto imm_step = [](AluOp op, int32_t imm, std::string what) {
    AluStep s;
    s.op = op;
    s.use_imm = true;
    s.imm = imm;
    s.what = std::move(what);
    return s;
  };
  auto row_step = [](AluOp op, int64_t row, std::string what) {
    AluStep s;
    s.op = op;
    s.use_imm = false;
    s.const_row = row;
    s.what = std::move(what);
    return s;
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
  // When the accumulators get a per-channel addend anyway (the bias row), the first rounding ADD
  // of the chain, if nothing precedes it, is folded into that addend: both are 32-bit wrapping
  // adds, so the sum is bit-identical and one ALU op per element is saved.
  bool fold = plan.init_every_tile ||
              std::any_of(plan.bias.begin(), plan.bias.end(), [](int32_t b) { return b != 0; });
  // Adds the rounding values round_of(c): folded into the bias, as an immediate, or as a row.
  auto add_round = [&](const std::string& what, auto round_of, bool same_for_all) {
    if (fold) {
      for (size_t c = 0; c < oc; ++c) plan.bias[c] = runtime::wrap_add(plan.bias[c], round_of(c));
      plan.folded_round = what;
    } else if (same_for_all && fits_imm(round_of(0))) {
      plan.requant.push_back(imm_step(AluOp::kAdd, round_of(0), what));
    } else {
      plan.requant.push_back(row_step(AluOp::kAdd, add_row(what, round_of), what));
    }
    fold = false;
  };
  if (rq.pre_shift > 0) {
    const int32_t round = int32_t{1} << (rq.pre_shift - 1);
    add_round(
        "round pre_shift", [&](size_t) { return round; }, true);
    plan.requant.push_back(imm_step(AluOp::kShr, rq.pre_shift, "pre_shift"));
  }
  fold = fold && rq.pre_shift == 0;
  bool all_one = true;
  for (size_t c = 0; c < oc; ++c) all_one = all_one && rq.multiplier_at(c) == 1;
  if (!all_one) {
    fold = false;
    if (rq.multiplier.size() == 1 && fits_imm(rq.multiplier[0])) {
      plan.requant.push_back(imm_step(AluOp::kMul, rq.multiplier[0], "multiplier"));
    } else {
      const int64_t r = add_row("multiplier", [&](size_t c) { return rq.multiplier_at(c); });
      plan.requant.push_back(row_step(AluOp::kMul, r, "multiplier"));
    }
  }
  bool same_shift = true;
  for (size_t c = 0; c < oc; ++c) same_shift = same_shift && rq.shift_at(c) == rq.shift_at(0);
  if (same_shift) {
    const int32_t s = rq.shift_at(0);
    if (s > 0) {
      const int32_t round = int32_t{1} << (s - 1);
      add_round(
          "round shift", [&](size_t) { return round; }, true);
      plan.requant.push_back(imm_step(AluOp::kShr, s, "shift"));
    }
  } else {
    // per-channel shifts: a channel with shift 0 adds 0 and shifts by 0, as the reference skips it
    add_round(
        "round shift",
        [&](size_t c) {
          const int32_t s = rq.shift_at(c);
          return s > 0 ? int32_t{1} << (s - 1) : 0;
        },
        false);
    const int64_t sr = add_row("shift", [&](size_t c) { return rq.shift_at(c); });
    plan.requant.push_back(row_step(AluOp::kShr, sr, "shift"));
  }
  if (rq.out_zero_point != 0) {
    if (fits_imm(rq.out_zero_point)) {
      plan.requant.push_back(imm_step(AluOp::kAdd, rq.out_zero_point, "out_zero_point"));
    } else {
      const int64_t r = add_row("out_zero_point", [&](size_t) { return rq.out_zero_point; });
      plan.requant.push_back(row_step(AluOp::kAdd, r, "out_zero_point"));
    }
  }
  if (!plan.init_every_tile &&
      std::any_of(plan.bias.begin(), plan.bias.end(), [](int32_t b) { return b != 0; })) {
    plan.bias_row = add_row("bias", [&](size_t c) { return plan.bias[c]; });
  }
  // the STORE narrows by truncation, so both clips are always applied
  plan.requant.push_back(imm_step(AluOp::kMax, rq.clip_lo, "clip_lo"));
  plan.requant.push_back(imm_step(AluOp::kMin, rq.clip_hi, "clip_hi"));
  return plan;
}

}  // namespace tessel::compiler::accel
