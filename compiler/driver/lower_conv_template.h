// Lowering of an offloaded conv2d/dense layer (accel::AccelLayer, runtime/qnn.h semantics) to a
// verified accelerator Program through the tensor-expression path: the topi templates
// (compiler/topi/accel/schedule.h schedule_conv2d, schedule_dense) -> topi::accel::
// lower_template -> compiler/backend/accel/tir build_accel_program, searched by the stream cost
// model (template_search.h). A drop-in for accel::lower_conv2d (compiler/backend/accel/
// lower_conv2d.h): the same Program interface, so the graph executor binds either the same way.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "compiler/backend/accel/lower_conv2d.h"
#include "isa/config.h"
#include "support/error.h"

namespace tessel::compiler::driver {

/// A layer the templates cannot take (yet): what() is "layer '<name>': unsupported by the
/// template: <feature>: <detail>", feature() the feature alone (a fixed phrase, for counting
/// reasons; today only "template refusal", a check of the template's own, whose message is the
/// detail: every valid layer converts, grouped and depthwise ones in block groups).
class TemplateUnsupported : public UserError {
 public:
  TemplateUnsupported(std::string feature, const std::string& what)
      : UserError(what), feature_(std::move(feature)) {}
  const std::string& feature() const { return feature_; }

 private:
  std::string feature_;
};

/// Options of lower_conv2d_template.
struct ConvTemplateOptions {
  /// The points of the template's config space built and timed by the stream cost model, the
  /// cheapest first by the search's fast model (see lower_conv2d_template); >= 1.
  size_t max_candidates = 8;
  /// "all", "input" or a name of accel_tir::pass_names(): that TIR of the chosen point is
  /// appended to LoweredLayer::ir_dump ("; after <pass>" headers); other names dump nothing.
  std::string dump_ir_after;
};

/// Lowers `layer` for `cfg` through the conv2d template, or the dense template for a dense
/// layer (AccelLayer's form of dense: a 1x1 conv, stride 1, no padding, on [N, K, 1, 1]).
///
/// The Program: segments "inp" (kInput: the layer input in NCHWnc int8, n = BATCH, c =
/// BLOCK_IN, N and C zero-padded to the blocks: the template's x), "out" (kOutput: NCHWnc int8,
/// c = BLOCK_OUT), "wgt" (kConst: the weights packed [OC/BO][IC/BI][KH][KW][BO][BI], zero in the
/// padding lanes: one WGT element per [BO][BI] block), "acc_const" (kConst, only when the
/// template instance has constant operands: each int32 row-major, one after another), then "uop";
/// as accel::lower_conv2d's, so accel::LoweredLayer is interchangeable. macs and ideal_gemm_uops
/// as lower_conv2d's; est_cycles = accel::estimate_cycles of the Program (exact against the
/// cycle model); schedule "conv2d template tile_oc=2 tile_h=14 tile_w=14 tile_ic=4
/// oc_nthread=2 (1152 points, 380 fit, 8 built)"; pass_ms "schedule" (the search), the chosen
/// point's build passes, "verify"; zero_point_init kBorderTiles.
///
/// Conversion (one step per feature, lower_conv_template.cc): the OIHW weights packed as above;
/// the requantisation resolved per channel (runtime::requant_channel), one entry per field when
/// every channel's chain is the same (per-tensor), else one per output-channel lane (the padding
/// lanes repeat channel 0's chain); the bias (zero-padded to the lanes) and the input zero point go
/// to the template (topi::accel::Conv2dLayer::bias, x_zero_point, w_values), which folds them
/// into the chain's acc_offset and, when an output window reaches into the padding, a
/// per-position correction tensor (schedule.h).
///
/// Search: the points of conv2d_config_space (dense_config_space) whose tiles fit the
/// scratchpads (the template's row checks, without building) are ranked by a fast model of the
/// template's stream: the load, compute and store modules as a pipeline over the tiles in the
/// order inject_virtual_threads interleaves the threads (per input-channel chunk every
/// thread's LOADs, then every thread's GEMMs; per tile the ALU steps, then the STOREs), each
/// thread with its own buffers (its next LOAD waits for its previous GEMMs, its next tile's
/// GEMMs for its previous STORE); a LOAD INP per input block of the window and a LOAD WGT per
/// output block, each DRAM_LATENCY + the beats of its real rows; GEMM uops one per cycle plus 4
/// per instruction; at least the total DRAM beats (one shared data bus). On 12 mobilenetv2
/// layers searched exhaustively its 8 best points hold the best one within 0.9 % (the
/// sum/max model it replaced: 1.6 %). The best max_candidates that run under cfg's queue
/// depths are built and the stream cost model picks (search_template).
///
/// Groups: the channel groups are merged into the most block groups of whole channel blocks
/// (the template's attrs.groups; depthwise 32 channels in blocks of 16: 2), the weights packed
/// per block group with zeros between channels of different groups (as the old path's
/// block-sparse view); a grouped dense layer goes through the conv2d template.
///
/// Throws TemplateUnsupported (a UserError naming the layer) with the template's own message
/// when it refuses the layer; a
/// UserError naming the layer for weights or bias of the wrong size (as lower_conv2d), invalid
/// parameters (accel::make_geometry's checks) and when no candidate fits and runs (with the
/// first reason); InternalError for a stream that fails the verifier other than by deadlock.
/// Deterministic: the same inputs give a byte-identical Program.
accel::LoweredLayer lower_conv2d_template(const accel::AccelLayer& layer, const isa::HwConfig& cfg,
                                          const ConvTemplateOptions& opts = {});

/// Whether lower_conv2d_template takes `layer` as a dense layer (schedule_dense).
bool is_dense_layer(const accel::AccelLayer& layer);

}  // namespace tessel::compiler::driver
