// The graph executor on a hand-built Executable (CPU quantize/pack/unpack/dequantize steps around
// an accelerator conv step): outputs against an independent computation, identical results on
// fsim and cycle, the accelerator-vs-CPU check, 100 runs with identical outputs and cycle counts
// and flat resident memory, and the errors it reports.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "runtime/graph_executor.h"
#include "runtime/qnn.h"
#include "tests/runtime/hand_conv.h"

namespace tessel::runtime {
namespace {

bool have_cycle() {
  const auto k = Device::kinds();
  return std::find(k.begin(), k.end(), "cycle") != k.end();
}

HostTensor input_tensor() {
  HostTensor h;
  h.dtype = DType::kF32;
  h.shape = {1, 16, 2, 2};
  std::vector<float> v(64);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.05f * static_cast<float>(static_cast<int>(i * 37 % 101) - 50) + 0.01f;
  const auto* raw = reinterpret_cast<const uint8_t*>(v.data());
  h.bytes.assign(raw, raw + v.size() * sizeof(float));
  return h;
}

// Independent path: quantise with std::nearbyint, the reference conv, dequantise.
std::vector<float> expected_output(const testing::HandConv& hc) {
  const HostTensor in = input_tensor();
  std::vector<int8_t> xq(64);
  for (size_t i = 0; i < 64; ++i) {
    const double q = std::nearbyint(static_cast<double>(in.f32()[i] / 0.05f)) + hc.in_zero_point;
    xq[i] = static_cast<int8_t>(std::clamp(q, -128.0, 127.0));
  }
  std::vector<int8_t> yq(64);
  qconv2d_reference(hc.params(), xq.data(), hc.w.data(), hc.bias.data(), yq.data());
  std::vector<float> y(64);
  for (size_t i = 0; i < 64; ++i) y[i] = 0.25f * static_cast<float>(yq[i] - hc.out_zero_point);
  return y;
}

std::vector<float> as_floats(const HostTensor& t) {
  std::vector<float> v(t.bytes.size() / 4);
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

// AddressSanitizer quarantines freed memory, so resident size grows without a leak there (and
// LeakSanitizer checks leaks itself). gcc defines __SANITIZE_ADDRESS__; clang has the feature test.
#if defined(__SANITIZE_ADDRESS__)
#define TESSEL_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSEL_TEST_UNDER_ASAN 1
#endif
#endif
#if defined(TESSEL_TEST_UNDER_ASAN)
constexpr bool kRssMeaningful = false;
#else
constexpr bool kRssMeaningful = true;
#endif

long resident_pages() {
  std::ifstream f("/proc/self/statm");
  long size = 0, resident = 0;
  f >> size >> resident;
  return resident;
}

TEST(GraphExecutor, MatchesIndependentComputationOnFsim) {
  const isa::HwConfig cfg;
  testing::HandConv hc;
  const Executable exe = hc.executable(cfg);
  auto dev = Device::create("fsim", cfg, 1 << 22);
  GraphExecutor ge(exe, *dev);
  const auto out = ge.run({input_tensor()});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dtype, DType::kF32);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{1, 16, 2, 2}));
  const auto y = as_floats(out[0]);
  const auto expect = expected_output(hc);
  EXPECT_EQ(y, expect);
  // Not a degenerate case: some outputs clip at both ends of [clip_lo, clip_hi] or differ.
  EXPECT_NE(*std::min_element(y.begin(), y.end()), *std::max_element(y.begin(), y.end()));
  const auto& m = ge.measurements();
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[0].op, "quantize");
  EXPECT_EQ(m[2].name, "conv");
  EXPECT_EQ(m[2].placement, Placement::kAccel);
  EXPECT_TRUE(m[2].cpu_checked);
  EXPECT_TRUE(m[2].cpu_matches_accel);
  EXPECT_EQ(m[2].macs, 16 * 16 * 4);
  EXPECT_EQ(m[2].accel.counters.gemm_counter, 4u);
  EXPECT_EQ(m[2].accel.cycles, 0u);
  EXPECT_FALSE(m[2].cpu_cycles_source.empty());
}

TEST(GraphExecutor, FsimAndCycleGiveIdenticalOutputsAndStableCycles) {
  if (!have_cycle()) GTEST_SKIP() << "cycle simulator not built";
  const isa::HwConfig cfg;
  testing::HandConv hc;
  const Executable exe = hc.executable(cfg);
  auto fsim = Device::create("fsim", cfg, 1 << 22);
  auto cycle = Device::create("cycle", cfg, 1 << 22);
  GraphExecutor gf(exe, *fsim);
  ExecOptions opts;
  opts.cpu_repeats = 1;
  GraphExecutor gc(exe, *cycle, opts);
  const auto in = input_tensor();
  const auto of = gf.run({in});
  const auto oc = gc.run({in});
  EXPECT_EQ(oc[0].bytes, of[0].bytes);
  EXPECT_EQ(as_floats(oc[0]), expected_output(hc));
  const uint64_t cycles = gc.measurements()[2].accel.cycles;
  EXPECT_GT(cycles, 0u);
  EXPECT_EQ(gc.measurements()[2].accel.counters, gf.measurements()[2].accel.counters);

  // 100 runs: identical outputs and cycle counts, resident memory flat after the first run.
  const long rss_after_first = resident_pages();
  for (int r = 1; r < 100; ++r) {
    const auto o = gc.run({in});
    ASSERT_EQ(o[0].bytes, of[0].bytes) << "run " << r;
    ASSERT_EQ(gc.measurements()[2].accel.cycles, cycles) << "run " << r;
    ASSERT_TRUE(gc.measurements()[2].cpu_matches_accel);
  }
  const long growth = resident_pages() - rss_after_first;
  // A leak of more than ~650 bytes per run would exceed 16 pages (64 KiB) over 99 runs.
  if (kRssMeaningful) {
    EXPECT_LE(growth, 16) << "resident memory grew by " << growth << " pages over 99 runs";
  }
}

TEST(GraphExecutor, RepeatedRunsOnFsimKeepMemoryFlat) {
  const isa::HwConfig cfg;
  const Executable exe = testing::HandConv().executable(cfg);
  auto dev = Device::create("fsim", cfg, 1 << 22);
  GraphExecutor ge(exe, *dev);
  const auto in = input_tensor();
  const auto first = ge.run({in});
  const long rss = resident_pages();
  for (int r = 1; r < 100; ++r) ASSERT_EQ(ge.run({in})[0].bytes, first[0].bytes);
  if (kRssMeaningful) {
    EXPECT_LE(resident_pages() - rss, 16);
  }
  EXPECT_EQ(dev->total_counters().gemm_counter, 400u);
}

TEST(GraphExecutor, ExecutorUnloadsItsPrograms) {
  const isa::HwConfig cfg;
  const Executable exe = testing::HandConv().executable(cfg);
  auto dev = Device::create("fsim", cfg, 1 << 20);
  for (int i = 0; i < 3; ++i) {
    GraphExecutor ge(exe, *dev);
    ge.run({input_tensor()});
  }
  // All device memory is free again.
  EXPECT_EQ(dev->alloc(1 << 20, 4096), 0u);
}

TEST(GraphExecutor, SerialisedExecutableRunsTheSame) {
  const isa::HwConfig cfg;
  testing::HandConv hc;
  const Executable exe = Executable::deserialize(hc.executable(cfg).serialize());
  auto dev = Device::create("fsim", cfg, 1 << 22);
  GraphExecutor ge(exe, *dev);
  EXPECT_EQ(as_floats(ge.run({input_tensor()})[0]), expected_output(hc));
}

}  // namespace
}  // namespace tessel::runtime
