#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

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

void check_insn_stream(const Dram& dram, uint64_t insn_addr, uint32_t insn_count) {
  const uint64_t stream_bytes = uint64_t(insn_count) * 16;
  if (insn_addr > dram.size() || stream_bytes > dram.size() - insn_addr) {
    throw SimError(fmt::format(
        "fetch: instruction stream bytes [{}, {}) out of range ({} instructions; dram holds {} "
        "bytes)",
        insn_addr, insn_addr + stream_bytes, insn_count, dram.size()));
  }
}

}  // namespace tessel::sim
