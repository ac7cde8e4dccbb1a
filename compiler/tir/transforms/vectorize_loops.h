// Pass: vectorize_loops (TVM's tir.transform.VectorizeLoop, Halide's VectorizeLoops). A loop
//   for i in [m, m + n) kind vectorized: body
// with a constant extent n becomes its body evaluated once on vectors of n lanes: i becomes
// ramp(m, 1, n), scalar operands meeting vector ones are broadcast, and the simplifier folds
// index arithmetic, so an index linear in i becomes a Ramp (a vector load or store of n lanes,
// stride = the coefficient of i) and an index not using i stays scalar (a broadcast load). A
// LetStmt/Let whose value depends on i is substituted when the value is linear in i (a Ramp or
// Broadcast, so indices built from it stay Ramps) and otherwise binds a new vector variable of
// n lanes. Ifs, lets, asserts
// and attributes whose conditions do not depend on i are kept around the vectorised statements.
// Inner loops are processed first. n = 1 gives the body with i replaced by m (simplified); n = 0
// a no-op.
//
// Legality. The pass vectorises only what it can prove equal to running the iterations in order;
// otherwise the loop is kept as a serial loop (kind kSerial, body unchanged) and, when the caller
// asks, a line "loop 'i' stays serial: <reason>" is reported. The reasons:
//  - an if (or assert) condition depends on i (no predication);
//  - a nested loop, or an allocation inside the body;
//  - a call that is not pure (intrinsics.h: side effects, e.g. DMA or GEMM), or an access_ptr;
//  - an index that depends on i but is not linear in it (after simplification not a Ramp or
//    Broadcast: i * i, floordiv(i, 2), an index loaded from memory);
//  - a let bound to a value that depends on i and cannot be vectorised (for one of the reasons
//    above);
//  - a store whose lanes may hit one element (no index is a Ramp with a provably non-zero
//    stride, e.g. an index that does not depend on i);
//  - a buffer the body writes that is also accessed at other indices, or through another view
//    (a dependence between iterations, e.g. B[i + 1] = B[i] + 1);
//  - an expression that is already a vector.
//
// Preconditions: a well-formed statement. Errors (UserError): a vectorized loop whose extent is
// not a constant after simplification, or has more than 65535 lanes
// ("vectorize: loop 'i' has non-constant extent n"). Copy-on-write: without vectorized loops the
// input handle is returned.
#pragma once

#include <string>
#include <vector>

#include "compiler/tir/function.h"

namespace tessel::tir::transforms {

/// `s` with its vectorized loops turned into vector statements (see above). When `serial` is
/// given, one line per loop kept serial is appended to it, in statement order (inner loops
/// first).
Stmt vectorize_loops(const Stmt& s, std::vector<std::string>* serial = nullptr);
/// The function with its body vectorised.
PrimFunc vectorize_loops(const PrimFunc& f, std::vector<std::string>* serial = nullptr);

}  // namespace tessel::tir::transforms
