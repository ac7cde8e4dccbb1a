// Bad kernel calls fail with a UserError that names the step, the op and the problem.
#include <gtest/gtest.h>

#include "runtime/cpu/kernels.h"
#include "tests/runtime/kernel_test_util.h"

namespace tessel::runtime {
namespace {

using namespace testing;
using nlohmann::json;
using I8 = std::vector<int8_t>;
using F32 = std::vector<float>;

// Runs the call and returns the UserError message ("" if none was thrown).
template <typename F>
std::string user_error(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(KernelErrors, UnknownOpListsValidOps) {
  const std::string msg = user_error([] { cpu::find_kernel("conv", "layer3"); });
  EXPECT_NE(msg.find("unknown cpu op 'conv' in step 'layer3'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("qconv2d"), std::string::npos) << msg;
}

TEST(KernelErrors, WrongDtype) {
  const auto x = desc("x", DType::kI8, {2});
  const std::string msg = user_error([&] {
    run_op("quantize", json::object(), {in(x, I8{1, 2})}, {desc("y", DType::kI8, {2}, 1.0f, 0)});
  });
  EXPECT_NE(msg.find("step 'test_quantize' (quantize): input 'x' has dtype i8, expected f32"),
            std::string::npos)
      << msg;
}

TEST(KernelErrors, ShapeMismatchAndArity) {
  const auto x = desc("x", DType::kF32, {2});
  std::string msg = user_error([&] {
    run_op("relu_f32", json::object(), {in(x, F32{1, 2})}, {desc("y", DType::kF32, {3})});
  });
  EXPECT_NE(msg.find("input shape [2] differs from output shape [3]"), std::string::npos) << msg;
  msg = user_error([&] { run_op("relu_f32", json::object(), {}, {desc("y", DType::kF32, {2})}); });
  EXPECT_NE(msg.find("expects 1 inputs, got 0"), std::string::npos) << msg;
}

TEST(KernelErrors, BadScaleAndBroadcast) {
  const auto a = desc("a", DType::kI8, {2}, 0.0f, 0);
  std::string msg = user_error([&] {
    run_op("dequantize", json::object(), {in(a, I8{1, 2})}, {desc("y", DType::kF32, {2})});
  });
  EXPECT_NE(msg.find("input 'a' has scale 0, expected a finite positive value"), std::string::npos)
      << msg;
  const auto b = desc("b", DType::kF32, {2});
  const auto c = desc("c", DType::kF32, {3});
  msg = user_error([&] {
    run_op("add_f32", json::object(), {in(b, F32{1, 2}), in(c, F32{1, 2, 3})},
           {desc("y", DType::kF32, {3})});
  });
  EXPECT_NE(msg.find("shapes [2] and [3] cannot be broadcast"), std::string::npos) << msg;
}

TEST(KernelErrors, QConv2dAttributes) {
  const auto x = desc("x", DType::kI8, {1, 4, 3, 3});
  const auto w = desc("w", DType::kI8, {2, 4, 1, 1});
  const auto b = desc("b", DType::kI32, {2});
  const auto y = desc("y", DType::kI8, {1, 2, 3, 3});
  const std::vector<In> ins = {in(x, I8(36, 1)), in(w, I8(8, 1)), In{b, std::vector<uint8_t>(8, 0)}};
  json rq = {{"multiplier", {1}}, {"shift", {0}}, {"out_zero_point", 0}};
  std::string msg = user_error([&] { run_op("qconv2d", json::object(), ins, {y}); });
  EXPECT_NE(msg.find("step 'test_qconv2d' (qconv2d): missing attribute 'requant'"),
            std::string::npos)
      << msg;
  msg = user_error([&] { run_op("qconv2d", json{{"requant", rq}, {"stride", {0, 1}}}, ins, {y}); });
  EXPECT_NE(msg.find("stride [0, 1] must be positive"), std::string::npos) << msg;
  msg = user_error([&] { run_op("qconv2d", json{{"requant", rq}, {"groups", 3}}, ins, {y}); });
  EXPECT_NE(msg.find("groups 3 must divide input channels 4 and output channels 2"),
            std::string::npos)
      << msg;
  msg = user_error([&] { run_op("qconv2d", json{{"requant", rq}, {"pads", {1, 1}}}, ins, {y}); });
  EXPECT_NE(msg.find("attribute 'pads' must be a list of 4 integers, got [1,1]"), std::string::npos)
      << msg;
  json bad_rq = rq;
  bad_rq["shift"] = {40};
  msg = user_error([&] { run_op("qconv2d", json{{"requant", bad_rq}}, ins, {y}); });
  EXPECT_NE(msg.find("requant shift 40 is outside [0, 31]"), std::string::npos) << msg;
  bad_rq = rq;
  bad_rq["multiplier"] = {1, 2, 3};
  msg = user_error([&] { run_op("qconv2d", json{{"requant", bad_rq}}, ins, {y}); });
  EXPECT_NE(msg.find("requant 'multiplier' must be a list of 1 or 2 int32 values"),
            std::string::npos)
      << msg;
  // the low limbs (runtime/qnn.h): both lists or neither, per-channel lists, the shift ranges
  auto low_error = [&](json low_m, json low_s) {
    json r = rq;
    if (!low_m.is_null()) r["low_multiplier"] = low_m;
    if (!low_s.is_null()) r["low_shift"] = low_s;
    return user_error([&] { run_op("qconv2d", json{{"requant", r}}, ins, {y}); });
  };
  msg = low_error(json::array({json::array({1})}), nullptr);
  EXPECT_NE(msg.find("requant has 'low_multiplier' without 'low_shift'"), std::string::npos) << msg;
  msg = low_error(json::array({json::array({1, 2, 3})}), json::array({json::array({4})}));
  EXPECT_NE(msg.find("requant 'low_multiplier' limb 0 must be a list of 1 or 2 int32 values, got [1,2,3]"),
            std::string::npos)
      << msg;
  msg = low_error(json::array({json::array({1}), json::array({1})}), json::array({json::array({4})}));
  EXPECT_NE(msg.find("requant has 2 low_multiplier limbs but 1 low_shift limbs"), std::string::npos) << msg;
  msg = low_error(json::array({json::array({1})}), json::array({json::array({32})}));
  EXPECT_NE(msg.find("requant low_shift[0][0] 32 is outside [0, 31]"), std::string::npos) << msg;
  json many = json::array();
  for (int i = 0; i < 8; ++i) many.push_back(json::array({0}));
  msg = low_error(many, many);
  EXPECT_NE(msg.find("requant 'low_multiplier' must be a list of at most 7 limbs"), std::string::npos) << msg;
  {
    json r = rq;
    r["shift"] = {31};
    r["low_multiplier"] = json::array({json::array({0}), json::array({0})});
    r["low_shift"] = json::array({json::array({31}), json::array({1})});
    msg = user_error([&] { run_op("qconv2d", json{{"requant", r}}, ins, {y}); });
    EXPECT_NE(msg.find("requant channel 0: the total shift 63 (shift plus the low limbs' shifts) exceeds 62"),
              std::string::npos)
        << msg;
  }
  msg = user_error([&] {
    run_op("qconv2d", json{{"requant", rq}, {"in_zero_point", 300}}, ins, {y});
  });
  EXPECT_NE(msg.find("in_zero_point 300 is outside [-128, 127]"), std::string::npos) << msg;
  // Output shape that does not match the convolution.
  msg = user_error([&] {
    run_op("qconv2d", json{{"requant", rq}}, ins, {desc("y", DType::kI8, {1, 2, 2, 2})});
  });
  EXPECT_NE(msg.find("output 'y' has shape [1, 2, 2, 2], the convolution gives [1, 2, 3, 3]"),
            std::string::npos)
      << msg;
}

TEST(KernelErrors, PoolsAndClip) {
  const auto x = desc("x", DType::kI8, {1, 1, 4, 4});
  const I8 v(16, 0);
  std::string msg = user_error([&] {
    run_op("maxpool", json{{"kernel", {2, 2}}}, {in(x, v)}, {desc("y", DType::kI8, {1, 1, 2, 2})});
  });
  EXPECT_NE(msg.find("output 'y' has shape [1, 1, 2, 2], the pool gives [1, 1, 3, 3]"),
            std::string::npos)
      << msg;
  msg = user_error([&] {
    run_op("maxpool", json{{"kernel", {2, 2}}, {"pads", {2, 0, 0, 0}}}, {in(x, v)},
           {desc("y", DType::kI8, {1, 1, 5, 3})});
  });
  EXPECT_NE(msg.find("pads [2, 0, 0, 0] must be smaller than the kernel [2, 2]"), std::string::npos)
      << msg;
  msg = user_error([&] {
    run_op("qclip", json{{"lo", 5}, {"hi", 2}}, {in(x, v)}, {desc("y", DType::kI8, {1, 1, 4, 4})});
  });
  EXPECT_NE(msg.find("clip range [5, 2]"), std::string::npos) << msg;
  msg = user_error([&] {
    run_op("maxpool", json{{"kernel", {2, 2}}, {"stride", {2, 2}}}, {in(x, v)},
           {desc("y", DType::kI8, {1, 1, 2, 2}, 0.5f, 0)});
  });
  EXPECT_NE(msg.find("input and output quantisation differ"), std::string::npos) << msg;
}

TEST(KernelErrors, ReshapeConcatSoftmaxPack) {
  const auto x = desc("x", DType::kF32, {2, 3});
  std::string msg = user_error([&] {
    run_op("reshape", json::object(), {in(x, F32(6, 0))}, {desc("y", DType::kF32, {7})});
  });
  EXPECT_NE(msg.find("input 'x' has 6 elements but output 'y' has 7"), std::string::npos) << msg;
  msg = user_error([&] {
    run_op("concat", json{{"axis", 2}}, {in(x, F32(6, 0))}, {desc("y", DType::kF32, {2, 3})});
  });
  EXPECT_NE(msg.find("axis 2 is out of range for rank 2"), std::string::npos) << msg;
  msg = user_error([&] {
    run_op("concat", json{{"axis", 0}}, {in(x, F32(6, 0)), in(x, F32(6, 0))},
           {desc("y", DType::kF32, {5, 3})});
  });
  EXPECT_NE(msg.find("inputs sum to 4 along axis 0, output has 5"), std::string::npos) << msg;
  msg = user_error([&] {
    run_op("softmax", json{{"axis", "1"}}, {in(x, F32(6, 0))}, {desc("y", DType::kF32, {2, 3})});
  });
  EXPECT_NE(msg.find("attribute 'axis' must be an integer, got \"1\""), std::string::npos) << msg;
  const auto p = desc("p", DType::kI8, {1, 2, 1, 1});
  msg = user_error([&] {
    run_op("pack_nchwnc", json::object(), {in(p, I8{1, 2})}, {desc("q", DType::kI8, {1, 2, 1, 1})});
  });
  EXPECT_NE(msg.find("tensor 'q' must be in NCHWnc layout"), std::string::npos) << msg;
}

}  // namespace
}  // namespace tessel::runtime
