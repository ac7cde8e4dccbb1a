// Malformed, truncated or garbage executables fail with UserErrors (never a crash); unreadable
// files with IoError.
#include <gtest/gtest.h>

#include <zlib.h>

#include <functional>

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

// The format version 2 preamble: magic, header length, version, CRC-32 of both and the header.
constexpr size_t kPre = 24;
uint64_t header_len(const std::vector<uint8_t>& bytes) {
  uint64_t hlen = 0;
  for (int i = 0; i < 8; ++i) hlen |= uint64_t{bytes[8 + static_cast<size_t>(i)]} << (8 * i);
  return hlen;
}
uint32_t crc(const uint8_t* p, size_t n, uint32_t init = 0) { return static_cast<uint32_t>(::crc32_z(init, p, n)); }
void put_u32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + static_cast<size_t>(i)] = static_cast<uint8_t>(v >> (8 * i));
}

// Rebuilds a file from a modified header (blobs unchanged), with a correct header checksum, so
// the loader's field checks behind the checksum are reached.
std::vector<uint8_t> with_header(const std::vector<uint8_t>& bytes, const nlohmann::json& h) {
  const uint64_t hlen = header_len(bytes);
  const std::string text = h.dump();
  std::vector<uint8_t> out(bytes.begin(), bytes.begin() + 8);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(text.size() >> (8 * i)));
  out.insert(out.end(), bytes.begin() + 16, bytes.begin() + 24);
  out.insert(out.end(), text.begin(), text.end());
  out.insert(out.end(), bytes.begin() + static_cast<std::ptrdiff_t>(kPre + hlen), bytes.end());
  put_u32(out, 20, crc(out.data() + kPre, text.size(), crc(out.data(), 20)));
  return out;
}
nlohmann::json header(const std::vector<uint8_t>& bytes) {
  const uint64_t hlen = header_len(bytes);
  return nlohmann::json::parse(bytes.begin() + kPre, bytes.begin() + static_cast<std::ptrdiff_t>(kPre + hlen));
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
             "2 bytes is too short for the 24-byte preamble");
}

TEST(ExecutableErrors, HeaderLengthAndJson) {
  auto bytes = good();
  bytes[15] = 0x7f;  // header length ~ 2^63
  EXPECT_MSG(user_error([&] { Executable::deserialize(bytes); }), "exceeds the");
  bytes = good();
  bytes[kPre] = '#';  // first character of the JSON header: caught by the header checksum
  EXPECT_MSG(user_error([&] { Executable::deserialize(bytes); }), "checksum mismatch in section header");
  // Malformed JSON behind a correct checksum is named in Tessel's words.
  bytes = good();
  const uint64_t hlen = header_len(bytes);
  bytes[kPre] = '#';
  put_u32(bytes, 20, crc(bytes.data() + kPre, hlen, crc(bytes.data(), 20)));
  const std::string msg = user_error([&] { Executable::deserialize(bytes); });
  EXPECT_MSG(msg, "executable header: malformed JSON at byte 1");
  EXPECT_EQ(msg.find("json.exception"), std::string::npos) << msg;
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
  h["tensors"][3].erase("data_crc32");
  EXPECT_MSG(user_error([&] { Executable::deserialize(with_header(bytes, h)); }),
             "tensors[3] is missing 'data_crc32'");
  h = header(bytes);
  h["steps"][2]["program"] = 3;
  EXPECT_MSG(user_error([&] { Executable::deserialize(with_header(bytes, h)); }),
             "step 'conv' runs program 3, but there are 1 programs");
  h = header(bytes);
  h["tensors"][3]["data_size"] = 255;
  EXPECT_MSG(user_error([&] { Executable::deserialize(with_header(bytes, h)); }),
             "constant tensor 'w' has 255 bytes of data, its shape needs 256");
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

// Every single-byte change anywhere in a file is a named error before anything is used: the
// header and its preamble, every tensor's data and every Program blob carry a CRC-32, which finds
// every burst of up to 32 bits. No mutant loads, none is an internal error.
TEST(ExecutableErrors, EveryFlippedByteIsANamedError) {
  const auto bytes = good();
  const uint64_t hlen = header_len(bytes);
  const auto h = header(bytes);
  const size_t blob_base = kPre + hlen;
  const uint64_t w_off = h["tensors"][3]["data_offset"].get<uint64_t>();
  const uint64_t p_off = h["programs"][0]["offset"].get<uint64_t>();
  ASSERT_GT(h["tensors"][3]["data_size"].get<uint64_t>(), 0u);
  size_t n_header = 0, n_tensor = 0, n_program = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xff}}) {
      auto m = bytes;
      m[i] ^= flip;
      std::string msg;
      try {
        (void)Executable::deserialize(m);
        ADD_FAILURE() << "byte " << i << " ^ " << int{flip} << " loads";
        continue;
      } catch (const UserError& e) {
        msg = e.what();
      } catch (const std::exception& e) {
        ADD_FAILURE() << "byte " << i << ": not a UserError: " << e.what();
        continue;
      }
      EXPECT_EQ(msg.find("internal error"), std::string::npos) << msg;
      if (i < 8) {
        EXPECT_MSG(msg, "bad magic");
      } else if (i >= 16 && i < 20) {
        EXPECT_MSG(msg, "format version");
      } else if (i < blob_base) {
        EXPECT_TRUE(msg.find("section header") != std::string::npos || msg.find("header length") != std::string::npos ||
                    msg.find("format version 1") != std::string::npos)
            << "byte " << i << ": " << msg;
        ++n_header;
      } else if (i < blob_base + p_off) {
        EXPECT_MSG(msg, "checksum mismatch in section tensors[");
        if (i >= blob_base + w_off && i < blob_base + w_off + 256) {
          EXPECT_MSG(msg, "tensors[3] (the data of tensor 'w')");
        }
        ++n_tensor;
      } else {
        EXPECT_MSG(msg, "checksum mismatch in section programs[0] (program '");
        ++n_program;
      }
    }
  }
  EXPECT_GT(n_header, 0u);
  EXPECT_GT(n_tensor, 0u);
  EXPECT_GT(n_program, 0u);
}

TEST(ExecutableErrors, OldFormatVersionIsNamed) {
  // A version 1 file: the JSON header straight after the 16-byte preamble, no checksums.
  const std::string json = "{\"config\":{},\"format_version\":1}";
  std::vector<uint8_t> v1 = {'T', 'S', 'L', 'E', 'X', 'E', 'C', '1'};
  for (int i = 0; i < 8; ++i) v1.push_back(static_cast<uint8_t>(json.size() >> (8 * i)));
  v1.insert(v1.end(), json.begin(), json.end());
  EXPECT_MSG(user_error([&] { Executable::deserialize(v1); }),
             "format version 1 (written by an older tessel, without checksums) is not supported; this tessel "
             "reads format version 2");
  auto bytes = good();
  bytes[16] = 3;
  EXPECT_MSG(user_error([&] { Executable::deserialize(bytes); }),
             "format version 3 is not supported (this tessel reads format version 2)");
}

// JSON holds UTF-8 only: a name that is not is a named error from serialize(), never the JSON
// library's exception.
TEST(ExecutableErrors, NonUtf8NamesAreNamedOnSerialize) {
  Executable e = testing::HandConv().executable(isa::HwConfig{});
  e.tensors[2].name = std::string("x\xff\x00q", 4);
  std::string msg = user_error([&] { (void)e.serialize(); });
  EXPECT_EQ(msg, "executable header: tensors[2].name holds 'x\\xff\\x00q', which is not valid UTF-8 (JSON text "
                 "must be UTF-8)");
  e = testing::HandConv().executable(isa::HwConfig{});
  e.steps[1].attrs["note"] = std::string("\xc3(");
  msg = user_error([&] { (void)e.serialize(); });
  EXPECT_MSG(msg, "steps[1].attrs.note holds '\\xc3('");
}

TEST(ExecutableErrors, MissingFileIsIoError) {
  EXPECT_THROW(Executable::load("/nonexistent/dir/model.tsx"), IoError);
}

}  // namespace
}  // namespace tessel::runtime
