// compiler/te tensors and operations: shapes, dtypes, axis names, inputs, reductions and the
// errors compute/reduce raise.
#include <gtest/gtest.h>

#include "compiler/te/operation.h"
#include "compiler/tir/printer.h"
#include "support/error.h"

namespace tessel::te {
namespace {

using tir::DataType;

template <typename F>
std::string user_error_of(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TeOperation, PlaceholderShapeDtypeName) {
  Tensor a = placeholder({16, 8}, DataType::int8(), "A");
  EXPECT_EQ(a.ndim(), 2u);
  EXPECT_EQ(*tir::as_const_int(a.shape()[0]), 16);
  EXPECT_EQ(*tir::as_const_int(a.shape()[1]), 8);
  EXPECT_EQ(a.dtype(), DataType::int8());
  EXPECT_EQ(a.name(), "A");
  EXPECT_EQ(a.op()->kind, OpKind::kPlaceholder);
  EXPECT_EQ(a.buffer()->name, "A");
  EXPECT_EQ(a.buffer()->scope, tir::MemScope::kGlobal);
  EXPECT_TRUE(operation_of(a.buffer()).same_as(a.op()));
}

TEST(TeOperation, ComputeAxesAndInputs) {
  Tensor a = placeholder({4, 5}, DataType::int32(), "A");
  Tensor b = placeholder({5}, DataType::int32(), "B");
  Tensor c = compute({4, 5}, [&](const std::vector<Var>& i) { return b(i[1]) + a(i[0], i[1]) * 2; }, "C");
  EXPECT_EQ(c.dtype(), DataType::int32());
  ASSERT_EQ(c.op()->axis.size(), 2u);
  EXPECT_EQ(c.op()->axis[0].name(), "i");
  EXPECT_EQ(c.op()->axis[1].name(), "j");
  EXPECT_EQ(c.op()->axis[0].kind(), IterVarKind::kDataPar);
  EXPECT_EQ(*tir::as_const_int(c.op()->axis[1].dom().extent), 5);
  ASSERT_EQ(c.op()->inputs.size(), 2u);  // first-read order: B, then A
  EXPECT_TRUE(c.op()->inputs[0].same_as(b));
  EXPECT_TRUE(c.op()->inputs[1].same_as(a));
  EXPECT_EQ(tir::to_text(c.op()->body), "(B[j] + (A[i, j] * 2))");

  Tensor d = compute({2, 2, 2, 2}, [&](const std::vector<Var>& i) { return i[0] + i[3]; }, "D");
  EXPECT_EQ(d.op()->axis[3].name(), "i3");
  EXPECT_TRUE(d.op()->inputs.empty());
}

TEST(TeOperation, SumReduction) {
  Tensor a = placeholder({8, 16}, DataType::float32(), "A");
  IterVar k = reduce_axis(16, "k");
  EXPECT_EQ(k.kind(), IterVarKind::kReduce);
  Tensor s = compute({8}, [&](const std::vector<Var>& i) { return sum(a(i[0], k), {k}); }, "S");
  EXPECT_EQ(s.dtype(), DataType::float32());
  ASSERT_EQ(s.op()->reduce_axis.size(), 1u);
  EXPECT_TRUE(s.op()->reduce_axis[0].same_as(k));
  const ReduceNode* r = as_reduce(s.op()->body);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->combiner.name, "sum");
  EXPECT_EQ(tir::to_text(r->combiner.result), "(x + y)");
  EXPECT_EQ(tir::to_text(r->combiner.identity), "float32(0)");
  EXPECT_EQ(tir::to_text(r->source), "A[i, k]");
}

TEST(TeOperation, MaxMinIdentities) {
  Tensor a = placeholder({4}, DataType::int8(), "A");
  IterVar k = reduce_axis(4, "k");
  Expr emax = max(a(k), {k});
  Expr emin = min(a(k), {k});
  const ReduceNode* mx = as_reduce(emax);
  const ReduceNode* mn = as_reduce(emin);
  ASSERT_TRUE(mx && mn);
  EXPECT_EQ(tir::to_text(mx->combiner.identity), "int8(-128)");
  EXPECT_EQ(tir::to_text(mn->combiner.identity), "int8(127)");
  EXPECT_EQ(tir::to_text(mx->combiner.result), "max(x, y)");
  Expr with_init = sum(a(k), {k}, tir::make_const(DataType::int8(), 5));
  EXPECT_EQ(tir::to_text(as_reduce(with_init)->init), "int8(5)");
}

TEST(TeOperation, TypedComputeMismatchIsUserError) {
  Tensor a = placeholder({4}, DataType::int8(), "A");
  std::string msg = user_error_of([&] {
    compute({4}, DataType::int32(), [&](const std::vector<Var>& i) { return a(i[0]); }, "C");
  });
  EXPECT_EQ(msg, "compute C: the body has type int8, declared int32");
  EXPECT_NO_THROW(compute({4}, DataType::int8(), [&](const std::vector<Var>& i) { return a(i[0]); }, "C2"));
}

TEST(TeOperation, ReduceOutsideTopLevelIsUserError) {
  Tensor a = placeholder({4, 4}, DataType::int32(), "A");
  IterVar k = reduce_axis(4, "k");
  std::string msg = user_error_of([&] {
    compute({4}, [&](const std::vector<Var>& i) { return sum(a(i[0], k), {k}) + 1; }, "C");
  });
  EXPECT_NE(msg.find("compute C: a reduction must be the whole body"), std::string::npos) << msg;
}

TEST(TeOperation, ErrorsNameTheThing) {
  Tensor a = placeholder({4, 4}, DataType::int32(), "A");
  IterVar k = reduce_axis(4, "k");
  EXPECT_EQ(user_error_of([&] { placeholder({4, 0}, DataType::int32(), "P"); }),
            "placeholder P: extent 0 of dimension 1 is not a positive int32 constant");
  EXPECT_EQ(user_error_of([&] { a(1); }), "tensor A has 2 dimensions, indexed with 1 indices");
  EXPECT_EQ(user_error_of([&] { compute({4}, [&](const std::vector<Var>& i) { return a(i[0], k); }, "C"); }),
            "compute C: the body uses variable k, which is neither an axis nor a reduction axis of it");
  IterVar dp(Range::from_min_extent(0, 4), Var("d"), IterVarKind::kDataPar);
  EXPECT_EQ(user_error_of([&] { sum(a(0, dp.var()), {dp}); }),
            "reduction sum: axis d is not a reduction axis (kind data_par)");
  EXPECT_EQ(user_error_of([&] { sum(a(0, k.var()), {k, k}); }), "reduction sum: axis k appears twice");
  EXPECT_EQ(user_error_of([&] { sum(a(0, k.var()), {k}, tir::make_float(DataType::float32(), 1.0)); }),
            "reduction sum: init has type float32, the source int32");
  EXPECT_EQ(user_error_of([&] { reduce_axis(0, "r"); }),
            "reduce axis r: the range must have int32 constant min and positive extent, got min 0 extent 0");
  tir::Buffer stray("stray", DataType::int32(), {tir::int_imm(4)});
  EXPECT_EQ(user_error_of([&] {
              compute({4}, [&](const std::vector<Var>& i) { return tir::buffer_load(stray, {i[0]}); }, "C");
            }),
            "compute C: the body reads buffer stray, which is not a tensor's");
  EXPECT_EQ(user_error_of([&] { compute({4}, [&](const std::vector<Var>& i) { return tir::lt(i[0], 2) ; }, "C"); }),
            "(no error)");  // bool elements are allowed
}

}  // namespace
}  // namespace tessel::te
