#include "compiler/topi/qnn.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <optional>

#include "compiler/tir/intrinsics.h"
#include "compiler/topi/nn.h"
#include "support/error.h"

namespace tessel::topi {

using te::compute;
using tir::DataType;
using tir::Expr;
using tir::Var;

namespace {

struct Builder {
  const Tensor& shape_of;  // the accumulator (for shape and channel index)
  bool packed;
  int64_t channels;
  std::string name;
  RequantOps ops;
  ImmPolicy imm;
  /// ImmPolicy::stack_channels: the rows of the stacked placeholder (the chain's per-channel
  /// fields, counted beforehand), the next row to fill, and the constant's index in ops.constants
  int64_t stack_rows = 0, stack_next = 0;
  size_t stack_index = 0;
  Tensor stacked;

  bool fits_imm(int64_t v) const {
    if (imm.imm_bits == 0) return true;
    const int64_t hi = (int64_t{1} << (imm.imm_bits - 1)) - 1;
    return v >= -hi - 1 && v <= hi;
  }
  void check_policy(const Tensor& t) const {
    if (imm.packed_channels && !(t.ndim() == 6 || (t.ndim() == 4 && packed))) {
      throw_user_error("requantize {}: packed per-channel constants need a packed stage (rank 6, or rank 4 packed), "
                       "{} has rank {}{}", name, t.name(), t.ndim(), packed ? "" : " (not packed)");
    }
    if (imm.imm_bits == 0) return;
    if (imm.imm_bits < 2 || imm.imm_bits > 32) {
      throw_user_error("requantize {}: immediate width {} bits is outside [2, 32] (0: no limit)", name, imm.imm_bits);
    }
    if (imm.const_dims < 1 || imm.const_dims > t.ndim()) {
      throw_user_error("requantize {}: constant operands of {} trailing dimensions, the stage {} has rank {}", name,
                       imm.const_dims, t.name(), t.ndim());
    }
  }

  void check_field(const std::string& field, const std::vector<int32_t>& v) const {
    if (v.size() != 1 && static_cast<int64_t>(v.size()) != channels) {
      throw_user_error("requantize {}: {} has {} entries, expected 1 or {} (channels)", name, field, v.size(),
                       channels);
    }
  }
  void check_shifts(const std::string& field, const std::vector<int32_t>& v) const {
    for (size_t c = 0; c < v.size(); ++c) {
      if (v[c] < 0 || v[c] > 31) throw_user_error("requantize {}: {}[{}] {} is outside [0, 31]", name, field, c, v[c]);
    }
  }
  static bool all_equal(const std::vector<int32_t>& v, int32_t x) {
    for (int32_t e : v) {
      if (e != x) return false;
    }
    return true;
  }

  /// A step `op` of `src` with the field's values (an immediate or a per-channel constant).
  Tensor field_step(const Tensor& src, const std::string& step, const std::string& op, const std::string& field,
                    const std::vector<int32_t>& values) {
    RequantStep s;
    s.op = op;
    Tensor cst;
    // a one-entry value too wide for the immediate: a constant over the stage's trailing dims
    const bool wide = values.size() == 1 && !fits_imm(values[0]);
    if (wide) {
      s.is_imm = false;
      const std::vector<Expr> full = src.shape();
      const std::vector<Expr> shape(full.end() - static_cast<long>(imm.const_dims), full.end());
      int64_t n = 1;
      for (const Expr& e : shape) n *= *tir::as_const_int(e);
      cst = te::placeholder(shape, DataType::int32(), name + "." + field);
      ops.constants.push_back(
          {cst, std::vector<int32_t>(static_cast<size_t>(n), values[0]), ChannelConstant::Kind::kUniform});
      s.operand = cst;
    } else if (values.size() == 1) {
      s.imm = values[0];
    } else if (imm.packed_channels) {
      // [C/lanes][B][lanes], every batch lane the channel's value
      s.is_imm = false;
      const std::vector<int64_t> full = const_shape(src);
      const int64_t blocks = full[1], batch = full[full.size() - 2], lanes = full.back();
      std::vector<int32_t> packed_values;
      packed_values.reserve(static_cast<size_t>(blocks * batch * lanes));
      for (int64_t cb = 0; cb < blocks; ++cb) {
        for (int64_t b = 0; b < batch; ++b) {
          for (int64_t o = 0; o < lanes; ++o) packed_values.push_back(values[static_cast<size_t>(cb * lanes + o)]);
        }
      }
      if (stack_rows > 0) {
        // row stack_next of "<name>.channel" [F][C/lanes][B][lanes]
        TESSEL_CHECK(stack_next < stack_rows, "requantize {}: per-channel field {} beyond the {} counted", name,
                     field, stack_rows);
        if (!stacked.defined()) {
          stacked = te::placeholder({Expr(stack_rows), Expr(blocks), Expr(batch), Expr(lanes)}, DataType::int32(),
                                    name + ".channel");
          stack_index = ops.constants.size();
          ops.constants.push_back({stacked, {}, ChannelConstant::Kind::kChannel});
        }
        std::vector<int32_t>& all = ops.constants[stack_index].values;
        all.insert(all.end(), packed_values.begin(), packed_values.end());
        cst = stacked;
        s.stack_row = stack_next++;
      } else {
        cst = te::placeholder({Expr(blocks), Expr(batch), Expr(lanes)}, DataType::int32(), name + "." + field);
        ops.constants.push_back({cst, std::move(packed_values), ChannelConstant::Kind::kChannel});
      }
      s.operand = cst;
    } else {
      s.is_imm = false;
      cst = te::placeholder({Expr(channels)}, DataType::int32(), name + "." + field);
      ops.constants.push_back({cst, values, ChannelConstant::Kind::kChannel});
      s.operand = cst;
    }
    const bool packed_cst = s.is_imm == false && !wide && imm.packed_channels;
    s.tensor = compute(
        src.shape(),
        [&](const std::vector<Var>& i) {
          Expr a = src(std::vector<Expr>(i.begin(), i.end()));
          const size_t r = i.size();
          Expr v = s.is_imm     ? Expr(s.imm)
                   : wide       ? cst(std::vector<Expr>(i.end() - static_cast<long>(imm.const_dims), i.end()))
                   : packed_cst && s.stack_row >= 0 ? cst({Expr(s.stack_row), Expr(i[1]), Expr(i[r - 2]), Expr(i[r - 1])})
                   : packed_cst ? cst({Expr(i[1]), Expr(i[r - 2]), Expr(i[r - 1])})
                                : cst(channel_index(i, shape_of, packed));
          return apply(op, a, v);
        },
        name + "." + step);
    ops.steps.push_back(s);
    return s.tensor;
  }
  /// A step `op` of `src` with another stage's tensor of the same shape.
  Tensor tensor_step(const Tensor& src, const std::string& step, const std::string& op, const Tensor& other) {
    RequantStep s;
    s.op = op;
    s.is_imm = false;
    s.operand = other;
    s.tensor = compute(
        src.shape(),
        [&](const std::vector<Var>& i) {
          std::vector<Expr> idx(i.begin(), i.end());
          return apply(op, src(idx), other(idx));
        },
        name + "." + step);
    ops.steps.push_back(s);
    return s.tensor;
  }
  static Expr apply(const std::string& op, const Expr& a, const Expr& v) {
    if (op == "add") return a + v;
    if (op == "mul") return a * v;
    if (op == "max") return tir::max(a, v);
    if (op == "min") return tir::min(a, v);
    if (op == "shr") return tir::call(DataType::int32(), std::string(tir::intrin::kShiftRight), {a, v});
    throw_internal_error("unknown requant step {}", op);
  }
};

/// Which clip bounds can change a result (qnn.h: a bound is left out when the clamp already
/// keeps every channel's result within it).
struct ClipNeed {
  bool lo = true, hi = true;
};
ClipNeed clip_needed(const RequantParams& p, int64_t channels) {
  auto at = [](const std::vector<int32_t>& v, int64_t c) -> int64_t { return v.size() == 1 ? v[0] : v[static_cast<size_t>(c)]; };
  auto wraps = [](int64_t v) { return v < INT32_MIN || v > INT32_MAX; };
  ClipNeed need{false, false};
  for (int64_t c = 0; c < channels; ++c) {
    bool negative = at(p.multiplier, c) < 0;
    for (const RequantLimbParams& l : p.low) negative = negative || at(l.multiplier, c) < 0;
    if (negative && !p.low.empty()) return ClipNeed{};  // limbs of both signs: not monotone
    // the chain after the clamp at x, without wrapping (nullopt when a step would wrap)
    auto tail = [&](int64_t x) -> std::optional<int64_t> {
      int64_t y = 0;
      for (const RequantLimbParams& l : p.low) {
        const int64_t t = x * at(l.multiplier, c);
        if (wraps(t) || wraps(t + y) || wraps(t + y + at(l.round, c))) return std::nullopt;
        y = (t + y + at(l.round, c)) >> at(l.shift, c);
      }
      const int64_t t = x * at(p.multiplier, c);
      if (wraps(t) || wraps(t + y) || wraps(t + y + at(p.round, c))) return std::nullopt;
      const int64_t out = ((t + y + at(p.round, c)) >> at(p.shift, c)) + at(p.out_add, c);
      if (wraps(out)) return std::nullopt;
      return out;
    };
    // the clamp's bounds after the acc_offset ADD (which wraps first: any value then)
    const auto a = tail(at(p.acc_min, c)), z = tail(at(p.acc_max, c));
    if (!a || !z) return ClipNeed{};
    need.lo = need.lo || std::min(*a, *z) < p.clip_lo;
    need.hi = need.hi || std::max(*a, *z) > p.clip_hi;
  }
  return need;
}

RequantOps build_chain(const Tensor& acc, const RequantParams& p, bool packed, const std::string& name,
                       RequantOps prefix, const ImmPolicy& imm) {
  if (acc.dtype() != DataType::int32()) {
    throw_user_error("requantize {}: accumulators {} have type {}, expected int32", name, acc.name(), acc.dtype().str());
  }
  Builder b{acc, packed, acc.ndim() >= 2 ? channel_count(acc, packed) : 1, name, std::move(prefix), imm};
  b.check_policy(acc);
  if (imm.packed_channels && imm.stack_channels) {
    // the stacked placeholder's rows: the per-channel fields of the chain built unstacked
    ImmPolicy flat = imm;
    flat.stack_channels = false;
    for (const ChannelConstant& c : build_chain(acc, p, packed, name, RequantOps{}, flat).constants) {
      b.stack_rows += c.kind == ChannelConstant::Kind::kChannel;
    }
  }
  b.check_field("acc_offset", p.acc_offset);
  b.check_field("acc_min", p.acc_min);
  b.check_field("acc_max", p.acc_max);
  b.check_field("multiplier", p.multiplier);
  b.check_field("round", p.round);
  b.check_field("shift", p.shift);
  b.check_shifts("shift", p.shift);
  b.check_field("out_add", p.out_add);
  if (p.low.size() > 7) throw_user_error("requantize {}: {} low limbs, at most 7", name, p.low.size());
  for (size_t j = 0; j < p.low.size(); ++j) {
    b.check_field(fmt::format("low_multiplier[{}]", j), p.low[j].multiplier);
    b.check_field(fmt::format("low_round[{}]", j), p.low[j].round);
    b.check_field(fmt::format("low_shift[{}]", j), p.low[j].shift);
    b.check_shifts(fmt::format("low_shift[{}]", j), p.low[j].shift);
  }
  if (p.clip_lo < -128 || p.clip_hi > 127 || p.clip_lo > p.clip_hi) {
    throw_user_error("requantize {}: clip range [{}, {}] must satisfy -128 <= clip_lo <= clip_hi <= 127", name,
                     p.clip_lo, p.clip_hi);
  }
  Tensor x = acc;
  // With no clamp, no limbs and multiplier 1, nothing separates the ADD acc_offset from the ADD
  // round: one ADD of their (wrapping) sum gives the same values.
  const bool merge_adds = Builder::all_equal(p.acc_min, INT32_MIN) && Builder::all_equal(p.acc_max, INT32_MAX) &&
                          p.low.empty() && Builder::all_equal(p.multiplier, 1) &&
                          !Builder::all_equal(p.acc_offset, 0) && !Builder::all_equal(p.round, 0);
  std::vector<int32_t> round = p.round;
  if (merge_adds) {
    const size_t n = std::max(p.acc_offset.size(), p.round.size());
    round.assign(n, 0);
    for (size_t c = 0; c < n; ++c) {
      const int32_t off = p.acc_offset[p.acc_offset.size() == 1 ? 0 : c], r = p.round[p.round.size() == 1 ? 0 : c];
      round[c] = static_cast<int32_t>(static_cast<uint32_t>(off) + static_cast<uint32_t>(r));
    }
    bool uniform = true;
    for (int32_t v : round) uniform = uniform && v == round[0];
    if (uniform) round.resize(1);
  }
  if (!merge_adds && !Builder::all_equal(p.acc_offset, 0)) {
    x = b.field_step(x, "acc_offset", "add", "acc_offset", p.acc_offset);
  }
  if (!Builder::all_equal(p.acc_min, INT32_MIN)) x = b.field_step(x, "acc_min", "max", "acc_min", p.acc_min);
  if (!Builder::all_equal(p.acc_max, INT32_MAX)) x = b.field_step(x, "acc_max", "min", "acc_max", p.acc_max);
  Tensor y;  // the limb sum so far (undefined: 0)
  for (size_t j = 0; j < p.low.size(); ++j) {
    const RequantLimbParams& l = p.low[j];
    const std::string lj = fmt::format("low{}", j);
    Tensor t = b.field_step(x, lj + ".mul", "mul", lj + ".multiplier", l.multiplier);
    if (y.defined()) t = b.tensor_step(t, lj + ".add", "add", y);
    if (!Builder::all_equal(l.round, 0)) t = b.field_step(t, lj + ".round", "add", lj + ".round", l.round);
    if (!Builder::all_equal(l.shift, 0)) t = b.field_step(t, lj + ".shr", "shr", lj + ".shift", l.shift);
    y = t;
  }
  if (!Builder::all_equal(p.multiplier, 1)) x = b.field_step(x, "mul", "mul", "multiplier", p.multiplier);
  if (y.defined()) x = b.tensor_step(x, "add_low", "add", y);
  if (!Builder::all_equal(round, 0)) x = b.field_step(x, "round", "add", "round", round);
  if (!Builder::all_equal(p.shift, 0)) x = b.field_step(x, "shr", "shr", "shift", p.shift);
  if (!Builder::all_equal(p.out_add, 0)) x = b.field_step(x, "out_add", "add", "out_add", p.out_add);
  const ClipNeed clip = clip_needed(p, b.channels);
  if (clip.lo) x = b.field_step(x, "clip_lo", "max", "clip_lo", {p.clip_lo});
  if (clip.hi) x = b.field_step(x, "clip_hi", "min", "clip_hi", {p.clip_hi});
  b.ops.out = topi::cast(x, DataType::int8(), name);
  return std::move(b.ops);
}

}  // namespace

RequantOps requantize(const Tensor& acc, const RequantParams& p, bool packed, const std::string& name,
                      const ImmPolicy& imm) {
  return build_chain(acc, p, packed, name, RequantOps{}, imm);
}

RequantOps qadd(const Tensor& a, const Tensor& b, int32_t a_zero_point, int32_t a_multiplier, int32_t b_zero_point,
                int32_t b_multiplier, const RequantParams& rq, const std::string& name, const ImmPolicy& imm) {
  if (a.dtype() != DataType::int8() || b.dtype() != DataType::int8() || const_shape(a) != const_shape(b)) {
    throw_user_error("qadd {}: operands {} ({}) and {} ({}) must be int8 tensors of one shape", name, a.name(),
                     a.dtype().str(), b.name(), b.dtype().str());
  }
  for (int32_t zp : {a_zero_point, b_zero_point}) {
    if (zp < -128 || zp > 127) throw_user_error("qadd {}: zero point {} is outside [-128, 127]", name, zp);
  }
  auto per_tensor = [&](const char* field, const std::vector<int32_t>& v) {
    if (v.size() != 1) throw_user_error("qadd {}: requant {} has {} entries, expected 1 (per-tensor)", name, field, v.size());
  };
  per_tensor("acc_offset", rq.acc_offset);
  per_tensor("acc_min", rq.acc_min);
  per_tensor("acc_max", rq.acc_max);
  per_tensor("multiplier", rq.multiplier);
  per_tensor("round", rq.round);
  per_tensor("shift", rq.shift);
  per_tensor("out_add", rq.out_add);
  for (const RequantLimbParams& l : rq.low) {
    per_tensor("low_multiplier", l.multiplier);
    per_tensor("low_round", l.round);
    per_tensor("low_shift", l.shift);
  }
  RequantOps ops;
  Builder bl{a, false, 1, name, RequantOps{}, imm};
  bl.check_policy(a);
  auto operand = [&](const Tensor& t, int32_t zp, int32_t m, const std::string& stage) {
    Tensor v = topi::cast(t, DataType::int32(), name + "." + stage);
    bl.ops.loads.push_back(v);
    if (zp != 0) v = bl.field_step(v, stage + "_zp", "add", stage + "_zp", {-zp});
    if (m != 1) v = bl.field_step(v, stage + "_mul", "mul", stage + "_multiplier", {m});
    return v;
  };
  const Tensor sa = operand(a, a_zero_point, a_multiplier, "a");
  const Tensor sb = operand(b, b_zero_point, b_multiplier, "b");
  bl.tensor_step(sa, "sum", "add", sb);
  ops = std::move(bl.ops);
  const Tensor sum = ops.steps.back().tensor;
  // The chain's channel index is unused (every field is per-tensor): any rank is fine.
  return build_chain(sum, rq, false, name, std::move(ops), imm);
}

namespace {

int32_t wrap32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); }

int64_t product(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

void check_zero_point_inputs(const std::string& what, const std::vector<int64_t>& w_shape,
                             const std::vector<int8_t>& w, int32_t zp, bool conv_only) {
  if (w_shape.size() != 6 && (conv_only || w_shape.size() != 4)) {
    throw_user_error("{}: packed weights of rank {}, expected {}", what, w_shape.size(), conv_only ? "6" : "6 or 4");
  }
  if (static_cast<int64_t>(w.size()) != product(w_shape)) {
    throw_user_error("{}: {} weight values for a packed weight tensor of {} elements", what, w.size(),
                     product(w_shape));
  }
  if (zp < -128 || zp > 127) throw_user_error("{}: input zero point {} is outside [-128, 127]", what, zp);
}

/// Sums of output lane o's weights per tap: [OCB][BO][KH * KW] (int64; KH = KW = 1 for dense).
std::vector<int64_t> tap_sums(const std::vector<int64_t>& ws, const std::vector<int8_t>& w) {
  const bool conv = ws.size() == 6;
  const int64_t ocb = ws[0], icb = ws[1], kh = conv ? ws[2] : 1, kw = conv ? ws[3] : 1, bo = ws[ws.size() - 2],
                bi = ws.back();
  std::vector<int64_t> sums(static_cast<size_t>(ocb * bo * kh * kw), 0);
  size_t k = 0;
  for (int64_t cb = 0; cb < ocb; ++cb) {
    for (int64_t c = 0; c < icb; ++c) {
      for (int64_t t = 0; t < kh * kw; ++t) {
        for (int64_t o = 0; o < bo; ++o) {
          int64_t s = 0;
          for (int64_t i = 0; i < bi; ++i) s += w[k++];
          sums[static_cast<size_t>((cb * bo + o) * kh * kw + t)] += s;
        }
      }
    }
  }
  return sums;
}

}  // namespace

std::vector<int32_t> zero_point_channel_addend(const std::vector<int64_t>& w_shape, const std::vector<int8_t>& w,
                                               int32_t x_zero_point) {
  check_zero_point_inputs("zero_point_channel_addend", w_shape, w, x_zero_point, false);
  const std::vector<int64_t> sums = tap_sums(w_shape, w);
  const int64_t taps = w_shape.size() == 6 ? w_shape[2] * w_shape[3] : 1;
  std::vector<int32_t> out(sums.size() / static_cast<size_t>(taps));
  for (size_t o = 0; o < out.size(); ++o) {
    int64_t s = 0;
    for (int64_t t = 0; t < taps; ++t) s += sums[o * static_cast<size_t>(taps) + static_cast<size_t>(t)];
    out[o] = wrap32(-int64_t{x_zero_point} * s);
  }
  return out;
}

bool conv2d_window_touches_padding(int64_t h, int64_t w, int64_t kh, int64_t kw, const Conv2dAttrs& a) {
  const std::string op = "conv2d_window_touches_padding";
  const int64_t oh = conv_output_size(op, h, a.pad_top, a.pad_bottom, kh, a.stride_h, a.dilation_h);
  const int64_t ow = conv_output_size(op, w, a.pad_left, a.pad_right, kw, a.stride_w, a.dilation_w);
  // the first window starts at -pad, the last one ends at (o - 1) * stride - pad + (k - 1) * dilation
  const bool rows = a.pad_top > 0 || (oh - 1) * a.stride_h - a.pad_top + (kh - 1) * a.dilation_h >= h;
  const bool cols = a.pad_left > 0 || (ow - 1) * a.stride_w - a.pad_left + (kw - 1) * a.dilation_w >= w;
  return rows || cols;
}

std::vector<int32_t> conv2d_zero_point_border(const std::vector<int64_t>& x_shape, const std::vector<int64_t>& w_shape,
                                              const std::vector<int8_t>& w, const Conv2dAttrs& a,
                                              int32_t x_zero_point) {
  const std::string op = "conv2d_zero_point_border";
  check_zero_point_inputs(op, w_shape, w, x_zero_point, true);
  if (x_shape.size() != 6) throw_user_error("{}: packed input of rank {}, expected 6", op, x_shape.size());
  const int64_t h = x_shape[2], wd = x_shape[3], batch = x_shape[4];
  const int64_t ocb = w_shape[0], kh = w_shape[2], kw = w_shape[3], bo = w_shape[4];
  const int64_t oh = conv_output_size(op, h, a.pad_top, a.pad_bottom, kh, a.stride_h, a.dilation_h);
  const int64_t ow = conv_output_size(op, wd, a.pad_left, a.pad_right, kw, a.stride_w, a.dilation_w);
  const std::vector<int64_t> sums = tap_sums(w_shape, w);
  std::vector<int32_t> out;
  out.reserve(static_cast<size_t>(ocb * oh * ow * batch * bo));
  std::vector<int64_t> pad_sum(static_cast<size_t>(bo));
  for (int64_t cb = 0; cb < ocb; ++cb) {
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t x = 0; x < ow; ++x) {
        for (int64_t o = 0; o < bo; ++o) {
          int64_t s = 0;
          for (int64_t ky = 0; ky < kh; ++ky) {
            const int64_t iy = y * a.stride_h - a.pad_top + ky * a.dilation_h;
            for (int64_t kx = 0; kx < kw; ++kx) {
              const int64_t ix = x * a.stride_w - a.pad_left + kx * a.dilation_w;
              if (iy >= 0 && iy < h && ix >= 0 && ix < wd) continue;
              s += sums[static_cast<size_t>((cb * bo + o) * kh * kw + ky * kw + kx)];
            }
          }
          pad_sum[static_cast<size_t>(o)] = s;
        }
        for (int64_t b = 0; b < batch; ++b) {
          for (int64_t o = 0; o < bo; ++o) out.push_back(wrap32(int64_t{x_zero_point} * pad_sum[static_cast<size_t>(o)]));
        }
      }
    }
  }
  return out;
}

}  // namespace tessel::topi
