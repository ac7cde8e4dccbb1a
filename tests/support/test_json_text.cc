// support/json_text.h: JSON in and out with Tessel's own messages, never the library's.
#include <gtest/gtest.h>

#include "support/error.h"
#include "support/json_text.h"

namespace tessel::support {
namespace {

std::string user_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonText, NonUtf8StringsAreNamedWithTheirPath) {
  nlohmann::json j = {{"tensors", {{{"name", "ok"}}, {{"name", std::string("bad\xff\x01", 5)}}}}};
  const std::string msg = user_error([&] { dump_json(j, -1, "executable header"); });
  EXPECT_EQ(msg,
            "executable header: tensors[1].name holds 'bad\\xff\\x01', which is not valid UTF-8 (JSON text must "
            "be UTF-8)");
  nlohmann::json k = {{"attrs", {{std::string("k\xc3"), 1}}}};
  EXPECT_NE(user_error([&] { dump_json(k, 2, "report"); }).find("attrs (key) holds 'k\\xc3'"), std::string::npos);
  EXPECT_EQ(dump_json(nlohmann::json{{"a", "h\xc3\xa9llo"}}, -1, "x"), "{\"a\":\"h\xc3\xa9llo\"}");
}

TEST(JsonText, ParseErrorsInOwnWords) {
  for (const char* text : {"", "{", "{\"a\": tru", "{\"a\": 1,}", "[1, 2", "{\"a\"\x01: 1}", "\xff"}) {
    const std::string msg = user_error([&] { parse_json(text, "config"); });
    EXPECT_EQ(msg.rfind("config: malformed JSON at byte ", 0), 0u) << msg;
    EXPECT_EQ(msg.find("json.exception"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\x01'), std::string::npos) << msg;
  }
  EXPECT_NE(user_error([&] { parse_json("{", "c"); }).find("unexpected end of input"), std::string::npos);
  EXPECT_EQ(parse_json("{\"a\": [1, 2]}", "c")["a"][1], 2);
}

TEST(JsonText, NumbersBeyondADoubleAreMalformedInput) {
  // nlohmann throws out_of_range (not parse_error) for these; it must not escape as library text.
  for (const char* text : {"{\"a\": 1e400}", "[-1e999]", "{\"CLOCK_MHZ\": 111111122e1111}"}) {
    const std::string msg = user_error([&] { parse_json(text, "executable header"); });
    EXPECT_EQ(msg, "executable header: malformed JSON: a number is too large for a double") << text;
  }
}

}  // namespace
}  // namespace tessel::support
