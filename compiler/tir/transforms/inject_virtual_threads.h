// Pass: inject_virtual_threads (TVM's tir.transform.InjectVirtualThread). A virtual thread is
// written either as a loop `for vt in [m, m + n) kind virtual-thread: body` (an AttrStmt
// ("virtual_thread", vt, n) directly inside it, for the same variable, is dropped), or as TVM's
// AttrStmt ("virtual_thread", vt, n) whose node is the variable it introduces (values 0..n-1).
// n must be a constant. The pass replaces it by the threads' statements interleaved:
//
//  1. Dependence on the thread. The set T starts with vt and grows to a fixpoint: a let or loop
//     variable whose value or bounds use T; a buffer written by a statement that uses T (in its
//     value, indices, enclosing conditions or loop bounds, or by reading a buffer of T); a
//     buffer written by an intrinsic call (its tir.access_ptr arguments with the write bit) whose
//     arguments use T. One rule keeps "run once" sound: a buffer that statements outside T both
//     write and read (e.g. B[0] = B[0] + 1, which n threads would apply n times) joins T, so
//     what is kept once only reads what it does not write (running it again changes nothing).
//     A statement
//     "depends on the thread" when it uses T, or calls an intrinsic that is not pure and has no
//     access_ptr argument (its effect is unknown, so every thread runs it).
//  2. Push-down. Statements that do not depend on the thread are kept once. A sequence, a loop
//     or an if, let, assert or attribute whose own expressions do not use T is kept and the
//     thread is pushed into its body, so `for k: {A(vt); B}` becomes
//     `for k: {A(0); A(1); ...; B}`. Any other dependent statement (a store, a call, a loop
//     whose bounds use T, ...) becomes n copies, thread 0 first, with vt replaced by m + t; copies
//     after the first get fresh binders. Consecutive statements of a sequence that each become
//     copies are copied as one run, thread by thread: {A(vt); B(vt)} becomes
//     {A(0); B(0); A(1); B(1)} (the threads are independent, so each thread's statements only
//     keep their order; on the accelerator, thread 0's loads, compute and store can then proceed
//     while thread 1's are still queued). A let whose value uses T becomes n lets, one per thread.
//     An attribute whose key is one of VirtualThreadOptions::opaque_attrs is a unit: when it
//     depends on the thread it becomes n copies, the thread is not pushed into its body (the
//     accelerator's micro-op kernels: each is one instruction, and a thread's kernel must stay
//     a kernel of its own for the threads' instructions to interleave).
//  3. Replication. An Allocate inside the virtual thread whose buffer is in T becomes one buffer
//     with an extra outer dimension of n (thread t uses [t, ...]; explicit strides get the span
//     of one replica as the outer stride); accesses through a single flat index and
//     access_ptr offsets get t times that stride added. Other allocations stay shared.
// The result is simplified (transforms/simplify.h). Virtual threads nested inside one another
// are injected innermost first.
//
// Preconditions (as for TVM's pass; not checked): the threads are independent: no thread reads
// an element another thread writes (allocations inside the virtual thread are per thread, so
// they never count), and what a statement that does not depend on the thread writes is read
// only after it, in the same iteration of the loops around it (a thread must not read a value
// an earlier thread's run of it left behind). Under them the result leaves memory as running
// the virtual-thread loop serially does.
//
// Errors (UserError): a non-constant extent ("inject_virtual_threads: virtual thread 'vt' has
// non-constant extent n"); a virtual-thread loop and its attribute disagreeing on the extent.
#pragma once

#include <set>
#include <string>

#include "compiler/tir/arith/analyzer.h"
#include "compiler/tir/function.h"

namespace tessel::tir::transforms {

/// What a caller (a backend's pipeline) adds to the pass.
struct VirtualThreadOptions {
  /// Attribute keys whose statements are units (header step 2), e.g. "accel.coproc_scope".
  std::set<std::string> opaque_attrs;
};

/// `s` with every virtual thread injected, under the facts of `analyzer` (left as it was).
Stmt inject_virtual_threads(const Stmt& s, arith::Analyzer& analyzer, const VirtualThreadOptions& opts);
/// With no opaque attributes.
Stmt inject_virtual_threads(const Stmt& s, arith::Analyzer& analyzer);
/// Statement form with a fresh Analyzer.
Stmt inject_virtual_threads(const Stmt& s);
/// The function with its virtual threads injected.
PrimFunc inject_virtual_threads(const PrimFunc& f, const VirtualThreadOptions& opts);
PrimFunc inject_virtual_threads(const PrimFunc& f);

}  // namespace tessel::tir::transforms
