// Text helpers for messages: user-given names (file paths, ONNX node and tensor names, segment
// names, JSON keys) are quoted exactly as given, with bytes that cannot be shown escaped, so a
// message never carries control bytes, NULs or broken UTF-8 from an input file, and two different
// names never print the same.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tessel::support {

/// `s` with every byte that is not printable escaped: bytes 0x00..0x1F and 0x7F become "\xNN"
/// (two lower-case hex digits), a backslash becomes "\\", and bytes >= 0x80 that are not part of a
/// well-formed UTF-8 sequence (RFC 3629: no overlongs, no surrogates, at most U+10FFFF) become
/// "\xNN"; well-formed multi-byte UTF-8 is kept. Letter case is never changed. The result has no
/// byte below 0x20 and no NUL, so it can be embedded in a one-line message.
std::string escape_bytes(std::string_view s);

/// escape_bytes(s) between single quotes, with a single quote inside escaped as "\'":
/// quote("a'b") == "'a\\'b'". Use it for every user-given name in a message.
std::string quote(std::string_view s);

/// The inverse of quote(): `q` must be a single-quoted string as quote() writes it, and the bytes
/// it stands for are returned (unquote(quote(s)) == s for every s). Inside the quotes, "\xNN"
/// (two hex digits, either case) is byte NN, "\\" a backslash and "\'" a single quote; any
/// other byte stands for itself. Returns std::nullopt, never throws, when `q` is not of that form:
/// no surrounding quotes, a bare single quote inside, a backslash followed by anything else, or
/// "\x" without two hex digits.
std::optional<std::string> unquote(std::string_view q);

/// A whole message made safe for one terminal line: bytes 0x00..0x1F and 0x7F, and bytes that
/// are not part of well-formed UTF-8, become "\xNN"; everything else, backslashes included, is
/// kept (names inside the message are already quote()d, so their escapes are not doubled).
std::string escape_control(std::string_view s);

/// True when `s` is well-formed UTF-8 (RFC 3629, as escape_bytes judges it): what a JSON string
/// must hold.
bool is_utf8(std::string_view s);

/// The C library's description of errno value `e` (strerror) with its first letter lower-cased,
/// as it stands inside Tessel's messages: "no space left on device".
std::string errno_text(int e);

}  // namespace tessel::support
