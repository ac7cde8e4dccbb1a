// Post-training calibration of a convolution followed by Clip (fused into the qconv2d's requant
// clamp by fuse_activation): the stored tensor is the Clip's output, so its range, not the
// convolution's, sets the scale (compiler/passes/quantize.h).
#include <gtest/gtest.h>

#include "compiler/passes/fuse_activation.h"
#include "compiler/passes/quantize.h"
#include "compiler/passes/requant.h"
#include "runtime/cpu/kernels.h"
#include "tests/compiler/test_util.h"

namespace tessel::compiler {
namespace {

using testing::act;
using testing::add_node;

// y = Clip(Conv(x, w), 0, 0.5): one input channel, two output channels, 1x1 kernel.
ir::Graph conv_clip() {
  ir::Graph g;
  g.opset = 13;
  const int x = act(g, "x", {1, 1, 1, 2});
  g.inputs = {x};
  const int w = g.add_const_f32("w", {2, 1, 1, 1}, {0.5f, -3.0f});
  const int c = act(g, "c", {1, 2, 1, 2});
  add_node(g, "Conv", "conv", {x, w}, {c});
  const int lo = g.add_const_f32("lo", {}, {0.0f});
  const int hi = g.add_const_f32("hi", {}, {0.5f});
  const int y = act(g, "y", {1, 2, 1, 2});
  add_node(g, "Clip", "clip", {c, lo, hi}, {y});
  g.outputs = {y};
  return g;
}

TEST(QuantizeClip, ConvOutputScaleComesFromTheClipRange) {
  ir::Graph g = conv_clip();
  passes::PassContext ctx;
  reference::RefTensor in;
  in.shape = {1, 1, 1, 2};
  in.f = {100.0f, -50.0f};  // conv: {50, -25, -300, 150}, max |.| 300 -> scale 4 if taken before the clip
  ctx.calibration = {{in}};
  passes::quantize(g, ctx);
  std::vector<std::string> ops;
  for (const auto& n : g.nodes) ops.push_back(n.op);
  ASSERT_EQ(ops, (std::vector<std::string>{"quantize", "qconv2d", "qclip", "dequantize"}));
  const ir::Node& conv = g.nodes[1];
  // After the clip max |y| = 0.5 -> 2^ceil(log2(0.5 / 127)) = 2^-7.
  EXPECT_EQ(*g.values[conv.outputs[0]].quant, ir::QuantInfo::tensor(0.0078125f, 0));
  // The clip in the integer domain: [0 / 2^-7, 0.5 / 2^-7] = [0, 64].
  const ir::Node& clip = g.nodes[2];
  EXPECT_EQ(clip.attrs.at("lo").get<int>(), 0);
  EXPECT_EQ(clip.attrs.at("hi").get<int>(), 64);

  // Fused into the conv's requantisation: one qconv2d clamping to [0, 64] at scale 2^-7.
  passes::fuse_activation(g, ctx);
  passes::requant(g, ctx);
  ops.clear();
  for (const auto& n : g.nodes) ops.push_back(n.op);
  ASSERT_EQ(ops, (std::vector<std::string>{"quantize", "qconv2d", "dequantize"}));
  const auto rq = runtime::cpu::parse_requant(g.nodes[1].attrs.at("requant"), 2, "conv");
  EXPECT_EQ(rq.clip_lo, 0);
  EXPECT_EQ(rq.clip_hi, 64);
  EXPECT_EQ(*g.values[g.nodes[1].outputs[0]].quant, ir::QuantInfo::tensor(0.0078125f, 0));
}

}  // namespace
}  // namespace tessel::compiler
