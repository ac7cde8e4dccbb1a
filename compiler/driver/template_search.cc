#include "compiler/driver/template_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "compiler/backend/accel/stream_cost.h"
#include "isa/verifier.h"
#include "support/error.h"

namespace tessel::compiler::driver {
namespace {

struct Built {
  isa::Program program;
  accel_tir::BuildReport report;
};

Built build_point(const std::string& name, const topi::accel::ScheduledOp& op, const isa::HwConfig& cfg,
                  const TemplateBuilder& builder, const std::string& dump) {
  const tir::PrimFunc f = topi::accel::lower_template(op, name);
  isa::HwConfig deep = cfg;
  deep.cmd_queue_depth = isa::kMaxQueueDepth;
  deep.token_queue_depth = isa::kMaxQueueDepth;
  accel_tir::BuildOptions bo;
  bo.dump_ir_after = dump;
  Built b;
  b.program = accel_tir::build_accel_program(f, deep, builder.segments(op), bo, &b.report);
  b.program.config = cfg;
  b.program.name = name;
  if (builder.fill) builder.fill(op, b.program);
  return b;
}

}  // namespace

std::string describe_point(const te::ConfigSpace& space, const te::ConfigEntity& point) {
  std::string s;
  for (const te::SubSpace& sub : space.subspaces()) {
    if (!s.empty()) s += " ";
    if (sub.kind == te::KnobKind::kSplit) {
      s += fmt::format("{}={}", sub.name, point.split(sub.name).back());
    } else if (sub.kind == te::KnobKind::kKnob) {
      s += fmt::format("{}={}", sub.name, point.knob(sub.name));
    } else {
      s += fmt::format("{}=[{}]", sub.name, fmt::join(point.reorder(sub.name), ","));
    }
  }
  return s;
}

std::optional<TemplateChoice> search_template(const std::string& what, const std::string& name,
                                              const te::ConfigSpace& space, const isa::HwConfig& cfg,
                                              const TemplateBuilder& builder, const TemplateSearchOptions& opts,
                                              const std::string& dump_ir_after, TemplateSearchFailure* failure) {
  TESSEL_CHECK(builder.schedule && builder.segments, "{}: template builder without schedule or segments", what);
  TESSEL_CHECK(!opts.fast_cost || opts.max_candidates >= 1, "{}: max_candidates 0", what);
  // ---- the points to build, in the order they are tried ----
  struct Ranked {
    double cost = 0;
    int64_t index = 0;
  };
  std::vector<Ranked> order;
  const int64_t n = space.size();
  for (int64_t i = 0; i < n; ++i) {
    if (!opts.fast_cost) {
      order.push_back({0, i});
      continue;
    }
    const std::optional<double> c = opts.fast_cost(space.get(i));
    if (c) order.push_back({*c, i});
  }
  if (opts.fast_cost) {
    std::stable_sort(order.begin(), order.end(), [](const Ranked& a, const Ranked& b) { return a.cost < b.cost; });
  }
  const size_t max_timed = opts.fast_cost ? opts.max_candidates : order.size();
  const size_t max_built = opts.fast_cost ? 4 * opts.max_candidates : order.size();

  std::optional<TemplateChoice> best;
  std::string first_reason;
  size_t timed = 0, built = 0;
  for (const Ranked& r : order) {
    if (timed >= max_timed || built >= max_built) break;
    const te::ConfigEntity point = space.get(r.index);
    std::optional<topi::accel::ScheduledOp> op;
    try {
      op = builder.schedule(point);
    } catch (const UserError& e) {
      // with a fit check, the template refuses the layer itself; without one, the point's tile
      // does not fit (the template's check): the next point
      if (opts.fast_cost) throw TemplateRefusal(e.what());
      if (first_reason.empty()) first_reason = e.what();
      continue;
    }
    Built b;
    ++built;
    try {
      b = build_point(name, *op, cfg, builder, "");
    } catch (const UserError& e) {
      if (opts.pass_errors_are_bugs) {
        // the template's TIR is the passes' contract: a failure here is a bug, not a user error
        throw_internal_error("{}: the accelerator passes reject the template at {}: {}", what,
                             describe_point(space, point), e.what());
      }
      if (first_reason.empty()) first_reason = fmt::format("{}: {}", describe_point(space, point), e.what());
      continue;
    }
    const std::vector<isa::Diagnostic> diags = isa::check_program(b.program);
    const bool deadlock_only = isa::only_deadlocks(diags);
    if (!diags.empty() && !deadlock_only) {
      throw_internal_error("{}: the lowered stream ({}) fails the verifier: {}", what, describe_point(space, point),
                           diags.front().message);
    }
    if (deadlock_only) {
      if (first_reason.empty()) {
        first_reason = fmt::format("{} deadlocks with CMD_QUEUE_DEPTH={}, TOKEN_QUEUE_DEPTH={}: {}",
                                   describe_point(space, point), cfg.cmd_queue_depth, cfg.token_queue_depth,
                                   diags.front().message);
      }
      continue;
    }
    ++timed;
    const uint64_t cycles = accel::estimate_cycles(b.program);
    if (!best || cycles < best->cycles) {
      best = TemplateChoice{point, std::move(b.program), std::move(b.report), std::move(*op), cycles, 0, 0, 0, ""};
    }
  }
  if (!best) {
    if (failure) *failure = {first_reason, n, static_cast<int64_t>(order.size()), static_cast<int64_t>(built)};
    return std::nullopt;
  }
  best->points = n;
  best->screened = static_cast<int64_t>(order.size());
  best->built = static_cast<int64_t>(built);
  bool dump = dump_ir_after == "all" || dump_ir_after == "input";
  for (const std::string& p : accel_tir::pass_names()) dump = dump || p == dump_ir_after;
  if (dump) {
    const Built d = build_point(name, builder.schedule(best->point), cfg, builder, dump_ir_after);
    for (const auto& [pass, text] : d.report.ir_after) best->ir_dump += fmt::format("; after {}\n{}\n", pass, text);
  }
  return best;
}

}  // namespace tessel::compiler::driver
