#include "compiler/driver/lower_qadd.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <optional>

#include "compiler/backend/accel/stream_cost.h"
#include "compiler/backend/accel/tir/accel_tir.h"
#include "compiler/topi/accel/schedule.h"
#include "isa/verifier.h"
#include "support/error.h"

namespace tessel::compiler::driver {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

constexpr int kDeepQueue = isa::kMaxQueueDepth;

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

/// One built candidate.
struct Candidate {
  isa::Program program;
  accel_tir::BuildReport report;
  int64_t tile_h = 0, tiles = 0, const_rows = 0;
  uint64_t cycles = 0;
};

/// Builds the template at `point` (`dump` as BuildOptions::dump_ir_after); the Program carries
/// cfg (its queue depths) although it was built with deep queues.
Candidate build(const QaddAccelLayer& layer, const topi::accel::ScheduledOp& op, const isa::HwConfig& cfg,
                const te::ConfigEntity& point, const std::string& dump) {
  const tir::PrimFunc f = topi::accel::lower_template(op, layer.name);
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
  isa::HwConfig deep = cfg;
  deep.cmd_queue_depth = kDeepQueue;
  deep.token_queue_depth = kDeepQueue;
  Candidate c;
  accel_tir::BuildOptions bo;
  bo.dump_ir_after = dump;
  c.program = accel_tir::build_accel_program(f, deep, segs, bo, &c.report);
  c.program.config = cfg;
  c.program.name = layer.name;
  // the constants: int32 little-endian, each filling its acc element
  if (!op.constants.empty()) {
    const isa::Segment& seg = c.program.segment("const");
    for (size_t k = 0; k < op.constants.size(); ++k) {
      const std::vector<int32_t>& v = op.constants[k].values;
      TESSEL_CHECK(v.size() * 4 == acc_elem, "qadd '{}': constant {} has {} values, an acc element {} bytes",
                   layer.name, op.constants[k].tensor.name(), v.size(), acc_elem);
      for (size_t i = 0; i < v.size(); ++i) {
        const uint32_t u = static_cast<uint32_t>(v[i]);
        uint8_t* p = c.program.image.data() + seg.offset_bytes + k * acc_elem + i * 4;
        for (int byte = 0; byte < 4; ++byte) p[byte] = static_cast<uint8_t>(u >> (8 * byte));
      }
    }
  }
  c.tile_h = point.split("tile_h")[1];
  c.tiles = ((layer.shape[0] + cfg.batch() - 1) / cfg.batch()) * ((layer.shape[1] + cfg.block_out() - 1) / cfg.block_out()) *
            (layer.shape[2] / c.tile_h);
  c.const_rows = static_cast<int64_t>(op.constants.size());
  return c;
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
  std::optional<Candidate> best;
  std::optional<te::ConfigEntity> best_point;
  std::string first_reason;
  for (int64_t i = 0; i < space.size(); ++i) {
    const te::ConfigEntity point = space.get(i);
    std::optional<topi::accel::ScheduledOp> op;
    try {
      op = topi::accel::schedule_qadd(tl, cfg, point);
    } catch (const UserError& e) {
      // a tile that does not fit ACC (the template's check): the next candidate
      if (first_reason.empty()) first_reason = e.what();
      continue;
    }
    Candidate c;
    try {
      c = build(layer, *op, cfg, point, "");
    } catch (const UserError& e) {
      // the template's TIR is the passes' contract: a failure here is a bug, not a user error
      throw_internal_error("qadd '{}': the accelerator passes reject the qadd template (tile_h={}): {}", layer.name,
                           point.split("tile_h")[1], e.what());
    }
    const std::vector<isa::Diagnostic> diags = isa::check_program(c.program);
    const bool deadlock_only = isa::only_deadlocks(diags);
    if (!diags.empty() && !deadlock_only) {
      throw_internal_error("qadd '{}': the lowered stream (tile_h={}) fails the verifier: {}", layer.name, c.tile_h,
                           diags.front().message);
    }
    if (deadlock_only) {
      if (first_reason.empty()) {
        first_reason = fmt::format("tile_h={} deadlocks with CMD_QUEUE_DEPTH={}, TOKEN_QUEUE_DEPTH={}: {}", c.tile_h,
                                   cfg.cmd_queue_depth, cfg.token_queue_depth, diags.front().message);
      }
      continue;
    }
    c.cycles = accel::estimate_cycles(c.program);
    if (!best || c.cycles < best->cycles) {
      best = std::move(c);
      best_point = point;
    }
  }
  if (!best) {
    throw_user_error("qadd '{}' cannot be lowered for the accelerator: no tile_h of {} fits and runs ({})", layer.name,
                     layer.shape[2], first_reason);
  }
  accel::LoweredLayer out;
  out.pass_ms.emplace_back("schedule", ms_since(t_schedule));
  // the chosen candidate again when a dump is asked for (the same Program: builds are deterministic)
  bool dump = dump_ir_after == "all" || dump_ir_after == "input";
  for (const std::string& n : accel_tir::pass_names()) dump = dump || n == dump_ir_after;
  if (dump) {
    Candidate d = build(layer, topi::accel::schedule_qadd(tl, cfg, *best_point), cfg, *best_point, dump_ir_after);
    for (const auto& [pass, text] : d.report.ir_after) out.ir_dump += fmt::format("; after {}\n{}\n", pass, text);
  }
  for (const auto& [pass, ms] : best->report.pass_ms) out.pass_ms.emplace_back(pass, ms);
  const auto t_verify = Clock::now();
  isa::verify(best->program);
  out.pass_ms.emplace_back("verify", ms_since(t_verify));
  out.est_cycles = static_cast<int64_t>(best->cycles);
  out.schedule = fmt::format("tile_h={} ({} tiles), {} int32 constant rows{}", best->tile_h, best->tiles,
                             best->const_rows, chain_of(layer).folded ? ", zero points folded" : "");
  out.program = std::move(best->program);
  return out;
}

}  // namespace tessel::compiler::driver
