// compiler/tir core: types, constructors' checks, printer (golden), verifier, structural
// equality, substitution and the copy-on-write mutator.
#include <gtest/gtest.h>

#include "compiler/tir/function.h"
#include "compiler/tir/intrinsics.h"
#include "support/error.h"
#include "tir_test_util.h"

namespace tessel::tir {
namespace {

// C[i, j] += A[i, k] * B[k, j] over int8 inputs with an int32 accumulator: the kernel every
// backend test starts from.
PrimFunc make_matmul(int n) {
  Var a("A", DataType::handle()), b("B", DataType::handle()), c("C", DataType::handle());
  Buffer ab = Buffer::over(a, "A", DataType::int8(), {n, n});
  Buffer bb = Buffer::over(b, "B", DataType::int8(), {n, n});
  Buffer cb = Buffer::over(c, "C", DataType::int32(), {n, n});
  Var i("i"), j("j"), k("k");
  Expr prod = cast(DataType::int32(), buffer_load(ab, {i, k})) * cast(DataType::int32(), buffer_load(bb, {k, j}));
  Stmt body = for_loop(
      i, 0, n, ForKind::kSerial,
      for_loop(j, 0, n, ForKind::kSerial,
               seq({buffer_store(cb, int_imm(0), {i, j}),
                    for_loop(k, 0, n, ForKind::kSerial, buffer_store(cb, buffer_load(cb, {i, j}) + prod, {i, j}))})));
  return PrimFunc("matmul", {a, b, c}, {{a, ab}, {b, bb}, {c, cb}}, body, {{"target", "cpu"}});
}

TEST(TirDataType, TextRoundTrips) {
  for (const char* t : {"int8", "int32", "uint8", "float32", "bool", "handle", "int8x16", "float32x8", "boolx4"}) {
    EXPECT_EQ(DataType::parse(t).str(), t);
  }
  EXPECT_EQ(DataType::int8().max_value(), 127);
  EXPECT_EQ(DataType::int8().min_value(), -128);
  EXPECT_EQ(DataType::uint8().max_value(), 255);
  EXPECT_EQ(DataType::bool_().max_value(), 1);
  EXPECT_THROW(DataType::parse("int7"), UserError);
  EXPECT_THROW(DataType::parse("int8x1"), UserError);
  EXPECT_THROW(DataType::parse("quux"), UserError);
}

TEST(TirExpr, ConstructorsCheckTypes) {
  Var x("x"), f("f", DataType::float32());
  EXPECT_THROW(make_binary(ExprKind::kAdd, x, f), InternalError);
  EXPECT_THROW(floordiv(f, f), InternalError);
  EXPECT_THROW(logical_and(x, x), InternalError);
  EXPECT_THROW(select(x, x, x), InternalError);
  EXPECT_THROW(make_const(DataType::int8(), 200), InternalError);
  // An immediate adapts to the other side's type; a scalar broadcasts to a vector.
  Var y("y", DataType::int64());
  EXPECT_EQ((y + 1).dtype(), DataType::int64());
  Expr r = ramp(x, 1, 4);
  EXPECT_EQ(r.dtype(), DataType::int32(4));
  EXPECT_EQ((r + x).dtype(), DataType::int32(4));
  EXPECT_EQ((r < 3).dtype(), DataType::bool_(4));
  EXPECT_EQ(cast(DataType::int8(), x).dtype(), DataType::int8());
  EXPECT_TRUE(cast(DataType::int32(), x).same_as(x));
}

TEST(TirStmt, SeqFlattensAndLoopsCheckTags) {
  Var x("x");
  Buffer b("B", DataType::int32(), {4});
  Stmt s1 = buffer_store(b, x, {0});
  Stmt s = seq({s1, seq({s1, s1}), Stmt()});
  ASSERT_NE(s.as<SeqStmtNode>(), nullptr);
  EXPECT_EQ(s.as<SeqStmtNode>()->seq.size(), 3u);
  EXPECT_TRUE(seq({s1}).same_as(s1));
  EXPECT_TRUE(is_no_op(seq({})));
  EXPECT_THROW(for_loop(Var("t"), 0, 4, ForKind::kThreadBinding, s1), InternalError);
  EXPECT_THROW(for_loop(Var("t"), 0, 4, ForKind::kSerial, s1, "threadIdx.x"), InternalError);
  EXPECT_THROW(buffer_store(b, make_float(DataType::float32(), 1.0), {0}), InternalError);
  // A vector index makes a vector store; a scalar value is broadcast.
  Stmt v = buffer_store(b, x, {ramp(0, 1, 4)});
  EXPECT_EQ(v.as<BufferStoreNode>()->value.dtype(), DataType::int32(4));
}

TEST(TirPrinter, MatmulIsStable) {
  PrimFunc f = make_matmul(16);
  testing::expect_golden("matmul.tir", to_text(f));
}

TEST(TirPrinter, EveryNodeKind) {
  Var x("x"), y("y"), x2("x"), p("P", DataType::handle());
  Buffer pb = Buffer::over(p, "P", DataType::float32(), {8, 8}, MemScope::kGlobal, {16, 1}, 4);
  Buffer acc("acc", DataType::int32(), {16}, MemScope::kAcc);
  Var vt("vt");
  Expr e = select((x < y && !eq(x, 3)) || x >= 7, min(x, y), max(floordiv(x, 2), floormod(y, 3)));
  Stmt body = seq({
      let_stmt(x2, (x * 2 - y) / 3 % 5,
               evaluate(call(DataType::int32(), "tir.accel.gemm", {x2, string_imm("a\"b"), intrin::access_ptr(acc, 0, 16, 3)}))),
      buffer_store(acc, e, {x}),
      buffer_store(pb, make_float(DataType::float32(), 0.25), {ramp(x, 1, 4), broadcast(y, 4)}),
      if_then_else(intrin::likely(x > 0), evaluate(0), evaluate(let(Var("z"), x + 1, cast(DataType::int8(), x)))),
      for_loop(Var("t"), 0, 32, ForKind::kThreadBinding, evaluate(1), "threadIdx.x"),
      for_loop(Var("v"), 0, 8, ForKind::kVectorized, evaluate(2)),
      attr_stmt(vt, "virtual_thread", 2, assert_stmt(vt < 2, "vt in range", evaluate(vt))),
  });
  Stmt full = allocate(acc, body);
  PrimFunc f("kinds", {p, x, y}, {{p, pb}}, full);
  testing::expect_golden("every_kind.tir", to_text(f));
  EXPECT_TRUE(verify(f).empty()) << verify(f)[0];
}

TEST(TirVerifier, FindsScopingErrors) {
  EXPECT_TRUE(verify(make_matmul(4)).empty());
  Var x("x"), i("i");
  Buffer b("B", DataType::int32(), {4}, MemScope::kLocal);
  // x is not defined; B is used without an allocation; i bound twice.
  Stmt body = for_loop(i, 0, 4, ForKind::kSerial,
                       seq({buffer_store(b, x, {i}), for_loop(i, 0, 2, ForKind::kSerial, evaluate(i))}));
  std::vector<std::string> errs = verify(PrimFunc("bad", {}, {}, body));
  ASSERT_EQ(errs.size(), 3u);
  EXPECT_EQ(errs[0], "buffer 'B' is used outside the scope of its data variable 'B'");
  EXPECT_EQ(errs[1], "variable 'x' is used where it is not defined");
  EXPECT_EQ(errs[2], "loop variable 'i' is bound twice");
  EXPECT_THROW(check_well_formed(PrimFunc("bad", {}, {}, body), "test"), InternalError);
  // Allocations need constant extents; vectorized loops constant extents.
  Var n("n");
  Buffer dyn("D", DataType::int32(), {n}, MemScope::kLocal);
  std::vector<std::string> e2 =
      verify(PrimFunc("dyn", {n}, {}, allocate(dyn, for_loop(Var("v"), 0, n, ForKind::kVectorized, buffer_store(dyn, 0, {0})))));
  ASSERT_EQ(e2.size(), 2u);
  EXPECT_EQ(e2[0], "allocate 'D' has a non-constant or non-positive extent n");
  EXPECT_EQ(e2[1], "vectorized loop 'v' has a non-constant extent n");
}

TEST(TirUtil, StructuralEqualityMapsBoundVariables) {
  PrimFunc a = make_matmul(8), b = make_matmul(8), c = make_matmul(4);
  EXPECT_TRUE(structural_equal(a, b));
  EXPECT_FALSE(structural_equal(a, c));
  Var x("x"), y("y");
  EXPECT_FALSE(structural_equal(x + 1, y + 1));
  EXPECT_TRUE(structural_equal(x + 1, y + 1, /*map_free_vars=*/true));
  EXPECT_FALSE(structural_equal(x + x, x + y, true));
  EXPECT_FALSE(structural_equal(x + 1, x + 2));
  // Loops that bind their variables at the same place are equal whatever the names.
  Buffer buf("B", DataType::int32(), {4});
  Var i("i"), j("j");
  EXPECT_TRUE(structural_equal(for_loop(i, 0, 4, ForKind::kSerial, buffer_store(buf, i, {i})),
                               for_loop(j, 0, 4, ForKind::kSerial, buffer_store(buf, j, {j}))));
  EXPECT_FALSE(structural_equal(for_loop(i, 0, 4, ForKind::kSerial, buffer_store(buf, i, {i})),
                                for_loop(j, 0, 4, ForKind::kParallel, buffer_store(buf, j, {j}))));
}

TEST(TirUtil, SubstituteAndUses) {
  Var x("x"), y("y");
  Buffer buf("B", DataType::int32(), {4});
  Stmt s = buffer_store(buf, x * 2, {x + y});
  Stmt t = substitute(s, x, Expr(3));
  EXPECT_EQ(to_text(t), "B[(3 + y)] = (3 * 2)\n");
  EXPECT_TRUE(uses_var(s, x));
  EXPECT_FALSE(uses_var(t, x));
  EXPECT_TRUE(substitute(s, Var("z"), Expr(1)).same_as(s)) << "copy-on-write: nothing changed";
  // Substituting into a scope that rebinds the variable is a bug, not a silent capture.
  EXPECT_THROW(substitute(for_loop(x, 0, 4, ForKind::kSerial, s), x, Expr(1)), InternalError);
  BufferAccess acc = buffer_access(seq({s, evaluate(intrin::access_ptr(buf, 0, 4, 1))}));
  EXPECT_EQ(acc.writes.size(), 1u);
  EXPECT_EQ(acc.reads.size(), 1u);
}

TEST(TirFunction, ModuleKeepsOrderAndReplaces) {
  IRModule m;
  m.add(make_matmul(4));
  m.add(PrimFunc("other", {}, {}, evaluate(0)));
  m.add(make_matmul(8));
  ASSERT_EQ(m.functions().size(), 2u);
  EXPECT_EQ(m.functions()[0]->name, "matmul");
  EXPECT_TRUE(structural_equal(m.at("matmul"), make_matmul(8)));
  EXPECT_THROW(m.at("missing"), UserError);
  Var p("p", DataType::handle());
  Buffer b("B", DataType::int8(), {4});
  EXPECT_THROW(PrimFunc("f", {}, {{p, b}}, evaluate(0)), InternalError);
}

}  // namespace
}  // namespace tessel::tir
