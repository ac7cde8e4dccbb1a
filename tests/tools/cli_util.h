// Runs the `tessel` binary from tests and captures its exit code, stdout and stderr.
#pragma once

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

/// A fresh path in a per-test temporary directory.
std::string temp_file(const std::string& name);

}  // namespace tessel::tools::testing
