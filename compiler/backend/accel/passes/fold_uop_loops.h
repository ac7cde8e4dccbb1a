// Loop-IR pass fold_uop_loops: loops around micro-op bodies -> one instruction each.
#pragma once

#include "compiler/backend/accel/context.h"
#include "compiler/backend/accel/loop_ir.h"

namespace tessel::compiler::accel {

/// Replaces every `for a { for b { body } }` (or a single loop, or a bare body) by one GEMM/ALU
/// kInsn: iter_out = extent of a, iter_in = extent of b, the factors = the coefficients of a and
/// b in the micro-ops' dst/src/wgt (0 for a loop of one iteration), and the micro-ops' bases as a
/// kernel interned in ctx.kernels (a new table; identical kernels share an id). Throws
/// InternalError if the micro-ops of a body disagree on a factor or a loop cannot be folded.
void fold_uop_loops(Stmt& root, LoweringContext& ctx);

}  // namespace tessel::compiler::accel
