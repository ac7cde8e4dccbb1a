// TIR pass inject_alu: the element-wise loop nests over acc buffers a schedule marks with
// pragma_alu -> accel.alu_uop micro-op kernels.
#pragma once

#include "compiler/tir/function.h"
#include "isa/config.h"

namespace tessel::compiler::accel_tir {

/// Replaces the body of every AttrStmt pragma_alu (the attribute included) by
/// accel.coproc_scope compute { accel.uop_kernel 1 { outer loops { accel.alu_uop(...) } } }.
/// The body must be a perfect loop nest (loops from 0 with constant extents) around one store
/// into an int32 acc-scope buffer, dst[idx] = a op v, where a is dst[idx] itself (in place, one
/// ALU instruction) or a load of another int32 acc-scope buffer (out of place: the ALU only
/// updates dst, so the kernel becomes three instructions over the same loops: MUL dst by 0, ADD
/// dst the vector a, then dst op v):
///   acc[idx] = a + v    (also v + a)         ALU ADD        acc[idx] = a - imm   ADD -imm
///   acc[idx] = a * v    (also v * a)         ALU MUL        max(a, v), min(a, v) MAX, MIN
///   acc[idx] = shift_right(a, v)             ALU SHR        shift_left(a, imm)   SHR -imm
/// v an int32 immediate (use_imm; it must fit the ALU's 16-bit signed immediate field) or a
/// load of an acc-scope int32 buffer (the vector form: src = its row). Both flat indices are
/// split with arith::detect_linear_equation over the loop variables: the innermost loops must
/// walk one acc element (BATCH x BLOCK_OUT values) contiguously on both sides, the rest stay as
/// the kernel's loops (fold_uop_loops folds them) with steps that are multiples of the element
/// size, and the bases must be multiples of it. Throws UserError naming the nest's outermost
/// loop and the reason: a body that is not one store, another buffer scope or type, a value of
/// another form, an immediate that does not fit, an index not
/// linear in the loops, or inner loops that do not walk one element.
tir::PrimFunc inject_alu(const tir::PrimFunc& f, const isa::HwConfig& cfg);

}  // namespace tessel::compiler::accel_tir
