// The one window-size rule (runtime::cpu::window_output_size) against hand-computed ONNX values,
// the CPU pools using it (ceil_mode drops a window that would start in the end padding), and the
// CPU convolution's working memory: computed with overflow checks and bounded before anything
// is allocated (strides of 2^32 were a SIGSEGV, 32768 took 6.3 GB).
#include <gtest/gtest.h>

#include <limits>

#include "runtime/cpu/kernels.h"
#include "tests/runtime/kernel_test_util.h"

namespace tessel::runtime {
namespace {

using namespace testing;
using nlohmann::json;
using cpu::window_output_size;

template <typename F>
std::string user_error(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(WindowOutputSize, FloorCeilAndTheDroppedLastWindow) {
  // floor((in + pads - k) / s) + 1
  EXPECT_EQ(window_output_size(32, 1, 1, 3, 2, false), 16);
  EXPECT_EQ(window_output_size(5, 0, 0, 2, 2, false), 2);
  EXPECT_EQ(window_output_size(7, 0, 0, 7, 7, false), 1);
  // ceil: windows may hang over the end of the input (start 4 < 5 is kept).
  EXPECT_EQ(window_output_size(5, 0, 0, 2, 2, true), 3);
  EXPECT_EQ(window_output_size(16, 0, 0, 3, 2, true), 8);
  // ceil with pads: 5 + 1 + 1, k 2, s 2 -> ceil(5/2)+1 = 4, but the 4th window starts at padded
  // 6 = in + pad_begin (in the end padding): dropped.
  EXPECT_EQ(window_output_size(5, 1, 1, 2, 2, true), 3);
  // 6 + 1 + 1, k 3, s 2: ceil(5/2)+1 = 4, the last starts at padded 6 < 7: kept.
  EXPECT_EQ(window_output_size(6, 1, 1, 3, 2, true), 4);
  // Exact division: ceil = floor, nothing dropped.
  EXPECT_EQ(window_output_size(7, 0, 0, 3, 2, true), 3);
  // Kernel larger than the padded input: no window.
  EXPECT_EQ(window_output_size(2, 0, 0, 3, 1, false), 0);
  // Huge strides: one window, no overflow.
  EXPECT_EQ(window_output_size(8, 0, 0, 3, int64_t{1} << 62, true), 1);
  const int64_t max = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(window_output_size(1, max - 1, 0, 1, max, true), 1);
  EXPECT_NE(user_error([&] { window_output_size(8, max, 1, 3, 1, false); }).find("size overflows 64 bits"),
            std::string::npos);
  EXPECT_NE(user_error([] { window_output_size(8, 0, 0, 3, 0, false); }).find("must be positive"), std::string::npos);
  EXPECT_NE(user_error([] { window_output_size(0, 0, 0, 1, 1, false); }).find("must be positive"), std::string::npos);
}

TEST(WindowOutputSize, PoolKernelsDropTheWindowInTheEndPadding) {
  // [1,1,5,5], kernel 2, stride 2, pads 1, ceil_mode: 3x3 (not 4x4).
  const auto x = desc("x", DType::kF32, {1, 1, 5, 5});
  std::vector<float> v(25);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  const json attrs = {{"kernel", {2, 2}}, {"stride", {2, 2}}, {"pads", {1, 1, 1, 1}}, {"ceil_mode", true}};
  const auto out = run_op("maxpool_f32", attrs, {in(x, v)}, {desc("y", DType::kF32, {1, 1, 3, 3})});
  EXPECT_EQ(from_bytes<float>(out[0]), (std::vector<float>{0, 2, 4, 10, 12, 14, 20, 22, 24}));
  const auto avg = run_op("avgpool_f32", attrs, {in(x, v)}, {desc("y", DType::kF32, {1, 1, 3, 3})});
  EXPECT_EQ(from_bytes<float>(avg[0]), (std::vector<float>{0, 1.5f, 3.5f, 7.5f, 9, 11, 17.5f, 19, 21}));
  const std::string msg =
      user_error([&] { run_op("maxpool_f32", attrs, {in(x, v)}, {desc("y", DType::kF32, {1, 1, 4, 4})}); });
  EXPECT_NE(msg.find("output 'y' has shape [1, 1, 4, 4], the pool gives [1, 1, 3, 3]"), std::string::npos) << msg;
}

QConv2dParams conv(int64_t ic, int64_t ih, int64_t iw, int64_t oc, int64_t k, int64_t sh, int64_t sw, int64_t pad) {
  QConv2dParams p;
  p.ic = ic;
  p.ih = ih;
  p.iw = iw;
  p.oc = oc;
  p.kh = p.kw = k;
  p.stride_h = sh;
  p.stride_w = sw;
  p.pad_top = p.pad_left = p.pad_bottom = p.pad_right = pad;
  p.rq.multiplier = {1};
  p.rq.shift = {0};
  return p;
}

TEST(QConv2dScratch, BytesAreTheBuffersQConv2dAllocates) {
  // 3x3 conv, 8 -> 4 channels, 10x10 input, pad 1, stride 1: padded 12x12, one phase; pad copy
  // 8 * 144 + slack (2 * 12 + 3 + 32) int16; one tile of 10 rows of pitch 12 rounded to 128
  // accumulators per channel, 4 channels; weights 4 * 72 int32; 72 int64 tap offsets.
  const int64_t pad_elems = 8 * 144 + 2 * 12 + 3 + 32, acc = 4 * 128, taps = 8 * 9;
  EXPECT_EQ(cpu::qconv2d_scratch_bytes(conv(8, 10, 10, 4, 3, 1, 1, 1)), 2 * pad_elems + 4 * acc + 4 * 4 * taps + 8 * taps);
  // Stride 2 splits the padded input into four phases of 6x6.
  const int64_t pad2 = 8 * 4 * 36 + 2 * 6 + 3 + 32;
  EXPECT_EQ(cpu::qconv2d_scratch_bytes(conv(8, 10, 10, 4, 3, 2, 2, 1)), 2 * pad2 + 4 * 4 * 32 + 4 * 4 * taps + 8 * taps);
}

TEST(QConv2dScratch, HugeStridesAreBoundedBeforeAllocating) {
  const auto x = desc("x", DType::kI8, {1, 4, 3, 3});
  const auto w = desc("w", DType::kI8, {2, 4, 1, 1});
  const auto b = desc("b", DType::kI32, {2});
  const std::vector<In> ins = {in(x, std::vector<int8_t>(36, 1)), in(w, std::vector<int8_t>(8, 1)),
                               In{b, std::vector<uint8_t>(8, 0)}};
  const json rq = {{"multiplier", {1}}, {"shift", {0}}, {"out_zero_point", 0}};
  // Stride 2^32: one output row, but the phase split would need 2^32 phases per channel.
  std::string msg = user_error([&] {
    run_op("qconv2d", json{{"requant", rq}, {"stride", {int64_t{1} << 32, 1}}}, ins, {desc("y", DType::kI8, {1, 2, 1, 3})});
  });
  EXPECT_NE(msg.find("step 'test_qconv2d' (qconv2d): the cpu convolution needs 103079215502 bytes of working memory, "
                     "more than the 1073741824-byte limit"),
            std::string::npos)
      << msg;
  msg = user_error([&] {
    run_op("qconv2d", json{{"requant", rq}, {"stride", {int64_t{1} << 62, int64_t{1} << 62}}}, ins,
           {desc("y", DType::kI8, {1, 2, 1, 1})});
  });
  EXPECT_NE(msg.find("step 'test_qconv2d' (qconv2d): qconv2d: working memory: size overflows 64 bits"), std::string::npos)
      << msg;
  // The direct API checks the same bound.
  msg = user_error([] {
    std::vector<int8_t> in(36), w(8), out(6);
    std::vector<int32_t> bias(2);
    cpu::qconv2d(conv(4, 3, 3, 2, 1, int64_t{1} << 32, 1, 0), in.data(), w.data(), bias.data(), out.data());
  });
  EXPECT_NE(msg.find("qconv2d: working memory of 103079215502 bytes exceeds the 1073741824-byte limit"), std::string::npos)
      << msg;
}

TEST(QConv2dScratch, FloatConvChecksItsGeometry) {
  const auto x = desc("x", DType::kF32, {1, 1, 4, 4});
  const auto w = desc("w", DType::kF32, {1, 1, 3, 3});
  const std::vector<In> ins = {in(x, std::vector<float>(16, 1.0f)), in(w, std::vector<float>(9, 1.0f))};
  std::string msg = user_error([&] {
    run_op("conv2d_f32", json{{"dilations", {int64_t{1} << 62, 1}}}, ins, {desc("y", DType::kF32, {1, 1, 2, 2})});
  });
  EXPECT_NE(msg.find("step 'test_conv2d_f32' (conv2d_f32): dilated kernel: size overflows 64 bits (2 x "
                     "4611686018427387904)"),
            std::string::npos)
      << msg;
  const int64_t max = std::numeric_limits<int64_t>::max();
  msg = user_error([&] {
    run_op("conv2d_f32", json{{"pads", {max, 0, 0, 0}}}, ins, {desc("y", DType::kF32, {1, 1, 2, 2})});
  });
  EXPECT_NE(msg.find("window: padded input: size overflows 64 bits"), std::string::npos) << msg;
}

}  // namespace
}  // namespace tessel::runtime
