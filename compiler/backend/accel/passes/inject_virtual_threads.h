// Loop-IR pass inject_virtual_threads: SRAM halves and interleaving.
#pragma once

#include "compiler/backend/accel/context.h"
#include "compiler/backend/accel/loop_ir.h"

namespace tessel::compiler::accel {

/// Makes SRAM indices absolute: thread t's LOAD/STORE sram_base and the micro-op kernels of its
/// GEMM/ALU move by t * (INP, WGT or ACC region of the schedule); kernels are re-interned into a
/// new table. Then groups consecutive tiles by virtual_threads and interleaves their stages
/// (stage k of every tile of the group, in thread order) under one kSeq per group.
void inject_virtual_threads(Stmt& root, LoweringContext& ctx);

}  // namespace tessel::compiler::accel
