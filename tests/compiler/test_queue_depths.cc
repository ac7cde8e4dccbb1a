// The driver's lowering of offloaded layers under small command-queue and token-queue depths
// (CMD_QUEUE_DEPTH, TOKEN_QUEUE_DEPTH of the config are user input): a schedule whose stream
// deadlocks on them is replaced by a safer one (compiler/driver/lower.h), and when none runs the
// result is a UserError naming the layer, the depths and the depths the layer needs.
#include <gtest/gtest.h>

#include <string>

#include "compiler/driver/lower.h"
#include "isa/verifier.h"
#include "support/error.h"
#include "tests/accel/accel_test_util.h"

namespace tessel::compiler {
namespace {

using accel::AccelLayer;
using accel::LoweredLayer;
using accel::ScheduleKnobs;
using accel::testing::LayerSpec;

isa::HwConfig with_depths(int cmd, int tok) {
  isa::HwConfig c;
  c.cmd_queue_depth = cmd;
  c.token_queue_depth = tok;
  return c;
}

ScheduleKnobs knobs(int vt, int oc_tile = 0, int ic_chunk = 0, int oh_tile = 0) {
  ScheduleKnobs k;
  k.virtual_threads = vt;
  k.oc_tile_blocks = oc_tile;
  k.ic_chunk = ic_chunk;
  k.oh_tile = oh_tile;
  return k;
}

/// The pruning model's first candidate only: the driver's fallbacks below are tested on the
/// schedule it alone would pick (the default, several candidates ranked by the stream cost model,
/// skips a deadlocking candidate when another runs: StreamModelSkipsDeadlockingCandidates).
const accel::CandidateFilter kFirstOnly{1, 0.0};

/// True if the backend's own lowering (which verifies with cfg's depths) accepts `k`.
bool backend_accepts(const AccelLayer& l, const isa::HwConfig& cfg, const ScheduleKnobs& k,
                     const accel::CandidateFilter& candidates = kFirstOnly) {
  accel::LowerOptions lo;
  lo.knobs = k;
  lo.candidates = candidates;
  try {
    (void)accel::lower_conv2d(l, cfg, lo);
    return true;
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("deadlock"), std::string::npos) << e.what();
    return false;
  }
}

std::string user_error_of(const AccelLayer& l, const isa::HwConfig& cfg, const std::vector<ScheduleKnobs>& s) {
  try {
    (void)driver::lower_offloaded_layer(l, "Conv", cfg, s, "", kFirstOnly);
  } catch (const UserError& e) {
    return e.what();
  }
  return "no UserError";
}

// kws01's first layer shape (1x49x10 -> 64x25x5, 10x4 kernel, stride 2): double buffering keeps
// two g2l tokens in flight, so TOKEN_QUEUE_DEPTH=1 deadlocks it.
AccelLayer kws_first_layer() {
  return accel::testing::make_layer({.name = "kws_conv", .ic = 1, .ih = 49, .iw = 10, .oc = 64, .kh = 10,
                                     .kw = 4, .stride = 2, .pt = 4, .pl = 1, .pb = 5, .pr = 2});
}

// A layer whose one-virtual-thread schedule still deadlocks with depths 1/1 (two output blocks
// per tile: the compute module pushes a second g2l token before the load module pops the first).
AccelLayer two_block_layer() {
  return accel::testing::make_layer({.name = "wide", .ic = 16, .ih = 1, .iw = 4, .oc = 128, .kh = 1,
                                     .kw = 3, .pt = 0, .pl = 1, .pb = 0, .pr = 1, .in_zero_point = 3,
                                     .rq = LayerSpec::Rq::kPerTensor});
}

TEST(QueueDepths, FallbackScheduleList) {
  const std::vector<ScheduleKnobs> s = driver::queue_safe_schedules(ScheduleKnobs{});
  ASSERT_EQ(s.size(), 5u);
  const ScheduleKnobs want[] = {knobs(2), knobs(1), knobs(1, 1), knobs(1, 1, 1), knobs(1, 1, 1, 1)};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(s[i].virtual_threads, want[i].virtual_threads) << i;
    EXPECT_EQ(s[i].oc_tile_blocks, want[i].oc_tile_blocks) << i;
    EXPECT_EQ(s[i].ic_chunk, want[i].ic_chunk) << i;
    EXPECT_EQ(s[i].oh_tile, want[i].oh_tile) << i;
    EXPECT_EQ(s[i].ow_tile, 0) << i;
  }
  // Requested knobs already safe: duplicates dropped; a fixed ow_tile is kept everywhere.
  ScheduleKnobs r = knobs(1, 1);
  r.ow_tile = 3;
  const std::vector<ScheduleKnobs> t = driver::queue_safe_schedules(r);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[1].ic_chunk, 1);
  EXPECT_EQ(t[2].oh_tile, 1);
  for (const ScheduleKnobs& k : t) EXPECT_EQ(k.ow_tile, 3);
}

TEST(QueueDepths, DeadlockingScheduleFallsBackToOneVirtualThread) {
  const AccelLayer l = kws_first_layer();
  const isa::HwConfig cfg = with_depths(8, 1);
  ASSERT_FALSE(backend_accepts(l, cfg, knobs(2)));  // what used to be an internal error
  const LoweredLayer low =
      driver::lower_offloaded_layer(l, "Conv", cfg, driver::queue_safe_schedules(ScheduleKnobs{}), "", kFirstOnly);
  EXPECT_NE(low.schedule.find("vthreads=1"), std::string::npos) << low.schedule;
  EXPECT_NE(low.schedule.find("deadlocks with CMD_QUEUE_DEPTH=8, TOKEN_QUEUE_DEPTH=1"), std::string::npos)
      << low.schedule;
  EXPECT_EQ(low.program.config.cmd_queue_depth, 8);
  EXPECT_EQ(low.program.config.token_queue_depth, 1);
  EXPECT_TRUE(isa::check_program(low.program).empty());
  // fsim bounds its queues by the config: the stream runs and gives the reference output.
  const auto in = accel::testing::make_input(l.params, 5);
  EXPECT_EQ(accel::testing::run_on_fsim(low, l.params, in), accel::testing::reference(l, in));
}

TEST(QueueDepths, OneOutputBlockPerTileWhenOneVirtualThreadIsNotEnough) {
  const AccelLayer l = two_block_layer();
  const isa::HwConfig cfg = with_depths(1, 1);
  ASSERT_FALSE(backend_accepts(l, cfg, knobs(2)));
  ASSERT_FALSE(backend_accepts(l, cfg, knobs(1)));
  const LoweredLayer low =
      driver::lower_offloaded_layer(l, "Conv", cfg, driver::queue_safe_schedules(ScheduleKnobs{}), "", kFirstOnly);
  EXPECT_NE(low.schedule.find("oc_tile=1 "), std::string::npos) << low.schedule;
  EXPECT_NE(low.schedule.find("vthreads=1"), std::string::npos) << low.schedule;
  EXPECT_TRUE(isa::check_program(low.program).empty());
  const auto in = accel::testing::make_input(l.params, 9);
  EXPECT_EQ(accel::testing::run_on_fsim(low, l.params, in), accel::testing::reference(l, in));
}

TEST(QueueDepths, UnschedulableLayerIsAUserErrorWithTheDepthsItNeeds) {
  // Only the double-buffered schedule allowed: the message names the layer, the depths, the
  // verifier's deadlock and the depths that schedule needs.
  const AccelLayer l = kws_first_layer();
  // Double buffering keeps two g2l tokens in flight: with TOKEN_QUEUE_DEPTH=1 the compute
  // module blocks before the GEMM whose push finds g2l full, whatever the command-queue depth, so
  // the message gives only the token-queue figure (fsim agrees: test_queue_depth_agreement.cc).
  EXPECT_EQ(user_error_of(l, with_depths(8, 1), {knobs(2)}),
            "layer 'kws_conv' (Conv) cannot be scheduled with CMD_QUEUE_DEPTH=8, TOKEN_QUEUE_DEPTH=1: insn 10 "
            "(GEMM): deadlock: the compute module at insn 10 (GEMM) waits to push token queue g2l "
            "(compute->load), which is full (1 tokens, TOKEN_QUEUE_DEPTH=1); fetch at insn 18 (ALU ADD) waits for "
            "room in the compute command queue, which is full (8 entries); the schedule tried (vthreads=2 "
            "oc_tile=auto oh_tile=auto ow_tile=auto ic_chunk=auto) deadlocks; the smallest depths this layer needs "
            "are TOKEN_QUEUE_DEPTH=2 (with CMD_QUEUE_DEPTH=8)");
  // The figure is tight, by the backend's own verification; no command-queue depth is enough.
  EXPECT_FALSE(backend_accepts(l, with_depths(1 << 24, 1), knobs(2)));
  EXPECT_TRUE(backend_accepts(l, with_depths(8, 2), knobs(2)));
}

TEST(QueueDepths, DepthsNeededAreTheMinimumOverTheSchedulesTried) {
  // 'wide' with one virtual thread needs 2 command-queue entries (the store module's second
  // STORE must be fetched to pop), with two virtual threads 5; the message gives the smaller.
  const AccelLayer l = two_block_layer();
  const std::string want_tail =
      "the smallest depths this layer needs are CMD_QUEUE_DEPTH=2 (with TOKEN_QUEUE_DEPTH=1) or "
      "TOKEN_QUEUE_DEPTH=2 (with CMD_QUEUE_DEPTH=1)";
  const std::string one = user_error_of(l, with_depths(1, 1), {knobs(1)});
  ASSERT_GE(one.size(), want_tail.size()) << one;
  EXPECT_EQ(one.substr(one.size() - want_tail.size()), want_tail) << one;
  const std::string two = user_error_of(l, with_depths(1, 1), {knobs(2)});
  EXPECT_NE(two.find("CMD_QUEUE_DEPTH=5 (with TOKEN_QUEUE_DEPTH=1)"), std::string::npos) << two;
  const std::string both = user_error_of(l, with_depths(1, 1), {knobs(2), knobs(1)});
  const std::string head =
      "layer 'wide' (Conv) cannot be scheduled with CMD_QUEUE_DEPTH=1, TOKEN_QUEUE_DEPTH=1: insn 28 (STORE OUT): "
      "deadlock: ";
  EXPECT_EQ(both.substr(0, head.size()), head) << both;  // the first schedule's diagnostic
  EXPECT_NE(both.find("; the 2 schedules tried (vthreads=2 oc_tile=auto oh_tile=auto ow_tile=auto ic_chunk=auto "
                      "first, vthreads=1 oc_tile=auto oh_tile=auto ow_tile=auto ic_chunk=auto last) all deadlock; "),
            std::string::npos)
      << both;
  ASSERT_GE(both.size(), want_tail.size()) << both;
  EXPECT_EQ(both.substr(both.size() - want_tail.size()), want_tail) << both;
  EXPECT_TRUE(backend_accepts(l, with_depths(2, 1), knobs(1)));
  EXPECT_TRUE(backend_accepts(l, with_depths(1, 2), knobs(1)));
  EXPECT_FALSE(backend_accepts(l, with_depths(4, 1), knobs(2)));
}

// With the default candidates, a deadlocking candidate loses to any candidate of the same knobs
// whose stream runs: 'wide' at depths 1/1 and the kws layer with TOKEN_QUEUE_DEPTH=1 and a deep
// command queue, whose pruning-model choices deadlock (above), get a running schedule without a
// fallback.
TEST(QueueDepths, StreamModelSkipsDeadlockingCandidates) {
  const accel::CandidateFilter defaults;
  const AccelLayer wide = two_block_layer();
  ASSERT_FALSE(backend_accepts(wide, with_depths(1, 1), knobs(1)));
  EXPECT_TRUE(backend_accepts(wide, with_depths(1, 1), knobs(1), defaults));
  const AccelLayer kws = kws_first_layer();
  ASSERT_FALSE(backend_accepts(kws, with_depths(1 << 24, 1), knobs(2)));
  EXPECT_TRUE(backend_accepts(kws, with_depths(1 << 24, 1), knobs(2), defaults));
  const LoweredLayer low = driver::lower_offloaded_layer(wide, "Conv", with_depths(1, 1), {knobs(1)});
  EXPECT_TRUE(isa::check_program(low.program).empty());
  EXPECT_EQ(low.schedule.find("deadlocks"), std::string::npos) << low.schedule;
  const auto in = accel::testing::make_input(wide.params, 9);
  EXPECT_EQ(accel::testing::run_on_fsim(low, wide.params, in), accel::testing::reference(wide, in));
}

TEST(QueueDepths, FirstScheduleUserErrorsPropagate) {
  const AccelLayer l = kws_first_layer();
  EXPECT_EQ(user_error_of(l, with_depths(8, 1), {knobs(0)}), "layer 'kws_conv': virtual_threads must be >= 1, got 0");
}

// A requested schedule that does not fit the scratchpads (two virtual threads with a 2 KiB
// accumulator buffer, mnist-12's first layer: the uop src_idx reach, see accel_lower_unit_test)
// falls back to one virtual thread, with a note; none fitting rethrows the requested one's error.
TEST(QueueDepths, ScheduleThatDoesNotFitFallsBackToOneVirtualThread) {
  isa::HwConfig acc11;
  acc11.log_acc_buff_size = 11;
  acc11.validate();
  const AccelLayer l = accel::testing::make_layer({.name = "mnist_conv1", .ic = 1, .ih = 28, .iw = 28, .oc = 8,
                                                   .kh = 5, .kw = 5, .pt = 2, .pl = 2, .pb = 2, .pr = 2});
  const LoweredLayer low = driver::lower_offloaded_layer(l, "Conv", acc11, driver::queue_safe_schedules(knobs(2)));
  EXPECT_NE(low.schedule.find("vthreads=1 "), std::string::npos) << low.schedule;
  EXPECT_NE(low.schedule.find(" (the requested schedule, vthreads=2 oc_tile=auto oh_tile=auto ow_tile=auto "
                              "ic_chunk=auto, does not fit: layer 'mnist_conv1': no tile fits the scratchpads: "),
            std::string::npos)
      << low.schedule;
  const std::string err = user_error_of(l, acc11, {knobs(2)});
  EXPECT_NE(err.find("layer 'mnist_conv1': no tile fits the scratchpads: the smallest candidate"), std::string::npos)
      << err;
}

TEST(QueueDepths, DefaultDepthsKeepTheRequestedSchedule) {
  const AccelLayer l = kws_first_layer();
  const LoweredLayer low = driver::lower_offloaded_layer(l, "Conv", isa::HwConfig{},
                                                         driver::queue_safe_schedules(ScheduleKnobs{}));
  accel::LowerOptions lo;
  const LoweredLayer direct = accel::lower_conv2d(l, isa::HwConfig{}, lo);
  EXPECT_EQ(low.schedule, direct.schedule);
  EXPECT_EQ(low.program.image, direct.program.image);
  EXPECT_EQ(low.program.insns.size(), direct.program.insns.size());
}

}  // namespace
}  // namespace tessel::compiler
