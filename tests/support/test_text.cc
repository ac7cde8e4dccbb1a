#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "support/checked.h"
#include "support/error.h"
#include "support/text.h"

namespace tessel::support {
namespace {

TEST(EscapeBytes, KeepsPrintableTextAndCase) {
  EXPECT_EQ(escape_bytes("Short_Input.bin"), "Short_Input.bin");
  EXPECT_EQ(quote("Short_Input.bin"), "'Short_Input.bin'");
}

TEST(EscapeBytes, EscapesControlBytesAndNul) {
  const std::string with_nul("a\0b", 3);
  EXPECT_EQ(escape_bytes(with_nul), "a\\x00b");
  EXPECT_EQ(escape_bytes("x\ny\tz\x1b[31m"), "x\\x0ay\\x09z\\x1b[31m");
  EXPECT_EQ(escape_bytes("\x7f"), "\\x7f");
  EXPECT_EQ(escape_bytes("a\\b"), "a\\\\b");
}

TEST(EscapeBytes, KeepsWellFormedUtf8AndEscapesBrokenUtf8) {
  EXPECT_EQ(escape_bytes("caf\xc3\xa9"), "caf\xc3\xa9");              // U+00E9
  EXPECT_EQ(escape_bytes("\xe2\x82\xac"), "\xe2\x82\xac");            // U+20AC
  EXPECT_EQ(escape_bytes("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");    // U+1F600
  EXPECT_EQ(escape_bytes("\xc3"), "\\xc3");                          // truncated
  EXPECT_EQ(escape_bytes("\xc0\xaf"), "\\xc0\\xaf");                 // overlong '/'
  EXPECT_EQ(escape_bytes("\xed\xa0\x80"), "\\xed\\xa0\\x80");        // surrogate U+D800
  EXPECT_EQ(escape_bytes("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(escape_bytes("\xff"), "\\xff");
}

TEST(Quote, EscapesTheQuoteSoNamesStayDistinct) {
  EXPECT_EQ(quote("a'b"), "'a\\'b'");
  EXPECT_NE(quote("a\\x00"), quote(std::string("a\0", 2)));
}

// unquote() reads back what quote() writes, for every byte value and the escapes quote() emits.
TEST(Unquote, InvertsQuote) {
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  for (const std::string& s : {all, std::string(""), std::string("a'b"), std::string("\\x41"),
                               std::string("caf\xc3\xa9 \xff"), std::string("x\0y", 3)}) {
    const std::optional<std::string> back = unquote(quote(s));
    ASSERT_TRUE(back) << quote(s);
    EXPECT_EQ(*back, s);
  }
  EXPECT_EQ(unquote("'\\x4a\\x4A'"), std::string("JJ"));
  for (const char* bad : {"", "'", "abc", "'abc", "abc'", "'a'b'", "'a\\'", "'\\q'", "'\\x4'", "'\\xg0'"}) {
    EXPECT_FALSE(unquote(bad)) << bad;
  }
}

TEST(IsUtf8, AgreesWithEscapeBytes) {
  EXPECT_TRUE(is_utf8(""));
  EXPECT_TRUE(is_utf8("plain ascii \x01 with control"));
  EXPECT_TRUE(is_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(is_utf8("\xff"));
  EXPECT_FALSE(is_utf8("\xc3"));               // truncated
  EXPECT_FALSE(is_utf8("\xc0\xaf"));           // overlong
  EXPECT_FALSE(is_utf8("\xed\xa0\x80"));       // surrogate
  EXPECT_FALSE(is_utf8("\xf4\x90\x80\x80"));   // above U+10FFFF
}

TEST(EscapeControl, EscapesControlAndBrokenBytesButNotBackslashes) {
  EXPECT_EQ(escape_control("name 'a\\x01' and raw \x01\x7f \xff caf\xc3\xa9"),
            "name 'a\\x01' and raw \\x01\\x7f \\xff caf\xc3\xa9");
}

TEST(Checked, ArithmeticAndOverflow) {
  EXPECT_EQ(checked_mul(1 << 20, 1 << 20, "t"), int64_t{1} << 40);
  EXPECT_EQ(checked_add(5, -7, "t"), -2);
  EXPECT_EQ(checked_product({2, 3, 4}, "t"), 24);
  EXPECT_EQ(checked_product({}, "t"), 1);
  EXPECT_EQ(checked_product({7, 0, int64_t{1} << 62}, "t"), 0);
  try {
    checked_product({int64_t{1} << 32, int64_t{1} << 32}, "tensor 'x'");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "tensor 'x': size overflows 64 bits (4294967296 x 4294967296)");
  }
  EXPECT_THROW(checked_product({2, -1}, "t"), UserError);
  EXPECT_THROW(checked_add(INT64_MAX, 1, "t"), UserError);
  EXPECT_THROW(checked_mul(INT64_MIN, -1, "t"), UserError);
}

}  // namespace
}  // namespace tessel::support
