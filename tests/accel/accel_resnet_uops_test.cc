// ResNet-18 v1 convolutions C2..C12 (../shared/reference/workloads.md, original labels; C3 has
// count 0 in resnet18_v1): lower each for the default configuration and compare the GEMM uops of
// the stream with the ideal (MACs rounded to blocks / 256). Prints the table and the total
// weighted by the occurrence counts (ideal total: 6,623,232 uops).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "accel_test_util.h"

namespace tessel::compiler::accel {
namespace {

struct ResnetLayer {
  const char* label;
  int64_t hw, ic, oc, k, pad, stride, count, published_uops;
};

TEST(AccelResnet18, GemmUopsMatchTheIdeal) {
  const ResnetLayer layers[] = {
      {"C2", 56, 64, 64, 3, 1, 1, 4, 451584},   {"C3", 56, 64, 64, 1, 0, 1, 0, 50176},
      {"C4", 56, 64, 128, 3, 1, 2, 1, 225792},  {"C5", 56, 64, 128, 1, 0, 2, 1, 25088},
      {"C6", 28, 128, 128, 3, 1, 1, 3, 451584}, {"C7", 28, 128, 256, 3, 1, 2, 1, 225792},
      {"C8", 28, 128, 256, 1, 0, 2, 1, 25088},  {"C9", 14, 256, 256, 3, 1, 1, 3, 451584},
      {"C10", 14, 256, 512, 3, 1, 2, 1, 225792}, {"C11", 14, 256, 512, 1, 0, 2, 1, 25088},
      {"C12", 7, 512, 512, 3, 1, 1, 3, 451584},
  };
  int64_t total = 0, total_ideal = 0;
  std::string table = "label | gemm uops | ideal | ratio | schedule\n";
  for (const ResnetLayer& r : layers) {
    testing::LayerSpec s{.name = r.label, .ic = r.ic, .ih = r.hw, .iw = r.hw, .oc = r.oc,
                         .kh = r.k, .kw = r.k, .stride = r.stride, .pt = r.pad, .pl = r.pad,
                         .pb = r.pad, .pr = r.pad, .rq = testing::LayerSpec::Rq::kPow2};
    const AccelLayer layer = testing::make_layer(s);
    const LoweredLayer low = lower_conv2d(layer, isa::HwConfig{});
    const int64_t uops = testing::static_gemm_uops(low.program);
    EXPECT_EQ(low.ideal_gemm_uops, r.published_uops) << r.label;
    EXPECT_EQ(uops, low.ideal_gemm_uops) << r.label;
    total += uops * r.count;
    total_ideal += low.ideal_gemm_uops * r.count;
    table += fmt::format("{} | {} | {} | {:.3f} | {}\n", r.label, uops, low.ideal_gemm_uops,
                         double(uops) / double(low.ideal_gemm_uops), low.schedule);
  }
  table += fmt::format("total (weighted by count) | {} | {} | {:.3f}\n", total, total_ideal,
                       double(total) / double(total_ideal));
  std::printf("%s", table.c_str());
  EXPECT_EQ(total_ideal, 6623232);
  EXPECT_EQ(total, 6623232);
}

}  // namespace
}  // namespace tessel::compiler::accel
