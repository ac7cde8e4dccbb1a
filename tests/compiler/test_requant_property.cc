// Property tests of the requant derivation (compiler/passes/requant.h) against exact integer
// arithmetic (tests/compiler/requant_check.h): for random layers (scales from 2^-40 to 2^8,
// accumulator ranges from one value to the whole int32 range, every zero point and clip) and
// for every qconv2d layer of the bundled int8 models, every checked accumulator gives the
// one-rounding value, no 32-bit step wraps, the scale is within 2^-shift and the result is
// round(acc * M) exactly (for float32 scales always; a double scale may leave a channel
// reported inexact, then within its stated error of a rounding boundary). Every accumulator
// next to a rounding boundary of M is checked (boundary_accs). Ranges of up to
// 2^22 values are checked exhaustively, larger ones at both ends, 0 and the clamp bounds
// (+-window) and at random points. Set TESSEL_REQUANT_FIGURES=1 to print per-layer figures.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>

#include "compiler/frontend/onnx_import.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/requant.h"
#include "tests/compiler/requant_check.h"
#include "tests/compiler/test_util.h"

namespace tessel::compiler {
namespace {

using passes::AccRange;

bool print_figures() { return std::getenv("TESSEL_REQUANT_FIGURES") != nullptr; }

/// Checks one derived layer; returns the number of accumulators checked.
int64_t check_layer(const std::vector<double>& m, const std::vector<AccRange>& r, int32_t zp, int32_t lo, int32_t hi,
                    const std::string& where, int64_t exhaustive, int64_t window, int64_t random, std::mt19937_64& rng,
                    passes::RequantFigures* fig_out = nullptr, bool must_be_exact = true) {
  passes::RequantFigures fig;
  runtime::Requant rq;
  try {
    rq = passes::derive_requant(m, r, zp, where, lo, hi, &fig);
  } catch (const std::exception& e) {
    std::string layer;
    for (size_t c = 0; c < m.size(); ++c) layer += fmt::format(" M[{}] = {:a} range [{}, {}]", c, m[c], r[c].lo, r[c].hi);
    ADD_FAILURE() << where << ":" << layer << " zero point " << zp << " clip [" << lo << ", " << hi << "]: " << e.what();
    return 0;
  }
  EXPECT_EQ(runtime::requant_problem(rq, static_cast<int64_t>(m.size())), "") << where;
  int64_t n = 0;
  for (size_t c = 0; c < m.size(); ++c) {
    // (2) the accuracy bound: M' is within one step of the shift's grid of M (or a degenerate case).
    const double grid = std::ldexp(1.0, -rq.shift_at(c));
    if (m[c] >= std::ldexp(1.0, -32) && m[c] < std::ldexp(1.0, 30) && lo < hi) {  // (the stated exceptions)
      EXPECT_LE(std::fabs(fig.scale[c] - m[c]), grid) << where << " channel " << c;
    }
    const auto accs = testing::sample_accs(rq, c, r[c], exhaustive, window, random, rng, m[c]);
    const bool inexact = std::find(fig.inexact_channels.begin(), fig.inexact_channels.end(), static_cast<int>(c)) !=
                         fig.inexact_channels.end();
    if (inexact) {
      EXPECT_GT(fig.max_error_lsb[c], 0.0) << where << " channel " << c << " reported inexact";
    }
    n += testing::check_channel(rq, c, m[c], inexact ? fig.max_error_lsb[c] : 0.0, accs,
                                fmt::format("{} ({})", where, fig.form));
  }
  // (3) exact: every channel of a float32 scale (what the requant pass hands over) rounds like M
  if (must_be_exact) {
    for (int c : fig.inexact_channels) {
      ADD_FAILURE() << where << ": channel " << c << " (M = " << fmt::format("{:a}", m[static_cast<size_t>(c)])
                    << ", range [" << r[static_cast<size_t>(c)].lo << ", " << r[static_cast<size_t>(c)].hi
                    << "], zero point " << zp << ", clip [" << lo << ", " << hi << "]) is reported inexact";
    }
  }
  if (fig_out) *fig_out = fig;
  return n;
}

TEST(RequantProperty, RandomLayers) {
  std::mt19937_64 rng(20240607);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  auto uniform = [&](int64_t a, int64_t b) { return std::uniform_int_distribution<int64_t>(a, b)(rng); };
  int64_t checked = 0, wide_channels = 0, inexact_channels = 0;
  for (int layer = 0; layer < 3000; ++layer) {
    const int oc = static_cast<int>(uniform(1, 3));
    std::vector<double> m;
    std::vector<AccRange> r;
    const int kind = static_cast<int>(uniform(0, 3));
    for (int c = 0; c < oc; ++c) {
      double s = std::ldexp(1.0, -40 + static_cast<int>(48 * u01(rng))) * (1.0 + u01(rng));
      if (kind == 0) s = std::ldexp(1.0, -static_cast<int>(uniform(0, 31)));  // power of two
      if (kind == 1) s = static_cast<double>(static_cast<float>(s));           // float32 like ONNX Runtime
      m.push_back(s);
      // ranges: narrow around a (possibly large) centre, or wide, up to the whole int32 range
      const int64_t width = static_cast<int64_t>(std::ldexp(1.0, static_cast<int>(uniform(0, 32))) * u01(rng));
      const int64_t centre = uniform(INT32_MIN, INT32_MAX) >> uniform(0, 31);
      const int64_t lo = std::max<int64_t>(INT32_MIN, centre - width / 2);
      const int64_t hi = std::min<int64_t>(INT32_MAX, lo + width);
      r.push_back({lo, hi});
    }
    const int32_t zp = static_cast<int32_t>(uniform(-128, 127));
    int32_t lo = -128, hi = 127;
    if (uniform(0, 2) == 0) {
      lo = static_cast<int32_t>(uniform(-128, 127));
      hi = static_cast<int32_t>(uniform(lo, 127));
    }
    // doubles with 53-bit mantissas (kinds 2 and 3) may need more limbs than there are; they
    // must then be reported inexact and stay within the stated error
    // must then be reported inexact and stay within the stated error; so may a float32 scale
    // whose unsaturated accumulators span more than 2^27 values (requant.h)
    bool narrow = true;
    for (size_t c = 0; c < m.size(); ++c) {
      const double span = std::min(static_cast<double>(r[c].hi - r[c].lo), (hi - lo + 2) / m[c]);
      narrow = narrow && span <= std::ldexp(1.0, 27);
    }
    passes::RequantFigures fig;
    checked += check_layer(m, r, zp, lo, hi, fmt::format("random layer {}", layer), 1 << 12, 64, 256, rng, &fig,
                           kind <= 1 && narrow);
    for (int l : fig.limbs) wide_channels += l > 1;
    inexact_channels += static_cast<int64_t>(fig.inexact_channels.size());
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(checked, 2000000);
  // the low-limb chains are exercised (inexact channels occur only where check_layer allows
  // them: double scales, or spans beyond 2^27)
  EXPECT_GT(wide_channels, 100);
  if (print_figures()) fmt::print("{} channels with low limbs, {} inexact\n", wide_channels, inexact_channels);
}

TEST(RequantProperty, ExhaustiveOverWideRanges) {
  // Layers like real ones, every accumulator of ranges of up to 2^22 values.
  std::mt19937_64 rng(7);
  const std::vector<std::tuple<double, AccRange, int32_t>> layers = {
      {0.00123, {-(1 << 21), 1 << 21}, 0},
      {static_cast<float>(2.96e-4), {-2097152, 2097151}, -128},
      {static_cast<float>(0.0501), {-400000, 3000000}, 5},
      {static_cast<float>(9.26e-5), {-1500000, 2500000}, -128},
      {std::ldexp(1.0, -13), {-(1 << 21), 1 << 21}, 0},
  };
  int64_t checked = 0;
  for (const auto& [m, r, zp] : layers) {
    checked += check_layer({m}, {r}, zp, -128, 127, fmt::format("M={}", m), int64_t{1} << 23, 0, 0, rng);
  }
  EXPECT_GT(checked, 15000000);
}

/// Every qconv2d of `model`, derived as the pipeline derives it: checks and (optionally)
/// prints the figures; returns the worst-case error over the layers.
double check_model(const std::string& model, int64_t* layers, int64_t* checked) {
  ir::Graph g = frontend::import_onnx_file(testing::model_path(model));
  passes::PassContext ctx;
  for (const passes::Pass& p : passes::graph_pipeline()) {
    p.run(g, ctx);
    if (p.name == "requant") break;
  }
  std::mt19937_64 rng(11);
  double worst = 0;
  for (const ir::Node& n : g.nodes) {
    if (n.op != "qconv2d") continue;
    const auto m = passes::qconv2d_scales(g, n);
    const auto r = passes::qconv2d_acc_ranges(g, n);
    const auto& j = n.attrs.at("requant");
    passes::RequantFigures fig;
    *checked += check_layer(m, r, j.at("out_zero_point"), j.at("clip_lo"), j.at("clip_hi"), n.name, 1 << 10, 128, 512,
                            rng, &fig);
    ++*layers;
    double err = 0, rel = 0;
    int bits = 64, limbs = 1;
    for (size_t c = 0; c < m.size(); ++c) {
      limbs = std::max(limbs, fig.limbs[c]);
      // an exact channel has no error in its results, whatever its M' (only inexact ones count)
      if (std::find(fig.inexact_channels.begin(), fig.inexact_channels.end(), static_cast<int>(c)) !=
          fig.inexact_channels.end())
        err = std::max(err, fig.max_error_lsb[c]);
      rel = std::max(rel, fig.rel_error[c]);
      bits = std::min(bits, fig.multiplier_bits[c]);
    }
    worst = std::max(worst, err);
    if (print_figures()) {
      fmt::print("{:<34} {:<28} oc {:4} {:<8} limbs {} min bits {:2} max |M'-M|/M {:.2e} inexact error {:.2e} LSB\n",
                 model, n.name, m.size(), fig.form, limbs, bits, rel, err);
    }
  }
  return worst;
}

// The real layers: every output of every layer is round(acc * M) exactly (check_layer), with
// low limbs where a single 32-bit multiply cannot give it.
TEST(RequantProperty, BundledInt8ModelLayers) {
  int64_t layers = 0, checked = 0;
  double worst = 0;
  for (const char* model : {"onnx-zoo/mobilenetv2-12-int8.onnx", "onnx-zoo/mnist-12-int8.ort-qoperator.onnx",
                            "mlperf-tiny/ic01_resnet8_int8_qdq.onnx", "mlperf-tiny/kws01_dscnn_int8_qdq.onnx"}) {
    SCOPED_TRACE(model);
    const double w = check_model(model, &layers, &checked);
    EXPECT_EQ(w, 0.0) << model;
    worst = std::max(worst, w);
  }
  if (print_figures()) fmt::print("{} layers, {} accumulators checked, worst-case error {:.3e} LSB\n", layers, checked, worst);
  EXPECT_GE(layers, 53 + 4 + 10 + 6);
}

}  // namespace
}  // namespace tessel::compiler
