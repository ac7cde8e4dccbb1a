#include "compiler/backend/accel/passes/tensorize_gemm.h"

#include <fmt/format.h>

#include "support/error.h"

namespace tessel::compiler::accel {

using isa::Opcode;

void tensorize_gemm(Stmt& root, LoweringContext& ctx) {
  const ConvGeometry& g = ctx.geom;
  const int64_t khw = g.kh * g.kw;
  for (Stmt& tile_stmt : root.body) {
    const Tile& t = ctx.sched.tiles[static_cast<size_t>(tile_stmt.tile)];
    for (Stmt& stage : tile_stmt.body) {
      std::vector<Stmt> out;
      for (Stmt& s : stage.body) {
        if (s.kind != StmtKind::kCompute) {
          out.push_back(std::move(s));
          continue;
        }
        const ChunkLayout l = chunk_layout(ctx, t, s.chunk);
        if (l.wgt_entries == 0) continue;  // every weight tile of this chunk is structurally zero
        // the window lies wholly in the padding: the GEMM would add only zeros (the DMA's padding);
        // the padding's zero-point correction is in the init tensor (or is 0 with input zero
        // point 0), so the accumulators already hold the whole sum
        if (tile_window_empty(g, t)) continue;
        Stmt body;
        body.kind = StmtKind::kUopBody;
        body.insn.opcode = Opcode::kGemm;
        body.vthread = t.vthread;
        body.name = fmt::format("tile {} chunk {}", s.tile, s.chunk);
        const int64_t ww = l.wx.total();
        for (int64_t i = 0; i < t.obn; ++i) {
          const auto [a, b] = l.entries[static_cast<size_t>(i)];
          for (int64_t icb = a; icb < b; ++icb) {
            for (int64_t ky = 0; ky < g.kh; ++ky) {
              for (int64_t kx = 0; kx < g.kw; ++kx) {
                UopExpr u;
                u.dst.base = i * ctx.sched.acc_tile_stride;
                u.dst.terms = {{"y", t.tw}, {"x", 1}};
                u.src.base = l.slot_of(icb) * l.slot_stride + ky * ww + kx;
                u.src.terms = {{"y", g.sh * ww}, {"x", g.sw}};
                u.wgt.base = l.wbase[static_cast<size_t>(i)] + (icb - a) * khw + ky * g.kw + kx;
                body.uops.push_back(u);
              }
            }
          }
        }
        out.push_back(make_for("y", t.th, {make_for("x", t.tw, {std::move(body)})}));
      }
      stage.body = std::move(out);
    }
  }
}

}  // namespace tessel::compiler::accel
