// Property test of bound inference and lowering: randomly scheduled matmuls and stencil chains
// (splits and split_nparts with factors that need not divide, reorders, fuses, cache_read stages
// and compute_at at random loops, inlining) run on the reference interpreter and compared with
// plain C++ loops. Deterministic (fixed seeds).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "compiler/te/lower.h"
#include "compiler/tir/printer.h"
#include "tests/tir/tir_interpreter.h"

namespace tessel::te {
namespace {

using tir::DataType;
using Data = std::vector<int64_t>;

Data pattern(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  Data d(n);
  for (auto& x : d) x = static_cast<int64_t>(g() % 15) - 7;
  return d;
}

/// Random splits, fuses and a shuffle of the stage's leaves.
void scramble(Stage st, std::mt19937& g) {
  int splits = static_cast<int>(g() % 3);
  for (int s = 0; s < splits; ++s) {
    const auto& leaves = st->leaf_iter_vars;
    IterVar iv = leaves[g() % leaves.size()];
    if (g() % 3 == 0) st.split_nparts(iv, 1 + g() % 4);
    else st.split(iv, 1 + g() % 5);
  }
  std::vector<IterVar> order = st->leaf_iter_vars;
  std::shuffle(order.begin(), order.end(), g);
  st.reorder(order);
  if (g() % 3 == 0 && st->leaf_iter_vars.size() >= 2) {
    size_t p = g() % (st->leaf_iter_vars.size() - 1);
    const IterVar& a = st->leaf_iter_vars[p];
    const IterVar& b = st->leaf_iter_vars[p + 1];
    if ((a.kind() == IterVarKind::kReduce) == (b.kind() == IterVarKind::kReduce)) st.fuse(a, b);
  }
}

IterVar pick_leaf(const Stage& st, std::mt19937& g) { return st->leaf_iter_vars[g() % st->leaf_iter_vars.size()]; }

TEST(TeLowerRandom, Matmuls) {
  std::mt19937 g(12345);
  int guarded = 0, allocated = 0;
  for (int trial = 0; trial < 200; ++trial) {
    int m = 2 + static_cast<int>(g() % 9), n = 2 + static_cast<int>(g() % 9), k = 1 + static_cast<int>(g() % 9);
    Tensor a = placeholder({m, k}, DataType::int32(), "A");
    Tensor b = placeholder({k, n}, DataType::int32(), "B");
    IterVar r = reduce_axis(k, "k");
    Tensor c = compute({m, n}, [&](const std::vector<Var>& i) { return sum(a(i[0], r) * b(r, i[1]), {r}); }, "C");
    Schedule s = create_schedule({c});
    Tensor cl;
    bool write_cache = g() % 3 == 0;
    Stage main = s[c];
    if (write_cache) {
      cl = s.cache_write(c, tir::MemScope::kAcc);
      main = s[cl];
      scramble(s[c], g);
    }
    scramble(main, g);
    Tensor reader = write_cache ? cl : c;
    for (const Tensor& in : {a, b}) {
      if (g() % 2) continue;
      Tensor cache = s.cache_read(in, tir::MemScope::kLocal, {reader});
      s[cache].compute_at(main, pick_leaf(main, g));
      if (g() % 2) s[cache].split(s[cache]->leaf_iter_vars[g() % 2], 1 + g() % 3);
    }
    if (write_cache && g() % 2) s[cl].compute_at(s[c], pick_leaf(s[c], g));
    tir::PrimFunc f = lower(s, {a, b, c}, "matmul");
    Data av = pattern(static_cast<size_t>(m * k), 2u * trial), bv = pattern(static_cast<size_t>(k * n), 2u * trial + 1);
    Data want(static_cast<size_t>(m * n), 0);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j)
        for (int x = 0; x < k; ++x) want[static_cast<size_t>(i * n + j)] += av[static_cast<size_t>(i * k + x)] * bv[static_cast<size_t>(x * n + j)];
    std::string text = tir::to_text(f);
    guarded += text.find("tir.likely") != std::string::npos;
    allocated += text.find("allocate") != std::string::npos;
    tir::testing::Interpreter in;
    in.set_strict(true);
    Data got;
    try {
      got = in.run_buffers(f, {{"A", av}, {"B", bv}, {"C", Data(want.size(), 0)}}).at("C");
    } catch (const std::exception& e) {
      FAIL() << "trial " << trial << ": " << e.what() << "\n" << tir::to_text(f);
    }
    EXPECT_EQ(got, want) << "trial " << trial << "\n" << tir::to_text(f);
  }
  // the trials reach tail guards and attached allocations
  EXPECT_GE(guarded, 80);
  EXPECT_GE(allocated, 80);
}

TEST(TeLowerRandom, StencilChains) {
  std::mt19937 g(777);
  int guarded = 0, allocated = 0;
  for (int trial = 0; trial < 200; ++trial) {
    int n = 3 + static_cast<int>(g() % 14);
    Tensor a = placeholder({n + 3}, DataType::int32(), "A");
    Tensor b = compute({n + 2}, [&](const std::vector<Var>& i) { return a(i[0]) * 3 - a(i[0] + 1); }, "B");
    Tensor c = compute({n}, [&](const std::vector<Var>& i) { return b(i[0]) + b(i[0] + 2) * b(i[0] + 1); }, "C");
    Schedule s = create_schedule({c});
    scramble(s[c], g);
    int mode = static_cast<int>(g() % 3);  // 0 root, 1 compute_at, 2 inline
    Tensor as = s.cache_read(a, tir::MemScope::kShared, {b});
    size_t b_pos = 0;
    if (mode == 1) {
      b_pos = g() % s[c]->leaf_iter_vars.size();
      s[b].compute_at(s[c], s[c]->leaf_iter_vars[b_pos]);
      scramble(s[b], g);
    } else if (mode == 2) {
      s[b].compute_inline();
    } else {
      scramble(s[b], g);
    }
    // A.shared: at a loop of B, at a loop of C no deeper than B's attach point, or at the root
    int where = static_cast<int>(g() % 3);
    if (mode != 2 && where == 0) s[as].compute_at(s[b], pick_leaf(s[b], g));
    else if (mode == 1 && where == 1) s[as].compute_at(s[c], s[c]->leaf_iter_vars[g() % (b_pos + 1)]);
    else if (mode == 2 && where != 2) s[as].compute_at(s[c], pick_leaf(s[c], g));
    tir::PrimFunc f = lower(s, {a, c}, "chain");
    Data av = pattern(static_cast<size_t>(n + 3), 100u + trial), bv(static_cast<size_t>(n + 2)), want(static_cast<size_t>(n));
    for (size_t i = 0; i < bv.size(); ++i) bv[i] = av[i] * 3 - av[i + 1];
    for (size_t i = 0; i < want.size(); ++i) want[i] = bv[i] + bv[i + 2] * bv[i + 1];
    std::string text = tir::to_text(f);
    guarded += text.find("tir.likely") != std::string::npos;
    allocated += text.find("allocate") != std::string::npos;
    tir::testing::Interpreter in;
    in.set_strict(true);
    Data got;
    try {
      got = in.run_buffers(f, {{"A", av}, {"C", Data(want.size(), 0)}}).at("C");
    } catch (const std::exception& e) {
      FAIL() << "trial " << trial << ": " << e.what() << "\n" << tir::to_text(f);
    }
    EXPECT_EQ(got, want) << "trial " << trial << "\n" << tir::to_text(f);
  }
  // the trials reach tail guards and attached allocations
  EXPECT_GE(guarded, 80);
  EXPECT_GE(allocated, 80);
}

}  // namespace
}  // namespace tessel::te
