#include "sim/rtl/rtl_bench.h"

#include <algorithm>

#include <fmt/format.h>

#include "sim/common/queues.h"

namespace tessel::sim::rtl {

namespace {

constexpr const char* kModuleName[3] = {"load", "compute", "store"};
constexpr const char* kTokenName[4] = {"l2g", "g2l", "g2s", "s2g"};

/// "LOAD INP, pops g2l, pushes l2g": an instruction with the token queues it uses.
std::string with_tokens(const isa::Instruction& insn, uint32_t index) {
  std::string s = describe(insn);
  const TokenPorts p = token_ports(insn, index);
  for (uint32_t k = 0; k < p.n_pops; ++k) s += fmt::format(", pops {}", kTokenName[size_t(p.pops[k])]);
  for (uint32_t k = 0; k < p.n_pushes; ++k) {
    s += fmt::format(", pushes {}", kTokenName[size_t(p.pushes[k])]);
  }
  return s;
}

}  // namespace

Bench::Bench(Dram& dram, int bus_bytes, uint64_t latency, const DecodedStream& stream,
             const BenchLimits& limits, bool record_trace)
    : slave_(dram, bus_bytes, latency), stream_(stream), limits_(limits), record_(record_trace) {
  deadline_ = limits_.watchdog_window;
  timeline_.resize(stream_.insns.size());
  for (size_t i = 0; i < timeline_.size(); ++i) {
    timeline_[i].index = uint32_t(i);
    timeline_[i].module = stream_.insns[i].module();
    timeline_[i].opcode = stream_.insns[i].opcode;
  }
}

void Bench::protocol_error(const std::string& what) const {
  throw SimError(fmt::format("rtl: {} in cycle {} ({})", what, t_, describe_state()));
}

void Bench::on_start(isa::Module m) {
  const size_t mi = size_t(m);
  const auto& list = stream_.by_module[mi];
  if (started_[mi] >= list.size()) {
    protocol_error(fmt::format("the {} module started an instruction but all {} of its "
                               "instructions already started",
                               kModuleName[mi], list.size()));
  }
  if (started_[mi] != done_[mi]) {
    protocol_error(fmt::format("the {} module started an instruction before finishing instruction {}",
                               kModuleName[mi], list[done_[mi]]));
  }
  const uint32_t idx = list[started_[mi]];
  if (idx >= dispatched_ || timeline_[idx].dispatch >= t_) {
    protocol_error(fmt::format("the {} module started instruction {} before fetch dispatched it",
                               kModuleName[mi], idx));
  }
  ++started_[mi];
  start_cycle_[mi] = t_;
  timeline_[idx].start = t_;
  deadline_ = std::max(deadline_, t_ + stream_.quiet_cycles[idx] + limits_.watchdog_window);
}

void Bench::on_done(isa::Module m) {
  const size_t mi = size_t(m);
  if (done_[mi] >= started_[mi]) {
    protocol_error(fmt::format("the {} module signalled done without a started instruction",
                               kModuleName[mi]));
  }
  const uint32_t idx = stream_.by_module[mi][done_[mi]];
  ++done_[mi];
  timeline_[idx].end = t_;
}

bool Bench::sample(const TopSignals& o) {
  bool activity = slave_.sample(t_, o.axi);
  if (o.dbg) {
    activity = true;
    if (o.dbg & kDbgDispatch) {
      if (dispatched_ >= stream_.insns.size()) {
        protocol_error(fmt::format("fetch dispatched an instruction after FINISH (instruction {})",
                                   stream_.insns.size() - 1));
      }
      timeline_[dispatched_].dispatch = t_;
      ++dispatched_;
    }
    // A zero-length instruction starts and is done in the same cycle: start first.
    if (o.dbg & kDbgLoadStart) on_start(isa::Module::kLoad);
    if (o.dbg & kDbgComputeStart) on_start(isa::Module::kCompute);
    if (o.dbg & kDbgStoreStart) on_start(isa::Module::kStore);
    if (o.dbg & kDbgLoadDone) on_done(isa::Module::kLoad);
    if (o.dbg & kDbgComputeDone) on_done(isa::Module::kCompute);
    if (o.dbg & kDbgStoreDone) on_done(isa::Module::kStore);
  }
  if (o.done) {
    for (size_t m = 0; m < 3; ++m) {
      if (done_[m] != stream_.by_module[m].size()) {
        protocol_error(fmt::format("done rose with {} of {} {} instructions completed", done_[m],
                                   stream_.by_module[m].size(), kModuleName[m]));
      }
    }
    cycles_ = t_;
    return true;
  }
  if (activity) {
    last_progress_ = t_;
    deadline_ = std::max(deadline_, t_ + limits_.watchdog_window);
  }
  if (t_ >= limits_.cycle_limit) {  // done not seen in cycle cycle_limit: more cycles needed
    throw SimError(fmt::format("rtl: run stopped at the cycle limit of {} cycles: {}",
                               limits_.cycle_limit, describe_state()));
  }
  if (t_ >= deadline_) {
    throw SimError(fmt::format(
        "rtl: no progress for {} cycles (no instruction started or completed, no bus activity) "
        "at cycle {}: {}",
        t_ - last_progress_, t_,
        describe_state()));
  }
  ++t_;
  return false;
}

std::vector<InsnTiming> Bench::timeline() const {
  if (!record_) return {};
  return std::vector<InsnTiming>(timeline_.begin(), timeline_.begin() + ptrdiff_t(dispatched_));
}

std::string Bench::describe_state() const {
  std::vector<std::string> parts;
  parts.push_back(fmt::format("fetch dispatched {} of {} instructions", dispatched_,
                              stream_.insns.size()));
  for (size_t m = 0; m < 3; ++m) {
    const auto& list = stream_.by_module[m];
    if (started_[m] > done_[m]) {
      const uint32_t idx = list[done_[m]];
      parts.push_back(fmt::format("{} started instruction {} ({}) in cycle {} and has not finished",
                                  kModuleName[m], idx, with_tokens(stream_.insns[idx], idx),
                                  start_cycle_[m]));
    } else if (started_[m] < list.size() && list[started_[m]] < dispatched_) {
      const uint32_t idx = list[started_[m]];
      parts.push_back(fmt::format("{} waits to start instruction {} ({})", kModuleName[m], idx,
                                  with_tokens(stream_.insns[idx], idx)));
    } else {
      parts.push_back(fmt::format("{} is idle ({} of {} instructions done)", kModuleName[m],
                                  done_[m], list.size()));
    }
  }
  parts.push_back(slave_.describe_outstanding());
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? "; " : "") + parts[i];
  return s;
}

}  // namespace tessel::sim::rtl
