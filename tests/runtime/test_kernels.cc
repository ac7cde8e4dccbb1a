// Every CPU kernel of runtime/cpu/kernels.h against hand-computed values on small tensors,
// including round-half-to-even ties and int8 saturation.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/cpu/kernels.h"
#include "tests/runtime/kernel_test_util.h"

namespace tessel::runtime {
namespace {

using namespace testing;
using nlohmann::json;
using I8 = std::vector<int8_t>;
using F32 = std::vector<float>;

TEST(RheSat, TiesGoToEvenAndSaturate) {
  EXPECT_EQ(cpu::rhe_sat(0.5, 0), 0);
  EXPECT_EQ(cpu::rhe_sat(1.5, 0), 2);
  EXPECT_EQ(cpu::rhe_sat(2.5, 0), 2);
  EXPECT_EQ(cpu::rhe_sat(-0.5, 0), 0);
  EXPECT_EQ(cpu::rhe_sat(-1.5, 0), -2);
  // The zero point is added after rounding: rhe(0.5) + 1 = 1, not rhe(1.5) = 2.
  EXPECT_EQ(cpu::rhe_sat(0.5, 1), 1);
  EXPECT_EQ(cpu::rhe_sat(127.4, 0), 127);
  EXPECT_EQ(cpu::rhe_sat(126.0, 5), 127);
  EXPECT_EQ(cpu::rhe_sat(-1000.0, 0), -128);
  EXPECT_EQ(cpu::rhe_sat(INFINITY, 0), 127);
  EXPECT_EQ(cpu::rhe_sat(NAN, 7), 7);
}

TEST(Kernels, Quantize) {
  const auto x = desc("x", DType::kF32, {8});
  const auto y = desc("y", DType::kI8, {8}, 0.5f, 3);
  // x / 0.5 = 0.5, 1.5, -0.5, 2.5, 200, -200, 1, 4 -> rhe 0, 2, 0, 2, ... -> + 3, saturate.
  auto out = run_op("quantize", json::object(),
                    {in(x, F32{0.25f, 0.75f, -0.25f, 1.25f, 100.0f, -100.0f, 0.5f, 2.0f})}, {y});
  EXPECT_EQ(from_bytes<int8_t>(out[0]), (I8{3, 5, 3, 5, 127, -128, 4, 7}));
}

TEST(Kernels, Dequantize) {
  const auto x = desc("x", DType::kI8, {4}, 0.25f, -2);
  const auto y = desc("y", DType::kF32, {4});
  auto out = run_op("dequantize", json::object(), {in(x, I8{-2, 2, 127, -128})}, {y});
  EXPECT_EQ(from_bytes<float>(out[0]), (F32{0.0f, 1.0f, 32.25f, -31.5f}));
}

TEST(Kernels, RequantizeTiesAndSaturation) {
  const auto x = desc("x", DType::kI8, {8}, 1.0f, 0);
  // a / 2 = 0.5, 1.5, 2.5, -0.5, -1.5, 63.5, -64, 0 -> 0, 2, 2, 0, -2, 64, -64, 0, then + 1.
  auto out = run_op("requantize", json::object(), {in(x, I8{1, 3, 5, -1, -3, 127, -128, 0})},
                    {desc("y", DType::kI8, {8}, 2.0f, 1)});
  EXPECT_EQ(from_bytes<int8_t>(out[0]), (I8{1, 3, 3, 1, -1, 65, -63, 1}));
  const auto x2 = desc("x", DType::kI8, {3}, 1.0f, 0);
  out = run_op("requantize", json::object(), {in(x2, I8{100, -100, 10})},
               {desc("y", DType::kI8, {3}, 0.5f, 0)});
  EXPECT_EQ(from_bytes<int8_t>(out[0]), (I8{127, -128, 20}));
}

TEST(Kernels, QAddSameShapeTiesAndRelu) {
  const auto a = desc("a", DType::kI8, {5}, 0.5f, 0);
  const auto b = desc("b", DType::kI8, {5}, 0.25f, 2);
  const auto y = desc("y", DType::kI8, {5}, 1.0f, -1);
  // reals: a = .5, 1.5, -.5, 50, .5 ; b = .25, .5, -.5, 25, 0 ; sum = .75, 2, -1, 75, .5
  // rhe -> 1, 2, -1, 75, 0 ; + zp -1 -> 0, 1, -2, 74, -1
  const std::vector<In> ins = {in(a, I8{1, 3, -1, 100, 1}), in(b, I8{3, 4, 0, 102, 2})};
  auto out = run_op("qadd", json::object(), ins, {y});
  EXPECT_EQ(from_bytes<int8_t>(out[0]), (I8{0, 1, -2, 74, -1}));
  out = run_op("qadd", json{{"relu", true}}, ins, {y});
  EXPECT_EQ(from_bytes<int8_t>(out[0]), (I8{0, 1, -1, 74, -1}));
}

TEST(Kernels, QAddBroadcastAndSaturation) {
  const auto a = desc("a", DType::kI8, {2, 3});
  const auto b = desc("b", DType::kI8, {3});
  auto out = run_op("qadd", json::object(), {in(a, I8{1, 2, 3, 4, 5, 100}), in(b, I8{10, 20, 30})},
                    {desc("y", DType::kI8, {2, 3})});
  EXPECT_EQ(from_bytes<int8_t>(out[0]), (I8{11, 22, 33, 14, 25, 127}));
  const auto c = desc("c", DType::kI8, {2, 1});
  const auto d = desc("d", DType::kI8, {1, 3});
  out = run_op("qadd", json::object(), {in(c, I8{1, -100}), in(d, I8{1, 2, -100})},
               {desc("y", DType::kI8, {2, 3})});
  EXPECT_EQ(from_bytes<int8_t>(out[0]), (I8{2, 3, -99, -99, -98, -128}));
}

TEST(Kernels, QClip) {
  const auto x = desc("x", DType::kI8, {7}, 0.1f, 2);
  auto out = run_op("qclip", json{{"lo", -5}, {"hi", 10}}, {in(x, I8{-128, -6, -5, 0, 10, 11, 127})},
                    {desc("y", DType::kI8, {7}, 0.1f, 2)});
  EXPECT_EQ(from_bytes<int8_t>(out[0]), (I8{-5, -5, -5, 0, 10, 10, 10}));
}

TEST(Kernels, MaxPoolIgnoresPadding) {
  I8 v(16);
  for (int i = 0; i < 16; ++i) v[static_cast<size_t>(i)] = static_cast<int8_t>(i - 16);
  const auto x = desc("x", DType::kI8, {1, 1, 4, 4});
  auto out = run_op("maxpool", json{{"kernel", {2, 2}}, {"stride", {2, 2}}}, {in(x, v)},
                    {desc("y", DType::kI8, {1, 1, 2, 2})});
  EXPECT_EQ(from_bytes<int8_t>(out[0]), (I8{-11, -9, -3, -1}));
  // 3x3, stride 2, pads 1: window (0,0) covers rows/cols 0..1 only; a zero pad would win.
  out = run_op("maxpool", json{{"kernel", {3, 3}}, {"stride", {2, 2}}, {"pads", {1, 1, 1, 1}}},
               {in(x, v)}, {desc("y", DType::kI8, {1, 1, 2, 2})});
  EXPECT_EQ(from_bytes<int8_t>(out[0]), (I8{-11, -9, -3, -1}));
}

TEST(Kernels, MaxPoolCeilMode) {
  // 5 columns, kernel 2, stride 2: floor gives 2 outputs, ceil 3 (last window is column 4 only).
  const auto x = desc("x", DType::kI8, {1, 1, 1, 5});
  auto out = run_op("maxpool", json{{"kernel", {1, 2}}, {"stride", {1, 2}}, {"ceil_mode", true}},
                    {in(x, I8{1, 5, 2, 3, 9})}, {desc("y", DType::kI8, {1, 1, 1, 3})});
  EXPECT_EQ(from_bytes<int8_t>(out[0]), (I8{5, 3, 9}));
}

TEST(Kernels, AvgPoolCountIncludePad) {
  // Real values 2, 4, 6, 8 (q = real + 1); kernel 2, stride 1, pads top/left 1.
  const auto x = desc("x", DType::kI8, {1, 1, 2, 2}, 1.0f, 1);
  const auto y = desc("y", DType::kI8, {1, 1, 2, 2}, 1.0f, 0);
  json attrs{{"kernel", {2, 2}}, {"stride", {1, 1}}, {"pads", {1, 1, 0, 0}}};
  attrs["count_include_pad"] = true;
  // windows: {2}/4 = .5 -> 0 ; {2,4}/4 = 1.5 -> 2 ; {2,6}/4 = 2 ; 20/4 = 5
  auto out = run_op("avgpool", attrs, {in(x, I8{3, 5, 7, 9})}, {y});
  EXPECT_EQ(from_bytes<int8_t>(out[0]), (I8{0, 2, 2, 5}));
  attrs["count_include_pad"] = false;
  // windows: 2/1 ; 6/2 ; 8/2 ; 20/4
  out = run_op("avgpool", attrs, {in(x, I8{3, 5, 7, 9})}, {y});
  EXPECT_EQ(from_bytes<int8_t>(out[0]), (I8{2, 3, 4, 5}));
}

TEST(Kernels, AvgPoolTieAndOutputScale) {
  const auto x = desc("x", DType::kI8, {1, 1, 2, 2}, 1.0f, 0);
  // mean 2.5 -> 2 (tie to even); with out scale 0.5: 5.
  auto out = run_op("avgpool", json{{"kernel", {2, 2}}, {"stride", {2, 2}}},
                    {in(x, I8{1, 2, 3, 4})}, {desc("y", DType::kI8, {1, 1, 1, 1})});
  EXPECT_EQ(from_bytes<int8_t>(out[0]), (I8{2}));
  out = run_op("avgpool", json{{"kernel", {2, 2}}, {"stride", {2, 2}}}, {in(x, I8{1, 2, 3, 4})},
               {desc("y", DType::kI8, {1, 1, 1, 1}, 0.5f, -3)});
  EXPECT_EQ(from_bytes<int8_t>(out[0]), (I8{2}));  // 2.5 / 0.5 = 5, + (-3) = 2
}

TEST(Kernels, GlobalAvgPool) {
  const auto x = desc("x", DType::kI8, {1, 2, 2, 2}, 1.0f, 0);
  // channel 0: 10/4 = 2.5 -> 2 ; channel 1: 14/4 = 3.5 -> 4
  auto out = run_op("global_avgpool", json::object(), {in(x, I8{1, 2, 3, 4, 3, 4, 4, 3})},
                    {desc("y", DType::kI8, {1, 2, 1, 1})});
  EXPECT_EQ(from_bytes<int8_t>(out[0]), (I8{2, 4}));
  // With zero points and a scale change: reals (q-1)*0.5 = {1, 1, 1, 1} -> 1 / 0.25 = 4, + 10.
  const auto x2 = desc("x", DType::kI8, {1, 1, 2, 2}, 0.5f, 1);
  out = run_op("global_avgpool", json::object(), {in(x2, I8{3, 3, 3, 3})},
               {desc("y", DType::kI8, {1, 1, 1, 1}, 0.25f, 10)});
  EXPECT_EQ(from_bytes<int8_t>(out[0]), (I8{14}));
}

TEST(Kernels, Reshape) {
  const auto x = desc("x", DType::kF32, {2, 3});
  auto out = run_op("reshape", json::object(), {in(x, F32{1, 2, 3, 4, 5, 6})},
                    {desc("y", DType::kF32, {3, 1, 2})});
  EXPECT_EQ(from_bytes<float>(out[0]), (F32{1, 2, 3, 4, 5, 6}));
}

TEST(Kernels, ConcatRequantisesInt8Inputs) {
  const auto a = desc("a", DType::kI8, {1, 2}, 1.0f, 0);
  const auto b = desc("b", DType::kI8, {1, 2}, 0.5f, 0);
  // b reals 1.5, -2.5 -> rhe 2, -2 in the output's scale 1.
  auto out = run_op("concat", json{{"axis", 1}}, {in(a, I8{1, 2}), in(b, I8{3, -5})},
                    {desc("y", DType::kI8, {1, 4}, 1.0f, 0)});
  EXPECT_EQ(from_bytes<int8_t>(out[0]), (I8{1, 2, 2, -2}));
  const auto c = desc("c", DType::kF32, {2, 1});
  const auto d = desc("d", DType::kF32, {2, 2});
  out = run_op("concat", json{{"axis", -1}}, {in(c, F32{1, 2}), in(d, F32{3, 4, 5, 6})},
               {desc("y", DType::kF32, {2, 3})});
  EXPECT_EQ(from_bytes<float>(out[0]), (F32{1, 3, 4, 2, 5, 6}));
}

TEST(Kernels, Softmax) {
  const auto x = desc("x", DType::kF32, {2, 3});
  auto out = run_op("softmax", json{{"axis", 1}}, {in(x, F32{1, 2, 3, 1000, 1000, 1000})},
                    {desc("y", DType::kF32, {2, 3})});
  const auto y = from_bytes<float>(out[0]);
  // e^-2, e^-1, 1 normalised: 0.0900306, 0.2447285, 0.6652410; large equal logits: 1/3 each.
  EXPECT_NEAR(y[0], 0.0900306, 1e-6);
  EXPECT_NEAR(y[1], 0.2447285, 1e-6);
  EXPECT_NEAR(y[2], 0.6652410, 1e-6);
  for (int i = 3; i < 6; ++i) EXPECT_NEAR(y[static_cast<size_t>(i)], 1.0 / 3.0, 1e-6);
  out = run_op("softmax", json{{"axis", 0}}, {in(x, F32{0, 0, 0, 0, 0, 0})},
               {desc("y", DType::kF32, {2, 3})});
  for (float v : from_bytes<float>(out[0])) EXPECT_FLOAT_EQ(v, 0.5f);
}

TEST(Kernels, FloatElementwise) {
  const auto a = desc("a", DType::kF32, {2, 2});
  const auto b = desc("b", DType::kF32, {2, 1});
  auto out = run_op("relu_f32", json::object(), {in(a, F32{-1, 0, 2, -3})},
                    {desc("y", DType::kF32, {2, 2})});
  EXPECT_EQ(from_bytes<float>(out[0]), (F32{0, 0, 2, 0}));
  out = run_op("add_f32", json::object(), {in(a, F32{1, 2, 3, 4}), in(b, F32{10, 20})},
               {desc("y", DType::kF32, {2, 2})});
  EXPECT_EQ(from_bytes<float>(out[0]), (F32{11, 12, 23, 24}));
  out = run_op("mul_f32", json::object(), {in(a, F32{1, 2, 3, 4}), in(b, F32{10, 20})},
               {desc("y", DType::kF32, {2, 2})});
  EXPECT_EQ(from_bytes<float>(out[0]), (F32{10, 20, 60, 80}));
}

TEST(Kernels, Conv2dF32) {
  const auto x = desc("x", DType::kF32, {1, 1, 3, 3});
  const auto w = desc("w", DType::kF32, {1, 1, 2, 2});
  const auto b = desc("b", DType::kF32, {1});
  auto out = run_op("conv2d_f32", json::object(),
                    {in(x, F32{1, 2, 3, 4, 5, 6, 7, 8, 9}), in(w, F32{1, 1, 1, 1}), in(b, F32{0.5f})},
                    {desc("y", DType::kF32, {1, 1, 2, 2})});
  EXPECT_EQ(from_bytes<float>(out[0]), (F32{12.5f, 16.5f, 24.5f, 28.5f}));
  // Padding 1, stride 2, no bias: windows centred at (0,0), (0,2), (2,0), (2,2).
  out = run_op("conv2d_f32", json{{"stride", {2, 2}}, {"pads", {1, 1, 1, 1}}},
               {in(x, F32{1, 2, 3, 4, 5, 6, 7, 8, 9}), in(w, F32{1, 1, 1, 1})},
               {desc("y", DType::kF32, {1, 1, 2, 2})});
  EXPECT_EQ(from_bytes<float>(out[0]), (F32{1, 5, 11, 28}));
}

TEST(Kernels, MatMulF32) {
  const auto a = desc("a", DType::kF32, {2, 3});
  const auto b = desc("b", DType::kF32, {3, 2});
  auto out = run_op("matmul_f32", json::object(),
                    {in(a, F32{1, 2, 3, 4, 5, 6}), in(b, F32{7, 8, 9, 10, 11, 12})},
                    {desc("y", DType::kF32, {2, 2})});
  EXPECT_EQ(from_bytes<float>(out[0]), (F32{58, 64, 139, 154}));
  const auto v = desc("v", DType::kF32, {3});
  out = run_op("matmul_f32", json::object(), {in(v, F32{1, 2, 3}), in(b, F32{7, 8, 9, 10, 11, 12})},
               {desc("y", DType::kF32, {2})});
  EXPECT_EQ(from_bytes<float>(out[0]), (F32{58, 64}));
  // Batched with broadcasting: [2,1,2] x [2,1] -> [2,1,1].
  const auto ab = desc("ab", DType::kF32, {2, 1, 2});
  const auto bb = desc("bb", DType::kF32, {2, 1});
  out = run_op("matmul_f32", json::object(), {in(ab, F32{1, 2, 3, 4}), in(bb, F32{10, 1})},
               {desc("y", DType::kF32, {2, 1, 1})});
  EXPECT_EQ(from_bytes<float>(out[0]), (F32{12, 34}));
}

TEST(Kernels, FloatPools) {
  const auto x = desc("x", DType::kF32, {1, 1, 2, 2});
  auto out = run_op("maxpool_f32", json{{"kernel", {2, 2}}}, {in(x, F32{-4, -3, -2, -1})},
                    {desc("y", DType::kF32, {1, 1, 1, 1})});
  EXPECT_EQ(from_bytes<float>(out[0]), (F32{-1}));
  json attrs{{"kernel", {2, 2}}, {"pads", {1, 1, 0, 0}}, {"count_include_pad", true}};
  out = run_op("avgpool_f32", attrs, {in(x, F32{2, 4, 6, 8})}, {desc("y", DType::kF32, {1, 1, 2, 2})});
  EXPECT_EQ(from_bytes<float>(out[0]), (F32{0.5f, 1.5f, 2.0f, 5.0f}));
}

TEST(Kernels, PackUnpackNchwnc) {
  // [1, 3, 1, 2] with blocks n=1, c=2: block 0 holds channels 0-1 per pixel, block 1 channel 2
  // and a zero lane.
  auto x = desc("x", DType::kI8, {1, 3, 1, 2});
  auto p = desc("p", DType::kI8, {1, 3, 1, 2});
  p.layout = Layout::kNCHWnc;
  p.block_n = 1;
  p.block_c = 2;
  EXPECT_EQ(p.size_bytes(), 8);
  auto out = run_op("pack_nchwnc", json::object(), {in(x, I8{1, 2, 3, 4, 5, 6})}, {p});
  EXPECT_EQ(from_bytes<int8_t>(out[0]), (I8{1, 3, 2, 4, 5, 0, 6, 0}));
  out = run_op("unpack_nchwnc", json::object(), {In{p, out[0]}}, {x});
  EXPECT_EQ(from_bytes<int8_t>(out[0]), (I8{1, 2, 3, 4, 5, 6}));
}

TEST(Kernels, PackUnpackRoundTripWithBatchBlocks) {
  const int64_t n = 3, c = 5, h = 2, w = 3, bn = 2, bc = 4;
  I8 v(static_cast<size_t>(n * c * h * w));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int8_t>(static_cast<int>(i * 7 % 251) - 125);
  std::vector<int8_t> packed(static_cast<size_t>(4 * 8 * h * w), 99), back(v.size(), 0);
  cpu::pack_nchwnc(v.data(), n, c, h, w, bn, bc, packed.data());
  // Element (b=2, ch=4, y=1, x=2) sits in batch block 1, channel block 1, lane (0, 0).
  const size_t pos = static_cast<size_t>(((1 * 2 + 1) * h * w + (1 * w + 2)) * bn * bc + 0 * bc + 0);
  EXPECT_EQ(packed[pos], v[static_cast<size_t>(((2 * c + 4) * h + 1) * w + 2)]);
  // Padding lanes (batch 3, or channels 5..7) are zero.
  EXPECT_EQ(packed[pos + 1], 0);
  EXPECT_EQ(packed[pos + bc], 0);
  cpu::unpack_nchwnc(packed.data(), n, c, h, w, bn, bc, back.data());
  EXPECT_EQ(back, v);
}

TEST(Kernels, ClipF32OneSidedAndBoth) {
  // ONNX Clip: min(max(x, lo), hi); an absent bound is unbounded; lo > hi gives hi; NaN stays.
  const auto x = desc("x", DType::kF32, {6});
  const F32 v{-3.0f, -0.25f, 0.0f, 0.44f, 0.5f, 7.0f};
  const auto y = desc("y", DType::kF32, {6});
  auto out = run_op("clip_f32", json{{"hi", 0.44}}, {in(x, v)}, {y});
  EXPECT_EQ(from_bytes<float>(out[0]), (F32{-3.0f, -0.25f, 0.0f, 0.44f, 0.44f, 0.44f}));
  out = run_op("clip_f32", json{{"lo", -0.3}}, {in(x, v)}, {y});
  EXPECT_EQ(from_bytes<float>(out[0]), (F32{-0.3f, -0.25f, 0.0f, 0.44f, 0.5f, 7.0f}));
  out = run_op("clip_f32", json{{"lo", -1}, {"hi", 0.5}}, {in(x, v)}, {y});
  EXPECT_EQ(from_bytes<float>(out[0]), (F32{-1.0f, -0.25f, 0.0f, 0.44f, 0.5f, 0.5f}));
  out = run_op("clip_f32", json::object(), {in(x, v)}, {y});
  EXPECT_EQ(from_bytes<float>(out[0]), v);
  out = run_op("clip_f32", json{{"lo", 2}, {"hi", 1}}, {in(x, v)}, {y});
  EXPECT_EQ(from_bytes<float>(out[0]), (F32(6, 1.0f)));
  const auto x1 = desc("x", DType::kF32, {1});
  out = run_op("clip_f32", json{{"lo", 0}, {"hi", 1}}, {in(x1, F32{std::nanf("")})}, {desc("y", DType::kF32, {1})});
  EXPECT_TRUE(std::isnan(from_bytes<float>(out[0])[0]));
  // a bound that is not a finite number is named
  EXPECT_THROW(run_op("clip_f32", json{{"hi", "big"}}, {in(x, v)}, {y}), UserError);
}

TEST(Kernels, RegistryListsEveryContractOp) {
  const std::vector<std::string> expect = {
      "add_f32",   "avgpool",    "avgpool_f32", "clip_f32",    "concat",        "conv2d_f32",    "dequantize",
      "global_avgpool", "matmul_f32", "maxpool", "maxpool_f32", "mul_f32",     "pack_nchwnc",
      "qadd",      "qclip",      "qconv2d",     "quantize",    "relu_f32",      "requantize",
      "reshape",   "softmax",    "unpack_nchwnc"};
  EXPECT_EQ(cpu::kernel_names(), expect);
  EXPECT_TRUE(cpu::has_kernel("qconv2d"));
  EXPECT_FALSE(cpu::has_kernel("conv"));
}

}  // namespace
}  // namespace tessel::runtime
