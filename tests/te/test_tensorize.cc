// compiler/te tensorize: a 64x48x32 matmul tensorized on an inner 16x16x16 block (golden of the
// intrinsic calls with their bound buffers; a software intrinsic run on the reference
// interpreter against a plain loop) and the UserErrors of a mismatching declaration.
#include <gtest/gtest.h>

#include "compiler/te/lower.h"
#include "compiler/te/tensor_intrin.h"
#include "compiler/tir/intrinsics.h"
#include "compiler/tir/printer.h"
#include "tests/tir/tir_interpreter.h"
#include "tests/te/te_test_util.h"
#include "tests/tir/tir_test_util.h"

namespace tessel::te {
namespace {

using testing::user_error_of;
using tir::DataType;
using Data = std::vector<int64_t>;

/// C[i, j] = sum(A[i, k] * B[k, j]) over 16x16x16, or with B transposed.
Tensor gemm_decl(bool transposed_b, int n = 16) {
  Tensor a = placeholder({n, n}, DataType::int32(), "a");
  Tensor b = placeholder({n, n}, DataType::int32(), "b");
  IterVar k = reduce_axis(n, "kk");
  return compute({n, n}, [&](const std::vector<Var>& i) {
    return sum(a(i[0], k) * (transposed_b ? b(i[1], k) : b(k, i[1])), {k});
  }, "c");
}

/// The call form: one opaque call per part with (region start, row stride) of each bound buffer.
tir::Stmt gemm_calls(const IntrinCall& c) {
  auto ptr = [](const tir::Buffer& b, int rw) { return tir::intrin::access_ptr(b, b->elem_offset, b.num_elements(), rw); };
  const tir::Buffer &o = c.output, &a = c.inputs[0], &b = c.inputs[1];
  if (c.part == IntrinPart::kReset) {
    return tir::evaluate(tir::call(DataType::int32(), "test.gemm_reset", {ptr(o, 2), o->strides[0]}));
  }
  return tir::evaluate(tir::call(DataType::int32(), c.part == IntrinPart::kBody ? "test.gemm" : "test.gemm_update",
                                 {ptr(o, 3), o->strides[0], ptr(a, 1), a->strides[0], ptr(b, 1), b->strides[0]}));
}

/// A software intrinsic: the same computation as loops over the bound buffers.
tir::Stmt gemm_loops(const IntrinCall& c) {
  Var i("ti"), j("tj"), k("tk");
  std::vector<Expr> ij{i, j};
  if (c.part == IntrinPart::kReset) {
    return tir::for_loop(i, 0, 16, tir::ForKind::kSerial,
                         tir::for_loop(j, 0, 16, tir::ForKind::kSerial, tir::buffer_store(c.output, 0, ij)));
  }
  Expr acc = tir::buffer_load(c.output, ij) +
             tir::buffer_load(c.inputs[0], {i, k}) * tir::buffer_load(c.inputs[1], {k, j});
  tir::Stmt upd = tir::for_loop(k, 0, 16, tir::ForKind::kSerial, tir::buffer_store(c.output, acc, ij));
  if (c.part == IntrinPart::kBody) upd = tir::seq({tir::buffer_store(c.output, 0, ij), upd});
  return tir::for_loop(i, 0, 16, tir::ForKind::kSerial, tir::for_loop(j, 0, 16, tir::ForKind::kSerial, upd));
}

struct Tiled {
  Tensor a = placeholder({64, 32}, DataType::int32(), "A");
  Tensor b = placeholder({32, 48}, DataType::int32(), "B");
  IterVar r = reduce_axis(32, "k");
  Tensor c = compute({64, 48}, [&](const std::vector<Var>& i) { return sum(a(i[0], r) * b(r, i[1]), {r}); }, "C");
  Schedule s = create_schedule({c});
  IterVar ii, ko;
  /// tile 16x16, split k by 16, order (io, jo, ko, ii, ji, ki); A and B cached at ko when asked.
  explicit Tiled(bool cache) {
    auto t = s[c].tile(c.op()->axis[0], c.op()->axis[1], 16, 16);
    auto [o, ki] = s[c].split(r, 16);
    ko = o;
    ii = t[2];
    s[c].reorder({t[0], t[1], ko, t[2], t[3], ki});
    if (cache) {
      Tensor aa = s.cache_read(a, tir::MemScope::kInp, {c});
      Tensor bb = s.cache_read(b, tir::MemScope::kWgt, {c});
      s[aa].compute_at(s[c], ko);
      s[bb].compute_at(s[c], ko);
    }
  }
};

Data pattern(size_t n, int64_t seed) {
  Data d(n);
  for (size_t i = 0; i < n; ++i) d[i] = static_cast<int64_t>((i * 5 + static_cast<size_t>(seed) * 3) % 9) - 4;
  return d;
}

TEST(TeTensorize, GemmBlockGolden) {
  Tiled t(true);
  t.s[t.c].tensorize(t.ii, decl_tensor_intrin(gemm_decl(false), gemm_calls, "gemm16"));
  tir::PrimFunc f = lower(t.s, {t.a, t.b, t.c}, "matmul_tensorized");
  tir::testing::expect_golden_in("te", "matmul_tensorize.tir", tir::to_text(f));
}

TEST(TeTensorize, SoftwareIntrinsicComputesTheMatmul) {
  for (bool cache : {false, true}) {
    Tiled t(cache);
    t.s[t.c].tensorize(t.ii, decl_tensor_intrin(gemm_decl(false), gemm_loops, "gemm16_loops"));
    tir::PrimFunc f = lower(t.s, {t.a, t.b, t.c}, "matmul_tensorized");
    Data av = pattern(64 * 32, 1), bv = pattern(32 * 48, 2), want(64 * 48, 0);
    for (size_t i = 0; i < 64; ++i)
      for (size_t j = 0; j < 48; ++j)
        for (size_t k = 0; k < 32; ++k) want[i * 48 + j] += av[i * 32 + k] * bv[k * 48 + j];
    tir::testing::Interpreter in;
    in.set_strict(true);
    auto out = in.run_buffers(f, {{"A", av}, {"B", bv}, {"C", Data(64 * 48, 0)}});
    EXPECT_EQ(out.at("C"), want) << "cache " << cache;
  }
  // the whole reduction inside the intrinsic: one body call per 16x16 tile
  Tensor a = placeholder({32, 16}, DataType::int32(), "A");
  Tensor b = placeholder({16, 32}, DataType::int32(), "B");
  IterVar r = reduce_axis(16, "k");
  Tensor c = compute({32, 32}, [&](const std::vector<Var>& i) { return sum(a(i[0], r) * b(r, i[1]), {r}); }, "C");
  Schedule s = create_schedule({c});
  auto t = s[c].tile(c.op()->axis[0], c.op()->axis[1], 16, 16);
  s[c].tensorize(t[2], decl_tensor_intrin(gemm_decl(false), gemm_loops, "gemm16_loops"));
  tir::PrimFunc f = lower(s, {a, b, c}, "matmul_body");
  EXPECT_NE(tir::to_text(f).find("for ti in range(0, 16)"), std::string::npos);
  Data av = pattern(32 * 16, 3), bv = pattern(16 * 32, 4), want(32 * 32, 0);
  for (size_t i = 0; i < 32; ++i)
    for (size_t j = 0; j < 32; ++j)
      for (size_t k = 0; k < 16; ++k) want[i * 32 + j] += av[i * 16 + k] * bv[k * 32 + j];
  tir::testing::Interpreter in;
  in.set_strict(true);
  EXPECT_EQ(in.run_buffers(f, {{"A", av}, {"B", bv}, {"C", Data(32 * 32, 0)}}).at("C"), want);
}

TEST(TeTensorize, PackedLayoutOnA1x16x16Gemm) {
  // VTA's packed layouts: A[n, k, bn, bk], B[m, k, bm, bk], C[n, m, bn, bm] with a 1x16x16 GEMM
  // intrinsic c[i, j] = sum(a[i, kk] * b[j, kk]) declared on 2-D buffers.
  Tensor a = placeholder({2, 3, 1, 16}, DataType::int32(), "A");
  Tensor b = placeholder({2, 3, 16, 16}, DataType::int32(), "B");
  IterVar ko = reduce_axis(3, "ko"), ki = reduce_axis(16, "ki");
  Tensor c = compute({2, 2, 1, 16}, [&](const std::vector<Var>& i) {
    return sum(a(i[0], ko, i[2], ki) * b(i[1], ko, i[3], ki), {ko, ki});
  }, "C");
  Tensor da = placeholder({1, 16}, DataType::int32(), "a");
  Tensor db = placeholder({16, 16}, DataType::int32(), "b");
  IterVar kk = reduce_axis(16, "kk");
  Tensor dc = compute({1, 16}, [&](const std::vector<Var>& i) { return sum(da(i[0], kk) * db(i[1], kk), {kk}); }, "c");
  auto loops_bt = [](const IntrinCall& call) {
    Var j("tj"), k("tk");
    std::vector<Expr> oj{0, j};
    if (call.part == IntrinPart::kReset) {
      return tir::for_loop(j, 0, 16, tir::ForKind::kSerial, tir::buffer_store(call.output, 0, oj));
    }
    Expr acc = tir::buffer_load(call.output, oj) +
               tir::buffer_load(call.inputs[0], {0, k}) * tir::buffer_load(call.inputs[1], {j, k});
    return tir::for_loop(j, 0, 16, tir::ForKind::kSerial,
                         tir::for_loop(k, 0, 16, tir::ForKind::kSerial, tir::buffer_store(call.output, acc, oj)));
  };
  Schedule s = create_schedule({c});
  const auto& ax = c.op()->axis;
  s[c].reorder({ax[0], ax[1], ko, ax[2], ax[3], ki});
  s[c].tensorize(ax[2], decl_tensor_intrin(dc, loops_bt, "gemm1x16x16"));
  tir::PrimFunc f = lower(s, {a, b, c}, "packed");
  Data av = pattern(2 * 3 * 16, 5), bv = pattern(2 * 3 * 16 * 16, 6), want(2 * 2 * 16, 0);
  for (size_t n = 0; n < 2; ++n)
    for (size_t m = 0; m < 2; ++m)
      for (size_t bm = 0; bm < 16; ++bm)
        for (size_t k = 0; k < 3; ++k)
          for (size_t bk = 0; bk < 16; ++bk)
            want[(n * 2 + m) * 16 + bm] += av[(n * 3 + k) * 16 + bk] * bv[((m * 3 + k) * 16 + bm) * 16 + bk];
  tir::testing::Interpreter in;
  in.set_strict(true);
  EXPECT_EQ(in.run_buffers(f, {{"A", av}, {"B", bv}, {"C", Data(64, 0)}}).at("C"), want) << tir::to_text(f);
}

TEST(TeTensorize, MismatchesAreUserErrors) {
  {
    Tiled t(false);
    t.s[t.c].tensorize(t.ii, decl_tensor_intrin(gemm_decl(true), gemm_calls, "gemm16_bt"));
    EXPECT_EQ(user_error_of([&] { lower(t.s, {t.a, t.b, t.c}, "f"); }),
              "tensorize of stage C at axis i.inner with intrinsic gemm16_bt: the body in the declaration's terms "
              "(a[i, kk] * b[kk, j]) does not match the declaration (a[i, kk] * b[j, kk])");
  }
  {
    Tiled t(false);
    t.s[t.c].tensorize(t.ii, decl_tensor_intrin(gemm_decl(false, 8), gemm_calls, "gemm8"));
    EXPECT_EQ(user_error_of([&] { lower(t.s, {t.a, t.b, t.c}, "f"); }),
              "tensorize of stage C at axis i.inner with intrinsic gemm8: axis i has extent 16, the intrinsic's axis i 8");
  }
  {
    Tiled t(false);
    Tensor x = placeholder({16, 16}, DataType::int32(), "x");
    Tensor add = compute({16, 16}, [&](const std::vector<Var>& i) { return x(i[0], i[1]) + 1; }, "add");
    t.s[t.c].tensorize(t.ii, decl_tensor_intrin(add, gemm_calls, "add16"));
    EXPECT_EQ(user_error_of([&] { lower(t.s, {t.a, t.b, t.c}, "f"); }),
              "tensorize of stage C at axis i.inner with intrinsic add16: axis k is tensorized but the intrinsic has no "
              "axis for it");
  }
  {
    // a tile that does not divide: a partial tile under the intrinsic
    Tensor a = placeholder({20, 16}, DataType::int32(), "A");
    Tensor b = placeholder({16, 16}, DataType::int32(), "B");
    IterVar r = reduce_axis(16, "k");
    Tensor c = compute({20, 16}, [&](const std::vector<Var>& i) { return sum(a(i[0], r) * b(r, i[1]), {r}); }, "C");
    Schedule s = create_schedule({c});
    auto [io, ii] = s[c].split(c.op()->axis[0], 16);
    s[c].tensorize(ii, decl_tensor_intrin(gemm_decl(false), gemm_calls, "gemm16"));
    EXPECT_EQ(user_error_of([&] { lower(s, {a, b, c}, "f"); }),
              "tensorize of stage C at axis i.inner with intrinsic gemm16: the tensorized loops have a partial tile "
              "((((i.outer * 16) + i.inner) < 20))");
  }
  Tensor a = placeholder({4}, DataType::int32(), "A");
  Tensor b = compute({4}, [&](const std::vector<Var>& i) { return a(i[0]) * 2; }, "B");
  Tensor c = compute({4}, [&](const std::vector<Var>& i) { return b(i[0]) + 1; }, "Cc");
  EXPECT_EQ(user_error_of([&] { decl_tensor_intrin(c, gemm_calls, "bad"); }), "tensor intrinsic bad: input B is not a placeholder");
  EXPECT_EQ(user_error_of([&] { decl_tensor_intrin(b, IntrinBuilder(), "bad"); }), "tensor intrinsic bad: no builder");
}

}  // namespace
}  // namespace tessel::te
