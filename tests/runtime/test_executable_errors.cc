// Malformed, truncated or garbage executables fail with UserErrors (never a crash); unreadable
// files with IoError.
#include <gtest/gtest.h>

#include "runtime/executable.h"
#include "support/error.h"
#include "tests/runtime/hand_conv.h"

namespace tessel::runtime {
namespace {

template <typename F>
std::string user_error(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}
#define EXPECT_MSG(msg, text) EXPECT_NE((msg).find(text), std::string::npos) << (msg)

std::vector<uint8_t> good() { return testing::HandConv().executable(isa::HwConfig{}).serialize(); }

// Rebuilds a file from a modified header (blobs unchanged).
std::vector<uint8_t> with_header(const std::vector<uint8_t>& bytes, const nlohmann::json& h) {
  uint64_t hlen = 0;
  for (int i = 0; i < 8; ++i) hlen |= uint64_t{bytes[8 + static_cast<size_t>(i)]} << (8 * i);
  const std::string text = h.dump();
  std::vector<uint8_t> out(bytes.begin(), bytes.begin() + 8);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(text.size() >> (8 * i)));
  out.insert(out.end(), text.begin(), text.end());
  out.insert(out.end(), bytes.begin() + 16 + static_cast<std::ptrdiff_t>(hlen), bytes.end());
  return out;
}
nlohmann::json header(const std::vector<uint8_t>& bytes) {
  uint64_t hlen = 0;
  for (int i = 0; i < 8; ++i) hlen |= uint64_t{bytes[8 + static_cast<size_t>(i)]} << (8 * i);
  return nlohmann::json::parse(bytes.begin() + 16, bytes.begin() + 16 + static_cast<std::ptrdiff_t>(hlen));
}

TEST(ExecutableErrors, EveryTruncationIsAUserError) {
  const auto bytes = good();
  for (size_t n = 0; n < bytes.size(); n += (n < 64 ? 1 : 97)) {
    const std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_THROW(Executable::deserialize(cut), UserError) << "truncated to " << n << " bytes";
  }
  const std::vector<uint8_t> cut(bytes.begin(), bytes.end() - 1);
  EXPECT_THROW(Executable::deserialize(cut), UserError);
}

TEST(ExecutableErrors, GarbageAndBadMagic) {
  std::vector<uint8_t> garbage(1000);
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<uint8_t>(i * 131 + 7);
  EXPECT_MSG(user_error([&] { Executable::deserialize(garbage); }), "bad magic");
  auto bytes = good();
  bytes[3] = 'X';
  EXPECT_MSG(user_error([&] { Executable::deserialize(bytes); }),
             "bad magic (expected \"TSLEXEC1\")");
  EXPECT_MSG(user_error([&] { Executable::deserialize({'T', 'S'}); }),
             "2 bytes is too short for the 16-byte header");
}

TEST(ExecutableErrors, HeaderLengthAndJson) {
  auto bytes = good();
  bytes[15] = 0x7f;  // header length ~ 2^63
  EXPECT_MSG(user_error([&] { Executable::deserialize(bytes); }), "exceeds the");
  bytes = good();
  bytes[16] = '#';  // first character of the JSON header
  EXPECT_MSG(user_error([&] { Executable::deserialize(bytes); }), "malformed JSON header");
}

TEST(ExecutableErrors, TrailingBytes) {
  auto bytes = good();
  bytes.push_back(0);
  EXPECT_MSG(user_error([&] { Executable::deserialize(bytes); }),
             "1 trailing bytes after the last blob");
}

TEST(ExecutableErrors, BadFields) {
  const auto bytes = good();
  auto h = header(bytes);
  h["tensors"][1]["dtype"] = "u4";
  EXPECT_MSG(user_error([&] { Executable::deserialize(with_header(bytes, h)); }),
             "unknown dtype 'u4' (valid: f32, i8, i32, i64)");
  h = header(bytes);
  h["steps"][0]["inputs"] = {42};
  EXPECT_MSG(user_error([&] { Executable::deserialize(with_header(bytes, h)); }),
             "step 'quant_in' input refers to tensor 42, but there are 8 tensors");
  h = header(bytes);
  h["steps"][2]["program"] = 3;
  EXPECT_MSG(user_error([&] { Executable::deserialize(with_header(bytes, h)); }),
             "step 'conv' runs program 3, but there are 1 programs");
  h = header(bytes);
  h["tensors"][3]["data_size"] = 255;
  EXPECT_MSG(user_error([&] { Executable::deserialize(with_header(bytes, h)); }),
             "constant tensor 'w' has 255 bytes of data, its shape needs 256");
  h = header(bytes);
  h["format_version"] = 9;
  EXPECT_MSG(user_error([&] { Executable::deserialize(with_header(bytes, h)); }),
             "format_version 9 is not supported");
  h = header(bytes);
  h["steps"][1].erase("op");
  EXPECT_MSG(user_error([&] { Executable::deserialize(with_header(bytes, h)); }),
             "steps[1] is missing 'op'");
  h = header(bytes);
  h["programs"][0]["size"] = 10;
  EXPECT_THROW(Executable::deserialize(with_header(bytes, h)), UserError);
  h = header(bytes);
  h["tensors"][0]["shape"] = {1, -16, 2, 2};
  EXPECT_MSG(user_error([&] { Executable::deserialize(with_header(bytes, h)); }),
             "tensor 'x_f32' has a negative dimension -16");
}

TEST(ExecutableErrors, MissingFileIsIoError) {
  EXPECT_THROW(Executable::load("/nonexistent/dir/model.tsx"), IoError);
}

}  // namespace
}  // namespace tessel::runtime
