// Loop-IR pass inject_bias: accumulator initialisation and bias.
#pragma once

#include "compiler/backend/accel/context.h"
#include "compiler/backend/accel/loop_ir.h"

namespace tessel::compiler::accel {

/// Prepends to stage `compute0` of every tile: LOAD ACC of the tile's per-channel constant rows
/// (if the plan has any) and either LOAD ACC of the border zero-point correction per output block
/// (plan.acc_init_tensor, only for a tile with an output window touching the padding:
/// tile_touches_padding; every tile with plan.init_every_tile) or a GEMM reset of the accumulator tile; appends to stage `alu` an ALU
/// ADD of the bias row (plan.bias_row >= 0; it holds the constant part of the zero-point
/// correction). Throws InternalError if a stage is missing.
void inject_bias(Stmt& root, LoweringContext& ctx);

}  // namespace tessel::compiler::accel
