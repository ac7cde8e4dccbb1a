#include "support/checked.h"

#include "support/error.h"

namespace tessel::support {

int64_t checked_mul(int64_t a, int64_t b, std::string_view what) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw_user_error("{}: size overflows 64 bits ({} x {})", what, a, b);
  return r;
}

int64_t checked_add(int64_t a, int64_t b, std::string_view what) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw_user_error("{}: size overflows 64 bits ({} + {})", what, a, b);
  return r;
}

int64_t checked_product(const std::vector<int64_t>& dims, std::string_view what) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) throw_user_error("{}: negative dimension {}", what, d);
    n = checked_mul(n, d, what);
  }
  return n;
}

}  // namespace tessel::support
