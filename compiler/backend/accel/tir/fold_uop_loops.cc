#include "compiler/backend/accel/tir/fold_uop_loops.h"

#include <fmt/format.h>

#include <algorithm>
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

  /// A micro-op index as a linear form with constant coefficients: rows = base + sum over the
  /// loop variables (the levels, then the unrolled loops around the call) of coef * variable.
  struct LinearRow {
    int64_t base = 0;
    std::vector<int64_t> coef;
  };
  /// A statement of a kernel below its levels: a sequence, an unrolled loop or a micro-op call.
  struct Node {
    enum class Kind { kSeq, kLoop, kCall } kind = Kind::kCall;
    std::vector<Node> children;  ///< kSeq: the statements; kLoop: the body
    int64_t min = 0, extent = 0, var = 0;  ///< kLoop: the range and its variable's index
    size_t leaf = 0;             ///< kCall: the index into the leaves
  };
  struct Leaf {
    const tir::CallNode* call = nullptr;
    Stmt stmt;
    std::array<LinearRow, 3> row;
  };

  /// The row of index `which` of `call` as a LinearRow over `vars`, or nullopt when it is not
  /// one (not linear, a coefficient or base that is not a constant or not a whole row, a buffer
  /// that is not an allocated scratchpad of the right scope: fold_kernel's general path then
  /// gives the result or the error).
  std::optional<LinearRow> linear_row(const Expr& e, bool gemm, int which, const std::vector<tir::Var>& vars) {
    Expr offset = e;
    int64_t row0 = 0, per = 1;
    if (const std::optional<AccessPtr> ap = as_access_ptr(e)) {
      auto it = placements_.find(ap->data);
      if (it == placements_.end()) return std::nullopt;
      const tir::MemScope want = which == 0   ? tir::MemScope::kAcc
                                 : which == 2 ? tir::MemScope::kWgt
                                 : gemm       ? tir::MemScope::kInp
                                              : tir::MemScope::kAcc;
      if (it->second.buffer->scope != want) return std::nullopt;
      row0 = it->second.row;
      per = ta::row_elems(cfg_, it->second.buffer);
      offset = ap->offset;
    }
    const auto coefs = tir::arith::detect_linear_equation(offset, vars);
    if (!coefs) return std::nullopt;
    LinearRow r;
    for (size_t v = 0; v <= vars.size(); ++v) {
      const std::optional<int64_t> c = tir::arith::as_const((*coefs)[v]);
      if (!c || *c % per != 0) return std::nullopt;
      if (v < vars.size()) {
        r.coef.push_back(*c / per);
      } else {
        r.base = row0 + *c / per;
      }
    }
    return r;
  }

  /// The tree of `s` (below the levels) with its calls as leaves; false when `s` holds anything
  /// the fast fold does not take.
  bool build_tree(const Stmt& s, bool gemm, std::vector<tir::Var>& vars, Node& node, std::vector<Leaf>& leaves) {
    if (const auto* seq = s.as<tir::SeqStmtNode>()) {
      node.kind = Node::Kind::kSeq;
      for (const Stmt& c : seq->seq) {
        node.children.emplace_back();
        if (!build_tree(c, gemm, vars, node.children.back(), leaves)) return false;
      }
      return true;
    }
    if (const auto* loop = s.as<tir::ForNode>()) {
      const std::optional<int64_t> mn = tir::arith::as_const(loop->min);
      const std::optional<int64_t> ext = tir::arith::as_const(loop->extent);
      if (!mn || !ext) return false;
      node.kind = Node::Kind::kLoop;
      node.min = *mn;
      node.extent = *ext;
      node.var = static_cast<int64_t>(vars.size());
      vars.push_back(loop->loop_var);
      node.children.emplace_back();
      const bool ok = build_tree(loop->body, gemm, vars, node.children.back(), leaves);
      vars.pop_back();
      return ok;
    }
    const tir::CallNode* call = evaluated_call(s);
    if (!call || call->op != (gemm ? ta::kGemmUop : ta::kAluUop) || call->args.size() != (gemm ? 4u : 5u)) {
      return false;
    }
    // the fast fold rewrites the index arguments only: any other argument (GEMM reset, ALU
    // operation, immediate) that uses a loop variable goes the general way (substituted)
    const std::vector<size_t> index_args = gemm ? std::vector<size_t>{1, 2, 3} : std::vector<size_t>{3, 4};
    for (size_t a = 0; a < call->args.size(); ++a) {
      if (std::find(index_args.begin(), index_args.end(), a) != index_args.end()) continue;
      for (const tir::Var& v : vars) {
        if (tir::uses_var(call->args[a], v)) return false;
      }
    }
    Leaf leaf;
    leaf.call = call;
    leaf.stmt = s;
    for (int k = 0; k < 3; ++k) {
      if (!gemm && k == 2) {
        leaf.row[2].coef.assign(vars.size(), 0);
        continue;
      }
      const Expr& e = gemm ? call->args[static_cast<size_t>(k) + 1] : call->args[static_cast<size_t>(k) + 3];
      std::optional<LinearRow> r = linear_row(e, gemm, k, vars);
      if (!r) return false;
      leaf.row[static_cast<size_t>(k)] = std::move(*r);
    }
    node.kind = Node::Kind::kCall;
    node.leaf = leaves.size();
    leaves.push_back(std::move(leaf));
    return true;
  }

  /// The micro-ops of `node` in unrolled order, each index's base a constant row: `values` holds
  /// the levels' minimums, then the unrolled loops' current values.
  void enumerate(const Node& node, const std::vector<Leaf>& leaves, size_t nlevels, std::vector<int64_t>& values,
                 std::vector<UopCall>& calls, std::vector<std::array<std::array<int64_t, 2>, 3>>& steps,
                 std::vector<std::array<Expr, 3>>& bases) {
    switch (node.kind) {
      case Node::Kind::kSeq:
        for (const Node& c : node.children) enumerate(c, leaves, nlevels, values, calls, steps, bases);
        return;
      case Node::Kind::kLoop:
        values.push_back(0);
        for (int64_t i = 0; i < node.extent; ++i) {
          values.back() = node.min + i;
          enumerate(node.children.front(), leaves, nlevels, values, calls, steps, bases);
        }
        values.pop_back();
        return;
      case Node::Kind::kCall: {
        const Leaf& leaf = leaves[node.leaf];
        UopCall u;
        u.stmt = leaf.stmt;
        u.call = leaf.call;
        std::array<std::array<int64_t, 2>, 3> st{};
        std::array<Expr, 3> b;
        for (size_t k = 0; k < 3; ++k) {
          const LinearRow& r = leaf.row[k];
          int64_t row = r.base;
          for (size_t v = 0; v < r.coef.size(); ++v) row += r.coef[v] * values[v];
          for (size_t l = 0; l < nlevels; ++l) st[k][l] = r.coef[l];
          b[k] = tir::int_imm(row);
          u.row[k] = b[k];
        }
        calls.push_back(std::move(u));
        steps.push_back(st);
        bases.push_back(std::move(b));
        return;
      }
    }
  }

  /// The fast fold: every index a linear form with constant coefficients in the levels and the
  /// unrolled loops, so each is analysed once per call site instead of once per micro-op after
  /// substituting the unrolled values (the same rows: base + coefficients x values). false
  /// (nothing written) when the kernel has any other form.
  bool fold_linear(const Stmt& rest, bool gemm, const std::vector<const tir::ForNode*>& levels,
                   std::vector<UopCall>& calls, std::vector<std::array<std::array<int64_t, 2>, 3>>& steps,
                   std::vector<std::array<Expr, 3>>& bases) {
    std::vector<tir::Var> vars;
    std::vector<int64_t> values;
    for (const tir::ForNode* l : levels) {
      vars.push_back(l->loop_var);
      values.push_back(*tir::arith::as_const(l->min));
    }
    Node root;
    std::vector<Leaf> leaves;
    if (!build_tree(rest, gemm, vars, root, leaves)) return false;
    for (const Leaf& leaf : leaves) {
      for (const LinearRow& r : leaf.row) {
        for (size_t l = 0; l < levels.size(); ++l) {
          if (r.coef[l] < 0) return false;  // the general path names it
        }
      }
    }
    enumerate(root, leaves, levels.size(), values, calls, steps, bases);
    return true;
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
    // per call and index (dst, src, wgt): the step per iteration of each level, and the base
    // (min folded in: v = min + i)
    std::vector<std::array<std::array<int64_t, 2>, 3>> steps;
    std::vector<std::array<Expr, 3>> bases;
    const bool linear = fold_linear(rest, gemm, levels, calls, steps, bases);
    if (!linear) collect(rest, gemm, calls);
    if (calls.empty()) throw_user_error("{} holds no micro-op call", ta::kUopKernel);
    std::vector<tir::Var> vars;
    for (const tir::ForNode* l : levels) vars.push_back(l->loop_var);
    if (!linear) {
      steps.resize(calls.size());
      bases.resize(calls.size());
    }
    tir::arith::Analyzer az;
    for (size_t u = 0; !linear && u < calls.size(); ++u) {
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
