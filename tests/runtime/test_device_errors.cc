// Device API misuse fails with UserErrors that name the values.
#include <gtest/gtest.h>

#include "runtime/device.h"
#include "tests/runtime/hand_conv.h"

namespace tessel::runtime {
namespace {

template <typename F>
std::string user_error(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}
#define EXPECT_MSG(msg, text) EXPECT_NE((msg).find(text), std::string::npos) << (msg)

TEST(DeviceErrors, UnknownKindListsValidKinds) {
  const std::string msg = user_error([] { Device::create("fpga", isa::HwConfig{}, 1 << 20); });
  EXPECT_MSG(msg, "unknown device kind 'fpga'; valid kinds: ");
  EXPECT_MSG(msg, "fsim");
}

TEST(DeviceErrors, ExhaustedDramNamesTheSizes) {
  auto dev = Device::create("fsim", isa::HwConfig{}, 1 << 20);
  dev->alloc(1 << 19, 4096);
  const std::string msg = user_error([&] { dev->alloc(1 << 20, 4096); });
  EXPECT_MSG(msg, "device dram exhausted: cannot allocate 1048576 bytes aligned to 4096 "
                  "(524288 of 1048576 bytes in use, largest free block 524288 bytes)");
}

TEST(DeviceErrors, BadAllocArguments) {
  auto dev = Device::create("fsim", isa::HwConfig{}, 1 << 20);
  EXPECT_MSG(user_error([&] { dev->alloc(0); }), "device alloc of 0 bytes");
  EXPECT_MSG(user_error([&] { dev->alloc(16, 48); }), "alignment 48 is not a power of two");
  EXPECT_MSG(user_error([&] { Device::create("fsim", isa::HwConfig{}, 100); }),
             "device dram size 100 bytes is below the minimum of 4096 bytes");
}

TEST(DeviceErrors, BadFree) {
  auto dev = Device::create("fsim", isa::HwConfig{}, 1 << 20);
  const DeviceAddr a = dev->alloc(64, 4096);
  dev->alloc(64, 4096);
  EXPECT_MSG(user_error([&] { dev->free(a + 8); }),
             "device free of address 0x8, which is not a live allocation");
  dev->free(a);
  EXPECT_MSG(user_error([&] { dev->free(a); }), "which is not a live allocation");
}

TEST(DeviceErrors, CopyOutsideAllocations) {
  auto dev = Device::create("fsim", isa::HwConfig{}, 1 << 20);
  const DeviceAddr a = dev->alloc(64, 4096);
  std::vector<uint8_t> buf(128);
  EXPECT_MSG(user_error([&] { dev->copy_to_device(a + 32, buf.data(), 64); }),
             "copy to device of bytes [0x20, 0x60) runs outside the allocation [0x0, 0x40)");
  EXPECT_MSG(user_error([&] { dev->copy_from_device(buf.data(), 0x10000, 4); }),
             "copy from device of bytes [0x10000, 0x10004) runs outside the allocation");
  EXPECT_MSG(user_error([&] { dev->copy_from_device(buf.data(), uint64_t{1} << 40, 4); }),
             "runs outside the allocation");
}

TEST(DeviceErrors, ProgramMisuse) {
  const isa::HwConfig cfg;
  testing::HandConv hc;
  auto dev = Device::create("fsim", cfg, 1 << 20);
  EXPECT_MSG(user_error([&] { dev->wait(); }), "device wait() without a completed submit()");
  isa::HwConfig other = cfg;
  other.log_batch = 1;
  isa::Program p = hc.program(cfg);
  p.config = other;
  EXPECT_MSG(user_error([&] { dev->load(p); }),
             "program 'hand_conv1x1' was built for config 2x16_i8w8a32_15_15_18_17, but the fsim "
             "device has config 1x16_i8w8a32_15_15_18_17");
  isa::Program empty = hc.program(cfg);
  empty.insns.clear();
  EXPECT_MSG(user_error([&] { dev->load(empty); }), "program 'hand_conv1x1' has no instructions");
  const LoadedProgram lp = dev->load(hc.program(cfg));
  EXPECT_MSG(user_error([&] { dev->free(lp.image_base); }), "belongs to a loaded program");
  dev->unload(lp);
  EXPECT_MSG(user_error([&] { dev->unload(lp); }), "that is not loaded");
  EXPECT_MSG(user_error([&] { dev->submit(lp); }), "submit of a program at image");
  // A Program too large for the DRAM leaves nothing allocated behind.
  auto small = Device::create("fsim", cfg, 16384);
  EXPECT_MSG(user_error([&] { small->load(hc.program(cfg)); }), "device dram exhausted");
  EXPECT_EQ(small->alloc(16384, 4096), 0u);
}

TEST(DeviceErrors, IllegalStreamLeavesDeviceUsable) {
  const isa::HwConfig cfg;
  testing::HandConv hc;
  auto dev = Device::create("fsim", cfg, 1 << 22);
  isa::Program bad = hc.program(cfg);
  bad.insns[4].uop_end = 9000;  // GEMM uop range beyond the uop buffer depth
  const LoadedProgram lb = dev->load(bad);
  EXPECT_THROW(dev->submit(lb), sim::SimError);
  EXPECT_THROW(dev->wait(), UserError);
  const LoadedProgram good = dev->load(hc.program(cfg));
  dev->submit(good);
  EXPECT_EQ(dev->wait().counters.gemm_counter, 4u);
}

}  // namespace
}  // namespace tessel::runtime
