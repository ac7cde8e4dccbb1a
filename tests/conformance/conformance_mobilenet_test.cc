// mobilenetv2-12-int8's offloaded layers on fsim, cycle and rtl, default configuration.
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/conformance/conformance.h"
#include "tests/conformance/directed.h"
#include "tests/conformance/models.h"

namespace tessel::conformance {
namespace {

TEST(Conformance, MobilenetV2Int8) {
  const ConfigCase c = config_case("default");
  std::printf("[conformance] config %s = %s from %s\n", c.name.c_str(), c.cfg.label().c_str(),
              c.source.c_str());
  const std::vector<isa::Program> programs = model_layer_programs(mobilenet_model(), c.cfg, 7);
  ASSERT_EQ(programs.size(), 63u);  // 53 convolutions and the 10 residual adds
  Harness h(configs_of(programs));
  for (const isa::Program& p : programs) {
    EXPECT_TRUE(h.check(p, c.name).wrote_output) << p.name << ": no non-zero output byte";
  }
  TESSEL_CONFORMANCE_FINISH(h, c.name + "/MobilenetV2Int8");
}

}  // namespace
}  // namespace tessel::conformance
