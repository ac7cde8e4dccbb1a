// tensorize_gemm: GEMM update and acc-init loop nests -> accel.gemm_uop kernels (the outer loops
// kept for fold_uop_loops), by matching the intrinsic's structure; mismatches are user errors
// naming what differs.
#include <gtest/gtest.h>

#include "compiler/backend/accel/tir/tensorize_gemm.h"
#include "compiler/tir/printer.h"
#include "tests/accel_tir/accel_tir_test_util.h"
#include "tests/tir/tir_test_util.h"

namespace tessel::compiler::accel_tir::testing {
namespace {

using isa::Module;
using tir::ForKind;

Stmt loop(const Var& v, int extent, Stmt body) { return tir::for_loop(v, 0, extent, ForKind::kSerial, body); }
Expr i32(Expr e) { return tir::cast(DataType::int32(), e); }

/// A tile of the default configuration: a_buf [2][4] INP elements, w_buf [2][4] WGT elements,
/// c_buf [2][2] ACC elements.
struct Tile {
  Buffer a_buf{"a_buf", DataType::int8(), {2, 4, 1, 16}, MemScope::kInp};
  Buffer w_buf{"w_buf", DataType::int8(), {2, 4, 16, 16}, MemScope::kWgt};
  Buffer c_buf{"c_buf", DataType::int32(), {2, 2, 1, 16}, MemScope::kAcc};
  Var r{"r"}, j{"j"}, q{"q"}, bb{"bb"}, oo{"oo"}, ii{"ii"};
  Var r0{"r"}, j0{"j"}, bb0{"bb"}, oo0{"oo"};  // the init nest's own loops
  tir::PrimFunc func(Stmt body) const {
    return tir::PrimFunc("gemm", {}, {}, tir::allocate(a_buf, tir::allocate(w_buf, tir::allocate(c_buf, body))));
  }
  Expr acc() const { return tir::buffer_load(c_buf, {r, j, bb, oo}); }
  Expr inp() const { return i32(tir::buffer_load(a_buf, {r, q, bb, ii})); }
  Expr wgt() const { return i32(tir::buffer_load(w_buf, {j, q, oo, ii})); }
  Stmt init() const {
    return loop(r0, 2, loop(j0, 2, loop(bb0, 1, loop(oo0, 16, tir::buffer_store(c_buf, 0, {r0, j0, bb0, oo0})))));
  }
  Stmt update(Expr value) const { return tir::buffer_store(c_buf, value, {r, j, bb, oo}); }
  /// The expected kernels.
  Stmt kernel(Stmt loops_and_uop) const {
    return ta::coproc_scope(Module::kCompute, tir::attr_stmt(Expr(), std::string(ta::kUopKernel), 0, loops_and_uop));
  }
  Expr acc_row() const { return ta::sram_ptr(isa::HwConfig{}, c_buf, r * 2 + j, 1, 3); }
  Stmt want_init() const {
    return kernel(
        loop(r0, 2, loop(j0, 2, ta::gemm_uop(true, ta::sram_ptr(isa::HwConfig{}, c_buf, r0 * 2 + j0, 1, 3), 0, 0))));
  }
  Stmt want_gemm() const {
    return kernel(loop(r, 2,
                       loop(j, 2,
                            loop(q, 4,
                                 ta::gemm_uop(false, acc_row(), ta::sram_ptr(isa::HwConfig{}, a_buf, r * 4 + q, 1, 1),
                                              ta::sram_ptr(isa::HwConfig{}, w_buf, j * 4 + q, 1, 1))))));
  }
};

TEST(TensorizeGemm, InitAndUpdateNestsOfATile) {
  Tile t;
  Stmt gemm = loop(
      t.r, 2,
      loop(t.j, 2, loop(t.q, 4, loop(t.bb, 1, loop(t.oo, 16, loop(t.ii, 16, t.update(t.acc() + t.inp() * t.wgt())))))));
  const tir::PrimFunc after = tensorize_gemm(t.func(tir::seq({t.init(), gemm})), isa::HwConfig{});
  tir::testing::expect_same_func(after, t.func(tir::seq({t.want_init(), t.want_gemm()})));
  expect_golden("tensorize_gemm_tile.ir", tir::to_text(after));
}

TEST(TensorizeGemm, InnerLoopOrderAndOperandOrderAreFree) {
  // the reduction loop outside the batch and output loops, product + acc, wgt * inp
  Tile t;
  Stmt gemm = loop(
      t.r, 2,
      loop(t.j, 2, loop(t.q, 4, loop(t.ii, 16, loop(t.bb, 1, loop(t.oo, 16, t.update(t.wgt() * t.inp() + t.acc())))))));
  tir::testing::expect_same_func(tensorize_gemm(t.func(gemm), isa::HwConfig{}), t.func(t.want_gemm()));
}

TEST(TensorizeGemm, BlockShapesFollowTheConfig) {
  // LOG_BATCH=1, LOG_BLOCK=3: acc [.., 2, 8], inp [.., 2, 8], wgt [.., 8, 8]; no outer loop
  isa::HwConfig cfg;
  cfg.log_batch = 1;
  cfg.log_block_in = cfg.log_block_out = 3;
  Buffer a("a_buf", DataType::int8(), {3, 2, 8}, MemScope::kInp);
  Buffer w("w_buf", DataType::int8(), {5, 8, 8}, MemScope::kWgt);
  Buffer c("c_buf", DataType::int32(), {7, 2, 8}, MemScope::kAcc);
  Var bb("bb"), oo("oo"), ii("ii");
  Stmt g =
      loop(bb, 2,
           loop(oo, 8,
                loop(ii, 8,
                     tir::buffer_store(c,
                                       tir::buffer_load(c, {6, bb, oo}) + i32(tir::buffer_load(a, {2, bb, ii})) *
                                                                              i32(tir::buffer_load(w, {4, oo, ii})),
                                       {6, bb, oo}))));
  auto fn = [&](Stmt body) {
    return tir::PrimFunc("g", {}, {}, tir::allocate(a, tir::allocate(w, tir::allocate(c, body))));
  };
  Stmt want = ta::coproc_scope(Module::kCompute, tir::attr_stmt(Expr(), std::string(ta::kUopKernel), 0,
                                                                ta::gemm_uop(false, ta::sram_ptr(cfg, c, 6, 1, 3),
                                                                             ta::sram_ptr(cfg, a, 2, 1, 1),
                                                                             ta::sram_ptr(cfg, w, 4, 1, 1))));
  tir::testing::expect_same_func(tensorize_gemm(fn(g), cfg), fn(want));
  // on the default configuration the trailing shapes differ
  EXPECT_EQ(user_error([&] { tensorize_gemm(fn(g), isa::HwConfig{}); }),
            "gemm nest at loop 'bb': acc buffer 'c_buf' of shape [7, 2, 8] is not a compact [.., 1, 16] buffer");
}

TEST(TensorizeGemm, PragmaNestsAndOtherScopesAreLeftAlone) {
  Tile t;
  Buffer g("g", DataType::int32(), {16});
  Var l("l");
  Stmt alu = tir::attr_stmt(
      Expr(), std::string(ta::kPragmaAlu), 1,
      loop(l, 16, tir::buffer_store(t.c_buf, tir::buffer_load(t.c_buf, {0, 0, 0, l}) + 1, {0, 0, 0, l})));
  Stmt other = loop(l, 16, tir::buffer_store(g, 0, {l}));
  Var pg("pg", DataType::handle());
  const tir::PrimFunc f("f", {pg}, {{pg, g}}, tir::allocate(t.c_buf, tir::seq({alu, other})));
  EXPECT_TRUE(tensorize_gemm(f, isa::HwConfig{})->body.same_as(f->body));
}

TEST(TensorizeGemm, MismatchesNameWhatDiffers) {
  Tile t;
  const isa::HwConfig cfg;
  auto nest = [&](Expr value, int oo_extent = 16) {
    return t.func(loop(
        t.r, 2,
        loop(t.q, 4,
             loop(t.bb, 1,
                  loop(t.oo, oo_extent, loop(t.ii, 16, tir::buffer_store(t.c_buf, value, {t.r, 0, t.bb, t.oo})))))));
  };
  Expr acc = tir::buffer_load(t.c_buf, {t.r, 0, t.bb, t.oo});
  Expr inp = t.inp();
  Expr wgt = i32(tir::buffer_load(t.w_buf, {0, t.q, t.oo, t.ii}));
  EXPECT_EQ(user_error([&] { tensorize_gemm(nest(acc + inp * wgt, 8), cfg); }),
            "gemm nest at loop 'r': loop 'oo' has extent 8, the intrinsic's dimension is 16");
  EXPECT_EQ(user_error([&] {
              tensorize_gemm(nest(acc + inp * i32(tir::buffer_load(t.w_buf, {0, t.q, t.ii, t.oo}))), cfg);
            }),
            "gemm nest at loop 'r': wgt 'w_buf' is indexed by 'ii' where acc has its output-channel variable 'oo'");
  EXPECT_EQ(user_error([&] { tensorize_gemm(nest(acc - inp * wgt), cfg); }),
            "gemm nest at loop 'r': the update (c_buf[r, 0, bb, oo] - (int32(a_buf[r, q, bb, ii]) * int32(w_buf[0, q, "
            "oo, ii]))) is not acc + product (or 0 for the init); an acc store outside pragma_dma_copy and pragma_alu "
            "must be a GEMM update or init");
  EXPECT_EQ(user_error([&] {
              tensorize_gemm(nest(tir::buffer_load(t.c_buf, {0, 0, t.bb, t.oo}) + inp * wgt), cfg);
            }),
            "gemm nest at loop 'r': neither operand of (c_buf[0, 0, bb, oo] + (int32(a_buf[r, q, bb, ii]) * "
            "int32(w_buf[0, q, oo, ii]))) loads 'c_buf' at the stored indices");
  EXPECT_EQ(user_error([&] { tensorize_gemm(nest(acc + inp * inp), cfg); }),
            "gemm nest at loop 'r': the product (int32(a_buf[r, q, bb, ii]) * int32(a_buf[r, q, bb, ii])) is not "
            "int32(<inp-scope int8 load>) * int32(<wgt-scope int8 load>)");
  EXPECT_EQ(user_error([&] {
              tensorize_gemm(nest(acc + inp * tir::buffer_load(t.c_buf, {0, 1, t.bb, t.oo})), cfg);
            }),
            "gemm nest at loop 'r': the product (int32(a_buf[r, q, bb, ii]) * c_buf[0, 1, bb, oo]) is not "
            "int32(<inp-scope int8 load>) * int32(<wgt-scope int8 load>)");
  // a leading index using the reduction variable
  EXPECT_EQ(
      user_error([&] {
        tensorize_gemm(nest(acc + i32(tir::buffer_load(t.a_buf, {t.r, floormod(t.ii, 4), t.bb, t.ii})) * wgt), cfg);
      }),
      "gemm nest at loop 'r': leading index floormod(ii, 4) of 'a_buf' uses the intrinsic's variable 'ii'");
  // the reduction loop missing from the innermost three
  EXPECT_EQ(
      user_error([&] {
        tensorize_gemm(
            t.func(loop(t.ii, 16,
                        loop(t.r, 2,
                             loop(t.bb, 1,
                                  loop(t.oo, 16,
                                       tir::buffer_store(t.c_buf,
                                                         acc + inp * i32(tir::buffer_load(t.w_buf, {0, 0, t.oo, t.ii})),
                                                         {t.r, 0, t.bb, t.oo})))))),
            cfg);
      }),
      "gemm nest at loop 'ii': loop 'r' is among the 3 innermost loops, which must be the loops over 'bb' (1), 'oo' "
      "(16), 'ii' (16)");
}

}  // namespace
}  // namespace tessel::compiler::accel_tir::testing
