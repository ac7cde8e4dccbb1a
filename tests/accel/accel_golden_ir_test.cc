// Golden test: the loop-IR dump after every pass for one small layer. Regenerate the golden file
// with TESSEL_UPDATE_GOLDEN=1 after an intended change and review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "accel_test_util.h"

namespace tessel::compiler::accel {
namespace {

TEST(AccelGolden, LoopIrDumpOfASmallConv) {
  // 16 -> 16 channels, 4x4, 3x3 pad 1, bias + per-tensor requant; 2 row tiles on 2 threads
  const AccelLayer layer = testing::make_layer(
      {.name = "small", .ic = 16, .ih = 4, .iw = 4, .oc = 16,
       .rq = testing::LayerSpec::Rq::kPerTensor});
  LowerOptions opts;
  opts.knobs.oh_tile = 2;
  opts.dump_ir_after = "all";
  const LoweredLayer low = lower_conv2d(layer, isa::HwConfig{}, opts);
  const std::string path = std::string(TESSEL_SOURCE_DIR) + "/tests/golden/accel/small_conv.ir";
  if (const char* u = std::getenv("TESSEL_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    std::ofstream(path, std::ios::binary) << low.ir_dump;
  }
  std::ifstream f(path, std::ios::binary);
  ASSERT_TRUE(f.good()) << "missing golden file " << path;
  std::stringstream want;
  want << f.rdbuf();
  // report the first differing line (the dump is long)
  std::istringstream got_lines(low.ir_dump), want_lines(want.str());
  std::string g, w;
  for (int line = 1;; ++line) {
    const bool has_g = static_cast<bool>(std::getline(got_lines, g));
    const bool has_w = static_cast<bool>(std::getline(want_lines, w));
    if (!has_g && !has_w) break;
    if (g != w || has_g != has_w) {
      ADD_FAILURE() << "golden mismatch at line " << line << "\n  got:  " << (has_g ? g : "<end>")
                    << "\n  want: " << (has_w ? w : "<end>");
      break;
    }
  }
  // one dump per pass plus the schedule
  size_t dumps = 0;
  for (size_t pos = 0; (pos = low.ir_dump.find("// ---- IR after ", pos)) != std::string::npos;
       ++pos) {
    ++dumps;
  }
  EXPECT_EQ(dumps, 9u);
}

TEST(AccelGolden, DumpAfterOnePass) {
  const AccelLayer layer =
      testing::make_layer({.name = "one", .ic = 16, .ih = 4, .iw = 4, .oc = 16});
  LowerOptions opts;
  opts.dump_ir_after = "fold_uop_loops";
  const LoweredLayer low = lower_conv2d(layer, isa::HwConfig{}, opts);
  EXPECT_EQ(low.ir_dump.rfind("// ---- IR after fold_uop_loops ----\n", 0), 0u);
  EXPECT_EQ(low.ir_dump.find("// ---- IR after", 10), std::string::npos);
  EXPECT_NE(low.ir_dump.find("kernel 0:"), std::string::npos);
}

}  // namespace
}  // namespace tessel::compiler::accel
