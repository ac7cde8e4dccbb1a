// inject_dma_copy: copy loop nests under pragma_dma_copy -> one accel.dma_load / dma_store in
// its module's coproc_scope (INP and WGT loads, ACC and ACC_8BIT loads with pads from the
// select condition, OUT stores); every access no DMA can make is a user error naming the loop.
#include <gtest/gtest.h>

#include "compiler/backend/accel/tir/inject_dma_copy.h"
#include "compiler/tir/arith/analyzer.h"
#include "compiler/tir/printer.h"
#include "compiler/tir/util.h"
#include "tests/accel_tir/accel_tir_test_util.h"
#include "tests/tir/tir_test_util.h"

namespace tessel::compiler::accel_tir::testing {
namespace {

using isa::MemType;
using isa::Module;
using tir::ForKind;

Stmt loop(const Var& v, int extent, Stmt body) { return tir::for_loop(v, 0, extent, ForKind::kSerial, body); }
Stmt pragma(Stmt body) { return tir::attr_stmt(Expr(), std::string(ta::kPragmaDmaCopy), 1, body); }

/// A function over global buffers `globals` (parameters) and scratchpads `pads` (allocated
/// around the body, first outermost).
tir::PrimFunc func(const std::vector<Buffer>& globals, const std::vector<Buffer>& pads, Stmt body) {
  for (size_t k = pads.size(); k-- > 0;) body = tir::allocate(pads[k], body);
  std::vector<Var> params;
  std::vector<std::pair<Var, Buffer>> map;
  for (const Buffer& b : globals) {
    Var p(b->name + "_param", DataType::handle());
    params.push_back(p);
    map.emplace_back(p, b);
  }
  return tir::PrimFunc("copy", params, map, body);
}

tir::PrimFunc lower(const tir::PrimFunc& f, const isa::HwConfig& cfg = {}) { return inject_dma_copy(f, cfg); }

/// The blocked matmul operands of the default configuration: a [8][4][1][16] INP elements,
/// w [4][4][16][16] WGT elements, c [8][4][1][16] OUT elements.
struct Mm {
  Buffer a{"a", DataType::int8(), {8, 4, 1, 16}};
  Buffer w{"w", DataType::int8(), {4, 4, 16, 16}};
  Buffer c{"c", DataType::int8(), {8, 4, 1, 16}};
  Buffer a_buf{"a_buf", DataType::int8(), {8, 1, 16}, MemScope::kInp};
  Buffer w_buf{"w_buf", DataType::int8(), {8, 16, 16}, MemScope::kWgt};
  Buffer c_buf{"c_buf", DataType::int32(), {4, 1, 16}, MemScope::kAcc};
};

TEST(InjectDmaCopy, InpWgtLoadsAndStoreOfATile) {
  // for mo < 4 { a_buf <- a rows mo*2..+2 (all 4 k blocks); w_buf <- w rows 2..3; c <- c_buf (2x2 blocks) }
  Mm m;
  Var mo("mo"), r("r"), q("q"), bb("bb"), ii("ii"), j("j"), oo("oo"), r2("r"), j2("j"), l("l");
  Stmt ld_a = pragma(loop(r, 2,
                          loop(q, 4,
                               loop(bb, 1,
                                    loop(ii, 16,
                                         tir::buffer_store(m.a_buf, tir::buffer_load(m.a, {mo * 2 + r, q, bb, ii}),
                                                           {r * 4 + q, bb, ii}))))));
  Stmt ld_w = pragma(loop(
      j, 2,
      loop(q, 4,
           loop(oo, 16,
                loop(ii, 16,
                     tir::buffer_store(m.w_buf, tir::buffer_load(m.w, {j + 2, q, oo, ii}), {j * 4 + q, oo, ii}))))));
  Stmt st_c = pragma(
      loop(r2, 2,
           loop(j2, 2,
                loop(l, 16,
                     tir::buffer_store(m.c, tir::cast(DataType::int8(), tir::buffer_load(m.c_buf, {r2 * 2 + j2, 0, l})),
                                       {mo * 2 + r2, j2 + 2, 0, l})))));
  const tir::PrimFunc before =
      func({m.a, m.w, m.c}, {m.a_buf, m.w_buf, m.c_buf}, loop(mo, 4, tir::seq({ld_a, ld_w, st_c})));
  const tir::PrimFunc after = lower(before);
  // a: 8 INP elements from element mo*8 (its 2 rows of 4 blocks are whole rows of a, one run);
  // w: 8 WGT elements from element 8 (the same); c: 2 rows of 2 OUT elements, stride 4, from
  // element mo*8 + 2 (half rows of c: a rectangle)
  Stmt want =
      loop(mo, 4,
           tir::seq({ta::coproc_scope(Module::kLoad, ta::dma_load(isa::HwConfig{}, MemType::kInp, m.a_buf, 0, m.a, mo * 8, 1, 8, 8)),
                     ta::coproc_scope(Module::kLoad, ta::dma_load(isa::HwConfig{}, MemType::kWgt, m.w_buf, 0, m.w, 8, 1, 8, 8)),
                     ta::coproc_scope(Module::kStore, ta::dma_store(isa::HwConfig{}, m.c_buf, 0, m.c, mo * 8 + 2, 2, 2, 4))}));
  tir::testing::expect_same_func(after, func({m.a, m.w, m.c}, {m.a_buf, m.w_buf, m.c_buf}, want));
  expect_golden("inject_dma_copy_tile.ir", tir::to_text(after));
  // nothing else changes: a second run finds no pragma
  EXPECT_TRUE(lower(after)->body.same_as(after->body));
}

// A window narrower than its buffer (a smaller last tile in a buffer of the full tile's shape:
// rows 5 INP elements apart, 4 copied): no y group, so one LOAD per row with the row loop around
// it; the bound on that row loop (the padding above the image) makes row 0 a pads-only LOAD
// (y_size 0, one pad row, DRAM start 0) and rows 1..2 real ones (y_size 1); the column bound
// stays the DMA's x pad.
TEST(InjectDmaCopy, NarrowWindowRowsAreOneDmaEachAndPaddingRowsPadsOnly) {
  Buffer x("x", DataType::int8(), {4, 6, 1, 16});             // 4 rows x 6 columns of INP elements
  Buffer win("win", DataType::int8(), {3, 5, 1, 16}, MemScope::kInp);  // the full tile's window
  Var y("y"), c("c"), bb("bb"), ii("ii");
  const Expr in = (y >= 1) && (c >= 1);
  Stmt body = pragma(loop(
      y, 3,
      loop(c, 4,
           loop(bb, 1,
                loop(ii, 16,
                     tir::buffer_store(win, tir::select(in, tir::buffer_load(x, {y - 1, c - 1 + 2, bb, ii}),
                                                        tir::make_const(DataType::int8(), 0)),
                                       {y, c, bb, ii}))))));
  const tir::PrimFunc after = lower(func({x}, {win}, body));
  const tir::ForNode* row = nullptr;
  const tir::CallNode* dma = nullptr;
  tir::post_order_visit(after->body, [&](const Expr& e) {
    if (const auto* call = e.as<tir::CallNode>(); call && call->op == ta::kDmaLoad) dma = call;
  });
  if (const auto* a = after->body.as<tir::AllocateNode>()) row = a->body.as<tir::ForNode>();
  ASSERT_NE(row, nullptr) << tir::to_text(after);
  ASSERT_NE(dma, nullptr) << tir::to_text(after);
  EXPECT_EQ(row->loop_var.name(), "y");
  for (int64_t v = 0; v < 3; ++v) {
    const std::map<const tir::VarNode*, int64_t> env{{row->loop_var.get(), v}};
    auto arg = [&](size_t k) { return tir::arith::eval_int(dma->args[k], env); };
    EXPECT_EQ(arg(3), v == 0 ? 0 : 1) << "y_size at row " << v;    // pads only above the image
    EXPECT_EQ(arg(4), 3) << "x_size";                               // 4 columns, the first a pad
    EXPECT_EQ(arg(6), 0) << "y_pad_0";
    EXPECT_EQ(arg(7), v == 0 ? 1 : 0) << "y_pad_1";
    EXPECT_EQ(arg(8), 1) << "x_pad_0";
    EXPECT_EQ(arg(9), 0) << "x_pad_1";
  }
}

TEST(InjectDmaCopy, ElementShapeFollowsTheConfig) {
  // LOG_BATCH=1: an INP element is 2x16; the element loops (bb < 2, ii < 16) step 16 and 1; r and
  // q walk 6 consecutive elements on both sides: one run
  isa::HwConfig cfg;
  cfg.log_batch = 1;
  Buffer a("a", DataType::int8(), {4, 3, 2, 16});
  Buffer a_buf("a_buf", DataType::int8(), {6, 2, 16}, MemScope::kInp);
  Var r("r"), q("q"), bb("bb"), ii("ii");
  Stmt body = pragma(loop(
      r, 2,
      loop(
          q, 3,
          loop(bb, 2,
               loop(ii, 16, tir::buffer_store(a_buf, tir::buffer_load(a, {r + 1, q, bb, ii}), {r * 3 + q, bb, ii}))))));
  const tir::PrimFunc after = lower(func({a}, {a_buf}, body), cfg);
  tir::testing::expect_same_func(
      after, func({a}, {a_buf}, ta::coproc_scope(Module::kLoad, ta::dma_load(cfg, MemType::kInp, a_buf, 0, a, 3, 1, 6, 6))));
  // the same nest on the default configuration: a 1x16 element, so bb < 2 is a third outer
  // loop; r, q and bb walk 12 consecutive elements on both sides: one run of 12 from element 6
  tir::testing::expect_same_func(
      lower(func({a}, {a_buf}, body)),
      func({a}, {a_buf},
           ta::coproc_scope(Module::kLoad, ta::dma_load(isa::HwConfig{}, MemType::kInp, a_buf, 0, a, 6, 1, 12, 12))));
}

TEST(InjectDmaCopy, AccLoadsAndPadsFromTheSelectCondition) {
  // int32 rows -> LOAD ACC (compute module); int8 rows widened -> LOAD ACC_8BIT with pads
  Buffer b32("b32", DataType::int32(), {4, 1, 16});
  Buffer img("img", DataType::int8(), {2, 3, 1, 16});
  Buffer x8("x8", DataType::int8(), {6, 1, 16});
  Buffer acc("acc_buf", DataType::int32(), {24, 1, 16}, MemScope::kAcc);
  Var r("r"), l("l"), y("y"), x("x");
  Stmt ld32 = pragma(loop(r, 4, loop(l, 16, tir::buffer_store(acc, tir::buffer_load(b32, {r, 0, l}), {r + 8, 0, l}))));
  // one row loop: x pads 1 and 1 around 6 elements (likely() around the terms)
  Expr in1 = tir::intrin::likely(r >= 1) && tir::intrin::likely(r < 7);
  Stmt ld1 =
      pragma(loop(r, 8,
                  loop(l, 16,
                       tir::buffer_store(
                           acc, tir::select(in1, tir::cast(DataType::int32(), tir::buffer_load(x8, {r - 1, 0, l})), 0),
                           {r, 0, l}))));
  // a 4 x 6 rectangle around the 2 x 3 image: y pads 1/1, x pads 2/1
  Expr in2 = y >= 1 && 3 > y && x - 2 >= 0 && x <= 4;
  Stmt ld2 = pragma(loop(
      y, 4,
      loop(x, 6,
           loop(l, 16,
                tir::buffer_store(
                    acc, tir::select(in2, tir::cast(DataType::int32(), tir::buffer_load(img, {y - 1, x - 2, 0, l})), 0),
                    {y * 6 + x, 0, l})))));
  const tir::PrimFunc after = lower(func({b32, img, x8}, {acc}, tir::seq({ld32, ld1, ld2})));
  Stmt want =
      tir::seq({ta::coproc_scope(Module::kCompute, ta::dma_load(isa::HwConfig{}, MemType::kAcc, acc, 8, b32, 0, 1, 4, 4)),
                ta::coproc_scope(Module::kCompute, ta::dma_load(isa::HwConfig{}, MemType::kAcc8, acc, 0, x8, 0, 1, 6, 6, 0, 0, 1, 1)),
                ta::coproc_scope(Module::kCompute, ta::dma_load(isa::HwConfig{}, MemType::kAcc8, acc, 0, img, 0, 2, 3, 3, 1, 1, 2, 1))});
  tir::testing::expect_same_func(after, func({b32, img, x8}, {acc}, want));
  expect_golden("inject_dma_copy_pads.ir", tir::to_text(after));
}

TEST(InjectDmaCopy, LoopsOutsideTheRectangleStayLoopsAroundTheDma) {
  // Loops that walk contiguous runs on both sides merge; what is left beyond a 2-D rectangle
  // (or what no rectangle can take) stays a loop, one DMA per iteration.
  Mm m;
  Var r("r"), q("q"), z("z"), c("c"), y("y"), x("x"), ii("ii");
  auto st = [&](std::vector<Expr> sram, std::vector<Expr> dram) {
    return tir::buffer_store(m.a_buf, tir::buffer_load(m.a, dram), sram);
  };
  // z and r merge (z steps both sides by 2 x r's step): a 4 x 2 rectangle, stride 4
  Stmt merged = pragma(loop(z, 2, loop(r, 2, loop(q, 2, loop(ii, 16, st({z * 4 + r * 2 + q, 0, ii}, {z * 2 + r, q, 0, ii}))))));
  // scratchpad rows in column-major order: no rectangle, 8 single-element DMAs
  Stmt colmajor = pragma(loop(r, 2, loop(q, 4, loop(ii, 16, st({q * 2 + r, 0, ii}, {r, q, 0, ii})))));
  // DRAM rows walked backwards: rows of 4 elements, one DMA per row
  Stmt backwards = pragma(loop(r, 2, loop(q, 4, loop(ii, 16, st({r * 4 + q, 0, ii}, {1 - r, q, 0, ii})))));
  // a padded 4 x 4 window of each of two channel blocks of a 2 x 2 image: the pad condition
  // keeps y and x apart, so the channel loop stays outside the padded rectangle
  Buffer img("img", DataType::int8(), {2, 2, 2, 1, 16});
  Buffer win("win", DataType::int8(), {2, 4, 4, 1, 16}, MemScope::kInp);
  Expr in = y >= 1 && y < 3 && x >= 1 && x < 3;
  Stmt padded = pragma(loop(
      c, 2,
      loop(y, 4,
           loop(x, 4,
                loop(ii, 16,
                     tir::buffer_store(win,
                                       tir::select(in, tir::buffer_load(img, {c, y - 1, x - 1, 0, ii}),
                                                   tir::make_const(DataType::int8(), 0)),
                                       {c, y, x, 0, ii}))))));
  const tir::PrimFunc after =
      lower(func({m.a, img}, {m.a_buf, win}, tir::seq({merged, colmajor, backwards, padded})));
  expect_golden("inject_dma_copy_loops.ir", tir::to_text(after));
  const std::string text = tir::to_text(after);
  EXPECT_NE(text.find("tir.access_ptr<handle>(a, 0, 256, 1), 4, 2, 4, 0, 0, 0, 0)"), std::string::npos) << text;
}

TEST(InjectDmaCopy, AccessesNoDmaCanMakeAreUserErrors) {
  Mm m;
  Var r("r"), q("q"), z("z"), ii("ii"), l("l");
  auto a_copy = [&](Stmt nest) { return lower(func({m.a, m.c}, {m.a_buf, m.w_buf, m.c_buf}, pragma(nest))); };
  auto st = [&](std::vector<Expr> sram, std::vector<Expr> dram) {
    return tir::buffer_store(m.a_buf, tir::buffer_load(m.a, dram), sram);
  };
  // not linear
  EXPECT_EQ(user_error([&] {
              a_copy(loop(r, 2, loop(ii, 16, st({r, 0, ii}, {r * r, 0, 0, ii}))));
            }),
            "the index of dram buffer 'a' of the copy under pragma_dma_copy at loop 'r': (((r * r) * 64) + ii) is not "
            "linear in the loop variables");
  // half an element, and two
  EXPECT_EQ(user_error([&] {
              a_copy(loop(r, 2, loop(ii, 8, st({r, 0, ii}, {r, 0, 0, ii}))));
            }),
            "loop 'r' of the copy under pragma_dma_copy at loop 'r': scratchpad 'a_buf' steps by 16, but the "
            "innermost loops must walk one 1x16 local.inp_buffer element contiguously (step 8 here)");
  EXPECT_EQ(user_error([&] {
              a_copy(loop(r, 2, loop(ii, 32, st({r, 0, ii}, {r, 0, 0, ii}))));
            }),
            "the copy under pragma_dma_copy at loop 'r': the innermost loops cover 32 values, but one 1x16 "
            "local.inp_buffer element has 16");
  // a pad of 16 columns
  Buffer big("c_big", DataType::int32(), {32, 1, 16}, MemScope::kAcc);
  Stmt wide2 = loop(
      q, 32,
      loop(ii, 16,
           tir::buffer_store(
               big, tir::select(q >= 16, tir::cast(DataType::int32(), tir::buffer_load(m.c, {0, q - 16, 0, ii})), 0),
               {q, 0, ii})));
  EXPECT_EQ(user_error([&] { lower(func({m.c}, {big}, pragma(wide2))); }),
            "the copy under pragma_dma_copy at loop 'q': a pad of 16 columns exceeds the 4-bit pad field (at most 15)");
  // a condition that is no bound of the row loop
  Stmt odd = loop(
      q, 4,
      loop(ii, 16,
           tir::buffer_store(
               m.c_buf, tir::select(q * 2 >= 1, tir::cast(DataType::int32(), tir::buffer_load(m.c, {0, q, 0, ii})), 0),
               {q, 0, ii})));
  EXPECT_EQ(
      user_error([&] { lower(func({m.c}, {m.c_buf}, pragma(odd))); }),
      "the copy under pragma_dma_copy at loop 'q': the pad condition ((q * 2) >= 1) is not a bound with unit step on "
      "the row or column loop");
  Stmt elem_pad =
      loop(q, 4,
           loop(ii, 16,
                tir::buffer_store(
                    m.c_buf, tir::select(ii < 8, tir::cast(DataType::int32(), tir::buffer_load(m.c, {0, q, 0, ii})), 0),
                    {q, 0, ii})));
  EXPECT_EQ(user_error([&] { lower(func({m.c}, {m.c_buf}, pragma(elem_pad))); }),
            "the copy under pragma_dma_copy at loop 'q': the pad condition (ii < 8) is not a bound with unit step on the "
            "row or column loop");
  // WGT loads cannot pad
  Var oo("oo");
  Stmt wpad = loop(q, 4,
                   loop(oo, 16,
                        loop(ii, 16,
                             tir::buffer_store(m.w_buf,
                                               tir::select(q >= 1, tir::buffer_load(m.w, {0, q - 1, oo, ii}),
                                                           tir::make_const(DataType::int8(), 0)),
                                               {q, oo, ii}))));
  EXPECT_EQ(user_error([&] { lower(func({m.w}, {m.w_buf}, pragma(wpad))); }),
            "the copy under pragma_dma_copy at loop 'q': wgt loads cannot pad (condition (q >= 1))");
  // global -> global, and a body that is not one store
  Buffer g2("g2", DataType::int8(), {8, 4, 1, 16});
  EXPECT_EQ(
      user_error([&] {
        lower(func({m.a, g2}, {},
                   pragma(loop(ii, 16, tir::buffer_store(g2, tir::buffer_load(m.a, {0, 0, 0, ii}), {0, 0, 0, ii})))));
      }),
      "the copy under pragma_dma_copy at loop 'ii' moves global buffer 'a' into global buffer 'g2'; a DMA moves "
      "a global buffer into an inp, wgt or acc scratchpad, or an acc scratchpad into a global buffer");
  EXPECT_EQ(user_error([&] {
              lower(func({m.a}, {m.a_buf},
                         pragma(loop(r, 2, tir::seq({st({r, 0, 0}, {r, 0, 0, 0}), st({r, 0, 1}, {r, 0, 0, 1})})))));
            }),
            "the copy under pragma_dma_copy at loop 'r' is not a loop nest around one buffer store: "
            "a_buf[r, 0, 0] = a[r, 0, 0, 0]\na_buf[r, 0, 1] = a[r, 0, 0, 1]\n");
  // a store of unconverted int32 values (OUT is int8), and int32 into INP
  Buffer c32("c32", DataType::int32(), {4, 1, 16});
  EXPECT_EQ(
      user_error([&] {
        lower(func({c32}, {m.c_buf},
                   pragma(loop(ii, 16, tir::buffer_store(c32, tir::buffer_load(m.c_buf, {0, 0, ii}), {0, 0, ii})))));
      }),
      "the copy under pragma_dma_copy at loop 'ii': a copy 'c_buf' (int32) -> 'c32' (int32) is no DMA form "
      "(int8 into inp/wgt, int32 or int32(int8) into acc, int8(acc) into global int8)");
  Buffer i32buf("i32buf", DataType::int32(), {4, 1, 16}, MemScope::kInp);
  EXPECT_EQ(
      user_error([&] {
        lower(func({c32}, {i32buf},
                   pragma(loop(ii, 16, tir::buffer_store(i32buf, tir::buffer_load(c32, {0, 0, ii}), {0, 0, ii})))));
      }),
      "the copy under pragma_dma_copy at loop 'ii': scratchpad 'i32buf' holds int32, scope local.inp_buffer "
      "holds int8");
}

}  // namespace
}  // namespace tessel::compiler::accel_tir::testing
