#include "compiler/backend/accel/passes/inject_bias.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "support/error.h"

namespace tessel::compiler::accel {

using isa::AluOp;
using isa::Instruction;
using isa::MemType;
using isa::Opcode;

void inject_bias(Stmt& root, LoweringContext& ctx) {
  const ConvGeometry& g = ctx.geom;
  const Schedule& s = ctx.sched;
  // per virtual thread: the output blocks (first, count) whose constant rows its ACC region holds;
  // a tile of the same output blocks reuses them (nothing else writes those rows)
  std::vector<std::pair<int64_t, int64_t>> resident(static_cast<size_t>(s.virtual_threads),
                                                    {-1, 0});
  for (Stmt& tile_stmt : root.body) {
    const Tile& t = ctx.sched.tiles[static_cast<size_t>(tile_stmt.tile)];
    std::vector<Stmt> init;
    std::pair<int64_t, int64_t>& held = resident[static_cast<size_t>(t.vthread)];
    if (s.const_rows > 0 && held != std::make_pair(t.ob0, t.obn)) {
      held = {t.ob0, t.obn};
      Instruction in = isa::make_mem(
          Opcode::kLoad, MemType::kAcc, to_u32(const_acc_base(ctx), "sram"),
          to_u32(static_cast<int64_t>(ctx.const_base) + t.ob0 * s.const_rows, "dram_base"), 1,
          to_u32(t.obn * s.const_rows, "x_size"), to_u32(t.obn * s.const_rows, "x_stride"));
      init.push_back(make_insn(in, "per-channel constant rows", t.vthread));
    }
    if (ctx.plan.acc_init_tensor && (ctx.plan.init_every_tile || tile_touches_padding(g, t))) {
      for (int64_t i = 0; i < t.obn; ++i) {
        const int64_t ob = t.ob0 + i;
        const int64_t dram = static_cast<int64_t>(ctx.init_base) + (ob * g.oh + t.y0) * g.ow + t.x0;
        Instruction in =
            isa::make_mem(Opcode::kLoad, MemType::kAcc, to_u32(i * s.acc_tile_stride, "sram"),
                          to_u32(dram, "dram_base"), to_u32(t.th, "y_size"), to_u32(t.tw, "x_size"),
                          to_u32(g.ow, "x_stride"));
        init.push_back(make_insn(
            in, fmt::format("acc init ({}) block {}",
                        ctx.plan.init_every_tile ? "bias + zero-point correction"
                                                 : "border zero-point correction",
                        ob), t.vthread));
      }
    } else {
      Instruction proto;
      proto.opcode = Opcode::kGemm;
      proto.reset = true;
      init.push_back(acc_loop(ctx, t, proto, -1, "reset accumulators"));
    }
    Stmt* first = find_stage(tile_stmt, stage_name("compute", 0));
    TESSEL_CHECK(first != nullptr, "tile {} has no compute0 stage", tile_stmt.tile);
    for (Stmt& b : first->body) init.push_back(std::move(b));
    first->body = std::move(init);
    if (ctx.plan.bias_row >= 0) {
      Instruction proto;
      proto.opcode = Opcode::kAlu;
      proto.alu_op = AluOp::kAdd;
      Stmt* alu = find_stage(tile_stmt, "alu");
      TESSEL_CHECK(alu != nullptr, "tile {} has no alu stage", tile_stmt.tile);
      alu->body.push_back(acc_loop(ctx, t, proto, ctx.plan.bias_row, "bias"));
    }
  }
}

}  // namespace tessel::compiler::accel
