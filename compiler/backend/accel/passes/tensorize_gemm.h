// Loop-IR pass tensorize_gemm: the conv of a tile chunk as a GEMM micro-op body.
#pragma once

#include "compiler/backend/accel/context.h"
#include "compiler/backend/accel/loop_ir.h"

namespace tessel::compiler::accel {

/// Replaces each kCompute by `for y in [0, th) { for x in [0, tw) { GEMM body } }` where the body
/// has one micro-op per (output block, non-zero input block of the chunk, ky, kx):
/// acc[o*acc_tile_stride + tw*y + x] += inp[slot*slot_stride + ky*win_w + kx + sh*win_w*y + sw*x]
/// * wgt[wbase(o) + block*KH*KW + ky*KW + kx]. Chunks whose weight tiles are all structurally
/// zero produce nothing.
void tensorize_gemm(Stmt& root, LoweringContext& ctx);

}  // namespace tessel::compiler::accel
