#include "compiler/backend/accel/context.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "support/error.h"

namespace tessel::compiler::accel {

int LoweringContext::intern_kernel(const std::vector<isa::Uop>& k) {
  const int id = kernel_table_.intern(k);
  if (static_cast<size_t>(id) == kernels.size()) kernels.push_back(k);
  return id;
}

int64_t ChunkLayout::slot_of(int64_t icb) const {
  auto it = std::lower_bound(icbs.begin(), icbs.end(), icb);
  TESSEL_CHECK(it != icbs.end() && *it == icb, "input block {} not in the chunk", icb);
  return it - icbs.begin();
}

ChunkLayout chunk_layout(const LoweringContext& ctx, const Tile& t, int chunk) {
  const ConvGeometry& g = ctx.geom;
  const Schedule& s = ctx.sched;
  ChunkLayout l;
  std::set<int64_t> blocks;
  const int64_t khw = g.kh * g.kw;
  for (int64_t ob = t.ob0; ob < t.ob0 + t.obn; ++ob) {
    const auto [a, b] = chunk_blocks(g, s, ob, chunk);
    l.entries.emplace_back(a, b);
    l.wbase.push_back(l.wgt_entries);
    l.wgt_entries += (b - a) * khw;
    for (int64_t i = a; i < b; ++i) blocks.insert(i);
  }
  l.icbs.assign(blocks.begin(), blocks.end());
  l.wy = input_window(t.y0, t.th, g.kh, g.sh, g.pt, g.ih);
  l.wx = input_window(t.x0, t.tw, g.kw, g.sw, g.pl, g.iw);
  l.slot_stride = s.win_h * l.wx.total();
  return l;
}

/// First ACC row of the per-channel constants in a thread's region.
int64_t const_acc_base(const LoweringContext& ctx) {
  return ctx.sched.oc_tile_blocks * ctx.sched.acc_tile_stride;
}

int64_t acc_region_base(const LoweringContext& ctx, int region) {
  if (region == 0) return 0;
  const Schedule& s = ctx.sched;
  return const_acc_base(ctx) + s.oc_tile_blocks * s.const_rows +
         (region - 1) * s.oc_tile_blocks * s.acc_tile_stride;
}

uint32_t to_u32(int64_t v, const char* what) {
  TESSEL_CHECK(v >= 0 && v <= int64_t{UINT32_MAX}, "{} {} does not fit 32 bits", what, v);
  return static_cast<uint32_t>(v);
}

Stmt* find_stage(Stmt& tile, const std::string& name) {
  for (Stmt& c : tile.body) {
    if (c.kind == StmtKind::kSeq && c.name == name) return &c;
  }
  return nullptr;
}

std::string stage_name(const char* what, int chunk) { return fmt::format("{}{}", what, chunk); }

/// A GEMM-reset or ALU micro-op body over the tile's accumulator: for o < obn, p < th*tw:
/// dst = o*acc_tile_stride + p; src = const_base + o*const_rows + row (ALU with a vector source).
Stmt acc_loop(const LoweringContext& ctx, const Tile& t, const isa::Instruction& proto, int64_t row,
              std::string comment, int dst_region, int src_region) {
  Stmt body;
  body.kind = StmtKind::kUopBody;
  body.insn = proto;
  body.vthread = t.vthread;
  body.name = std::move(comment);
  UopExpr u;
  u.dst.base = acc_region_base(ctx, dst_region);
  u.dst.terms = {{"o", ctx.sched.acc_tile_stride}, {"p", 1}};
  if (row >= 0) {
    u.src.base = const_acc_base(ctx) + row;
    u.src.terms = {{"o", ctx.sched.const_rows}};
  } else if (src_region >= 0) {
    u.src.base = acc_region_base(ctx, src_region);
    u.src.terms = {{"o", ctx.sched.acc_tile_stride}, {"p", 1}};
  }
  body.uops.push_back(u);
  return make_for("o", t.obn, {make_for("p", t.th * t.tw, {std::move(body)})});
}

}  // namespace tessel::compiler::accel
