// The accelerator backend's loop IR (TIR-like): a tree of statements over buffers with scopes
// (dram, inp, wgt, acc, uop), loops over affine micro-op bodies, and intrinsic calls (DMA copies,
// GEMM, ALU) that end as one instruction each. The schedule builds the initial tree (one `tile`
// statement per output tile, holding a `compute` statement); the passes of passes.h rewrite it
// until every leaf is an instruction, and print_ir() renders it as text after any pass.
//
// Tile loops are unrolled by the schedule (each output tile is its own statement) because border
// tiles differ in their DMA padding and extents; the loops inside a tile (output rows and columns
// around a GEMM/ALU micro-op body) stay loops until fold_uop_loops turns them into the
// iter_out/iter_in loop nest of one instruction.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "isa/config.h"
#include "isa/instruction.h"

namespace tessel::compiler::accel {

/// Memory scopes of the loop IR. kAcc also names OUT, which shares the ACC index space.
enum class Scope : uint8_t { kDram = 0, kInp = 1, kWgt = 2, kAcc = 3, kUop = 4 };
std::string_view to_string(Scope s);

/// An affine index: base + sum of coefficient * loop variable (variables named by their loop).
struct Affine {
  int64_t base = 0;
  std::vector<std::pair<std::string, int64_t>> terms;  ///< (loop variable, coefficient)
  /// The coefficient of `var`, 0 when absent.
  int64_t coef(const std::string& var) const;
  /// Text form, e.g. "12 + 14*y + 1*x".
  std::string str() const;
};

/// One micro-op body statement before folding: dst (ACC row), src (INP row for GEMM, ACC row for
/// ALU) and wgt (WGT row) as affine functions of the enclosing loops.
struct UopExpr {
  Affine dst, src, wgt;
};

/// Statement kinds.
enum class StmtKind : uint8_t {
  kSeq = 0,      ///< ordered children; `name` is a label ("stage load0", "program", ...)
  kTile = 1,     ///< one output tile (index `tile` into the schedule's tiles), children = its body
  kCompute = 2,  ///< the conv of tile `tile`, input-channel chunk `chunk` (before tensorize)
  kFor = 3,      ///< serial loop `name` in [0, extent), children = body
  kUopBody = 4,  ///< GEMM/ALU micro-op body (`uops`), inside kFor loops until folded
  kInsn = 5,     ///< one instruction (`insn`); GEMM/ALU reference micro-op kernel `kernel`
};

/// A statement. Fields not used by its kind stay at their defaults.
struct Stmt {
  StmtKind kind = StmtKind::kSeq;
  std::string name;    ///< label, loop variable or intrinsic comment
  int64_t extent = 0;  ///< kFor
  std::vector<Stmt> body;
  int64_t tile = -1;  ///< kTile/kCompute: index into Schedule::tiles
  int chunk = -1;     ///< kCompute: input-channel chunk
  int vthread = 0;    ///< virtual thread owning the statement (SRAM half)
  /// kInsn: the instruction (LOAD/STORE fields, or GEMM/ALU flags and loop nest). Before
  /// inject_virtual_threads, SRAM indices are relative to the virtual thread's region.
  /// kUopBody: opcode, reset, alu_op, use_imm and imm of the future instruction.
  isa::Instruction insn;
  std::vector<UopExpr> uops;  ///< kUopBody
  int kernel = -1;            ///< kInsn GEMM/ALU: micro-op kernel id (LoweringContext::kernels)
};

/// Builders.
Stmt make_seq(std::string label, std::vector<Stmt> body = {});
Stmt make_for(std::string var, int64_t extent, std::vector<Stmt> body);
Stmt make_insn(const isa::Instruction& insn, std::string comment, int vthread);

/// Renders `root` as indented text (two spaces per level), deterministic. `kernels` (may be
/// empty) are listed after the tree as "kernel K: [dst src wgt] ...".
std::string print_ir(const Stmt& root, const std::vector<std::vector<isa::Uop>>& kernels);

/// One-line text of an instruction in the IR dump (opcode, memory type, fields, token flags).
std::string insn_text(const isa::Instruction& insn);

/// Calls `fn(stmt)` for every kInsn leaf in program order (depth-first, children in order).
template <typename Fn>
void for_each_insn(Stmt& s, Fn&& fn) {
  if (s.kind == StmtKind::kInsn) {
    fn(s);
    return;
  }
  for (Stmt& c : s.body) for_each_insn(c, fn);
}
template <typename Fn>
void for_each_insn(const Stmt& s, Fn&& fn) {
  if (s.kind == StmtKind::kInsn) {
    fn(s);
    return;
  }
  for (const Stmt& c : s.body) for_each_insn(c, fn);
}

}  // namespace tessel::compiler::accel
