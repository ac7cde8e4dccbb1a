// The RTL testbench's AXI4 slave: device DRAM (sim::Dram) behind the shared data-bus schedule of
// docs/microarchitecture.md section 2.3 (sim::BusSchedule). Cycle-based and independent of
// Verilator, so it is unit-tested with a C++ master (tests/rtl/axi_slave_test.cc).
//
// Each cycle t the testbench calls drive(t) to get what the slave presents in cycle t (R beat,
// WREADY, B response; ARREADY and AWREADY are always 1), lets the master settle, then calls
// sample(t, ...) with the master's outputs of cycle t:
//  * an AR or AW handshake (ARVALID or AWVALID high) is a burst granted in cycle t; it reserves
//    the bus: reads  first = max(t + 1 + L, bus_free), beats first .. first+b-1 (RVALID, RID,
//                    RDATA = the DRAM word at the beat's address read in that cycle, RLAST);
//             writes first = max(t + 1, bus_free), WREADY in first .. first+b-1, and BVALID (BID)
//                    in first + b + L.
//  * in a cycle with WREADY the master must present WVALID (else SimError), with WLAST on the
//    burst's last beat; the bytes whose WSTRB bit is set are written to DRAM in that cycle.
//  * the master must accept every R beat and B response (RREADY, BREADY high when presented).
// Errors (all SimError, naming the master by its AXI ID: 0 fetch, 1 load, 2 compute, 3 store):
// a burst outside DRAM, an unaligned address, ARSIZE/AWSIZE other than log2 of the bus bytes, a
// burst type other than INCR, AR and AW in one cycle, a write from a master that is not the
// store module, a missing W beat or a wrong WLAST, a refused R beat or B response.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "sim/common/bus_schedule.h"
#include "sim/common/simulator.h"

namespace tessel::sim::rtl {

/// AXI IDs of the accelerator's four masters (docs/microarchitecture.md section 2.2).
inline constexpr int kFetchId = 0, kLoadId = 1, kComputeId = 2, kStoreId = 3;

/// "fetch", "load", "compute" or "store" for AXI ID 0..3 ("id N" otherwise).
std::string master_name(unsigned id);

/// What the slave drives in one cycle (inputs of the accelerator).
struct SlaveDrive {
  bool rvalid = false;
  uint8_t rid = 0;
  bool rlast = false;
  const uint8_t* rdata = nullptr;  ///< bus-width bytes, valid while rvalid (until the next drive)
  bool wready = false;
  bool bvalid = false;
  uint8_t bid = 0;
};

/// The master's outputs in one cycle (outputs of the accelerator). Byte arrays are bus width.
struct MasterSignals {
  bool arvalid = false;
  uint8_t arid = 0;
  uint64_t araddr = 0;
  uint8_t arlen = 0;    ///< beats - 1
  uint8_t arsize = 0;   ///< log2 bytes per beat
  uint8_t arburst = 1;  ///< 1 = INCR
  bool awvalid = false;
  uint8_t awid = 0;
  uint64_t awaddr = 0;
  uint8_t awlen = 0;
  uint8_t awsize = 0;
  uint8_t awburst = 1;
  bool wvalid = false;
  bool wlast = false;
  const uint8_t* wdata = nullptr;
  uint64_t wstrb = 0;   ///< bit i enables byte i of the beat (buses up to 64 bytes)
  bool rready = true;
  bool bready = true;
};

/// One burst on the data bus (for tests and diagnostics).
struct BusBurst {
  bool write = false;
  uint8_t id = 0;
  uint64_t addr = 0;     ///< bus-aligned byte address of beat 0
  uint64_t beats = 0;
  uint64_t grant = 0;    ///< cycle of the AR/AW handshake
  BusSlot slot;          ///< reserved cycles (BusSchedule)
};

/// The AXI4 DRAM slave. Cycles are relative to the run (0 = fetch's first request cycle).
class AxiDramSlave {
 public:
  /// `bus_bytes`: beat width in bytes (a power of two, 1..64); `latency`: DRAM_LATENCY cycles.
  /// Throws UserError for a bus width outside 1..64 bytes or not a power of two.
  AxiDramSlave(Dram& dram, int bus_bytes, uint64_t latency);

  /// Forgets every burst: the bus is free at cycle 0 of a new run with latency `latency`.
  void reset(uint64_t latency);

  /// What the slave presents in cycle `t`. Calls must go in increasing cycle order, one per
  /// cycle, each followed by sample(t).
  const SlaveDrive& drive(uint64_t t);

  /// The master's outputs in cycle `t` (after drive(t)). Returns true when anything happened on
  /// the bus in this cycle (a handshake, a beat or a response). Throws SimError as listed above.
  bool sample(uint64_t t, const MasterSignals& m);

  /// True while a burst or write response is outstanding.
  bool busy() const { return !slots_.empty() || !responses_.empty(); }
  /// Bursts granted since reset(), in grant order (recorded when record_bursts(true)).
  const std::vector<BusBurst>& bursts() const { return log_; }
  void record_bursts(bool on) { record_ = on; }
  /// A one-line description of the outstanding bursts, for no-progress diagnostics.
  std::string describe_outstanding() const;

 private:
  void grant(uint64_t t, bool write, uint8_t id, uint64_t addr, uint8_t len, uint8_t size,
             uint8_t burst);

  Dram& dram_;
  int bus_bytes_;
  int log_bus_bytes_;
  BusSchedule schedule_;
  std::deque<BusBurst> slots_;      ///< reserved bursts in bus order (first beat ascending)
  std::deque<BusBurst> responses_;  ///< writes whose last beat passed, awaiting their B cycle
  SlaveDrive drive_;
  bool driven_write_ = false;       ///< drive(t) asserted WREADY for the head write burst
  bool driven_read_ = false;        ///< drive(t) presented an R beat
  bool driven_resp_ = false;        ///< drive(t) presented a B response
  std::vector<uint8_t> rbuf_;
  bool record_ = false;
  std::vector<BusBurst> log_;
};

}  // namespace tessel::sim::rtl
