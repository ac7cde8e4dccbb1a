// tessel-bench-compile-scaling: compile time per stage (import, every graph pass, lower, and
// the Executable's serialisation) against the number of graph nodes, on the generated chain
// models of tests/compiler/chain_models.h (default: 1,000, 10,000 and 100,000 nodes; for
// wide_gemm, one Gemm of that output width). Prints one table per model (ms per stage per size, and the growth factor of each stage from one size to
// the next divided by the growth of the node count: ~1 for a linear stage, ~10 for a quadratic
// one at 10x steps) and writes the same figures as JSON with --json. Every figure is measured in
// this run; nothing is compared with a stored number.
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/bench_common.h"
#include "compiler/driver/compile.h"
#include "support/error.h"
#include "support/npy.h"
#include "tests/compiler/chain_models.h"

namespace tessel::bench {
namespace {

using compiler::testing::ChainKind;

struct SizeResult {
  int64_t nodes = 0;        ///< nodes requested
  int64_t model_nodes = 0;  ///< nodes in the generated model
  size_t steps = 0;         ///< Executable steps
  std::vector<std::pair<std::string, double>> stages;  ///< in compile order, ms (min over repeats)
  double total_ms = 0;
};

SizeResult measure(ChainKind kind, int64_t nodes, int repeats, bool offload) {
  const std::string bytes = compiler::testing::chain_model(kind, nodes);
  onnx::ModelProto m;
  m.ParseFromString(bytes);
  SizeResult r;
  r.nodes = nodes;
  r.model_nodes = m.graph().node_size();
  compiler::CompileOptions opts;
  opts.offload = offload;
  opts.calibration = {{[] {
    runtime::HostTensor h;
    h.dtype = runtime::DType::kF32;
    h.shape = compiler::testing::chain_input_shape();
    const std::vector<float> v = compiler::testing::chain_input();
    h.bytes.resize(v.size() * 4);
    std::memcpy(h.bytes.data(), v.data(), h.bytes.size());
    return h;
  }()}};
  for (int k = 0; k < repeats; ++k) {
    const compiler::CompileResult cr =
        compiler::compile_onnx_bytes(bytes, fmt::format("{}_{}", compiler::testing::chain_kind_name(kind), nodes), opts);
    const auto t0 = Clock::now();
    const std::vector<uint8_t> ser = cr.exe.serialize();
    const double ser_ms = seconds_since(t0) * 1e3;
    std::vector<std::pair<std::string, double>> stages;
    for (const compiler::PassTiming& p : cr.pass_timings) stages.push_back({p.pass, p.ms});
    stages.push_back({"serialize", ser_ms});
    if (k == 0) {
      r.stages = stages;
    } else {
      for (size_t i = 0; i < stages.size(); ++i) r.stages[i].second = std::min(r.stages[i].second, stages[i].second);
    }
    r.steps = cr.exe.steps.size();
    if (ser.empty()) throw_internal_error("empty executable");
  }
  r.total_ms = 0;
  for (const auto& [name, ms] : r.stages) r.total_ms += ms;
  return r;
}

std::vector<int64_t> parse_sizes(const std::string& s) {
  std::vector<int64_t> v;
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t comma = std::min(s.find(',', pos), s.size());
    const std::string item = s.substr(pos, comma - pos);
    int64_t n = 0;
    size_t used = 0;
    try {
      n = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty() || n < 1 || n > 10000000)
      throw CLI::ValidationError(fmt::format("--sizes: '{}' is not a node count in 1..10000000", item));
    v.push_back(n);
    pos = comma + 1;
  }
  return v;
}

int run_main(int argc, char** argv) {
  CLI::App app{"compile time per stage against graph node count, on generated chain models"};
  std::string sizes_text = "1000,10000,100000";
  std::string models_text = "relu,conv_relu,add_diamond,qdq_relu,mixed,qdq_pool,wide_gemm";
  std::string json_path;
  int repeats = 1;
  bool no_offload = false;
  app.add_option("--sizes", sizes_text, "comma-separated node counts")->capture_default_str();
  app.add_option("--models", models_text, "comma-separated chain models")->capture_default_str();
  app.add_option("--repeat", repeats, "compile each model this many times; report the minimum per stage")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  app.add_flag("--no-offload", no_offload, "place every layer on the CPU (no accelerator lowering)");
  app.add_option("--json", json_path, "also write the results as JSON to this file");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  }
  const std::vector<int64_t> sizes = parse_sizes(sizes_text);
  std::vector<ChainKind> kinds;
  {
    size_t pos = 0;
    while (pos <= models_text.size()) {
      const size_t comma = std::min(models_text.find(',', pos), models_text.size());
      const std::string name = models_text.substr(pos, comma - pos);
      try {
        kinds.push_back(compiler::testing::parse_chain_kind(name));
      } catch (const UserError& e) {
        throw CLI::ValidationError(fmt::format("--models: {}", e.what()));
      }
      pos = comma + 1;
    }
  }
  check_writable(json_path, "--json");

  nlohmann::json jmodels = nlohmann::json::array();
  fmt::print("Tessel compile scaling: ms per stage against graph nodes ({} repeat{}, {})\n", repeats,
             repeats == 1 ? "" : "s, minimum", no_offload ? "cpu only" : "conv offloaded");
  for (ChainKind kind : kinds) {
    std::vector<SizeResult> rs;
    for (int64_t n : sizes) rs.push_back(measure(kind, n, repeats, !no_offload));
    // the size a stage's time is compared against: the node count, or the layer width
    const bool width = compiler::testing::chain_size_is_width(kind);
    auto size_of = [&](const SizeResult& r) { return width ? r.nodes : r.model_nodes; };
    fmt::print("\nmodel {}\n  {:<22}", compiler::testing::chain_kind_name(kind),
               width ? "stage \\ width" : "stage \\ nodes");
    for (const SizeResult& r : rs) fmt::print(" {:>12}", size_of(r));
    for (size_t i = 1; i < rs.size(); ++i) fmt::print(" {:>9}", fmt::format("g{}", i));
    fmt::print("\n");
    auto row = [&](const std::string& name, auto get) {
      fmt::print("  {:<22}", name);
      for (const SizeResult& r : rs) fmt::print(" {:>12.2f}", get(r));
      // Growth of the stage per growth of the node count: 1 for linear, n_ratio for quadratic.
      for (size_t i = 1; i < rs.size(); ++i) {
        const double nodes_ratio = static_cast<double>(size_of(rs[i])) / static_cast<double>(size_of(rs[i - 1]));
        const double a = get(rs[i - 1]), b = get(rs[i]);
        fmt::print(" {:>9}", a > 0.05 ? fmt::format("{:.2f}", b / a / nodes_ratio) : std::string("-"));
      }
      fmt::print("\n");
    };
    for (size_t s = 0; s < rs[0].stages.size(); ++s)
      row(rs[0].stages[s].first, [&](const SizeResult& r) { return r.stages[s].second; });
    row("total", [](const SizeResult& r) { return r.total_ms; });
    nlohmann::json jm;
    jm["model"] = compiler::testing::chain_kind_name(kind);
    nlohmann::json jsizes = nlohmann::json::array();
    for (const SizeResult& r : rs) {
      nlohmann::json js;
      js["nodes"] = r.model_nodes;
      if (width) js["width"] = r.nodes;
      js["steps"] = r.steps;
      js["total_ms"] = r.total_ms;
      nlohmann::json st = nlohmann::json::array();
      for (const auto& [name, ms] : r.stages) st.push_back({{"stage", name}, {"ms", ms}});
      js["stages"] = st;
      jsizes.push_back(js);
    }
    jm["sizes"] = jsizes;
    jmodels.push_back(jm);
  }
  fmt::print("\ng<i>: (time at size i / time at size i-1) / (size ratio: nodes, or width for wide_gemm); ~1 linear, ~size ratio "
             "quadratic\n");
  if (!json_path.empty()) {
    nlohmann::json j;
    j["benchmark"] = "compile_scaling";
    j["repeats"] = repeats;
    j["offload"] = !no_offload;
    j["models"] = jmodels;
    const std::string text = j.dump(2) + "\n";
    support::write_file_bytes(json_path, std::vector<uint8_t>(text.begin(), text.end()));
  }
  return 0;
}

}  // namespace
}  // namespace tessel::bench

int main(int argc, char** argv) { return tessel::bench::run_bench_main(argc, argv, tessel::bench::run_main); }
