#include "compiler/backend/accel/passes/inject_virtual_threads.h"

#include <fmt/format.h>

#include <algorithm>

#include "support/error.h"

namespace tessel::compiler::accel {

using isa::Instruction;
using isa::MemType;
using isa::Opcode;

void inject_virtual_threads(Stmt& root, LoweringContext& ctx) {
  const Schedule& s = ctx.sched;
  const std::vector<std::vector<isa::Uop>> old = ctx.kernels;
  ctx.clear_kernels();
  // 1. thread-relative SRAM indices -> absolute
  for_each_insn(root, [&](Stmt& st) {
    const int64_t t = st.vthread;
    Instruction& in = st.insn;
    switch (in.opcode) {
      case Opcode::kLoad:
        if (in.mem_type == MemType::kInp)
          in.sram_base = to_u32(in.sram_base + t * s.inp_region, "sram");
        if (in.mem_type == MemType::kWgt)
          in.sram_base = to_u32(in.sram_base + t * s.wgt_region, "sram");
        if (in.mem_type == MemType::kAcc || in.mem_type == MemType::kAcc8) {
          in.sram_base = to_u32(in.sram_base + t * s.acc_region, "sram");
        }
        break;
      case Opcode::kStore:
        in.sram_base = to_u32(in.sram_base + t * s.acc_region, "sram");
        break;
      case Opcode::kGemm:
      case Opcode::kAlu: {
        std::vector<isa::Uop> k = old[static_cast<size_t>(st.kernel)];
        const bool alu = in.opcode == Opcode::kAlu;
        for (isa::Uop& u : k) {
          u.dst = to_u32(u.dst + t * s.acc_region, "uop dst");
          if (alu) {
            if (!in.use_imm) u.src = to_u32(u.src + t * s.acc_region, "uop src");
          } else if (!in.reset) {
            u.src = to_u32(u.src + t * s.inp_region, "uop src");
            u.wgt = to_u32(u.wgt + t * s.wgt_region, "uop wgt");
          }
        }
        st.kernel = ctx.intern_kernel(k);
        break;
      }
      case Opcode::kFinish:
        break;
    }
  });
  // 2. interleave the stages of each group of virtual_threads consecutive tiles
  std::vector<Stmt> groups;
  const size_t vt = static_cast<size_t>(s.virtual_threads);
  for (size_t g0 = 0; g0 < root.body.size(); g0 += vt) {
    const size_t g1 = std::min(root.body.size(), g0 + vt);
    Stmt group = make_seq(fmt::format("vthread group {}", g0 / vt));
    size_t n_stages = 0;
    for (size_t i = g0; i < g1; ++i) n_stages = std::max(n_stages, root.body[i].body.size());
    for (size_t st = 0; st < n_stages; ++st) {
      for (size_t i = g0; i < g1; ++i) {
        Stmt& tile = root.body[i];
        if (st >= tile.body.size()) continue;
        Stmt& stage = tile.body[st];
        if (stage.body.empty()) continue;
        stage.name = fmt::format("tile {} vthread {} {}", tile.tile, tile.vthread, stage.name);
        stage.vthread = tile.vthread;
        group.body.push_back(std::move(stage));
      }
    }
    groups.push_back(std::move(group));
  }
  root.body = std::move(groups);
}

}  // namespace tessel::compiler::accel
