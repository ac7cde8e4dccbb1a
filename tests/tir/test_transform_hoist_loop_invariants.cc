// transforms/hoist_loop_invariants: before/after pairs (what moves and what must stay), a golden
// dump, and runs before and after the pass on the reference interpreter (tir_interpreter.h):
// the same memory contents.
#include <gtest/gtest.h>

#include "compiler/tir/intrinsics.h"
#include "compiler/tir/transforms/hoist_loop_invariants.h"
#include "tir_interpreter.h"
#include "tir_test_util.h"

namespace tessel::tir::transforms {
namespace {

using testing::expect_golden;
using testing::expect_same_func;
using testing::expect_same_stmt;
using testing::run_on_patterns;

Stmt copy(const Buffer& dst, Expr doff, const Buffer& src, Expr soff, Expr n) {
  return evaluate(call(DataType::int32(), "test.copy",
                       {intrin::access_ptr(dst, std::move(doff), n, 2), intrin::access_ptr(src, std::move(soff), n, 1)}));
}
Stmt opaque(const std::string& op) { return evaluate(call(DataType::int32(), op, {})); }

TEST(TransformHoistLoopInvariants, WeightLoadsLeaveTheRowLoop) {
  Buffer x("X", DataType::int32(), {32}), w("W", DataType::int32(), {8}), y("Y", DataType::int32(), {32});
  Buffer inp("inp", DataType::int32(), {8}, MemScope::kInp), wgt("wgt", DataType::int32(), {8}, MemScope::kWgt);
  Var row("row"), c("c");
  auto compute = [&](const Var& r, const Var& col) {
    return for_loop(col, 0, 8, ForKind::kSerial,
                    buffer_store(y, buffer_load(inp, {col}) * buffer_load(wgt, {col}), {r * 8 + col}));
  };
  Stmt before = allocate(inp, allocate(wgt, for_loop(row, 0, 4, ForKind::kSerial,
                                                     seq({copy(wgt, 0, w, 0, 8), copy(inp, 0, x, row * 8, 8), compute(row, c)}))));
  Stmt after = hoist_loop_invariants(before);
  Var row2("row"), c2("c");
  Stmt expected = allocate(inp, allocate(wgt, seq({copy(wgt, 0, w, 0, 8),
                                                   for_loop(row2, 0, 4, ForKind::kSerial,
                                                            seq({copy(inp, 0, x, row2 * 8, 8), compute(row2, c2)}))})));
  expect_same_stmt(after, expected);
  EXPECT_EQ(run_on_patterns(before, {x, w, y}), run_on_patterns(after, {x, w, y}));
}

TEST(TransformHoistLoopInvariants, StoresMoveWhenTheirReadersFollowThem) {
  Buffer a("A", DataType::int32(), {4}), t("T", DataType::int32(), {2}), b("B", DataType::int32(), {8});
  Var i("i");
  // T[0] is written once per iteration, before its reader: it can be written once.
  Stmt before = for_loop(i, 0, 8, ForKind::kSerial,
                         seq({buffer_store(t, buffer_load(a, {0}) * 2, {0}), buffer_store(b, buffer_load(t, {0}) + i, {i})}));
  Var i2("i");
  Stmt expected = seq({buffer_store(t, buffer_load(a, {0}) * 2, {0}),
                       for_loop(i2, 0, 8, ForKind::kSerial, buffer_store(b, buffer_load(t, {0}) + i2, {i2}))});
  expect_same_stmt(hoist_loop_invariants(before), expected);
  EXPECT_EQ(run_on_patterns(before, {a, t, b}), run_on_patterns(hoist_loop_invariants(before), {a, t, b}));
  // With the reader first, iteration 0 reads the old T[0]: nothing moves.
  Stmt reversed = for_loop(i, 0, 8, ForKind::kSerial,
                           seq({buffer_store(b, buffer_load(t, {0}) + i, {i}), buffer_store(t, buffer_load(a, {0}) * 2, {0})}));
  EXPECT_TRUE(hoist_loop_invariants(reversed).same_as(reversed));
}

TEST(TransformHoistLoopInvariants, WhatMustStay) {
  Buffer a("A", DataType::int32(), {8}), b("B", DataType::int32(), {8}), t("T", DataType::int32(), {8});
  Buffer acc("acc", DataType::int32(), {8}, MemScope::kAcc);
  Var i("i"), n("n");
  std::vector<Stmt> loops = {
      // reads a buffer the loop writes
      for_loop(i, 0, 8, ForKind::kSerial, seq({buffer_store(b, i, {i}), buffer_store(t, buffer_load(b, {0}), {0})})),
      // reads what it writes (would run once instead of 8 times)
      for_loop(i, 0, 8, ForKind::kSerial, seq({buffer_store(t, buffer_load(t, {0}) + 1, {0}), buffer_store(b, i, {i})})),
      // another statement writes its buffer
      for_loop(i, 0, 8, ForKind::kSerial, seq({buffer_store(t, 1, {0}), buffer_store(t, 2, {i})})),
      // a call of unknown effect
      for_loop(i, 0, 8, ForKind::kSerial, seq({opaque("test.sync"), buffer_store(b, i, {i})})),
      // the loop may not run
      for_loop(i, 0, n, ForKind::kSerial, seq({buffer_store(t, 1, {0}), buffer_store(b, i, {i})})),
      // an accumulator access in a loop with a micro-op call (which writes the accumulator)
      for_loop(i, 0, 8, ForKind::kSerial, seq({opaque("test.gemm"), buffer_store(a, buffer_load(acc, {0}), {0})})),
      // not a serial loop
      for_loop(i, 0, 8, ForKind::kParallel, seq({buffer_store(t, 1, {0}), buffer_store(b, i, {i})})),
  };
  for (const Stmt& s : loops) EXPECT_TRUE(hoist_loop_invariants(s).same_as(s)) << to_text(hoist_loop_invariants(s));
  // Without the accumulator rule the accumulator read moves.
  HoistOptions none;
  none.opaque_call_scopes.clear();
  Var i2("i");
  expect_same_stmt(hoist_loop_invariants(loops[5], none),
                   seq({buffer_store(a, buffer_load(acc, {0}), {0}), for_loop(i2, 0, 8, ForKind::kSerial, opaque("test.gemm"))}));
}

TEST(TransformHoistLoopInvariants, DmaAroundMicroOps) {
  // A row loop with a weight load, an input load, a micro-op of unknown effect and a store of
  // the accumulator: only the weight load moves (the store reads the accumulator the micro-op
  // writes, the input load depends on the row). The buffers' scopes come from the function's
  // buffer map and the allocations (a buffer named only by access_ptr has an unknown scope and
  // stays where it is next to such calls).
  Var xp("X", DataType::handle()), wp("W", DataType::handle()), yp("Y", DataType::handle());
  Buffer x = Buffer::over(xp, "X", DataType::int8(), {64}), w = Buffer::over(wp, "W", DataType::int8(), {16});
  Buffer y = Buffer::over(yp, "Y", DataType::int32(), {64});
  Buffer inp("inp", DataType::int8(), {16}, MemScope::kInp), wgt("wgt", DataType::int8(), {16}, MemScope::kWgt);
  Buffer acc("acc", DataType::int32(), {16}, MemScope::kAcc);
  Var row("row");
  auto wrap = [&](Stmt s) { return allocate(inp, allocate(wgt, allocate(acc, std::move(s)))); };
  Stmt loop = for_loop(row, 0, 4, ForKind::kSerial,
                       seq({copy(inp, 0, x, row * 16, 16), copy(wgt, 0, w, 0, 16), opaque("test.gemm"),
                            copy(y, row * 16, acc, 0, 16)}));
  PrimFunc before("f", {xp, wp, yp}, {{xp, x}, {wp, w}, {yp, y}}, wrap(loop));
  Var xp2("X", DataType::handle()), wp2("W", DataType::handle()), yp2("Y", DataType::handle());
  Buffer x2 = Buffer::over(xp2, "X", DataType::int8(), {64}), w2 = Buffer::over(wp2, "W", DataType::int8(), {16});
  Buffer y2 = Buffer::over(yp2, "Y", DataType::int32(), {64});
  Var row2("row");
  Stmt expected = seq({copy(wgt, 0, w2, 0, 16),
                       for_loop(row2, 0, 4, ForKind::kSerial,
                                seq({copy(inp, 0, x2, row2 * 16, 16), opaque("test.gemm"), copy(y2, row2 * 16, acc, 0, 16)}))});
  expect_same_func(hoist_loop_invariants(before), PrimFunc("f", {xp2, wp2, yp2}, {{xp2, x2}, {wp2, w2}, {yp2, y2}}, wrap(expected)));
  // As a bare statement the global buffers' scopes are unknown: nothing moves.
  EXPECT_TRUE(hoist_loop_invariants(loop).same_as(loop));
}

TEST(TransformHoistLoopInvariants, ThroughSeveralLoopsAndChains) {
  Buffer a("A", DataType::int32(), {4}), t("T", DataType::int32(), {2}), u("U", DataType::int32(), {2});
  Buffer b("B", DataType::int32(), {4, 4});
  Var i("i"), j("j");
  // U[0] = T[0] + 1 reads T, which the loop writes, until T[0] = A[0] has left it; both are
  // invariant in both loops. The inner loop's extent is j + 1 >= 1 under j's range.
  Stmt before = for_loop(
      j, 0, 4, ForKind::kSerial,
      for_loop(i, 0, j + 1, ForKind::kSerial,
               seq({buffer_store(t, buffer_load(a, {0}), {0}), buffer_store(u, buffer_load(t, {0}) + 1, {0}),
                    buffer_store(b, buffer_load(u, {0}) + i, {j, i})})));
  Stmt after = hoist_loop_invariants(before);
  Var i2("i"), j2("j");
  Stmt expected = seq({buffer_store(t, buffer_load(a, {0}), {0}), buffer_store(u, buffer_load(t, {0}) + 1, {0}),
                       for_loop(j2, 0, 4, ForKind::kSerial,
                                for_loop(i2, 0, j2 + 1, ForKind::kSerial, buffer_store(b, buffer_load(u, {0}) + i2, {j2, i2})))});
  expect_same_stmt(after, expected);
  EXPECT_EQ(run_on_patterns(before, {a, t, u, b}), run_on_patterns(after, {a, t, u, b}));
  // A loop whose whole body moves disappears.
  Stmt all = for_loop(i, 0, 3, ForKind::kSerial, buffer_store(t, buffer_load(a, {1}), {1}));
  expect_same_stmt(hoist_loop_invariants(all), buffer_store(t, buffer_load(a, {1}), {1}));
}

TEST(TransformHoistLoopInvariants, PrimFuncGolden) {
  Var xp("X", DataType::handle()), wp("W", DataType::handle()), yp("Y", DataType::handle());
  Buffer x = Buffer::over(xp, "X", DataType::int32(), {4, 8}), w = Buffer::over(wp, "W", DataType::int32(), {8});
  Buffer y = Buffer::over(yp, "Y", DataType::int32(), {4, 8});
  Buffer wgt("wgt", DataType::int32(), {8}, MemScope::kWgt);
  Var r("r"), c("c");
  Stmt body = allocate(
      wgt, for_loop(r, 0, 4, ForKind::kSerial,
                    seq({copy(wgt, 0, w, 0, 8),
                         for_loop(c, 0, 8, ForKind::kSerial,
                                  buffer_store(y, buffer_load(x, {r, c}) * buffer_load(wgt, {c}), {r, c}))})));
  PrimFunc before("rows", {xp, wp, yp}, {{xp, x}, {wp, w}, {yp, y}}, body);
  PrimFunc after = hoist_loop_invariants(before);
  EXPECT_TRUE(verify(after).empty()) << to_text(after);
  expect_golden("transform_hoist_loop_invariants.tir", to_text(after));
  EXPECT_EQ(hoist_loop_invariants(after).get(), after.get());
  EXPECT_EQ(run_on_patterns(before->body, {x, w, y}, 1)[2], run_on_patterns(after->body, {x, w, y}, 1)[2]);
}

}  // namespace
}  // namespace tessel::tir::transforms
