// Overflow-checked size arithmetic for sizes that come from user input (ONNX shapes and
// attributes, executable headers, configurations, instruction fields). Every product or sum of
// such sizes goes through these, so an overflow is a named UserError instead of a wrapped value
// that later allocates too little or too much.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace tessel::support {

/// a * b. Throws UserError "<what>: size overflows 64 bits (a x b)" on signed overflow.
int64_t checked_mul(int64_t a, int64_t b, std::string_view what);
/// a + b. Throws UserError "<what>: size overflows 64 bits (a + b)" on signed overflow.
int64_t checked_add(int64_t a, int64_t b, std::string_view what);
/// Product of `dims` (1 for an empty list). Throws UserError naming `what` for a negative
/// dimension or when the product overflows int64.
int64_t checked_product(const std::vector<int64_t>& dims, std::string_view what);

}  // namespace tessel::support
