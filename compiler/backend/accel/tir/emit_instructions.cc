#include "compiler/backend/accel/tir/emit_instructions.h"

#include <fmt/format.h>

#include <array>
#include <cstring>
#include <map>
#include <optional>
#include <string>

#include "compiler/backend/accel/dep_tokens.h"
#include "compiler/backend/accel/uop_table.h"
#include "compiler/backend/accel/tir/common.h"
#include "compiler/target/accel_intrin.h"
#include "compiler/tir/arith/analyzer.h"
#include "compiler/tir/functor.h"
#include "compiler/tir/printer.h"
#include "compiler/tir/util.h"
#include "isa/spec.h"
#include "isa/verifier.h"
#include "support/error.h"

namespace tessel::compiler::accel_tir {

namespace ta = target::accel;
using isa::Instruction;
using isa::MemType;
using isa::Module;
using isa::Opcode;
using tir::Expr;
using tir::Stmt;

namespace {

/// A global buffer in the image.
struct DramPlacement {
  tir::Buffer buffer;
  const SegmentSpec* spec = nullptr;
  uint64_t first_elem = 0;  ///< image-relative, in elements of spec->mem_type
  int64_t elems = 0;        ///< elements of spec->mem_type the buffer holds
};

bool has_dep_calls(const Stmt& s) {
  bool found = false;
  tir::post_order_visit(s, [&](const Expr& e) {
    if (const auto* c = e.as<tir::CallNode>(); c && (c->op == ta::kDepPush || c->op == ta::kDepPop)) {
      found = true;
    }
  });
  return found;
}

std::string_view module_name(Module m) {
  return isa::to_string(m);
}

/// One emitted instruction; a GEMM/ALU names its micro-op kernel (UopKernelTable id).
struct Leaf {
  Instruction insn;
  int kernel = -1;
};

class Emitter {
 public:
  Emitter(const isa::HwConfig& cfg, std::map<const tir::VarNode*, SramPlacement> sram,
          std::map<const tir::VarNode*, DramPlacement> dram,
          std::map<const tir::VarNode*, tir::Buffer> buffers)
      : cfg_(cfg), sram_(std::move(sram)), dram_(std::move(dram)), buffers_(std::move(buffers)) {
    last_.fill(-1);
  }

  accel::UopKernelTable kernels;
  std::vector<Leaf> leaves;

  void run(const Stmt& s) {
    visit(s);
    for (int m = 0; m < 3; ++m) {
      if (pending_[static_cast<size_t>(m)] != isa::DepFlags{}) flush_noop(static_cast<Module>(m));
    }
  }

 private:
  int64_t eval(const Expr& e, const std::string& what) {
    // the loops' values straight in int64 (an expression of unrolled loop variables, evaluated
    // per iteration: building and simplifying the substituted expression was most of the pass);
    // anything eval_int does not take goes the general way, for its value or its error
    if (const std::optional<int64_t> fast = tir::arith::eval_int(e, ienv_)) return *fast;
    Expr v = env_.empty() ? e : tir::substitute(e, env_);
    const std::optional<int64_t> c = tir::arith::as_const(v);
    if (!c) throw_user_error("{} {} is not a constant after unrolling the loops", what, tir::to_text(e));
    return *c;
  }
  uint32_t field(const Expr& e, const std::string& what) {
    const int64_t v = eval(e, what);
    if (v < 0 || v > int64_t{UINT32_MAX})
      throw_user_error("{} {} = {} does not fit an instruction field", what, tir::to_text(e), v);
    return static_cast<uint32_t>(v);
  }
  std::string buffer_name(const tir::VarNode* data) const {
    auto it = buffers_.find(data);
    return it != buffers_.end() ? it->second->name : data->name;
  }

  void push_leaf(Leaf leaf) {
    const Module m = leaf.insn.module();
    isa::DepFlags& p = pending_[static_cast<size_t>(m)];
    leaf.insn.dep.pop_prev = leaf.insn.dep.pop_prev || p.pop_prev;
    leaf.insn.dep.pop_next = leaf.insn.dep.pop_next || p.pop_next;
    p = {};
    last_[static_cast<size_t>(m)] = static_cast<int64_t>(leaves.size());
    leaves.push_back(std::move(leaf));
  }
  void flush_noop(Module m) { push_leaf({isa::make_noop(m, {})}); }

  void check_scope(const Instruction& in, const std::string& what) {
    if (!scope_) throw_user_error("{} is outside every {}", what, ta::kCoprocScope);
    if (*scope_ != in.module()) {
      throw_user_error("{} runs on the {} module but sits in {} {} ({})", what, module_name(in.module()),
                       ta::kCoprocScope, static_cast<int>(*scope_) + 1, module_name(*scope_));
    }
  }

  Module module_arg(const Expr& e, const tir::CallNode* call) {
    const int64_t v = eval(e, fmt::format("module of {}", call->op));
    if (v < 1 || v > 3)
      throw_user_error("{}: module {} is not 1 (load), 2 (compute) or 3 (store)", call->op, v);
    return static_cast<Module>(v - 1);
  }

  void dep(const tir::CallNode* call, bool push) {
    TESSEL_CHECK(call->args.size() == 2, "{} with {} arguments", call->op, call->args.size());
    const Module from = module_arg(call->args[0], call), to = module_arg(call->args[1], call);
    const int d = static_cast<int>(to) - static_cast<int>(from);
    if (d != 1 && d != -1) {
      throw_user_error("{}({}, {}): there is no token queue from {} to {}", call->op,
                       static_cast<int>(from) + 1, static_cast<int>(to) + 1, module_name(from),
                       module_name(to));
    }
    if (push) {
      const size_t m = static_cast<size_t>(from);
      const bool next = d == 1;
      auto flag_of = [&](isa::DepFlags& f) -> bool& { return next ? f.push_next : f.push_prev; };
      // a pending pop comes first in the text: the push must follow it
      if (pending_[m] != isa::DepFlags{} || last_[m] < 0 ||
          flag_of(leaves[static_cast<size_t>(last_[m])].insn.dep)) {
        flush_noop(from);
      }
      flag_of(leaves[static_cast<size_t>(last_[m])].insn.dep) = true;
    } else {
      const size_t m = static_cast<size_t>(to);
      const bool prev = d == 1;  // the token comes from the previous module
      bool& flag = prev ? pending_[m].pop_prev : pending_[m].pop_next;
      if (flag) flush_noop(to);
      (prev ? pending_[m].pop_prev : pending_[m].pop_next) = true;
    }
  }

  const SramPlacement& sram_of(const AccessPtr& ap, const tir::CallNode* call) {
    auto it = sram_.find(ap.data);
    if (it == sram_.end()) {
      throw_user_error("{}: buffer '{}' is not an allocated scratchpad", call->op, buffer_name(ap.data));
    }
    return it->second;
  }
  const DramPlacement& dram_of(const AccessPtr& ap, const tir::CallNode* call) {
    auto it = dram_.find(ap.data);
    if (it == dram_.end()) {
      throw_user_error("{}: buffer '{}' is not a buffer parameter with a segment", call->op,
                       buffer_name(ap.data));
    }
    return it->second;
  }

  void dma(const tir::CallNode* call, bool load) {
    const size_t n = load ? 10 : 5;
    TESSEL_CHECK(call->args.size() == n, "{} with {} arguments", call->op, call->args.size());
    const size_t a0 = load ? 1 : 0;
    const std::optional<AccessPtr> sp = as_access_ptr(call->args[a0]);
    const std::optional<AccessPtr> dp = as_access_ptr(call->args[a0 + 1]);
    if (!sp || !dp)
      throw_user_error("{}: the scratchpad and dram operands must be tir.access_ptr calls", call->op);
    MemType type = MemType::kOut;
    if (load) {
      const int64_t t = eval(call->args[0], "memory type of accel.dma_load");
      if (t < 0 || t > 5 || t == static_cast<int64_t>(MemType::kOut)) {
        throw_user_error("accel.dma_load: memory type {} cannot be loaded", t);
      }
      type = static_cast<MemType>(t);
    }
    const SramPlacement& s = sram_of(*sp, call);
    const DramPlacement& d = dram_of(*dp, call);
    const tir::MemScope want = type == MemType::kInp   ? tir::MemScope::kInp
                               : type == MemType::kWgt ? tir::MemScope::kWgt
                               : type == MemType::kUop ? tir::MemScope::kUop
                                                       : tir::MemScope::kAcc;
    if (s.buffer->scope != want) {
      throw_user_error("{} of {}: buffer '{}' has scope {}, expected {}", call->op, isa::to_string(type),
                       s.buffer->name, tir::to_string(s.buffer->scope), tir::to_string(want));
    }
    if (d.spec->mem_type != type) {
      throw_user_error("{} of {}: buffer '{}' is placed as {} elements (SegmentSpec), not {}", call->op,
                       isa::to_string(type), d.buffer->name, isa::to_string(d.spec->mem_type),
                       isa::to_string(type));
    }
    const uint32_t y = field(call->args[a0 + 2], "y_size"), x = field(call->args[a0 + 3], "x_size");
    const uint32_t stride = field(call->args[a0 + 4], "x_stride");
    std::array<uint32_t, 4> pad{};
    if (load) {
      const char* names[4] = {"y_pad_0", "y_pad_1", "x_pad_0", "x_pad_1"};
      for (size_t k = 0; k < 4; ++k) pad[k] = field(call->args[6 + k], names[k]);
    }
    // access_ptr offsets count elements of the buffers' dtypes: scratchpad rows, DRAM elements
    // of the memory type
    auto units = [&](const AccessPtr& ap, int64_t per, const tir::Buffer& buf, const char* role, std::string_view unit) {
      const int64_t e = eval(ap.offset, fmt::format("{} offset of {}", role, call->op));
      if (e % per != 0) {
        throw_user_error("{}: {} offset {} into buffer '{}' is not a whole {} ({} elements of {})", call->op, role, e,
                         buf->name, unit, per, buf->dtype.str());
      }
      return e / per;
    };
    const int64_t so = units(*sp, ta::row_elems(cfg_, s.buffer), s.buffer, "scratchpad", "row");
    const int64_t dof = units(*dp, ta::dram_unit_elems(cfg_, type, d.buffer), d.buffer, "dram",
                              isa::to_string(type));
    if (load && x == 0 && (pad[0] || pad[1] || pad[2] || pad[3])) {
      // x_size 0 makes a LOAD a no-op (isa/timing.h): its pads would not be written, and the
      // scratchpad would keep stale values where zeros belong
      throw_user_error("{}: a load of no columns (x_size 0) with pads {},{},{},{} writes no zeros: a rectangle wholly "
                       "in the column padding cannot be one LOAD",
                       call->op, pad[0], pad[1], pad[2], pad[3]);
    }
    const int64_t rect = (int64_t{y} + pad[0] + pad[1]) * (int64_t{x} + pad[2] + pad[3]);
    if (so < 0 || so + rect > s.rows) {
      throw_user_error("{}: rows [{}, {}) leave buffer '{}' of {} rows", call->op, so, so + rect,
                       s.buffer->name, s.rows);
    }
    if (y > 0 && x > 0) {
      const int64_t last = dof + int64_t{y - 1} * stride + x;
      if (dof < 0 || last > d.elems) {
        throw_user_error("{}: elements [{}, {}) leave buffer '{}' of {} {} elements", call->op, dof, last,
                         d.buffer->name, d.elems, isa::to_string(type));
      }
    }
    const Instruction in =
        isa::make_mem(load ? Opcode::kLoad : Opcode::kStore, type, static_cast<uint32_t>(s.row + so),
                      static_cast<uint32_t>(d.first_elem + static_cast<uint64_t>(dof)), y, x, stride, pad[0],
                      pad[1], pad[2], pad[3]);
    check_scope(in, fmt::format("{} of {}", call->op, isa::to_string(type)));
    push_leaf({in});
  }

  void kernel(const tir::AttrStmtNode* op) {
    const bool gemm = tir::is_const_int(op->value, 0);
    const auto* seq = op->body.as<tir::SeqStmtNode>();
    TESSEL_CHECK(seq && seq->seq.size() >= 3, "{} not folded (run fold_uop_loops first)", ta::kUopKernel);
    std::array<std::array<uint32_t, 4>, 2> lv{};
    for (size_t l = 0; l < 2; ++l) {
      const tir::CallNode* c = evaluated_call(seq->seq[l]);
      TESSEL_CHECK(c && c->op == ta::kUopLoop && c->args.size() == 4,
                   "{} not folded (run fold_uop_loops first)", ta::kUopKernel);
      for (size_t k = 0; k < 4; ++k) lv[l][k] = field(c->args[k], "accel.uop_loop argument");
    }
    std::vector<isa::Uop> uops;
    Instruction proto;
    for (size_t i = 2; i < seq->seq.size(); ++i) {
      const tir::CallNode* c = evaluated_call(seq->seq[i]);
      TESSEL_CHECK(c && c->op == (gemm ? ta::kGemmUop : ta::kAluUop), "{} not folded", ta::kUopKernel);
      Instruction in;
      isa::Uop u;
      if (gemm) {
        const bool reset = eval(c->args[0], "reset of accel.gemm_uop") != 0;
        in = isa::make_gemm(0, 0, lv[0][0], lv[1][0], lv[0][1], lv[1][1], lv[0][2], lv[1][2], lv[0][3],
                            lv[1][3], reset);
        u = {field(c->args[1], "dst index of accel.gemm_uop"),
             field(c->args[2], "src index of accel.gemm_uop"),
             field(c->args[3], "wgt index of accel.gemm_uop")};
      } else {
        const int64_t op_v = eval(c->args[0], "ALU op of accel.alu_uop");
        if (op_v < 0 || op_v > 4)
          throw_user_error("accel.alu_uop: ALU op {} is not MIN, MAX, ADD, SHR or MUL", op_v);
        in = isa::make_alu(static_cast<isa::AluOp>(op_v), 0, 0, lv[0][0], lv[1][0], lv[0][1], lv[1][1],
                           lv[0][2], lv[1][2], eval(c->args[1], "use_imm of accel.alu_uop") != 0,
                           static_cast<int32_t>(eval(c->args[2], "imm of accel.alu_uop")));
        u = {field(c->args[3], "dst index of accel.alu_uop"), field(c->args[4], "src index of accel.alu_uop"),
             0};
      }
      if (i == 2) {
        proto = in;
      } else if (!(proto == in)) {
        throw_user_error("the micro-ops of one {} disagree on {} (one instruction has one)", ta::kUopKernel,
                         gemm ? "reset" : "the ALU op and immediate");
      }
      uops.push_back(u);
    }
    check_scope(proto, gemm ? "a GEMM micro-op kernel" : "an ALU micro-op kernel");
    push_leaf({proto, kernels.intern(uops)});
  }

  void visit(const Stmt& s) {
    switch (s.kind()) {
      case tir::StmtKind::kSeqStmt:
        for (const Stmt& c : s.as<tir::SeqStmtNode>()->seq) visit(c);
        return;
      case tir::StmtKind::kFor: {
        const auto* op = s.as<tir::ForNode>();
        const std::string name = op->loop_var.name();
        if (op->kind != tir::ForKind::kSerial && op->kind != tir::ForKind::kUnrolled) {
          throw_user_error("loop '{}' is {}: emit_instructions unrolls serial and unrolled loops only", name,
                           tir::to_string(op->kind));
        }
        std::optional<int64_t> m = tir::arith::eval_int(op->min, ienv_), e = tir::arith::eval_int(op->extent, ienv_);
        if (!m) m = tir::arith::as_const(env_.empty() ? op->min : tir::substitute(op->min, env_));
        if (!e) e = tir::arith::as_const(env_.empty() ? op->extent : tir::substitute(op->extent, env_));
        if (!m || !e) {
          throw_user_error(
              "loop '{}' has a non-constant range [{}, {} + {}): emit_instructions unrolls every loop "
              "around accelerator statements",
              name, tir::to_text(op->min), tir::to_text(op->min), tir::to_text(op->extent));
        }
        for (int64_t i = 0; i < *e; ++i) {
          env_[op->loop_var] = tir::int_imm(*m + i, op->loop_var.dtype());
          ienv_[op->loop_var.get()] = *m + i;
          visit(op->body);
        }
        env_.erase(op->loop_var);
        ienv_.erase(op->loop_var.get());
        return;
      }
      case tir::StmtKind::kLetStmt: {
        const auto* op = s.as<tir::LetStmtNode>();
        const int64_t v = eval(op->value, fmt::format("value of let {}", op->var.name()));
        env_[op->var] = tir::int_imm(v, op->var.dtype());
        ienv_[op->var.get()] = v;
        visit(op->body);
        env_.erase(op->var);
        ienv_.erase(op->var.get());
        return;
      }
      case tir::StmtKind::kIfThenElse: {
        const auto* op = s.as<tir::IfThenElseNode>();
        if (eval(op->cond, "condition") != 0) {
          visit(op->then_case);
        } else if (op->else_case.defined()) {
          visit(op->else_case);
        }
        return;
      }
      case tir::StmtKind::kAllocate:
        visit(s.as<tir::AllocateNode>()->body);
        return;
      case tir::StmtKind::kAttrStmt: {
        const auto* op = s.as<tir::AttrStmtNode>();
        if (op->key == ta::kCoprocScope) {
          const int64_t v = eval(op->value, std::string(ta::kCoprocScope));
          if (v < 1 || v > 3)
            throw_user_error("{} {} is not 1 (load), 2 (compute) or 3 (store)", ta::kCoprocScope, v);
          const std::optional<Module> saved = scope_;
          scope_ = static_cast<Module>(v - 1);
          visit(op->body);
          scope_ = saved;
        } else if (op->key == ta::kUopKernel) {
          kernel(op);
        } else {
          visit(op->body);
        }
        return;
      }
      case tir::StmtKind::kEvaluate: {
        const tir::CallNode* c = evaluated_call(s);
        if (!c) {
          if (tir::is_no_op(s)) return;
          throw_user_error("emit_instructions cannot run {}", tir::to_text(s));
        }
        if (c->op == ta::kDmaLoad) return dma(c, true);
        if (c->op == ta::kDmaStore) return dma(c, false);
        if (c->op == ta::kDepPush) return dep(c, true);
        if (c->op == ta::kDepPop) return dep(c, false);
        if (c->op == ta::kGemmUop || c->op == ta::kAluUop || c->op == ta::kUopLoop) {
          throw_user_error("{} outside an {}", c->op, ta::kUopKernel);
        }
        throw_user_error("emit_instructions cannot run the call {}", tir::to_text(s));
      }
      default:
        throw_user_error("the accelerator cannot run this statement: {}", tir::to_text(s));
    }
  }

  const isa::HwConfig& cfg_;
  std::map<const tir::VarNode*, SramPlacement> sram_;
  std::map<const tir::VarNode*, DramPlacement> dram_;
  std::map<const tir::VarNode*, tir::Buffer> buffers_;
  std::map<tir::Var, Expr, tir::VarLess> env_;
  std::map<const tir::VarNode*, int64_t> ienv_;  ///< env_'s values as integers (eval_int)
  std::optional<Module> scope_;
  std::array<int64_t, 3> last_{};
  std::array<isa::DepFlags, 3> pending_{};
};

void put_u32(std::vector<uint8_t>& image, uint64_t at, uint32_t v) {
  for (int b = 0; b < 4; ++b) image[at + static_cast<uint64_t>(b)] = static_cast<uint8_t>(v >> (8 * b));
}

}  // namespace

isa::Program emit_instructions(const tir::PrimFunc& f, const isa::HwConfig& cfg,
                               const std::vector<SegmentSpec>& segments, bool* explicit_tokens) {
  cfg.validate();
  isa::Program prog;
  prog.config = cfg;
  prog.name = f->name;

  // ---- segments and DRAM placements of the buffer parameters ----
  std::map<std::string, const tir::Buffer*> params;
  for (const auto& [var, buf] : f->buffer_map) params[buf->name] = &buf;
  for (const SegmentSpec& s : segments) {
    if (!params.count(s.buffer)) {
      throw_user_error("segment spec of buffer '{}': function '{}' has no such buffer parameter", s.buffer,
                       f->name);
    }
  }
  std::vector<std::string> order;
  std::map<std::string, std::pair<isa::SegmentKind, uint64_t>> seg_size;
  std::map<std::string, const SegmentSpec*> spec_of;
  for (const SegmentSpec& s : segments) {
    if (spec_of.count(s.buffer)) throw_user_error("buffer '{}' has two segment specs", s.buffer);
    spec_of[s.buffer] = &s;
    const uint32_t eb = isa::dram_elem_bytes(cfg, s.mem_type);
    if (s.offset_bytes % eb != 0) {
      throw_user_error(
          "segment spec of buffer '{}': offset {} bytes is not a multiple of the {} element ({} bytes)",
          s.buffer, s.offset_bytes, isa::to_string(s.mem_type), eb);
    }
    const uint64_t end = s.offset_bytes + static_cast<uint64_t>(buffer_bytes(*params[s.buffer]));
    auto it = seg_size.find(s.segment);
    if (it == seg_size.end()) {
      order.push_back(s.segment);
      seg_size[s.segment] = {s.kind, end};
    } else {
      if (it->second.first != s.kind) {
        throw_user_error("segment '{}' is given kinds {} and {}", s.segment, isa::to_string(it->second.first),
                         isa::to_string(s.kind));
      }
      it->second.second = std::max(it->second.second, end);
    }
  }
  std::map<std::string, uint64_t> seg_offset;
  for (const std::string& name : order) {
    const size_t i = prog.add_segment(name, seg_size[name].first, seg_size[name].second);
    seg_offset[name] = prog.segments[i].offset_bytes;
  }
  std::map<const tir::VarNode*, DramPlacement> dram;
  for (const auto& [var, buf] : f->buffer_map) {
    auto it = spec_of.find(buf->name);
    if (it == spec_of.end()) {
      throw_user_error("buffer parameter '{}' of function '{}' has no segment spec", buf->name, f->name);
    }
    const SegmentSpec& s = *it->second;
    const uint32_t eb = isa::dram_elem_bytes(cfg, s.mem_type);
    DramPlacement p;
    p.buffer = buf;
    p.spec = &s;
    p.first_elem = (seg_offset[s.segment] + s.offset_bytes) / eb;
    p.elems = buffer_bytes(buf) / eb;
    dram[buf->data.get()] = p;
  }

  // ---- scratchpads ----
  std::map<const tir::VarNode*, SramPlacement> sram = sram_placements(f->body);
  int64_t uop_reserved = 0;
  for (auto& [v, p] : sram) {
    p.rows = scratchpad_rows(p.buffer, ta::scope_info(cfg, p.buffer->scope).elem_bytes);
    if (p.buffer->scope == tir::MemScope::kUop) uop_reserved = std::max(uop_reserved, p.row + p.rows);
  }

  // ---- the walk ----
  const bool explicit_mode = has_dep_calls(f->body);
  if (explicit_tokens) *explicit_tokens = explicit_mode;
  Emitter em(cfg, std::move(sram), std::move(dram), buffers_by_data(f));
  em.run(f->body);
  const uint64_t uop_base = prog.image.size() / isa::dram_elem_bytes(cfg, MemType::kUop);
  // micro-op kernels into the UOP buffer, after the rows of uop-scope buffers
  accel::UopPlacer placer(cfg, em.kernels.kernels(), uop_base, fmt::format("layer '{}'", f->name));
  std::vector<Instruction> insns;
  if (placer.initial_load()) insns.push_back(*placer.initial_load());
  for (Leaf& l : em.leaves) {
    if (l.kernel >= 0) {
      if (std::optional<Instruction> load = placer.place(l.kernel, l.insn)) insns.push_back(*load);
    }
    insns.push_back(l.insn);
  }
  if (uop_reserved > 0) {
    for (Instruction& in : insns) {
      if (in.opcode == Opcode::kLoad && in.mem_type == MemType::kUop) {
        in.sram_base += static_cast<uint32_t>(uop_reserved);
      } else if (in.opcode == Opcode::kGemm || in.opcode == Opcode::kAlu) {
        in.uop_bgn += static_cast<uint32_t>(uop_reserved);
        in.uop_end += static_cast<uint32_t>(uop_reserved);
        if (in.uop_end > static_cast<uint32_t>(cfg.uop_depth())) {
          throw_user_error(
              "function '{}': micro-op rows up to {} after the {} rows of uop-scope buffers exceed the "
              "uop buffer depth {}",
              f->name, in.uop_end, uop_reserved, cfg.uop_depth());
        }
      }
    }
  }
  if (explicit_mode) {
    insns.push_back(isa::make_finish());
  } else {
    // tokens from the SRAM regions, then the ending (no-ops and FINISH)
    accel::insert_dependency_tokens(insns, cfg, placer.table(), uop_base);
  }

  // ---- micro-ops and instructions ----
  const isa::IsaSpec spec(cfg);
  const std::vector<isa::Uop>& table = placer.table();
  const size_t s_uop =
      prog.add_segment("uop", isa::SegmentKind::kConst, table.size() * static_cast<uint64_t>(cfg.uop_elem_bytes()));
  TESSEL_CHECK(prog.segments[s_uop].offset_bytes / 4 == uop_base, "uop segment at byte {} but micro-op base {}",
               prog.segments[s_uop].offset_bytes, uop_base);
  for (size_t i = 0; i < table.size(); ++i) {
    put_u32(prog.image, prog.segments[s_uop].offset_bytes + i * 4, spec.encode_uop(table[i]));
  }
  prog.uops = table;
  prog.insns = std::move(insns);
  try {
    isa::verify(prog);
  } catch (const UserError& e) {
    throw_user_error("function '{}': the emitted stream fails the verifier: {}", f->name, e.what());
  }
  return prog;
}

}  // namespace tessel::compiler::accel_tir
