#include "sim/common/bus_schedule.h"

#include <algorithm>

#include "support/error.h"

namespace tessel::sim {

BusSlot BusSchedule::reserve(bool write, uint64_t grant_cycle, uint64_t beats) {
  if (beats == 0) throw_internal_error("BusSchedule: a burst of 0 beats (granted in cycle {})", grant_cycle);
  if (grant_cycle < last_grant_) {
    throw_internal_error("BusSchedule: grant in cycle {} after a grant in cycle {}", grant_cycle,
                         last_grant_);
  }
  last_grant_ = grant_cycle;
  BusSlot s;
  s.first = std::max(grant_cycle + 1 + (write ? 0 : latency_), bus_free_);
  s.last = s.first + beats - 1;
  s.response = write ? s.last + 1 + latency_ : s.last;
  bus_free_ = s.first + beats;
  return s;
}

}  // namespace tessel::sim
