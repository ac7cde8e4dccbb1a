// tessel-program-corpus: the byte-identical refactor gate (issue 8, item 6; docs/testing.md).
//
// Compiles ResNet-18 v1 (bench/gen_resnet18.py, the benchmark's network) and every bundled model
// (models/ and, when present, ../shared/models) for the four hardware configurations of
// hw/configs/ (default, 1x8x8, batch2, bus128), runs each compiled model once through the graph
// executor on the cycle model (sim/cycle), and records for every offloaded layer the sha256 of
// its Program's isa::Program::serialize() bytes, its instruction count and its cycles. A model
// that cannot be compiled (or run) on a configuration is recorded with its error text.
//
// The corpus is JSON text written by this tool alone (stable key order, one line per record) and
// frozen in tests/golden/program_corpus.json:
//   tessel-program-corpus --golden FILE --resnet18 MODEL --update   rewrite the golden file
//   tessel-program-corpus --golden FILE --resnet18 MODEL            check against it (CTest)
//   ... --out FILE                                                  also write the corpus there
//   tessel-program-corpus --resnet18 MODEL --compare-template [--json OUT] [--models ..] [--configs ..]
//                                                                   the template-path measurement
// The check names the first differing model, configuration, layer and field; it also fails when
// ResNet-18's C2..C12 cycles on the default configuration exceed kResNet18C2C12Budget, and
// --update refuses to record such a corpus.
//
// --compare-template neither reads nor writes the corpus: it compiles every selected model on
// every selected configuration as the gate does, and lowers every offloaded conv/dense layer
// again with the old path (driver::lower_offloaded_layer, checked to reproduce the executable's
// Program byte for byte) and through the topi templates (driver::lower_conv2d_template),
// printing per layer the old and the template Program's cycles (the stream cost model's, exact
// against the cycle model) or the template's reason, then a summary; --json writes the same as
// JSON ("tessel-template-compare/1").
//
// Exit status: 0 corpus equal to the golden file (or written), 1 a difference, a budget overrun or
// an error, 2 a usage error.
#include <openssl/evp.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <numeric>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_common.h"
#include "compiler/backend/accel/tir/accel_tir.h"
#include "compiler/driver/compile.h"
#include "compiler/driver/lower.h"
#include "compiler/driver/lower_conv_template.h"
#include "tools/report.h"
#include "isa/asm.h"
#include "isa/config.h"
#include "isa/program.h"
#include "runtime/cpu/kernels.h"
#include "runtime/device.h"
#include "runtime/executable.h"
#include "runtime/graph_executor.h"
#include "support/atomic_file.h"
#include "support/error.h"
#include "support/json_text.h"
#include "support/text.h"

namespace tessel::gate {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using support::quote;

/// ResNet-18 C2..C12 (weighted by occurrence: every instance in the network) on the default
/// configuration, cycle model: the figure of docs/benchmarks.md. The refactor must not exceed it.
constexpr uint64_t kResNet18C2C12Budget = 7236325;
/// The budget in force (--resnet18-budget lowers it, for the test that the check fires).
uint64_t g_budget = kResNet18C2C12Budget;
constexpr const char* kFormat = "tessel-program-corpus/1";
constexpr const char* kResNet18Key = "generated/resnet18_v1.onnx";
/// The hardware configurations, in corpus order (files hw/configs/<name>.json).
const std::vector<std::string> kConfigNames = {"default", "1x8x8", "batch2", "bus128"};

// ---------------------------------------------------------------------------------------------
// Records.

struct LayerRecord {
  int64_t step = -1;      ///< index into Executable::steps
  std::string name, op;   ///< ONNX node name(s), operator
  std::string label;      ///< ResNet-18 workload label (C1..C12) or ""
  uint64_t insns = 0;     ///< Program::insns.size()
  uint64_t cycles = 0;    ///< cycle model, start to FINISH
  std::string sha256;     ///< of Program::serialize(), lower-case hex
  /// Why the layer is in the corpus although the frozen corpus did not offload it (or why its
  /// Program differs from the frozen one): intended_change() of its step's operator; "" for the
  /// frozen layers (the field is then absent from the layer's line).
  std::string reason;
  int64_t est_cycles = 0; ///< the schedule cost model's estimate (printed, not recorded)
};

/// Offloaded layers added on purpose after the corpus was frozen, by the operator of their
/// executable step (runtime::Step::op), with the reason recorded on their lines. The frozen
/// layers keep their records unchanged.
const char* intended_change(const std::string& step_op) {
  // issue 8 item 5: the residual add (QLinearAdd, Add) on the accelerator's ALU
  if (step_op == "qadd") return "qadd offloaded";
  return "";
}

struct RunRecord {
  std::string model, config;
  std::optional<std::string> error;  ///< why the model could not be compiled or run here
  uint64_t insns = 0, cycles = 0;    ///< sums over the layers
  std::vector<LayerRecord> layers;   ///< offloaded layers in step order
  double compile_seconds = 0;        ///< wall time of compile_onnx (printed, not recorded)
};

struct ModelRecord {
  std::string model;                  ///< key: "models/<path>", "shared/models/<path>", ...
  std::string sha256;                 ///< of the model file
  std::string input;                  ///< the input the model was calibrated and run on
  std::optional<std::string> same_as; ///< a ../shared file identical to this bundled model
};

struct ConfigRecord {
  std::string config, file, label;
};

struct Corpus {
  std::vector<ConfigRecord> configs;
  std::vector<ModelRecord> models;
  std::vector<std::pair<std::string, uint64_t>> resnet18_totals;  ///< config -> C2..C12 cycles
  std::vector<RunRecord> runs;
};

std::string hex(const unsigned char* p, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  s.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    s.push_back(digits[p[i] >> 4]);
    s.push_back(digits[p[i] & 15]);
  }
  return s;
}

/// SHA-256 (OpenSSL's libcrypto) of `size` bytes, lower-case hex.
std::string sha256_hex(const void* data, size_t size) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data, size, md, &len, EVP_sha256(), nullptr) != 1 || len != 32) {
    throw_internal_error("libcrypto could not compute a SHA-256 digest of {} bytes", size);
  }
  return hex(md, len);
}

std::vector<uint8_t> read_file(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw_io_error("cannot read {}", quote(path.string()));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) throw_io_error("cannot read {}: read error", quote(path.string()));
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// Inputs: each model is calibrated (float models) and run on one fixed input.

struct ModelInput {
  std::string description;                    ///< recorded in the corpus
  std::vector<runtime::HostTensor> tensors;   ///< one per graph input
};

/// The staged reference input (data/reference/inputs/, float32 raw) of the bundled models, by
/// file-name prefix: the inputs the e2e tests use.
struct StagedInput {
  const char* prefix;
  const char* file;
  std::vector<int64_t> shape;
};
const std::vector<StagedInput>& staged_inputs() {
  static const std::vector<StagedInput> t = {
      {"mnist-12", "mnist_t10k_00000_f32_1x1x28x28.bin", {1, 1, 28, 28}},
      {"ic01_", "ic_sample8_f32_1x3x32x32.bin", {1, 3, 32, 32}},
      {"kws01_", "kws_sample6_f32_1x1x49x10.bin", {1, 1, 49, 10}},
      {"mobilenetv2-12", "imagenet_cat_f32_1x3x224x224.bin", {1, 3, 224, 224}},
  };
  return t;
}

/// The input of `model_path`: ResNet-18 gets the benchmark's seeded image; a bundled model whose
/// file name starts with a staged_inputs() prefix gets that file; any other model gets the
/// benchmark's seeded uniform [-2, 2) values in the shapes of its graph inputs (read with
/// compiler::ReferenceModel, which throws UserError for a file that is not a readable ONNX model).
ModelInput input_for(const std::string& key, const fs::path& model_path, const fs::path& source_dir) {
  ModelInput in;
  if (key == kResNet18Key) {
    in.description = "seeded image [1, 3, 224, 224], uniform [-2, 2), splitmix64 seed 20181 (the benchmark's)";
    in.tensors = {bench::seeded_image({1, 3, 224, 224})};
    return in;
  }
  const std::string file_name = model_path.filename().string();
  for (const StagedInput& s : staged_inputs()) {
    if (file_name.rfind(s.prefix, 0) != 0 || model_path.extension() != ".onnx") continue;
    const fs::path p = source_dir / "data" / "reference" / "inputs" / s.file;
    runtime::HostTensor t;
    t.dtype = runtime::DType::kF32;
    t.shape = s.shape;
    t.bytes = read_file(p);
    int64_t n = 1;
    for (int64_t d : s.shape) n *= d;
    if (t.bytes.size() != static_cast<size_t>(n) * sizeof(float)) {
      throw_user_error("input file {} holds {} bytes, not the {} bytes of float32 [{}]", quote(p.string()),
                       t.bytes.size(), n * 4, fmt::join(s.shape, ", "));
    }
    in.description = std::string("data/reference/inputs/") + s.file;
    in.tensors = {std::move(t)};
    return in;
  }
  const compiler::ReferenceModel ref = compiler::ReferenceModel::load(model_path.string());
  std::string shapes;
  for (const std::vector<int64_t>& shape : ref.input_shapes()) {
    in.tensors.push_back(bench::seeded_image(shape));
    shapes += fmt::format("{}[{}]", shapes.empty() ? "" : ", ", fmt::join(shape, ", "));
  }
  in.description = fmt::format("seeded {}, uniform [-2, 2), splitmix64 seed 20181", shapes);
  return in;
}

// ---------------------------------------------------------------------------------------------
// Building the corpus.

struct ModelFile {
  std::string key;
  fs::path path;
};

/// Regular files under `dir` except Markdown (the MANIFESTs), sorted by relative path.
std::vector<std::string> model_files_under(const fs::path& dir) {
  std::vector<std::string> rel;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file() || it->path().extension() == ".md") continue;
    rel.push_back(fs::relative(it->path(), dir).generic_string());
  }
  if (ec) throw_io_error("cannot list {}: {}", quote(dir.string()), ec.message());
  std::sort(rel.begin(), rel.end());
  return rel;
}

struct Options {
  std::string golden, out, resnet18, source_dir, shared_dir;
  bool update = false;
  bool cost_table = false;  ///< print every layer's cost-model estimate against its cycles
  std::vector<std::string> only_models, only_configs;  ///< empty: all
  bool compare_template = false;  ///< --compare-template: the template-path measurement
  std::string compare_json;       ///< --json: where it also goes
  size_t template_candidates = compiler::driver::ConvTemplateOptions{}.max_candidates;  ///< --template-candidates
  std::string dump_programs;      ///< --dump-programs: both Programs of every compared layer as assembler
  std::string dump_ir;            ///< --dump-ir: with --dump-programs, the template's TIR after this pass
  std::vector<std::string> only_layers;  ///< --layers: with --compare-template, these ONNX node names only
};

bool selected(const std::vector<std::string>& only, const std::string& name) {
  return only.empty() || std::find(only.begin(), only.end(), name) != only.end();
}

RunRecord run_one(const std::string& key, const fs::path& path, const ModelInput& input,
                  const std::string& config_name, const isa::HwConfig& cfg) {
  RunRecord r;
  r.model = key;
  r.config = config_name;
  compiler::CompileResult compiled;
  try {
    compiler::CompileOptions opts;
    opts.config = cfg;
    opts.offload = true;
    opts.calibration = {input.tensors};
    const auto t0 = Clock::now();
    compiled = compiler::compile_onnx(path.string(), opts);
    r.compile_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  } catch (const Error& e) {
    r.error = std::string("compile: ") + e.what();
    return r;
  }
  std::vector<runtime::StepMeasurement> ms;
  try {
    auto dev = runtime::Device::create("cycle", cfg, bench::kDeviceDramBytes);
    runtime::ExecOptions eo;
    eo.measure_cpu = false;
    eo.check_accel = false;
    runtime::GraphExecutor exec(compiled.exe, *dev, eo);
    exec.run(input.tensors);
    ms = exec.measurements();
  } catch (const Error& e) {
    r.error = std::string("run on the cycle model: ") + e.what();
    return r;
  }
  const runtime::Executable& exe = compiled.exe;
  for (const compiler::LayerInfo& li : compiled.layers) {
    if (li.placement != runtime::Placement::kAccel) continue;
    if (li.step < 0 || static_cast<size_t>(li.step) >= exe.steps.size() ||
        static_cast<size_t>(li.step) >= ms.size()) {
      throw_internal_error("model {}: layer {} names step {} of {}", quote(key), quote(li.name), li.step,
                           exe.steps.size());
    }
    const runtime::Step& step = exe.steps[static_cast<size_t>(li.step)];
    if (step.program < 0 || static_cast<size_t>(step.program) >= exe.programs.size()) {
      throw_internal_error("model {}: accelerator step {} names Program {} of {}", quote(key), li.step,
                           step.program, exe.programs.size());
    }
    const isa::Program& prog = exe.programs[static_cast<size_t>(step.program)];
    const std::vector<uint8_t> bytes = prog.serialize();
    LayerRecord l;
    l.step = li.step;
    l.name = li.name;
    l.op = li.op;
    l.label = bench::label_of(li);
    l.insns = prog.insns.size();
    l.cycles = ms[static_cast<size_t>(li.step)].accel.cycles;
    l.est_cycles = li.est_cycles;
    l.sha256 = sha256_hex(bytes.data(), bytes.size());
    l.reason = intended_change(step.op);
    r.insns += l.insns;
    r.cycles += l.cycles;
    r.layers.push_back(std::move(l));
  }
  return r;
}

/// The corpus's model files in corpus order: ResNet-18, models/, then ../shared/models when present.
std::vector<ModelFile> corpus_files(const Options& o) {
  const fs::path src(o.source_dir);
  std::vector<ModelFile> files;
  files.push_back({kResNet18Key, fs::path(o.resnet18)});
  const fs::path models_dir = src / "models";
  for (const std::string& rel : model_files_under(models_dir)) {
    files.push_back({"models/" + rel, models_dir / rel});
  }
  const fs::path shared_dir(o.shared_dir);
  std::error_code ec;
  if (!o.shared_dir.empty() && fs::is_directory(shared_dir, ec)) {
    for (const std::string& rel : model_files_under(shared_dir)) {
      files.push_back({"shared/models/" + rel, shared_dir / rel});
    }
  }
  return files;
}

Corpus build_corpus(const Options& o) {
  const fs::path src(o.source_dir);
  Corpus c;
  std::vector<std::pair<std::string, isa::HwConfig>> configs;
  for (const std::string& name : kConfigNames) {
    if (!selected(o.only_configs, name)) continue;
    const std::string rel = "hw/configs/" + name + ".json";
    const isa::HwConfig cfg = isa::HwConfig::from_file((src / rel).string());
    c.configs.push_back({name, rel, cfg.label()});
    configs.emplace_back(name, cfg);
  }

  const std::vector<ModelFile> files = corpus_files(o);
  const fs::path models_dir = src / "models";
  std::error_code ec;

  for (const ModelFile& f : files) {
    if (!selected(o.only_models, f.key)) continue;
    ModelRecord m;
    m.model = f.key;
    const std::vector<uint8_t> bytes = read_file(f.path);
    m.sha256 = sha256_hex(bytes.data(), bytes.size());
    // A ../shared/models file identical to the bundled file of the same path is the same model.
    if (f.key.rfind("shared/models/", 0) == 0) {
      const std::string rel = f.key.substr(std::string("shared/models/").size());
      if (fs::is_regular_file(models_dir / rel, ec)) {
        const std::vector<uint8_t> other = read_file(models_dir / rel);
        if (sha256_hex(other.data(), other.size()) == m.sha256) m.same_as = "models/" + rel;
      }
    }
    if (m.same_as) {
      m.input = "";
      c.models.push_back(std::move(m));
      continue;
    }
    std::optional<ModelInput> input;
    std::optional<std::string> input_error;
    try {
      input = input_for(f.key, f.path, src);
      m.input = input->description;
    } catch (const Error& e) {
      input_error = std::string("load: ") + e.what();
      m.input = "none (the model could not be read)";
    }
    c.models.push_back(m);
    for (const auto& [name, cfg] : configs) {
      RunRecord r;
      if (input_error) {
        r.model = f.key;
        r.config = name;
        r.error = input_error;
      } else {
        r = run_one(f.key, f.path, *input, name, cfg);
      }
      if (r.error) {
        // The corpus must not depend on where the checkout lies: the model's path becomes its key.
        // The absolute form first: the path as given may be a suffix of it.
        for (const std::string& p : {fs::absolute(f.path).lexically_normal().string(), f.path.string()}) {
          for (size_t at = 0; !p.empty() && (at = r.error->find(p, at)) != std::string::npos; at += f.key.size()) {
            r.error->replace(at, p.size(), f.key);
          }
        }
        fmt::print("  {} on {}: not compiled: {}\n", f.key, name, *r.error);
      } else {
        // the cost model against the cycle model, layer by layer (printed only)
        double worst = 0, sum = 0;
        size_t over2 = 0;
        for (const LayerRecord& l : r.layers) {
          const double e = l.cycles == 0 ? 0.0
                                         : std::abs(static_cast<double>(l.est_cycles) - static_cast<double>(l.cycles)) /
                                               static_cast<double>(l.cycles);
          worst = std::max(worst, e);
          sum += e;
          over2 += e > 0.02;
          if (o.cost_table) {
            fmt::print("    step {:3} {:<40} est {:9} cycles {:9} error {:+6.2f}%\n", l.step, l.name.substr(0, 40),
                       l.est_cycles, l.cycles,
                       l.cycles == 0 ? 0.0
                                     : 100 * (static_cast<double>(l.est_cycles) - static_cast<double>(l.cycles)) /
                                           static_cast<double>(l.cycles));
          }
        }
        fmt::print("  {} on {}: {} offloaded layers, {} instructions, {} cycles, compiled in {:.2f} s; cost model "
                   "vs cycles: mean {:.2f}%, worst {:.2f}%, {} layers over 2%\n",
                   f.key, name, r.layers.size(), r.insns, r.cycles, r.compile_seconds,
                   r.layers.empty() ? 0.0 : 100 * sum / static_cast<double>(r.layers.size()), 100 * worst, over2);
      }
      std::fflush(stdout);
      if (f.key == kResNet18Key && !r.error) {
        uint64_t total = 0;
        for (const LayerRecord& l : r.layers) total += bench::in_vta_set(l.label) ? l.cycles : 0;
        c.resnet18_totals.emplace_back(name, total);
      }
      c.runs.push_back(std::move(r));
    }
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
// Corpus text (stable: fixed key order, one record per line).

std::string js(const std::string& s) { return support::dump_json(nlohmann::json(s), -1, "program corpus"); }
std::string js(const std::optional<std::string>& s) { return s ? js(*s) : "null"; }

std::string to_text(const Corpus& c) {
  std::string t = "{\n";
  t += fmt::format("\"format\": {},\n", js(std::string(kFormat)));
  t += fmt::format("\"resnet18_c2_c12_budget\": {},\n", kResNet18C2C12Budget);
  auto list = [&](const char* key, size_t n, auto&& line, bool last) {
    t += fmt::format("\"{}\": [\n", key);
    for (size_t i = 0; i < n; ++i) t += line(i) + (i + 1 < n ? ",\n" : "\n");
    t += last ? "]\n" : "],\n";
  };
  list("configs", c.configs.size(), [&](size_t i) {
    const ConfigRecord& r = c.configs[i];
    return fmt::format("{{\"config\": {}, \"file\": {}, \"label\": {}}}", js(r.config), js(r.file), js(r.label));
  }, false);
  list("models", c.models.size(), [&](size_t i) {
    const ModelRecord& m = c.models[i];
    return fmt::format("{{\"model\": {}, \"sha256\": {}, \"input\": {}, \"same_as\": {}}}", js(m.model),
                       js(m.sha256), js(m.input), js(m.same_as));
  }, false);
  list("resnet18_c2_c12_cycles", c.resnet18_totals.size(), [&](size_t i) {
    return fmt::format("{{\"config\": {}, \"cycles\": {}}}", js(c.resnet18_totals[i].first),
                       c.resnet18_totals[i].second);
  }, false);
  list("runs", c.runs.size(), [&](size_t i) {
    const RunRecord& r = c.runs[i];
    return fmt::format("{{\"model\": {}, \"config\": {}, \"error\": {}, \"layers\": {}, \"insns\": {}, \"cycles\": {}}}",
                       js(r.model), js(r.config), js(r.error), r.layers.size(), r.insns, r.cycles);
  }, false);
  std::vector<std::string> lines;
  for (const RunRecord& r : c.runs) {
    for (const LayerRecord& l : r.layers) {
      lines.push_back(fmt::format(
          "{{\"model\": {}, \"config\": {}, \"step\": {}, \"name\": {}, \"op\": {}, \"label\": {}, "
          "\"insns\": {}, \"cycles\": {}, \"sha256\": {}{}}}",
          js(r.model), js(r.config), l.step, js(l.name), js(l.op), js(l.label), l.insns, l.cycles, js(l.sha256),
          l.reason.empty() ? std::string() : fmt::format(", \"reason\": {}", js(l.reason))));
    }
  }
  list("layers", lines.size(), [&](size_t i) { return lines[i]; }, true);
  t += "}\n";
  return t;
}

// ---------------------------------------------------------------------------------------------
// Reading the golden file back.

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}
  const nlohmann::json& field(const nlohmann::json& obj, const char* key, const std::string& where) const {
    if (!obj.is_object()) throw_user_error("golden file {}: {} is not an object", quote(file_), where);
    auto it = obj.find(key);
    if (it == obj.end()) throw_user_error("golden file {}: {} has no field {}", quote(file_), where, quote(key));
    return *it;
  }
  std::string str(const nlohmann::json& obj, const char* key, const std::string& where) const {
    const nlohmann::json& v = field(obj, key, where);
    if (!v.is_string()) throw_user_error("golden file {}: {}.{} is not a string", quote(file_), where, key);
    return v.get<std::string>();
  }
  std::optional<std::string> opt_str(const nlohmann::json& obj, const char* key, const std::string& where) const {
    if (field(obj, key, where).is_null()) return std::nullopt;
    return str(obj, key, where);
  }
  uint64_t num(const nlohmann::json& obj, const char* key, const std::string& where) const {
    const nlohmann::json& v = field(obj, key, where);
    if (!v.is_number_unsigned()) {
      throw_user_error("golden file {}: {}.{} is not a non-negative integer", quote(file_), where, key);
    }
    return v.get<uint64_t>();
  }
  const nlohmann::json& array(const nlohmann::json& obj, const char* key) const {
    const nlohmann::json& v = field(obj, key, "the document");
    if (!v.is_array()) throw_user_error("golden file {}: {} is not an array", quote(file_), quote(key));
    return v;
  }

 private:
  std::string file_;
};

Corpus from_text(const std::string& text, const std::string& file) {
  const nlohmann::json j = support::parse_json(text, "golden file " + quote(file));
  const Reader rd(file);
  if (rd.str(j, "format", "the document") != kFormat) {
    throw_user_error("golden file {}: format {} is not {}", quote(file), quote(rd.str(j, "format", "the document")),
                     quote(kFormat));
  }
  Corpus c;
  const nlohmann::json& configs = rd.array(j, "configs");
  for (size_t i = 0; i < configs.size(); ++i) {
    const std::string w = fmt::format("configs[{}]", i);
    c.configs.push_back({rd.str(configs[i], "config", w), rd.str(configs[i], "file", w), rd.str(configs[i], "label", w)});
  }
  const nlohmann::json& models = rd.array(j, "models");
  for (size_t i = 0; i < models.size(); ++i) {
    const std::string w = fmt::format("models[{}]", i);
    c.models.push_back({rd.str(models[i], "model", w), rd.str(models[i], "sha256", w), rd.str(models[i], "input", w),
                        rd.opt_str(models[i], "same_as", w)});
  }
  const nlohmann::json& totals = rd.array(j, "resnet18_c2_c12_cycles");
  for (size_t i = 0; i < totals.size(); ++i) {
    const std::string w = fmt::format("resnet18_c2_c12_cycles[{}]", i);
    c.resnet18_totals.emplace_back(rd.str(totals[i], "config", w), rd.num(totals[i], "cycles", w));
  }
  const nlohmann::json& runs = rd.array(j, "runs");
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string w = fmt::format("runs[{}]", i);
    RunRecord r;
    r.model = rd.str(runs[i], "model", w);
    r.config = rd.str(runs[i], "config", w);
    r.error = rd.opt_str(runs[i], "error", w);
    r.insns = rd.num(runs[i], "insns", w);
    r.cycles = rd.num(runs[i], "cycles", w);
    r.layers.resize(rd.num(runs[i], "layers", w));
    c.runs.push_back(std::move(r));
  }
  // Layers are listed run by run, in the runs' order.
  const nlohmann::json& layers = rd.array(j, "layers");
  size_t li = 0;
  for (RunRecord& r : c.runs) {
    for (LayerRecord& l : r.layers) {
      const std::string w = fmt::format("layers[{}]", li);
      if (li >= layers.size()) {
        throw_user_error("golden file {}: runs list {} layers in all, layers has {}", quote(file), li + 1, layers.size());
      }
      const nlohmann::json& x = layers[li++];
      if (rd.str(x, "model", w) != r.model || rd.str(x, "config", w) != r.config) {
        throw_user_error("golden file {}: {} belongs to model {} config {}, the runs list has model {} config {} here",
                         quote(file), w, quote(rd.str(x, "model", w)), quote(rd.str(x, "config", w)), quote(r.model),
                         quote(r.config));
      }
      l.step = static_cast<int64_t>(rd.num(x, "step", w));
      l.name = rd.str(x, "name", w);
      l.op = rd.str(x, "op", w);
      l.label = rd.str(x, "label", w);
      l.insns = rd.num(x, "insns", w);
      l.cycles = rd.num(x, "cycles", w);
      l.sha256 = rd.str(x, "sha256", w);
      if (x.contains("reason")) l.reason = rd.str(x, "reason", w);
    }
  }
  if (li != layers.size()) {
    throw_user_error("golden file {}: runs list {} layers in all, layers has {}", quote(file), li, layers.size());
  }
  return c;
}

/// `c` restricted to the selected models and configurations (for --models / --configs).
Corpus restrict(const Corpus& c, const Options& o) {
  Corpus r;
  for (const ConfigRecord& x : c.configs) if (selected(o.only_configs, x.config)) r.configs.push_back(x);
  for (const ModelRecord& x : c.models) if (selected(o.only_models, x.model)) r.models.push_back(x);
  if (selected(o.only_models, kResNet18Key)) {
    for (const auto& x : c.resnet18_totals) if (selected(o.only_configs, x.first)) r.resnet18_totals.push_back(x);
  }
  for (const RunRecord& x : c.runs) {
    if (selected(o.only_models, x.model) && selected(o.only_configs, x.config)) r.runs.push_back(x);
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// Comparison: every difference, in corpus order (models, then runs layer by layer).

std::string show(const std::optional<std::string>& s) { return s ? quote(*s) : std::string("none"); }

std::vector<std::string> differences(const Corpus& golden, const Corpus& now) {
  std::vector<std::string> d;
  for (size_t i = 0; i < std::max(golden.configs.size(), now.configs.size()); ++i) {
    if (i >= golden.configs.size()) { d.push_back(fmt::format("config {} is new (not in the golden file)", quote(now.configs[i].config))); continue; }
    if (i >= now.configs.size()) { d.push_back(fmt::format("config {} of the golden file is gone", quote(golden.configs[i].config))); continue; }
    const ConfigRecord &g = golden.configs[i], &n = now.configs[i];
    if (g.config != n.config || g.file != n.file) {
      d.push_back(fmt::format("configs[{}]: golden {} ({}), now {} ({})", i, quote(g.config), g.file, quote(n.config), n.file));
    } else if (g.label != n.label) {
      d.push_back(fmt::format("config {}: field 'label': golden {}, now {}", quote(g.config), quote(g.label), quote(n.label)));
    }
  }
  for (size_t i = 0; i < std::max(golden.models.size(), now.models.size()); ++i) {
    if (i >= golden.models.size()) { d.push_back(fmt::format("model {} is new (not in the golden file)", quote(now.models[i].model))); continue; }
    if (i >= now.models.size()) { d.push_back(fmt::format("model {} of the golden file is gone", quote(golden.models[i].model))); continue; }
    const ModelRecord &g = golden.models[i], &n = now.models[i];
    if (g.model != n.model) d.push_back(fmt::format("models[{}]: golden {}, now {}", i, quote(g.model), quote(n.model)));
    else if (g.sha256 != n.sha256) d.push_back(fmt::format("model {}: field 'sha256' (the model file): golden {}, now {}", quote(g.model), g.sha256, n.sha256));
    else if (g.input != n.input) d.push_back(fmt::format("model {}: field 'input': golden {}, now {}", quote(g.model), quote(g.input), quote(n.input)));
    else if (g.same_as != n.same_as) d.push_back(fmt::format("model {}: field 'same_as': golden {}, now {}", quote(g.model), show(g.same_as), show(n.same_as)));
  }
  for (size_t i = 0; i < std::max(golden.runs.size(), now.runs.size()); ++i) {
    if (i >= golden.runs.size()) { d.push_back(fmt::format("model {} config {}: new run (not in the golden file)", quote(now.runs[i].model), quote(now.runs[i].config))); continue; }
    if (i >= now.runs.size()) { d.push_back(fmt::format("model {} config {}: run of the golden file is gone", quote(golden.runs[i].model), quote(golden.runs[i].config))); continue; }
    const RunRecord &g = golden.runs[i], &n = now.runs[i];
    const std::string where = fmt::format("model {} config {}", quote(g.model), quote(g.config));
    if (g.model != n.model || g.config != n.config) {
      d.push_back(fmt::format("runs[{}]: golden is {}, now model {} config {}", i, where, quote(n.model), quote(n.config)));
      continue;
    }
    if (g.error != n.error) {
      d.push_back(fmt::format("{}: field 'error': golden {}, now {}", where, show(g.error), show(n.error)));
      continue;
    }
    for (size_t k = 0; k < std::max(g.layers.size(), n.layers.size()); ++k) {
      if (k >= g.layers.size()) { d.push_back(fmt::format("{} layer {} (step {}): new offloaded layer (golden has {} layers)", where, quote(n.layers[k].name), n.layers[k].step, g.layers.size())); continue; }
      if (k >= n.layers.size()) { d.push_back(fmt::format("{} layer {} (step {}): no longer offloaded (now {} layers)", where, quote(g.layers[k].name), g.layers[k].step, n.layers.size())); continue; }
      const LayerRecord &gl = g.layers[k], &nl = n.layers[k];
      const std::string lw = fmt::format("{} layer {} (step {})", where, quote(gl.name), gl.step);
      auto diff = [&](const char* field, const std::string& a, const std::string& b) {
        if (a != b) d.push_back(fmt::format("{}: field '{}': golden {}, now {}", lw, field, a, b));
        return a != b;
      };
      diff("step", std::to_string(gl.step), std::to_string(nl.step)) || diff("name", quote(gl.name), quote(nl.name)) ||
          diff("op", quote(gl.op), quote(nl.op)) || diff("label", quote(gl.label), quote(nl.label)) ||
          diff("sha256", gl.sha256, nl.sha256) || diff("insns", std::to_string(gl.insns), std::to_string(nl.insns)) ||
          diff("cycles", std::to_string(gl.cycles), std::to_string(nl.cycles)) ||
          diff("reason", quote(gl.reason), quote(nl.reason));
    }
  }
  for (size_t i = 0; i < std::max(golden.resnet18_totals.size(), now.resnet18_totals.size()); ++i) {
    const auto g = i < golden.resnet18_totals.size() ? fmt::format("{} {}", golden.resnet18_totals[i].first, golden.resnet18_totals[i].second) : "none";
    const auto n = i < now.resnet18_totals.size() ? fmt::format("{} {}", now.resnet18_totals[i].first, now.resnet18_totals[i].second) : "none";
    if (g != n) d.push_back(fmt::format("ResNet-18 C2..C12 cycles [{}]: golden config/cycles {}, now {}", i, g, n));
  }
  return d;
}

/// The ResNet-18 budget: "" when met (or not measured by this selection), else the failure.
std::string budget_failure(const Corpus& c) {
  for (const auto& [config, cycles] : c.resnet18_totals) {
    if (config == "default" && cycles > g_budget) {
      return fmt::format("ResNet-18 C2..C12 on config 'default' takes {} cycles, above the budget of {} "
                         "(docs/testing.md: a changed Program may not be slower)", cycles, g_budget);
    }
  }
  return "";
}

// ---------------------------------------------------------------------------------------------
// --compare-template: every offloaded conv/dense layer through the old path and the templates.

struct CompareRecord {
  std::string model, config, layer, op;
  int64_t old_cycles = 0;
  std::optional<int64_t> template_cycles;  ///< absent: the template path's reason
  std::string feature, reason;             ///< TemplateUnsupported::feature() (or "error") and what()
  std::string template_schedule;
  /// For an unsupported layer of groups 1: both paths on the layer's shape alone (same weights,
  /// zero bias and input zero point, the per-tensor chain of shape_only_requant()).
  std::optional<int64_t> shape_old, shape_template;
  std::string shape_reason;  ///< why the shape-only template lowering failed
  double shape_old_ms = 0, shape_template_ms = 0;
  double old_ms = 0, template_ms = 0;      ///< lowering wall time (printed only)
};

/// The constant tensor `t` as int64 values (int8 / int32 / int64 little-endian).
std::vector<int64_t> constant_values(const runtime::TensorDesc& t) {
  std::vector<int64_t> v;
  const std::vector<uint8_t>& b = t.data;
  switch (t.dtype) {
    case runtime::DType::kI8:
      for (uint8_t x : b) v.push_back(static_cast<int8_t>(x));
      break;
    case runtime::DType::kI32:
      for (size_t i = 0; i + 4 <= b.size(); i += 4) {
        uint32_t u = 0;
        for (int k = 0; k < 4; ++k) u |= static_cast<uint32_t>(b[i + k]) << (8 * k);
        v.push_back(static_cast<int32_t>(u));
      }
      break;
    case runtime::DType::kI64:
      for (size_t i = 0; i + 8 <= b.size(); i += 8) {
        uint64_t u = 0;
        for (int k = 0; k < 8; ++k) u |= static_cast<uint64_t>(b[i + k]) << (8 * k);
        v.push_back(static_cast<int64_t>(u));
      }
      break;
    default:
      throw_internal_error("constant {} has dtype {}, not an integer", quote(t.name), runtime::to_string(t.dtype));
  }
  return v;
}

/// The AccelLayer of offloaded qconv2d step `s` of `exe` (what driver/lower.cc builds from the graph).
compiler::accel::AccelLayer accel_layer_of(const runtime::Executable& exe, const runtime::Step& s) {
  TESSEL_CHECK(s.inputs.size() == 3 && s.outputs.size() == 1, "step {} is not a qconv2d step", quote(s.name));
  const runtime::TensorDesc& w = exe.tensors[static_cast<size_t>(s.inputs[1])];
  const runtime::TensorDesc& b = exe.tensors[static_cast<size_t>(s.inputs[2])];
  compiler::accel::AccelLayer l;
  l.name = s.name;
  l.params = runtime::cpu::parse_qconv2d(s, exe.tensors[static_cast<size_t>(s.inputs[0])], w,
                                         exe.tensors[static_cast<size_t>(s.outputs[0])]);
  for (int64_t x : constant_values(w)) l.weights.push_back(static_cast<int8_t>(x));
  for (int64_t x : constant_values(b)) l.bias.push_back(static_cast<int32_t>(x));
  return l;
}

/// The chain of the shape-only comparison: per tensor, every immediate within 16 bits
/// (y = clip((acc + 128) >> 8)).
runtime::Requant shape_only_requant() {
  runtime::Requant rq;
  rq.multiplier = {1};
  rq.shift = {8};
  return rq;
}

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

/// Writes both Programs of a compared layer as assembler (the schedule and cycles as comments).
void dump_pair(const std::string& dir, const std::string& key, const std::string& config, const std::string& layer,
               const compiler::accel::LoweredLayer& old_low, const compiler::accel::LoweredLayer& tmpl) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw_user_error("--dump-programs: cannot create {}: {}", quote(dir), ec.message());
  std::string stem = fmt::format("{}.{}.{}", fs::path(key).stem().string(), config, layer);
  for (char& c : stem) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  }
  auto write = [&](const char* which, const compiler::accel::LoweredLayer& l) {
    // the modules' counters on the cycle model (zero inputs: timing does not depend on data)
    auto dev = runtime::Device::create("cycle", l.program.config, runtime::dram_bytes_for({l.program}));
    const runtime::LoadedProgram lp = dev->load(l.program);
    dev->submit(lp);
    const sim::RunStats rs = dev->wait();
    dev->unload(lp);
    // '#' comments: the file assembles as it is (tessel asm)
    auto commented = [](const std::string& t) {
      std::string c;
      std::istringstream in(t);
      for (std::string line; std::getline(in, line);) c += "# " + line + "\n";
      return c;
    };
    std::string text = fmt::format("# {} path: {}\n# {} cycles (stream cost model), {} on the cycle model\n{}{}",
                                   which, l.schedule, l.est_cycles, rs.cycles,
                                   commented(tools::module_stats_table("cycle", rs)), isa::disassemble(l.program));
    if (!l.ir_dump.empty()) text += "\n# the template's TIR\n" + commented(l.ir_dump);
    support::write_file_atomic((fs::path(dir) / (stem + "." + which + ".asm")).string(), text);
  };
  write("old", old_low);
  write("template", tmpl);
}

std::vector<CompareRecord> compare_one(const std::string& key, const fs::path& path, const ModelInput& input,
                                       const std::string& config_name, const isa::HwConfig& cfg,
                                       const compiler::driver::ConvTemplateOptions& topts,
                                       const std::string& dump_dir, const std::vector<std::string>& only_layers) {
  compiler::CompileOptions opts;
  opts.config = cfg;
  opts.offload = true;
  opts.calibration = {input.tensors};
  const compiler::CompileResult compiled = compiler::compile_onnx(path.string(), opts);
  const runtime::Executable& exe = compiled.exe;
  const std::vector<compiler::accel::ScheduleKnobs> schedules = compiler::driver::queue_safe_schedules(opts.knobs);
  std::vector<CompareRecord> out;
  for (const compiler::LayerInfo& li : compiled.layers) {
    if (li.placement != runtime::Placement::kAccel) continue;
    const runtime::Step& step = exe.steps[static_cast<size_t>(li.step)];
    if (step.op != "qconv2d") continue;
    if (!only_layers.empty() && std::find(only_layers.begin(), only_layers.end(), li.name) == only_layers.end()) continue;
    CompareRecord r;
    r.model = key;
    r.config = config_name;
    r.layer = li.name;
    r.op = li.op;
    const compiler::accel::AccelLayer layer = accel_layer_of(exe, step);
    auto t0 = Clock::now();
    const compiler::accel::LoweredLayer old_low = compiler::driver::lower_offloaded_layer(layer, li.op, cfg, schedules);
    r.old_ms = ms_since(t0);
    // the layer as rebuilt from the executable lowers to the executable's Program
    if (old_low.program.serialize() != exe.programs[static_cast<size_t>(step.program)].serialize()) {
      throw_internal_error("model {} on {}: layer {} rebuilt from the executable lowers to another Program", quote(key),
                           config_name, quote(li.name));
    }
    r.old_cycles = old_low.est_cycles;
    t0 = Clock::now();
    std::optional<compiler::accel::LoweredLayer> tmpl;
    try {
      const compiler::accel::LoweredLayer t = compiler::driver::lower_conv2d_template(layer, cfg, topts);
      r.template_cycles = t.est_cycles;
      r.template_schedule = t.schedule;
      tmpl = t;
    } catch (const compiler::driver::TemplateUnsupported& e) {
      r.feature = e.feature();
      r.reason = e.what();
    } catch (const UserError& e) {
      r.feature = "no candidate fits and runs";
      r.reason = e.what();
    }
    r.template_ms = ms_since(t0);
    // (outside the try: a dump that cannot be written is an error of its own)
    if (tmpl && !dump_dir.empty()) dump_pair(dump_dir, key, config_name, li.name, old_low, *tmpl);
    if (!r.template_cycles) {
      if (layer.params.groups == 1) {
        compiler::accel::AccelLayer shape = layer;
        shape.params.rq = shape_only_requant();
        shape.params.in_zero_point = 0;
        std::fill(shape.bias.begin(), shape.bias.end(), 0);
        auto t1 = Clock::now();
        r.shape_old = compiler::driver::lower_offloaded_layer(shape, li.op, cfg, schedules).est_cycles;
        r.shape_old_ms = ms_since(t1);
        t1 = Clock::now();
        try {
          r.shape_template = compiler::driver::lower_conv2d_template(shape, cfg, topts).est_cycles;
        } catch (const UserError& e) {
          r.shape_reason = e.what();
        }
        r.shape_template_ms = ms_since(t1);
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

/// A reason with its numbers and quoted names replaced, so that one cause counts once.
std::string reason_class(const CompareRecord& r) {
  std::string s = r.reason;
  const std::string marker = "unsupported by the template: ";
  const size_t at = s.find(marker);
  if (at != std::string::npos) s = s.substr(at + marker.size());
  s = std::regex_replace(s, std::regex("'[^']*'"), "'*'");
  s = std::regex_replace(s, std::regex("-?\\b[0-9]+\\b"), "N");
  return s;
}

int run_compare(const Options& o) {
  const fs::path src(o.source_dir);
  std::vector<std::pair<std::string, isa::HwConfig>> configs;
  for (const std::string& name : kConfigNames) {
    if (selected(o.only_configs, name)) {
      configs.emplace_back(name, isa::HwConfig::from_file((src / ("hw/configs/" + name + ".json")).string()));
    }
  }
  const fs::path models_dir = src / "models";
  std::vector<CompareRecord> all;
  std::vector<std::string> not_compiled;
  std::set<std::string> models_seen, model_keys, layers_seen;
  const auto t_all = Clock::now();
  for (const ModelFile& f : corpus_files(o)) {
    model_keys.insert(f.key);
    if (!selected(o.only_models, f.key)) continue;
    models_seen.insert(f.key);
    if (f.path.extension() != ".onnx") {
      fmt::print("  {}: not an ONNX model: skipped\n", f.key);
      continue;
    }
    // a ../shared/models file identical to the bundled one is the same model
    std::error_code ec;
    if (f.key.rfind("shared/models/", 0) == 0) {
      const std::string rel = f.key.substr(std::string("shared/models/").size());
      if (fs::is_regular_file(models_dir / rel, ec) && read_file(models_dir / rel) == read_file(f.path)) {
        // compared under the bundled key when that one runs too; alone, under its own
        if (selected(o.only_models, "models/" + rel)) {
          fmt::print("  {}: the same bytes as models/{}: compared there\n", f.key, rel);
          continue;
        }
      }
    }
    std::optional<ModelInput> input;
    try {
      input = input_for(f.key, f.path, src);
    } catch (const Error& e) {
      not_compiled.push_back(fmt::format("{}: load: {}", f.key, e.what()));
      continue;
    }
    for (const auto& [name, cfg] : configs) {
      const auto t0 = Clock::now();
      std::vector<CompareRecord> rs;
      try {
        compiler::driver::ConvTemplateOptions topts;
        topts.max_candidates = o.template_candidates;
        if (!o.dump_programs.empty()) topts.dump_ir_after = o.dump_ir;
        rs = compare_one(f.key, f.path, *input, name, cfg, topts, o.dump_programs, o.only_layers);
      } catch (const UserError& e) {
        not_compiled.push_back(fmt::format("{} on {}: compile: {}", f.key, name, e.what()));
        fmt::print("  {} on {}: not compiled: {}\n", f.key, name, e.what());
        continue;
      }
      size_t ok = 0;
      for (const CompareRecord& r : rs) {
        ok += r.template_cycles.has_value();
        if (r.template_cycles) {
          fmt::print("    {:<34} {:<8} {:<44} {:<10} old {:>9} template {:>9} ({:+.1f}%)  {}\n", f.key.substr(f.key.rfind('/') + 1).substr(0, 34), name,
                     r.layer.substr(0, 44), r.op.substr(0, 10), r.old_cycles, *r.template_cycles,
                     100.0 * (static_cast<double>(*r.template_cycles) - static_cast<double>(r.old_cycles)) /
                         static_cast<double>(r.old_cycles),
                     r.template_schedule);
        } else {
          fmt::print("    {:<34} {:<8} {:<44} {:<10} old {:>9} template: {}\n", f.key.substr(f.key.rfind('/') + 1).substr(0, 34), name,
                     r.layer.substr(0, 44), r.op.substr(0, 10), r.old_cycles, r.reason);
          if (r.shape_template) {
            fmt::print("    {:<34} {:<8} {:<44} {:<10}   shape only: old {:>9} template {:>9} ({:+.1f}%)\n", "", "", "", "",
                       *r.shape_old, *r.shape_template,
                       100.0 * (static_cast<double>(*r.shape_template) - static_cast<double>(*r.shape_old)) /
                           static_cast<double>(*r.shape_old));
          } else if (r.shape_old) {
            fmt::print("    {:<34} {:<8} {:<44} {:<10}   shape only: old {:>9} template: {}\n", "", "", "", "", *r.shape_old,
                       r.shape_reason);
          }
        }
      }
      fmt::print("  {} on {}: {} conv/dense layers, {} through the template, in {:.1f} s\n", f.key, name, rs.size(),
                 ok, std::chrono::duration<double>(Clock::now() - t0).count());
      std::fflush(stdout);
      for (CompareRecord& r : rs) {
        layers_seen.insert(r.layer);
        all.push_back(std::move(r));
      }
    }
  }
  for (const std::string& m : o.only_models) {
    if (!models_seen.count(m)) {
      throw_user_error("--models: no model {} in this corpus (its models: {})", quote(m), fmt::join(model_keys, ", "));
    }
  }
  std::vector<std::string> missing;
  for (const std::string& l : o.only_layers) {
    if (!layers_seen.count(l)) missing.push_back(quote(l));
  }
  if (!missing.empty() && not_compiled.empty()) {
    throw_user_error("--layers: no offloaded conv/dense layer named {} in the selected models and configurations",
                     fmt::join(missing, ", "));
  }
  // ---- summary ----
  size_t supported = 0, not_worse = 0;
  uint64_t old_total = 0, tmpl_total = 0, old_all = 0;
  double old_ms = 0, tmpl_ms = 0, shape_old_ms = 0, shape_tmpl_ms = 0;
  std::map<std::string, size_t> by_feature, by_reason, shape_fail;
  size_t shape_layers = 0, shape_ok = 0, shape_not_worse = 0;
  uint64_t shape_old_total = 0, shape_tmpl_total = 0;
  for (const CompareRecord& r : all) {
    old_all += static_cast<uint64_t>(r.old_cycles);
    old_ms += r.old_ms;
    tmpl_ms += r.template_ms;
    if (r.template_cycles) {
      ++supported;
      not_worse += *r.template_cycles <= r.old_cycles;
      old_total += static_cast<uint64_t>(r.old_cycles);
      tmpl_total += static_cast<uint64_t>(*r.template_cycles);
    } else {
      ++by_feature[r.feature];
      ++by_reason[reason_class(r)];
      if (r.shape_old) {
        ++shape_layers;
        shape_old_ms += r.shape_old_ms;
        shape_tmpl_ms += r.shape_template_ms;
        if (r.shape_template) {
          ++shape_ok;
          shape_not_worse += *r.shape_template <= *r.shape_old;
          shape_old_total += static_cast<uint64_t>(*r.shape_old);
          shape_tmpl_total += static_cast<uint64_t>(*r.shape_template);
        } else {
          CompareRecord c;
          c.reason = r.shape_reason;
          ++shape_fail[reason_class(c)];
        }
      }
    }
  }
  auto sorted = [](const std::map<std::string, size_t>& m) {
    std::vector<std::pair<std::string, size_t>> v(m.begin(), m.end());
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    return v;
  };
  fmt::print("\ntemplate comparison: {} conv/dense layers ({} runs not compiled) in {:.1f} s\n", all.size(),
             not_compiled.size(), std::chrono::duration<double>(Clock::now() - t_all).count());
  fmt::print("  through the template: {} of {}; template <= old on {} of them\n", supported, all.size(), not_worse);
  fmt::print("  cycles over those layers: old {}, template {} ({:+.2f}%)\n", old_total, tmpl_total,
             old_total == 0 ? 0.0
                            : 100.0 * (static_cast<double>(tmpl_total) - static_cast<double>(old_total)) /
                                  static_cast<double>(old_total));
  fmt::print("  lowering time: old {:.0f} ms, template {:.0f} ms (the layers as they are, one thread)\n", old_ms, tmpl_ms);
  fmt::print("  unsupported by feature:\n");
  for (const auto& [f, n] : sorted(by_feature)) fmt::print("    {:5} {}\n", n, f);
  fmt::print("  shape only (the unsupported layers of groups 1 with zero bias and input zero point and the chain "
             "y = clip((acc + 128) >> 8), both paths): {} layers, {} through the template, template <= old on {}\n",
             shape_layers, shape_ok, shape_not_worse);
  fmt::print("    cycles over those: old {}, template {} ({:+.2f}%)\n", shape_old_total, shape_tmpl_total,
             shape_old_total == 0 ? 0.0
                                  : 100.0 * (static_cast<double>(shape_tmpl_total) - static_cast<double>(shape_old_total)) /
                                        static_cast<double>(shape_old_total));
  fmt::print("    lowering time: old {:.0f} ms, template {:.0f} ms (one thread; template search builds at most {} points "
             "that run)\n", shape_old_ms, shape_tmpl_ms, o.template_candidates);
  for (const auto& [f, n] : sorted(shape_fail)) fmt::print("    {:5} not lowered: {}\n", n, f);
  fmt::print("  top reasons:\n");
  const auto reasons = sorted(by_reason);
  for (size_t i = 0; i < reasons.size() && i < 10; ++i) fmt::print("    {:5} {}\n", reasons[i].second, reasons[i].first);
  for (const std::string& e : not_compiled) fmt::print("  not compiled: {}\n", e);
  if (!o.compare_json.empty()) {
    nlohmann::ordered_json j;
    j["format"] = "tessel-template-compare/1";
    nlohmann::ordered_json layers = nlohmann::ordered_json::array();
    for (const CompareRecord& r : all) {
      nlohmann::ordered_json l;
      l["model"] = r.model;
      l["config"] = r.config;
      l["layer"] = r.layer;
      l["op"] = r.op;
      l["old_cycles"] = r.old_cycles;
      if (r.template_cycles) {
        l["template_cycles"] = *r.template_cycles;
        l["template_schedule"] = r.template_schedule;
      } else {
        l["template_cycles"] = nullptr;
        l["feature"] = r.feature;
        l["reason"] = r.reason;
        if (r.shape_old) {
          l["shape_only_old_cycles"] = *r.shape_old;
          if (r.shape_template) {
            l["shape_only_template_cycles"] = *r.shape_template;
          } else {
            l["shape_only_template_cycles"] = nullptr;
            l["shape_only_reason"] = r.shape_reason;
          }
        }
      }
      layers.push_back(std::move(l));
    }
    j["layers"] = std::move(layers);
    nlohmann::ordered_json sum;
    sum["layers"] = all.size();
    sum["supported"] = supported;
    sum["template_not_worse"] = not_worse;
    sum["old_cycles_supported"] = old_total;
    sum["template_cycles_supported"] = tmpl_total;
    sum["old_cycles_all"] = old_all;
    nlohmann::ordered_json feats = nlohmann::ordered_json::array();
    for (const auto& [f, n] : sorted(by_feature)) feats.push_back({{"feature", f}, {"layers", n}});
    sum["unsupported_by_feature"] = std::move(feats);
    sum["shape_only"] = {{"layers", shape_layers},
                         {"through_template", shape_ok},
                         {"template_not_worse", shape_not_worse},
                         {"old_cycles", shape_old_total},
                         {"template_cycles", shape_tmpl_total}};
    nlohmann::ordered_json rs = nlohmann::ordered_json::array();
    for (const auto& [f, n] : reasons) rs.push_back({{"reason", f}, {"layers", n}});
    sum["unsupported_by_reason"] = std::move(rs);
    sum["not_compiled"] = not_compiled;
    j["summary"] = std::move(sum);
    support::write_file_atomic(o.compare_json, j.dump(1) + "\n");
    fmt::print("wrote {}\n", o.compare_json);
  }
  if (!not_compiled.empty()) {
    fmt::print(stderr, "error: {} of the selected runs did not compile (listed above)\n", not_compiled.size());
    return 1;
  }
  return 0;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string x; std::getline(ss, x, ',');) if (!x.empty()) out.push_back(x);
  return out;
}

int run(int argc, char** argv) {
  CLI::App app{"tessel-program-corpus: the byte-identical Program corpus of the refactor gate"};
  Options o;
  std::string models, configs;
  app.add_option("--golden", o.golden, "the golden corpus (tests/golden/program_corpus.json); required unless --compare-template");
  app.add_option("--resnet18", o.resnet18,
                 "ResNet-18 v1 written by bench/gen_resnet18.py (required unless --compare-template leaves "
                 "it out with --models)");
  app.add_option("--source-dir", o.source_dir, "repository root (models/, hw/configs/, data/)")->required();
  app.add_option("--shared-dir", o.shared_dir, "the staged models (../shared/models); skipped when absent");
  app.add_option("--out", o.out, "also write the corpus built by this run to this file");
  app.add_flag("--update", o.update, "write the corpus to --golden instead of checking it");
  app.add_flag("--cost-table", o.cost_table, "print every layer's cost-model estimate against its cycles");
  app.add_option("--models", models, "comma-separated model keys to build (default: all)");
  app.add_option("--configs", configs, "comma-separated configurations to build (default: all)");
  app.add_flag("--compare-template", o.compare_template,
               "lower every offloaded conv/dense layer with the old path and the topi templates and compare "
               "(reads and writes no corpus)");
  app.add_option("--template-candidates", o.template_candidates,
                 "with --compare-template: points the template search builds (ConvTemplateOptions::max_candidates)")
      ->check(CLI::Range(size_t{1}, size_t{100000}));
  app.add_option("--dump-programs", o.dump_programs,
                 "with --compare-template: write both Programs of every layer the template takes as assembler "
                 "into this directory (<model>.<config>.<layer>.old.asm / .template.asm, the schedule first)");
  app.add_option("--layers", o.only_layers, "with --compare-template: compare only these layers (ONNX node names)")
      ->delimiter(',');
  app.add_option("--dump-ir", o.dump_ir,
                 "with --dump-programs: append the template's TIR after this accelerator pass (\"input\", \"all\" "
                 "or a pass name) to each .template.asm");
  app.add_option("--json", o.compare_json, "with --compare-template: also write the comparison as JSON here");
  app.add_option("--resnet18-budget", g_budget,
                 "C2..C12 cycle budget on 'default' (tests of the gate only; at most the frozen 7236325)")
      ->check(CLI::Range(uint64_t{0}, kResNet18C2C12Budget));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);  // prints the help, exit 0
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  }
  o.only_models = split_list(models);
  o.only_configs = split_list(configs);
  if (o.resnet18.empty() && (!o.compare_template || selected(o.only_models, kResNet18Key))) {
    throw CLI::RequiredError("--resnet18");
  }
  for (const std::string& c : o.only_configs) {
    if (std::find(kConfigNames.begin(), kConfigNames.end(), c) == kConfigNames.end()) {
      throw CLI::ValidationError("--configs", fmt::format("unknown configuration {} (known: {})", quote(c), fmt::join(kConfigNames, ", ")));
    }
  }
  for (std::string& l : o.only_layers) {
    l.erase(0, l.find_first_not_of(" \t"));
    l.erase(l.find_last_not_of(" \t") + 1);
    if (l.empty()) throw CLI::ValidationError("--layers", "an empty layer name");
  }
  if (!o.dump_ir.empty() && o.dump_programs.empty()) throw CLI::ValidationError("--dump-ir", "needs --dump-programs");
  compiler::accel_tir::check_dump_ir_after(o.dump_ir);
  if (o.compare_template) {
    if (o.update) throw CLI::ValidationError("--compare-template", "cannot be combined with --update");
    if (!o.dump_programs.empty()) {
      // before any work: a directory that cannot be made fails now
      std::error_code dec;
      fs::create_directories(o.dump_programs, dec);
      if (dec || !fs::is_directory(o.dump_programs, dec)) {
        throw_user_error("--dump-programs: cannot create the directory {}{}", quote(o.dump_programs),
                         dec ? ": " + dec.message() : std::string(" (a file of that name exists)"));
      }
    }
    return run_compare(o);
  }
  if (!o.compare_json.empty()) throw CLI::ValidationError("--json", "needs --compare-template");
  if (!o.dump_programs.empty()) throw CLI::ValidationError("--dump-programs", "needs --compare-template");
  if (!o.only_layers.empty() && !o.compare_template) throw CLI::ValidationError("--layers", "needs --compare-template");
  if (o.golden.empty()) throw CLI::ValidationError("--golden", "is required (unless --compare-template)");
  if (o.update && (!o.only_models.empty() || !o.only_configs.empty())) {
    throw CLI::ValidationError("--update", "writes the whole corpus; it cannot be combined with --models or --configs");
  }
  std::error_code ec;
  if (!o.shared_dir.empty() && !fs::is_directory(o.shared_dir, ec)) {
    // A golden file written without the staged models would drop their records.
    if (o.update) throw_user_error("--update needs the staged models, and --shared-dir {} is absent", quote(o.shared_dir));
    fmt::print("note: {} is absent: its models are not part of this run\n", quote(o.shared_dir));
  }

  const auto t0 = Clock::now();
  const Corpus now = build_corpus(o);
  for (const std::string& m : o.only_models) {
    if (std::none_of(now.models.begin(), now.models.end(), [&](const ModelRecord& r) { return r.model == m; })) {
      std::vector<std::string> keys;
      for (const ModelRecord& r : now.models) keys.push_back(r.model);
      throw_user_error("--models: no model {} in this corpus (its models: {})", quote(m), fmt::join(keys, ", "));
    }
  }
  const std::string text = to_text(now);
  fmt::print("corpus: {} models, {} runs, {} layers, built in {:.1f} s\n", now.models.size(), now.runs.size(),
             std::accumulate(now.runs.begin(), now.runs.end(), size_t{0}, [](size_t s, const RunRecord& r) { return s + r.layers.size(); }),
             std::chrono::duration<double>(Clock::now() - t0).count());
  for (const auto& [config, cycles] : now.resnet18_totals) {
    fmt::print("ResNet-18 C2..C12 on {}: {} cycles\n", config, cycles);
  }
  if (!o.out.empty()) support::write_file_atomic(o.out, text);
  const std::string budget = budget_failure(now);
  if (o.update) {
    if (!budget.empty()) {
      fmt::print(stderr, "error: {}; the golden file was not written\n", budget);
      return 1;
    }
    support::write_file_atomic(o.golden, text);
    fmt::print("wrote {}\n", o.golden);
    return 0;
  }
  const std::vector<uint8_t> golden_bytes = read_file(o.golden);
  const std::string golden_text(golden_bytes.begin(), golden_bytes.end());
  const Corpus golden_all = from_text(golden_text, o.golden);
  int rc = 0;
  // The golden file must be exactly what --update writes, so that a byte comparison of the
  // re-serialised records is a byte comparison of the file.
  if (to_text(golden_all) != golden_text) {
    fmt::print(stderr, "error: {} is not in the form this tool writes (edited by hand?); rewrite it with --update\n",
               o.golden);
    rc = 1;
  }
  // Without ../shared the corpus has no shared/models entries: compare the rest, and say so.
  Options sel = o;
  if (sel.only_models.empty()) {
    size_t skipped = 0;
    for (const ModelRecord& m : golden_all.models) {
      const bool built = std::any_of(now.models.begin(), now.models.end(), [&](const ModelRecord& r) { return r.model == m.model; });
      if (!built && m.model.rfind("shared/models/", 0) == 0) {
        ++skipped;
        continue;
      }
      sel.only_models.push_back(m.model);
    }
    for (const ModelRecord& m : now.models) {
      if (!selected(sel.only_models, m.model)) sel.only_models.push_back(m.model);
    }
    if (skipped > 0) {
      fmt::print("note: {} models of the golden file under shared/models were not checked (no {})\n", skipped,
                 quote(o.shared_dir));
    }
  }
  const Corpus golden = restrict(golden_all, sel);
  const std::vector<std::string> diffs = differences(golden, now);
  if (!diffs.empty()) {
    fmt::print(stderr, "error: the corpus differs from {} in {} place(s); first: {}\n", o.golden, diffs.size(), diffs[0]);
    for (size_t i = 1; i < diffs.size() && i < 20; ++i) fmt::print(stderr, "  also: {}\n", diffs[i]);
    if (diffs.size() > 20) fmt::print(stderr, "  ... and {} more\n", diffs.size() - 20);
    fmt::print(stderr, "(a Program changed on purpose: see docs/testing.md, \"The refactor gate\")\n");
    rc = 1;
  } else if (to_text(golden) != text) {
    fmt::print(stderr, "error: the corpus equals {} record for record but not byte for byte\n", o.golden);
    rc = 1;
  }
  if (!budget.empty()) {
    fmt::print(stderr, "error: {}\n", budget);
    rc = 1;
  }
  if (rc == 0) fmt::print("corpus equal to {}\n", o.golden);
  return rc;
}

}  // namespace
}  // namespace tessel::gate

int main(int argc, char** argv) { return tessel::bench::run_bench_main(argc, argv, tessel::gate::run); }
