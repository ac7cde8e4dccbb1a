#include "support/file_read.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>

#include "support/error.h"
#include "support/text.h"

namespace tessel::support {
namespace {


// Closes a descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

[[noreturn]] void too_long(const std::string& path, uint64_t max_bytes, std::string_view kind) {
  throw_user_error("{} holds more than {} bytes, the limit for {}", quote(path), max_bytes, kind);
}

[[noreturn]] void too_long(const std::string& path, uint64_t size, uint64_t max_bytes, std::string_view kind) {
  throw_user_error("{} holds {} bytes, more than {} bytes, the limit for {}", quote(path), size, max_bytes, kind);
}

// read(2) of up to `n` bytes, retried on EINTR; the count read (0 at the end).
size_t read_some(int fd, uint8_t* p, size_t n, const std::string& path) {
  while (true) {
    const ssize_t r = ::read(fd, p, n);
    if (r >= 0) return static_cast<size_t>(r);
    if (errno == EINTR) continue;
    throw_io_error("cannot read {}: {}", quote(path), errno_text(errno));
  }
}

// Reads `path` into `out` (a std::vector<uint8_t> or std::string).
template <typename Buffer>
void read_into(const std::string& path, uint64_t max_bytes, std::string_view kind, Buffer& out) {
  Fd f;
  // O_NONBLOCK for the open only: opening a FIFO that no process writes to would otherwise block
  // for ever. A FIFO is then polled for its first writer, at most fifo_wait_ms(); once data (or
  // the end) is there, reads block again as for any file.
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (f.fd < 0) throw_io_error("cannot read {}: {}", quote(path), errno_text(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw_io_error("cannot read {}: {}", quote(path), errno_text(errno));
  if (S_ISFIFO(st.st_mode)) {
    pollfd pfd{f.fd, POLLIN, 0};
    int r;
    while ((r = ::poll(&pfd, 1, fifo_wait_ms())) < 0 && errno == EINTR) {
    }
    if (r < 0) throw_io_error("cannot read {}: {}", quote(path), errno_text(errno));
    if (r == 0) {
      throw_io_error("cannot read {}: no process wrote to this FIFO within {} s", quote(path),
                     fifo_wait_ms() / 1000.0);
    }
  }
  if (const int fl = ::fcntl(f.fd, F_GETFL); fl < 0 || ::fcntl(f.fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
    throw_io_error("cannot read {}: {}", quote(path), errno_text(errno));
  }
  if (S_ISDIR(st.st_mode)) throw_io_error("cannot read {}: is a directory", quote(path));
  out.clear();
  if (S_ISREG(st.st_mode)) {
    // Its size is known: too large is an error before reading; the bytes go straight into place.
    if (static_cast<uint64_t>(st.st_size) > max_bytes) too_long(path, static_cast<uint64_t>(st.st_size), max_bytes, kind);
    out.resize(static_cast<size_t>(st.st_size));
    size_t have = 0;
    while (have < out.size()) {
      const size_t r = read_some(f.fd, reinterpret_cast<uint8_t*>(out.data()) + have, out.size() - have, path);
      if (r == 0) break;  // the file shrank while it was read
      have += r;
    }
    out.resize(have);
    if (have < static_cast<size_t>(st.st_size)) return;
    // A file that grew since fstat: the rest is read below, under the same limit.
  }
  // Pipes, character devices, a growing file: chunks until the end, never more than the limit
  // plus one chunk in memory. The chunks are joined once the end is reached, so an endless
  // input costs at most the limit before it is rejected.
  constexpr size_t kChunk = size_t{1} << 20;
  std::vector<std::unique_ptr<uint8_t[]>> chunks;
  std::vector<size_t> sizes;
  uint64_t total = out.size();
  while (true) {
    auto chunk = std::make_unique<uint8_t[]>(kChunk);
    size_t filled = 0;
    while (filled < kChunk) {
      const size_t r = read_some(f.fd, chunk.get() + filled, kChunk - filled, path);
      if (r == 0) break;
      filled += r;
    }
    total += filled;
    if (total > max_bytes) too_long(path, max_bytes, kind);
    if (filled > 0) {
      chunks.push_back(std::move(chunk));
      sizes.push_back(filled);
    }
    if (filled < kChunk) break;
  }
  size_t at = out.size();
  out.resize(static_cast<size_t>(total));
  for (size_t i = 0; i < chunks.size(); ++i) {
    std::memcpy(reinterpret_cast<uint8_t*>(out.data()) + at, chunks[i].get(), sizes[i]);
    at += sizes[i];
  }
}

}  // namespace

std::vector<uint8_t> read_file_bounded(const std::string& path, uint64_t max_bytes, std::string_view kind) {
  std::vector<uint8_t> out;
  read_into(path, max_bytes, kind, out);
  return out;
}

std::string read_file_bounded_string(const std::string& path, uint64_t max_bytes, std::string_view kind) {
  std::string out;
  read_into(path, max_bytes, kind, out);
  return out;
}

namespace {
int g_fifo_wait_ms = kFifoWaitMs;
}  // namespace

void set_fifo_wait_for_testing(int ms) { g_fifo_wait_ms = ms < 0 ? kFifoWaitMs : ms; }

int fifo_wait_ms() { return g_fifo_wait_ms; }

}  // namespace tessel::support
