// Structural verifier for TIR (TVM's VerifyWellFormed/VerifySSA/VerifyMemory in one):
//  - every variable is defined before use: a parameter, a buffer's data or shape variable from
//    the buffer map, a loop variable, a Let/LetStmt variable or an Allocate's data variable;
//  - no variable is bound twice (single assignment), and a loop/let variable is not a parameter;
//  - loop bounds have the loop variable's type; vectorized and unrolled loops have constant
//    extents; thread-binding loops have a thread tag, and only they do;
//  - every BufferLoad/BufferStore names a buffer whose data variable is in scope, with one index
//    per dimension (or one flat index), integer indices, and a stored value of the buffer's type
//    with the indices' lanes;
//  - conditions (If, Assert, Select) are bool;
//  - Allocate has a constant, positive shape.
// Expression typing is already enforced by the constructors (expr.h), so the verifier checks the
// scoping and the rules above.
#pragma once

#include <string>
#include <vector>

#include "compiler/tir/function.h"

namespace tessel::tir {

/// Every violation found, each one line naming the variable, buffer or loop; empty when well
/// formed.
std::vector<std::string> verify(const PrimFunc& f);
/// Throws InternalError listing the violations (`pass` names the pass that produced `f`).
void check_well_formed(const PrimFunc& f, const std::string& pass);

}  // namespace tessel::tir
