// Graph pass 'layout_nchwnc' (see compiler/passes/pass.h for the pipeline).
//
// Layout packing for accelerator layers: each accelerator qconv2d reads its input in NCHWnc
// with blocks (BATCH, BLOCK_IN), each accelerator qadd reads both operands in NCHWnc with blocks
// (BATCH, BLOCK_OUT) (they are loaded into the accumulator), and both write their output in
// NCHWnc with blocks (BATCH, BLOCK_OUT); pack_nchwnc / unpack_nchwnc nodes are inserted around
// them (a qadd's packs are named "<node>_pack0" and "_pack1"), then every unpack -> pack pair with
// matching blocks between consecutive accelerator layers is removed (the packed tensor feeds the
// next layer directly).
#pragma once

#include "compiler/ir/graph.h"
#include "compiler/passes/pass.h"

namespace tessel::compiler::passes {

/// Runs the 'layout_nchwnc' pass on `g` in place.
void layout_nchwnc(ir::Graph& g, PassContext& ctx);

}  // namespace tessel::compiler::passes
