#include "compiler/backend/accel/tir/fold_uop_loops.h"

#include <fmt/format.h>

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/backend/accel/tir/common.h"
#include "compiler/target/accel_intrin.h"
#include "compiler/tir/arith/analyzer.h"
#include "compiler/tir/functor.h"
#include "compiler/tir/printer.h"
#include "compiler/tir/util.h"
#include "support/error.h"

namespace tessel::compiler::accel_tir {

namespace ta = target::accel;
using tir::Expr;
using tir::Stmt;

namespace {

/// The constant (min, extent) of a loop around micro-ops; UserError naming the loop otherwise.
std::pair<int64_t, int64_t> const_range(const tir::ForNode* loop) {
  const std::optional<int64_t> mn = tir::arith::as_const(loop->min);
  const std::optional<int64_t> ext = tir::arith::as_const(loop->extent);
  if (!mn || !ext) {
    throw_user_error("uop loop '{}' cannot fold: its range [{}, {} + {}) is not constant", loop->loop_var.name(),
                     tir::to_text(loop->min), tir::to_text(loop->min), tir::to_text(loop->extent));
  }
  return {*mn, *ext};
}

/// One micro-op call of a kernel, its indices resolved to scratchpad rows.
struct UopCall {
  Stmt stmt;  ///< keeps `call` alive (unrolled loops make new statements)
  const tir::CallNode* call = nullptr;
  std::array<Expr, 3> row;  ///< dst, src, wgt (wgt: 0 for ALU)
};

const char* const kIndexName[3] = {"dst", "src", "wgt"};

class Folder : public tir::IRMutator {
 public:
  Folder(const isa::HwConfig& cfg, std::map<const tir::VarNode*, SramPlacement> placements,
         std::map<const tir::VarNode*, tir::Buffer> buffers)
      : cfg_(cfg), placements_(std::move(placements)), buffers_(std::move(buffers)) {}

 protected:
  using tir::IRMutator::mutate;
  Stmt mutate(const tir::AttrStmtNode* op, const Stmt& self) override {
    if (op->key != ta::kUopKernel) return tir::IRMutator::mutate(op, self);
    const int64_t* kind = tir::as_const_int(op->value);
    if (!kind || (*kind != 0 && *kind != 1)) {
      throw_user_error("{} value {} is not 0 (GEMM) or 1 (ALU)", ta::kUopKernel, tir::to_text(op->value));
    }
    return tir::attr_stmt(op->node, op->key, op->value, fold_kernel(op->body, *kind == 0));
  }

 private:
  /// The row expression of index `which` of a micro-op call.
  Expr resolve(const Expr& e, bool gemm, int which, const tir::CallNode* call) {
    const std::optional<AccessPtr> ap = as_access_ptr(e);
    if (!ap) return e;
    auto b = buffers_.find(ap->data);
    const std::string name = b != buffers_.end() ? b->second->name : ap->data->name;
    auto it = placements_.find(ap->data);
    if (it == placements_.end()) {
      throw_user_error("{} index of {} points into buffer '{}', which is not an allocated scratchpad",
                       kIndexName[which], call->op, name);
    }
    const tir::MemScope want = which == 0   ? tir::MemScope::kAcc
                               : which == 2 ? tir::MemScope::kWgt
                               : gemm       ? tir::MemScope::kInp
                                            : tir::MemScope::kAcc;
    const tir::MemScope have = it->second.buffer->scope;
    if (have != want) {
      throw_user_error("{} index of {} points into buffer '{}' of scope {}, expected scope {}",
                       kIndexName[which], call->op, name, tir::to_string(have), tir::to_string(want));
    }
    // access_ptr offsets count elements of the buffer's dtype: rows of the scratchpad
    const int64_t per = ta::row_elems(cfg_, it->second.buffer);
    return tir::int_imm(it->second.row) +
           exact_div(ap->offset, per,
                     fmt::format("{} index of {} into buffer '{}' (an access_ptr offset in elements, {} per row)",
                                 kIndexName[which], call->op, name, per));
  }

  /// Collects the micro-op calls of `s` (inside the iteration levels), unrolling loops.
  void collect(const Stmt& s, bool gemm, std::vector<UopCall>& out) {
    if (const auto* seq = s.as<tir::SeqStmtNode>()) {
      for (const Stmt& c : seq->seq) collect(c, gemm, out);
      return;
    }
    if (const auto* loop = s.as<tir::ForNode>()) {
      const auto [mn, ext] = const_range(loop);
      for (int64_t i = 0; i < ext; ++i) {
        collect(tir::substitute(loop->body, loop->loop_var, tir::int_imm(mn + i)), gemm, out);
      }
      return;
    }
    const tir::CallNode* call = evaluated_call(s);
    const std::string_view want = gemm ? ta::kGemmUop : ta::kAluUop;
    if (!call || call->op != want) {
      throw_user_error("a {} kernel ({}) may hold only loops and {} calls, not: {}", gemm ? "GEMM" : "ALU",
                       ta::kUopKernel, want, tir::to_text(s));
    }
    UopCall u;
    u.stmt = s;
    u.call = call;
    if (gemm) {
      TESSEL_CHECK(call->args.size() == 4, "{} with {} arguments", want, call->args.size());
      for (int k = 0; k < 3; ++k)
        u.row[static_cast<size_t>(k)] = resolve(call->args[static_cast<size_t>(k) + 1], true, k, call);
    } else {
      TESSEL_CHECK(call->args.size() == 5, "{} with {} arguments", want, call->args.size());
      u.row[0] = resolve(call->args[3], false, 0, call);
      u.row[1] = resolve(call->args[4], false, 1, call);
      u.row[2] = tir::int_imm(0);
    }
    out.push_back(u);
  }

  Stmt fold_kernel(const Stmt& body, bool gemm) {
    // the iteration levels: the outermost loop and, if its body is a loop, that one
    std::vector<const tir::ForNode*> levels;
    Stmt rest = body;
    while (levels.size() < 2) {
      const auto* loop = rest.as<tir::ForNode>();
      if (!loop) break;
      const int64_t ext = const_range(loop).second;
      if (ext < 1)
        throw_user_error("uop loop '{}' cannot fold: its extent {} is below 1", loop->loop_var.name(), ext);
      levels.push_back(loop);
      rest = loop->body;
    }
    std::vector<UopCall> calls;
    collect(rest, gemm, calls);
    if (calls.empty()) throw_user_error("{} holds no micro-op call", ta::kUopKernel);
    std::vector<tir::Var> vars;
    for (const tir::ForNode* l : levels) vars.push_back(l->loop_var);

    // per call and index (dst, src, wgt): the step per iteration of each level, and the base
    // (min folded in: v = min + i)
    std::vector<std::array<std::array<int64_t, 2>, 3>> steps(calls.size());
    std::vector<std::array<Expr, 3>> bases(calls.size());
    tir::arith::Analyzer az;
    for (size_t u = 0; u < calls.size(); ++u) {
      for (int k = 0; k < 3; ++k) {
        const Expr& e = calls[u].row[static_cast<size_t>(k)];
        const auto coefs = tir::arith::detect_linear_equation(e, vars);
        if (!coefs) {
          // name the first level the index is not linear in
          for (const tir::ForNode* l : levels) {
            if (!tir::arith::detect_linear_equation(e, {l->loop_var})) {
              throw_user_error("uop loop '{}' cannot fold: the {} index {} of {} is not linear in {}",
                               l->loop_var.name(), kIndexName[k], tir::to_text(e), calls[u].call->op,
                               l->loop_var.name());
            }
          }
          throw_user_error("uop loops cannot fold: the {} index {} of {} is not linear in {}", kIndexName[k],
                           tir::to_text(e), calls[u].call->op,
                           levels.size() == 2 ? "both loop variables" : "the loop variable");
        }
        Expr base = (*coefs)[vars.size()];
        steps[u][static_cast<size_t>(k)] = {0, 0};
        for (size_t l = 0; l < levels.size(); ++l) {
          const std::optional<int64_t> c = tir::arith::as_const((*coefs)[l]);
          const std::string& lname = levels[l]->loop_var.name();
          if (!c) {
            throw_user_error(
                "uop loop '{}' cannot fold: the {} index {} of {} steps by {} per iteration, not a constant",
                lname, kIndexName[k], tir::to_text(e), calls[u].call->op, tir::to_text((*coefs)[l]));
          }
          if (*c < 0) {
            throw_user_error(
                "uop loop '{}' cannot fold: the {} index {} of {} steps by {} per iteration (factors are "
                "unsigned)",
                lname, kIndexName[k], tir::to_text(e), calls[u].call->op, *c);
          }
          steps[u][static_cast<size_t>(k)][l] = *c;
          base = base + (*coefs)[l] * levels[l]->min;
        }
        bases[u][static_cast<size_t>(k)] = az.simplify(base);
      }
    }
    // the factor of a level is one field: every micro-op must agree on it (a level of one
    // iteration never uses its factor: 0)
    std::array<std::array<uint32_t, 3>, 2> factor{};
    for (size_t l = 0; l < levels.size(); ++l) {
      if (tir::is_const_int(levels[l]->extent, 1)) continue;
      for (int k = 0; k < (gemm ? 3 : 2); ++k) {
        const size_t kk = static_cast<size_t>(k);
        const int64_t c0 = steps[0][kk][l];
        for (size_t u = 1; u < calls.size(); ++u) {
          const int64_t cu = steps[u][kk][l];
          if (cu != c0) {
            throw_user_error(
                "uop loop '{}' cannot fold: micro-ops 0 and {} step the {} index by {} and {} per iteration "
                "(one {} instruction has one factor per loop)",
                levels[l]->loop_var.name(), u, kIndexName[k], c0, cu, gemm ? "GEMM" : "ALU");
          }
        }
        if (c0 > int64_t{UINT32_MAX}) {
          throw_user_error("uop loop '{}' cannot fold: the {} factor {} does not fit an instruction field",
                           levels[l]->loop_var.name(), kIndexName[k], c0);
        }
        factor[l][kk] = static_cast<uint32_t>(c0);
      }
    }
    // the instruction's nest: two levels are (outer, inner); one level is the inner loop
    isa::Instruction in;
    std::array<uint32_t, 3> out_f{}, in_f{};
    in.iter_out = 1;
    in.iter_in = 1;
    auto extent_of = [](const tir::ForNode* l) {
      const int64_t e = *tir::arith::as_const(l->extent);
      if (e > int64_t{UINT32_MAX}) throw_user_error("uop loop '{}' has {} iterations", l->loop_var.name(), e);
      return static_cast<uint32_t>(e);
    };
    if (levels.size() == 2) {
      in.iter_out = extent_of(levels[0]);
      in.iter_in = extent_of(levels[1]);
      out_f = factor[0];
      in_f = factor[1];
    } else if (levels.size() == 1) {
      in.iter_in = extent_of(levels[0]);
      in_f = factor[0];
    }
    in.dst_factor_out = out_f[0];
    in.src_factor_out = out_f[1];
    in.wgt_factor_out = out_f[2];
    in.dst_factor_in = in_f[0];
    in.src_factor_in = in_f[1];
    in.wgt_factor_in = in_f[2];

    std::vector<Stmt> out;
    auto loop_call = [](uint32_t ext, uint32_t d, uint32_t s, uint32_t w) {
      return tir::evaluate(tir::call(tir::DataType::int32(), std::string(ta::kUopLoop),
                                     {tir::int_imm(ext), tir::int_imm(d), tir::int_imm(s), tir::int_imm(w)}));
    };
    out.push_back(loop_call(in.iter_out, in.dst_factor_out, in.src_factor_out, in.wgt_factor_out));
    out.push_back(loop_call(in.iter_in, in.dst_factor_in, in.src_factor_in, in.wgt_factor_in));
    for (size_t u = 0; u < calls.size(); ++u) {
      std::vector<Expr> args = calls[u].call->args;
      if (gemm) {
        for (int k = 0; k < 3; ++k) args[static_cast<size_t>(k) + 1] = bases[u][static_cast<size_t>(k)];
      } else {
        args[3] = bases[u][0];
        args[4] = bases[u][1];
      }
      out.push_back(tir::evaluate(tir::call(calls[u].call->dtype, calls[u].call->op, std::move(args))));
    }
    return tir::seq(std::move(out));
  }

  const isa::HwConfig& cfg_;
  std::map<const tir::VarNode*, SramPlacement> placements_;
  std::map<const tir::VarNode*, tir::Buffer> buffers_;
};

}  // namespace

tir::PrimFunc fold_uop_loops(const tir::PrimFunc& f, const isa::HwConfig& cfg) {
  Folder folder(cfg, sram_placements(f->body), buffers_by_data(f));
  return f.with_body(folder.mutate_stmt(f->body));
}

}  // namespace tessel::compiler::accel_tir
