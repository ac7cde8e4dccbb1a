// Tessel's error types. Three kinds (see ../shared/DESIGN.md section 3):
//  - UserError: bad input from the user (model, config, instruction stream). The message names the
//    thing and the value, lower-case, with concrete numbers.
//  - InternalError: a broken invariant inside Tessel, i.e. a bug; the message says so.
//  - IoError: a file or device that could not be read or written.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace tessel {

/// Base class of every exception Tessel throws on purpose.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bad user input: malformed model, unsupported operator, impossible config, illegal stream.
class UserError : public Error {
 public:
  using Error::Error;
};

/// A Tessel bug (broken invariant). The message is prefixed with "internal error: ".
class InternalError : public Error {
 public:
  explicit InternalError(const std::string& what) : Error("internal error: " + what) {}
};

/// A file or device I/O failure.
class IoError : public Error {
 public:
  using Error::Error;
};

/// Throws UserError with a fmt-formatted message.
template <typename... Args>
[[noreturn]] void throw_user_error(fmt::format_string<Args...> f, Args&&... args) {
  throw UserError(fmt::format(f, std::forward<Args>(args)...));
}

/// Throws IoError with a fmt-formatted message.
template <typename... Args>
[[noreturn]] void throw_io_error(fmt::format_string<Args...> f, Args&&... args) {
  throw IoError(fmt::format(f, std::forward<Args>(args)...));
}

/// Throws InternalError with a fmt-formatted message.
template <typename... Args>
[[noreturn]] void throw_internal_error(fmt::format_string<Args...> f, Args&&... args) {
  throw InternalError(fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace tessel

/// Checks an internal invariant; on failure throws tessel::InternalError naming file and line.
#define TESSEL_CHECK(cond, ...)                                                             \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      throw ::tessel::InternalError(::fmt::format("{}:{}: check '{}' failed: {}", __FILE__, \
                                                  __LINE__, #cond,                          \
                                                  ::fmt::format(__VA_ARGS__)));             \
    }                                                                                       \
  } while (0)
