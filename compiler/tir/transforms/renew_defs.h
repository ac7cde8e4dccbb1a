// A helper of the passes that duplicate statements (loop_partition, unroll_loops,
// inject_virtual_threads): every variable bound inside a statement gets a fresh copy, so the
// duplicate keeps the function single-assignment (TVM's RenewDefs).
#pragma once

#include "compiler/tir/stmt.h"

namespace tessel::tir::transforms {

/// `s` with every binder inside it renamed: loop variables, Let/LetStmt variables and the data
/// variables of allocated buffers (each Allocate gets a new Buffer over the new data variable;
/// other Buffer views of that data, and access_ptr arguments, follow it). Free variables are
/// kept. The new variables have the old names (the printer adds suffixes).
Stmt renew_defs(const Stmt& s);

}  // namespace tessel::tir::transforms
