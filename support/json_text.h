// JSON text in and out without a JSON library's exception text reaching the user: parse errors
// and strings that JSON cannot hold (bytes that are not UTF-8) become UserErrors that name the
// document and the place.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace tessel::support {

/// `j` as JSON text (`indent` < 0: compact; else pretty-printed with that many spaces). Keys are
/// in nlohmann::json's order (sorted), so equal documents give equal bytes. Throws UserError
/// "<what>: <path> holds <quoted string>, which is not valid UTF-8 (JSON text must be UTF-8)" when
/// a string value or an object key anywhere in `j` is not well-formed UTF-8; `path` is the JSON
/// path of the first such string in document order, e.g. "tensors[3].name" or "steps[0].attrs
/// (key)".
std::string dump_json(const nlohmann::json& j, int indent, std::string_view what);
/// As above, for a document that keeps its keys in insertion order (reports).
std::string dump_json(const nlohmann::ordered_json& j, int indent, std::string_view what);

/// Parses JSON text. Throws UserError "<what>: malformed JSON at byte N: <reason>" (N 1-based,
/// as the parser counts; the reason in Tessel's words, e.g. "unexpected end of input") for text
/// that is not one complete JSON value.
nlohmann::json parse_json(std::string_view text, std::string_view what);
/// As above, with a parser callback (nlohmann::json::parser_callback_t) that sees every event,
/// e.g. to reject duplicate keys; a UserError the callback throws passes through unchanged. A
/// number beyond a double is UserError "<what>: malformed JSON: a number is too large for a
/// double".
nlohmann::json parse_json(std::string_view text, std::string_view what,
                          const nlohmann::json::parser_callback_t& callback);

/// The reason of a parse error of `text` in Tessel's words ("unexpected end of input", "control
/// byte 0x01 where JSON does not allow it", "unexpected '}'"), for parsers that need their own
/// nlohmann::json::parse call (a parser callback); never the library's message.
std::string describe_json_parse_error(const nlohmann::json::parse_error& e, std::string_view text);

}  // namespace tessel::support
