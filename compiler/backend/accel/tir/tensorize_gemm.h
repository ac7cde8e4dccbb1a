// TIR pass tensorize_gemm: the GEMM and accumulator-init loop nests of a schedule -> accel.gemm_uop
// micro-op kernels.
#pragma once

#include "compiler/tir/function.h"
#include "isa/config.h"

namespace tessel::compiler::accel_tir {

/// Matches, by structure, every perfect loop nest (loops from 0 with constant extents) whose
/// innermost statement stores into an acc-scope buffer, outside pragma_dma_copy, pragma_alu,
/// accel.uop_kernel and accel.coproc_scope attributes, against the declared GEMM intrinsic
/// (B = BATCH, BI = BLOCK_IN, BO = BLOCK_OUT of `cfg`):
///
///   for ... (outer loops, any number)
///     for b in [0, B), o in [0, BO), i in [0, BI)   (the three innermost loops, any order)
///       acc[r.., b, o] = acc[r.., b, o] + int32(inp[s.., b, i]) * int32(wgt[w.., o, i])
///
/// (either operand order of + and *) with acc int32 [.., B, BO], inp int8 [.., B, BI] and wgt
/// int8 [.., BO, BI], all compact; the leading indices r.., s.., w.. may use the outer loops
/// and enclosing variables but not b, o, i. The init nest
///
///   for ... for b in [0, B), o in [0, BO)   acc[r.., b, o] = 0
///
/// is the reset form. A match becomes accel.coproc_scope compute { accel.uop_kernel 0 { the
/// outer loops { accel.gemm_uop(reset, acc row, inp row, wgt row) } } }, each row the leading
/// indices flattened over the leading shape, as tir.access_ptr of its buffer (reset: inp and
/// wgt 0); fold_uop_loops folds the outer loops later. Throws UserError naming the nest's
/// outermost loop (or the acc buffer) and what differs from the pattern: a non-constant loop,
/// a value of another form, a buffer of another scope, type or trailing shape, trailing indices
/// that are not the b, o, i loop variables, a leading index using them, or inner loops with
/// other extents.
tir::PrimFunc tensorize_gemm(const tir::PrimFunc& f, const isa::HwConfig& cfg);

}  // namespace tessel::compiler::accel_tir
