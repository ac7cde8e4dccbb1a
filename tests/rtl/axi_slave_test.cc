// The RTL testbench's AXI DRAM slave (sim/rtl/axi_slave.h) driven by a hand-written master, with
// cycles computed by hand from docs/microarchitecture.md section 2.3 (no RTL involved).
#include "sim/rtl/axi_slave.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <map>

namespace tessel::sim::rtl {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr int kBus = 8;        // 64-bit bus
constexpr uint64_t kLat = 3;   // DRAM_LATENCY

Dram pattern_dram(uint64_t bytes = 4096) {
  Dram d(bytes);
  for (uint64_t i = 0; i < bytes; ++i) d.data()[i] = uint8_t(i);
  return d;
}

MasterSignals read_req(uint8_t id, uint64_t addr, uint8_t len) {
  MasterSignals m;
  m.arvalid = true;
  m.arid = id;
  m.araddr = addr;
  m.arlen = len;
  m.arsize = 3;
  return m;
}

MasterSignals write_req(uint64_t addr, uint8_t len) {
  MasterSignals m;
  m.awvalid = true;
  m.awid = kStoreId;
  m.awaddr = addr;
  m.awlen = len;
  m.awsize = 3;
  return m;
}

struct Expect {
  bool rvalid = false;
  uint8_t rid = 0;
  bool rlast = false;
  uint64_t rfirst_byte = 0;  // the beat's bytes are rfirst_byte.. (pattern) unless rbytes given
  std::array<uint8_t, kBus> rbytes{};
  bool use_rbytes = false;
  bool wready = false;
  bool bvalid = false;
  uint8_t bid = 0;
};

TEST(RtlAxiSlave, HandComputedBusSchedule) {
  Dram dram = pattern_dram();
  AxiDramSlave slave(dram, kBus, kLat);
  slave.record_bursts(true);
  const std::array<uint8_t, kBus> w0 = {0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7};
  const std::array<uint8_t, kBus> w1 = {0xB0, 0xB1, 0xB2, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7};

  // Master outputs per cycle.
  std::map<uint64_t, MasterSignals> m;
  m[0] = read_req(kLoadId, 64, 1);     // 2 beats: first = max(0+1+3, 0) = 4, beats 4..5
  m[1] = read_req(kComputeId, 256, 0); // 1 beat:  first = max(1+1+3, 6) = 6
  m[2] = write_req(128, 1);            // 2 beats: first = max(2+1, 7) = 7, W in 7..8, B in 8+1+3 = 12
  m[7].wvalid = true;
  m[7].wdata = w0.data();
  m[7].wstrb = 0xFF;
  m[8].wvalid = true;
  m[8].wlast = true;
  m[8].wdata = w1.data();
  m[8].wstrb = 0x0F;                   // only the low four bytes of beat 1
  m[9] = read_req(kFetchId, 136, 0);   // first = max(9+1+3, 9) = 13: sees the written bytes

  std::map<uint64_t, Expect> e;
  e[4] = {.rvalid = true, .rid = kLoadId, .rlast = false, .rfirst_byte = 64};
  e[5] = {.rvalid = true, .rid = kLoadId, .rlast = true, .rfirst_byte = 72};
  e[6] = {.rvalid = true, .rid = kComputeId, .rlast = true, .rfirst_byte = 256};
  e[7] = {.wready = true};
  e[8] = {.wready = true};
  e[12] = {.bvalid = true, .bid = kStoreId};
  e[13] = {.rvalid = true, .rid = kFetchId, .rlast = true,
           .rbytes = {0xB0, 0xB1, 0xB2, 0xB3, 140, 141, 142, 143}, .use_rbytes = true};

  for (uint64_t t = 0; t <= 15; ++t) {
    SCOPED_TRACE(testing::Message() << "cycle " << t);
    const SlaveDrive& d = slave.drive(t);
    const Expect x = e.count(t) ? e[t] : Expect{};
    EXPECT_EQ(d.rvalid, x.rvalid);
    if (x.rvalid && d.rvalid) {
      EXPECT_EQ(d.rid, x.rid);
      EXPECT_EQ(d.rlast, x.rlast);
      for (int i = 0; i < kBus; ++i) {
        EXPECT_EQ(d.rdata[i], x.use_rbytes ? x.rbytes[i] : uint8_t(x.rfirst_byte + i)) << "byte " << i;
      }
    }
    EXPECT_EQ(d.wready, x.wready);
    EXPECT_EQ(d.bvalid, x.bvalid);
    if (x.bvalid) {
      EXPECT_EQ(d.bid, x.bid);
    }
    const MasterSignals ms = m.count(t) ? m[t] : MasterSignals{};
    const bool activity = slave.sample(t, ms);
    EXPECT_EQ(activity, m.count(t) > 0 || e.count(t) > 0);
  }
  EXPECT_FALSE(slave.busy());
  for (int i = 0; i < kBus; ++i) EXPECT_EQ(dram.data()[128 + i], w0[size_t(i)]);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(dram.data()[136 + i], w1[size_t(i)]);
  for (int i = 4; i < kBus; ++i) EXPECT_EQ(dram.data()[136 + i], uint8_t(136 + i));  // strobe off

  const std::vector<BusBurst>& log = slave.bursts();
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[0].slot.first, 4u);
  EXPECT_EQ(log[1].slot.first, 6u);
  EXPECT_EQ(log[2].slot.first, 7u);
  EXPECT_EQ(log[2].slot.response, 12u);
  EXPECT_EQ(log[3].slot.first, 13u);
}

TEST(RtlAxiSlave, ResetFreesTheBus) {
  Dram dram = pattern_dram();
  AxiDramSlave slave(dram, kBus, kLat);
  slave.drive(0);
  slave.sample(0, read_req(kLoadId, 0, 255));  // 256 beats reserved in 4..259
  EXPECT_TRUE(slave.busy());
  slave.reset(0);                              // a new run, latency 0
  EXPECT_FALSE(slave.busy());
  slave.drive(0);
  slave.sample(0, read_req(kLoadId, 8, 0));   // first = 0 + 1 + 0
  const SlaveDrive& d = slave.drive(1);
  ASSERT_TRUE(d.rvalid);
  EXPECT_EQ(d.rdata[0], 8);
}

// Runs `m` through the slave for cycles 0..n-1 (master outputs per cycle; default idle).
void run(AxiDramSlave& slave, std::map<uint64_t, MasterSignals> m, uint64_t n) {
  for (uint64_t t = 0; t < n; ++t) {
    slave.drive(t);
    slave.sample(t, m.count(t) ? m[t] : MasterSignals{});
  }
}

TEST(RtlAxiSlave, MissingWriteBeatIsAnError) {
  Dram dram = pattern_dram();
  AxiDramSlave slave(dram, kBus, kLat);
  // W beat reserved in cycle 1 (first = max(0 + 1, 0)), but WVALID stays low.
  EXPECT_THAT([&] { run(slave, {{0, write_req(512, 0)}}, 3); },
              testing::ThrowsMessage<SimError>(AllOf(HasSubstr("store master (axi id 3)"),
                                                     HasSubstr("WVALID low"),
                                                     HasSubstr("cycle 1"), HasSubstr("byte 512"))));
}

TEST(RtlAxiSlave, WrongWlastIsAnError) {
  Dram dram = pattern_dram();
  AxiDramSlave slave(dram, kBus, kLat);
  const std::array<uint8_t, kBus> w{};
  MasterSignals beat;
  beat.wvalid = true;
  beat.wlast = true;  // beat 0 of 2
  beat.wdata = w.data();
  beat.wstrb = 0xFF;
  EXPECT_THAT([&] { run(slave, {{0, write_req(512, 1)}, {1, beat}}, 3); },
              testing::ThrowsMessage<SimError>(HasSubstr("WLAST 1 on write beat 0 of 2")));
}

TEST(RtlAxiSlave, OutOfRangeBurstNamesMasterAndAddress) {
  Dram dram = pattern_dram(4096);
  AxiDramSlave slave(dram, kBus, kLat);
  // 2 beats at 4088: bytes [4088, 4104) pass the end of a 4096-byte DRAM.
  EXPECT_THAT([&] { run(slave, {{0, read_req(kLoadId, 4088, 1)}}, 1); },
              testing::ThrowsMessage<SimError>(AllOf(HasSubstr("load master (axi id 1)"),
                                                     HasSubstr("bytes [4088, 4104)"),
                                                     HasSubstr("dram holds 4096 bytes"))));
}

TEST(RtlAxiSlave, ProtocolViolationsAreErrors) {
  Dram dram = pattern_dram();
  {
    AxiDramSlave slave(dram, kBus, kLat);
    MasterSignals m = write_req(0, 0);
    m.awid = kLoadId;
    EXPECT_THAT([&] { run(slave, {{0, m}}, 1); },
                testing::ThrowsMessage<SimError>(HasSubstr("only store writes")));
  }
  {
    AxiDramSlave slave(dram, kBus, kLat);
    MasterSignals m = read_req(kFetchId, 4, 0);  // not aligned to the 8-byte bus
    EXPECT_THAT([&] { run(slave, {{0, m}}, 1); },
                testing::ThrowsMessage<SimError>(HasSubstr("not aligned")));
  }
  {
    AxiDramSlave slave(dram, kBus, kLat);
    MasterSignals m = read_req(kFetchId, 0, 0);
    m.arsize = 4;  // 16-byte beats on an 8-byte bus
    EXPECT_THAT([&] { run(slave, {{0, m}}, 1); },
                testing::ThrowsMessage<SimError>(HasSubstr("has size 4")));
  }
  {
    AxiDramSlave slave(dram, kBus, kLat);
    MasterSignals m = read_req(kFetchId, 0, 0);
    m.rready = false;  // the beat arrives in cycle 0 + 1 + 3 = 4
    MasterSignals refuse;
    refuse.rready = false;
    EXPECT_THAT([&] { run(slave, {{0, m}, {4, refuse}}, 5); },
                testing::ThrowsMessage<SimError>(AllOf(HasSubstr("RREADY low"), HasSubstr("cycle 4"))));
  }
  {
    AxiDramSlave slave(dram, kBus, kLat);
    MasterSignals both = read_req(kFetchId, 0, 0);
    both.awvalid = true;
    both.awid = kStoreId;
    both.awsize = 3;
    EXPECT_THAT([&] { run(slave, {{0, both}}, 1); },
                testing::ThrowsMessage<SimError>(HasSubstr("same cycle 0")));
  }
}

TEST(RtlAxiSlave, RejectsBadBusWidth) {
  Dram dram(64);
  EXPECT_THROW(AxiDramSlave(dram, 12, 0), UserError);
  EXPECT_THROW(AxiDramSlave(dram, 128, 0), UserError);
}

}  // namespace
}  // namespace tessel::sim::rtl
