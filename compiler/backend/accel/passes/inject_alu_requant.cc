#include "compiler/backend/accel/passes/inject_alu_requant.h"

#include <fmt/format.h>

#include "support/error.h"

namespace tessel::compiler::accel {

using isa::Instruction;
using isa::Opcode;

void inject_alu_requant(Stmt& root, LoweringContext& ctx) {
  for (Stmt& tile_stmt : root.body) {
    const Tile& t = ctx.sched.tiles[static_cast<size_t>(tile_stmt.tile)];
    Stmt* alu = find_stage(tile_stmt, "alu");
    TESSEL_CHECK(alu != nullptr, "tile {} has no alu stage", tile_stmt.tile);
    for (const AluStep& step : ctx.plan.requant) {
      Instruction proto;
      proto.opcode = Opcode::kAlu;
      proto.alu_op = step.op;
      proto.use_imm = step.use_imm;
      proto.imm = step.use_imm ? step.imm : 0;
      alu->body.push_back(acc_loop(ctx, t, proto, step.use_imm ? -1 : step.const_row, step.what, step.dst_region,
                                   step.use_imm ? -1 : step.src_region));
    }
  }
}

}  // namespace tessel::compiler::accel
