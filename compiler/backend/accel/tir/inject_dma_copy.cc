#include "compiler/backend/accel/tir/inject_dma_copy.h"

#include <algorithm>
#include <string>
#include <vector>

#include "compiler/backend/accel/tir/common.h"
#include "compiler/target/accel_intrin.h"
#include "compiler/tir/arith/analyzer.h"
#include "compiler/tir/functor.h"
#include "compiler/tir/intrinsics.h"
#include "compiler/tir/printer.h"
#include "compiler/tir/util.h"
#include "support/error.h"

namespace tessel::compiler::accel_tir {

namespace {

namespace ta = target::accel;
using tir::Expr;
using tir::MemScope;
using tir::Stmt;

constexpr int64_t kMaxPad = 15;      // 4-bit pad fields
constexpr int64_t kMaxSize = 65535;  // 16-bit size and stride fields

bool is_data_scratchpad(MemScope s) { return s == MemScope::kInp || s == MemScope::kWgt || s == MemScope::kAcc; }

/// The terms of a conjunction, likely() removed.
void conjuncts(const Expr& c, std::vector<Expr>& out) {
  if (const auto* call = c.as<tir::CallNode>(); call && call->op == tir::intrin::kLikely) {
    conjuncts(call->args[0], out);
    return;
  }
  if (const auto* a = c.as<tir::AndNode>()) {
    conjuncts(a->a, out);
    conjuncts(a->b, out);
    return;
  }
  out.push_back(c);
}

/// One copy nest.
class CopyLowering {
 public:
  CopyLowering(const isa::HwConfig& cfg, const Stmt& body) : cfg_(cfg), nest_(perfect_nest(body)) {}

  Stmt run() {
    const std::string what =
        "the copy under pragma_dma_copy" + (nest_.loops.empty() ? std::string() : " at " + nest_name(nest_, ""));
    const auto* st = nest_.body.as<tir::BufferStoreNode>();
    if (!st) {
      throw_user_error("{} is not a loop nest around one buffer store: {}", what, tir::to_text(nest_.body));
    }
    const std::vector<int64_t> ext = nest_extents(nest_, what);
    // the value: [select(cond, v, 0)] with v = [cast](load)
    Expr value = st->value;
    Expr cond;
    if (const auto* sel = value.as<tir::SelectNode>()) {
      if (!tir::is_const_int(sel->false_value, 0)) {
        throw_user_error("{}: the padding value {} is not 0", what, tir::to_text(sel->false_value));
      }
      cond = sel->cond;
      value = sel->true_value;
    }
    bool cast = false;
    if (const auto* c = value.as<tir::CastNode>()) {
      cast = true;
      value = c->value;
    }
    const auto* ld = value.as<tir::BufferLoadNode>();
    if (!ld) throw_user_error("{}: the stored value {} is not a buffer load", what, tir::to_text(st->value));
    const tir::Buffer& dst = st->buffer;
    const tir::Buffer& src = ld->buffer;
    const bool load = is_data_scratchpad(dst->scope) && src->scope == MemScope::kGlobal;
    const bool store = dst->scope == MemScope::kGlobal && src->scope == MemScope::kAcc;
    if (!load && !store) {
      throw_user_error(
          "{} moves {} buffer '{}' into {} buffer '{}'; a DMA moves a global buffer into an inp, wgt or "
          "acc scratchpad, or an acc scratchpad into a global buffer",
          what, tir::to_string(src->scope), src->name, tir::to_string(dst->scope), dst->name);
    }
    const tir::Buffer& sram = load ? dst : src;
    const tir::Buffer& dram = load ? src : dst;
    const ta::ScopeInfo info = ta::scope_info(cfg_, sram->scope);
    if (sram->dtype != info.dtype) {
      throw_user_error("{}: scratchpad '{}' holds {}, scope {} holds {}", what, sram->name, sram->dtype.str(),
                       tir::to_string(sram->scope), info.dtype.str());
    }
    isa::MemType type = info.mem_type;
    const tir::DataType i8 = tir::DataType::int8(), i32 = tir::DataType::int32();
    bool ok = false;
    if (store) {
      type = isa::MemType::kOut;
      ok = cast && dram->dtype == i8;
    } else if (sram->scope == MemScope::kAcc) {
      if (!cast && dram->dtype == i32) ok = true;
      if (cast && dram->dtype == i8) {
        type = isa::MemType::kAcc8;
        ok = true;
      }
    } else {
      ok = !cast && dram->dtype == i8;
    }
    if (!ok) {
      throw_user_error(
          "{}: {} '{}' ({}) -> '{}' ({}) is no DMA form (int8 into inp/wgt, int32 or int32(int8) into acc, "
          "int8(acc) into global int8)",
          what, cast ? "a converting copy" : "a copy", src->name, src->dtype.str(), dst->name, dst->dtype.str());
    }
    if (store && cond.defined()) throw_user_error("{}: a store cannot pad (condition {})", what, tir::to_text(cond));

    const int64_t elem = int64_t{info.rows} * info.cols;
    const std::string elem_text = fmt::format("{}x{} {}", info.rows, info.cols, tir::to_string(sram->scope));
    const LinearIndex ls = linear_index(sram.flat_index(load ? st->indices : ld->indices), nest_, what,
                                        fmt::format("the index of scratchpad '{}'", sram->name));
    const LinearIndex ld_ = linear_index(dram.flat_index(load ? ld->indices : st->indices), nest_, what,
                                         fmt::format("the index of dram buffer '{}'", dram->name));
    const size_t outer = element_loops_start(
        nest_, ext,
        {{fmt::format("scratchpad '{}'", sram->name), &ls}, {fmt::format("dram buffer '{}'", dram->name), &ld_}}, elem,
        elem_text, what);
    // The loops outside the element (extent-1 ones drop out), grouped from the innermost: a
    // loop joins the group inside it when it steps both sides by that group's extent times its
    // step (the two loops walk one contiguous run of elements, e.g. the rows of a full-width
    // window, or the channel blocks of a full-height one) and neither is named by the pad
    // condition. The innermost group is the rectangle's x when it walks consecutive elements
    // on both sides, the next its y when the scratchpad rows follow each other; the groups
    // outside those stay loops around the DMA (one instruction per iteration).
    std::vector<bool> in_cond(outer, false);
    if (cond.defined()) {
      for (size_t k = 0; k < outer; ++k) in_cond[k] = tir::uses_var(cond, nest_.loops[k]->loop_var);
    }
    struct Group {
      std::vector<size_t> loops;  // outermost first
      int64_t ext = 1, cs = 0, cd = 0;
    };
    std::vector<Group> groups;  // innermost first
    for (size_t k = outer; k-- > 0;) {
      if (ext[k] == 1) continue;
      if (!groups.empty()) {
        Group& g = groups.back();
        const bool merge = !in_cond[k] && !in_cond[g.loops.front()] && ls.coef[k] == g.ext * g.cs &&
                           ld_.coef[k] == g.ext * g.cd && g.ext * ext[k] <= kMaxSize;
        if (merge) {
          g.loops.insert(g.loops.begin(), k);
          g.ext *= ext[k];
          continue;
        }
      }
      groups.push_back({{k}, ext[k], ls.coef[k], ld_.coef[k]});
    }
    size_t gi = 0;
    const bool has_x = !groups.empty() && groups[0].cs == elem && groups[0].cd == elem;
    if (has_x) ++gi;
    const int64_t xn = has_x ? groups[0].ext : 1;
    const bool has_y = gi < groups.size() && groups[gi].cs == xn * elem && groups[gi].cd > 0 &&
                       groups[gi].cd % elem == 0 && groups[gi].cd / elem <= kMaxSize;
    const Group gx = has_x ? groups[0] : Group{}, gy = has_y ? groups[gi] : Group{};
    if (has_y) ++gi;
    const size_t kx = has_x ? gx.loops.back() : outer, ky = has_y ? gy.loops.back() : outer;
    const int64_t yn = has_y ? gy.ext : 1;
    const int64_t stride = has_y ? gy.cd / elem : 0;  // DRAM elements between rows
    // the loops left around the DMA, outermost first; their variables join the bases
    std::vector<const tir::ForNode*> around;
    Expr sbase = ls.base, dbase = ld_.base;
    for (size_t k = 0; k < outer; ++k) {
      bool kept = false;
      for (size_t g = gi; g < groups.size(); ++g) {
        kept = kept || std::find(groups[g].loops.begin(), groups[g].loops.end(), k) != groups[g].loops.end();
      }
      if (!kept) continue;
      around.push_back(nest_.loops[k]);
      const tir::Var& v = nest_.loops[k]->loop_var;
      sbase = sbase + v * int(ls.coef[k]);
      dbase = dbase + v * int(ld_.coef[k]);
    }
    // pads from the condition: the valid rows/columns [lo, hi) of the padded rectangle, as
    // expressions of the enclosing variables (constants once emit_instructions unrolls them)
    tir::arith::Analyzer az;
    const Expr ext_of[2] = {int(yn), int(xn)};
    Expr lo[2] = {0, 0}, hi[2] = {ext_of[0], ext_of[1]};  // [0] y, [1] x
    Expr row = exact_div(sbase, elem, what + ": the first scratchpad value");
    Expr delem = exact_div(dbase, elem, what + ": the first dram value");
    if (cond.defined()) {
      if (sram->scope == MemScope::kWgt) {
        throw_user_error("{}: wgt loads cannot pad (condition {})", what, tir::to_text(cond));
      }
      std::vector<Expr> terms;
      conjuncts(cond, terms);
      // without a y group (the scratchpad's rows further apart than the run copied: a clipped
      // last tile in a buffer of the full tile's shape) each row is its own DMA, and a bound on
      // that loop (left around the DMA) decides whether the row is real or all padding: then
      // the DMA is pads only (y_size 0, one pad row; no DRAM read, its DRAM start 0)
      Expr row_valid;
      for (const Expr& t : terms) {
        if (!has_y && row_bound(t, outer, has_x ? gx.loops : std::vector<size_t>{})) {
          row_valid = row_valid.defined() ? (row_valid && t) : t;
          continue;
        }
        pad_term(t, what, has_x, kx, has_y, ky, lo, hi);
      }
      if (row_valid.defined()) {
        hi[0] = tir::select(row_valid, hi[0], Expr(0));
        delem = tir::select(row_valid, delem, Expr(0));
      }
      for (int d = 0; d < 2; ++d) {
        lo[d] = az.simplify(tir::min(tir::max(lo[d], 0), ext_of[d]));
        hi[d] = az.simplify(tir::max(tir::min(hi[d], ext_of[d]), lo[d]));
        for (const Expr& p : {lo[d], az.simplify(ext_of[d] - hi[d])}) {
          const std::optional<int64_t> c = tir::arith::as_const(p);
          if (c && *c > kMaxPad) {
            throw_user_error("{}: a pad of {} {} exceeds the 4-bit pad field (at most {})", what, *c,
                             d == 0 ? "rows" : "columns", kMaxPad);
          }
        }
      }
      // the first DRAM element is the one of the first valid row and column
      Expr start = delem;
      if (has_y) start = start + lo[0] * int(stride);
      if (has_x) start = start + lo[1];
      delem = az.simplify(start);
    }
    const Expr y_size = az.simplify(hi[0] - lo[0]), x_size = az.simplify(hi[1] - lo[1]);
    const Expr x_stride = has_y ? Expr(int(stride)) : x_size;
    if (store) {
      return wrap_loops(around, ta::coproc_scope(isa::Module::kStore,
                                                 ta::dma_store(cfg_, sram, row, dram, delem, y_size, x_size, x_stride)));
    }
    const isa::Module m = sram->scope == MemScope::kAcc ? isa::Module::kCompute : isa::Module::kLoad;
    return wrap_loops(around, ta::coproc_scope(m, ta::dma_load(cfg_, type, sram, row, dram, delem, y_size, x_size,
                                                               x_stride, lo[0], az.simplify(ext_of[0] - hi[0]),
                                                               lo[1], az.simplify(ext_of[1] - hi[1]))));
  }

 private:
  /// Whether the bound `t` names exactly one loop of the nest, and it is one left around the
  /// DMA: outside the element (index below `outer`) and not one of the x group's `x_loops`
  /// (only asked when there is no y group).
  bool row_bound(const Expr& t, size_t outer, const std::vector<size_t>& x_loops) {
    if (!tir::is_comparison(t.kind()) || t.kind() == tir::ExprKind::kEQ || t.kind() == tir::ExprKind::kNE) return false;
    const tir::BinaryOperands o = tir::binary_operands(t);
    const auto lin = tir::arith::detect_linear_equation(*o.a - *o.b, loop_vars());
    if (!lin) return false;
    int used = 0;
    size_t var = 0;
    for (size_t k = 0; k + 1 < lin->size(); ++k) {
      if (!tir::is_const_int((*lin)[k], 0)) {
        ++used;
        var = k;
      }
    }
    // (an extent-1 loop is dropped, not left around the DMA)
    return used == 1 && var < outer && std::find(x_loops.begin(), x_loops.end(), var) == x_loops.end() &&
           !tir::is_const_int(nest_.loops[var]->extent, 1);
  }
  std::vector<tir::Var> loop_vars() const {
    std::vector<tir::Var> v;
    for (const tir::ForNode* l : nest_.loops) v.push_back(l->loop_var);
    return v;
  }

  /// One bound of the pad condition: narrows lo/hi of the y or x loop.
  void pad_term(const Expr& t, const std::string& what, bool has_x, size_t kx, bool has_y, size_t ky, Expr* lo,
                Expr* hi) {
    Expr ge;  // ge >= 0
    const tir::BinaryOperands o = tir::binary_operands(t);
    switch (t.kind()) {
      case tir::ExprKind::kGE:
        ge = *o.a - *o.b;
        break;
      case tir::ExprKind::kGT:
        ge = *o.a - *o.b - 1;
        break;
      case tir::ExprKind::kLE:
        ge = *o.b - *o.a;
        break;
      case tir::ExprKind::kLT:
        ge = *o.b - *o.a - 1;
        break;
      default:
        throw_user_error("{}: the pad condition {} is not a bound 0 <= index or index < extent", what, tir::to_text(t));
    }
    if (o.a->dtype() != tir::DataType::int32()) {
      throw_user_error("{}: the pad condition {} is not an int32 bound", what, tir::to_text(t));
    }
    const LinearIndex lin = linear_index(ge, nest_, what, fmt::format("the pad condition {}", tir::to_text(t)));
    size_t var = 0;
    int used = 0;
    for (size_t k = 0; k < lin.coef.size(); ++k) {
      if (lin.coef[k] != 0) {
        var = k;
        ++used;
      }
    }
    const bool on_row = used == 1 && ((has_y && var == ky) || (has_x && var == kx));
    if (!on_row || (lin.coef[var] != 1 && lin.coef[var] != -1)) {
      throw_user_error("{}: the pad condition {} is not a bound with unit step on the row or column loop", what,
                       tir::to_text(t));
    }
    const int d = has_y && var == ky ? 0 : 1;
    if (lin.coef[var] == 1) {
      lo[d] = tir::max(lo[d], 0 - lin.base);  // v + base >= 0
    } else {
      hi[d] = tir::min(hi[d], lin.base + 1);  // base - v >= 0
    }
  }

  const isa::HwConfig& cfg_;
  PerfectNest nest_;
};

}  // namespace

tir::PrimFunc inject_dma_copy(const tir::PrimFunc& f, const isa::HwConfig& cfg) {
  return rewrite_pragma(f, ta::kPragmaDmaCopy, [&](const Stmt& body) { return CopyLowering(cfg, body).run(); });
}

}  // namespace tessel::compiler::accel_tir
