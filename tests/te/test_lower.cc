// compiler/te bound inference and lowering: goldens of the default matmul and of the loop
// annotations, and every scheduling primitive run on the reference interpreter
// (tests/tir/tir_interpreter.h, strict mode) against a plain C++ loop, including split factors that do not divide.
#include <gtest/gtest.h>

#include <functional>

#include "compiler/te/bound.h"
#include "compiler/te/lower.h"
#include "compiler/tir/printer.h"
#include "compiler/tir/verifier.h"
#include "tests/tir/tir_interpreter.h"
#include "tests/te/te_test_util.h"
#include "tests/tir/tir_test_util.h"

namespace tessel::te {
namespace {

using testing::user_error_of;
using tir::DataType;
using Data = std::vector<int64_t>;

Data pattern(size_t n, int64_t seed) {
  Data d(n);
  for (size_t i = 0; i < n; ++i) d[i] = static_cast<int64_t>((i * 7 + static_cast<size_t>(seed) * 13) % 11) - 5;
  return d;
}

/// Runs `f` on the interpreter with `inputs` (by name) and zero-filled outputs `out` of `n`.
Data run(const tir::PrimFunc& f, std::map<std::string, Data> inputs, const std::string& out, size_t n) {
  EXPECT_TRUE(tir::verify(f).empty());
  inputs[out] = Data(n, 0);
  tir::testing::Interpreter in;
  in.set_strict(true);
  return in.run_buffers(f, inputs).at(out);
}

struct Matmul {
  int m, n, k;
  Tensor a, b, c;
  IterVar r;
  Matmul(int m_, int n_, int k_) : m(m_), n(n_), k(k_) {
    a = placeholder({m, k}, DataType::int32(), "A");
    b = placeholder({k, n}, DataType::int32(), "B");
    r = reduce_axis(k, "k");
    c = compute({m, n}, [&](const std::vector<Var>& i) { return sum(a(i[0], r) * b(r, i[1]), {r}); }, "C");
  }
  Data reference() const {
    Data av = pattern(static_cast<size_t>(m * k), 1), bv = pattern(static_cast<size_t>(k * n), 2), cv(static_cast<size_t>(m * n));
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        int64_t acc = 0;
        for (int x = 0; x < k; ++x) acc += av[static_cast<size_t>(i * k + x)] * bv[static_cast<size_t>(x * n + j)];
        cv[static_cast<size_t>(i * n + j)] = acc;
      }
    return cv;
  }
  Data run_on(const Schedule& s, const std::string& name = "matmul") const {
    tir::PrimFunc f = lower(s, {a, b, c}, name);
    return run(f, {{"A", pattern(static_cast<size_t>(m * k), 1)}, {"B", pattern(static_cast<size_t>(k * n), 2)}}, "C",
               static_cast<size_t>(m * n));
  }
};

TEST(TeLower, DefaultMatmulGolden) {
  Matmul mm(4, 3, 5);
  Schedule s = create_schedule({mm.c});
  tir::PrimFunc f = lower(s, {mm.a, mm.b, mm.c}, "matmul");
  tir::testing::expect_golden_in("te", "matmul_default.tir", tir::to_text(f));
  EXPECT_EQ(mm.run_on(s), mm.reference());
}

TEST(TeLower, BoundsOfSplitAndFuse) {
  Matmul mm(10, 6, 8);
  Schedule s = create_schedule({mm.c});
  auto [io, ii] = s[mm.c].split(mm.c.op()->axis[0], 4);
  auto [ko, ki] = s[mm.c].split_nparts(mm.r, 3);
  IterVar f = s[mm.c].fuse(ii, mm.c.op()->axis[1]);
  Bounds b = infer_bound(s);
  EXPECT_EQ(tir::to_text(b.at(io).extent), "3");
  EXPECT_EQ(tir::to_text(b.at(ii).extent), "4");
  EXPECT_EQ(tir::to_text(b.at(ko).extent), "3");
  EXPECT_EQ(tir::to_text(b.at(ki).extent), "3");
  EXPECT_EQ(tir::to_text(b.at(f).extent), "24");
  EXPECT_EQ(mm.run_on(s), mm.reference());
}

TEST(TeLower, SplitNonDividingIsGuarded) {
  Matmul mm(10, 7, 9);
  Schedule s = create_schedule({mm.c});
  s[mm.c].split(mm.c.op()->axis[0], 4);
  s[mm.c].split(mm.r, 2);
  s[mm.c].split_nparts(mm.c.op()->axis[1], 3);
  tir::PrimFunc f = lower(s, {mm.a, mm.b, mm.c}, "matmul_split");
  std::string text = tir::to_text(f);
  EXPECT_NE(text.find("tir.likely"), std::string::npos) << text;
  EXPECT_EQ(mm.run_on(s), mm.reference());
}

TEST(TeLower, ReorderTileFuse) {
  Matmul mm(12, 10, 6);
  Schedule s = create_schedule({mm.c});
  auto t = s[mm.c].tile(mm.c.op()->axis[0], mm.c.op()->axis[1], 5, 4);
  s[mm.c].reorder({t[0], mm.r, t[1], t[3], t[2]});
  EXPECT_EQ(mm.run_on(s), mm.reference());
  Schedule s2 = create_schedule({mm.c});
  auto t2 = s2[mm.c].tile(mm.c.op()->axis[0], mm.c.op()->axis[1], 5, 4);
  IterVar f = s2[mm.c].fuse(t2[0], t2[1]);
  s2[mm.c].split(f, 4);
  EXPECT_EQ(mm.run_on(s2), mm.reference());
  // reduction outermost: the init nest covers every data-parallel loop
  Schedule s3 = create_schedule({mm.c});
  s3[mm.c].reorder({mm.r, mm.c.op()->axis[1], mm.c.op()->axis[0]});
  EXPECT_EQ(mm.run_on(s3), mm.reference());
}

/// B = A + 1 (stencil reads A[i], A[i+1], A[i+2]); C = B[i] * 2 + B[i+1] over 17 elements.
struct Chain {
  Tensor a = placeholder({20}, DataType::int32(), "A");
  Tensor b = compute({19}, [&](const std::vector<Var>& i) { return a(i[0]) + a(i[0] + 1) * a(i[0] + 1); }, "B");
  Tensor c = compute({17}, [&](const std::vector<Var>& i) { return b(i[0]) * 2 + b(i[0] + 2); }, "C");
  Data reference() const {
    Data av = pattern(20, 3), bv(19), cv(17);
    for (size_t i = 0; i < 19; ++i) bv[i] = av[i] + av[i + 1] * av[i + 1];
    for (size_t i = 0; i < 17; ++i) cv[i] = bv[i] * 2 + bv[i + 2];
    return cv;
  }
  Data run_on(const Schedule& s, const std::string& golden = "") const {
    tir::PrimFunc f = lower(s, {a, c}, "chain");
    if (!golden.empty()) tir::testing::expect_golden_in("te", golden, tir::to_text(f));
    return run(f, {{"A", pattern(20, 3)}}, "C", 17);
  }
};

TEST(TeLower, RootIntermediateIsAllocated) {
  Chain ch;
  Schedule s = create_schedule({ch.c});
  EXPECT_EQ(ch.run_on(s), ch.reference());
}

TEST(TeLower, ComputeAtRegionAndNonDividingSplit) {
  Chain ch;
  Schedule s = create_schedule({ch.c});
  auto [xo, xi] = s[ch.c].split(ch.c.op()->axis[0], 5);
  s[ch.b].compute_at(s[ch.c], xo);
  Bounds bd = infer_bound(s);
  // a tile of 5 outputs reads 7 elements of B starting at xo*5 (clipped to B's 19)
  EXPECT_EQ(tir::to_text(bd.at(ch.b.op()->axis[0]).min), "(i.outer * 5)");
  EXPECT_EQ(ch.run_on(s, "chain_compute_at.tir"), ch.reference());
  // innermost attachment: one element of B per use
  Schedule s2 = create_schedule({ch.c});
  auto [yo, yi] = s2[ch.c].split(ch.c.op()->axis[0], 4);
  s2[ch.b].compute_at(s2[ch.c], yi);
  s2[ch.b].split(ch.b.op()->axis[0], 2);
  EXPECT_EQ(ch.run_on(s2), ch.reference());
}

TEST(TeLower, ComputeInline) {
  Chain ch;
  Schedule s = create_schedule({ch.c});
  s[ch.b].compute_inline();
  tir::PrimFunc f = lower(s, {ch.a, ch.c}, "chain");
  EXPECT_EQ(tir::to_text(f).find("allocate"), std::string::npos);
  EXPECT_EQ(ch.run_on(s), ch.reference());
}

TEST(TeLower, CacheReadAtReductionAxis) {
  Matmul mm(8, 6, 12);
  Schedule s = create_schedule({mm.c});
  Tensor aa = s.cache_read(mm.a, tir::MemScope::kInp, {mm.c});
  Tensor bb = s.cache_read(mm.b, tir::MemScope::kWgt, {mm.c});
  auto t = s[mm.c].tile(mm.c.op()->axis[0], mm.c.op()->axis[1], 4, 3);
  auto [ko, ki] = s[mm.c].split(mm.r, 5);
  s[mm.c].reorder({t[0], t[1], ko, t[2], t[3], ki});
  s[aa].compute_at(s[mm.c], ko);
  s[bb].compute_at(s[mm.c], ko);
  tir::PrimFunc f = lower(s, {mm.a, mm.b, mm.c}, "matmul_cache");
  tir::testing::expect_golden_in("te", "matmul_cache_read.tir", tir::to_text(f));
  EXPECT_EQ(mm.run_on(s), mm.reference());
}

TEST(TeLower, CacheWriteAndNestedComputeAt) {
  Matmul mm(8, 6, 4);
  Schedule s = create_schedule({mm.c});
  Tensor cl = s.cache_write(mm.c, tir::MemScope::kAcc);
  Tensor aa = s.cache_read(mm.a, tir::MemScope::kInp, {cl});
  auto [io, ii] = s[mm.c].split(mm.c.op()->axis[0], 3);
  s[cl].compute_at(s[mm.c], io);
  s[aa].compute_at(s[cl], cl.op()->reduce_axis[0]);
  EXPECT_EQ(mm.run_on(s), mm.reference());
}

TEST(TeLower, ProducerChainAttachedToOneConsumer) {
  // A.shared at the outer loop, A.local (reading A.shared) at the inner loop, both in C
  Chain ch;
  Schedule s = create_schedule({ch.c});
  Tensor as = s.cache_read(ch.a, tir::MemScope::kShared, {ch.b});
  Tensor al = s.cache_read(as, tir::MemScope::kLocal, {ch.b});
  auto [xo, xi] = s[ch.c].split(ch.c.op()->axis[0], 6);
  s[ch.b].compute_at(s[ch.c], xi);
  s[as].compute_at(s[ch.c], xo);
  s[al].compute_at(s[ch.c], xi);
  EXPECT_EQ(ch.run_on(s), ch.reference());
}

TEST(TeLower, AnnotationsGolden) {
  Tensor a = placeholder({64, 32}, DataType::int32(), "A");
  Tensor b = compute({64, 32}, [&](const std::vector<Var>& i) { return a(i[0], i[1]) + 3; }, "B");
  Schedule s = create_schedule({b});
  auto [xo, xi] = s[b].split(b.op()->axis[0], 16);
  auto [vo, vi] = s[b].split(xo, 2);
  auto [yo, yi] = s[b].split(b.op()->axis[1], 8);
  s[b].reorder({vo, vi, xi, yo, yi});
  s[b].bind(vo, "blockIdx.x");
  s[b].bind(vi, "vthread");
  s[b].parallel(xi);
  s[b].unroll(yo);
  s[b].vectorize(yi);
  s[b].pragma(xi, "alu");
  s[b].pragma(yo, "dma_copy", 2);
  tir::PrimFunc f = lower(s, {a, b}, "annotated");
  tir::testing::expect_golden_in("te", "annotations.tir", tir::to_text(f));
  Data av = pattern(64 * 32, 4), want(64 * 32);
  for (size_t i = 0; i < want.size(); ++i) want[i] = av[i] + 3;
  EXPECT_EQ(run(f, {{"A", av}}, "B", want.size()), want);
}

TEST(TeLower, MaxReductionWithInit) {
  Tensor a = placeholder({6, 9}, DataType::int32(), "A");
  IterVar r = reduce_axis(9, "r");
  Tensor m = compute({6}, [&](const std::vector<Var>& i) { return max(a(i[0], r), {r}); }, "M");
  Tensor s2 = compute({6}, [&](const std::vector<Var>& i) { return sum(a(i[0], r), {r}, Expr(100)); }, "S");
  Schedule s = create_schedule({m, s2});
  s[m].split(r, 4);
  Data av = pattern(54, 5);
  tir::PrimFunc f = lower(s, {a, m, s2}, "maxsum");
  tir::testing::Interpreter in;
  in.set_strict(true);
  auto out = in.run_buffers(f, {{"A", av}, {"M", Data(6, 0)}, {"S", Data(6, 0)}});
  for (size_t i = 0; i < 6; ++i) {
    int64_t mx = av[i * 9], sm = 100;
    for (size_t x = 0; x < 9; ++x) mx = std::max(mx, av[i * 9 + x]), sm += av[i * 9 + x];
    EXPECT_EQ(out.at("M")[i], mx);
    EXPECT_EQ(out.at("S")[i], sm);
  }
}

TEST(TeLower, Errors) {
  Chain ch;
  Schedule s = create_schedule({ch.c});
  EXPECT_EQ(user_error_of([&] { lower(s, {ch.a}, "f"); }), "lower: output C is not an argument");
  EXPECT_EQ(user_error_of([&] { lower(s, {ch.c}, "f"); }), "lower: placeholder A is read by B but is not an argument");
  EXPECT_EQ(user_error_of([&] { lower(s, {ch.a, ch.c, ch.a}, "f"); }), "lower: argument A is listed twice");
  // B attached in C but also read by D at the root
  Tensor d = compute({19}, [&](const std::vector<Var>& i) { return ch.b(i[0]) - 1; }, "D");
  Schedule s2 = create_schedule({ch.c, d});
  s2[ch.b].compute_at(s2[ch.c], ch.c.op()->axis[0]);
  EXPECT_EQ(user_error_of([&] { lower(s2, {ch.a, ch.c, d}, "f"); }),
            "stage B is computed at axis i of stage C but is also read by stage D, outside that loop");
  Schedule s4 = create_schedule({ch.c});
  s4[ch.b].compute_at(s4[ch.c], ch.c.op()->axis[0]);
  s4[ch.c].split(ch.c.op()->axis[0], 4);
  EXPECT_EQ(user_error_of([&] { lower(s4, {ch.a, ch.c}, "f"); }),
            "stage B: compute_at axis i of stage C, which is no longer a leaf (split or fused afterwards)");
  Schedule s5 = create_schedule({ch.c});
  s5[ch.b].compute_inline();
  EXPECT_EQ(user_error_of([&] { lower(s5, {ch.a, ch.b, ch.c}, "f"); }), "lower: argument B is computed inline");
  Schedule s3 = create_schedule({ch.c});
  auto [xo, xi] = s3[ch.c].split(ch.c.op()->axis[0], 5);
  s3[ch.b].compute_at(s3[ch.c], xo);
  s3[ch.b].vectorize(ch.b.op()->axis[0]);
  std::string msg = user_error_of([&] { lower(s3, {ch.a, ch.c}, "f"); });
  EXPECT_EQ(msg.rfind("stage B: vectorized axis i has the non-constant extent ", 0), 0u) << msg;
}

}  // namespace
}  // namespace tessel::te
