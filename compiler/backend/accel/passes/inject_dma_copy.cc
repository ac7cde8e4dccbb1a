#include "compiler/backend/accel/passes/inject_dma_copy.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "support/error.h"

namespace tessel::compiler::accel {

using isa::Instruction;
using isa::MemType;
using isa::Opcode;

void inject_dma_copy(Stmt& root, LoweringContext& ctx) {
  const ConvGeometry& g = ctx.geom;
  const int64_t khw = g.kh * g.kw;
  // per virtual thread: the weights its WGT region holds (first output block, output blocks,
  // chunk); a tile that needs exactly those (one chunk per tile, same output blocks as the
  // thread's previous tile) reuses them instead of loading them again
  struct Held {
    int64_t ob0 = -1, obn = 0;
    int chunk = -1;
    bool operator==(const Held&) const = default;
  };
  std::vector<Held> held(static_cast<size_t>(ctx.sched.virtual_threads));
  for (Stmt& tile_stmt : root.body) {
    TESSEL_CHECK(tile_stmt.kind == StmtKind::kTile, "inject_dma_copy expects tiles, got {}",
                 static_cast<int>(tile_stmt.kind));
    const Tile& t = ctx.sched.tiles[static_cast<size_t>(tile_stmt.tile)];
    // a window wholly in the padding: nothing to load (tensorize_gemm emits no GEMM for it)
    const bool no_input = tile_window_empty(g, t);
    std::vector<Stmt> stages;
    for (Stmt& compute : tile_stmt.body) {
      const int c = compute.chunk;
      const ChunkLayout l = chunk_layout(ctx, t, c);
      Stmt load = make_seq(stage_name("load", c));
      if (no_input) {
        stages.push_back(std::move(load));
        stages.push_back(make_seq(stage_name("compute", c), {std::move(compute)}));
        continue;
      }
      for (size_t slot = 0; slot < l.icbs.size(); ++slot) {
        const int64_t icb = l.icbs[slot];
        const int64_t y_first = std::max<int64_t>(l.wy.first, 0);
        const int64_t x_first = std::max<int64_t>(l.wx.first, 0);
        const int64_t dram = static_cast<int64_t>(ctx.inp_base) +
                             ((t.nb * g.icb + icb) * g.ih + y_first) * g.iw + x_first;
        Instruction in = isa::make_mem(Opcode::kLoad, MemType::kInp,
                                       to_u32(static_cast<int64_t>(slot) * l.slot_stride, "sram"),
                                       to_u32(dram, "dram_base"), to_u32(l.wy.real, "y_size"),
                                       to_u32(l.wx.real, "x_size"), to_u32(g.iw, "x_stride"),
                                       to_u32(l.wy.pad0, "y_pad_0"), to_u32(l.wy.pad1, "y_pad_1"),
                                       to_u32(l.wx.pad0, "x_pad_0"), to_u32(l.wx.pad1, "x_pad_1"));
        load.body.push_back(
            make_insn(in,
                      fmt::format("inp block {} rows [{}, {}) cols [{}, {})", icb, l.wy.first,
                                  l.wy.first + l.wy.total(), l.wx.first, l.wx.first + l.wx.total()),
                      t.vthread));
      }
      // weights: the pieces of the output blocks grouped into LOADs (group_wgt_loads: runs
      // contiguous in DRAM and WGT, or evenly spaced rows of one 2-D LOAD)
      const Held want{t.ob0, t.obn, c};
      Held& have = held[static_cast<size_t>(t.vthread)];
      const bool reuse = have == want;
      have = want;
      std::vector<WgtPiece> pieces;
      std::vector<std::string> what;
      for (int64_t i = 0; i < t.obn && !reuse; ++i) {
        const auto [a, b] = l.entries[static_cast<size_t>(i)];
        if (b == a) continue;
        const int64_t ob = t.ob0 + i;
        pieces.push_back({ctx.wgt_offset[static_cast<size_t>(ob)] + (a - g.nz[ob].first) * khw,
                          l.wbase[static_cast<size_t>(i)], (b - a) * khw});
        what.push_back(fmt::format("{}:[{},{})", ob, a, b));
      }
      for (const WgtLoad& wl : group_wgt_loads(pieces)) {
        std::string comment = "wgt oc block:input blocks";
        for (size_t k = wl.first; k < wl.first + wl.count; ++k) comment += " " + what[k];
        Instruction in = isa::make_mem(
            Opcode::kLoad, MemType::kWgt, to_u32(wl.sram, "sram"),
            to_u32(static_cast<int64_t>(ctx.wgt_base) + wl.dram, "dram_base"),
            to_u32(wl.rows, "y_size"), to_u32(wl.entries, "x_size"), to_u32(wl.stride, "x_stride"));
        load.body.push_back(make_insn(in, comment, t.vthread));
      }
      stages.push_back(std::move(load));
      stages.push_back(make_seq(stage_name("compute", c), {std::move(compute)}));
    }
    stages.push_back(make_seq("alu"));
    Stmt store = make_seq("store");
    for (int64_t i = 0; i < t.obn; ++i) {
      const int64_t ob = t.ob0 + i;
      const int64_t dram =
          static_cast<int64_t>(ctx.out_base) + ((t.nb * g.ocb + ob) * g.oh + t.y0) * g.ow + t.x0;
      Instruction in =
          isa::make_mem(Opcode::kStore, MemType::kOut,
                        to_u32(i * ctx.sched.acc_tile_stride, "sram"), to_u32(dram, "dram_base"),
                        to_u32(t.th, "y_size"), to_u32(t.tw, "x_size"), to_u32(g.ow, "x_stride"));
      store.body.push_back(make_insn(in, fmt::format("out block {}", ob), t.vthread));
    }
    stages.push_back(std::move(store));
    tile_stmt.body = std::move(stages);
  }
}

}  // namespace tessel::compiler::accel
