// The accelerator backend's loop-IR passes, named and ordered in ONE list (pass_pipeline()).
// lower_conv2d() builds the initial IR from the schedule (dump name "schedule"), runs the list in
// order (optionally dumping the IR after a named pass or after "all"), and collects the
// instruction leaves into the Program.
//
//   (each pass: passes/<name>.h + .cc)
//   inject_dma_copy        tile -> stages: LOAD INP per input block (2-D strided window, the conv
//                          padding as DMA zero pads on every side), LOAD WGT, compute, STORE OUT
//   tensorize_gemm         compute -> loops y, x around a GEMM micro-op body over (oc block,
//                          input block, ky, kx), block-sparse tiles skipped
//   inject_bias            accumulator initialisation: LOAD ACC of the per-channel constant rows;
//                          in_zero_point != 0: LOAD ACC of the bias + zero-point correction tensor;
//                          otherwise GEMM reset and, if any bias is non-zero, ALU ADD of the bias
//                          row
//   inject_alu_requant     the Requant chain of runtime/qnn.h as ALU ops (ADD/SHR rounding shifts,
//                          MUL, ADD zero point, MAX/MIN clip); immediates when they fit 16 bits
//                          signed, per-channel ACC rows otherwise
//   fold_uop_loops         the two loops around each micro-op body -> iter_out/iter_in and factors;
//                          the body -> a micro-op kernel (identical kernels are shared)
//   inject_virtual_threads thread-relative SRAM indices -> absolute (thread t owns the t-th
//                          1/virtual_threads of every scratchpad); the stages of consecutive tiles
//                          of different threads are interleaved
//   allocate_uops          the micro-op table in DRAM (kernels concatenated) and the UOP buffer:
//                          one LOAD UOP of the whole table first when it fits the buffer,
//                          otherwise each kernel loaded before its first use (compute module, in
//                          order; evicted ones reloaded)
//   insert_dep_tokens      dependency tokens from SRAM regions (dep_tokens.h) + the ending
#pragma once

#include <vector>

#include "compiler/backend/accel/context.h"
#include "compiler/backend/accel/loop_ir.h"

namespace tessel::compiler::accel {

/// One named pass.
struct Pass {
  const char* name;
  const char* summary;  ///< one line: what the pass does (tessel compile --dump-ir list)
  void (*run)(Stmt& root, LoweringContext& ctx);
};

/// The ordered pass list (names as in the header comment).
const std::vector<Pass>& pass_pipeline();

/// The initial IR: a seq of one kTile per schedule tile, each holding one kCompute per chunk.
Stmt build_initial_ir(const LoweringContext& ctx);

}  // namespace tessel::compiler::accel
