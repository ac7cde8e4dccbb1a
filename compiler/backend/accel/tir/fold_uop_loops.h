// TIR pass fold_uop_loops: the loops inside each accel.uop_kernel -> the loop nest of one GEMM/ALU
// instruction.
#pragma once

#include "compiler/tir/function.h"
#include "isa/config.h"

namespace tessel::compiler::accel_tir {

/// Rewrites the body of every AttrStmt accel.uop_kernel (value 0 GEMM, 1 ALU) into the folded
/// form emit_instructions reads:
///   accel.uop_loop(iter_out, dst_factor_out, src_factor_out, wgt_factor_out)
///   accel.uop_loop(iter_in, dst_factor_in, src_factor_in, wgt_factor_in)
///   accel.gemm_uop(...) / accel.alu_uop(...)   (one per micro-op of the kernel)
/// The outermost loop of the kernel body becomes the outer level and, when that loop's body is
/// itself a loop, that one the inner level (a missing level has extent 1); every loop below them
/// is unrolled into the micro-op list. A micro-op index is an integer expression (a scratchpad
/// row) or a tir.access_ptr of a scratchpad buffer (its accel.sram_base row plus the offset; dst
/// must be an acc buffer, src inp for GEMM and acc for ALU, wgt a wgt buffer). Every index is
/// split with arith::detect_linear_equation into constant, non-negative coefficients of the two
/// loop variables and a base that may use enclosing (unrolled) variables; the levels, extents and
/// factors come from the loop-IR backend's fold (compiler/backend/accel/passes/fold_uop_loops.h).
/// The micro-ops' bases are kept as (simplified) expressions. Throws UserError naming the loop
/// when a loop has a non-constant extent or min, an index is not linear in it, its coefficient is
/// not a non-negative constant, or two micro-ops step an index by different factors per
/// iteration; UserError for anything but loops and GEMM (in a GEMM kernel) or ALU (in an ALU
/// kernel) micro-op calls inside a kernel, and for an access_ptr of the wrong scope.
tir::PrimFunc fold_uop_loops(const tir::PrimFunc& f, const isa::HwConfig& cfg);

}  // namespace tessel::compiler::accel_tir
