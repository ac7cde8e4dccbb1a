// transforms/inject_virtual_threads: before/after pairs, errors, a golden dump, and runs on the
// reference interpreter (tir_interpreter.h): the injected code leaves memory as running the
// virtual-thread loop serially does.
#include <gtest/gtest.h>

#include "compiler/tir/transforms/inject_virtual_threads.h"
#include "support/error.h"
#include "tir_interpreter.h"
#include "tir_test_util.h"

namespace tessel::tir::transforms {
namespace {

using testing::expect_golden;
using testing::expect_same_func;
using testing::expect_same_stmt;
using testing::Interpreter;

// Runs `s` with the buffers filled with patterns; returns their contents.
std::vector<std::vector<int64_t>> execute(const Stmt& s, const std::vector<Buffer>& bufs) {
  Interpreter in;
  int64_t syncs = 0;
  in.on_call("test.sync", [&](Interpreter&, const CallNode*) { ++syncs; });
  std::vector<std::vector<int64_t>> out = testing::run_on_patterns(s, bufs, 3, in);
  out.push_back({syncs});
  return out;
}

void expect_same_results(const Stmt& before, const Stmt& after, const std::vector<Buffer>& bufs) {
  EXPECT_EQ(execute(before, bufs), execute(after, bufs)) << "after:\n" << to_text(after);
}

// C[vt * 4 + i] = sum_k B[vt * 4 + i] * W[k], two virtual threads sharing the weight copy.
struct Gemv {
  Buffer b{"B", DataType::int32(), {8}}, w{"W", DataType::int32(), {4}}, c{"C", DataType::int32(), {8}};
  Buffer acc{"acc", DataType::int32(), {4}, MemScope::kAcc}, wgt{"wgt", DataType::int32(), {4}, MemScope::kWgt};
  Stmt body(const Var& vt) const {
    Var i0("i"), k("k"), i1("i"), i2("i");
    return allocate(
        acc, allocate(wgt, seq({for_loop(i0, 0, 4, ForKind::kSerial, buffer_store(acc, 0, {i0})),
                                for_loop(k, 0, 4, ForKind::kSerial,
                                         seq({buffer_store(wgt, buffer_load(w, {k}), {k}),
                                              for_loop(i1, 0, 4, ForKind::kSerial,
                                                       buffer_store(acc,
                                                                    buffer_load(acc, {i1}) +
                                                                        buffer_load(b, {vt * 4 + i1}) * buffer_load(wgt, {k}),
                                                                    {i1}))})),
                                for_loop(i2, 0, 4, ForKind::kSerial, buffer_store(c, buffer_load(acc, {i2}), {vt * 4 + i2}))})));
  }
};

TEST(TransformInjectVirtualThreads, ReplicatesAllocationsAndSharesIndependentStatements) {
  Gemv g;
  Var vt("vt");
  Stmt before = for_loop(vt, 0, 2, ForKind::kVirtualThread, g.body(vt));
  Stmt after = inject_virtual_threads(before);
  Buffer acc2("acc", DataType::int32(), {2, 4}, MemScope::kAcc);
  Var i0("i"), k("k"), i1("i"), i2("i");
  Stmt expected = allocate(
      acc2,
      allocate(g.wgt,
               seq({for_loop(i0, 0, 4, ForKind::kSerial, seq({buffer_store(acc2, 0, {0, i0}), buffer_store(acc2, 0, {1, i0})})),
                    for_loop(k, 0, 4, ForKind::kSerial,
                             seq({buffer_store(g.wgt, buffer_load(g.w, {k}), {k}),
                                  for_loop(i1, 0, 4, ForKind::kSerial,
                                           seq({buffer_store(acc2, buffer_load(acc2, {0, i1}) + buffer_load(g.b, {i1}) * buffer_load(g.wgt, {k}), {0, i1}),
                                                buffer_store(acc2, buffer_load(acc2, {1, i1}) + buffer_load(g.b, {i1 + 4}) * buffer_load(g.wgt, {k}), {1, i1})}))})),
                    for_loop(i2, 0, 4, ForKind::kSerial,
                             seq({buffer_store(g.c, buffer_load(acc2, {0, i2}), {i2}),
                                  buffer_store(g.c, buffer_load(acc2, {1, i2}), {i2 + 4})}))})));
  expect_same_stmt(after, expected);
  expect_same_results(before, after, {g.b, g.w, g.c});
}

TEST(TransformInjectVirtualThreads, AttributeFormAndLoopWithAttributeGiveTheSame) {
  Gemv g;
  Var vt("vt"), vt2("vt");
  Stmt serial = for_loop(vt, 0, 2, ForKind::kVirtualThread, g.body(vt));
  Stmt from_loop = inject_virtual_threads(serial);
  Stmt from_attr = inject_virtual_threads(attr_stmt(vt2, "virtual_thread", 2, g.body(vt2)));
  Var vt3("vt");
  Stmt from_both = inject_virtual_threads(
      for_loop(vt3, 0, 2, ForKind::kVirtualThread, attr_stmt(vt3, "virtual_thread", 2, g.body(vt3))));
  expect_same_stmt(from_attr, from_loop);
  expect_same_stmt(from_both, from_loop);
}

TEST(TransformInjectVirtualThreads, DmaCallsThroughAccessPtr) {
  // Per thread: copy 4 inputs into its replica of `inp` (access_ptr offset moves by 4), copy the
  // shared weights once, combine.
  Buffer x("X", DataType::int32(), {8}), w("W", DataType::int32(), {4}), y("Y", DataType::int32(), {8});
  Buffer inp("inp", DataType::int32(), {4}, MemScope::kInp), wgt("wgt", DataType::int32(), {4}, MemScope::kWgt);
  Var vt("vt"), i("i");
  auto copy = [](const Buffer& dst, Expr doff, const Buffer& src, Expr soff) {
    return evaluate(call(DataType::int32(), "test.copy",
                         {intrin::access_ptr(dst, std::move(doff), 4, 2), intrin::access_ptr(src, std::move(soff), 4, 1)}));
  };
  Stmt body = allocate(inp, allocate(wgt, seq({copy(inp, 0, x, vt * 4), copy(wgt, 0, w, 0),
                                               for_loop(i, 0, 4, ForKind::kSerial,
                                                        buffer_store(y, buffer_load(inp, {i}) - buffer_load(wgt, {i}), {vt * 4 + i}))})));
  Stmt before = for_loop(vt, 0, 2, ForKind::kVirtualThread, body);
  Stmt after = inject_virtual_threads(before);
  Buffer inp2("inp", DataType::int32(), {2, 4}, MemScope::kInp);
  Var i2("i");
  Stmt expected = allocate(
      inp2, allocate(wgt, seq({evaluate(call(DataType::int32(), "test.copy", {intrin::access_ptr(inp2, 0, 4, 2), intrin::access_ptr(x, 0, 4, 1)})),
                               evaluate(call(DataType::int32(), "test.copy", {intrin::access_ptr(inp2, 4, 4, 2), intrin::access_ptr(x, 4, 4, 1)})),
                               copy(wgt, 0, w, 0),
                               for_loop(i2, 0, 4, ForKind::kSerial,
                                        seq({buffer_store(y, buffer_load(inp2, {0, i2}) - buffer_load(wgt, {i2}), {i2}),
                                             buffer_store(y, buffer_load(inp2, {1, i2}) - buffer_load(wgt, {i2}), {i2 + 4})}))})));
  expect_same_stmt(after, expected);
  expect_same_results(before, after, {x, w, y});
}

TEST(TransformInjectVirtualThreads, CthreadGivesEveryThreadItsOwnBuffers) {
  // The Gemv of the vthread test under a "cthread" loop: the weight copy does not depend on the
  // thread, yet wgt is replicated too and each thread loads its own copy (ping-pong buffers).
  Gemv g;
  Var vt("vt");
  Stmt before = for_loop(vt, 0, 2, ForKind::kVirtualThread, g.body(vt), "cthread");
  EXPECT_EQ(to_text(before).substr(0, 43), "for vt in range(0, 2) vthread(\"cthread\") {\n");
  Stmt after = inject_virtual_threads(before);
  const std::string text = to_text(after);
  EXPECT_NE(text.find("allocate wgt: int32[2, 4] local.wgt_buffer"), std::string::npos) << text;
  EXPECT_NE(text.find("wgt[0, k] = W[k]"), std::string::npos) << text;
  EXPECT_NE(text.find("wgt[1, k] = W[k]"), std::string::npos) << text;
  expect_same_results(before, after, {g.b, g.w, g.c});
  expect_golden("transform_inject_virtual_threads_cthread.tir", text);
  // the same loop as a vthread shares the weight copy
  const std::string shared = to_text(inject_virtual_threads(for_loop(vt, 0, 2, ForKind::kVirtualThread, g.body(vt))));
  EXPECT_NE(shared.find("allocate wgt: int32[4] local.wgt_buffer"), std::string::npos) << shared;
}

TEST(TransformInjectVirtualThreads, OpaqueAttributesAreCopiedWhole) {
  // for k { attr "unit" { for i: A[vt * 4 + i] = i } }: by default the thread goes into the
  // attribute and the loop; with "unit" opaque, the attribute is copied whole per thread.
  Buffer a("A", DataType::int32(), {8});
  Var vt("vt"), i("i");
  Stmt body = attr_stmt(Expr(), "unit", 1, for_loop(i, 0, 4, ForKind::kSerial, buffer_store(a, i, {vt * 4 + i})));
  Stmt before = for_loop(vt, 0, 2, ForKind::kVirtualThread, body);
  const std::string pushed = to_text(inject_virtual_threads(before));
  EXPECT_EQ(pushed.find("attr [] \"unit\""), pushed.rfind("attr [] \"unit\"")) << pushed;  // one attribute
  VirtualThreadOptions o;
  o.opaque_attrs = {"unit"};
  arith::Analyzer az;
  const Stmt after = inject_virtual_threads(before, az, o);
  const std::string text = to_text(after);
  EXPECT_NE(text.find("attr [] \"unit\""), text.rfind("attr [] \"unit\"")) << text;  // two
  expect_same_results(before, after, {a});
  expect_golden("transform_inject_virtual_threads_opaque.tir", text);
}

TEST(TransformInjectVirtualThreads, StatementsThatAreNotIdempotentRunPerThread) {
  Buffer a("A", DataType::int32(), {4}), cnt("cnt", DataType::int32(), {1}), d("D", DataType::int32(), {4});
  Buffer src("S", DataType::int32(), {4});
  Var vt("vt");
  // cnt[0] += 1 does not use vt but must happen twice; so must a sync call of unknown effect;
  // the copy of S[3] into D[2] is thread-independent and idempotent: once. (A copy into A would
  // run per thread: the threads write A.) The sync and the store to A, consecutive statements
  // copied whole, run thread by thread: sync, A[0], sync, A[1].
  Stmt body = seq({buffer_store(cnt, buffer_load(cnt, {0}) + 1, {0}), buffer_store(d, buffer_load(src, {3}), {2}),
                   evaluate(call(DataType::int32(), "test.sync", {})), buffer_store(a, vt, {vt})});
  Stmt before = for_loop(vt, 0, 2, ForKind::kVirtualThread, body);
  Stmt after = inject_virtual_threads(before);
  Stmt expected = seq({buffer_store(cnt, buffer_load(cnt, {0}) + 1, {0}), buffer_store(cnt, buffer_load(cnt, {0}) + 1, {0}),
                       buffer_store(d, buffer_load(src, {3}), {2}),
                       evaluate(call(DataType::int32(), "test.sync", {})), buffer_store(a, 0, {0}),
                       evaluate(call(DataType::int32(), "test.sync", {})), buffer_store(a, 1, {1})});
  expect_same_stmt(after, expected);
  expect_same_results(before, after, {a, cnt, d, src});
  // A thread-independent, idempotent body runs once.
  Stmt once = for_loop(vt, 0, 3, ForKind::kVirtualThread, buffer_store(d, buffer_load(a, {1}) * 2, {2}));
  expect_same_stmt(inject_virtual_threads(once), buffer_store(d, buffer_load(a, {1}) * 2, {2}));
  expect_same_results(once, inject_virtual_threads(once), {a, d});
}

TEST(TransformInjectVirtualThreads, DependentLetsAndConditions) {
  Buffer c("C", DataType::int32(), {12}), a("A", DataType::int32(), {12});
  Var vt("vt"), t("t"), i("i"), n("n");
  // t depends on the thread: one let per thread; the if on n is kept and the thread pushed in;
  // the loop whose extent depends on vt is copied whole.
  Var j("j");
  Stmt body = let_stmt(t, vt * 4 + buffer_load(a, {0}) * 0,
                       seq({if_then_else(n > 1, for_loop(i, 0, 4, ForKind::kSerial, buffer_store(c, i, {t + i}))),
                            for_loop(j, 0, vt + 1, ForKind::kSerial, buffer_store(a, j, {vt * 4 + j + 1}))}));
  Stmt before = let_stmt(n, 2, for_loop(vt, 0, 3, ForKind::kVirtualThread, body));
  Stmt after = inject_virtual_threads(before);
  EXPECT_TRUE(verify(PrimFunc("f", {c->data, a->data}, {{c->data, c}, {a->data, a}}, after)).empty()) << to_text(after);
  expect_same_results(before, after, {c, a});
  expect_golden("transform_inject_virtual_threads_lets.tir", to_text(after));
}

TEST(TransformInjectVirtualThreads, NestedVirtualThreads) {
  Buffer c("C", DataType::int32(), {2, 3, 4});
  Buffer tmp("tmp", DataType::int32(), {4}, MemScope::kLocal);
  Var vx("vx"), vy("vy"), i("i"), i2("i");
  Stmt before = for_loop(
      vx, 0, 2, ForKind::kVirtualThread,
      for_loop(vy, 0, 3, ForKind::kVirtualThread,
               allocate(tmp, seq({for_loop(i, 0, 4, ForKind::kSerial, buffer_store(tmp, vx * 10 + vy + i, {i})),
                                  for_loop(i2, 0, 4, ForKind::kSerial, buffer_store(c, buffer_load(tmp, {i2}), {vx, vy, i2}))}))));
  Stmt after = inject_virtual_threads(before);
  // The inner thread replicates tmp 3 times, the outer one the result twice: [2, 3, 4].
  const auto* alloc = after.as<AllocateNode>();
  ASSERT_TRUE(alloc != nullptr) << to_text(after);
  EXPECT_EQ(alloc->buffer.ndim(), 3u);
  expect_same_results(before, after, {c});
  expect_golden("transform_inject_virtual_threads_nested.tir", to_text(after));
}

TEST(TransformInjectVirtualThreads, StridedReplicasFlatIndicesAndRegions) {
  // A strided allocation (a gap after each row) read through a flat index and copied out
  // through access_ptr: replica t starts t * 7 elements in.
  Buffer c("C", DataType::int32(), {16}), d("D", DataType::int32(), {2});
  Buffer tmp("tmp", DataType::int32(), {2, 3}, MemScope::kLocal, {4, 1});
  Var vt("vt"), i("i"), j("j");
  Stmt body = allocate(
      tmp, seq({for_loop(i, 0, 2, ForKind::kSerial,
                         for_loop(j, 0, 3, ForKind::kSerial, buffer_store(tmp, vt * 100 + i * 10 + j, {i, j}))),
                evaluate(call(DataType::int32(), "test.copy",
                              {intrin::access_ptr(c, vt * 8, 7, 2), intrin::access_ptr(tmp, 0, 7, 1)})),
                buffer_store(d, buffer_load(tmp, {5}), {vt})}));
  Stmt before = for_loop(vt, 0, 2, ForKind::kVirtualThread, body);
  Stmt after = inject_virtual_threads(before);
  Buffer rep("tmp", DataType::int32(), {2, 2, 3}, MemScope::kLocal, {7, 4, 1});
  Var i2("i"), j2("j");
  auto copy_out = [&](int t) {
    return evaluate(call(DataType::int32(), "test.copy",
                         {intrin::access_ptr(c, t * 8, 7, 2), intrin::access_ptr(rep, t * 7, 7, 1)}));
  };
  Stmt expected = allocate(
      rep, seq({for_loop(i2, 0, 2, ForKind::kSerial,
                         for_loop(j2, 0, 3, ForKind::kSerial,
                                  seq({buffer_store(rep, i2 * 10 + j2, {0, i2, j2}),
                                       buffer_store(rep, i2 * 10 + j2 + 100, {1, i2, j2})}))),
                copy_out(0), buffer_store(d, buffer_load(rep, {5}), {0}), copy_out(1),
                buffer_store(d, buffer_load(rep, {12}), {1})}));
  expect_same_stmt(after, expected);
  expect_same_results(before, after, {c, d});
}

TEST(TransformInjectVirtualThreads, PrimFuncGolden) {
  Var vt("vt");
  Gemv h;
  PrimFunc before("gemv", {h.b->data, h.w->data, h.c->data}, {{h.b->data, h.b}, {h.w->data, h.w}, {h.c->data, h.c}},
                  for_loop(vt, 0, 2, ForKind::kVirtualThread, h.body(vt)));
  PrimFunc after = inject_virtual_threads(before);
  EXPECT_TRUE(verify(after).empty()) << to_text(after);
  expect_golden("transform_inject_virtual_threads.tir", to_text(after));
  EXPECT_EQ(inject_virtual_threads(after).get(), after.get());
}

TEST(TransformInjectVirtualThreads, Errors) {
  Buffer c("C", DataType::int32(), {4});
  Var vt("vt"), n("n");
  try {
    inject_virtual_threads(for_loop(vt, 0, n, ForKind::kVirtualThread, buffer_store(c, vt, {vt})));
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "inject_virtual_threads: virtual thread 'vt' has non-constant extent n");
  }
  try {
    inject_virtual_threads(for_loop(vt, 0, 2, ForKind::kVirtualThread, attr_stmt(vt, "virtual_thread", 3, buffer_store(c, vt, {vt}))));
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "inject_virtual_threads: virtual thread 'vt' has extent 2 but its attribute says 3");
  }
  // One thread is the body at vt = min; none is nothing.
  expect_same_stmt(inject_virtual_threads(for_loop(vt, 1, 1, ForKind::kVirtualThread, buffer_store(c, vt, {vt}))),
                   buffer_store(c, 1, {1}));
  EXPECT_TRUE(is_no_op(inject_virtual_threads(for_loop(vt, 0, 0, ForKind::kVirtualThread, buffer_store(c, vt, {vt})))));
}

}  // namespace
}  // namespace tessel::tir::transforms
