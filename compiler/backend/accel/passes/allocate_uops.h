// Loop-IR pass allocate_uops: the micro-op table and UOP buffer placement.
#pragma once

#include "compiler/backend/accel/context.h"
#include "compiler/backend/accel/loop_ir.h"

namespace tessel::compiler::accel {

/// Sets ctx.uop_table (kernels concatenated in id order) and ctx.kernel_dram_offset. When the
/// table fits the UOP buffer, prepends one LOAD UOP of the whole table (DRAM element
/// ctx.uop_base) and every kernel stays at its table offset; otherwise each kernel is loaded
/// (compute module, in order) right before a GEMM/ALU that needs it and is not resident,
/// allocating sequentially and wrapping to 0 (evicting overlapped kernels). Sets uop_bgn/uop_end.
/// Throws UserError naming the layer when one kernel exceeds the UOP buffer.
void allocate_uops(Stmt& root, LoweringContext& ctx);

}  // namespace tessel::compiler::accel
