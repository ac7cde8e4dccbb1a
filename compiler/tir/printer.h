// Text form of TIR, stable across runs (golden tests compare it byte for byte). Variables print
// by name; distinct variables with the same name get suffixes _1, _2, ... in order of first
// appearance. Binary operations are fully parenthesised; immediates of type int32 print bare,
// others as type(value) ("int8(3)", "float32(0.5)").
//
//   func NAME(A: handle, n: int32) attrs {target: "accel"}
//     buffer A_buf = A: int8[16, 16] global
//     for i in range(0, 16) {            // serial; other kinds print their name: `parallel for`
//       A_buf[i, 0] = int8(1)
//     }
#pragma once

#include <string>

#include "compiler/tir/function.h"

namespace tessel::tir {

/// One expression on one line.
std::string to_text(const Expr& e);
/// A statement, indented by two spaces per level, ending with a newline.
std::string to_text(const Stmt& s);
std::string to_text(const PrimFunc& f);
/// Every function of the module, in order, separated by a blank line.
std::string to_text(const IRModule& m);

}  // namespace tessel::tir
