// End-to-end: the float reference (ReferenceModel) on every staged model and sample against the
// ONNX Runtime outputs in data/reference (reference_outputs.json): top-1 equal, values close.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "compiler/driver/compile.h"
#include "tests/compiler/test_util.h"

namespace tessel::compiler {
namespace {

TEST(ReferenceModel, MatchesOnnxRuntimeOnEveryStagedRun) {
  std::ifstream f(testing::data_path("reference/reference_outputs.json"));
  ASSERT_TRUE(f.good());
  const auto j = nlohmann::json::parse(f);
  std::map<std::string, ReferenceModel> models;
  int runs = 0;
  for (const auto& run : j.at("runs")) {
    const std::string model = run.at("model").get<std::string>();  // "models/onnx-zoo/x.onnx"
    SCOPED_TRACE(model + " " + run.at("input_file").get<std::string>());
    if (!models.count(model)) models.emplace(model, ReferenceModel::load(testing::model_path(model.substr(7))));
    const ReferenceModel& m = models.at(model);
    EXPECT_EQ(m.input_names().at(0), run.at("input_name").get<std::string>());
    const auto shape = run.at("input_shape").get<std::vector<int64_t>>();
    EXPECT_EQ(m.input_shapes().at(0), shape);
    const auto x = testing::read_f32(testing::data_path(run.at("input_file").get<std::string>().substr(5)));
    const auto want = testing::read_f32(testing::data_path(run.at("output_file").get<std::string>().substr(5)));
    const auto out = m.run({testing::host_f32(shape, x)});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape, run.at("output_shape").get<std::vector<int64_t>>());
    const auto got = testing::floats(out[0]);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(testing::argmax(got), testing::argmax(want));
    EXPECT_EQ(static_cast<int64_t>(testing::argmax(got)), run.at("top5").at(0).at("index").get<int64_t>());
    float max_ref = 0;
    for (float v : want) max_ref = std::max(max_ref, std::fabs(v));
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f * std::max(1.0f, max_ref)) << i;
    ++runs;
  }
  EXPECT_EQ(runs, 40);
  EXPECT_EQ(models.size(), 7u);
}

TEST(ReferenceModel, RejectsWrongInputs) {
  const auto m = ReferenceModel::load(testing::model_path("onnx-zoo/mnist-12.onnx"));
  EXPECT_THROW(m.run({}), UserError);
  EXPECT_THROW(m.run({testing::host_f32({1, 1, 28, 27}, std::vector<float>(28 * 27, 0.0f))}), UserError);
}

}  // namespace
}  // namespace tessel::compiler
