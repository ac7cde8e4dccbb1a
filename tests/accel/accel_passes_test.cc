// One test per loop-IR pass of the accelerator backend: the IR after the pass (through
// LowerOptions::dump_ir_after) for a small layer, or the pass run directly on a hand-made IR.
#include <gtest/gtest.h>

#include <string>

#include "accel_test_util.h"
#include "compiler/backend/accel/passes.h"
#include "compiler/backend/accel/passes/allocate_uops.h"
#include "compiler/backend/accel/passes/fold_uop_loops.h"
#include "support/error.h"

namespace tessel::compiler::accel {
namespace {

using testing::LayerSpec;

/// The IR after `pass` for a 16->16 channel 4x4 3x3 pad-1 conv in two row tiles (2 threads).
std::string ir_after(const std::string& pass, LayerSpec spec = {}) {
  if (spec.name.empty()) {
    spec = {.name = "p", .ic = 16, .ih = 4, .iw = 4, .oc = 16, .rq = LayerSpec::Rq::kPow2};
  }
  LowerOptions opts;
  opts.knobs.oh_tile = 2;
  opts.dump_ir_after = pass;
  return lower_conv2d(testing::make_layer(spec), isa::HwConfig{}, opts).ir_dump;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = 0; (pos = text.find(what, pos)) != std::string::npos; pos += what.size()) ++n;
  return n;
}

TEST(PassInjectDmaCopy, WindowsWithPaddingAndStores) {
  const std::string ir = ir_after("inject_dma_copy");
  // tile 0: output rows [0, 2) need input rows -1..2: one pad row on top, pads left and right
  EXPECT_NE(ir.find("load INP sram=0 dram=0 y=3 x=4 stride=4 pad=(1,0,1,1)"), std::string::npos)
      << ir;
  // tile 1: output rows [2, 4) need input rows 1..4: one pad row below, starting at row 1
  EXPECT_NE(ir.find("load INP sram=0 dram=4 y=3 x=4 stride=4 pad=(0,1,1,1)"), std::string::npos);
  EXPECT_EQ(count(ir, "load WGT"), 2u);
  EXPECT_EQ(count(ir, "store OUT"), 2u);
  EXPECT_NE(ir.find("y=2 x=4 stride=4"), std::string::npos);
  EXPECT_EQ(count(ir, "gemm"), 0u);
}

TEST(PassTensorizeGemm, OneUopPerTapAndBlock) {
  const std::string ir = ir_after("tensorize_gemm");
  EXPECT_EQ(count(ir, "for y in [0, 2)"), 2u);
  EXPECT_EQ(count(ir, "+= inp["), 18u);  // 9 taps x 1 block pair x 2 tiles
  // window 6 columns wide: tap (2, 2) reads inp[2*6 + 2] plus 6 per output row, 1 per column
  EXPECT_NE(ir.find("acc[0 + 4*y + 1*x] += inp[14 + 6*y + 1*x] * wgt[8]"), std::string::npos);
  // depthwise: block-diagonal, still one uop per tap for the single output block
  const std::string dw = ir_after(
      "tensorize_gemm", {.name = "dw", .ic = 32, .ih = 4, .iw = 4, .oc = 32, .groups = 32,
                         .rq = LayerSpec::Rq::kPow2});
  EXPECT_EQ(count(dw, "+= inp["), 4u * 9u);  // 2 output blocks x 2 row tiles x 9 taps
}

TEST(PassInjectBias, ResetAndBiasRowOrInitTensor) {
  const std::string ir = ir_after("inject_bias");
  EXPECT_EQ(count(ir, "gemm.reset"), 2u);
  EXPECT_EQ(count(ir, "alu.ADD vthread=0 bias"), 1u);
  EXPECT_EQ(count(ir, "load ACC"), 2u);  // the bias row, once per tile
  const std::string zp = ir_after("inject_bias", {.name = "zp", .ic = 16, .ih = 4, .iw = 4,
                                                  .oc = 16, .in_zero_point = 7,
                                                  .rq = LayerSpec::Rq::kPow2});
  EXPECT_EQ(count(zp, "gemm.reset"), 0u);
  EXPECT_EQ(count(zp, "acc init (bias + zero-point correction)"), 2u);
  EXPECT_EQ(count(zp, " bias\n"), 0u);
}

// Four one-row tiles of the same output block on two virtual threads: each thread loads the
// weights and the constant rows for its first tile only and reuses them for its second (nothing
// else writes those WGT/ACC rows); the result stays bit-exact.
TEST(PassInjectDmaCopyAndBias, ThreadsReuseWeightsAndConstantRows) {
  const LayerSpec spec{.name = "reuse", .ic = 16, .ih = 4, .iw = 4, .oc = 16,
                       .rq = LayerSpec::Rq::kPerChannel};
  LowerOptions opts;
  opts.knobs.oh_tile = 1;
  opts.dump_ir_after = "inject_bias";
  const AccelLayer layer = testing::make_layer(spec);
  const LoweredLayer low = lower_conv2d(layer, isa::HwConfig{}, opts);
  EXPECT_EQ(count(low.ir_dump, "seq load0"), 4u);  // four tiles
  EXPECT_EQ(count(low.ir_dump, "load INP"), 4u);
  EXPECT_EQ(count(low.ir_dump, "load WGT"), 2u);                   // one per thread, not per tile
  EXPECT_EQ(count(low.ir_dump, "per-channel constant rows"), 2u);  // likewise
  // two oc tiles of one block, two one-row tiles each: threads 0 and 1 run (block 0, block 1)
  // in turn, so every tile changes blocks and nothing is reused
  const LayerSpec two{.name = "two", .ic = 16, .ih = 2, .iw = 2, .oc = 32,
                      .rq = LayerSpec::Rq::kPerChannel};
  LowerOptions o2;
  o2.knobs.oc_tile_blocks = 1;
  o2.knobs.oh_tile = 1;
  o2.dump_ir_after = "inject_bias";
  const AccelLayer layer2 = testing::make_layer(two);
  const LoweredLayer low2 = lower_conv2d(layer2, isa::HwConfig{}, o2);
  EXPECT_EQ(count(low2.ir_dump, "seq load0"), 4u);
  EXPECT_EQ(count(low2.ir_dump, "load WGT"), 4u);
  EXPECT_EQ(count(low2.ir_dump, "per-channel constant rows"), 4u);
  const std::vector<int8_t> in2 = testing::make_input(layer2.params, 4);
  EXPECT_EQ(testing::run_on_fsim(low2, layer2.params, in2), testing::reference(layer2, in2));
  const std::vector<int8_t> in = testing::make_input(layer.params, 3);
  EXPECT_EQ(testing::run_on_fsim(low, layer.params, in), testing::reference(layer, in));
}

// Reduction chunks of one input block: each output block's chunk is its own piece of DRAM, the
// pieces of the two output blocks are evenly spaced (3 blocks x 9 taps apart) and contiguous in
// WGT, so each chunk is one 2-D LOAD WGT of two rows; the result stays bit-exact.
TEST(PassInjectDmaCopy, ChunkedWeightsAreOneTwoDimensionalLoad) {
  const LayerSpec spec{.name = "chunks", .ic = 48, .ih = 4, .iw = 4, .oc = 32,
                       .rq = LayerSpec::Rq::kPow2};
  LowerOptions opts;
  opts.knobs.oc_tile_blocks = 2;
  opts.knobs.oh_tile = 4;
  opts.knobs.ic_chunk = 1;
  opts.dump_ir_after = "inject_dma_copy";
  const AccelLayer layer = testing::make_layer(spec);
  const LoweredLayer low = lower_conv2d(layer, isa::HwConfig{}, opts);
  EXPECT_EQ(count(low.ir_dump, "load WGT"), 3u) << low.ir_dump;  // one per chunk
  // chunk 1: input block 1 of oc blocks 0 and 1 at weight entries 9 and 36 (the segment starts
  // at WGT element 32 of the image), WGT entries 0 and 9
  EXPECT_NE(low.ir_dump.find("load WGT sram=0 dram=41 y=2 x=9 stride=27"), std::string::npos)
      << low.ir_dump;
  const std::vector<int8_t> in = testing::make_input(layer.params, 5);
  EXPECT_EQ(testing::run_on_fsim(low, layer.params, in), testing::reference(layer, in));
}

TEST(PassInjectAluRequant, Pow2ChainWithImmediates) {
  // no bias: the rounding of the shift stays an ALU ADD (nothing to fold it into)
  const std::string ir = ir_after("inject_alu_requant", {.name = "nb", .ic = 16, .ih = 4, .iw = 4,
                                                         .oc = 16, .rq = LayerSpec::Rq::kPow2,
                                                         .zero_bias = true});
  const size_t add = ir.find("alu.ADD imm=");
  const size_t shr = ir.find("alu.SHR imm=");
  const size_t max = ir.find("alu.MAX imm=-128");
  const size_t min = ir.find("alu.MIN imm=127");
  ASSERT_NE(add, std::string::npos);
  EXPECT_LT(add, shr);
  EXPECT_LT(shr, max);
  EXPECT_LT(max, min);
  EXPECT_EQ(count(ir, "alu.MUL"), 0u);  // multiplier 1 is skipped
  // with a bias the rounding is folded into the bias row: ADD bias, SHR, MAX, MIN
  const std::string folded = ir_after("inject_alu_requant");
  EXPECT_EQ(count(folded, "alu.ADD imm="), 0u);
  EXPECT_EQ(count(folded, "alu.ADD vthread=0 bias"), 1u);
}

Stmt uop_body(std::vector<UopExpr> uops) {
  Stmt b;
  b.kind = StmtKind::kUopBody;
  b.insn.opcode = isa::Opcode::kGemm;
  b.name = "body";
  b.uops = std::move(uops);
  return b;
}

UopExpr uop(int64_t dst, int64_t src, int64_t wgt, int64_t dst_a, int64_t src_b) {
  UopExpr u;
  u.dst = {dst, {{"a", dst_a}, {"b", 1}}};
  u.src = {src, {{"a", 7}, {"b", src_b}}};
  u.wgt = {wgt, {}};
  return u;
}

TEST(PassFoldUopLoops, LoopsBecomeIterationsAndFactors) {
  LoweringContext ctx;
  const std::vector<UopExpr> two = {uop(10, 0, 0, 4, 2), uop(11, 1, 1, 4, 2)};
  Stmt root = make_seq("r", {make_for("a", 3, {make_for("b", 5, {uop_body(two)})}),
                             make_for("a", 1, {make_for("b", 5, {uop_body(two)})})});
  fold_uop_loops(root, ctx);
  ASSERT_EQ(root.body.size(), 2u);
  const Stmt& s = root.body[0];
  ASSERT_EQ(s.kind, StmtKind::kInsn);
  EXPECT_EQ(s.insn.iter_out, 3u);
  EXPECT_EQ(s.insn.iter_in, 5u);
  EXPECT_EQ(s.insn.dst_factor_out, 4u);
  EXPECT_EQ(s.insn.dst_factor_in, 1u);
  EXPECT_EQ(s.insn.src_factor_out, 7u);
  EXPECT_EQ(s.insn.src_factor_in, 2u);
  ASSERT_EQ(ctx.kernels.size(), 1u);  // both bodies share the kernel
  EXPECT_EQ(ctx.kernels[0], (std::vector<isa::Uop>{{10, 0, 0}, {11, 1, 1}}));
  EXPECT_EQ(root.body[1].kernel, 0);
  EXPECT_EQ(root.body[1].insn.dst_factor_out, 0u);  // one iteration: factor unused
  // micro-ops that disagree on a factor cannot share one instruction
  Stmt bad = make_seq("r", {make_for("a", 2, {make_for("b", 2, {uop_body({uop(0, 0, 0, 4, 1),
                                                                         uop(1, 0, 0, 5, 1)})})})});
  EXPECT_THROW(fold_uop_loops(bad, ctx), InternalError);
}

TEST(PassInjectVirtualThreads, HalvesAndInterleaving) {
  const std::string ir = ir_after("inject_virtual_threads");
  // thread 1 uses the second half of INP (1024), WGT (512) and ACC (1024)
  EXPECT_NE(ir.find("load INP sram=1024"), std::string::npos) << ir;
  EXPECT_NE(ir.find("load WGT sram=512"), std::string::npos);
  EXPECT_NE(ir.find("store OUT sram=1024"), std::string::npos);
  const size_t l0 = ir.find("seq tile 0 vthread 0 load0");
  const size_t l1 = ir.find("seq tile 1 vthread 1 load0");
  const size_t c0 = ir.find("seq tile 0 vthread 0 compute0");
  const size_t c1 = ir.find("seq tile 1 vthread 1 compute0");
  const size_t s0 = ir.find("seq tile 0 vthread 0 store");
  EXPECT_LT(l0, l1);
  EXPECT_LT(l1, c0);
  EXPECT_LT(c0, c1);
  EXPECT_LT(c1, s0);
}

Stmt gemm_using(int kernel) {
  isa::Instruction g;
  g.opcode = isa::Opcode::kGemm;
  g.iter_out = g.iter_in = 1;
  Stmt s = make_insn(g, "g", 0);
  s.kernel = kernel;
  return s;
}

TEST(PassAllocateUops, WholeTableOrLoadsOnDemand) {
  LoweringContext ctx;
  ctx.uop_base = 100;
  ctx.kernels = {std::vector<isa::Uop>(40), std::vector<isa::Uop>(30)};
  Stmt fits = make_seq("r", {gemm_using(1), gemm_using(0), gemm_using(1)});
  allocate_uops(fits, ctx);
  ASSERT_EQ(fits.body.size(), 4u);  // the table load + 3 GEMMs
  const isa::Instruction& load = fits.body[0].body.at(0).insn;
  EXPECT_EQ(load.mem_type, isa::MemType::kUop);
  EXPECT_EQ(load.dram_base, 100u);
  EXPECT_EQ(load.x_size, 70u);
  EXPECT_EQ(fits.body[1].insn.uop_bgn, 40u);  // kernel 1 at its table offset
  EXPECT_EQ(fits.body[1].insn.uop_end, 70u);
  EXPECT_EQ(ctx.uop_table.size(), 70u);
  // a 64-entry UOP buffer holds only one of them at a time: load, evict, reload
  ctx.cfg.log_uop_buff_size = 8;
  Stmt tight = make_seq("r", {gemm_using(1), gemm_using(0), gemm_using(1)});
  allocate_uops(tight, ctx);
  int loads = 0;
  for (const Stmt& s : tight.body) loads += s.insn.opcode == isa::Opcode::kLoad;
  EXPECT_EQ(loads, 3);
  EXPECT_EQ(tight.body[0].insn.dram_base, 140u);  // kernel 1 from DRAM offset 40
  EXPECT_EQ(tight.body[1].insn.uop_bgn, 0u);
  EXPECT_EQ(tight.body[3].insn.uop_bgn, 0u);  // kernel 0 wrapped to 0, evicting kernel 1
  // a kernel larger than the whole buffer is a user error
  ctx.kernels = {std::vector<isa::Uop>(65)};
  Stmt huge = make_seq("r", {gemm_using(0)});
  EXPECT_THROW(allocate_uops(huge, ctx), UserError);
}

TEST(PassInsertDepTokens, BalancedQueuesAndEnding) {
  const AccelLayer layer = testing::make_layer(
      {.name = "t", .ic = 32, .ih = 9, .iw = 9, .oc = 32, .rq = LayerSpec::Rq::kPow2});
  LowerOptions opts;
  opts.knobs.oh_tile = 2;
  const LoweredLayer low = lower_conv2d(layer, isa::HwConfig{}, opts);
  int pushes[4] = {0, 0, 0, 0}, pops[4] = {0, 0, 0, 0};  // l2g, g2l, g2s, s2g
  for (const isa::Instruction& i : low.program.insns) {
    const isa::Module m = i.module();
    if (m == isa::Module::kLoad) {
      pushes[0] += i.dep.push_next;
      pops[1] += i.dep.pop_next;
    } else if (m == isa::Module::kCompute) {
      pops[0] += i.dep.pop_prev;
      pushes[1] += i.dep.push_prev;
      pushes[2] += i.dep.push_next;
      pops[3] += i.dep.pop_next;
    } else {
      pops[2] += i.dep.pop_prev;
      pushes[3] += i.dep.push_prev;
    }
  }
  for (int q = 0; q < 4; ++q) EXPECT_EQ(pushes[q], pops[q]) << "queue " << q;
  EXPECT_GT(pushes[1], 0);  // with 5 row tiles on 2 threads, loads wait for GEMMs (WAR)
  EXPECT_GT(pushes[3], 0);  // and accumulators wait for stores
  // every pass is timed, in pipeline order after the schedule
  ASSERT_EQ(low.pass_ms.size(), pass_pipeline().size() + 1);
  EXPECT_EQ(low.pass_ms.front().first, "schedule");
  EXPECT_EQ(low.pass_ms.back().first, "insert_dep_tokens");
  const auto& in = low.program.insns;
  ASSERT_GE(in.size(), 4u);
  EXPECT_EQ(in.back().opcode, isa::Opcode::kFinish);
  EXPECT_TRUE(in[in.size() - 2].dep.pop_prev && in[in.size() - 2].dep.pop_next);
}

}  // namespace
}  // namespace tessel::compiler::accel
