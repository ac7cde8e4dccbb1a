// The TIR pass manager: a named, ordered list of PrimFunc -> PrimFunc passes, run in order with
// three instruments (LLVM's and TVM's pass instruments): a dump of the IR after a named pass or
// after every pass, the wall time of each pass, and the structural verifier (verifier.h) after
// each pass. A backend builds one manager for its pipeline (compiler/backend/accel/tir/
// accel_tir.h: accel_tir::tir_pipeline()); the compiler's pass registry lists its passes
// (compiler/driver/compile.h: pass_list(), `tessel compile --dump-ir list`).
//
// The names a dump may select: "input" (the function as given to run()), a pass name, or "all"
// (the input, then every pass). A pass name is unique within its manager.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/tir/function.h"

namespace tessel::tir {

/// Whether run() verifies after each pass when PassRunOptions::verify is not set: on in builds
/// without NDEBUG (debug builds), off in release builds; tests set PassRunOptions::verify.
#ifdef NDEBUG
inline constexpr bool kVerifyPassesByDefault = false;
#else
inline constexpr bool kVerifyPassesByDefault = true;
#endif

/// One PrimFunc -> PrimFunc pass.
struct FuncPass {
  std::string name;     ///< lower case letters, digits and '_'; unique within its manager
  std::string summary;  ///< one line: what the pass does (tessel compile --dump-ir list)
  std::function<PrimFunc(const PrimFunc&)> run;
};

/// What run() records, in pipeline order.
struct PassTrace {
  /// (name, tir::to_text of the function) for "input" and every pass the dump selects.
  std::vector<std::pair<std::string, std::string>> ir_after;
  /// (name, wall milliseconds) of every pass run: for reports, the only output that is not
  /// deterministic.
  std::vector<std::pair<std::string, double>> pass_ms;
};

/// Options of run().
struct PassRunOptions {
  /// "" (no dump), "input", a pass name, or "all". A name of a later stage the caller runs
  /// itself (see check_dump_after's `later`) dumps nothing here.
  std::string dump_after;
  /// tir::check_well_formed on the input and after every pass: an ill-formed result is an
  /// InternalError naming the pass that produced it.
  bool verify = kVerifyPassesByDefault;
};

class PassManager {
 public:
  /// The passes in order. InternalError when a name is empty, is not lower case letters, digits
  /// and '_', is repeated, or is one of the reserved dump names "input", "all" and "list"; or
  /// when a pass has no run function.
  explicit PassManager(std::vector<FuncPass> passes);

  const std::vector<FuncPass>& passes() const { return passes_; }
  /// The pass names in order.
  std::vector<std::string> names() const;
  bool contains(const std::string& name) const;

  /// UserError unless `dump_after` is "", "input", "all", a pass name or one of `later` (the
  /// stages the caller runs after this manager, e.g. a code generator); the message lists the
  /// valid names: "unknown pass 'x' for the ir dump (passes: input, a, b, ..., all)".
  void check_dump_after(const std::string& dump_after, const std::vector<std::string>& later = {}) const;

  /// Runs the passes on `f` in order; records into `*trace` when given (a dump name that is no
  /// stage here selects nothing: callers check it first with check_dump_after). Throws what the
  /// passes throw, and InternalError from the verifier (PassRunOptions::verify) naming the pass.
  PrimFunc run(const PrimFunc& f, const PassRunOptions& options = {}, PassTrace* trace = nullptr) const;

 private:
  std::vector<FuncPass> passes_;
};

/// Whether a dump selecting `dump_after` includes the stage `name` ("all" includes every one).
inline bool dump_selects(const std::string& dump_after, const std::string& name) {
  return dump_after == "all" || dump_after == name;
}

/// Runs `fn()` as the stage `name` after a manager's passes (a code generator, whose result is
/// not a PrimFunc) and appends its wall milliseconds to `trace->pass_ms` when trace is given.
/// Returns fn()'s result.
template <typename Fn>
auto run_timed_stage(const std::string& name, PassTrace* trace, Fn&& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  auto out = fn();
  if (trace) {
    trace->pass_ms.emplace_back(
        name, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return out;
}

}  // namespace tessel::tir
