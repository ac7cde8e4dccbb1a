// Helpers of the te tests: the message of the UserError a callable throws.
#pragma once

#include <string>

#include "support/error.h"

namespace tessel::te::testing {

/// The what() of the UserError `f` throws, or "(no error)".
template <typename F>
std::string user_error_of(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace tessel::te::testing
