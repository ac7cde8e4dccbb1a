// Unit and error tests of the accelerator lowering: determinism, schedule knobs, tiling of layers
// too big for one tile, the requantisation plan, and the user errors.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <functional>
#include <iterator>

#include "accel_test_util.h"
#include "compiler/backend/accel/passes.h"
#include "compiler/backend/accel/schedule.h"
#include "compiler/backend/accel/stream_cost.h"
#include "support/error.h"

namespace tessel::compiler::accel {
namespace {

using testing::LayerSpec;

void expect_matches_reference(const AccelLayer& layer, const isa::HwConfig& cfg,
                              const LowerOptions& opts, LoweredLayer* out = nullptr) {
  const std::vector<int8_t> in = testing::make_input(layer.params, 5);
  LoweredLayer low = lower_conv2d(layer, cfg, opts);
  EXPECT_EQ(testing::run_on_fsim(low, layer.params, in), testing::reference(layer, in))
      << low.schedule;
  if (out) *out = std::move(low);
}

std::string user_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(AccelLower, LoweringTwiceGivesIdenticalPrograms) {
  const AccelLayer layer = testing::make_layer(
      {.name = "det", .ic = 40, .ih = 9, .iw = 7, .oc = 24, .in_zero_point = 9});
  const LoweredLayer a = lower_conv2d(layer, isa::HwConfig{});
  const LoweredLayer b = lower_conv2d(layer, isa::HwConfig{});
  EXPECT_EQ(a.program.serialize(), b.program.serialize());
  EXPECT_EQ(a.schedule, b.schedule);
}

TEST(AccelLower, KnobsOverrideTheCostModel) {
  const AccelLayer layer =
      testing::make_layer({.name = "knobs", .ic = 32, .ih = 9, .iw = 9, .oc = 48});
  LowerOptions opts;
  opts.knobs.oc_tile_blocks = 1;
  opts.knobs.oh_tile = 2;
  LoweredLayer low;
  expect_matches_reference(layer, isa::HwConfig{}, opts, &low);
  EXPECT_NE(low.schedule.find("oc_tile=1 oh_tile=2"), std::string::npos) << low.schedule;
  // 3 oc tiles x 5 row tiles (9 rows in tiles of 2), one column tile
  EXPECT_NE(low.schedule.find("tiles=15 "), std::string::npos) << low.schedule;
}

TEST(AccelLower, MoreVirtualThreads) {
  // 3 and 4 threads: non-power-of-two SRAM regions (2048 / 3 = 682 INP entries each)
  const AccelLayer layer = testing::make_layer(
      {.name = "vt", .ic = 32, .ih = 9, .iw = 7, .oc = 48, .in_zero_point = -3});
  for (int vt : {3, 4}) {
    LowerOptions opts;
    opts.knobs.virtual_threads = vt;
    opts.knobs.oh_tile = 2;
    opts.knobs.oc_tile_blocks = 1;
    LoweredLayer low;
    expect_matches_reference(layer, isa::HwConfig{}, opts, &low);
    EXPECT_NE(low.schedule.find(fmt::format("vthreads={} ", vt)), std::string::npos)
        << low.schedule;
  }
}

TEST(AccelLower, ColumnAndChunkKnobs) {
  const AccelLayer layer =
      testing::make_layer({.name = "knobs2", .ic = 48, .ih = 6, .iw = 11, .oc = 16});
  LowerOptions opts;
  opts.knobs.ow_tile = 4;
  opts.knobs.ic_chunk = 2;
  LoweredLayer low;
  expect_matches_reference(layer, isa::HwConfig{}, opts, &low);
  EXPECT_NE(low.schedule.find("ow_tile=4 ic_chunk=2 chunks=2 "), std::string::npos)
      << low.schedule;
  EXPECT_GT(low.est_cycles, 0);
  LowerOptions bad;
  bad.knobs.ic_chunk = 4;
  EXPECT_NE(user_error_of([&] { lower_conv2d(layer, {}, bad); })
                .find("ic_chunk 4 out of range [0, 3]"),
            std::string::npos);
}

TEST(AccelLower, ReductionTooBigForOneTileIsChunked) {
  // 3x3 over 2048 input channels: 128 blocks * 9 = 1152 weight tiles per oc block, more than the
  // 512 WGT entries of one virtual thread: the reduction is split into chunks
  const AccelLayer layer = testing::make_layer(
      {.name = "deep", .ic = 2048, .ih = 3, .iw = 3, .oc = 16, .rq = LayerSpec::Rq::kPow2});
  LoweredLayer low;
  expect_matches_reference(layer, isa::HwConfig{}, {}, &low);
  EXPECT_EQ(low.schedule.find("chunks=1 "), std::string::npos) << low.schedule;
}

TEST(AccelLower, WideRowsAreTiledInWidth) {
  // one input block: a 3-row window of 1102 columns = 3306 INP entries > 1024 per virtual
  // thread, and the channels cannot be chunked further: the columns are tiled
  const AccelLayer layer =
      testing::make_layer({.name = "wide", .ic = 16, .ih = 3, .iw = 1100, .oc = 16});
  LoweredLayer low;
  expect_matches_reference(layer, isa::HwConfig{}, {}, &low);
  EXPECT_EQ(low.schedule.find("ow_tile=1100 "), std::string::npos) << low.schedule;
  EXPECT_NE(low.schedule.find("chunks=1 "), std::string::npos) << low.schedule;
}

TEST(AccelLower, KernelsBeyondTheUopBufferAreLoadedOnDemand) {
  isa::HwConfig small;
  small.log_uop_buff_size = 8;  // 64 micro-ops
  small.validate();
  // 7 output blocks in oc tiles of 4 and 3: GEMM kernels of 4*9 = 36 and 3*9 = 27 uops, plus the
  // reset/ALU kernels: more than 64, so kernels are loaded before use and reloaded when evicted
  const AccelLayer layer =
      testing::make_layer({.name = "uops", .ic = 16, .ih = 6, .iw = 6, .oc = 112});
  LowerOptions opts;
  opts.knobs.virtual_threads = 1;
  opts.knobs.oc_tile_blocks = 4;
  LoweredLayer low;
  expect_matches_reference(layer, small, opts, &low);
  int uop_loads = 0;
  for (const isa::Instruction& i : low.program.insns) {
    uop_loads += i.opcode == isa::Opcode::kLoad && i.mem_type == isa::MemType::kUop && i.x_size > 0;
  }
  EXPECT_GT(low.program.uops.size(), 64u);
  EXPECT_GT(uop_loads, 2);
}

// Output windows wholly in the padding (finding conv-all-padding-no-tile): a 1x1 conv on a
// height of 1 with pad_top 1 and stride 2 has one output row, whose window is the pad row; every
// candidate was rejected ("every window must hold at least one real input row") with a message
// naming capacities that fit. Such a tile loads nothing and runs no GEMM: its outputs are the
// requantised bias (plus the zero-point correction of the init tensor). Compared with the
// reference conv on fsim, with and without an input zero point, both zero-point plans, one and
// two virtual threads; and a layer where only some tiles lie in the padding.
TEST(AccelLower, OutputWindowsWhollyInThePaddingLower) {
  for (int32_t zp : {0, 9}) {
    for (int vt : {1, 2}) {
      SCOPED_TRACE(fmt::format("zero point {}, {} virtual threads", zp, vt));
      const AccelLayer one_row = testing::make_layer({.name = "pad_row", .ic = 16, .ih = 1, .iw = 4, .oc = 16,
                                                      .kh = 1, .kw = 1, .stride_h = 2, .pt = 1, .pl = 0, .pb = 0,
                                                      .pr = 0, .in_zero_point = zp});
      ASSERT_EQ(one_row.params.oh(), 1);
      for (ZeroPointInit init : {ZeroPointInit::kBorderTiles, ZeroPointInit::kEveryTile}) {
        LowerOptions opts;
        opts.knobs.virtual_threads = vt;
        opts.zero_point_init = init;
        LoweredLayer low;
        expect_matches_reference(one_row, isa::HwConfig{}, opts, &low);
        for (const isa::Instruction& i : low.program.insns) {
          EXPECT_FALSE(i.opcode == isa::Opcode::kLoad && i.x_size > 0 &&
                       (i.mem_type == isa::MemType::kInp || i.mem_type == isa::MemType::kWgt));
          EXPECT_FALSE(i.opcode == isa::Opcode::kGemm && !i.reset);
        }
      }
      // input rows 0..1 with pads 2 above and below, kernel 1, stride 3: output row 0 reads pad
      // row -2, output row 1 input row 1; 3 columns with pad_left 2, stride 2: column 0 reads a pad
      const AccelLayer some = testing::make_layer({.name = "pad_some", .ic = 32, .ih = 2, .iw = 3, .oc = 32,
                                                   .kh = 1, .kw = 1, .stride = 2, .stride_h = 3, .pt = 2, .pl = 2,
                                                   .pb = 2, .pr = 0, .in_zero_point = zp, .seed = 4});
      ASSERT_EQ(some.params.oh(), 2);
      ASSERT_EQ(some.params.ow(), 3);
      for (int oh_tile : {0, 1, 2}) {
        LowerOptions opts;
        opts.knobs.virtual_threads = vt;
        opts.knobs.oh_tile = oh_tile;
        opts.knobs.ow_tile = oh_tile == 1 ? 1 : 0;
        expect_matches_reference(some, isa::HwConfig{}, opts);
      }
    }
  }
}

// With a 2 KiB accumulator buffer (LOG_ACC_BUFF_SIZE 11: 32 ACC rows, so a uop's src_idx names
// INP rows below 32) mnist-12's first layer (5x5, 1 input block) fits one virtual thread but not
// two: the second thread's INP region would start at 25 or more, and its uops name up to 24
// rows above that. The message said "needs 25 inp ... rows below 32", numbers that fit; it now
// names the failing constraint, and the driver falls back to one virtual thread.
TEST(AccelLower, NoTileFitsNamesTheFailingConstraint) {
  isa::HwConfig acc11;
  acc11.log_acc_buff_size = 11;
  acc11.validate();
  const AccelLayer layer = testing::make_layer({.name = "mnist_conv1", .ic = 1, .ih = 28, .iw = 28, .oc = 8,
                                                .kh = 5, .kw = 5, .pt = 2, .pl = 2, .pb = 2, .pr = 2});
  LowerOptions two;
  two.knobs.virtual_threads = 2;
  const std::string msg = user_error_of([&] { lower_conv2d(layer, acc11, two); });
  EXPECT_NE(msg.find("layer 'mnist_conv1': no tile fits the scratchpads: the smallest candidate (oc_tile=1 "
                     "ic_chunk=1 oh_tile=1 ow_tile=1) fails because with 2 virtual threads the last thread's inp "
                     "region (at least 25 rows each) puts its uops' inp rows at 25 + 24, beyond the src_idx field's "
                     "reach 32 (one virtual thread would fit)"),
            std::string::npos)
      << msg;
  LowerOptions one;
  one.knobs.virtual_threads = 1;
  expect_matches_reference(layer, acc11, one);
}

TEST(AccelLower, ImpossibleTileIsAClearError) {
  isa::HwConfig tiny;
  tiny.log_inp_buff_size = 8;  // 16 INP entries: 8 per virtual thread < one 3x3 window
  tiny.validate();
  const AccelLayer layer = testing::make_layer({.name = "tight", .ic = 16, .oc = 16});
  LowerOptions two;
  two.knobs.virtual_threads = 2;
  const std::string msg = user_error_of([&] { lower_conv2d(layer, tiny, two); });
  EXPECT_NE(msg.find("layer 'tight': no tile fits the scratchpads"), std::string::npos) << msg;
  EXPECT_NE(msg.find("inp 8"), std::string::npos) << msg;
  EXPECT_NE(msg.find("fails because its tiles need 9 inp entries per virtual thread (capacity 8)"),
            std::string::npos)
      << msg;
  // with one virtual thread the 16 entries hold a 3x3 window: it lowers, tile by tile
  LowerOptions one;
  one.knobs.virtual_threads = 1;
  expect_matches_reference(layer, tiny, one);
}

TEST(AccelLower, UserErrorsNameTheValue) {
  AccelLayer layer = testing::make_layer({.name = "bad", .ic = 16, .oc = 16});
  AccelLayer big_pad = layer;
  big_pad.params.pad_top = 16;
  EXPECT_NE(user_error_of([&] { lower_conv2d(big_pad, {}); })
                .find("layer 'bad': pad_top 16 exceeds the dma pad limit 15"),
            std::string::npos);
  AccelLayer short_w = layer;
  short_w.weights.pop_back();
  EXPECT_NE(user_error_of([&] { lower_conv2d(short_w, {}); }).find("weights hold 2303 values"),
            std::string::npos);
  AccelLayer wide = layer;
  wide.params.iw = 70000;
  EXPECT_NE(user_error_of([&] { lower_conv2d(wide, {}); })
                .find("input width 70000 exceeds the dma stride limit 65535"),
            std::string::npos);
  AccelLayer groups = layer;
  groups.params.groups = 3;
  EXPECT_NE(user_error_of([&] { lower_conv2d(groups, {}); }).find("groups 3 must divide ic 16"),
            std::string::npos);
  AccelLayer shift = layer;
  shift.params.rq.shift = {40};
  EXPECT_NE(user_error_of([&] { lower_conv2d(shift, {}); }).find("layer 'bad': requant shift[0] 40 is outside [0, 31]"),
            std::string::npos);
  LowerOptions vt0;
  vt0.knobs.virtual_threads = 0;
  EXPECT_NE(user_error_of([&] { lower_conv2d(layer, {}, vt0); })
                .find("virtual_threads must be >= 1, got 0"),
            std::string::npos);
  LowerOptions dump;
  dump.dump_ir_after = "no_such_pass";
  EXPECT_NE(user_error_of([&] { lower_conv2d(layer, {}, dump); })
                .find("unknown pass 'no_such_pass'"),
            std::string::npos);
}

TEST(AccelPlan, PowerOfTwoRequantUsesImmediatesOnly) {
  runtime::QConv2dParams p;
  p.oc = 4;
  p.rq.shift = {6};
  p.rq.clip_lo = 0;
  const LayerPlan plan = make_plan("p", p, {0, 0, 0, 0}, {}, false);
  EXPECT_TRUE(plan.const_rows.empty());
  EXPECT_EQ(plan.bias_row, -1);
  ASSERT_EQ(plan.requant.size(), 4u);
  EXPECT_EQ(plan.requant[0].op, isa::AluOp::kAdd);
  EXPECT_EQ(plan.requant[0].imm, 32);  // 2^(6-1)
  EXPECT_EQ(plan.requant[1].op, isa::AluOp::kShr);
  EXPECT_EQ(plan.requant[1].imm, 6);
  EXPECT_EQ(plan.requant[2].op, isa::AluOp::kMax);
  EXPECT_EQ(plan.requant[2].imm, 0);
  EXPECT_EQ(plan.requant[3].op, isa::AluOp::kMin);
  EXPECT_EQ(plan.requant[3].imm, 127);
}

TEST(AccelPlan, PerChannelValuesBecomeAccRows) {
  runtime::QConv2dParams p;
  p.oc = 3;
  p.rq.multiplier = {100, 200, 40000};
  p.rq.shift = {0, 3, 5};
  const LayerPlan plan = make_plan("p", p, {1, 2, 3}, {}, false);
  // rows: multiplier, shift round, shift, bias (the MUL comes first: no rounding is folded)
  ASSERT_EQ(plan.const_rows.size(), 4u);
  EXPECT_EQ(plan.const_rows[0], (std::vector<int32_t>{100, 200, 40000}));
  EXPECT_EQ(plan.const_rows[1], (std::vector<int32_t>{0, 4, 16}));
  EXPECT_EQ(plan.const_rows[2], (std::vector<int32_t>{0, 3, 5}));
  EXPECT_EQ(plan.bias_row, 3);
  EXPECT_EQ(plan.const_rows[3], (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(plan.folded_round, "");
  ASSERT_EQ(plan.requant.size(), 5u);  // MUL, ADD, SHR, MAX, MIN
  EXPECT_FALSE(plan.requant[0].use_imm);
  EXPECT_EQ(plan.requant[0].const_row, 0);
}

TEST(AccelPlan, FirstRoundingIsFoldedIntoTheBias) {
  runtime::QConv2dParams p;
  p.oc = 2;
  p.rq.shift = {4, 6};  // per-channel rounding 8 and 32
  const LayerPlan plan = make_plan("p", p, {100, -100}, {}, false);
  EXPECT_EQ(plan.folded_round, "round shift");
  EXPECT_EQ(plan.bias, (std::vector<int32_t>{108, -68}));
  ASSERT_GE(plan.bias_row, 0);
  EXPECT_EQ(plan.const_rows[static_cast<size_t>(plan.bias_row)], (std::vector<int32_t>{108, -68}));
  // the chain keeps only SHR (per-channel row), MAX, MIN
  ASSERT_EQ(plan.requant.size(), 3u);
  EXPECT_EQ(plan.requant[0].op, isa::AluOp::kShr);
  // without any bias, nothing to fold into: the rounding stays an ALU op
  const LayerPlan no_bias = make_plan("p", p, {0, 0}, {}, false);
  EXPECT_EQ(no_bias.folded_round, "");
  EXPECT_EQ(no_bias.requant.size(), 4u);
}

TEST(AccelPlan, ClampedCentredChainFoldsTheOffsetAndDropsTheClip) {
  runtime::QConv2dParams p;
  p.oc = 2;
  // The requant pass's centred form: x = clamp(acc + 650, -27000, 27000), x * 300, + round,
  // >> 16, + out_offset + 3. K = 2^15 - 650 * 300 = -162232 = -3 * 2^16 + 34376: round 34376,
  // out_offset -3, so the final ADD is 0 and disappears. At the clamp bounds the chain gives
  // -124 and 124, inside [-128, 127]: no clip.
  p.rq.acc_offset = {650};
  p.rq.acc_min = {-27000};
  p.rq.acc_max = {27000};
  p.rq.multiplier = {300};
  p.rq.shift = {16};
  p.rq.out_zero_point = 3;
  const LayerPlan plan = make_plan("p", p, {5, -5}, {}, false);
  EXPECT_EQ(plan.folded_round, "acc_offset");
  EXPECT_EQ(plan.bias, (std::vector<int32_t>{655, 645}));
  std::vector<isa::AluOp> ops;
  for (const AluStep& st : plan.requant) ops.push_back(st.op);
  EXPECT_EQ(ops, (std::vector<isa::AluOp>{isa::AluOp::kMax, isa::AluOp::kMin, isa::AluOp::kMul, isa::AluOp::kAdd,
                                          isa::AluOp::kShr}));
  EXPECT_EQ(plan.requant[0].imm, -27000);
  EXPECT_EQ(plan.requant[1].imm, 27000);
  EXPECT_FALSE(plan.requant[3].use_imm);  // 34376 does not fit 16 bits: a row
  EXPECT_EQ(plan.const_rows[static_cast<size_t>(plan.requant[3].const_row)], (std::vector<int32_t>{34376, 34376}));
  EXPECT_EQ(plan.const_rows.size(), 2u);  // round, bias
  // A Relu clip [0, 127] is not implied by the clamp (-124 < 0): MAX clip_lo stays.
  p.rq.clip_lo = 0;
  const LayerPlan relu = make_plan("p", p, {5, -5}, {}, false);
  ASSERT_EQ(relu.requant.size(), 6u);
  EXPECT_EQ(relu.requant.back().op, isa::AluOp::kMax);
  EXPECT_EQ(relu.requant.back().imm, 0);
  // Without the clamp the chain's range is unknown: both clips.
  p.rq.clip_lo = -128;
  p.rq.acc_min = {INT32_MIN};
  const LayerPlan open = make_plan("p", p, {5, -5}, {}, false);
  ASSERT_EQ(open.requant.size(), 6u);  // MIN, MUL, ADD, SHR, MAX, MIN
  EXPECT_EQ(open.requant[4].op, isa::AluOp::kMax);
  EXPECT_EQ(open.requant[5].op, isa::AluOp::kMin);
}

TEST(AccelPlan, ZeroPointConstantCorrectionJoinsTheBiasRow) {
  runtime::QConv2dParams p;
  p.oc = 2;
  p.in_zero_point = -128;
  p.rq.shift = {4};  // rounding 8, folded into the bias row
  // weight sums 3 and -2: bias 5 + 128*3 + 8 = 397, 6 - 128*2 + 8 = -242
  const LayerPlan inner = make_plan("p", p, {5, 6}, {3, -2}, false);
  EXPECT_FALSE(inner.acc_init_tensor);
  EXPECT_EQ(inner.bias, (std::vector<int32_t>{397, -242}));
  ASSERT_GE(inner.bias_row, 0);
  EXPECT_EQ(inner.const_rows[static_cast<size_t>(inner.bias_row)],
            (std::vector<int32_t>{397, -242}));
  EXPECT_EQ(inner.folded_round, "round shift");
  // windows touching the padding: the same bias row, plus the border init tensor
  const LayerPlan border = make_plan("p", p, {5, 6}, {3, -2}, true);
  EXPECT_TRUE(border.acc_init_tensor);
  EXPECT_EQ(border.bias, inner.bias);
  // without a zero point the weight sums are not used
  p.in_zero_point = 0;
  const LayerPlan no_zp = make_plan("p", p, {5, 6}, {}, true);
  EXPECT_FALSE(no_zp.acc_init_tensor);
  EXPECT_EQ(no_zp.bias, (std::vector<int32_t>{13, 14}));
  p.in_zero_point = 3;
  EXPECT_NE(user_error_of([&] { make_plan("p", p, {5, 6}, {1}, false); })
                .find("1 weight sums for the zero-point correction, expected oc 2"),
            std::string::npos);
}

TEST(AccelSchedule, DepthwiseSkipsZeroTiles) {
  runtime::QConv2dParams p;
  p.ic = p.oc = 64;
  p.groups = 64;
  p.ih = p.iw = 8;
  p.kh = p.kw = 3;
  const ConvGeometry g = make_geometry("dw", p, isa::HwConfig{});
  ASSERT_EQ(g.nz.size(), 4u);
  for (int64_t ob = 0; ob < 4; ++ob) {
    EXPECT_EQ(g.nz[ob], (std::pair<int64_t, int64_t>{ob, ob + 1}));  // block-diagonal
  }
  EXPECT_EQ(g.nnz_tiles, 4);
}

TEST(AccelSchedule, InputWindowPads) {
  // rows [0, 4) of a 3x3 stride-1 pad-1 conv over 8 rows: input rows -1..4, one pad row on top
  const Window w = input_window(0, 4, 3, 1, 1, 8);
  EXPECT_EQ(w.first, -1);
  EXPECT_EQ(w.pad0, 1);
  EXPECT_EQ(w.real, 5);
  EXPECT_EQ(w.pad1, 0);
  // the last rows [6, 8): input rows 5..8, one pad row below
  const Window b = input_window(6, 2, 3, 1, 1, 8);
  EXPECT_EQ(b.first, 5);
  EXPECT_EQ(b.real, 3);
  EXPECT_EQ(b.pad1, 1);
}

// The final schedule is the stream cost model's pick among the pruning model's candidates: never
// slower than the pruning model's own choice (max_candidates = 1, the first candidate), and its
// reported estimate is the stream cost model's count of the emitted Program.
TEST(AccelLower, StreamCostModelPicksAmongCandidates) {
  // the stream cost model's cycles of the chosen and of the pruning model's first candidate
  struct Expect {
    int64_t chosen, first;
  };
  const Expect expect[] = {{8070, 8101}, {19056, 19107}, {8837, 8837}, {13374, 14581}};
  const LayerSpec specs[] = {
      {.name = "mnist_conv2", .ic = 8, .ih = 14, .iw = 14, .oc = 16, .kh = 5, .kw = 5, .pt = 2, .pl = 2, .pb = 2,
       .pr = 2},
      {.name = "r8_conv", .ic = 16, .ih = 32, .iw = 32, .oc = 16},
      {.name = "s2_conv", .ic = 32, .ih = 16, .iw = 16, .oc = 64, .stride = 2},
      {.name = "dw_conv", .ic = 64, .ih = 25, .iw = 5, .oc = 64, .groups = 64, .in_zero_point = 3},
  };
  for (size_t i = 0; i < std::size(specs); ++i) {
    const LayerSpec& spec = specs[i];
    const AccelLayer layer = testing::make_layer(spec);
    LowerOptions one;
    one.candidates.max_candidates = 1;
    const LoweredLayer first = lower_conv2d(layer, isa::HwConfig{}, one);
    LoweredLayer low;
    expect_matches_reference(layer, isa::HwConfig{}, LowerOptions{}, &low);
    EXPECT_EQ(low.est_cycles, int64_t(estimate_cycles(low.program))) << spec.name;
    EXPECT_NE(low.schedule.find(fmt::format(" est_cycles={}", low.est_cycles)), std::string::npos)
        << low.schedule;
    EXPECT_LE(low.est_cycles, first.est_cycles) << spec.name << ": " << low.schedule << " vs " << first.schedule;
    EXPECT_EQ(first.est_cycles, expect[i].first) << spec.name << ": " << first.schedule;
    EXPECT_EQ(low.est_cycles, expect[i].chosen) << spec.name << ": " << low.schedule;
  }
  const AccelLayer layer = testing::make_layer(specs[0]);
  LowerOptions bad;
  bad.candidates.max_candidates = 0;
  EXPECT_NE(user_error_of([&] { lower_conv2d(layer, isa::HwConfig{}, bad); }).find("max_candidates must be >= 1"),
            std::string::npos);
  bad.candidates.max_candidates = 2;
  bad.candidates.band = -0.5;
  EXPECT_NE(user_error_of([&] { lower_conv2d(layer, isa::HwConfig{}, bad); }).find("band must be >= 0"),
            std::string::npos);
}

}  // namespace
}  // namespace tessel::compiler::accel
