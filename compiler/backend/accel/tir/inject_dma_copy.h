// TIR pass inject_dma_copy: the copy loop nests a schedule marks with pragma_dma_copy -> the
// fewest accel.dma_load / accel.dma_store instructions their layouts allow.
#pragma once

#include "compiler/tir/function.h"
#include "isa/config.h"

namespace tessel::compiler::accel_tir {

/// Replaces the body of every AttrStmt pragma_dma_copy (the attribute included) by one DMA in
/// its module's accel.coproc_scope (LOAD INP/WGT: load; LOAD ACC/ACC_8BIT: compute; STORE:
/// store). The body must be a perfect loop nest (loops from 0 with constant extents) around one
/// BufferStore, in one of these forms (scratchpad buffers compact, of the scope's element type):
///   inp[..] = x[..]                 x global int8               -> LOAD INP
///   wgt[..] = x[..]                 x global int8               -> LOAD WGT
///   acc[..] = x[..]                 x global int32              -> LOAD ACC
///   acc[..] = int32(x[..])          x global int8               -> LOAD ACC_8BIT
///   y[..]   = int8(acc[..])         y global int8               -> STORE OUT
/// A load's value may be select(cond, <value>, 0) (likely() around any term allowed), cond a
/// conjunction of bounds 0 <= v + c, v + c < n (or the same with <=, >, >=) on the row (y) or
/// column (x) loop v, c and n free of the nest's loop variables (they may use enclosing ones, a
/// tile index: the halo of a tiled convolution): the zero rows/columns outside the bounds become
/// the DMA's pads (4-bit fields, at most 15 each, checked here when constant and by the isa
/// verifier after unrolling otherwise; none on WGT loads). The sizes, pads and DRAM start are
/// then expressions that emit_instructions evaluates after unrolling the enclosing loops.
/// Both flat indices (Buffer::flat_index) are split with arith::detect_linear_equation over the
/// loop variables. The innermost loops must walk one scratchpad element (ScopeInfo rows x cols
/// values) contiguously on both sides. The loops outside it (extent-1 ones drop out) are grouped
/// from the innermost: a loop joins the group inside it when it steps both the scratchpad and
/// the DRAM index by that group's extent times the group's step (one contiguous run of elements:
/// the rows of a full-width window, the channel blocks of a whole image, the input-channel
/// blocks and kernel taps of a weight tile), neither is named by the pad condition and the run
/// stays within the 16-bit size field. The innermost group is the DMA's x (columns: consecutive
/// scratchpad rows, consecutive DRAM elements) when it walks both sides by one element, the next
/// group its y (scratchpad rows follow each other, DRAM rows x_stride elements apart, x_stride a
/// positive multiple of the element within the 16-bit field); the groups outside those (or a
/// group that can be neither, e.g. scratchpad rows in column-major order or DRAM rows walked
/// backwards) stay loops around the DMA, one instruction per iteration, their variables in its
/// addresses. Without a y group (a smaller last tile's window in a buffer of the full tile's
/// shape: its rows further apart than the run copied), a bound on a loop left around the DMA
/// decides per iteration whether the row is real or all padding: the DMA then has y_size =
/// select(bound, 1, 0) with y_pad_1 the rest (a pads-only LOAD that writes its pad row and
/// reads no DRAM). So a schedule marks a copy stage's outermost loop and gets the fewest, largest
/// DMAs its layouts allow. The bases (which may use enclosing loop variables) must be multiples
/// of the element size: the scratchpad row and the DRAM element of the memory type.
/// Throws UserError naming the loop (or the buffers) and the reason for every other form: a
/// body that is not one store, buffers of the wrong scopes or types, a non-constant loop, an
/// index not linear in the loops or with a non-constant step, inner loops that do not walk one
/// element, a condition that is not a bound of the DMA's row or column loop (a loop left around
/// the DMA cannot pad, except the row decision above), a constant pad over 15, pads on a WGT
/// load or a store.
tir::PrimFunc inject_dma_copy(const tir::PrimFunc& f, const isa::HwConfig& cfg);

}  // namespace tessel::compiler::accel_tir
