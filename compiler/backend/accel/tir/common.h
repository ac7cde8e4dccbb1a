// Shared helpers of the accelerator's TIR emission passes (accel_tir.h): what the TIR contract
// names (the attribute allocate_scratchpads leaves, the buffers behind tir.access_ptr calls) and
// small evaluation helpers. Internal to tessel_accel_tir.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "compiler/tir/function.h"
#include "compiler/tir/stmt.h"

namespace tessel::compiler::accel_tir {

/// AttrStmt key that allocate_scratchpads puts directly inside every scratchpad Allocate:
/// node = the buffer's data variable, value = its first SRAM row (element) in the scratchpad.
inline constexpr std::string_view kSramBase = "accel.sram_base";

/// A scratchpad buffer and where it lives.
struct SramPlacement {
  tir::Buffer buffer;
  int64_t row = 0;   ///< first row (SRAM element) of the buffer
  int64_t rows = 0;  ///< rows it occupies
};

/// Every buffer a statement or function can name through its data variable: the function's
/// buffer_map and every Allocate of the body, keyed by the data variable's node.
std::map<const tir::VarNode*, tir::Buffer> buffers_by_data(const tir::PrimFunc& f);

/// The kSramBase attributes of `s`, keyed by the buffer's data variable node. InternalError when
/// an attribute is not directly inside the Allocate of its buffer.
std::map<const tir::VarNode*, SramPlacement> sram_placements(const tir::Stmt& s);

/// A decoded tir.access_ptr(data, offset, extent, rw_mask) call.
struct AccessPtr {
  const tir::VarNode* data = nullptr;
  tir::Expr offset, extent;
  int rw_mask = 0;
};
/// `e` as an access_ptr call, or nullopt when it is not one.
std::optional<AccessPtr> as_access_ptr(const tir::Expr& e);

/// The call of an Evaluate statement, or nullptr.
const tir::CallNode* evaluated_call(const tir::Stmt& s);

/// Rows (SRAM elements) a scratchpad buffer of `buf`'s shape and dtype needs under `cfg`:
/// ceil(elements * dtype bytes / element bytes of the scope). UserError naming the buffer when
/// its shape is not constant.
int64_t scratchpad_rows(const tir::Buffer& buf, int64_t elem_bytes);

/// Bytes of a buffer with a constant shape; UserError naming the buffer otherwise.
int64_t buffer_bytes(const tir::Buffer& buf);

}  // namespace tessel::compiler::accel_tir
