#include <fmt/format.h>

#include <chrono>

#include "compiler/passes/constant_folding.h"
#include "compiler/passes/dead_code_elimination.h"
#include "compiler/passes/fold_batchnorm.h"
#include "compiler/passes/fuse_activation.h"
#include "compiler/passes/fuse_bias.h"
#include "compiler/passes/layout_nchwnc.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/placement.h"
#include "compiler/passes/qdq_import.h"
#include "compiler/passes/quantize.h"
#include "compiler/passes/requant.h"
#include "compiler/passes/shape_inference.h"
#include "support/error.h"

namespace tessel::compiler::passes {

const std::vector<Pass>& graph_pipeline() {
  static const std::vector<Pass> pipeline = {
      {"shape_inference", "dtypes and shapes of every value", shape_inference},
      {"constant_folding", "evaluate nodes with constant inputs, drop Identity", constant_folding},
      {"dead_code_elimination", "remove unused nodes and values", dead_code_elimination},
      {"fold_batchnorm", "BatchNormalization into the preceding Conv", fold_batchnorm},
      {"fuse_bias", "constant per-channel Add into Conv / MatMul / Gemm", fuse_bias},
      {"qdq_import", "QDQ / QLinear operators to integer operators", qdq_import},
      {"quantize", "post-training quantisation with power-of-two scales", quantize},
      {"fuse_activation", "qclip into qconv2d clip bounds / qadd relu", fuse_activation},
      {"requant", "requantisation parameters of every qconv2d", requant},
      {"placement", "qconv2d and exact residual qadds on the accelerator, the rest on the CPU", placement},
      {"layout_nchwnc", "NCHWnc packing around accelerator layers", layout_nchwnc},
  };
  return pipeline;
}

void run_pipeline(ir::Graph& g, PassContext& ctx, const std::string& dump_after, std::vector<PassTime>* timings,
                  std::string* dump, const std::vector<std::string>& other_names) {
  const auto& passes = graph_pipeline();
  if (!dump_after.empty() && dump_after != "all") {
    bool known = false;
    std::vector<std::string> names;
    for (const Pass& p : passes) {
      names.push_back(p.name);
      known = known || p.name == dump_after;
    }
    for (const std::string& n : other_names) {
      names.push_back(n);
      known = known || n == dump_after;
    }
    if (!known)
      throw_user_error("unknown pass '{}' for the ir dump; valid: all, {}", dump_after, fmt::join(names, ", "));
  }
  for (const Pass& p : passes) {
    const auto t0 = std::chrono::steady_clock::now();
    p.run(g, ctx);
    const auto t1 = std::chrono::steady_clock::now();
    if (timings) timings->push_back({p.name, std::chrono::duration<double, std::milli>(t1 - t0).count()});
    if (dump && (dump_after == "all" || dump_after == p.name)) *dump += fmt::format("; after {}\n{}", p.name, g.dump());
  }
}

}  // namespace tessel::compiler::passes
