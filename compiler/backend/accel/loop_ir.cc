#include "compiler/backend/accel/loop_ir.h"

#include <fmt/format.h>

namespace tessel::compiler::accel {

std::string_view to_string(Scope s) {
  switch (s) {
    case Scope::kDram:
      return "dram";
    case Scope::kInp:
      return "inp";
    case Scope::kWgt:
      return "wgt";
    case Scope::kAcc:
      return "acc";
    case Scope::kUop:
      return "uop";
  }
  return "?";
}

int64_t Affine::coef(const std::string& var) const {
  for (const auto& [v, c] : terms) {
    if (v == var) return c;
  }
  return 0;
}

std::string Affine::str() const {
  std::string s = fmt::format("{}", base);
  for (const auto& [v, c] : terms) {
    if (c != 0) s += fmt::format(" + {}*{}", c, v);
  }
  return s;
}

Stmt make_seq(std::string label, std::vector<Stmt> body) {
  Stmt s;
  s.kind = StmtKind::kSeq;
  s.name = std::move(label);
  s.body = std::move(body);
  return s;
}

Stmt make_for(std::string var, int64_t extent, std::vector<Stmt> body) {
  Stmt s;
  s.kind = StmtKind::kFor;
  s.name = std::move(var);
  s.extent = extent;
  s.body = std::move(body);
  return s;
}

Stmt make_insn(const isa::Instruction& insn, std::string comment, int vthread) {
  Stmt s;
  s.kind = StmtKind::kInsn;
  s.insn = insn;
  s.name = std::move(comment);
  s.vthread = vthread;
  return s;
}

namespace {

std::string dep_text(const isa::DepFlags& d) {
  std::string s;
  if (d.pop_prev) s += " pop_prev";
  if (d.pop_next) s += " pop_next";
  if (d.push_prev) s += " push_prev";
  if (d.push_next) s += " push_next";
  return s;
}

void print_stmt(const Stmt& s, int depth, std::string& out) {
  const std::string ind(static_cast<size_t>(depth) * 2, ' ');
  switch (s.kind) {
    case StmtKind::kSeq:
      out += fmt::format("{}seq {}\n", ind, s.name);
      break;
    case StmtKind::kTile:
      out += fmt::format("{}tile {} vthread={} {}\n", ind, s.tile, s.vthread, s.name);
      break;
    case StmtKind::kCompute:
      out += fmt::format("{}compute {} chunk={} vthread={} {}\n", ind, s.tile, s.chunk, s.vthread,
                         s.name);
      break;
    case StmtKind::kFor:
      out += fmt::format("{}for {} in [0, {})\n", ind, s.name, s.extent);
      break;
    case StmtKind::kUopBody: {
      std::string what;
      if (s.insn.opcode == isa::Opcode::kGemm) {
        what = s.insn.reset ? "gemm.reset" : "gemm";
      } else {
        what = fmt::format("alu.{}{}", isa::to_string(s.insn.alu_op),
                           s.insn.use_imm ? fmt::format(" imm={}", s.insn.imm) : std::string());
      }
      out += fmt::format("{}{} vthread={} {}\n", ind, what, s.vthread, s.name);
      for (const UopExpr& u : s.uops) {
        if (s.insn.opcode == isa::Opcode::kGemm && !s.insn.reset) {
          out += fmt::format("{}  acc[{}] += inp[{}] * wgt[{}]\n", ind, u.dst.str(), u.src.str(),
                             u.wgt.str());
        } else if (s.insn.opcode == isa::Opcode::kGemm) {
          out += fmt::format("{}  acc[{}] = 0\n", ind, u.dst.str());
        } else if (s.insn.use_imm) {
          out += fmt::format("{}  acc[{}] op= imm\n", ind, u.dst.str());
        } else {
          out += fmt::format("{}  acc[{}] op= acc[{}]\n", ind, u.dst.str(), u.src.str());
        }
      }
      return;
    }
    case StmtKind::kInsn:
      out += fmt::format("{}{}", ind, insn_text(s.insn));
      if (s.kernel >= 0) out += fmt::format(" kernel={}", s.kernel);
      out += fmt::format(" vthread={}", s.vthread);
      if (!s.name.empty()) out += fmt::format("  // {}", s.name);
      out += "\n";
      return;
  }
  for (const Stmt& c : s.body) print_stmt(c, depth + 1, out);
}

}  // namespace

std::string insn_text(const isa::Instruction& i) {
  using isa::Opcode;
  std::string s;
  switch (i.opcode) {
    case Opcode::kLoad:
    case Opcode::kStore:
      s = fmt::format("{} {} sram={} dram={} y={} x={} stride={} pad=({},{},{},{})",
                      i.opcode == Opcode::kLoad ? "load" : "store", isa::to_string(i.mem_type),
                      i.sram_base, i.dram_base, i.y_size, i.x_size, i.x_stride, i.y_pad_0,
                      i.y_pad_1, i.x_pad_0, i.x_pad_1);
      break;
    case Opcode::kGemm:
    case Opcode::kAlu:
      if (i.opcode == Opcode::kGemm) {
        s = i.reset ? "gemm.reset" : "gemm";
      } else {
        s = fmt::format("alu.{}", isa::to_string(i.alu_op));
        if (i.use_imm) s += fmt::format(" imm={}", i.imm);
      }
      s += fmt::format(" uop=[{},{}) iter=({},{}) dst=({},{}) src=({},{})", i.uop_bgn, i.uop_end,
                       i.iter_out, i.iter_in, i.dst_factor_out, i.dst_factor_in, i.src_factor_out,
                       i.src_factor_in);
      if (i.opcode == Opcode::kGemm) {
        s += fmt::format(" wgt=({},{})", i.wgt_factor_out, i.wgt_factor_in);
      }
      break;
    case Opcode::kFinish:
      s = "finish";
      break;
  }
  return s + dep_text(i.dep);
}

std::string print_ir(const Stmt& root, const std::vector<std::vector<isa::Uop>>& kernels) {
  std::string out;
  print_stmt(root, 0, out);
  for (size_t k = 0; k < kernels.size(); ++k) {
    out += fmt::format("kernel {}:", k);
    for (const isa::Uop& u : kernels[k]) out += fmt::format(" [{} {} {}]", u.dst, u.src, u.wgt);
    out += "\n";
  }
  return out;
}

}  // namespace tessel::compiler::accel
