// TIR pass inject_dma_copy: the copy loop nests a schedule marks with pragma_dma_copy -> one
// accel.dma_load / accel.dma_store each.
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
/// values) contiguously on both sides; at most two loops remain outside it, the inner one the
/// rectangle's x (columns: consecutive scratchpad rows, consecutive DRAM elements) and the outer
/// one its y (scratchpad rows follow each other, DRAM rows x_stride elements apart). The bases
/// (which may use enclosing loop variables) must be multiples of the element size: the
/// scratchpad row and the DRAM element of the memory type. Loops of extent 1 take any step.
/// Throws UserError naming the loop (or the buffers) and the reason for every other form: a
/// body that is not one store, buffers of the wrong scopes or types, a non-constant loop, an
/// index not linear in the loops or with a non-constant step, inner loops that do not walk one
/// element, more than two loops outside it, steps no DMA can take, a condition that is not such
/// a bound, a constant pad over 15, pads on a WGT load or a store.
tir::PrimFunc inject_dma_copy(const tir::PrimFunc& f, const isa::HwConfig& cfg);

}  // namespace tessel::compiler::accel_tir
