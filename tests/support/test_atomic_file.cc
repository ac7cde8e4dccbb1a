// support/atomic_file.h: all-or-nothing writes. A failed write (simulated with the fault hook,
// /dev/full, a missing directory) leaves the previous file byte-identical and no temporary file
// behind; devices are written in place with checked writes.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/atomic_file.h"
#include "support/error.h"
#include "support/npy.h"

namespace tessel::support {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("tessel_atomic_" + std::to_string(::getpid())) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

size_t entries(const fs::path& d) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(d)) {
    (void)e;
    ++n;
  }
  return n;
}

std::string io_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const IoError& e) {
    return e.what();
  }
  return "";
}

struct FaultOff {
  ~FaultOff() { set_write_fault_for_testing(0); }
};

TEST(AtomicFile, WritesAndReplaces) {
  const fs::path d = fresh_dir("replace");
  const std::string p = (d / "a.bin").string();
  write_file_atomic(p, std::string_view("first"));
  EXPECT_EQ(slurp(p), "first");
  write_file_atomic(p, std::string_view("second, longer"));
  EXPECT_EQ(slurp(p), "second, longer");
  write_file_atomic(p, std::string_view(""));
  EXPECT_EQ(slurp(p), "");
  EXPECT_EQ(entries(d), 1u);  // no temporary file left
}

TEST(AtomicFile, KeepsTheModeOfTheFileItReplaces) {
  const fs::path d = fresh_dir("mode");
  const std::string p = (d / "m.txt").string();
  write_file_atomic(p, std::string_view("x"));
  ASSERT_EQ(::chmod(p.c_str(), 0640), 0);
  write_file_atomic(p, std::string_view("y"));
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

// Every write(2) of a replacement failing in turn: the old bytes survive each one.
TEST(AtomicFile, AFailedWriteLeavesThePreviousFileByteIdentical) {
  FaultOff off;
  const fs::path d = fresh_dir("fault");
  const std::string p = (d / "model.tsx").string();
  const std::string old_bytes(10000, 'o');
  write_file_atomic(p, old_bytes);
  set_write_fault_for_testing(1);
  const std::string msg = io_error([&] { write_file_atomic(p, std::string(50000, 'n')); });
  EXPECT_NE(msg.find("cannot write '" + p + "': writing 50000 bytes: no space left on device"), std::string::npos)
      << msg;
  EXPECT_EQ(slurp(p), old_bytes);
  EXPECT_EQ(entries(d), 1u) << "the temporary file was not removed";
  // The same through write_file_bytes / write_npy_f32, which every output of the CLI uses.
  set_write_fault_for_testing(1);
  EXPECT_THROW(write_npy_f32(p, {2}, {1.0f, 2.0f}), IoError);
  EXPECT_EQ(slurp(p), old_bytes);
  EXPECT_EQ(entries(d), 1u);
  // A fault on a file that does not exist yet leaves no file at all.
  set_write_fault_for_testing(1);
  EXPECT_THROW(write_file_atomic((d / "new.bin").string(), std::string_view("abc")), IoError);
  EXPECT_FALSE(fs::exists(d / "new.bin"));
  EXPECT_EQ(entries(d), 1u);
}

TEST(AtomicFile, DevicesAreWrittenInPlaceAndChecked) {
  const std::string msg = io_error([] { write_file_atomic("/dev/full", std::string_view("abc")); });
  EXPECT_NE(msg.find("cannot write '/dev/full': writing 3 bytes: no space left on device"), std::string::npos)
      << msg;
  write_file_atomic("/dev/null", std::string_view("abc"));  // a device that accepts: no error
}

TEST(AtomicFile, NamedErrorsForImpossibleTargets) {
  const fs::path d = fresh_dir("targets");
  EXPECT_NE(io_error([&] { write_file_atomic(d.string(), std::string_view("x")); }).find("is a directory"),
            std::string::npos);
  const std::string missing = (d / "no_such_dir" / "f.bin").string();
  const std::string msg = io_error([&] { write_file_atomic(missing, std::string_view("x")); });
  EXPECT_NE(msg.find("cannot write '" + missing + "': creating a temporary file in its directory: no such file"),
            std::string::npos)
      << msg;
  // A control byte in the name is escaped in the message.
  const std::string odd = (d / "no_such_dir" / "a\x01.bin").string();
  const std::string m2 = io_error([&] { write_file_atomic(odd, std::string_view("x")); });
  EXPECT_NE(m2.find("a\\x01.bin"), std::string::npos) << m2;
  EXPECT_EQ(m2.find('\x01'), std::string::npos);
}

// Files another library writes by name: reserved next to the target, committed whole.
TEST(AtomicFile, ReservedTemporaryFilesAreCommittedWhole) {
  const fs::path d = fresh_dir("reserve");
  const std::string target = (d / "w.fst").string();
  write_file_atomic(target, std::string_view("old"));
  const std::string temp = reserve_temp_file(target);
  EXPECT_EQ(fs::path(temp).parent_path(), d);
  EXPECT_EQ(slurp(target), "old");  // untouched while the library writes
  { std::ofstream(temp, std::ios::binary) << "new waveform"; }
  commit_temp_file(temp, target);
  EXPECT_EQ(slurp(target), "new waveform");
  EXPECT_EQ(entries(d), 1u);
  const std::string t2 = reserve_temp_file(target);
  { std::ofstream(t2, std::ios::binary) << "x"; }
  EXPECT_NE(io_error([&] { commit_temp_file(t2, "/dev/full"); }).find("cannot write '/dev/full'"), std::string::npos);
  EXPECT_FALSE(fs::exists(t2));
  const std::string t3 = reserve_temp_file(target);
  discard_temp_file(t3);
  EXPECT_EQ(entries(d), 1u);
  EXPECT_EQ(slurp(target), "new waveform");
}

TEST(AtomicFile, FollowsSymbolicLinks) {
  const fs::path d = fresh_dir("link");
  write_file_atomic((d / "real.bin").string(), std::string_view("old"));
  fs::create_symlink(d / "real.bin", d / "link.bin");
  write_file_atomic((d / "link.bin").string(), std::string_view("new"));
  EXPECT_TRUE(fs::is_symlink(d / "link.bin"));
  EXPECT_EQ(slurp(d / "real.bin"), "new");
}

}  // namespace
}  // namespace tessel::support
