// Entry point of the accelerator backend: one quantised conv2d/dense layer (runtime/qnn.h
// semantics) -> one verified accelerator Program. Internally: a compute definition and a schedule
// (tiling into the scratchpads, virtual threads), then the named, ordered loop-IR passes of
// compiler/backend/accel/passes.h (inject DMA copies with padding, tensorize GEMM into micro-op
// kernels, inject ALU requantisation, fold uop loops, inject virtual threads, insert dependency
// tokens, emit the instruction stream), then the verifier of isa/verifier.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "isa/config.h"
#include "isa/program.h"
#include "runtime/qnn.h"

namespace tessel::compiler::accel {

/// A layer to offload. weights: OIHW int8 [OC][IC/groups][KH][KW]; bias: int32 [OC].
struct AccelLayer {
  std::string name;  ///< ONNX node name, copied into the Program and error messages
  runtime::QConv2dParams params;
  std::vector<int8_t> weights;
  std::vector<int32_t> bias;
};

/// Schedule knobs; 0 means "chosen by the scheduler's cost model".
struct ScheduleKnobs {
  int oc_tile_blocks = 0;   ///< output-channel blocks per tile
  int oh_tile = 0;          ///< output rows per tile
  int virtual_threads = 2;  ///< >= 1; 2 = double buffering
  int ow_tile = 0;          ///< output columns per tile
  int ic_chunk = 0;         ///< non-zero input-channel blocks per output block per reduction chunk
  bool operator==(const ScheduleKnobs&) const = default;
};

/// How many schedule candidates schedule_candidates (schedule.h) keeps for the final choice:
/// lower_conv2d lowers each and keeps the one whose emitted stream the stream cost model
/// (estimate_cycles, stream_cost.h) times fastest. The defaults were measured on the Program
/// corpus (tests/golden/program_corpus.json, 120 layers x 4 configurations): with 64 candidates
/// and no band the pruning model's cost of the stream model's pick was within 5% of the
/// pruning model's best for 475 of the 480 layer/configuration pairs (at most 17.9% above it),
/// and 4 candidates within 5% give 60-75% of the 64-candidate gain for about 0.3 s more CPU
/// time on mobilenetv2-12-int8 (docs/accel-backend.md, "Schedule search").
struct CandidateFilter {
  /// At most this many (>= 1), the cheapest by the pruning model; 1 = the pruning model's
  /// choice alone.
  size_t max_candidates = 4;
  /// Only candidates whose pruning-model cost is at most (1 + band) times the cheapest one's
  /// (>= 0).
  double band = 0.05;
};

/// How a layer with a non-zero input zero point and output windows touching the padding
/// initialises its accumulators (docs/accel-backend.md section 2). Other layers ignore it.
enum class ZeroPointInit {
  kCostModel,   ///< the cheaper of the two below by the stream cost model (ties: border)
  kBorderTiles, ///< constant correction in the bias row, init tensor only for border tiles
  kEveryTile,   ///< every tile loads bias + correction from the init tensor, no bias row
};

/// Options of the lowering.
struct LowerOptions {
  ScheduleKnobs knobs;
  ZeroPointInit zero_point_init = ZeroPointInit::kCostModel;
  /// The candidates lowered for the final choice (the defaults keep mobilenetv2-12-int8's
  /// compile under 2 s; docs/accel-backend.md).
  CandidateFilter candidates;
  /// Pass name (see passes.h), "schedule" (the initial IR), or "all": the loop IR after it is
  /// appended to LoweredLayer::ir_dump. Empty: no dump. Any other value is a UserError.
  std::string dump_ir_after;
  /// Run isa::verify on the emitted Program (a failure is an InternalError). A caller that
  /// verifies itself, e.g. to tell a queue-depth deadlock from a bug, sets it to false.
  bool verify = true;
};

/// The result: a Program whose image has (at least) an input segment "inp" (kInput, the layer
/// input in NCHWnc int8 with n = BATCH, c = BLOCK_IN, N and C zero-padded to the blocks) and an
/// output segment "out" (kOutput, NCHWnc int8 with c = BLOCK_OUT), plus constant segments.
struct LoweredLayer {
  isa::Program program;
  int64_t ideal_gemm_uops = 0;  ///< MACs rounded to blocks / MACs per uop: the compute roofline
  int64_t macs = 0;             ///< useful MACs of the layer
  std::string schedule;         ///< one-line description of the chosen schedule (tiles, threads)
  std::string ir_dump;          ///< loop IR dumps requested by LowerOptions::dump_ir_after
  /// The cycles of `program` by the stream cost model (estimate_cycles, stream_cost.h: start to
  /// FINISH, as the cycle model counts them); -1 when the stream cannot be timed because it
  /// fails the verifier (only with LowerOptions::verify = false: e.g. it deadlocks under cfg's
  /// queue depths).
  int64_t est_cycles = 0;
  /// The accumulator initialisation chosen: kBorderTiles when an init tensor exists only for the
  /// tiles touching the padding (or none is needed: no zero point, or no window touches the
  /// padding), kEveryTile when every tile loads it.
  ZeroPointInit zero_point_init = ZeroPointInit::kBorderTiles;
  /// Wall time of the schedule and of each pass, in pass order: (name, milliseconds). For
  /// reports only: the only part of the result that is not deterministic.
  std::vector<std::pair<std::string, double>> pass_ms;
};

/// Lowers `layer` for `cfg`. Throws UserError naming the layer when it cannot be mapped (e.g. a
/// single tile does not fit the scratchpads), and InternalError if the emitted stream fails the
/// verifier. Deterministic: the same inputs give a byte-identical Program.
LoweredLayer lower_conv2d(const AccelLayer& layer, const isa::HwConfig& cfg,
                          const LowerOptions& opts = {});

}  // namespace tessel::compiler::accel
