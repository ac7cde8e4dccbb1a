// Runs the `tessel` binary from tests and captures its exit code, stdout and stderr.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::tools::testing {

struct CliResult {
  int exit_code = -1;   ///< the process exit code; -1 if it did not exit normally (signal)
  std::string out, err;
};

/// Runs TESSEL_CLI with `args` (each shell-quoted) in the source directory; stdout and stderr go
/// to temporary files that are read back.
CliResult run_cli(const std::vector<std::string>& args);

/// How run_cli() runs the binary, beyond its arguments.
struct CliRunSpec {
  /// "NAME=value" environment assignments for this run only (e.g. TESSEL_TEST_WRITE_FAULT=1).
  std::vector<std::string> env;
  /// Where stdout goes instead of a captured file ("" = captured into CliResult::out), e.g.
  /// "/dev/full" to check that a lost stdout is an error.
  std::string stdout_path;
  /// When > 0: the run's virtual memory limit in KiB (`ulimit -v`), so that a test can show a
  /// command runs in bounded memory.
  /// Not applied in an AddressSanitizer build (its shadow memory needs terabytes of address
  /// space); there the run goes unbounded and the Release build checks the bound.
  uint64_t max_virtual_kib = 0;
};
/// run_cli() with an environment and an stdout target.
CliResult run_cli(const std::vector<std::string>& args, const CliRunSpec& spec);

/// A fresh path in a per-test temporary directory.
std::string temp_file(const std::string& name);

/// Asserts (gtest) that the run exited with `code` and wrote exactly one line on stderr, starting
/// "error: " and containing `needle`.
void expect_error(const CliResult& r, int code, const std::string& needle);

/// Writes `bytes` to `path` (support::write_file_bytes); throws IoError as that does.
void write(const std::string& path, const std::string& bytes);

}  // namespace tessel::tools::testing
