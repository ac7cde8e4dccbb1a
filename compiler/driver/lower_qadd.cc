#include "compiler/driver/lower_qadd.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <optional>

#include "compiler/backend/accel/tir/accel_tir.h"
#include "compiler/driver/template_search.h"
#include "compiler/topi/accel/schedule.h"
#include "isa/verifier.h"
#include "support/error.h"

namespace tessel::compiler::driver {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

bool fits32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

/// The chain the template runs: the scheme with the zero points and the output offset folded
/// into the round term when no step can leave int32 (see lower_qadd.h).
struct Chain {
  int32_t a_zero_point = 0, b_zero_point = 0, round = 0, out_add = 0;
  bool folded = false;
};

Chain chain_of(const QaddAccelLayer& layer) {
  const passes::QaddScheme& sc = layer.scheme;
  Chain c{layer.a_zero_point, layer.b_zero_point, sc.round, sc.y_zero_point, false};
  const int64_t a = sc.a_multiplier, b = sc.b_multiplier;
  const int64_t r = int64_t{sc.round} - int64_t{layer.a_zero_point} * a - int64_t{layer.b_zero_point} * b +
                    (int64_t{sc.y_zero_point} << sc.shift);
  if (!fits32(r)) return c;
  // every term is linear in (qa, qb): its extremes lie at the corners
  for (int64_t qa : {-128, 127}) {
    for (int64_t qb : {-128, 127}) {
      if (!fits32(qa * a) || !fits32(qb * b) || !fits32(qa * a + qb * b) || !fits32(qa * a + qb * b + r)) return c;
    }
  }
  // (x + R + zy 2^s) >> s = ((x + R) >> s) + zy for the floor shift: the same value on every pair
  for (int qa = -128; qa < 128; ++qa) {
    for (int qb = -128; qb < 128; ++qb) {
      const int64_t y = std::clamp<int64_t>((qa * a + qb * b + r) >> sc.shift, sc.clip_lo, sc.clip_hi);
      TESSEL_CHECK(y == sc.apply(static_cast<int8_t>(qa), static_cast<int8_t>(qb), layer.a_zero_point,
                                 layer.b_zero_point),
                   "qadd '{}': the folded chain differs from the scheme at ({}, {})", layer.name, qa, qb);
    }
  }
  return {0, 0, static_cast<int32_t>(r), 0, true};
}

/// The template's operator for `layer`: packed placeholders a, b and the scheme as topi::qadd's
/// chain (QaddScheme = qadd with round, shift, out_add = y zero point and the clip bounds).
topi::accel::QaddLayer template_layer(const QaddAccelLayer& layer, const isa::HwConfig& cfg) {
  const int64_t bn = cfg.batch(), bo = cfg.block_out();
  const std::vector<int64_t>& s = layer.shape;
  const std::vector<tir::Expr> packed = {tir::Expr((s[0] + bn - 1) / bn), tir::Expr((s[1] + bo - 1) / bo),
                                         tir::Expr(s[2]),  tir::Expr(s[3]),
                                         tir::Expr(bn),    tir::Expr(bo)};
  topi::accel::QaddLayer l;
  l.a = te::placeholder(packed, tir::DataType::int8(), "a");
  l.b = te::placeholder(packed, tir::DataType::int8(), "b");
  const Chain c = chain_of(layer);
  l.a_zero_point = c.a_zero_point;
  l.b_zero_point = c.b_zero_point;
  l.a_multiplier = layer.scheme.a_multiplier;
  l.b_multiplier = layer.scheme.b_multiplier;
  l.rq.round = {c.round};
  l.rq.shift = {layer.scheme.shift};
  l.rq.out_add = {c.out_add};
  l.rq.clip_lo = layer.scheme.clip_lo;
  l.rq.clip_hi = layer.scheme.clip_hi;
  return l;
}

/// The template's segments: a and b as LOAD ACC_8BIT reads them, the wide immediates as int32
/// acc elements in "const" (one per constant, in chain order), the result in "out".
std::vector<accel_tir::SegmentSpec> qadd_segments(const topi::accel::ScheduledOp& op, const isa::HwConfig& cfg) {
  std::vector<accel_tir::SegmentSpec> segs = {
      {"a", kQaddSegA, isa::SegmentKind::kInput, 0, isa::MemType::kAcc8},
      {"b", kQaddSegB, isa::SegmentKind::kInput, 0, isa::MemType::kAcc8},
  };
  const uint64_t acc_elem = isa::dram_elem_bytes(cfg, isa::MemType::kAcc);
  for (size_t k = 0; k < op.constants.size(); ++k) {
    segs.push_back({op.constants[k].tensor.name(), "const", isa::SegmentKind::kConst, k * acc_elem,
                    isa::MemType::kAcc});
  }
  segs.push_back({op.out.name(), kQaddSegOut, isa::SegmentKind::kOutput, 0, isa::MemType::kOut});
  return segs;
}

/// The constants: int32 little-endian, each filling its acc element.
void fill_qadd_constants(const std::string& layer, const topi::accel::ScheduledOp& op, isa::Program& p) {
  if (op.constants.empty()) return;
  const uint64_t acc_elem = isa::dram_elem_bytes(p.config, isa::MemType::kAcc);
  const isa::Segment& seg = p.segment("const");
  for (size_t k = 0; k < op.constants.size(); ++k) {
    const std::vector<int32_t>& v = op.constants[k].values;
    TESSEL_CHECK(v.size() * 4 == acc_elem, "qadd '{}': constant {} has {} values, an acc element {} bytes", layer,
                 op.constants[k].tensor.name(), v.size(), acc_elem);
    for (size_t i = 0; i < v.size(); ++i) {
      const uint32_t u = static_cast<uint32_t>(v[i]);
      uint8_t* q = p.image.data() + seg.offset_bytes + k * acc_elem + i * 4;
      for (int byte = 0; byte < 4; ++byte) q[byte] = static_cast<uint8_t>(u >> (8 * byte));
    }
  }
}

}  // namespace

accel::LoweredLayer lower_qadd_layer(const QaddAccelLayer& layer, const isa::HwConfig& cfg,
                                     const std::string& dump_ir_after) {
  if (layer.shape.size() != 4) {
    throw_user_error("qadd '{}': the accelerator adds 4-D tensors, got shape [{}]", layer.name,
                     fmt::join(layer.shape, ", "));
  }
  for (int64_t d : layer.shape) {
    if (d <= 0) throw_user_error("qadd '{}': shape [{}] has a non-positive extent", layer.name, fmt::join(layer.shape, ", "));
  }
  const auto t_schedule = Clock::now();
  const topi::accel::QaddLayer tl = template_layer(layer, cfg);
  te::ConfigSpace space;
  topi::accel::qadd_config_space(tl, space);
  TemplateBuilder builder;
  builder.schedule = [&](const te::ConfigEntity& point) { return topi::accel::schedule_qadd(tl, cfg, point); };
  builder.segments = [&](const topi::accel::ScheduledOp& op) { return qadd_segments(op, cfg); };
  builder.fill = [&](const topi::accel::ScheduledOp& op, isa::Program& p) { fill_qadd_constants(layer.name, op, p); };
  // every tile_h is built (a divisor of H: few points); the stream cost model picks
  TemplateSearchOptions so;
  so.pass_errors_are_bugs = true;
  TemplateSearchFailure failure;
  std::optional<TemplateChoice> best = search_template(fmt::format("qadd '{}'", layer.name), layer.name, space, cfg,
                                                       builder, so, dump_ir_after, &failure);
  if (!best) {
    throw_user_error("qadd '{}' cannot be lowered for the accelerator: no tile_h of {} fits and runs ({})", layer.name,
                     layer.shape[2], failure.first_reason);
  }
  accel::LoweredLayer out;
  out.pass_ms.emplace_back("schedule", ms_since(t_schedule));
  out.ir_dump = best->ir_dump;
  for (const auto& [pass, ms] : best->report.pass_ms) out.pass_ms.emplace_back(pass, ms);
  const auto t_verify = Clock::now();
  isa::verify(best->program);
  out.pass_ms.emplace_back("verify", ms_since(t_verify));
  out.est_cycles = static_cast<int64_t>(best->cycles);
  const int64_t tile_h = best->point.split("tile_h")[1];
  const int64_t tiles = ((layer.shape[0] + cfg.batch() - 1) / cfg.batch()) *
                        ((layer.shape[1] + cfg.block_out() - 1) / cfg.block_out()) * (layer.shape[2] / tile_h);
  out.schedule = fmt::format("tile_h={} ({} tiles), {} int32 constant rows{}", tile_h, tiles, best->op.constants.size(),
                             chain_of(layer).folded ? ", zero points folded" : "");
  out.program = std::move(best->program);
  return out;
}

}  // namespace tessel::compiler::driver
