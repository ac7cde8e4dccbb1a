// transforms/storage_flatten: before/after pairs, a golden dump, and runs of the function before
// and after the pass on the reference interpreter (tir_interpreter.h): same memory contents.
#include <gtest/gtest.h>

#include "compiler/tir/intrinsics.h"
#include "compiler/tir/transforms/storage_flatten.h"
#include "tir_interpreter.h"
#include "tir_test_util.h"

namespace tessel::tir::transforms {
namespace {

using testing::expect_golden;
using testing::expect_same_func;
using testing::Interpreter;
using testing::run_on_patterns;

TEST(TransformStorageFlatten, RowMajorParameters) {
  Var a("A", DataType::handle()), b("B", DataType::handle());
  Buffer ab = Buffer::over(a, "A", DataType::int32(), {4, 8});
  Buffer bb = Buffer::over(b, "B", DataType::int32(), {8, 4});
  Var i("i"), j("j");
  PrimFunc before("f", {a, b}, {{a, ab}, {b, bb}},
                  for_loop(i, 0, 4, ForKind::kSerial,
                           for_loop(j, 0, 8, ForKind::kSerial,
                                    buffer_store(ab, buffer_load(bb, {j, i}) + 1, {i, j}))));
  Var a2("A", DataType::handle()), b2("B", DataType::handle());
  Buffer af = Buffer::over(a2, "A", DataType::int32(), {32});
  Buffer bf = Buffer::over(b2, "B", DataType::int32(), {32});
  Var i2("i"), j2("j");
  PrimFunc expected("f", {a2, b2}, {{a2, af}, {b2, bf}},
                    for_loop(i2, 0, 4, ForKind::kSerial,
                             for_loop(j2, 0, 8, ForKind::kSerial,
                                      buffer_store(af, buffer_load(bf, {j2 * 4 + i2}) + 1, {i2 * 8 + j2}))));
  PrimFunc after = storage_flatten(before);
  expect_same_func(after, expected);
  // The data variables are kept: memories set up before the pass serve after it.
  EXPECT_TRUE(after->buffer_map[0].second->data.same_as(a));
  EXPECT_EQ(after->buffer_map[0].second->scope, MemScope::kGlobal);
}

TEST(TransformStorageFlatten, ExplicitStridesAndOffset) {
  Var a("A", DataType::handle());
  Buffer ab = Buffer::over(a, "A", DataType::int8(), {4, 8}, MemScope::kGlobal, {16, 1}, 3);
  Var i("i"), j("j");
  PrimFunc before("f", {a}, {{a, ab}},
                  for_loop(i, 0, 4, ForKind::kSerial,
                           for_loop(j, 0, 8, ForKind::kSerial, buffer_store(ab, cast(DataType::int8(), i), {i, j}))));
  Var a2("A", DataType::handle());
  // span = 3 + 1 + 3 * 16 + 7 * 1
  Buffer af = Buffer::over(a2, "A", DataType::int8(), {59});
  Var i2("i"), j2("j");
  PrimFunc expected("f", {a2}, {{a2, af}},
                    for_loop(i2, 0, 4, ForKind::kSerial,
                             for_loop(j2, 0, 8, ForKind::kSerial,
                                      buffer_store(af, cast(DataType::int8(), i2), {i2 * 16 + j2 + 3}))));
  expect_same_func(storage_flatten(before), expected);
}

TEST(TransformStorageFlatten, SymbolicShape) {
  Var a("A", DataType::handle()), n("n"), m("m");
  Buffer ab = Buffer::over(a, "A", DataType::int32(), {n, m});
  Var i("i"), j("j");
  PrimFunc before("f", {a, n, m}, {{a, ab}},
                  for_loop(i, 0, n, ForKind::kSerial, for_loop(j, 0, m, ForKind::kSerial, buffer_store(ab, 0, {i, j}))));
  Var a2("A", DataType::handle()), n2("n"), m2("m");
  Buffer af = Buffer::over(a2, "A", DataType::int32(), {n2 * m2});
  Var i2("i"), j2("j");
  PrimFunc expected("f", {a2, n2, m2}, {{a2, af}},
                    for_loop(i2, 0, n2, ForKind::kSerial,
                             for_loop(j2, 0, m2, ForKind::kSerial, buffer_store(af, 0, {i2 * m2 + j2}))));
  expect_same_func(storage_flatten(before), expected);
}

TEST(TransformStorageFlatten, AllocationsKeepScopeAndVectorIndicesStayVectors) {
  Var a("A", DataType::handle());
  Buffer ab = Buffer::over(a, "A", DataType::int32(), {2, 3, 4});
  Buffer acc("acc", DataType::int32(), {3, 4}, MemScope::kAcc);
  Var i("i"), j("j");
  Stmt body = allocate(
      acc, for_loop(i, 0, 2, ForKind::kSerial,
                    for_loop(j, 0, 3, ForKind::kSerial,
                             seq({buffer_store(acc, broadcast(i, 4), {j, ramp(0, 1, 4)}),
                                  buffer_store(ab, buffer_load(acc, {j, ramp(0, 1, 4)}), {i, j, ramp(0, 1, 4)})}))));
  PrimFunc before("f", {a}, {{a, ab}}, body);
  Var a2("A", DataType::handle());
  Buffer af = Buffer::over(a2, "A", DataType::int32(), {24});
  Buffer accf("acc", DataType::int32(), {12}, MemScope::kAcc);
  Var i2("i"), j2("j");
  Stmt ebody = allocate(
      accf, for_loop(i2, 0, 2, ForKind::kSerial,
                     for_loop(j2, 0, 3, ForKind::kSerial,
                              seq({buffer_store(accf, broadcast(i2, 4), {ramp(j2 * 4, 1, 4)}),
                                   buffer_store(af, buffer_load(accf, {ramp(j2 * 4, 1, 4)}),
                                                {ramp(i2 * 12 + j2 * 4, 1, 4)})}))));
  PrimFunc expected("f", {a2}, {{a2, af}}, ebody);
  PrimFunc after = storage_flatten(before);
  expect_same_func(after, expected);
  expect_golden("transform_storage_flatten.tir", to_text(after));
}

TEST(TransformStorageFlatten, AccessPtrArgumentsAreFolded) {
  Var a("A", DataType::handle()), b("B", DataType::handle());
  Buffer ab = Buffer::over(a, "A", DataType::int32(), {4, 8});
  Buffer bb = Buffer::over(b, "B", DataType::int32(), {4, 8});
  Var i("i");
  Stmt body = for_loop(i, 0, 4, ForKind::kSerial,
                       evaluate(call(DataType::int32(), "test.copy",
                                     {intrin::access_ptr(ab, i * 8 + 0, Expr(2) * 4, 2),
                                      intrin::access_ptr(bb, (3 - i) * (4 + 4), 8 * 1, 1)})));
  PrimFunc before("f", {a, b}, {{a, ab}, {b, bb}}, body);
  Var a2("A", DataType::handle()), b2("B", DataType::handle());
  Buffer af = Buffer::over(a2, "A", DataType::int32(), {32});
  Buffer bf = Buffer::over(b2, "B", DataType::int32(), {32});
  Var i2("i");
  Stmt ebody = for_loop(i2, 0, 4, ForKind::kSerial,
                        evaluate(call(DataType::int32(), "test.copy",
                                      {intrin::access_ptr(af, i2 * 8, 8, 2), intrin::access_ptr(bf, 24 - i2 * 8, 8, 1)})));
  PrimFunc expected("f", {a2, b2}, {{a2, af}, {b2, bf}}, ebody);
  PrimFunc after = storage_flatten(before);
  expect_same_func(after, expected);
  // Both copy B's rows into A in reverse order.
  for (const PrimFunc& f : {before, after}) {
    Interpreter in;
    in.on_call("test.copy", testing::copy_call);
    in.alloc(ab);
    in.fill_pattern(bb, 1);
    std::vector<int64_t> src = in.memory(b);
    in.run(f);
    for (int r = 0; r < 4; ++r) {
      for (int c = 0; c < 8; ++c) EXPECT_EQ(in.memory(a)[r * 8 + c], src[(3 - r) * 8 + c]) << r << "," << c;
    }
  }
}

TEST(TransformStorageFlatten, ScalarsAndAccessesThatAreAlreadyFlat) {
  Var a("A", DataType::handle());
  Buffer ab = Buffer::over(a, "A", DataType::int32(), {2, 4});
  Buffer s("s", DataType::int32(), {}, MemScope::kLocal);
  Var i("i");
  // A zero-dimensional allocation, and a single flat index into A (kept as it is).
  Stmt body = allocate(s, seq({buffer_store(s, 7, {}),
                               for_loop(i, 0, 8, ForKind::kSerial, buffer_store(ab, buffer_load(s, {}) + i, {i}))}));
  PrimFunc before("f", {a}, {{a, ab}}, body);
  Var a2("A", DataType::handle());
  Buffer af = Buffer::over(a2, "A", DataType::int32(), {8});
  Buffer sf("s", DataType::int32(), {1}, MemScope::kLocal);
  Var i2("i");
  Stmt ebody = allocate(sf, seq({buffer_store(sf, 7, {0}),
                                 for_loop(i2, 0, 8, ForKind::kSerial, buffer_store(af, buffer_load(sf, {0}) + i2, {i2}))}));
  PrimFunc after = storage_flatten(before);
  expect_same_func(after, PrimFunc("f", {a2}, {{a2, af}}, ebody));
  EXPECT_EQ(run_on_patterns(before->body, {ab}), run_on_patterns(after->body, {ab}));
  EXPECT_EQ(run_on_patterns(after->body, {ab})[0], (std::vector<int64_t>{7, 8, 9, 10, 11, 12, 13, 14}));
}

TEST(TransformStorageFlatten, FlatFunctionsAreTheSameHandle) {
  Var a("A", DataType::handle());
  Buffer ab = Buffer::over(a, "A", DataType::int32(), {16});
  Var i("i");
  PrimFunc f("f", {a}, {{a, ab}}, for_loop(i, 0, 16, ForKind::kSerial, buffer_store(ab, i, {i})));
  EXPECT_EQ(storage_flatten(f).get(), f.get());
}

// A strided, offset 3-D transpose with an allocation in between: the same memory contents.
TEST(TransformStorageFlatten, SameResultsOnTheInterpreter) {
  Var a("A", DataType::handle()), b("B", DataType::handle());
  Buffer ab = Buffer::over(a, "A", DataType::int32(), {3, 4, 5}, MemScope::kGlobal, {40, 8, 1}, 5);
  Buffer bb = Buffer::over(b, "B", DataType::int32(), {5, 4, 3});
  Buffer tmp("tmp", DataType::int32(), {4, 5}, MemScope::kLocal);
  Var i("i"), j("j"), k("k"), j2("j2"), k2("k2");
  Stmt body = for_loop(
      i, 0, 3, ForKind::kSerial,
      allocate(tmp, seq({for_loop(j, 0, 4, ForKind::kSerial,
                                  for_loop(k, 0, 5, ForKind::kSerial,
                                           buffer_store(tmp, buffer_load(ab, {i, j, k}) * 2 + i, {j, k}))),
                         for_loop(j2, 0, 4, ForKind::kSerial,
                                  for_loop(k2, 0, 5, ForKind::kVectorized,
                                           buffer_store(bb, buffer_load(tmp, {j2, k2}), {k2, j2, i})))})));
  PrimFunc before("f", {a, b}, {{a, ab}, {b, bb}}, body);
  PrimFunc after = storage_flatten(before);
  EXPECT_TRUE(verify(after).empty()) << to_text(after);
  EXPECT_EQ(after->buffer_map[0].second->shape.size(), 1u);
  EXPECT_TRUE(is_const_int(after->buffer_map[0].second->shape[0], 5 + 1 + 2 * 40 + 3 * 8 + 4));
  std::vector<std::vector<int64_t>> results = {run_on_patterns(before->body, {ab, bb}, 2)[1],
                                                 run_on_patterns(after->body, {ab, bb}, 2)[1]};
  ASSERT_EQ(results[0].size(), 60u);
  EXPECT_EQ(results[0], results[1]);
  // B[k, j, i] = A[i, j, k] * 2 + i, A at 5 + 40 i + 8 j + k.
  Interpreter ref;
  std::vector<int64_t> src = ref.fill_pattern(ab, 2);
  EXPECT_EQ(results[0][(4 * 4 + 3) * 3 + 2], src[5 + 80 + 24 + 4] * 2 + 2);
}

}  // namespace
}  // namespace tessel::tir::transforms
