// fold_uop_loops: the loops of an accel.uop_kernel -> accel.uop_loop levels and micro-ops with
// the loop variables removed; unfoldable loops are user errors naming the loop.
#include <gtest/gtest.h>

#include "compiler/backend/accel/tir/allocate_scratchpads.h"
#include "compiler/backend/accel/tir/fold_uop_loops.h"
#include "compiler/tir/functor.h"
#include "compiler/tir/printer.h"
#include "tests/accel_tir/accel_tir_test_util.h"

namespace tessel::compiler::accel_tir::testing {
namespace {

/// A compute scope with scratchpads inp (64 rows), wgt (16) and acc (2 x 32 rows) around `kernel`.
struct Pads {
  Buffer inp{"inp_buf", DataType::int8(), {64, 1, 16}, MemScope::kInp};
  Buffer wgt{"wgt_buf", DataType::int8(), {16, 16, 16}, MemScope::kWgt};
  Buffer pad{"pad_buf", DataType::int32(), {8, 1, 16}, MemScope::kAcc};  // moves acc_buf to row 8
  Buffer acc{"acc_buf", DataType::int32(), {64, 1, 16}, MemScope::kAcc};
  tir::PrimFunc wrap(Stmt kernel_body, int kind = 0) const {
    Stmt k = tir::attr_stmt(Expr(), std::string(ta::kUopKernel), kind, kernel_body);
    Stmt body = ta::coproc_scope(isa::Module::kCompute, k);
    body = tir::allocate(inp, tir::allocate(wgt, tir::allocate(pad, tir::allocate(acc, body))));
    return tir::PrimFunc("k", {}, {}, body);
  }
  Expr acc_at(Expr i) const { return ta::sram_ptr(isa::HwConfig{}, acc, i, 1, 3); }
  Expr inp_at(Expr i) const { return ta::sram_ptr(isa::HwConfig{}, inp, i, 1, 1); }
  Expr wgt_at(Expr i) const { return ta::sram_ptr(isa::HwConfig{}, wgt, i, 1, 1); }
};

tir::PrimFunc fold(const tir::PrimFunc& f) {
  const isa::HwConfig cfg;
  return fold_uop_loops(allocate_scratchpads(f, cfg), cfg);
}

/// The folded kernel's statements (uop_loop, uop_loop, micro-ops...).
std::vector<Stmt> kernel_stmts(const tir::PrimFunc& f) {
  std::vector<Stmt> out;
  struct Finder : tir::IRVisitor {
    std::vector<Stmt>* out = nullptr;

   protected:
    using tir::IRVisitor::visit;
    void visit(const tir::AttrStmtNode* op) override {
      if (op->key == ta::kUopKernel) {
        const auto* s = op->body.as<tir::SeqStmtNode>();
        if (s) *out = s->seq;
        return;
      }
      tir::IRVisitor::visit(op);
    }
  } finder;
  finder.out = &out;
  finder.visit_stmt(f->body);
  return out;
}

/// The integer arguments of an Evaluate(call); -1 for a non-constant one.
std::vector<int64_t> args_of(const Stmt& s) {
  std::vector<int64_t> v;
  const auto* c = s.as<tir::EvaluateNode>()->value.as<tir::CallNode>();
  for (const Expr& a : c->args) {
    const int64_t* x = tir::as_const_int(a);
    v.push_back(x ? *x : -1);
  }
  return v;
}

TEST(FoldUopLoops, MatmulGemmKernel) {
  // for i < 4 { for j < 2 { for q < 3 { gemm acc[i*2+j] += inp[i*3+q] * wgt[j*3+q] } } }
  Pads p;
  Var i("i"), j("j"), q("q");
  Stmt g = ta::gemm_uop(false, p.acc_at(i * 2 + j), p.inp_at(i * 3 + q), p.wgt_at(j * 3 + q));
  Stmt nest = tir::for_loop(
      i, 0, 4, tir::ForKind::kSerial,
      tir::for_loop(j, 0, 2, tir::ForKind::kSerial, tir::for_loop(q, 0, 3, tir::ForKind::kSerial, g)));
  const tir::PrimFunc out = fold(p.wrap(nest));
  const std::vector<Stmt> k = kernel_stmts(out);
  ASSERT_EQ(k.size(), 5u);
  EXPECT_EQ(args_of(k[0]), (std::vector<int64_t>{4, 2, 3, 0}));  // iter_out, dst, src, wgt factors
  EXPECT_EQ(args_of(k[1]), (std::vector<int64_t>{2, 1, 0, 3}));  // iter_in
  for (int64_t u = 0; u < 3; ++u) {                              // acc_buf starts at row 8 (after pad_buf)
    EXPECT_EQ(args_of(k[static_cast<size_t>(2 + u)]), (std::vector<int64_t>{0, 8, u, u}));
  }
  expect_golden("fold_uop_loops_gemm.ir", tir::to_text(out));
}

TEST(FoldUopLoops, OneLoopIsTheInnerLevelAndExtentOneHasFactorZero) {
  Pads p;
  Var i("i"), j("j");
  // one loop: the loop-IR fold makes it the inner level (iter_out 1)
  tir::PrimFunc out =
      fold(p.wrap(tir::for_loop(i, 0, 5, tir::ForKind::kSerial,
                                ta::alu_uop(isa::AluOp::kShr, true, 3, p.acc_at(i * 4), p.acc_at(i * 4))),
                  1));
  std::vector<Stmt> k = kernel_stmts(out);
  ASSERT_EQ(k.size(), 3u);
  EXPECT_EQ(args_of(k[0]), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(args_of(k[1]), (std::vector<int64_t>{5, 4, 4, 0}));
  EXPECT_EQ(args_of(k[2]), (std::vector<int64_t>{3, 1, 3, 8, 8}));
  // an extent-1 loop never uses its factor; a loop with a non-zero min moves the base
  out = fold(p.wrap(tir::for_loop(
      i, 0, 1, tir::ForKind::kSerial,
      tir::for_loop(j, 2, 3, tir::ForKind::kSerial, ta::gemm_uop(true, p.acc_at(i * 7 + j), 0, 0)))));
  k = kernel_stmts(out);
  EXPECT_EQ(args_of(k[0]), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(args_of(k[1]), (std::vector<int64_t>{3, 1, 0, 0}));
  EXPECT_EQ(args_of(k[2]), (std::vector<int64_t>{1, 10, 0, 0}));  // 8 + j's min 2
  // no loop at all: one micro-op, both levels of extent 1
  out = fold(p.wrap(ta::gemm_uop(true, p.acc_at(5), 0, 0)));
  k = kernel_stmts(out);
  EXPECT_EQ(args_of(k[0]), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(args_of(k[1]), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(args_of(k[2]), (std::vector<int64_t>{1, 13, 0, 0}));
}

// The loops below the two levels are unrolled: an index linear in them is analysed once per
// call site (the fast fold), one that is not (floordiv of an unrolled variable) is substituted
// per micro-op (the general fold); both give the rows in unrolled order.
TEST(FoldUopLoops, UnrolledLoopsLinearOrNot) {
  Pads p;
  Var i("i"), j("j"), q("q");
  auto kernel_of = [&](Expr dst) {
    return tir::for_loop(i, 0, 2, tir::ForKind::kSerial,
                         tir::for_loop(j, 0, 1, tir::ForKind::kSerial,
                                       tir::for_loop(q, 0, 4, tir::ForKind::kSerial,
                                                     ta::gemm_uop(false, p.acc_at(dst), p.inp_at(i * 4 + q),
                                                                  p.wgt_at(q)))));
  };
  for (const bool linear : {true, false}) {
    const tir::PrimFunc out = fold(p.wrap(kernel_of(linear ? i * 4 + q * 2 : i * 4 + tir::floordiv(q, 2))));
    const std::vector<Stmt> k = kernel_stmts(out);
    ASSERT_EQ(k.size(), 6u) << linear;
    EXPECT_EQ(args_of(k[0]), (std::vector<int64_t>{2, 4, 4, 0})) << linear;
    for (int64_t u = 0; u < 4; ++u) {
      const int64_t dst = 8 + (linear ? u * 2 : u / 2);  // acc_buf from row 8
      EXPECT_EQ(args_of(k[static_cast<size_t>(2 + u)]), (std::vector<int64_t>{0, dst, u, u})) << linear;
    }
  }
}

TEST(FoldUopLoops, EnclosingVariablesStayInTheBase) {
  // the kernel sits in a loop over virtual threads v (unrolled later by emit_instructions)
  Pads p;
  Var v("v"), i("i");
  Stmt k = tir::attr_stmt(
      Expr(), std::string(ta::kUopKernel), 0,
      tir::for_loop(i, 0, 4, tir::ForKind::kSerial, ta::gemm_uop(true, p.acc_at(v * 32 + i), 0, 0)));
  Stmt body = tir::for_loop(v, 0, 2, tir::ForKind::kSerial, ta::coproc_scope(isa::Module::kCompute, k));
  body = tir::allocate(p.inp, tir::allocate(p.wgt, tir::allocate(p.pad, tir::allocate(p.acc, body))));
  const tir::PrimFunc out = fold(tir::PrimFunc("k", {}, {}, body));
  const std::vector<Stmt> ks = kernel_stmts(out);
  ASSERT_EQ(ks.size(), 3u);
  EXPECT_EQ(args_of(ks[1]), (std::vector<int64_t>{4, 1, 0, 0}));
  const auto* c = ks[2].as<tir::EvaluateNode>()->value.as<tir::CallNode>();
  EXPECT_EQ(tir::to_text(c->args[1]), "((v * 32) + 8)");
}

TEST(FoldUopLoops, UnfoldableLoopsNameTheLoop) {
  Pads p;
  Var i("i"), j("j"), n("n");
  auto nest2 = [&](Stmt body) {
    return tir::for_loop(i, 0, 4, tir::ForKind::kSerial, tir::for_loop(j, 0, 4, tir::ForKind::kSerial, body));
  };
  // not linear in j
  EXPECT_EQ(user_error([&] {
              fold(p.wrap(nest2(ta::gemm_uop(true, p.acc_at(i * 4 + tir::floordiv(j, 2)), 0, 0))));
            }),
            "uop loop 'j' cannot fold: the dst index (8 + ((i * 4) + floordiv(j, 2))) of accel.gemm_uop is "
            "not linear "
            "in j");
  EXPECT_EQ(
      user_error([&] { fold(p.wrap(nest2(ta::gemm_uop(true, p.acc_at(i * i + j), 0, 0)))); }),
      "uop loop 'i' cannot fold: the dst index (8 + ((i * i) + j)) of accel.gemm_uop is not linear in i");
  // a non-constant extent
  EXPECT_EQ(
      user_error([&] {
        fold(p.wrap(tir::for_loop(i, 0, n, tir::ForKind::kSerial, ta::gemm_uop(true, p.acc_at(i), 0, 0))));
      }),
      "uop loop 'i' cannot fold: its range [0, 0 + n) is not constant");
  // a factor that is not a constant, and a negative one
  EXPECT_EQ(user_error([&] { fold(p.wrap(nest2(ta::gemm_uop(true, p.acc_at(i * n + j), 0, 0)))); }),
            "uop loop 'i' cannot fold: the dst index (8 + ((i * n) + j)) of accel.gemm_uop steps by n per "
            "iteration, not a "
            "constant");
  EXPECT_EQ(user_error([&] { fold(p.wrap(nest2(ta::gemm_uop(true, p.acc_at(40 - i * 4 + j), 0, 0)))); }),
            "uop loop 'i' cannot fold: the dst index (8 + ((j - (i * 4)) + 40)) of accel.gemm_uop steps by "
            "-4 per iteration "
            "(factors are unsigned)");
  // two micro-ops that step dst differently with j: one instruction has one factor per loop
  EXPECT_EQ(
      user_error([&] {
        fold(p.wrap(nest2(tir::seq({ta::gemm_uop(true, p.acc_at(i * 8 + j), 0, 0),
                                    ta::gemm_uop(true, p.acc_at(i * 8 + j * 2 + 1), 0, 0)}))));
      }),
      "uop loop 'j' cannot fold: micro-ops 0 and 1 step the dst index by 1 and 2 per iteration (one GEMM "
      "instruction has one factor per loop)");
  // a non-constant inner (unrolled) loop
  EXPECT_EQ(user_error([&] {
              Var q("q");
              fold(p.wrap(nest2(
                  tir::for_loop(q, 0, n, tir::ForKind::kSerial, ta::gemm_uop(true, p.acc_at(q), 0, 0)))));
            }),
            "uop loop 'q' cannot fold: its range [0, 0 + n) is not constant");
}

TEST(FoldUopLoops, KernelContentsAndScopesAreChecked) {
  Pads p;
  Var i("i");
  // an ALU call in a GEMM kernel
  EXPECT_EQ(
      user_error([&] { fold(p.wrap(ta::alu_uop(isa::AluOp::kAdd, true, 1, p.acc_at(0), p.acc_at(0)), 0)); }),
      "a GEMM kernel (accel.uop_kernel) may hold only loops and accel.gemm_uop calls, not: "
      "accel.alu_uop<int32>(2, 1, 1, tir.access_ptr<handle>(acc_buf, 0, 16, 3), "
      "tir.access_ptr<handle>(acc_buf, 0, 16, 3))\n");
  // a GEMM whose dst points into the input scratchpad
  EXPECT_EQ(
      user_error([&] { fold(p.wrap(ta::gemm_uop(false, p.inp_at(0), p.inp_at(0), p.wgt_at(0)))); }),
      "dst index of accel.gemm_uop points into buffer 'inp_buf' of scope local.inp_buffer, expected scope "
      "local.acc_buffer");
  // a bad kernel kind
  EXPECT_EQ(user_error([&] { fold(p.wrap(ta::gemm_uop(true, p.acc_at(0), 0, 0), 2)); }),
            "accel.uop_kernel value 2 is not 0 (GEMM) or 1 (ALU)");
}

}  // namespace
}  // namespace tessel::compiler::accel_tir::testing
