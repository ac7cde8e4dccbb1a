// The TIR pass manager (compiler/tir/pass_manager.h): passes run in order, dumps after a named
// pass or after all, per-pass timings, the verifier after each pass naming the culprit, and the
// errors of bad pass lists and dump names.
#include <gtest/gtest.h>

#include "compiler/tir/intrinsics.h"
#include "compiler/tir/pass_manager.h"
#include "compiler/tir/printer.h"
#include "compiler/tir/transforms/loop_partition.h"
#include "compiler/tir/transforms/simplify.h"
#include "support/error.h"
#include "tir_test_util.h"

namespace tessel::tir {
namespace {

/// f(A): for io in [0, 4): for ii in [0, 8): if likely(io*8 + ii < 30): A[io*8 + ii] = floordiv(ii*2, 2)
PrimFunc tiled() {
  Var av("A", DataType::handle());
  Buffer a = Buffer::over(av, "A", DataType::int32(), {30});
  Var io("io"), ii("ii");
  Stmt body = for_loop(
      io, 0, 4, ForKind::kSerial,
      for_loop(ii, 0, 8, ForKind::kSerial,
               if_then_else(intrin::likely(io * 8 + ii < 30), buffer_store(a, floordiv(ii * 2, 2), {io * 8 + ii}))));
  return PrimFunc("f", {av}, {{av, a}}, body);
}

/// The body followed by A[0] = floordiv(A[1] * 2, 2) (which simplify makes A[0] = A[1]).
PrimFunc append_halving(const PrimFunc& f) {
  const Buffer& a = f->buffer_map.front().second;
  return f.with_body(seq({f->body, buffer_store(a, floordiv(buffer_load(a, {Expr(1)}) * 2, 2), {Expr(0)})}));
}

PassManager three_passes() {
  return PassManager({{"loop_partition", "split at likely()", [](const PrimFunc& f) { return transforms::loop_partition(f); }},
                      {"append_halving", "append a store to simplify", append_halving},
                      {"simplify", "simplify", [](const PrimFunc& f) { return transforms::simplify(f); }}});
}

template <typename E, typename Fn>
std::string message_of(Fn&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "nothing thrown";
  return "";
}

TEST(PassManager, RunsInOrderDumpsAndTimesEveryPass) {
  const PassManager pm = three_passes();
  EXPECT_EQ(pm.names(), (std::vector<std::string>{"loop_partition", "append_halving", "simplify"}));
  EXPECT_TRUE(pm.contains("simplify"));
  EXPECT_FALSE(pm.contains("input"));
  const PrimFunc f = tiled();
  PassRunOptions o;
  o.dump_after = "all";
  o.verify = true;
  PassTrace trace;
  const PrimFunc out = pm.run(f, o, &trace);
  const PrimFunc partitioned = transforms::loop_partition(f);
  const PrimFunc appended = append_halving(partitioned);
  const PrimFunc want = transforms::simplify(appended);
  testing::expect_same_func(out, want);
  ASSERT_EQ(trace.ir_after.size(), 4u);
  EXPECT_EQ(trace.ir_after[0], (std::pair<std::string, std::string>{"input", to_text(f)}));
  EXPECT_EQ(trace.ir_after[1], (std::pair<std::string, std::string>{"loop_partition", to_text(partitioned)}));
  EXPECT_EQ(trace.ir_after[2], (std::pair<std::string, std::string>{"append_halving", to_text(appended)}));
  EXPECT_EQ(trace.ir_after[3], (std::pair<std::string, std::string>{"simplify", to_text(want)}));
  ASSERT_EQ(trace.pass_ms.size(), 3u);
  EXPECT_EQ(trace.pass_ms[0].first, "loop_partition");
  EXPECT_EQ(trace.pass_ms[1].first, "append_halving");
  EXPECT_EQ(trace.pass_ms[2].first, "simplify");
  for (const auto& [name, ms] : trace.pass_ms) EXPECT_GE(ms, 0.0) << name;
  // each pass saw its predecessor's output: the partitioned loops, then the halving simplified
  EXPECT_NE(trace.ir_after[0].second.find("tir.likely"), std::string::npos);
  EXPECT_EQ(trace.ir_after[1].second.find("tir.likely"), std::string::npos);
  EXPECT_NE(trace.ir_after[2].second.find("floordiv"), std::string::npos);
  EXPECT_EQ(trace.ir_after[3].second.find("floordiv"), std::string::npos);
  EXPECT_NE(trace.ir_after[3].second.find("A[0] = A[1]"), std::string::npos) << trace.ir_after[3].second;

  // one pass's dump only; no trace: still the same result
  o.dump_after = "loop_partition";
  PassTrace one;
  pm.run(f, o, &one);
  ASSERT_EQ(one.ir_after.size(), 1u);
  EXPECT_EQ(one.ir_after[0].first, "loop_partition");
  o.dump_after = "";
  PassTrace none;
  pm.run(f, o, &none);
  EXPECT_TRUE(none.ir_after.empty());
  EXPECT_EQ(none.pass_ms.size(), 3u);
  testing::expect_same_func(pm.run(f), want);
}

TEST(PassManager, VerifierNamesThePassThatBrokeTheFunction) {
  // a pass that binds the loop variable of the body a second time (not single assignment)
  const PassManager pm({{"simplify", "simplify", [](const PrimFunc& f) { return transforms::simplify(f); }},
                        {"twice", "the body twice, same binders", [](const PrimFunc& f) {
                           return f.with_body(seq({f->body, f->body}));
                         }}});
  PassRunOptions o;
  o.verify = true;
  const std::string m = message_of<InternalError>([&] { pm.run(tiled(), o); });
  EXPECT_NE(m.find("after pass twice is not well formed"), std::string::npos) << m;
  EXPECT_NE(m.find("loop variable 'io' is bound twice"), std::string::npos) << m;
  o.verify = false;  // not checked: runs through
  EXPECT_NO_THROW(pm.run(tiled(), o));
  // an ill-formed input is reported as such
  Var i("i");
  Var av("A", DataType::handle());
  Buffer ab = Buffer::over(av, "A", DataType::int32(), {4});
  Stmt bad = seq({for_loop(i, 0, 4, ForKind::kSerial, buffer_store(ab, 0, {i})),
                  for_loop(i, 0, 4, ForKind::kSerial, buffer_store(ab, 1, {i}))});
  o.verify = true;
  const std::string mi =
      message_of<InternalError>([&] { pm.run(PrimFunc("g", {av}, {{av, ab}}, bad), o); });
  EXPECT_NE(mi.find("after pass input is not well formed"), std::string::npos) << mi;
}

TEST(PassManager, BadPassListsAndDumpNames) {
  auto id = [](const PrimFunc& f) { return f; };
  EXPECT_NE(message_of<InternalError>([&] { PassManager({{"a", "", id}, {"a", "", id}}); }).find("'a' is repeated"),
            std::string::npos);
  EXPECT_NE(message_of<InternalError>([&] { PassManager({{"all", "", id}}); }).find("reserved"), std::string::npos);
  EXPECT_NE(message_of<InternalError>([&] { PassManager({{"input", "", id}}); }).find("reserved"), std::string::npos);
  EXPECT_NE(message_of<InternalError>([&] { PassManager({{"Bad-Name", "", id}}); }).find("lower case"),
            std::string::npos);
  EXPECT_NE(message_of<InternalError>([&] { PassManager({{"", "", id}}); }).find("lower case"), std::string::npos);
  EXPECT_NE(message_of<InternalError>([&] { PassManager({{"none", "", nullptr}}); }).find("no run function"),
            std::string::npos);
  const PassManager pm = three_passes();
  for (const char* ok : {"", "input", "all", "loop_partition", "simplify"}) EXPECT_NO_THROW(pm.check_dump_after(ok));
  EXPECT_NO_THROW(pm.check_dump_after("codegen", {"codegen"}));
  EXPECT_EQ(message_of<UserError>([&] { pm.check_dump_after("simplfy", {"codegen"}); }),
            "unknown pass 'simplfy' for the ir dump (passes: input, loop_partition, append_halving, simplify, codegen, all)");
}

TEST(PassManager, TimedStageAfterThePasses) {
  PassTrace trace;
  const int v = run_timed_stage("codegen", &trace, [] { return 42; });
  EXPECT_EQ(v, 42);
  ASSERT_EQ(trace.pass_ms.size(), 1u);
  EXPECT_EQ(trace.pass_ms[0].first, "codegen");
  EXPECT_EQ(run_timed_stage("codegen", nullptr, [] { return 7; }), 7);
  EXPECT_TRUE(dump_selects("all", "codegen"));
  EXPECT_TRUE(dump_selects("codegen", "codegen"));
  EXPECT_FALSE(dump_selects("", "codegen"));
  EXPECT_FALSE(dump_selects("simplify", "codegen"));
}

}  // namespace
}  // namespace tessel::tir
