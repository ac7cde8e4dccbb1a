// TIR pass emit_instructions: a folded accelerator PrimFunc -> the Program.
#pragma once

#include <vector>

#include "compiler/backend/accel/tir/accel_tir.h"
#include "compiler/tir/function.h"
#include "isa/config.h"
#include "isa/program.h"

namespace tessel::compiler::accel_tir {

/// Walks the body of `f` (after allocate_scratchpads and fold_uop_loops) in program order:
///  - every loop (serial or unrolled) with a constant range is unrolled, its variable bound to
///    each value; LetStmt values and IfThenElse conditions must be constants after that;
///  - accel.dma_load -> one LOAD: sram_base = the scratchpad buffer's accel.sram_base row plus
///    the access_ptr offset, dram_base = the DRAM buffer's first element (its segment and
///    SegmentSpec offset, in elements of SegmentSpec::mem_type) plus the access_ptr offset; sizes,
///    stride and pads from the arguments; accel.dma_store -> one STORE (OUT);
///  - each accel.uop_kernel -> its micro-ops, interned (identical kernels share rows), and one
///    GEMM or ALU instruction with the kernel's loop nest;
///  - accel.dep_push(from, to) sets the push flag of the last instruction of module `from`,
///    accel.dep_pop(from, to) the pop flag of the next instruction of module `to`; a no-op of the
///    module carries a token where no instruction can (no instruction yet, a flag already set,
///    a pop still pending when a push is asked for, a pop at the end).
/// Then the micro-op table goes into the UOP buffer by accel::UopPlacer (compiler/backend/accel/
/// uop_table.h; after the rows of any uop-scope allocation); when the function has no
/// dep_push/dep_pop accel::insert_dependency_tokens (dep_tokens.h) computes the tokens and the
/// VTA-style ending, otherwise
/// the written tokens are kept and FINISH is appended. The Program (segments as
/// build_accel_program() says, then the "uop" segment) must pass isa::verify.
/// Throws UserError naming the loop for a non-constant loop range, naming the statement for
/// anything the accelerator cannot run (buffer stores, other calls, micro-op calls outside a
/// kernel, an accelerator statement outside accel.coproc_scope or in the scope of another
/// module), for a DMA whose scopes or memory type disagree with its buffers or whose rectangle
/// leaves its buffer, for a LOAD of no columns (x_size 0) with pads (a no-op: its zeros would
/// never be written), for a missing SegmentSpec, and with the verifier's message.
/// `explicit_tokens` (may be null) tells which token mode was used.
isa::Program emit_instructions(const tir::PrimFunc& f, const isa::HwConfig& cfg,
                               const std::vector<SegmentSpec>& segments, bool* explicit_tokens = nullptr);

}  // namespace tessel::compiler::accel_tir
