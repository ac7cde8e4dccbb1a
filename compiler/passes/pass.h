// The graph pass interface and the one ordered pipeline of graph passes.
//
// Every pass is a function (ir::Graph&, PassContext&) declared in its own header
// (compiler/passes/<name>.h) with its own test (tests/compiler/test_<name>.cc). The pipeline
// below lists them in order; run_pipeline() runs them, times each one (wall milliseconds) and
// dumps the IR after a named pass or after every pass ("all").
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/reference/interpreter.h"
#include "isa/config.h"

namespace tessel::compiler::passes {

/// What passes may read (options) and record (facts for the driver).
struct PassContext {
  isa::HwConfig config;            ///< accelerator configuration (blocks for NCHWnc, placement)
  bool offload = true;             ///< place qconv2d (conv2d/dense) on the accelerator
  bool exact_requant = true;       ///< requant: round(acc * M) exactly (CompileOptions::exact_requant)
  /// Calibration inputs for post-training quantisation: one entry per run, one tensor per graph
  /// input (float32, the graph input shapes).
  std::vector<std::vector<reference::RefTensor>> calibration;
  // ---- facts recorded by passes ----
  bool model_was_quantized = false;  ///< set by qdq_import: the model had Q/DQ/QLinear operators
  bool quantized_by_tessel = false;  ///< set by quantize: Tessel quantised a float model
};

/// A named pass.
struct Pass {
  std::string name;
  std::string summary;  ///< one line: what the pass does
  std::function<void(ir::Graph&, PassContext&)> run;
};

/// The graph passes in pipeline order: shape_inference, constant_folding,
/// dead_code_elimination, fold_batchnorm, fuse_bias, qdq_import, quantize, fuse_activation,
/// requant, placement, layout_nchwnc (requant after fuse_activation: the requantisation is
/// derived for the fused clip bounds).
const std::vector<Pass>& graph_pipeline();

/// Wall time of one pass in milliseconds.
struct PassTime {
  std::string pass;
  double ms = 0;
};

/// Runs graph_pipeline() on `g`. `dump_after` is empty (no dump), a pass name, or "all"; the
/// dumps ("; after <pass>" then ir::Graph::dump()) are appended to `*dump`. Throws UserError for
/// an unknown `dump_after` name (listing the valid names; names of later pipeline stages given
/// in `other_names` are accepted and ignored here), and whatever the passes throw.
void run_pipeline(ir::Graph& g, PassContext& ctx, const std::string& dump_after,
                  std::vector<PassTime>* timings, std::string* dump,
                  const std::vector<std::string>& other_names = {});

}  // namespace tessel::compiler::passes
