#include "compiler/backend/accel/passes.h"

#include <fmt/format.h>

#include "compiler/backend/accel/passes/allocate_uops.h"
#include "compiler/backend/accel/passes/fold_uop_loops.h"
#include "compiler/backend/accel/passes/inject_alu_requant.h"
#include "compiler/backend/accel/passes/inject_bias.h"
#include "compiler/backend/accel/passes/inject_dma_copy.h"
#include "compiler/backend/accel/passes/inject_virtual_threads.h"
#include "compiler/backend/accel/passes/insert_dep_tokens.h"
#include "compiler/backend/accel/passes/tensorize_gemm.h"

namespace tessel::compiler::accel {

const std::vector<Pass>& pass_pipeline() {
  static const std::vector<Pass> kPasses = {
      {"inject_dma_copy", "tiles to LOAD INP/WGT, compute and STORE stages (padding as DMA pads)", inject_dma_copy},
      {"tensorize_gemm", "compute to GEMM micro-op bodies in y/x loops (zero weight tiles skipped)", tensorize_gemm},
      {"inject_bias", "accumulator initialisation: constant rows, init tensor or reset + bias", inject_bias},
      {"inject_alu_requant", "the requantisation chain of runtime/qnn.h as ALU operations", inject_alu_requant},
      {"fold_uop_loops", "two loops around each micro-op body into iter_out/iter_in and kernels", fold_uop_loops},
      {"inject_virtual_threads", "virtual threads: absolute SRAM indices, interleaved tile stages", inject_virtual_threads},
      {"allocate_uops", "the micro-op table in DRAM and its LOAD UOPs", allocate_uops},
      {"insert_dep_tokens", "dependency tokens from SRAM regions, the ending and FINISH", insert_dep_tokens},
  };
  return kPasses;
}

Stmt build_initial_ir(const LoweringContext& ctx) {
  Stmt root = make_seq(fmt::format("layer {} ({})", ctx.layer, ctx.sched.describe()));
  for (size_t i = 0; i < ctx.sched.tiles.size(); ++i) {
    const Tile& t = ctx.sched.tiles[i];
    Stmt tile;
    tile.kind = StmtKind::kTile;
    tile.tile = static_cast<int64_t>(i);
    tile.vthread = t.vthread;
    tile.name = fmt::format("n_block={} oc_blocks=[{}, {}) rows=[{}, {}) cols=[{}, {})", t.nb,
                            t.ob0, t.ob0 + t.obn, t.y0, t.y0 + t.th, t.x0, t.x0 + t.tw);
    for (int c = 0; c < ctx.sched.n_chunks; ++c) {
      Stmt comp;
      comp.kind = StmtKind::kCompute;
      comp.tile = tile.tile;
      comp.chunk = c;
      comp.vthread = t.vthread;
      comp.name = "conv2d";
      tile.body.push_back(std::move(comp));
    }
    root.body.push_back(std::move(tile));
  }
  return root;
}

}  // namespace tessel::compiler::accel
