#include <cstring>

#include "sim/common/simulator.h"

namespace tessel::sim {

void Dram::read(uint64_t addr, void* dst, uint64_t n) const {
  check_range(addr, n, "read");
  if (n) std::memcpy(dst, bytes_.data() + addr, n);
}

void Dram::write(uint64_t addr, const void* src, uint64_t n) {
  check_range(addr, n, "write");
  if (n) std::memcpy(bytes_.data() + addr, src, n);
}

}  // namespace tessel::sim
