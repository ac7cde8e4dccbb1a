// Loop-IR pass inject_alu_requant: the Requant chain as ALU micro-op bodies.
#pragma once

#include "compiler/backend/accel/context.h"
#include "compiler/backend/accel/loop_ir.h"

namespace tessel::compiler::accel {

/// Appends to stage `alu` of every tile one ALU body per step of plan.requant, over
/// `for o in [0, obn) { for p in [0, th*tw) }` with dst = o*acc_tile_stride + p and, for
/// vector steps, src = constant row of block o. Throws InternalError if a stage is missing.
void inject_alu_requant(Stmt& root, LoweringContext& ctx);

}  // namespace tessel::compiler::accel
