#include "support/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <random>

#include <fmt/format.h>

#include "support/error.h"
#include "support/file_read.h"
#include "support/text.h"

namespace tessel::support {
namespace {


// The fault hook: fault_at_ is the 1-based index of the write(2) call that fails (0 = none);
// writes_ counts the calls made since the hook was last set.
std::atomic<uint64_t> fault_at_{0};
std::atomic<uint64_t> writes_{0};
std::once_flag env_once_;

void read_fault_env() {
  std::call_once(env_once_, [] {
    const char* v = std::getenv("TESSEL_TEST_WRITE_FAULT");
    if (v == nullptr || *v == '\0') return;
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (end != nullptr && *end == '\0') fault_at_ = n;
  });
}

// write(2) behind the fault hook.
ssize_t hooked_write(int fd, const char* p, size_t n) {
  const uint64_t at = fault_at_.load();
  if (at != 0 && ++writes_ == at) {
    errno = ENOSPC;
    return -1;
  }
  return ::write(fd, p, n);
}

[[noreturn]] void fail(const std::string& path, const std::string& step, int e) {
  throw_io_error("cannot write {}: {}: {}", quote(path), step, errno_text(e));
}

// The whole of a temporary file (commit_temp_file to a device).
std::vector<uint8_t> read_file_bytes_for_commit(const std::string& temp) {
  const int fd = ::open(temp.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_io_error("cannot read the temporary file {}: {}", quote(temp), errno_text(errno));
  std::vector<uint8_t> out;
  uint8_t buf[65536];
  while (true) {
    const ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      throw_io_error("cannot read the temporary file {}: {}", quote(temp), errno_text(e));
    }
    if (r == 0) break;
    out.insert(out.end(), buf, buf + r);
  }
  ::close(fd);
  return out;
}

// Writes all of `bytes` to `fd`, retrying short writes and EINTR. Returns 0 or the errno.
int write_all(int fd, std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = hooked_write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (w == 0) return EIO;  // a device that accepts nothing
    done += static_cast<size_t>(w);
  }
  return 0;
}

// A non-regular target (device, FIFO): written in place with checked writes and close.
void write_in_place(const std::string& path, std::string_view bytes) {
  // O_NONBLOCK for the open only: a FIFO that no process reads would otherwise block for ever;
  // it fails with ENXIO instead. Writes block again once it is open.
  // A FIFO's reader may come a little later: the open is retried for at most fifo_wait_ms().
  int fd = -1;
  for (int waited = 0;; waited += 20) {
    fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0 || errno != ENXIO) break;
    if (waited >= fifo_wait_ms()) {
      throw_io_error("cannot write {}: opening it: no process read this FIFO within {} s", quote(path),
                     fifo_wait_ms() / 1000.0);
    }
    ::usleep(20000);
  }
  if (fd < 0) fail(path, "opening it", errno);
  if (const int fl = ::fcntl(fd, F_GETFL); fl < 0 || ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
    const int e = errno;
    ::close(fd);
    fail(path, "opening it", e);
  }
  if (const int e = write_all(fd, bytes); e != 0) {
    ::close(fd);
    fail(path, fmt::format("writing {} bytes", bytes.size()), e);
  }
  // Devices and pipes that cannot be synced say so with EINVAL/EROFS/ENOTSUP: not an error.
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS && errno != ENOTSUP && errno != EBADF) {
    const int e = errno;
    ::close(fd);
    fail(path, "fsync", e);
  }
  if (::close(fd) != 0) fail(path, "closing it", errno);
}

// A fresh temporary file next to `target`, created with O_EXCL and mode 0666 (minus the umask).
int create_temp(const std::filesystem::path& target, std::string& temp_path) {
  static std::atomic<uint64_t> counter{0};
  std::random_device rd;
  const std::filesystem::path dir = target.parent_path();
  const std::string base = "." + target.filename().string() + ".tmp";
  for (int attempt = 0; attempt < 100; ++attempt) {
    const uint64_t r = (uint64_t{rd()} << 32) ^ rd() ^ (counter++ << 20) ^ static_cast<uint64_t>(::getpid());
    const std::filesystem::path p = dir / (base + fmt::format("{:012x}", r & 0xffffffffffffULL));  // kAtomicTempSuffixBytes
    const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      temp_path = p.string();
      return fd;
    }
    if (errno != EEXIST) return -1;
  }
  errno = EEXIST;
  return -1;
}

}  // namespace

void set_write_fault_for_testing(uint64_t n) {
  read_fault_env();  // a later first call must not override the test's setting
  writes_ = 0;
  fault_at_ = n;
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
  read_fault_env();
  if (path.empty()) throw_io_error("cannot write a file with an empty name");
  std::filesystem::path target(path);
  struct stat st {};
  bool exists = false;
  if (::stat(path.c_str(), &st) == 0) {
    exists = true;
    if (S_ISDIR(st.st_mode)) throw_io_error("cannot write {}: is a directory", quote(path));
    if (!S_ISREG(st.st_mode)) {
      write_in_place(path, bytes);
      return;
    }
    // Follow a symbolic link so that the file it names is replaced, not the link.
    struct stat lst {};
    if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
      std::error_code ec;
      const std::filesystem::path real = std::filesystem::canonical(target, ec);
      if (!ec) target = real;
    }
  }
  std::string temp;
  const int fd = create_temp(target, temp);
  if (fd < 0) fail(path, "creating a temporary file in its directory", errno);
  auto abandon = [&](const std::string& step, int e) {
    ::close(fd);
    ::unlink(temp.c_str());
    fail(path, step, e);
  };
  if (exists && ::fchmod(fd, st.st_mode & 07777) != 0) abandon("keeping its mode", errno);
  if (const int e = write_all(fd, bytes); e != 0) abandon(fmt::format("writing {} bytes", bytes.size()), e);
  if (::fsync(fd) != 0) abandon("fsync", errno);
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(temp.c_str());
    fail(path, "closing it", e);
  }
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    const int e = errno;
    ::unlink(temp.c_str());
    fail(path, "renaming the temporary file over it", e);
  }
}

std::string reserve_temp_file(const std::string& target) {
  std::string temp;
  const int fd = create_temp(std::filesystem::path(target), temp);
  if (fd < 0) fail(target, "creating a temporary file in its directory", errno);
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(temp.c_str());
    fail(target, "creating a temporary file in its directory", e);
  }
  return temp;
}

void commit_temp_file(const std::string& temp, const std::string& target) {
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    std::string bytes;
    try {
      const std::vector<uint8_t> b = read_file_bytes_for_commit(temp);
      bytes.assign(b.begin(), b.end());
    } catch (...) {
      ::unlink(temp.c_str());
      throw;
    }
    ::unlink(temp.c_str());
    write_file_atomic(target, bytes);  // in place, checked
    return;
  }
  const int fd = ::open(temp.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    ::unlink(temp.c_str());
    fail(target, "reopening the temporary file", e);
  }
  if (::fsync(fd) != 0) {
    const int e = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    fail(target, "fsync", e);
  }
  ::close(fd);
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    const int e = errno;
    ::unlink(temp.c_str());
    fail(target, "renaming the temporary file over it", e);
  }
}

void discard_temp_file(const std::string& temp) noexcept { ::unlink(temp.c_str()); }

void write_file_atomic(const std::string& path, const std::vector<uint8_t>& bytes) {
  write_file_atomic(path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

std::string check_stdout() {
  std::cout.flush();
  const bool cout_bad = !std::cout.good();
  errno = 0;
  const int flushed = std::fflush(stdout);
  const int e = errno;
  if (flushed != 0 || std::ferror(stdout) || cout_bad) {
    // stdio may have flushed (and failed) long before; then the reason is no longer known.
    return flushed != 0 && e != 0 ? fmt::format("cannot write standard output: {}", errno_text(e))
                                  : std::string("cannot write standard output: an earlier write to it failed");
  }
  return {};
}

}  // namespace tessel::support
