// transforms/vectorize_loops: before/after pairs, the serial fallbacks with their reasons, errors,
// a golden dump, and runs before and after the pass on the reference interpreter
// (tir_interpreter.h): vector code leaves the same memory contents as the serial loop.
#include <gtest/gtest.h>

#include "compiler/tir/intrinsics.h"
#include "compiler/tir/transforms/storage_flatten.h"
#include "compiler/tir/transforms/vectorize_loops.h"
#include "support/error.h"
#include "tir_interpreter.h"
#include "tir_test_util.h"

namespace tessel::tir::transforms {
namespace {

using testing::expect_golden;
using testing::expect_same_func;
using testing::expect_same_stmt;
using testing::run_on_patterns;

// The pass vectorises `s` (no serial fallback, no loop left) and the results agree.
void expect_vectorized_same_results(const Stmt& s, const std::vector<Buffer>& bufs) {
  std::vector<std::string> serial;
  Stmt v = vectorize_loops(s, &serial);
  EXPECT_TRUE(serial.empty()) << serial[0];
  EXPECT_EQ(run_on_patterns(s, bufs), run_on_patterns(v, bufs)) << to_text(v);
}

TEST(TransformVectorizeLoops, LinearIndicesBecomeRamps) {
  Buffer a("A", DataType::int32(), {16}), b("B", DataType::int32(), {4});
  Var i("i");
  Stmt before = for_loop(i, 0, 4, ForKind::kVectorized, buffer_store(b, buffer_load(a, {i * 2 + 1}) + 1, {i}));
  Stmt expected = buffer_store(b, buffer_load(a, {ramp(1, 2, 4)}) + broadcast(1, 4), {ramp(0, 1, 4)});
  expect_same_stmt(vectorize_loops(before), expected);
  expect_vectorized_same_results(before, {a, b});
}

TEST(TransformVectorizeLoops, MultiDimensionalAndScalarOperands) {
  Buffer a("A", DataType::int8(), {4, 8}), c("C", DataType::int8(), {4, 8});
  Var j("j"), i("i"), x("x", DataType::int8());
  Stmt before = for_loop(j, 0, 4, ForKind::kSerial,
                         for_loop(i, 0, 8, ForKind::kVectorized,
                                  buffer_store(c, buffer_load(a, {j, i}) * x, {j, i})));
  Var j2("j");
  Stmt expected = for_loop(j2, 0, 4, ForKind::kSerial,
                           buffer_store(c, buffer_load(a, {j2, ramp(0, 1, 8)}) * broadcast(x, 8), {j2, ramp(0, 1, 8)}));
  expect_same_stmt(vectorize_loops(before), expected);
  Stmt with_x = let_stmt(x, make_const(DataType::int8(), 3), before);
  expect_vectorized_same_results(with_x, {a, c});
}

TEST(TransformVectorizeLoops, IndicesWithoutTheVariableAreBroadcastLoads) {
  Buffer a("A", DataType::int32(), {16}), b("B", DataType::int32(), {16});
  Var i("i"), m("m");
  Stmt before = for_loop(i, m, 4, ForKind::kVectorized, buffer_store(b, buffer_load(a, {3}) * i, {i + 8}));
  // broadcast(A[3]) * ramp(m, 1, 4) folds to one ramp.
  Stmt expected = buffer_store(b, ramp(m * buffer_load(a, {3}), buffer_load(a, {3}), 4), {ramp(m + 8, 1, 4)});
  expect_same_stmt(vectorize_loops(before), expected);
  expect_vectorized_same_results(let_stmt(m, 2, before), {a, b});
}

TEST(TransformVectorizeLoops, LetsBecomeVectorVariablesOrAreSubstituted) {
  Buffer a("A", DataType::int32(), {16}), b("B", DataType::int32(), {16});
  Var i("i"), t("t"), u("u"), v("v"), w("w");
  // u does not depend on i (a scalar let); t = 2i is linear (substituted, so B[t] is a vector
  // store); v = A[i] + 1 is a vector load (a vector variable); the let expression w = i + 1 is
  // linear too.
  Stmt before = for_loop(
      i, 0, 4, ForKind::kVectorized,
      let_stmt(u, buffer_load(a, {15}),
               let_stmt(t, i * 2,
                        let_stmt(v, buffer_load(a, {i}) + 1,
                                 buffer_store(b, select(t < 4, v, u) + let(w, i + 1, w * 2), {t})))));
  Var v2("v", DataType::int32(4));
  Stmt expected = let_stmt(
      u, buffer_load(a, {15}),
      let_stmt(v2, buffer_load(a, {ramp(0, 1, 4)}) + broadcast(1, 4),
               buffer_store(b, select(ramp(0, 2, 4) < broadcast(4, 4), v2, broadcast(u, 4)) + ramp(2, 2, 4), {ramp(0, 2, 4)})));
  expect_same_stmt(vectorize_loops(before), expected);
  expect_vectorized_same_results(before, {a, b});
}

TEST(TransformVectorizeLoops, InvariantConditionsAndPureCallsAreKept) {
  Buffer a("A", DataType::int32(), {8}), b("B", DataType::int32(), {8});
  Var i("i"), n("n");
  Stmt before = for_loop(
      i, 0, 8, ForKind::kVectorized,
      if_then_else(n > 2, buffer_store(b, call(DataType::int32(), std::string(intrin::kShiftRight), {buffer_load(a, {i}), 1}), {i}),
                   buffer_store(b, 0, {i})));
  Stmt expected = if_then_else(
      n > 2,
      buffer_store(b, call(DataType::int32(8), std::string(intrin::kShiftRight), {buffer_load(a, {ramp(0, 1, 8)}), broadcast(1, 8)}),
                   {ramp(0, 1, 8)}),
      buffer_store(b, broadcast(0, 8), {ramp(0, 1, 8)}));
  expect_same_stmt(vectorize_loops(before), expected);
  expect_vectorized_same_results(let_stmt(n, 3, before), {a, b});
  expect_vectorized_same_results(let_stmt(n, 1, before), {a, b});
}

TEST(TransformVectorizeLoops, OneLaneIsTheBodyAtMin) {
  Buffer b("B", DataType::int32(), {16});
  Var i("i"), j("j");
  Stmt before = for_loop(j, 0, 4, ForKind::kSerial, for_loop(i, j * 2, 1, ForKind::kVectorized, buffer_store(b, i + 1, {i})));
  Var j2("j");
  Stmt expected = for_loop(j2, 0, 4, ForKind::kSerial, buffer_store(b, j2 * 2 + 1, {j2 * 2}));
  expect_same_stmt(vectorize_loops(before), expected);
  EXPECT_TRUE(is_no_op(vectorize_loops(for_loop(i, 0, 0, ForKind::kVectorized, buffer_store(b, i, {i})))));
}

// Each body that cannot be vectorised stays a serial loop, with the reason reported.
TEST(TransformVectorizeLoops, FallsBackToSerialLoops) {
  Buffer a("A", DataType::int32(), {64}), b("B", DataType::int32(), {64});
  Buffer tmp("tmp", DataType::int32(), {4}, MemScope::kLocal);
  Var i("i"), k("k"), t("t");
  struct Case {
    Stmt body;
    std::string reason;
  };
  std::vector<Case> cases = {
      {if_then_else(i < 2, buffer_store(b, 1, {i})), "the if condition depends on the loop variable"},
      {for_loop(k, 0, 2, ForKind::kSerial, buffer_store(b, k, {i * 2 + k})), "nested loop 'k'"},
      {evaluate(call(DataType::int32(), "test.side_effect", {i})), "call 'test.side_effect' has side effects"},
      {let_stmt(t, buffer_load(a, {i * i}), buffer_store(b, t, {i})),
       "let 't' is bound to a value that cannot be vectorised (an index of 'A' is not linear in 'i' "
       "((ramp(0, 1, 4) * ramp(0, 1, 4))))"},
      {buffer_store(b, buffer_load(a, {floordiv(i, 2)}), {i}),
       "an index of 'A' is not linear in 'i' (floordiv(ramp(0, 1, 4), broadcast(2, 4)))"},
      {buffer_store(b, buffer_load(a, {buffer_load(a, {i})}), {i}),
       "an index of 'A' is not linear in 'i' (A[ramp(0, 1, 4)])"},
      {buffer_store(b, i, {0}), "the lanes of the store to 'B' may hit one element"},
      {buffer_store(b, buffer_load(b, {i}) + 1, {i + 1}),
       "buffer 'B' is written and also accessed at other indices (a dependence between iterations)"},
      {allocate(tmp, buffer_store(tmp, i, {0})), "allocation of 'tmp' inside the body"},
      {buffer_store(b, buffer_load(a, {ramp(i * 4, 1, 4)}), {ramp(i * 4, 1, 4)}),
       "an expression is already a vector (A[ramp((i * 4), 1, 4)])"},
  };
  for (const Case& c : cases) {
    Stmt before = for_loop(i, 0, 4, ForKind::kVectorized, c.body);
    std::vector<std::string> serial;
    Stmt after = vectorize_loops(before, &serial);
    expect_same_stmt(after, for_loop(i, 0, 4, ForKind::kSerial, c.body));
    ASSERT_EQ(serial.size(), 1u) << to_text(before);
    EXPECT_EQ(serial[0], "loop 'i' stays serial: " + c.reason);
  }
}

TEST(TransformVectorizeLoops, AccumulationAtTheSameIndexIsVectorised) {
  Buffer a("A", DataType::int32(), {4, 8}), acc("acc", DataType::int32(), {8});
  Var r("r"), i("i");
  Stmt before = for_loop(r, 0, 4, ForKind::kSerial,
                         for_loop(i, 0, 8, ForKind::kVectorized,
                                  buffer_store(acc, buffer_load(acc, {i}) + buffer_load(a, {r, i}), {i})));
  Var r2("r");
  Stmt expected = for_loop(
      r2, 0, 4, ForKind::kSerial,
      buffer_store(acc, buffer_load(acc, {ramp(0, 1, 8)}) + buffer_load(a, {r2, ramp(0, 1, 8)}), {ramp(0, 1, 8)}));
  expect_same_stmt(vectorize_loops(before), expected);
  expect_vectorized_same_results(before, {a, acc});
}

TEST(TransformVectorizeLoops, PrimFuncGoldenAndErrors) {
  Var a("A", DataType::handle()), b("B", DataType::handle());
  Buffer ab = Buffer::over(a, "A", DataType::int16(), {4, 16});
  Buffer bb = Buffer::over(b, "B", DataType::int16(), {16, 4});
  Var y("y"), xo("xo"), xi("xi");
  // A transpose, vectorised along the rows of B: the loads run down a column of A.
  Stmt body = for_loop(y, 0, 16, ForKind::kSerial,
                       for_loop(xi, 0, 4, ForKind::kVectorized,
                                buffer_store(bb, cast(DataType::int16(), cast(DataType::int32(), buffer_load(ab, {xi, y})) + 1),
                                             {y, xi})));
  PrimFunc before("transpose", {a, b}, {{a, ab}, {b, bb}}, body);
  PrimFunc after = vectorize_loops(before);
  EXPECT_TRUE(verify(after).empty()) << to_text(after);
  expect_golden("transform_vectorize_loops.tir", to_text(after));
  EXPECT_EQ(run_on_patterns(before->body, {ab, bb}, 5)[1], run_on_patterns(after->body, {ab, bb}, 5)[1]);
  // Unchanged functions are the same handle.
  EXPECT_EQ(vectorize_loops(after).get(), after.get());
  Buffer c("C", DataType::int32(), {16});
  Var i("i"), n("n");
  try {
    vectorize_loops(for_loop(i, 0, n, ForKind::kVectorized, buffer_store(c, 0, {i})));
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "vectorize: loop 'i' has non-constant extent n");
  }
}

TEST(TransformVectorizeLoops, AfterStorageFlatten) {
  // The transpose of PrimFuncGoldenAndErrors, flattened first: the loads become strided ramps of
  // flat offsets.
  Var a("A", DataType::handle()), b("B", DataType::handle());
  Buffer ab = Buffer::over(a, "A", DataType::int16(), {4, 16});
  Buffer bb = Buffer::over(b, "B", DataType::int16(), {16, 4});
  Var y("y"), xi("xi");
  Stmt body = for_loop(y, 0, 16, ForKind::kSerial,
                       for_loop(xi, 0, 4, ForKind::kVectorized, buffer_store(bb, buffer_load(ab, {xi, y}), {y, xi})));
  PrimFunc before("transpose", {a, b}, {{a, ab}, {b, bb}}, body);
  PrimFunc after = vectorize_loops(storage_flatten(before));
  Var a2("A", DataType::handle()), b2("B", DataType::handle());
  Buffer af = Buffer::over(a2, "A", DataType::int16(), {64}), bf = Buffer::over(b2, "B", DataType::int16(), {64});
  Var y2("y");
  PrimFunc expected("transpose", {a2, b2}, {{a2, af}, {b2, bf}},
                    for_loop(y2, 0, 16, ForKind::kSerial,
                             buffer_store(bf, buffer_load(af, {ramp(y2, 16, 4)}), {ramp(y2 * 4, 1, 4)})));
  expect_same_func(after, expected);
  EXPECT_EQ(run_on_patterns(before->body, {ab, bb}, 9)[1], run_on_patterns(after->body, {ab, bb}, 9)[1]);
}

}  // namespace
}  // namespace tessel::tir::transforms
