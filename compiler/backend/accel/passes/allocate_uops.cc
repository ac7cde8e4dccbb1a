#include "compiler/backend/accel/passes/allocate_uops.h"

#include <fmt/format.h>

#include "support/error.h"

namespace tessel::compiler::accel {

using isa::Instruction;
using isa::MemType;
using isa::Opcode;

namespace {

void allocate_stmt(Stmt& s, LoweringContext& ctx, std::vector<int64_t>& resident, int64_t& cursor) {
  const int64_t depth = ctx.cfg.uop_depth();
  std::vector<Stmt> out;
  for (Stmt& c : s.body) {
    if (c.kind == StmtKind::kInsn && c.kernel >= 0) {
      const size_t k = static_cast<size_t>(c.kernel);
      const int64_t len = static_cast<int64_t>(ctx.kernels[k].size());
      if (len > depth) {
        throw_user_error("layer '{}': a micro-op kernel of {} uops exceeds the uop buffer depth {}",
                         ctx.layer, len, depth);
      }
      if (resident[k] < 0) {
        if (cursor + len > depth) cursor = 0;
        for (int64_t& r : resident) {  // evict kernels overlapping [cursor, cursor + len)
          if (r >= 0) {
            const int64_t other_len =
                static_cast<int64_t>(ctx.kernels[&r - resident.data()].size());
            if (r < cursor + len && cursor < r + other_len) r = -1;
          }
        }
        Instruction in = isa::make_mem(
            Opcode::kLoad, MemType::kUop, to_u32(cursor, "sram"),
            to_u32(static_cast<int64_t>(ctx.uop_base) + ctx.kernel_dram_offset[k], "dram_base"), 1,
            to_u32(len, "x_size"), to_u32(len, "x_stride"));
        out.push_back(make_insn(in, fmt::format("uop kernel {}", k), c.vthread));
        resident[k] = cursor;
        cursor += len;
      }
      c.insn.uop_bgn = to_u32(resident[k], "uop_bgn");
      c.insn.uop_end = to_u32(resident[k] + len, "uop_end");
      out.push_back(std::move(c));
    } else {
      allocate_stmt(c, ctx, resident, cursor);
      out.push_back(std::move(c));
    }
  }
  s.body = std::move(out);
}

}  // namespace

void allocate_uops(Stmt& root, LoweringContext& ctx) {
  ctx.uop_table.clear();
  ctx.kernel_dram_offset.clear();
  for (const auto& k : ctx.kernels) {
    ctx.kernel_dram_offset.push_back(static_cast<int64_t>(ctx.uop_table.size()));
    ctx.uop_table.insert(ctx.uop_table.end(), k.begin(), k.end());
  }
  std::vector<int64_t> resident(ctx.kernels.size(), -1);
  int64_t cursor = 0;
  const int64_t total = static_cast<int64_t>(ctx.uop_table.size());
  if (total > 0 && total <= ctx.cfg.uop_depth()) {
    // every kernel fits: one LOAD UOP of the whole table before anything else
    Instruction in = isa::make_mem(Opcode::kLoad, MemType::kUop, 0,
                                   to_u32(static_cast<int64_t>(ctx.uop_base), "dram_base"), 1,
                                   to_u32(total, "x_size"), to_u32(total, "x_stride"));
    root.body.insert(root.body.begin(),
                     make_seq("uop table", {make_insn(in, "all micro-op kernels", 0)}));
    for (size_t k = 0; k < resident.size(); ++k) resident[k] = ctx.kernel_dram_offset[k];
    cursor = total;
  }
  allocate_stmt(root, ctx, resident, cursor);
}

}  // namespace tessel::compiler::accel
