#include <cstdlib>
#include <cstring>

#include "sim/common/simulator.h"

namespace tessel::sim {

Dram::Dram(uint64_t size_bytes) : size_(size_bytes) {
  // calloc of a large block maps fresh zero pages without touching them.
  bytes_.reset(static_cast<uint8_t*>(std::calloc(size_bytes ? size_bytes : 1, 1)));
  if (!bytes_) throw_user_error("cannot allocate a device dram of {} bytes", size_bytes);
}

void Dram::FreeDeleter::operator()(uint8_t* p) const noexcept { std::free(p); }

void Dram::read(uint64_t addr, void* dst, uint64_t n) const {
  check_range(addr, n, "read");
  if (n) std::memcpy(dst, bytes_.get() + addr, n);
}

void Dram::write(uint64_t addr, const void* src, uint64_t n) {
  check_range(addr, n, "write");
  if (n) std::memcpy(bytes_.get() + addr, src, n);
}

}  // namespace tessel::sim
