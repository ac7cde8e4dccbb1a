// Queries shared by the loop-IR transforms (not a pass of its own).
#pragma once

#include <optional>
#include <utility>

#include "compiler/tir/arith/analyzer.h"
#include "compiler/tir/stmt.h"

namespace tessel::tir::transforms {

/// True when `e` is a tir.access_ptr call with its four arguments (data, offset, extent, mask).
bool is_access_ptr(const Expr& e);

/// True when `s` holds a call whose effect on memory is unknown: not pure (intrinsics.h) and
/// without an access_ptr argument naming the regions it touches. Passes that move or split code
/// treat such a statement as touching everything.
bool has_opaque_call(const Stmt& s);

/// Runs `f` with `v` bound in `an` to `fact` (a Range or an arith::ConstIntBound) and returns what
/// `f` returns; afterwards (also when `f` throws) `v` has the fact it had before, or none.
template <typename Fact, typename F>
auto with_fact(arith::Analyzer& an, const Var& v, const Fact& fact, F&& f) {
  struct Restore {
    arith::Analyzer& an;
    const Var& v;
    std::optional<arith::ConstIntBound> saved;
    ~Restore() {
      if (saved) an.bind(v, *saved);
      else an.unbind(v);
    }
  } restore{an, v, an.fact(v)};
  an.bind(v, fact);
  return std::forward<F>(f)();
}

}  // namespace tessel::tir::transforms
