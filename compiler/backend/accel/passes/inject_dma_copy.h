// Loop-IR pass inject_dma_copy: caches each tile into the scratchpads with DMA copies.
#pragma once

#include "compiler/backend/accel/context.h"
#include "compiler/backend/accel/loop_ir.h"

namespace tessel::compiler::accel {

/// Rewrites every kTile (holding one kCompute per input-channel chunk) into the stages
/// `load<c>` (one LOAD INP per input block of the chunk: the 2-D strided input window, the conv
/// padding as DMA zero pads on every side; LOAD WGT of the chunk's non-zero weight tiles, merged
/// over runs contiguous in DRAM and WGT), `compute<c>` (the kCompute), an empty `alu` stage and
/// `store` (one STORE OUT per output block: th rows of tw elements, DRAM stride OW). SRAM indices
/// are relative to the tile's virtual thread. Throws InternalError if the root holds anything but
/// tiles or a field exceeds 32 bits.
void inject_dma_copy(Stmt& root, LoweringContext& ctx);

}  // namespace tessel::compiler::accel
