// The device API: deterministic first-fit allocation with alignment and coalescing, copies, and
// loading and running a hand-built Program on fsim (and cycle when built).
#include <gtest/gtest.h>

#include "runtime/device.h"
#include "runtime/qnn.h"
#include "tests/runtime/hand_conv.h"

namespace tessel::runtime {
namespace {

TEST(Device, FirstFitAllocationIsDeterministic) {
  auto dev = Device::create("fsim", isa::HwConfig{}, 1 << 20);
  EXPECT_EQ(dev->kind(), "fsim");
  const DeviceAddr a = dev->alloc(100, 4096);
  const DeviceAddr b = dev->alloc(10, 64);
  EXPECT_EQ(a, 0u);
  EXPECT_EQ(b, 128u);  // first free byte 100, aligned up to 64
  dev->free(a);        // [0, 128) is free again (coalesced with the alignment gap)
  const DeviceAddr c = dev->alloc(50, 16);
  EXPECT_EQ(c, 0u);
  const DeviceAddr d = dev->alloc(200, 16);
  EXPECT_EQ(d, 144u);  // [50, 128) is too small; next free byte 138 aligned to 16
  const DeviceAddr e = dev->alloc(60, 8);
  EXPECT_EQ(e, 56u);   // fits in the gap [50, 128)
  dev->free(b);
  dev->free(c);
  dev->free(d);
  dev->free(e);
  // Everything coalesced back into one block: the whole DRAM can be allocated again.
  EXPECT_EQ(dev->alloc(1 << 20, 4096), 0u);
}

TEST(Device, CopyRoundTrip) {
  auto dev = Device::create("fsim", isa::HwConfig{}, 1 << 20);
  const DeviceAddr a = dev->alloc(64);
  std::vector<uint8_t> src(64), dst(64, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 3 + 1);
  dev->copy_to_device(a, src.data(), 64);
  dev->copy_from_device(dst.data(), a, 64);
  EXPECT_EQ(dst, src);
  std::vector<uint8_t> part(8, 0);
  dev->copy_from_device(part.data(), a + 56, 8);
  EXPECT_EQ(part, std::vector<uint8_t>(src.begin() + 56, src.end()));
}

void run_hand_conv(const std::string& kind) {
  const isa::HwConfig cfg;
  testing::HandConv hc;
  const isa::Program prog = hc.program(cfg);
  auto dev = Device::create(kind, cfg, 1 << 22);
  const LoadedProgram lp = dev->load(prog);
  EXPECT_EQ(lp.image_base % isa::kImageAlign, 0u);
  EXPECT_EQ(lp.insn_count, prog.insns.size());
  // NCHWnc with one 16-channel block: pixel-major, 16 channels each.
  std::vector<int8_t> x_nchw(64), x_packed(64);
  for (int c = 0; c < 16; ++c) {
    for (int px = 0; px < 4; ++px) {
      const int8_t v = static_cast<int8_t>((c * 11 + px * 29) % 97 - 40);
      x_nchw[static_cast<size_t>(c * 4 + px)] = v;
      x_packed[static_cast<size_t>(px * 16 + c)] = v;
    }
  }
  dev->copy_to_device(lp.segment_addr(prog, "inp"), x_packed.data(), 64);
  dev->submit(lp);
  const sim::RunStats st = dev->wait();
  std::vector<int8_t> y_packed(64);
  dev->copy_from_device(y_packed.data(), lp.segment_addr(prog, "out"), 64);
  std::vector<int8_t> y_ref(64);
  qconv2d_reference(hc.params(), x_nchw.data(), hc.w.data(), hc.bias.data(), y_ref.data());
  for (int o = 0; o < 16; ++o) {
    for (int px = 0; px < 4; ++px) {
      EXPECT_EQ(y_packed[static_cast<size_t>(px * 16 + o)], y_ref[static_cast<size_t>(o * 4 + px)])
          << kind << " channel " << o << " pixel " << px;
    }
  }
  EXPECT_EQ(st.counters.gemm_counter, 4u);        // 1 * 1 * 4 uops
  EXPECT_EQ(st.counters.alu_counter, 6u * 4u);    // six ALU instructions over 4 uops
  EXPECT_EQ(st.counters.insn_count, prog.insns.size());
  EXPECT_EQ(st.counters.inp_load_nbytes, 64u);
  EXPECT_EQ(st.counters.wgt_load_nbytes, 256u);
  EXPECT_EQ(st.counters.out_store_nbytes, 64u);
  if (kind == "fsim") {
    EXPECT_EQ(st.cycles, 0u);
  } else {
    EXPECT_GT(st.cycles, 0u);
  }
  dev->submit(lp);
  const sim::RunStats st2 = dev->wait();
  EXPECT_EQ(st2.cycles, st.cycles);
  EXPECT_EQ(dev->total_counters().gemm_counter, 8u);
  dev->unload(lp);
}

TEST(Device, RunsHandBuiltConvOnFsim) { run_hand_conv("fsim"); }

TEST(Device, RunsHandBuiltConvOnCycle) {
  const auto kinds = Device::kinds();
  if (std::find(kinds.begin(), kinds.end(), "cycle") == kinds.end()) {
    GTEST_SKIP() << "cycle simulator not built";
  }
  run_hand_conv("cycle");
}

TEST(Device, UnloadFreesTheProgramsMemory) {
  const isa::HwConfig cfg;
  testing::HandConv hc;
  const isa::Program prog = hc.program(cfg);
  auto dev = Device::create("fsim", cfg, 1 << 20);
  const LoadedProgram a = dev->load(prog);
  dev->unload(a);
  const LoadedProgram b = dev->load(prog);
  EXPECT_EQ(b.image_base, a.image_base);
  EXPECT_EQ(b.insn_base, a.insn_base);
}

}  // namespace
}  // namespace tessel::runtime
