#include "compiler/tir/intrinsics.h"

#include "support/error.h"

namespace tessel::tir::intrin {

bool is_pure(std::string_view op) {
  return op == kLikely || op == kShiftRight || op == kShiftLeft || op == kBitwiseAnd || op == kAccessPtr;
}

Expr likely(Expr cond) {
  TESSEL_CHECK(cond.defined() && cond.dtype().is_bool(), "likely() of a non-bool");
  DataType t = cond.dtype();
  return call(t, std::string(kLikely), {std::move(cond)});
}

Expr access_ptr(const Buffer& buffer, Expr offset, Expr extent, int rw_mask) {
  TESSEL_CHECK(rw_mask >= 1 && rw_mask <= 3, "access_ptr rw_mask {}", rw_mask);
  return call(DataType::handle(), std::string(kAccessPtr),
              {buffer->data, std::move(offset), std::move(extent), int_imm(rw_mask)});
}

}  // namespace tessel::tir::intrin
