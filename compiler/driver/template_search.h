// The schedule search of the driver's template lowerings (lower_qadd.h, lower_conv_template.h):
// points of a topi accelerator template's config space -> the template instance -> te::lower +
// alu_in_place + mark_gemm_kernels (topi::accel::lower_template) -> the accelerator's TIR passes
// (accel_tir::build_accel_program) -> the stream cost model (accel::estimate_cycles, exact
// against the cycle model), keeping the fastest Program that runs under the configured queue
// depths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compiler/backend/accel/tir/accel_tir.h"
#include "compiler/te/config_space.h"
#include "compiler/topi/accel/schedule.h"
#include "isa/config.h"
#include "isa/program.h"
#include "support/error.h"

namespace tessel::compiler::driver {

/// How one template is turned into Programs.
struct TemplateBuilder {
  /// The template instance at a point (topi::accel::schedule_*). A UserError means the point
  /// does not apply to the layer (a tile that does not fit a scratchpad, a knob that does not
  /// divide an extent): with TemplateSearchOptions::fast_cost, whose fit check must reject
  /// those points first, it means the template refuses the layer (see search_template).
  std::function<topi::accel::ScheduledOp(const te::ConfigEntity&)> schedule;
  /// The DRAM placement of the instance's PrimFunc arguments (one SegmentSpec per argument).
  std::function<std::vector<accel_tir::SegmentSpec>(const topi::accel::ScheduledOp&)> segments;
  /// Writes the instance's constants (weights, constant acc rows) into the built Program's
  /// image (the segments of `segments`); may be empty.
  std::function<void(const topi::accel::ScheduledOp&, isa::Program&)> fill;
};

/// How the points are screened before they are built.
struct TemplateSearchOptions {
  /// A fast estimate (any unit; smaller is faster) of the point's Program, or nullopt when the
  /// point cannot apply (its tile does not fit a scratchpad: the template's own checks, done
  /// here without building anything). Empty: every point is built, in space order.
  std::function<std::optional<double>(const te::ConfigEntity&)> fast_cost;
  /// With fast_cost: at most this many points (>= 1) that run under the configured queue depths
  /// are built and timed by the stream cost model, the cheapest by fast_cost first (ties: space
  /// order); points whose stream deadlocks do not count, but at most 4 x max_candidates points
  /// are built in all. Ignored without fast_cost.
  size_t max_candidates = 8;
  /// A UserError from the accelerator passes on a scheduled instance: true (the qadd template,
  /// whose TIR always meets the passes' contract): an InternalError; false: the point is skipped
  /// with that reason (e.g. a micro-op kernel larger than the UOP buffer).
  bool pass_errors_are_bugs = true;
};

/// The chosen point and its Program.
struct TemplateChoice {
  te::ConfigEntity point;
  isa::Program program;  ///< built with deep queues, carrying cfg (its queue depths); verified
  accel_tir::BuildReport report;
  topi::accel::ScheduledOp op;  ///< the template instance at `point`
  uint64_t cycles = 0;          ///< accel::estimate_cycles(program)
  int64_t points = 0;           ///< points in the space
  int64_t screened = 0;         ///< points the fit check (fast_cost) kept; = points without it
  int64_t built = 0;            ///< points built through the passes
  std::string ir_dump;          ///< "; after <pass>\n<TIR>\n" for the chosen point (dump_ir_after)
};

/// What search_template found when no point fits and runs.
struct TemplateSearchFailure {
  std::string first_reason;  ///< the first point's reason (the template's or the verifier's)
  int64_t points = 0, screened = 0, built = 0;
};

/// Thrown by search_template when the template refuses the layer itself (with fast_cost: the
/// schedule of a point the fit check kept throws a UserError): what() is the template's
/// message.
class TemplateRefusal : public UserError {
 public:
  using UserError::UserError;
};

/// Searches `space` for `name` (the Program's name; `what` names the layer in messages, e.g.
/// "qadd 'add7'"). Every candidate is built for cfg with CMD_QUEUE_DEPTH and TOKEN_QUEUE_DEPTH
/// at isa::kMaxQueueDepth, then checked with isa::check_program under cfg's depths: a stream
/// that only deadlocks there is skipped (its reason kept), any other verifier finding is an
/// InternalError naming the point. The choice: the fewest estimate_cycles, ties to the earlier
/// candidate (space order without fast_cost; fast_cost order with it). `dump_ir_after` ("all",
/// "input" or a name of accel_tir::pass_names(); anything else dumps nothing) rebuilds the
/// chosen point with that dump into TemplateChoice::ir_dump (the same Program: builds are
/// deterministic). Returns nullopt with `failure` filled when no candidate fits and runs.
/// Throws TemplateRefusal as described there. Deterministic.
std::optional<TemplateChoice> search_template(const std::string& what, const std::string& name,
                                              const te::ConfigSpace& space, const isa::HwConfig& cfg,
                                              const TemplateBuilder& builder, const TemplateSearchOptions& opts,
                                              const std::string& dump_ir_after, TemplateSearchFailure* failure);

/// The point as "tile_oc=2 tile_h=7 oc_nthread=2": every split by its innermost size, every knob
/// by its value, in the space's order.
std::string describe_point(const te::ConfigSpace& space, const te::ConfigEntity& point);

}  // namespace tessel::compiler::driver
