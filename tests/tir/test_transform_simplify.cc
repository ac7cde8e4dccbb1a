// transforms/simplify: before/after pairs (TVM's CompareBeforeAfter style) and a before/after golden.
#include <gtest/gtest.h>

#include "compiler/tir/intrinsics.h"
#include "compiler/tir/transforms/simplify.h"
#include "tir_test_util.h"

namespace tessel::tir::transforms {
namespace {

using testing::expect_same_func;
using testing::expect_same_stmt;

Stmt run(const Stmt& s) {
  arith::Analyzer a;
  return simplify(s, a);
}

TEST(TransformSimplify, LoopVariablesAreBoundToTheirRanges) {
  Buffer b("B", DataType::int32(), {16});
  Var i("i");
  Stmt before = for_loop(i, 0, 16, ForKind::kSerial, buffer_store(b, floormod(i, 16) + floordiv(i, 16), {floordiv(i, 16) * 16 + i}));
  Var i2("i");
  Stmt expected = for_loop(i2, 0, 16, ForKind::kSerial, buffer_store(b, i2, {i2}));
  expect_same_stmt(run(before), expected);
}

TEST(TransformSimplify, RemovesEmptyLoopsAndInlinesSingleIterations) {
  Buffer b("B", DataType::int32(), {16});
  Var i("i"), j("j"), k("k"), k2("k2");
  Stmt before = for_loop(
      i, 0, 4, ForKind::kSerial,
      seq({for_loop(j, 0, 1, ForKind::kSerial, buffer_store(b, j * 3 + i, {j + i * 4})),
           for_loop(k, 0, 0, ForKind::kSerial, buffer_store(b, k, {k})),
           for_loop(k2, i, 4 - i - 4, ForKind::kSerial, buffer_store(b, k2, {k2})), evaluate(0)}));
  Var i2("i");
  Stmt expected = for_loop(i2, 0, 4, ForKind::kSerial, buffer_store(b, i2, {i2 * 4}));
  expect_same_stmt(run(before), expected);
}

TEST(TransformSimplify, KeepsSingleIterationThreadLoops) {
  Buffer b("B", DataType::int32(), {16});
  Var t("t");
  Stmt before = for_loop(t, 0, 1, ForKind::kThreadBinding, buffer_store(b, t + 0, {t}), "threadIdx.x");
  Var t2("t");
  Stmt expected = for_loop(t2, 0, 1, ForKind::kThreadBinding, buffer_store(b, 0, {0}), "threadIdx.x");
  expect_same_stmt(run(before), expected);
}

TEST(TransformSimplify, FoldsConstantConditions) {
  Buffer b("B", DataType::int32(), {16});
  Var i("i");
  Stmt before = for_loop(i, 0, 16, ForKind::kSerial,
                         seq({if_then_else(i < 16, buffer_store(b, 1, {i}), buffer_store(b, 2, {i})),
                              if_then_else(intrin::likely(i >= 16), buffer_store(b, 3, {i})),
                              if_then_else(i > 20, buffer_store(b, 4, {i}), buffer_store(b, 5, {i}))}));
  Var i2("i");
  Stmt expected = for_loop(i2, 0, 16, ForKind::kSerial, seq({buffer_store(b, 1, {i2}), buffer_store(b, 5, {i2})}));
  expect_same_stmt(run(before), expected);
}

TEST(TransformSimplify, BranchesKnowSimpleConditions) {
  Buffer b("B", DataType::int32(), {16});
  Var i("i");
  Stmt before = for_loop(i, 0, 16, ForKind::kSerial,
                         if_then_else(i < 8, buffer_store(b, min(i, 7), {floordiv(i, 8)}),
                                      buffer_store(b, max(i, 8), {floormod(i, 8) + 8})));
  Var i2("i");
  Stmt expected = for_loop(i2, 0, 16, ForKind::kSerial,
                           if_then_else(i2 < 8, buffer_store(b, i2, {0}), buffer_store(b, i2, {i2})));
  expect_same_stmt(run(before), expected);
  // likely() conditions give the same facts.
  Stmt before2 = for_loop(i, 0, 16, ForKind::kSerial, if_then_else(intrin::likely(i < 8), buffer_store(b, min(i, 9), {i})));
  Stmt expected2 = for_loop(i2, 0, 16, ForKind::kSerial, if_then_else(intrin::likely(i2 < 8), buffer_store(b, i2, {i2})));
  expect_same_stmt(run(before2), expected2);
}

TEST(TransformSimplify, LetStmtValuesGiveBounds) {
  Buffer b("B", DataType::int32(), {16});
  Var i("i"), t("t");
  Stmt before = for_loop(i, 0, 4, ForKind::kSerial, let_stmt(t, i * 2, buffer_store(b, floordiv(t, 8), {t + 1 - 1})));
  Var i2("i"), t2("t");
  Stmt expected = for_loop(i2, 0, 4, ForKind::kSerial, let_stmt(t2, i2 * 2, buffer_store(b, 0, {t2})));
  expect_same_stmt(run(before), expected);
}

TEST(TransformSimplify, AttributeNodesAreKept) {
  Buffer b("B", DataType::int32(), {16});
  Var vt("vt");
  Stmt before = for_loop(vt, 0, 2, ForKind::kVirtualThread,
                         attr_stmt(vt, "virtual_thread", Expr(1) + 1, buffer_store(b, vt + 0, {vt})));
  Var vt2("vt");
  Stmt expected = for_loop(vt2, 0, 2, ForKind::kVirtualThread, attr_stmt(vt2, "virtual_thread", 2, buffer_store(b, vt2, {vt2})));
  expect_same_stmt(run(before), expected);
}

TEST(TransformSimplify, UnchangedIsTheSameHandle) {
  Buffer b("B", DataType::int32(), {16});
  Var i("i"), n("n");
  Stmt s = for_loop(i, 0, n, ForKind::kSerial, buffer_store(b, i * 2, {floordiv(i, 4)}));
  EXPECT_TRUE(run(s).same_as(s));
}

TEST(TransformSimplify, PrimFunc) {
  Var a("A", DataType::handle());
  Buffer ab = Buffer::over(a, "A", DataType::int32(), {8, 8});
  Var i("i"), j("j");
  Stmt body = for_loop(i, 0, 8, ForKind::kSerial,
                       for_loop(j, 0, 8, ForKind::kSerial, buffer_store(ab, floordiv(i * 8 + j, 8), {i, floormod(i * 8 + j, 8)})));
  PrimFunc before("f", {a}, {{a, ab}}, body);
  Var i2("i"), j2("j");
  PrimFunc expected("f", {a}, {{a, ab}},
                    for_loop(i2, 0, 8, ForKind::kSerial, for_loop(j2, 0, 8, ForKind::kSerial, buffer_store(ab, i2, {i2, j2}))));
  expect_same_func(simplify(before), expected);
  testing::expect_before_after_golden("transform_simplify.tir", "simplify", before, simplify(before));
  PrimFunc done = simplify(expected);
  EXPECT_EQ(done.get(), expected.get());
}

}  // namespace
}  // namespace tessel::tir::transforms
