// transforms/loop_partition: before/after pairs, a before/after golden, and runs of the loop nest before and after the
// pass on the reference interpreter (tir_interpreter.h): the same stores happen in the same order.
#include <gtest/gtest.h>

#include "compiler/tir/intrinsics.h"
#include "compiler/tir/transforms/loop_partition.h"
#include "tir_interpreter.h"
#include "tir_test_util.h"

namespace tessel::tir::transforms {
namespace {

using testing::expect_same_func;
using testing::expect_same_stmt;
using testing::StoreRecord;

Stmt run(const Stmt& s) {
  arith::Analyzer a;
  return loop_partition(s, a);
}

// The statement as the body of a function over `a` must pass the verifier (single assignment).
void expect_well_formed(const Stmt& s, const Buffer& a) {
  PrimFunc f("f", {a->data}, {{a->data, a}}, s);
  std::vector<std::string> errs = verify(f);
  EXPECT_TRUE(errs.empty()) << to_text(f) << (errs.empty() ? "" : errs[0]);
}

std::vector<StoreRecord> execute(const Stmt& s) {
  testing::Interpreter in;
  std::vector<StoreRecord> out;
  in.record_stores(&out);
  in.run(s);
  return out;
}

// Counts the loops in `s` (to show the pieces exist) and the likely() branches left.
int count_loops(const Stmt& s) {
  int n = 0;
  std::function<void(const Stmt&)> walk = [&](const Stmt& x) {
    if (!x.defined()) return;
    if (const auto* f = x.as<ForNode>()) ++n, walk(f->body);
    else if (const auto* i = x.as<IfThenElseNode>()) walk(i->then_case), walk(i->else_case);
    else if (const auto* q = x.as<SeqStmtNode>()) for (const Stmt& y : q->seq) walk(y);
  };
  walk(s);
  return n;
}

int count_likely(const Stmt& s) {
  int n = 0;
  post_order_visit(s, [&](const Expr& e) {
    if (const auto* c = e.as<CallNode>(); c && c->op == intrin::kLikely) ++n;
  });
  return n;
}

TEST(TransformLoopPartition, EpilogueWhereTheConditionFails) {
  Buffer a("A", DataType::int32(), {16});
  Var i("i");
  Stmt before = for_loop(i, 0, 10, ForKind::kSerial, if_then_else(intrin::likely(i < 7), buffer_store(a, 1, {i})));
  Var i2("i");
  Stmt expected = for_loop(i2, 0, 7, ForKind::kSerial, buffer_store(a, 1, {i2}));
  expect_same_stmt(run(before), expected);
}

TEST(TransformLoopPartition, PrologueKeepsTheElseBranch) {
  Buffer a("A", DataType::int32(), {16});
  Var i("i");
  Stmt before = for_loop(i, 0, 10, ForKind::kSerial,
                         if_then_else(intrin::likely(i >= 3), buffer_store(a, 1, {i}), buffer_store(a, 2, {i})));
  Var p("i"), m("i");
  Stmt expected = seq({for_loop(p, 0, 3, ForKind::kSerial, buffer_store(a, 2, {p})),
                       for_loop(m, 3, 7, ForKind::kSerial, buffer_store(a, 1, {m}))});
  expect_same_stmt(run(before), expected);
}

TEST(TransformLoopPartition, ThreePiecesAndNegativeCoefficients) {
  Buffer a("A", DataType::int32(), {16});
  Var i("i");
  // 2 <= i < 8 written with two likely conditions; the second one has coefficient -1.
  Stmt inner = if_then_else(intrin::likely(9 - i > 1), buffer_store(a, 1, {i}), buffer_store(a, 3, {i}));
  Stmt before = for_loop(i, 0, 10, ForKind::kSerial, if_then_else(intrin::likely(i > 1), inner, buffer_store(a, 2, {i})));
  Var p("i"), m("i"), e("i");
  Stmt expected = seq({for_loop(p, 0, 2, ForKind::kSerial, buffer_store(a, 2, {p})),
                       for_loop(m, 2, 6, ForKind::kSerial, buffer_store(a, 1, {m})),
                       for_loop(e, 8, 2, ForKind::kSerial, buffer_store(a, 3, {e}))});
  Stmt after = run(before);
  expect_same_stmt(after, expected);
  EXPECT_EQ(execute(after), execute(before));
}

// 100 elements in tiles of 8, partitioned: 12 whole tiles, then the last one's 4 elements.
Stmt twelve_tiles_and_the_last(const Buffer& a) {
  Var io("io"), ii("ii"), ii2("ii");
  return seq({for_loop(io, 0, 12, ForKind::kSerial, for_loop(ii, 0, 8, ForKind::kSerial, buffer_store(a, io, {io * 8 + ii}))),
              for_loop(ii2, 0, 4, ForKind::kSerial, buffer_store(a, 12, {ii2 + 96}))});
}

TEST(TransformLoopPartition, BorderTilesBecomeTheirOwnLoops) {
  Buffer a("A", DataType::int32(), {100});
  Var io("io"), ii("ii");
  Stmt before = for_loop(io, 0, 13, ForKind::kSerial,
                         for_loop(ii, 0, 8, ForKind::kSerial,
                                  if_then_else(intrin::likely(io * 8 + ii < 100), buffer_store(a, io, {io * 8 + ii}))));
  Stmt after = run(before);
  expect_same_stmt(after, twelve_tiles_and_the_last(a));
  EXPECT_EQ(execute(after), execute(before));
}

// A clipped inner range (bound inference's min(f, E - io * f) for a split that does not
// divide): the last tile is peeled off, every piece with a constant extent; the same stores.
// A min that holds on the whole loop is no split point.
TEST(TransformLoopPartition, ClippedRangesPeelTheLastTile) {
  Buffer a("A", DataType::int32(), {100});
  Var io("io"), ii("ii");
  Stmt before = for_loop(io, 0, 13, ForKind::kSerial,
                         for_loop(ii, 0, min(Expr(8), Expr(100) - io * 8), ForKind::kSerial,
                                  buffer_store(a, io, {io * 8 + ii})));
  Stmt after = run(before);
  expect_same_stmt(after, twelve_tiles_and_the_last(a));
  EXPECT_EQ(execute(after), execute(before));
  // max: a range clipped from below (the first tile's window starting at a negative row)
  Stmt lower = for_loop(io, 0, 5, ForKind::kSerial,
                        for_loop(ii, max(Expr(0), Expr(1) - io * 4), Expr(4) - max(Expr(0), Expr(1) - io * 4),
                                 ForKind::kSerial, buffer_store(a, io, {io * 4 + ii})));
  Stmt lp = run(lower);
  EXPECT_EQ(count_loops(lp), 3);  // io's first iteration peeled: its ii loop, then io and ii
  EXPECT_EQ(execute(lp), execute(lower));
  // min(8, 200 - io * 8) is 8 on all of io in [0, 13): nothing to peel
  Stmt whole = for_loop(io, 0, 13, ForKind::kSerial,
                        for_loop(ii, 0, min(Expr(8), Expr(200) - io * 8), ForKind::kSerial,
                                 buffer_store(a, io, {io * 8 + ii})));
  EXPECT_EQ(count_loops(run(whole)), 2);
}

TEST(TransformLoopPartition, LeavesSymbolicAndUnlikelyLoops) {
  Buffer a("A", DataType::int32(), {100});
  Var i("i"), n("n");
  Stmt symbolic = for_loop(i, 0, n, ForKind::kSerial, if_then_else(intrin::likely(i < 7), buffer_store(a, 1, {i})));
  EXPECT_TRUE(run(symbolic).same_as(symbolic));
  Stmt plain = for_loop(i, 0, 10, ForKind::kSerial, if_then_else(i < 7, buffer_store(a, 1, {i})));
  EXPECT_TRUE(run(plain).same_as(plain));
  Stmt nonlinear = for_loop(i, 0, 10, ForKind::kSerial, if_then_else(intrin::likely(i * i < 7), buffer_store(a, 1, {i})));
  EXPECT_TRUE(run(nonlinear).same_as(nonlinear));
  Stmt parallel = for_loop(i, 0, 10, ForKind::kParallel, if_then_else(intrin::likely(i < 7), buffer_store(a, 1, {i})));
  EXPECT_TRUE(run(parallel).same_as(parallel));
  // The symbolic part of the condition has no constant bound: no split point.
  Stmt unbounded = for_loop(i, 0, 10, ForKind::kSerial, if_then_else(intrin::likely(i < n), buffer_store(a, 1, {i})));
  EXPECT_TRUE(run(unbounded).same_as(unbounded));
}

TEST(TransformLoopPartition, PrimFuncIsWellFormed) {
  Var av("A", DataType::handle());
  Buffer a = Buffer::over(av, "A", DataType::int32(), {30});
  Var io("io"), ii("ii");
  Stmt body = for_loop(io, 0, 4, ForKind::kSerial,
                       for_loop(ii, 0, 8, ForKind::kSerial,
                                if_then_else(intrin::likely(io * 8 + ii < 30), buffer_store(a, ii, {io * 8 + ii}))));
  PrimFunc before("f", {av}, {{av, a}}, body);
  PrimFunc after = loop_partition(before);
  Var io2("io"), ii2("ii"), ii3("ii");
  PrimFunc expected("f", {av}, {{av, a}},
                    seq({for_loop(io2, 0, 3, ForKind::kSerial,
                                  for_loop(ii2, 0, 8, ForKind::kSerial, buffer_store(a, ii2, {io2 * 8 + ii2}))),
                         for_loop(ii3, 0, 6, ForKind::kSerial, buffer_store(a, ii3, {ii3 + 24}))}));
  expect_same_func(after, expected);
  testing::expect_before_after_golden("transform_loop_partition.tir", "loop_partition", before, after);
}

// Tiled loops over every (size, tile) pair and condition form: the same stores in the same order.
TEST(TransformLoopPartition, SameIterationsOnTheReferenceInterpreter) {
  Buffer a("A", DataType::int32(), {64});
  int checked = 0, partitioned = 0;
  for (int n = 1; n <= 21; ++n) {
    for (int tile : {1, 2, 3, 4, 8}) {
      int tiles = (n + tile - 1) / tile;
      for (int form = 0; form < 4; ++form) {
        Var io("io"), ii("ii");
        Expr idx = io * tile + ii;
        Expr cond = form == 0 ? idx < n : form == 1 ? idx <= n - 1 : form == 2 ? n - 1 - idx >= 0 : n > idx;
        Stmt body = if_then_else(intrin::likely(cond), buffer_store(a, io * 100 + ii, {idx}),
                                 buffer_store(a, -1, {ii}));
        Stmt before = for_loop(io, 0, tiles, ForKind::kSerial, for_loop(ii, 0, tile, ForKind::kSerial, body));
        Stmt after = run(before);
        expect_well_formed(after, a);
        ASSERT_EQ(execute(after), execute(before)) << "n " << n << " tile " << tile << " form " << form << "\n"
                                                   << to_text(after);
        ++checked;
        if (count_loops(after) != 2) ++partitioned;
      }
    }
  }
  EXPECT_EQ(checked, 21 * 5 * 4);
  EXPECT_GT(partitioned, 0);
  // Two-dimensional tiles with a bound in each dimension.
  for (int h : {5, 8, 11}) {
    for (int w : {3, 7, 9}) {
      Var yo("yo"), yi("yi"), xo("xo"), xi("xi");
      Expr y = yo * 4 + yi, x = xo * 4 + xi;
      Stmt s = for_loop(
          yo, 0, (h + 3) / 4, ForKind::kSerial,
          for_loop(xo, 0, (w + 3) / 4, ForKind::kSerial,
                   for_loop(yi, 0, 4, ForKind::kSerial,
                            for_loop(xi, 0, 4, ForKind::kSerial,
                                     if_then_else(intrin::likely(y < h),
                                                  if_then_else(intrin::likely(x < w), buffer_store(a, y * 16 + x, {x})))))));
      Stmt after = run(s);
      expect_well_formed(after, a);
      EXPECT_EQ(count_likely(after), 0) << to_text(after);
      ASSERT_EQ(execute(after), execute(s)) << "h " << h << " w " << w << "\n" << to_text(after);
    }
  }
}

}  // namespace
}  // namespace tessel::tir::transforms
