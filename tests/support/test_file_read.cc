// support/file_read.h: the one bounded reader of input files (issue 7 F3).
#include "support/file_read.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "support/atomic_file.h"
#include "support/error.h"

namespace tessel::support {
namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / "tessel_file_read_test";
  fs::create_directories(dir);
  return (dir / name).string();
}

template <typename E, typename Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  return "<no error of the expected type>";
}

TEST(FileRead, RegularFilesUpToTheLimit) {
  const std::string p = temp_path("eight.bin");
  write_file_atomic(p, std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(read_file_bounded(p, 8, "a test file"), (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(read_file_bounded_string(p, 100, "a test file"), std::string("\x01\x02\x03\x04\x05\x06\x07\x08"));
  EXPECT_EQ(error_of<UserError>([&] { read_file_bounded(p, 7, "a test file"); }),
            "'" + p + "' holds 8 bytes, more than 7 bytes, the limit for a test file");
  const std::string empty = temp_path("empty.bin");
  write_file_atomic(empty, std::vector<uint8_t>{});
  EXPECT_TRUE(read_file_bounded(empty, 0, "a test file").empty());
}

TEST(FileRead, EndlessDevicesStopAtTheLimit) {
  // /dev/zero has st_size 0 and never ends: it is read, not measured, and stops at the limit.
  EXPECT_EQ(error_of<UserError>([] { read_file_bounded("/dev/zero", 3 << 20, "a configuration file"); }),
            "'/dev/zero' holds more than 3145728 bytes, the limit for a configuration file");
  EXPECT_EQ(error_of<UserError>([] { read_file_bounded("/dev/urandom", 100, "an ONNX model"); }),
            "'/dev/urandom' holds more than 100 bytes, the limit for an ONNX model");
  EXPECT_TRUE(read_file_bounded("/dev/null", 10, "a test file").empty());
}

TEST(FileRead, PipesAreReadToTheirEnd) {
  const std::string fifo = temp_path("fifo");
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const size_t n = (size_t{5} << 20) + 123;  // more than one chunk
  std::thread writer([&] {
    FILE* f = std::fopen(fifo.c_str(), "wb");
    std::vector<uint8_t> bytes(n);
    for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(i * 7);
    std::fwrite(bytes.data(), 1, n, f);
    std::fclose(f);
  });
  const std::vector<uint8_t> got = read_file_bounded(fifo, n, "a test file");
  writer.join();
  ASSERT_EQ(got.size(), n);
  for (size_t i = 0; i < n; i += 4099) ASSERT_EQ(got[i], static_cast<uint8_t>(i * 7)) << i;
  EXPECT_EQ(got[n - 1], static_cast<uint8_t>((n - 1) * 7));
}

TEST(FileRead, AFifoNobodyWritesToIsAnErrorNotAHang) {
  const std::string fifo = temp_path("lonely_fifo");
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  set_fifo_wait_for_testing(200);
  EXPECT_EQ(error_of<IoError>([&] { read_file_bounded(fifo, 100, "a test file"); }),
            "cannot read '" + fifo + "': no process wrote to this FIFO within 0.2 s");
  // And for writing: no process reads it.
  EXPECT_EQ(error_of<IoError>([&] { write_file_atomic(fifo, std::string("abc")); }),
            "cannot write '" + fifo + "': opening it: no process read this FIFO within 0.2 s");
  // A writer that comes late, within the wait, is read in full.
  set_fifo_wait_for_testing(10000);
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    FILE* f = std::fopen(fifo.c_str(), "wb");
    std::fputs("late bytes", f);
    std::fclose(f);
  });
  const std::vector<uint8_t> got = read_file_bounded(fifo, 100, "a test file");
  late.join();
  EXPECT_EQ(std::string(got.begin(), got.end()), "late bytes");
  set_fifo_wait_for_testing(-1);
  EXPECT_EQ(fifo_wait_ms(), kFifoWaitMs);
  fs::remove(fifo);
}

TEST(FileRead, MissingFilesAndDirectoriesAreIoErrors) {
  EXPECT_EQ(error_of<IoError>([] { read_file_bounded("/nonexistent/x.onnx", 10, "an ONNX model"); }),
            "cannot read '/nonexistent/x.onnx': no such file or directory");
  EXPECT_EQ(error_of<IoError>([] { read_file_bounded("/tmp", 10, "an ONNX model"); }),
            "cannot read '/tmp': is a directory");
}

}  // namespace
}  // namespace tessel::support
