#include "cli_util.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/npy.h"

namespace tessel::tools::testing {
namespace {

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''";
    else q += c;
  }
  return q + "'";
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The sanitizer build (scripts/test.sh phase 2) runs the same CLI tests on an ASan binary.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
#else
constexpr bool kAsan = false;
#endif

// ASan's runtime prints, once per process, a three-line warning when a C++ exception unwinds
// after SystemC switched coroutine stacks (Debian's libsystemc does not announce its stack
// switches to ASan; see scripts/test.sh). It is the sanitizer's note about its own bookkeeping,
// not Tessel's output: removed so the tests judge what Tessel wrote.
std::string without_asan_stack_warning(std::string err) {
  const size_t at = err.find("WARNING: ASan is ignoring requested __asan_handle_no_return");
  if (at == std::string::npos) return err;
  const size_t begin = err.rfind('\n', at) == std::string::npos ? 0 : err.rfind('\n', at) + 1;
  size_t end = begin;
  for (int line = 0; line < 3 && end != std::string::npos; ++line) {
    end = err.find('\n', end);
    if (end != std::string::npos) ++end;
  }
  err.erase(begin, end == std::string::npos ? std::string::npos : end - begin);
  return err;
}

}  // namespace

std::string temp_file(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tessel_cli_test_" + std::to_string(static_cast<long>(::getpid())));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

CliResult run_cli(const std::vector<std::string>& args) { return run_cli(args, CliRunSpec{}); }

CliResult run_cli(const std::vector<std::string>& args, const CliRunSpec& spec) {
  const std::string out = temp_file("stdout.txt"), err = temp_file("stderr.txt");
  std::string cmd = "cd " + quote(TESSEL_SOURCE_DIR) + " && ";
  // Under ASan no address-space limit can apply (its shadow memory alone reserves terabytes of
  // address space): the run goes without it, the Release run checks the bound.
  if (spec.max_virtual_kib > 0 && !kAsan) cmd += "ulimit -v " + std::to_string(spec.max_virtual_kib) + " && ";
  if (!spec.env.empty()) {
    cmd += "env";
    for (const std::string& e : spec.env) cmd += " " + quote(e);
    cmd += " ";
  }
  cmd += quote(TESSEL_CLI);
  for (const std::string& a : args) cmd += " " + quote(a);
  cmd += " >" + quote(spec.stdout_path.empty() ? out : spec.stdout_path) + " 2>" + quote(err);
  std::filesystem::remove(out);
  const int status = std::system(cmd.c_str());
  CliResult r;
  if (status != -1 && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (spec.stdout_path.empty()) r.out = slurp(out);
  r.err = kAsan ? without_asan_stack_warning(slurp(err)) : slurp(err);
  return r;
}

void expect_error(const CliResult& r, int code, const std::string& needle) {
  EXPECT_EQ(r.exit_code, code) << r.err;
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "not one line: " << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr: " << r.err << "\nwanted: " << needle;
}

void write(const std::string& path, const std::string& bytes) {
  support::write_file_bytes(path, std::vector<uint8_t>(bytes.begin(), bytes.end()));
}

}  // namespace tessel::tools::testing
