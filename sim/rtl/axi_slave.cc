#include "sim/rtl/axi_slave.h"

#include <bit>
#include <cstring>

#include <fmt/format.h>

namespace tessel::sim::rtl {

std::string master_name(unsigned id) {
  static const char* const kNames[4] = {"fetch", "load", "compute", "store"};
  return id < 4 ? kNames[id] : fmt::format("id {}", id);
}

namespace {
std::string who(unsigned id) { return fmt::format("the {} master (axi id {})", master_name(id), id); }
}  // namespace

AxiDramSlave::AxiDramSlave(Dram& dram, int bus_bytes, uint64_t latency)
    : dram_(dram), bus_bytes_(bus_bytes), schedule_(latency) {
  if (bus_bytes < 1 || bus_bytes > 64 || !std::has_single_bit(unsigned(bus_bytes))) {
    throw_user_error("axi slave: bus width {} bytes is not a power of two in 1..64", bus_bytes);
  }
  log_bus_bytes_ = std::countr_zero(unsigned(bus_bytes));
  rbuf_.assign(size_t(bus_bytes), 0);
}

void AxiDramSlave::reset(uint64_t latency) {
  schedule_.reset(latency);
  slots_.clear();
  responses_.clear();
  log_.clear();
  drive_ = SlaveDrive{};
  driven_write_ = driven_read_ = driven_resp_ = false;
}

const SlaveDrive& AxiDramSlave::drive(uint64_t t) {
  drive_.rvalid = drive_.wready = drive_.bvalid = false;
  driven_write_ = driven_read_ = driven_resp_ = false;
  if (!slots_.empty() && slots_.front().slot.first <= t) {
    const BusBurst& b = slots_.front();
    if (b.write) {
      drive_.wready = true;
      driven_write_ = true;
    } else {
      const uint64_t beat = t - b.slot.first;
      std::memcpy(rbuf_.data(), dram_.data() + b.addr + beat * uint64_t(bus_bytes_),
                  size_t(bus_bytes_));
      drive_.rvalid = true;
      drive_.rid = b.id;
      drive_.rlast = t == b.slot.last;
      drive_.rdata = rbuf_.data();
      driven_read_ = true;
    }
  }
  if (!responses_.empty() && responses_.front().slot.response == t) {
    drive_.bvalid = true;
    drive_.bid = responses_.front().id;
    driven_resp_ = true;
  }
  return drive_;
}

bool AxiDramSlave::sample(uint64_t t, const MasterSignals& m) {
  bool activity = false;
  if (driven_read_) {
    const BusBurst& b = slots_.front();
    if (!m.rready) {
      throw SimError(fmt::format(
          "rtl: {} refused read beat {} of its burst at byte {} in cycle {} (RREADY low; the "
          "masters must accept every beat)",
          who(b.id), t - b.slot.first, b.addr, t));
    }
    if (t == b.slot.last) slots_.pop_front();
    activity = true;
  } else if (driven_write_) {
    const BusBurst& b = slots_.front();
    const uint64_t beat = t - b.slot.first;
    if (!m.wvalid) {
      throw SimError(fmt::format(
          "rtl: {} did not present write beat {} of {} of its burst at byte {} in its reserved "
          "cycle {} (WVALID low)",
          who(b.id), beat, b.beats, b.addr, t));
    }
    const bool last = t == b.slot.last;
    if (m.wlast != last) {
      throw SimError(fmt::format(
          "rtl: {} drove WLAST {} on write beat {} of {} of its burst at byte {} in cycle {}",
          who(b.id), m.wlast ? 1 : 0, beat, b.beats, b.addr, t));
    }
    uint8_t* dst = dram_.data() + b.addr + beat * uint64_t(bus_bytes_);
    if (m.wstrb == (bus_bytes_ == 64 ? ~uint64_t(0) : (uint64_t(1) << bus_bytes_) - 1)) {
      std::memcpy(dst, m.wdata, size_t(bus_bytes_));
    } else {
      for (int i = 0; i < bus_bytes_; ++i) {
        if ((m.wstrb >> i) & 1) dst[i] = m.wdata[i];
      }
    }
    if (last) {
      responses_.push_back(b);
      slots_.pop_front();
    }
    activity = true;
  }
  if (driven_resp_) {
    if (!m.bready) {
      throw SimError(fmt::format("rtl: {} refused its write response in cycle {} (BREADY low)",
                                 who(responses_.front().id), t));
    }
    responses_.pop_front();
    activity = true;
  }
  if (m.arvalid && m.awvalid) {
    throw SimError(fmt::format(
        "rtl: AR ({}) and AW ({}) handshakes in the same cycle {} (the arbiter grants one burst "
        "per cycle)",
        who(m.arid), who(m.awid), t));
  }
  if (m.arvalid) {
    grant(t, false, m.arid, m.araddr, m.arlen, m.arsize, m.arburst);
    activity = true;
  } else if (m.awvalid) {
    grant(t, true, m.awid, m.awaddr, m.awlen, m.awsize, m.awburst);
    activity = true;
  }
  return activity;
}

void AxiDramSlave::grant(uint64_t t, bool write, uint8_t id, uint64_t addr, uint8_t len,
                         uint8_t size, uint8_t burst) {
  const char* kind = write ? "write" : "read";
  if (id > 3) throw SimError(fmt::format("rtl: {} burst with axi id {} in cycle {} (ids are 0..3)", kind, id, t));
  if (write && id != kStoreId) {
    throw SimError(fmt::format("rtl: write burst from {} in cycle {} (only store writes)", who(id), t));
  }
  if (size != log_bus_bytes_) {
    throw SimError(fmt::format("rtl: {} burst of {} in cycle {} has size {} (2^{} bytes); the "
                               "bus moves {} bytes per beat",
                               kind, who(id), t, size, size, bus_bytes_));
  }
  if (burst != 1) {
    throw SimError(fmt::format("rtl: {} burst of {} in cycle {} has burst type {} (only INCR, 1)",
                               kind, who(id), t, burst));
  }
  if (addr % uint64_t(bus_bytes_) != 0) {
    throw SimError(fmt::format("rtl: {} burst of {} in cycle {} at byte {} is not aligned to the "
                               "{}-byte bus",
                               kind, who(id), t, addr, bus_bytes_));
  }
  const uint64_t beats = uint64_t(len) + 1;
  const uint64_t bytes = beats * uint64_t(bus_bytes_);
  if (addr > dram_.size() || bytes > dram_.size() - addr) {
    throw SimError(fmt::format("rtl: dram {} burst of {} in cycle {} at bytes [{}, {}) out of "
                               "range (dram holds {} bytes)",
                               kind, who(id), t, addr, addr + bytes, dram_.size()));
  }
  BusBurst b;
  b.write = write;
  b.id = id;
  b.addr = addr;
  b.beats = beats;
  b.grant = t;
  b.slot = schedule_.reserve(write, t, beats);
  slots_.push_back(b);
  if (record_) log_.push_back(b);
}

std::string AxiDramSlave::describe_outstanding() const {
  if (!busy()) return "no burst outstanding";
  std::string s;
  for (const BusBurst& b : slots_) {
    if (!s.empty()) s += ", ";
    s += fmt::format("{} burst of {} at byte {} ({} beats, cycles {}..{})",
                     b.write ? "write" : "read", master_name(b.id), b.addr, b.beats, b.slot.first,
                     b.slot.last);
  }
  for (const BusBurst& b : responses_) {
    if (!s.empty()) s += ", ";
    s += fmt::format("write response of {} due in cycle {}", master_name(b.id), b.slot.response);
  }
  return s;
}

}  // namespace tessel::sim::rtl
