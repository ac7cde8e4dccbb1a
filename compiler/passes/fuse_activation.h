// Graph pass 'fuse_activation' (see compiler/passes/pass.h for the pipeline).
//
// Fuses activation clamps into their producer in the integer domain: qconv2d followed by qclip
// (the qconv2d output's only consumer, not a graph output) -> the qclip bounds are intersected
// with the qconv2d's requant clip_lo/clip_hi (attrs["requant"], created as {clip_lo, clip_hi}
// when the node has none yet: the requant pass, which runs next, derives the rest for those
// bounds); qadd followed by qclip with lo = the output zero point and hi = 127 -> qadd with
// relu = true.
#pragma once

#include "compiler/ir/graph.h"
#include "compiler/passes/pass.h"

namespace tessel::compiler::passes {

/// Runs the 'fuse_activation' pass on `g` in place.
void fuse_activation(ir::Graph& g, PassContext& ctx);

}  // namespace tessel::compiler::passes
