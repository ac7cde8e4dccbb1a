// Queries shared by the loop-IR transforms (not a pass of its own).
#pragma once

#include "compiler/tir/stmt.h"

namespace tessel::tir::transforms {

/// True when `e` is a tir.access_ptr call with its four arguments (data, offset, extent, mask).
bool is_access_ptr(const Expr& e);

/// True when `s` holds a call whose effect on memory is unknown: not pure (intrinsics.h) and
/// without an access_ptr argument naming the regions it touches. Passes that move or split code
/// treat such a statement as touching everything.
bool has_opaque_call(const Stmt& s);

}  // namespace tessel::tir::transforms
