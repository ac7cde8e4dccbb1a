// The offloaded layers of the small bundled int8 models (mnist-12-int8, ic01 resnet8, kws01
// dscnn; tests/conformance/models.h) compiled for one configuration, TESSEL_CONFORMANCE_CONFIG,
// and run on fsim, cycle and rtl.
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/conformance/conformance.h"
#include "tests/conformance/directed.h"
#include "tests/conformance/models.h"

#ifndef TESSEL_CONFORMANCE_CONFIG
#error "TESSEL_CONFORMANCE_CONFIG (the configuration name) must be defined by CMake"
#endif

namespace tessel::conformance {
namespace {

TEST(Conformance, SmallModels) {
  const ConfigCase c = config_case(TESSEL_CONFORMANCE_CONFIG);
  std::printf("[conformance] config %s = %s from %s\n", c.name.c_str(), c.cfg.label().c_str(),
              c.source.c_str());
  std::vector<isa::Program> programs;
  for (const BundledModel& m : small_models()) {
    const std::vector<isa::Program> layers =
        model_layer_programs(m, c.cfg, 1000 * programs.size() + 1);
    EXPECT_FALSE(layers.empty()) << m.name << ": no offloaded layer";
    programs.insert(programs.end(), layers.begin(), layers.end());
  }
  Harness h(configs_of(programs));
  for (const isa::Program& p : programs) {
    EXPECT_TRUE(h.check(p, c.name).wrote_output) << p.name << ": no non-zero output byte";
  }
  TESSEL_CONFORMANCE_FINISH(h, c.name + "/SmallModels");
}

}  // namespace
}  // namespace tessel::conformance
