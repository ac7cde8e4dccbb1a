// compiler/te schedules: stage order, the axis primitives' effect on the leaves, annotations,
// cache stages, and the UserErrors naming stage and axis.
#include <gtest/gtest.h>

#include "compiler/te/schedule.h"
#include "compiler/tir/printer.h"
#include "tests/te/te_test_util.h"

namespace tessel::te {
namespace {

using testing::user_error_of;
using tir::DataType;

std::string leaves(const Stage& s) {
  std::string out;
  for (const IterVar& iv : s->leaf_iter_vars) out += (out.empty() ? "" : " ") + iv.name();
  return out;
}

struct Matmul {
  Tensor a = placeholder({16, 32}, DataType::int32(), "A");
  Tensor b = placeholder({32, 8}, DataType::int32(), "B");
  IterVar k = reduce_axis(32, "k");
  Tensor c = compute({16, 8}, [&](const std::vector<Var>& i) { return sum(a(i[0], k) * b(k, i[1]), {k}); }, "C");
};

TEST(TeSchedule, StagesInTopologicalOrder) {
  Tensor a = placeholder({8}, DataType::int32(), "A");
  Tensor b = compute({8}, [&](const std::vector<Var>& i) { return a(i[0]) + 1; }, "B");
  Tensor c = compute({8}, [&](const std::vector<Var>& i) { return b(i[0]) * a(i[0]); }, "C");
  Schedule s = create_schedule({c});
  ASSERT_EQ(s->stages.size(), 3u);
  EXPECT_EQ(s->stages[0].name(), "A");
  EXPECT_EQ(s->stages[1].name(), "B");
  EXPECT_EQ(s->stages[2].name(), "C");
  EXPECT_TRUE(s->stages[2]->is_output);
  EXPECT_FALSE(s->stages[1]->is_output);
  EXPECT_TRUE(s[b].same_as(s->stages[1]));
}

TEST(TeSchedule, SplitFuseReorderTile) {
  Matmul m;
  Schedule s = create_schedule({m.c});
  Stage st = s[m.c];
  EXPECT_EQ(leaves(st), "i j k");
  auto [ko, ki] = st.split(m.k, 4);
  EXPECT_EQ(leaves(st), "i j k.outer k.inner");
  EXPECT_EQ(ko.kind(), IterVarKind::kReduce);
  auto t = st.tile(m.c.op()->axis[0], m.c.op()->axis[1], 4, 2);
  EXPECT_EQ(leaves(st), "i.outer j.outer i.inner j.inner k.outer k.inner");
  st.reorder({ko, t[2]});
  EXPECT_EQ(leaves(st), "i.outer j.outer k.outer j.inner i.inner k.inner");
  IterVar f = st.fuse(t[0], t[1]);
  EXPECT_EQ(f.name(), "i.outer.j.outer.fused");
  EXPECT_EQ(leaves(st), "i.outer.j.outer.fused k.outer j.inner i.inner k.inner");
  auto [po, pi] = st.split_nparts(ki, 2);
  EXPECT_EQ(st->relations.back().nparts, 2);
  EXPECT_EQ(st->relations.back().factor, 0);
  EXPECT_EQ(leaves(st), "i.outer.j.outer.fused k.outer j.inner i.inner k.inner.outer k.inner.inner");
  EXPECT_EQ(st->relations.size(), 5u);
  EXPECT_EQ(st->all_iter_vars.size(), 3u + 2 + 2 + 2 + 1 + 2);
}

TEST(TeSchedule, AnnotationsAndAttach) {
  Matmul m;
  Tensor d = compute({16, 8}, [&](const std::vector<Var>& i) { return m.c(i[0], i[1]) + 1; }, "D");
  Schedule s = create_schedule({d});
  auto [xo, xi] = s[d].split(d.op()->axis[0], 4);
  IterVar bx = thread_axis("blockIdx.x");
  EXPECT_EQ(bx.kind(), IterVarKind::kThreadIndex);
  EXPECT_EQ(thread_axis("vthread", "vt").kind(), IterVarKind::kVirtualThread);
  s[d].bind(xo, bx);
  s[d].bind(xi, "vthread");
  s[d].vectorize(d.op()->axis[1]);
  s[d].pragma(xi, "dma_copy");
  s[m.c].compute_at(s[d], xi);
  s[m.c].unroll(m.k);
  const auto& attrs = s[d]->iter_var_attrs;
  EXPECT_EQ(attrs.at(xo.get()).for_kind, tir::ForKind::kThreadBinding);
  EXPECT_EQ(attrs.at(xo.get()).thread_tag, "blockIdx.x");
  EXPECT_EQ(attrs.at(xi.get()).for_kind, tir::ForKind::kVirtualThread);
  EXPECT_EQ(attrs.at(xi.get()).pragmas.at(0).first, "dma_copy");
  EXPECT_EQ(attrs.at(d.op()->axis[1].get()).for_kind, tir::ForKind::kVectorized);
  EXPECT_EQ(s[m.c]->attach_type, AttachKind::kScope);
  EXPECT_TRUE(s[m.c]->attach_stage.same_as(s[d]));
  EXPECT_TRUE(s[m.c]->attach_ivar.same_as(xi));
  EXPECT_EQ(s[m.c]->iter_var_attrs.at(m.k.get()).for_kind, tir::ForKind::kUnrolled);
}

TEST(TeSchedule, CacheReadAndWrite) {
  Matmul m;
  Schedule s = create_schedule({m.c});
  Tensor aa = s.cache_read(m.a, tir::MemScope::kInp, {m.c});
  EXPECT_EQ(aa.name(), "A.local.inp_buffer");
  EXPECT_EQ(aa.buffer()->scope, tir::MemScope::kInp);
  Tensor cl = s.cache_write(m.c, tir::MemScope::kAcc);
  EXPECT_EQ(cl.name(), "C.local.acc_buffer");
  ASSERT_EQ(s->stages.size(), 5u);
  EXPECT_EQ(s->stages[0].name(), "A");
  EXPECT_EQ(s->stages[1].name(), "A.local.inp_buffer");
  EXPECT_EQ(s->stages[2].name(), "B");
  EXPECT_EQ(s->stages[3].name(), "C.local.acc_buffer");
  EXPECT_EQ(s->stages[4].name(), "C");
  // the cache-write stage holds the reduction, reading the read cache; C copies out of it
  EXPECT_EQ(tir::to_text(as_reduce(cl.op()->body)->source), "(A.local.inp_buffer[i, k] * B[k, j])");
  EXPECT_EQ(tir::to_text(s[m.c]->op->body), "C.local.acc_buffer[i, j]");
  EXPECT_EQ(leaves(s[m.c]), "i j");
  EXPECT_EQ(leaves(s[cl]), "i j k");
  EXPECT_TRUE(s[cl]->op->inputs[0].same_as(aa));
}

TEST(TeSchedule, ErrorsNameStageAndAxis) {
  Matmul m;
  Tensor e = compute({16}, [&](const std::vector<Var>& i) { return m.a(i[0], 0); }, "E");
  Schedule s = create_schedule({m.c, e});
  Stage c = s[m.c];
  IterVar i = m.c.op()->axis[0], j = m.c.op()->axis[1];
  c.split(i, 4);
  EXPECT_EQ(user_error_of([&] { c.split(i, 2); }),
            "stage C: split of axis i, which is not a leaf axis (already split or fused)");
  EXPECT_EQ(user_error_of([&] { c.split(e.op()->axis[0], 2); }), "stage C: split of axis i, which is not an axis of this stage");
  EXPECT_EQ(user_error_of([&] { c.split(j, 0); }), "stage C: split of axis j by factor 0; it must be positive");
  EXPECT_EQ(user_error_of([&] { c.reorder({j, m.k, j}); }), "stage C: reorder lists axis j twice");
  IterVar io = c->leaf_iter_vars[0];
  EXPECT_EQ(user_error_of([&] { c.fuse(io, j); }),
            "stage C: fuse of i.outer and j, which are not adjacent leaf axes (positions 0 and 2)");
  EXPECT_EQ(user_error_of([&] { c.fuse(j, m.k); }), "stage C: fuse of data-parallel axis j with reduction axis k");
  EXPECT_EQ(user_error_of([&] { s[m.c].compute_at(s[e], e.op()->axis[0]); }),
            "stage C: compute_at stage E, which does not read C");
  EXPECT_EQ(user_error_of([&] { s[m.c].compute_inline(); }), "stage C: compute_inline of an output of the schedule");
  EXPECT_EQ(user_error_of([&] { s[m.a].split(i, 2); }),
            "stage A: split of a placeholder, which has no loops to schedule");
  EXPECT_EQ(user_error_of([&] { c.bind(j, "warp.x"); }),
            "stage C: bind of axis j to unknown thread tag 'warp.x' (blockIdx.x|y|z, threadIdx.x|y|z, vthread, cthread)");
  EXPECT_EQ(user_error_of([&] { c.bind(m.k, "threadIdx.x"); }), "stage C: bind of reduction axis k to threadIdx.x");
  EXPECT_EQ(user_error_of([&] { c.bind(j, m.k); }), "stage C: bind of axis j to k (kind reduce), which is not a thread axis");
  EXPECT_EQ(user_error_of([&] { thread_axis("lane"); }),
            "thread_axis: unknown thread tag 'lane' (blockIdx.x|y|z, threadIdx.x|y|z, vthread, cthread)");
  EXPECT_EQ(user_error_of([&] { c.parallel(m.k); }), "stage C: parallel of reduction axis k");
  c.parallel(j);
  EXPECT_EQ(user_error_of([&] { c.vectorize(j); }), "stage C: vectorize of axis j, which is already parallel");
  EXPECT_EQ(user_error_of([&] { c.split(j, 2); }), "stage C: split of axis j, which already carries a loop annotation");
  EXPECT_EQ(user_error_of([&] { s.cache_write(m.c, tir::MemScope::kAcc); }),
            "stage C: cache_write after the stage was split, fused or annotated");
  EXPECT_EQ(user_error_of([&] { s.cache_read(m.b, tir::MemScope::kWgt, {e}); }), "cache_read of B: reader E does not read B");
  Tensor stray = placeholder({2}, DataType::int32(), "Z");
  EXPECT_EQ(user_error_of([&] { s[stray]; }), "schedule: tensor Z is not in this schedule");
}

TEST(TeSchedule, NestedComputeAtAndReductionInline) {
  Tensor a = placeholder({8}, DataType::int32(), "A");
  IterVar r = reduce_axis(8, "r");
  Tensor b = compute({8}, [&](const std::vector<Var>& i) { return sum(a(r) + i[0], {r}); }, "B");
  Tensor c = compute({8}, [&](const std::vector<Var>& i) { return b(i[0]) * 2; }, "C");
  Tensor d = compute({8}, [&](const std::vector<Var>& i) { return c(i[0]) + b(i[0]); }, "D");
  Schedule s = create_schedule({d});
  EXPECT_EQ(user_error_of([&] { s[b].compute_inline(); }), "stage B: compute_inline of a reduction");
  s[c].compute_at(s[d], d.op()->axis[0]);
  s[b].compute_at(s[c], c.op()->axis[0]);
  EXPECT_TRUE(s[b]->attach_stage.same_as(s[c]));
  EXPECT_TRUE(s[c]->attach_stage.same_as(s[d]));
  EXPECT_EQ(user_error_of([&] { s[b].compute_at(s[d], b.op()->axis[0]); }),
            "stage D: compute_at target of axis i, which is not an axis of this stage");
}

}  // namespace
}  // namespace tessel::te
