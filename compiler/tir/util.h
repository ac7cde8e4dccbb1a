// Small analyses and rewrites every TIR pass needs: post-order traversal, variable use,
// substitution, structural equality (with free-variable mapping, for before/after tests) and
// the buffers a statement reads and writes.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <vector>

#include "compiler/tir/functor.h"

namespace tessel::tir {

/// Calls `fn` on every expression node under `e` (children before parents).
void post_order_visit(const Expr& e, const std::function<void(const Expr&)>& fn);
/// Calls `fn` on every expression under `s`, in statement order.
void post_order_visit(const Stmt& s, const std::function<void(const Expr&)>& fn);

/// True when `e` (or `s`) refers to `v` anywhere (including buffer indices and loop bounds).
bool uses_var(const Expr& e, const Var& v);
bool uses_var(const Stmt& s, const Var& v);
/// True when `e` refers to any variable for which `pred` holds.
bool uses_var_if(const Expr& e, const std::function<bool(const VarNode*)>& pred);
bool uses_var_if(const Stmt& s, const std::function<bool(const VarNode*)>& pred);

/// Replaces free occurrences of the map's variables. Binders (For, Let, LetStmt) are not
/// renamed: substituting into a scope that rebinds a key variable is an InternalError.
Expr substitute(const Expr& e, const std::map<Var, Expr, VarLess>& vmap);
Stmt substitute(const Stmt& s, const std::map<Var, Expr, VarLess>& vmap);
/// Single-variable forms.
Expr substitute(const Expr& e, const Var& v, const Expr& value);
Stmt substitute(const Stmt& s, const Var& v, const Expr& value);

/// Structural equality: same kinds, types, immediates, operators and shapes; variables and
/// buffers are equal when they are bound at corresponding places (loop, let, allocate) or, for
/// free ones, when `map_free_vars` is true and they correspond consistently (else by identity).
bool structural_equal(const Expr& a, const Expr& b, bool map_free_vars = false);
bool structural_equal(const Stmt& a, const Stmt& b, bool map_free_vars = false);
/// Functions are equal when names, attributes, parameter types, buffers (dtype, shape, strides,
/// scope) and bodies match; parameters correspond by position.
bool structural_equal(const PrimFunc& a, const PrimFunc& b);

/// A chain of loops each of whose body is the next loop, and the first statement below them
/// that is not a loop.
struct PerfectNest {
  std::vector<const ForNode*> loops;  ///< outermost first
  Stmt body;
};
/// The perfect nest starting at `s` (no loops when `s` is not a For).
PerfectNest perfect_nest(const Stmt& s);
/// `loops` around `body`, each rebuilt with its variable, range, kind and thread tag.
Stmt wrap_loops(const std::vector<const ForNode*>& loops, const Stmt& body);

/// The buffers a statement reads (BufferLoad) and writes (BufferStore), by data variable. Calls
/// of access intrinsics (intrinsics.h) count according to their declared access.
struct BufferAccess {
  std::set<const VarNode*> reads;
  std::set<const VarNode*> writes;
};
BufferAccess buffer_access(const Stmt& s);

}  // namespace tessel::tir
