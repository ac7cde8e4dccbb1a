// The intrinsics TIR itself knows (target intrinsics live in compiler/target). A CallNode names
// its intrinsic by `op`; the passes ask this table whether a call is pure and which buffers it
// reads or writes. Unknown ops are treated as opaque calls with side effects.
#pragma once

#include <string_view>

#include "compiler/tir/expr.h"

namespace tessel::tir::intrin {

/// likely(cond): bool; a hint that `cond` is almost always true (loop_partition splits loops at
/// its boundaries).
inline constexpr std::string_view kLikely = "tir.likely";
/// access_ptr(data, offset, extent, rw_mask): handle; a pointer to `extent` elements of the
/// buffer whose data variable is `data`, starting at element `offset`; rw_mask bit 0 = read,
/// bit 1 = write (TVM's tvm_access_ptr).
inline constexpr std::string_view kAccessPtr = "tir.access_ptr";
/// shift_right(a, b), shift_left(a, b): arithmetic shifts of integers (b >= 0).
inline constexpr std::string_view kShiftRight = "tir.shift_right";
inline constexpr std::string_view kShiftLeft = "tir.shift_left";
/// bitwise_and(a, b).
inline constexpr std::string_view kBitwiseAnd = "tir.bitwise_and";

/// True when the call has no side effect and its value depends only on its arguments.
bool is_pure(std::string_view op);

/// likely(cond).
Expr likely(Expr cond);
/// access_ptr(buffer, offset, extent, rw_mask) with rw_mask 1 (read), 2 (write) or 3.
Expr access_ptr(const Buffer& buffer, Expr offset, Expr extent, int rw_mask);

}  // namespace tessel::tir::intrin
