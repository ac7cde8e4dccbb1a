// transforms/unroll_loops: before/after pairs, errors, a golden dump, and runs before and after
// the pass on the reference interpreter (tir_interpreter.h): the same memory contents.
#include <gtest/gtest.h>

#include "compiler/tir/transforms/unroll_loops.h"
#include "support/error.h"
#include "tir_interpreter.h"
#include "tir_test_util.h"

namespace tessel::tir::transforms {
namespace {

using testing::expect_golden;
using testing::expect_same_func;
using testing::expect_same_stmt;
using testing::run_on_patterns;

TEST(TransformUnrollLoops, CopiesWithTheLoopVariableSubstituted) {
  Buffer a("A", DataType::int32(), {8}), b("B", DataType::int32(), {4});
  Var i("i");
  Stmt before = for_loop(i, 0, 4, ForKind::kUnrolled, buffer_store(b, buffer_load(a, {i * 2 + 1}) + i, {i}));
  Stmt expected = seq({buffer_store(b, buffer_load(a, {1}), {0}), buffer_store(b, buffer_load(a, {3}) + 1, {1}),
                       buffer_store(b, buffer_load(a, {5}) + 2, {2}), buffer_store(b, buffer_load(a, {7}) + 3, {3})});
  expect_same_stmt(unroll_loops(before), expected);
}

TEST(TransformUnrollLoops, NonConstantMinInsideASerialLoop) {
  Buffer b("B", DataType::int32(), {64});
  Var j("j"), i("i"), n("n");
  Stmt before = for_loop(j, 0, n, ForKind::kSerial,
                         for_loop(i, j * 2, 2, ForKind::kUnrolled, buffer_store(b, j, {i})));
  Var j2("j");
  Stmt expected = for_loop(j2, 0, n, ForKind::kSerial,
                           seq({buffer_store(b, j2, {j2 * 2}), buffer_store(b, j2, {j2 * 2 + 1})}));
  expect_same_stmt(unroll_loops(before), expected);
}

TEST(TransformUnrollLoops, BranchesDecidedByTheCopyFold) {
  Buffer b("B", DataType::int32(), {4});
  Var i("i");
  Stmt before = for_loop(i, 0, 3, ForKind::kUnrolled,
                         if_then_else(i < 1, buffer_store(b, 1, {i}), buffer_store(b, floordiv(i, 2) + 2, {i})));
  Stmt expected = seq({buffer_store(b, 1, {0}), buffer_store(b, 2, {1}), buffer_store(b, 3, {2})});
  expect_same_stmt(unroll_loops(before), expected);
  // An empty unrolled loop is a no-op.
  EXPECT_TRUE(is_no_op(unroll_loops(for_loop(i, 0, 0, ForKind::kUnrolled, buffer_store(b, 1, {i})))));
}

TEST(TransformUnrollLoops, NestedUnrolledLoopsGiveEveryCombination) {
  Buffer b("B", DataType::int32(), {2, 3});
  Var i("i"), j("j");
  Stmt before = for_loop(i, 0, 2, ForKind::kUnrolled,
                         for_loop(j, 0, 3, ForKind::kUnrolled, buffer_store(b, i * 10 + j, {i, j})));
  std::vector<Stmt> want;
  for (int x = 0; x < 2; ++x) {
    for (int y = 0; y < 3; ++y) want.push_back(buffer_store(b, x * 10 + y, {x, y}));
  }
  expect_same_stmt(unroll_loops(before), seq(want));
}

TEST(TransformUnrollLoops, CopiesGetFreshBinders) {
  Var a("A", DataType::handle());
  Buffer ab = Buffer::over(a, "A", DataType::int32(), {2, 4});
  Buffer tmp("tmp", DataType::int32(), {4}, MemScope::kLocal);
  Var i("i"), k("k"), t("t");
  Var k2("k");
  Stmt body = for_loop(
      i, 0, 2, ForKind::kUnrolled,
      allocate(tmp, seq({for_loop(k, 0, 4, ForKind::kSerial, let_stmt(t, k + i, buffer_store(tmp, t, {k}))),
                         for_loop(k2, 0, 4, ForKind::kSerial, buffer_store(ab, buffer_load(tmp, {k2}), {i, k2}))})));
  PrimFunc before("f", {a}, {{a, ab}}, body);
  PrimFunc after = unroll_loops(before);
  std::vector<std::string> errs = verify(after);
  EXPECT_TRUE(errs.empty()) << to_text(after) << (errs.empty() ? "" : errs[0]);
  // Two allocations, each with its own data variable.
  const auto* s = after->body.as<SeqStmtNode>();
  ASSERT_TRUE(s != nullptr);
  ASSERT_EQ(s->seq.size(), 2u);
  const auto* a0 = s->seq[0].as<AllocateNode>();
  const auto* a1 = s->seq[1].as<AllocateNode>();
  ASSERT_TRUE(a0 && a1);
  EXPECT_FALSE(a0->buffer->data.same_as(a1->buffer->data));
  expect_golden("transform_unroll_loops.tir", to_text(after));
  EXPECT_EQ(run_on_patterns(before->body, {ab}), run_on_patterns(after->body, {ab}));
  EXPECT_EQ(run_on_patterns(after->body, {ab})[0], (std::vector<int64_t>{0, 1, 2, 3, 1, 2, 3, 4}));
}

TEST(TransformUnrollLoops, NonConstantExtentIsAUserError) {
  Buffer b("B", DataType::int32(), {16});
  Var i("i"), n("n");
  Stmt s = for_loop(i, 0, n, ForKind::kUnrolled, buffer_store(b, 0, {i}));
  try {
    unroll_loops(s);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "unroll: loop 'i' has non-constant extent n");
  }
  Stmt big = for_loop(i, 0, 5000, ForKind::kUnrolled, buffer_store(b, 0, {0}));
  try {
    unroll_loops(big);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "unroll: loop 'i' has 5000 iterations, more than the limit 4096");
  }
  // An extent that simplifies to a constant is fine.
  Stmt ok = for_loop(i, 0, n - n + 2, ForKind::kUnrolled, buffer_store(b, 0, {i}));
  expect_same_stmt(unroll_loops(ok), seq({buffer_store(b, 0, {0}), buffer_store(b, 0, {1})}));
}

TEST(TransformUnrollLoops, AutoUnrollsSmallInnermostSerialLoops) {
  Buffer b("B", DataType::int32(), {8, 8});
  Var i("i"), j("j"), k("k"), v("v");
  Stmt before = for_loop(i, 0, 2, ForKind::kSerial,
                         seq({for_loop(j, 0, 3, ForKind::kSerial, buffer_store(b, 1, {i, j})),
                              for_loop(k, 0, 8, ForKind::kSerial, buffer_store(b, 2, {i, k})),
                              for_loop(v, 0, 2, ForKind::kParallel, buffer_store(b, 3, {i, v}))}));
  // Without the option nothing changes.
  EXPECT_TRUE(unroll_loops(before).same_as(before));
  UnrollOptions opt;
  opt.max_auto_extent = 4;
  Var i2("i"), k2("k"), v2("v");
  Stmt expected = for_loop(i2, 0, 2, ForKind::kSerial,
                           seq({buffer_store(b, 1, {i2, 0}), buffer_store(b, 1, {i2, 1}), buffer_store(b, 1, {i2, 2}),
                                for_loop(k2, 0, 8, ForKind::kSerial, buffer_store(b, 2, {i2, k2})),
                                for_loop(v2, 0, 2, ForKind::kParallel, buffer_store(b, 3, {i2, v2}))}));
  expect_same_stmt(unroll_loops(before, opt), expected);
  // The outer loop is not innermost, so it stays even with a large limit.
  opt.max_auto_extent = 100;
  Stmt all = unroll_loops(before, opt);
  ASSERT_TRUE(all.as<ForNode>() != nullptr);
  EXPECT_EQ(all.as<ForNode>()->kind, ForKind::kSerial);
}

TEST(TransformUnrollLoops, PrimFuncUnchangedIsTheSameHandle) {
  Var a("A", DataType::handle());
  Buffer ab = Buffer::over(a, "A", DataType::int32(), {16});
  Var i("i");
  PrimFunc f("f", {a}, {{a, ab}}, for_loop(i, 0, 16, ForKind::kSerial, buffer_store(ab, i, {i})));
  EXPECT_EQ(unroll_loops(f).get(), f.get());
  PrimFunc g("f", {a}, {{a, ab}}, for_loop(i, 0, 2, ForKind::kUnrolled, buffer_store(ab, i, {i})));
  Var a2("A", DataType::handle());
  Buffer ab2 = Buffer::over(a2, "A", DataType::int32(), {16});
  expect_same_func(unroll_loops(g), PrimFunc("f", {a2}, {{a2, ab2}}, seq({buffer_store(ab2, 0, {0}), buffer_store(ab2, 1, {1})})));
}

}  // namespace
}  // namespace tessel::tir::transforms
