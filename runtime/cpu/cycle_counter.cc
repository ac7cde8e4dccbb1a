#include "runtime/cpu/cycle_counter.h"

#include <cstring>

#if defined(__linux__)
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define TESSEL_HAVE_TSC 1
#endif

namespace tessel::runtime::cpu {

CycleCounter::CycleCounter() {
#if defined(__linux__)
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.type = PERF_TYPE_HARDWARE;
  attr.size = sizeof(attr);
  attr.config = PERF_COUNT_HW_CPU_CYCLES;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  const long fd = syscall(SYS_perf_event_open, &attr, 0 /* this thread */, -1 /* any cpu */,
                          -1 /* no group */, 0);
  fd_ = fd >= 0 ? static_cast<int>(fd) : -1;
#endif
}

CycleCounter::~CycleCounter() {
#if defined(__linux__)
  if (fd_ >= 0) close(fd_);
#endif
}

void CycleCounter::start() {
#if defined(__linux__)
  if (fd_ >= 0) {
    ioctl(fd_, PERF_EVENT_IOC_RESET, 0);
    ioctl(fd_, PERF_EVENT_IOC_ENABLE, 0);
    return;
  }
#endif
#if defined(TESSEL_HAVE_TSC)
  tsc0_ = __rdtsc();
#endif
}

uint64_t CycleCounter::stop() {
#if defined(__linux__)
  if (fd_ >= 0) {
    ioctl(fd_, PERF_EVENT_IOC_DISABLE, 0);
    uint64_t v = 0;
    if (read(fd_, &v, sizeof(v)) != static_cast<ssize_t>(sizeof(v))) return 0;
    return v;
  }
#endif
#if defined(TESSEL_HAVE_TSC)
  return __rdtsc() - tsc0_;
#else
  return 0;
#endif
}

std::string_view CycleCounter::source() const {
  if (fd_ >= 0) return "perf_cycles";
#if defined(TESSEL_HAVE_TSC)
  return "tsc_ticks";
#else
  return "none";
#endif
}

}  // namespace tessel::runtime::cpu
