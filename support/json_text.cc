#include "support/json_text.h"

#include <fmt/format.h>

#include <optional>

#include "support/error.h"
#include "support/text.h"

namespace tessel::support {
namespace {

// The path and value of the first string (value or key) in `j` that is not UTF-8.
template <typename Json>
std::optional<std::pair<std::string, std::string>> first_bad_string(const Json& j, const std::string& path) {
  if (j.is_string()) {
    const auto& s = j.template get_ref<const std::string&>();
    if (!is_utf8(s)) return std::pair{path, s};
    return std::nullopt;
  }
  if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      if (auto r = first_bad_string(j[i], fmt::format("{}[{}]", path, i))) return r;
    }
    return std::nullopt;
  }
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string at = path.empty() ? it.key() : path + "." + it.key();
      if (!is_utf8(it.key())) return std::pair{fmt::format("{} (key)", path.empty() ? "the document" : path), it.key()};
      if (auto r = first_bad_string(it.value(), at)) return r;
    }
  }
  return std::nullopt;
}

}  // namespace

std::string describe_json_parse_error(const nlohmann::json::parse_error& e, std::string_view text) {
  if (text.empty() || e.byte == 0 || e.byte > text.size()) return "unexpected end of input";
  const auto c = static_cast<unsigned char>(text[e.byte - 1]);
  if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != ' ') {
    return fmt::format("control byte 0x{:02x} where JSON does not allow it", c);
  }
  if (c >= 0x80) return fmt::format("byte 0x{:02x} is not valid UTF-8 here", c);
  return fmt::format("unexpected {}", quote(text.substr(e.byte - 1, 1)));
}

namespace {

template <typename Json>
std::string dump_checked(const Json& j, int indent, std::string_view what) {
  if (auto bad = first_bad_string(j, "")) {
    throw_user_error("{}: {} holds {}, which is not valid UTF-8 (JSON text must be UTF-8)", what,
                     bad->first.empty() ? "the document" : bad->first, quote(bad->second));
  }
  return j.dump(indent);
}

}  // namespace

std::string dump_json(const nlohmann::json& j, int indent, std::string_view what) {
  return dump_checked(j, indent, what);
}

std::string dump_json(const nlohmann::ordered_json& j, int indent, std::string_view what) {
  return dump_checked(j, indent, what);
}

nlohmann::json parse_json(std::string_view text, std::string_view what) {
  return parse_json(text, what, nullptr);
}

nlohmann::json parse_json(std::string_view text, std::string_view what,
                          const nlohmann::json::parser_callback_t& callback) {
  try {
    return nlohmann::json::parse(text.begin(), text.end(), callback);
  } catch (const nlohmann::json::parse_error& e) {
    throw_user_error("{}: malformed JSON at byte {}: {}", what, e.byte, describe_json_parse_error(e, text));
  } catch (const nlohmann::json::exception& e) {
    // The parser also throws out_of_range (406: a number beyond a double, such as 1e400); that is
    // malformed input too, and the library's text is not a message.
    throw_user_error("{}: malformed JSON: {}", what,
                     e.id == 406 ? "a number is too large for a double" : "the text is not a JSON value");
  }
}

}  // namespace tessel::support
