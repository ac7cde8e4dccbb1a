// TIR pass allocate_scratchpads: scratchpad Allocate nodes -> SRAM row offsets.
#pragma once

#include "compiler/tir/function.h"
#include "isa/config.h"

namespace tessel::compiler::accel_tir {

/// Gives every Allocate of scope inp, wgt, acc or uop its first SRAM row and records it as an
/// AttrStmt accel.sram_base (node = the buffer's data variable, value = the row) directly inside
/// the Allocate. A buffer needs ceil(bytes / element bytes of the scope) rows (ScopeInfo). Rows
/// are handed out per scope like a stack in program order: a buffer gets the rows after every
/// enclosing allocation of its scope, so sibling allocations share rows and nested ones do not.
/// Allocations of other scopes are left alone. Throws UserError when a buffer's shape is not
/// constant, or when it does not fit, naming the scope, the buffer, the rows it needs and the
/// rows available ("scratchpad local.inp_buffer over capacity: buffer 'a_buf' needs 300 rows at row 1900,
/// 148 of 2048 rows available").
tir::PrimFunc allocate_scratchpads(const tir::PrimFunc& f, const isa::HwConfig& cfg);

}  // namespace tessel::compiler::accel_tir
