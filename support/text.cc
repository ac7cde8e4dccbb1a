#include "support/text.h"

#include <cctype>
#include <cstdint>
#include <cstring>

namespace tessel::support {
namespace {

// Length of the well-formed UTF-8 sequence starting at s[i] (2..4), or 0 if there is none.
size_t utf8_sequence(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t c = b(i);
  size_t len = 0;
  uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte (RFC 3629, table 3-7)
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (size_t k = 2; k < len; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  return len;
}

void append_hex(std::string& out, uint8_t c) {
  static const char* kDigits = "0123456789abcdef";
  out += "\\x";
  out += kDigits[c >> 4];
  out += kDigits[c & 15];
}

std::string escape_impl(std::string_view s, bool escape_quote, bool escape_backslash = true) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const uint8_t c = static_cast<uint8_t>(s[i]);
    if (c < 0x20 || c == 0x7F) {
      append_hex(out, c);
      ++i;
    } else if (c == '\\' && escape_backslash) {
      out += "\\\\";
      ++i;
    } else if (c == '\'' && escape_quote) {
      out += "\\'";
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else if (const size_t len = utf8_sequence(s, i); len > 0) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      append_hex(out, c);
      ++i;
    }
  }
  return out;
}

}  // namespace

std::string escape_bytes(std::string_view s) { return escape_impl(s, false); }

std::string quote(std::string_view s) { return "'" + escape_impl(s, true) + "'"; }

std::string escape_control(std::string_view s) { return escape_impl(s, false, false); }

std::optional<std::string> unquote(std::string_view q) {
  if (q.size() < 2 || q.front() != '\'' || q.back() != '\'') return std::nullopt;
  const std::string_view body = q.substr(1, q.size() - 2);
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c == '\'') return std::nullopt;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (i + 1 >= body.size()) return std::nullopt;
    const char e = body[++i];
    if (e == '\\' || e == '\'') {
      out += e;
    } else if (e == 'x' && i + 2 < body.size() && hex(body[i + 1]) >= 0 && hex(body[i + 2]) >= 0) {
      out += static_cast<char>(hex(body[i + 1]) * 16 + hex(body[i + 2]));
      i += 2;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

bool is_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<uint8_t>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t len = utf8_sequence(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string errno_text(int e) {
  std::string s = std::strerror(e);
  if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

}  // namespace tessel::support
