#include "compiler/backend/accel/passes/allocate_uops.h"

#include <fmt/format.h>

#include "compiler/backend/accel/uop_table.h"

namespace tessel::compiler::accel {

namespace {

void allocate_stmt(Stmt& s, UopPlacer& placer) {
  std::vector<Stmt> out;
  for (Stmt& c : s.body) {
    if (c.kind == StmtKind::kInsn && c.kernel >= 0) {
      if (std::optional<isa::Instruction> load = placer.place(c.kernel, c.insn)) {
        out.push_back(make_insn(*load, fmt::format("uop kernel {}", c.kernel), c.vthread));
      }
      out.push_back(std::move(c));
    } else {
      allocate_stmt(c, placer);
      out.push_back(std::move(c));
    }
  }
  s.body = std::move(out);
}

}  // namespace

void allocate_uops(Stmt& root, LoweringContext& ctx) {
  UopPlacer placer(ctx.cfg, ctx.kernels, ctx.uop_base, fmt::format("layer '{}'", ctx.layer));
  ctx.uop_table = placer.table();
  ctx.kernel_dram_offset = placer.table_offsets();
  if (placer.initial_load()) {
    root.body.insert(root.body.begin(), make_seq("uop table", {make_insn(*placer.initial_load(), "all micro-op kernels", 0)}));
  }
  allocate_stmt(root, placer);
}

}  // namespace tessel::compiler::accel
