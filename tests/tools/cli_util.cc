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
  if (spec.max_virtual_kib > 0) cmd += "ulimit -v " + std::to_string(spec.max_virtual_kib) + " && ";
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
  r.err = slurp(err);
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
