// Shared pieces of Tessel's fuzz targets (fuzz/*.cc). Each target defines
// LLVMFuzzerTestOneInput(data, size) and is linked either with libFuzzer (-fsanitize=fuzzer,
// clang, TESSEL_FUZZ=ON) or with replay_main.cc (any compiler), which feeds it the files of the
// seed corpus and of the regression inputs.
//
// The oracle of every target is Tessel's error contract (../shared/DESIGN.md section 3): a bad
// input ends as a tessel::UserError (SimError included) or tessel::IoError. Anything else is a
// finding and aborts the process, so that libFuzzer records the input: a crash or sanitizer report,
// an InternalError (an invariant broken by user input is a bug), a library exception escaping
// (std::out_of_range, std::bad_alloc, nlohmann::json::exception, ...), or a property of the target
// (a round trip that does not give back the same bytes) that does not hold.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "isa/program.h"

namespace tessel::fuzz {

/// Prints "fuzz target <target>: <what>" to stderr and aborts (libFuzzer then saves the input).
[[noreturn]] void fail(std::string_view target, std::string_view what);

/// Runs `fn()`. Returns true when it returned normally, false when it threw tessel::UserError or
/// tessel::IoError (the expected outcome of a bad input). Any other exception, InternalError
/// included, is a finding: fail() names its type and message.
template <typename Fn>
bool expect_clean(std::string_view target, Fn&& fn);

/// A path named `name` (a plain file name, no '/') inside this process's scratch directory
/// ($TMPDIR or /tmp, then "tessel-fuzz-<pid>"), created on first use. For APIs that take a path.
std::string scratch_path(std::string_view name);

/// Writes `size` bytes at `data` to `path`, replacing the file; fail()s if that is impossible
/// (the scratch directory is the harness's own, so an I/O error there is not the input's fault).
void write_scratch(std::string_view target, const std::string& path, const uint8_t* data,
                   size_t size);

/// Bounds on what one fuzz execution may simulate, so that each input runs in milliseconds.
struct RunBounds {
  size_t max_insns = 4096;                ///< instructions in the stream
  uint64_t max_dram_bytes = 64ull << 20;  ///< DRAM needed by default_layout()
  uint64_t max_work = 1ull << 22;         ///< element operations (see estimated_work)
};

/// Upper bound of the element operations the Program's stream performs: per LOAD/STORE the padded
/// rectangle's elements, per GEMM/ALU iter_out * iter_in * (uop_end - uop_bgn) loop iterations,
/// times the lanes of one element (BATCH * BLOCK_IN * BLOCK_OUT for GEMM, BATCH * BLOCK_OUT for
/// ALU). Saturates at UINT64_MAX.
uint64_t estimated_work(const isa::Program& p);

/// The checks every target that reaches a legal isa::Program applies: the verifier must not throw
/// (check_program() documents that it reports, never throws); when it finds nothing and the
/// Program is within `bounds`, the Program is loaded and run on fsim with both schedules
/// (greedy and lockstep), which must both complete (the verifier promises that a legal stream
/// does not fail in a simulator) and leave byte-identical DRAM (a race-free Program gives the
/// same results under both). fail()s otherwise.
void verify_and_run(std::string_view target, const isa::Program& p, const RunBounds& bounds = {});

// ---- implementation of the template ----
[[noreturn]] void fail_exception(std::string_view target, std::string_view kind, const char* what);

}  // namespace tessel::fuzz

#include <exception>
#include <new>
#include "support/error.h"

template <typename Fn>
bool tessel::fuzz::expect_clean(std::string_view target, Fn&& fn) {
  try {
    fn();
    return true;
  } catch (const tessel::InternalError& e) {
    fail_exception(target, "tessel::InternalError", e.what());
  } catch (const tessel::UserError&) {
    return false;
  } catch (const tessel::IoError&) {
    return false;
  } catch (const std::bad_alloc& e) {
    fail_exception(target, "std::bad_alloc (an allocation not bounded before it was made)", e.what());
  } catch (const std::exception& e) {
    fail_exception(target, "a library exception (not a tessel::Error)", e.what());
  } catch (...) {
    fail_exception(target, "an exception of unknown type", "");
  }
}
