// `tessel run` and `tessel compile`.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include <sys/stat.h>
#include <unistd.h>

#include "compiler/driver/compile.h"
#include "isa/asm.h"
#include "isa/verifier.h"
#include "runtime/device.h"
#include "runtime/graph_executor.h"
#include "support/atomic_file.h"
#include "support/error.h"
#include "support/file_read.h"
#include "support/json_text.h"
#include "support/npy.h"
#include "support/text.h"
#include "tools/commands.h"
#include "tools/inputs.h"
#include "tools/labels.h"
#include "tools/report.h"

namespace tessel::tools {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void check_dump_ir(const std::string& pass) {
  if (const std::string e = dump_ir_error(pass); !e.empty()) throw_user_error("{}", e);
}

/// --dump-ir list: every pass of the registry (compiler::pass_list()) in order with its level and
/// what it does.
void print_pass_list(std::ostream& out) {
  out << "passes in order (graph: once per model; tir, backend: per kernel lowered through TIR; "
         "loop-ir: per offloaded layer of the loop-IR backend):\n";
  for (const compiler::PassInfo& p : compiler::pass_list())
    out << fmt::format("  {:<7} {:<24} {}\n", p.level, p.name, p.summary);
  out << "a name at two levels dumps both; level:name (e.g. tir:fold_uop_loops) dumps one\n";
  out << "--time-passes also times two steps that are not IR passes (no --dump-ir): import (reading the ONNX "
         "model into the graph) and backend verify (isa::verify on each emitted Program)\n";
}

/// One line per pass: level (per-kernel passes only), name and milliseconds.
void print_timings(const std::vector<compiler::PassTiming>& timings, std::ostream& out) {
  for (const compiler::PassTiming& p : timings) {
    const std::string name = p.level.empty() ? p.pass : fmt::format("{:<7} {}", p.level, p.pass);
    out << fmt::format("  {:<32} {:8.2f} ms\n", name, p.ms);
  }
}

/// --time-passes: the model-level stages (wall time), then the per-kernel passes summed over the
/// offloaded layers (thread time).
void print_pass_times(const compiler::CompileResult& cr, std::ostream& out) {
  out << "pass times (wall, ms):\n";
  print_timings(cr.pass_timings, out);
  if (cr.kernel_pass_timings.empty()) return;
  out << "per-kernel passes (summed over the offloaded layers, thread time, ms):\n";
  print_timings(cr.kernel_pass_timings, out);
}

// Classifier output: [N,K] or [N,K,1,1] with K >= 2.
int64_t class_count(const std::vector<int64_t>& shape) {
  if (shape.size() == 2 && shape[1] >= 2) return shape[1];
  if (shape.size() == 4 && shape[1] >= 2 && shape[2] == 1 && shape[3] == 1) return shape[1];
  return 0;
}

std::string output_file_name(const std::string& base, size_t index, size_t count) {
  if (count == 1) return base;
  std::string stem = base;
  if (stem.size() > 4 && stem.compare(stem.size() - 4, 4, ".npy") == 0) stem.resize(stem.size() - 4);
  return fmt::format("{}_{}.npy", stem, index);
}

std::vector<std::vector<runtime::HostTensor>> calibration_sets(
    const std::vector<std::string>& calib, const std::vector<std::vector<int64_t>>& shapes,
    const std::vector<std::string>& names, bool nhwc) {
  if (calib.empty()) return {};
  if (shapes.size() != 1) {
    throw_user_error("--calib supports single-input models; this model has {} inputs", shapes.size());
  }
  return load_calibration(calib, shapes[0], names[0], nhwc);
}

}  // namespace

void check_sim_available(const std::string& kind, const std::vector<std::string>& built) {
  if (std::find(built.begin(), built.end(), kind) != built.end()) return;
  if (kind == "rtl") {
    throw_user_error("simulator 'rtl' is not available in this build (it has {}): the RTL simulator needs "
                     "Verilator; install it (scripts/install-deps.sh) and configure with -DTESSEL_WITH_RTL=ON",
                     fmt::join(built, ", "));
  }
  if (kind == "cycle") {
    throw_user_error("simulator 'cycle' is not available in this build (it has {}): the cycle model "
                     "(sim/cycle, tessel_sim_cycle) needs SystemC; install it (scripts/install-deps.sh) and "
                     "reconfigure",
                     fmt::join(built, ", "));
  }
  throw_user_error("unknown simulator {} (this build has {})", support::quote(kind), fmt::join(built, ", "));
}

isa::HwConfig load_config(const std::string& path) {
  isa::HwConfig cfg = path.empty() ? isa::HwConfig{} : isa::HwConfig::from_file(path);
  cfg.validate();
  return cfg;
}

void check_output_path(const std::string& path, const std::string& option) {
  if (path.empty()) return;
  std::error_code ec;
  const std::filesystem::path fp(path);
  if (std::filesystem::is_directory(fp, ec)) throw_user_error("{} {}: is a directory", option, support::quote(path));
  const std::filesystem::path parent = fp.parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
    throw_user_error("{} {}: directory {} does not exist", option, support::quote(path), support::quote(parent.string()));
  }
  // A name longer than the directory's file system takes would fail only when the results are
  // written, after the whole run (the atomic write's temporary name is longer still: 16 bytes).
  const std::string dir = parent.empty() ? std::string(".") : parent.string();
  const long name_max = pathconf(dir.c_str(), _PC_NAME_MAX);
  const size_t name_len = fp.filename().string().size();
  if (name_max > 0 && name_len + support::kAtomicTempSuffixBytes > static_cast<size_t>(name_max)) {
    throw_user_error("{} {}: the file name is {} bytes; the file system takes names of at most {} bytes ({} with "
                     "the temporary name a safe write uses)",
                     option, support::quote(path), name_len, name_max, name_max - support::kAtomicTempSuffixBytes);
  }
}

namespace {

// The identity of a path: its device and inode when it exists, else its absolute, lexically
// normalised form with the existing part's symbolic links resolved.
struct FileIdentity {
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  std::string normal;
};

FileIdentity identity_of(const std::string& path) {
  FileIdentity id;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    id.exists = true;
    id.dev = st.st_dev;
    id.ino = st.st_ino;
  }
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  id.normal = ec ? std::filesystem::path(path).lexically_normal().string() : p.lexically_normal().string();
  return id;
}

bool same_file(const FileIdentity& a, const FileIdentity& b) {
  if (a.exists && b.exists) return a.dev == b.dev && a.ino == b.ino;
  return a.normal == b.normal;
}

}  // namespace

void check_distinct_files(const std::vector<FileRole>& outputs, const std::vector<FileRole>& inputs) {
  std::vector<std::pair<const FileRole*, FileIdentity>> outs;
  for (const FileRole& o : outputs) {
    if (o.path.empty()) continue;
    FileIdentity id = identity_of(o.path);
    for (const auto& [prev, prev_id] : outs) {
      if (same_file(prev_id, id)) {
        throw_user_error("{} {} and {} {} are the same file: each output needs its own", prev->option,
                         support::quote(prev->path), o.option, support::quote(o.path));
      }
    }
    outs.emplace_back(&o, std::move(id));
  }
  for (const FileRole& in : inputs) {
    if (in.path.empty()) continue;
    const FileIdentity id = identity_of(in.path);
    for (const auto& [o, o_id] : outs) {
      if (same_file(o_id, id)) {
        throw_user_error("{} {} would overwrite {} {}, an input of this command", o->option,
                         support::quote(o->path), in.option, support::quote(in.path));
      }
    }
  }
}

namespace {

constexpr char kExecutableMagic[] = "TSLEXEC1";

bool is_executable_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return false;
  std::ifstream f(path, std::ios::binary);
  char head[8] = {};
  return f.read(head, 8) && std::memcmp(head, kExecutableMagic, 8) == 0;
}

// The compiler checked every Program for deadlocks at the queue depths it compiled for; a run
// at other depths checks them again (isa/verifier.h) so that a stream that no longer fits is
// an error naming the Program before anything runs.
void check_programs_at_run_depths(const runtime::Executable& exe, const isa::HwConfig& run, const std::string& path) {
  if (exe.config.cmd_queue_depth == run.cmd_queue_depth && exe.config.token_queue_depth == run.token_queue_depth) {
    return;
  }
  for (size_t i = 0; i < exe.programs.size(); ++i) {
    isa::Program p = exe.programs[i];
    p.config = p.config.with_run_settings(run);
    const std::vector<isa::Diagnostic> diags = isa::check_program(p);
    if (diags.empty()) continue;
    throw_user_error("{}: program {} ({}) cannot run with CMD_QUEUE_DEPTH={}, TOKEN_QUEUE_DEPTH={} (it was "
                     "compiled for {} and {}): {}{}",
                     path, i, support::quote(p.name), run.cmd_queue_depth, run.token_queue_depth, exe.config.cmd_queue_depth,
                     exe.config.token_queue_depth, diags[0].message,
                     diags.size() > 1 ? fmt::format(" (and {} more problems)", diags.size() - 1) : std::string());
  }
}

// A model with no symbolic batch dimension ignores --batch: that is an error for --batch > 1.
void check_batch_applies(const std::string& model, int64_t batch,
                         const std::vector<std::vector<int64_t>>& shapes_at_batch) {
  if (batch == 1) return;
  const std::vector<std::vector<int64_t>> at_one = compiler::ReferenceModel::load(model, 1).input_shapes();
  if (at_one == shapes_at_batch) {
    throw_user_error("--batch {}: {} has no symbolic (named) batch dimension in its inputs; its input "
                     "shapes are fixed",
                     batch, model);
  }
}

std::string files_text(const std::vector<std::string>& files) {
  std::string s;
  for (const std::string& f : files) s += (s.empty() ? "" : ", ") + f;
  return s;
}

// Layer rows of an Executable read from a .tsx, which carries no compiler::LayerInfo: one per
// step that computes (layout and (de/re)quantisation steps are "other CPU steps").
std::vector<compiler::LayerInfo> layers_of_executable(const runtime::Executable& exe) {
  std::vector<compiler::LayerInfo> layers;
  for (size_t s = 0; s < exe.steps.size(); ++s) {
    const runtime::Step& st = exe.steps[s];
    if (st.op == "pack_nchwnc" || st.op == "unpack_nchwnc" || st.op == "reshape" || st.op == "quantize" ||
        st.op == "dequantize" || st.op == "requantize") {
      continue;
    }
    compiler::LayerInfo li;
    li.step = static_cast<int>(s);
    li.name = st.name;
    li.op = st.op;
    if (!st.inputs.empty()) li.in_shape = exe.tensors.at(static_cast<size_t>(st.inputs[0])).shape;
    if (!st.outputs.empty()) li.out_shape = exe.tensors.at(static_cast<size_t>(st.outputs[0])).shape;
    li.placement = st.placement;
    layers.push_back(std::move(li));
  }
  return layers;
}

}  // namespace

int run_command(const RunOptions& o, std::ostream& out) {
  if (o.dump_ir == "list") {
    print_pass_list(out);
    return 0;
  }
  check_sim_available(o.sim, runtime::Device::kinds());
  check_dump_ir(o.dump_ir);
  if (o.batch < 1) throw_user_error("--batch {} must be at least 1", o.batch);
  check_output_path(o.output_path, "--output");
  check_output_path(o.report_json, "--report-json");
  {
    std::vector<FileRole> ins = {{"model", o.model}, {"--reference", o.reference_model},
                                 {"--config", o.config_path}, {"--labels", o.labels_path}};
    for (const std::string& f : o.inputs) ins.push_back({"--input", f});
    for (const std::string& f : o.calib) ins.push_back({"--calib", f});
    check_distinct_files({{"--output", o.output_path}, {"--report-json", o.report_json}}, ins);
  }
  const bool from_tsx = is_executable_file(o.model);

  compiler::CompileResult cr;
  std::optional<compiler::ReferenceModel> ref;
  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> shapes;
  isa::HwConfig cfg;
  std::string calib_text;
  double compile_ms = 0;
  std::vector<runtime::HostTensor> inputs;
  const auto load_inputs = [&] {
    if (o.inputs.size() != names.size()) {
      std::string list;
      for (size_t i = 0; i < names.size(); ++i) {
        list += fmt::format("{}{} {}", i ? ", " : "", support::quote(names[i]), support::shape_to_string(shapes[i]));
      }
      throw_user_error("{} has {} graph input(s) ({}) but {} --input file(s) were given", support::quote(o.model),
                       names.size(), list, o.inputs.size());
    }
    if (o.shape && o.inputs.size() != 1) throw_user_error("--shape needs exactly one --input");
    for (size_t i = 0; i < names.size(); ++i) {
      inputs.push_back(load_input(o.inputs[i], o.shape, shapes[i], names[i], o.nhwc));
    }
  };
  if (from_tsx) {
    // A compiled Executable (`tessel compile`): run as is; compile-time options do not apply.
    const std::pair<bool, const char*> unused[] = {{!o.calib.empty(), "--calib"},
                                                   {o.batch != 1, "--batch"},
                                                   {!o.offload, "--no-offload"},
                                                   {o.approximate_requant, "--approximate-requant"},
                                                   {!o.dump_ir.empty(), "--dump-ir"}};
    for (const auto& [given, option] : unused) {
      if (given) throw_user_error("{} does not apply to {}: it is an already compiled executable", option, support::quote(o.model));
    }
    try {
      cr.exe = runtime::Executable::deserialize(support::read_file_bounded(o.model, support::kMaxModelFileBytes, "an executable"));
    } catch (const UserError& e) {
      throw UserError(fmt::format("{}: {}", support::quote(o.model), e.what()));
    }
    // `tessel run` hands the executable dense float32 inputs and reads its outputs as dense
    // tensors (the Executable contract for compiled models; the compiler packs and unpacks
    // NCHWnc inside the graph): anything else is refused before it runs.
    for (const auto& [list, what] : {std::pair{&cr.exe.inputs, "graph input"}, std::pair{&cr.exe.outputs, "graph output"}}) {
      for (int idx : *list) {
        if (idx < 0 || static_cast<size_t>(idx) >= cr.exe.tensors.size()) continue;  // named by the executor
        const runtime::TensorDesc& t = cr.exe.tensors[static_cast<size_t>(idx)];
        if (t.layout != runtime::Layout::kNCHW) {
          throw_user_error("{}: {} {} (tensor {}) is in the packed NCHWnc layout; a compiled model's graph inputs "
                           "and outputs are dense (NCHW) tensors",
                           support::quote(o.model), what, support::quote(t.name), idx);
        }
        if (list == &cr.exe.inputs && t.dtype != runtime::DType::kF32) {
          throw_user_error("{}: graph input {} (tensor {}) is {}; a compiled model's graph inputs are float32",
                           support::quote(o.model), support::quote(t.name), idx, runtime::to_string(t.dtype));
        }
      }
    }
    cfg = cr.exe.config;
    if (!o.config_path.empty()) {
      // The hardware keys are the executable's identity; the run-time settings (DRAM_LATENCY,
      // CLOCK_MHZ, queue depths) are --config's.
      const isa::HwConfig given = load_config(o.config_path);
      if (!cfg.same_hardware(given)) {
        throw_user_error("{} was compiled for config {} but --config {} describes other hardware ({})",
                         support::quote(o.model), cfg.label(), support::quote(o.config_path),
                         isa::config_differences(cfg, given.with_run_settings(cfg)));
      }
      cfg = cfg.with_run_settings(given);
      check_programs_at_run_depths(cr.exe, cfg, o.model);
    }
    runtime::Device::check_kind(o.sim, cfg);
    for (int idx : cr.exe.inputs) {
      const runtime::TensorDesc& t = cr.exe.tensors.at(static_cast<size_t>(idx));
      names.push_back(t.name);
      shapes.push_back(t.shape);
    }
    load_inputs();
    if (!o.reference_model.empty()) {
      ref = compiler::ReferenceModel::load(o.reference_model, shapes.empty() || shapes[0].empty() ? 1 : shapes[0][0]);
      if (ref->input_shapes() != shapes) {
        throw_user_error("--reference {} takes inputs of other shapes than {}", o.reference_model, o.model);
      }
    }
    cr.layers = layers_of_executable(cr.exe);
  } else {
    if (!o.reference_model.empty()) {
      throw_user_error("--reference is for compiled executables (.tsx); {} is compared with itself in float",
                       o.model);
    }
    cfg = load_config(o.config_path);
    runtime::Device::check_kind(o.sim, cfg);  // e.g. rtl without a model for cfg: before compiling
    // The float reference also gives the graph inputs' names and shapes.
    ref = compiler::ReferenceModel::load(o.model, o.batch);
    names = ref->input_names();
    shapes = ref->input_shapes();
    check_batch_applies(o.model, o.batch, shapes);
    load_inputs();
    compiler::CompileOptions copts;
    copts.config = cfg;
    copts.offload = o.offload;
    copts.exact_requant = !o.approximate_requant;
    copts.batch = o.batch;
    copts.dump_ir_after = o.dump_ir;
    if (o.calib.empty()) {
      copts.calibration = {inputs};
      calib_text = "the run input itself (no --calib given)";
    } else {
      copts.calibration = calibration_sets(o.calib, shapes, names, o.nhwc);
      calib_text = fmt::format("{} sample(s) from {}", copts.calibration.size(), files_text(o.calib));
    }
    const auto t_compile = Clock::now();
    cr = compiler::compile_onnx(o.model, copts);
    compile_ms = seconds_since(t_compile) * 1e3;
    if (!o.dump_ir.empty()) out << cr.ir_dump << (cr.ir_dump.empty() || cr.ir_dump.back() == '\n' ? "" : "\n");
    if (o.time_passes) print_pass_times(cr, out);
  }

  // A model with several outputs writes --output as STEM_<i>.npy: those names too must not be
  // the report's file or an input (checked before the run).
  if (!o.output_path.empty() && cr.exe.outputs.size() > 1) {
    std::vector<FileRole> outs;
    for (size_t i = 0; i < cr.exe.outputs.size(); ++i) {
      outs.push_back({"--output", output_file_name(o.output_path, i, cr.exe.outputs.size())});
    }
    outs.push_back({"--report-json", o.report_json});
    std::vector<FileRole> ins = {{"model", o.model}, {"--reference", o.reference_model},
                                 {"--config", o.config_path}, {"--labels", o.labels_path}};
    for (const std::string& f : o.inputs) ins.push_back({"--input", f});
    for (const std::string& f : o.calib) ins.push_back({"--calib", f});
    check_distinct_files(outs, ins);
  }

  // Labels are read (and checked against the class count) before the run.
  std::vector<std::string> given_labels;
  if (!o.labels_path.empty()) given_labels = read_labels(o.labels_path);
  if (!cr.exe.outputs.empty()) {
    const runtime::TensorDesc& t0 = cr.exe.tensors.at(static_cast<size_t>(cr.exe.outputs[0]));
    const int64_t k = class_count(t0.shape);
    if (!o.labels_path.empty() && k > 0 && given_labels.size() != static_cast<size_t>(k)) {
      throw_user_error("--labels {} has {} lines but output {} has {} classes", o.labels_path,
                       given_labels.size(), support::quote(t0.name), k);
    }
    if (!o.labels_path.empty() && k == 0) {
      throw_user_error("--labels {}: output {} {} is not a classifier output", o.labels_path, support::quote(t0.name),
                       support::shape_to_string(t0.shape));
    }
  }

  // The measured run: the chosen simulator, no CPU timing inside, so its wall time is the
  // simulator's (plus the CPU-placed steps, subtracted below).
  std::unique_ptr<runtime::Device> device = runtime::Device::create(o.sim, cfg, dram_bytes_for(cr.exe.programs));
  runtime::ExecOptions fast;
  fast.measure_cpu = false;
  fast.check_accel = false;
  runtime::GraphExecutor exec(cr.exe, *device, fast);
  const auto t_run = Clock::now();
  const std::vector<runtime::HostTensor> outputs = exec.run(inputs);
  const double run_seconds = seconds_since(t_run);
  const std::vector<runtime::StepMeasurement> meas = exec.measurements();

  // The timing run: fsim, every offloaded layer also run and timed on the CPU and checked
  // bit-exactly against the accelerator's output.
  std::unique_ptr<runtime::Device> fsim = runtime::Device::create("fsim", cfg, dram_bytes_for(cr.exe.programs));
  runtime::ExecOptions timed;
  timed.measure_cpu = true;
  timed.check_accel = true;
  runtime::GraphExecutor exec_cpu(cr.exe, *fsim, timed);
  const std::vector<runtime::HostTensor> outputs_fsim = exec_cpu.run(inputs);
  const std::vector<runtime::StepMeasurement>& meas_cpu = exec_cpu.measurements();

  std::vector<runtime::HostTensor> ref_outputs;
  if (ref) {
    ref_outputs = ref->run(inputs);
    if (ref_outputs.size() != outputs.size()) {
      if (from_tsx) {
        throw_user_error("{} has {} outputs but --reference {} has {}", support::quote(o.model), outputs.size(),
                         support::quote(o.reference_model), ref_outputs.size());
      }
      throw_internal_error("compiled model has {} outputs but the reference has {}", outputs.size(),
                           ref_outputs.size());
    }
  }

  RunReport r;
  r.model = o.model;
  r.inputs = o.inputs;
  r.simulator = o.sim;
  r.config_name = cfg.label();
  r.clock_mhz = cfg.clock_mhz;
  r.macs_per_uop = cfg.macs_per_uop();
  r.offload = o.offload;
  r.quantized_by_tessel = cr.quantized_by_tessel;
  r.requant_mode = cr.exe.requant_mode;
  if (cr.quantized_by_tessel) r.calibration = calib_text;
  r.executable = from_tsx;
  if (from_tsx) r.reference_model = o.reference_model;
  if (!from_tsx) r.compile_ms = compile_ms;
  r.outputs_match_fsim = true;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].bytes != outputs_fsim[i].bytes) r.outputs_match_fsim = false;
  }

  for (size_t i = 0; i < outputs.size(); ++i) {
    OutputReport orep;
    const int tensor_index = cr.exe.outputs.at(i);
    orep.name = cr.exe.tensors.at(static_cast<size_t>(tensor_index)).name;
    orep.shape = outputs[i].shape;
    const std::vector<float> v = tensor_values(outputs[i]);
    const int64_t k = class_count(orep.shape);
    orep.classifier = k > 0;
    if (ref) {
      const std::vector<float> rv = tensor_values(ref_outputs[i]);
      if (v.size() != rv.size()) {
        if (from_tsx) {
          throw_user_error("output {} of {} has {} values but --reference {} gives {}", i, o.model, v.size(),
                           o.reference_model, rv.size());
        }
        throw_internal_error("output {} has {} values but the reference has {}", i, v.size(), rv.size());
      }
      orep.error = compute_error(v, rv, k);
    }
    if (orep.classifier) {
      std::vector<std::string> labels;
      if (i == 0) {
        if (!o.labels_path.empty()) {
          labels = given_labels;
        } else {
          std::vector<std::string> candidates;
          for (const std::string& d : o.label_search_dirs) {
            candidates.push_back(d + "/data/imagenet/imagenet_classes.txt");
          }
          labels = default_labels(k, shapes.empty() ? std::vector<int64_t>{} : shapes[0], candidates);
        }
      }
      for (int64_t idx : top_k(v.data(), k, 5)) {
        TopEntry e;
        e.index = idx;
        e.value = v[static_cast<size_t>(idx)];
        if (i == 0 && static_cast<size_t>(idx) < labels.size()) e.label = labels[static_cast<size_t>(idx)];
        orep.top.push_back(e);
      }
    }
    r.outputs.push_back(std::move(orep));
  }
  // Layers: the compiler's LayerInfo joined with the two runs' measurements.
  std::set<int> layer_steps;
  for (const compiler::LayerInfo& li : cr.layers) {
    const size_t s = static_cast<size_t>(li.step);
    if (li.step < 0 || s >= meas.size() || s >= meas_cpu.size()) {
      throw_internal_error("layer '{}' names step {} but the run measured {} steps", li.name, li.step,
                           meas.size());
    }
    // Layout steps only move bytes; they are counted with the other CPU steps.
    const std::string& step_op = cr.exe.steps.at(s).op;
    if (step_op == "pack_nchwnc" || step_op == "unpack_nchwnc" || step_op == "reshape") continue;
    layer_steps.insert(li.step);
    const runtime::StepMeasurement& m = meas[s];
    const runtime::StepMeasurement& mc = meas_cpu[s];
    LayerRow row;
    row.step = li.step;
    row.name = li.name;
    row.op = li.op;
    row.in_shape = li.in_shape;
    row.out_shape = li.out_shape;
    row.placement = li.placement == runtime::Placement::kAccel ? "accel" : "cpu";
    row.placement_reason = li.placement_reason;
    row.macs = from_tsx ? mc.macs : li.macs;
    row.cpu_us = mc.cpu_seconds * 1e6;
    row.cpu_cycles = mc.cpu_cycles;
    if (li.placement == runtime::Placement::kAccel) {
      const sim::Counters& c = m.accel.counters;
      row.cycles = m.accel.cycles;
      row.gemm_uops = c.gemm_counter;
      row.dram_bytes = c.inp_load_nbytes + c.wgt_load_nbytes + c.acc_load_nbytes + c.uop_load_nbytes +
                       c.out_store_nbytes;
      row.gemm_utilisation = gemm_utilisation(row.macs, row.cycles, r.macs_per_uop);
      row.speedup = speedup(mc.cpu_seconds, row.cycles, r.clock_mhz);
    }
    r.layers.push_back(std::move(row));
  }
  double cpu_step_seconds = 0;
  for (size_t s = 0; s < meas.size(); ++s) {
    if (meas[s].placement == runtime::Placement::kCpu) cpu_step_seconds += meas[s].cpu_seconds;
    if (meas[s].placement == runtime::Placement::kAccel) {
      r.sim.cycles += meas[s].accel.cycles;
      r.sim.insns += meas[s].accel.counters.insn_count;
    }
  }
  for (const runtime::StepMeasurement& m : meas_cpu) {
    if (!m.cpu_cycles_source.empty() && m.cpu_cycles_source != "none") r.cpu_cycles_source = m.cpu_cycles_source;
  }
  if (r.cpu_cycles_source.empty()) r.cpu_cycles_source = "none";
  for (size_t s = 0; s < meas_cpu.size(); ++s) {
    if (!layer_steps.count(static_cast<int>(s))) r.totals.other_steps_us += meas_cpu[s].cpu_seconds * 1e6;
  }
  compute_totals(r);
  r.sim.wall_seconds = std::max(run_seconds - cpu_step_seconds, 1e-9);
  if (r.sim.cycles) r.sim.cycles_per_second = static_cast<double>(r.sim.cycles) / r.sim.wall_seconds;
  if (r.sim.insns) r.sim.insns_per_second = static_cast<double>(r.sim.insns) / r.sim.wall_seconds;

  out << render_text(r);

  if (!o.output_path.empty()) {
    for (size_t i = 0; i < outputs.size(); ++i) {
      const std::string path = output_file_name(o.output_path, i, outputs.size());
      support::write_npy_f32(path, outputs[i].shape, tensor_values(outputs[i]));
      out << fmt::format("wrote {}\n", support::escape_bytes(path));
    }
  }
  if (!o.report_json.empty()) {
    const std::string text = support::dump_json(to_json(r), 2, "--report-json") + "\n";
    support::write_file_bytes(o.report_json, std::vector<uint8_t>(text.begin(), text.end()));
    out << fmt::format("wrote {}\n", support::escape_bytes(o.report_json));
  }
  if (!r.outputs_match_fsim) {
    throw_internal_error("the {} simulator's outputs differ from fsim's on the same executable", o.sim);
  }
  return 0;
}

int compile_command(const CompileCmdOptions& o, std::ostream& out) {
  if (o.dump_ir == "list") {
    print_pass_list(out);
    return 0;
  }
  if (is_executable_file(o.model)) {
    throw_user_error("{} is already a compiled executable (.tsx), not an onnx model: run it with tessel run {} -i "
                     "INPUT, or compile the onnx model it came from",
                     support::quote(o.model), support::quote(o.model));
  }
  check_dump_ir(o.dump_ir);
  if (o.batch < 1) throw_user_error("--batch {} must be at least 1", o.batch);
  check_output_path(o.output_path, "--output");
  {
    std::vector<FileRole> ins = {{"model", o.model}, {"--config", o.config_path}};
    for (const std::string& f : o.calib) ins.push_back({"--calib", f});
    check_distinct_files({{"--output", o.output_path}}, ins);
  }
  compiler::CompileOptions copts;
  copts.config = load_config(o.config_path);
  copts.offload = o.offload;
  copts.exact_requant = !o.approximate_requant;
  copts.batch = o.batch;
  copts.dump_ir_after = o.dump_ir;
  if (!o.calib.empty() || o.batch != 1) {
    compiler::ReferenceModel ref = compiler::ReferenceModel::load(o.model, o.batch);
    check_batch_applies(o.model, o.batch, ref.input_shapes());
    if (!o.calib.empty()) {
      copts.calibration = calibration_sets(o.calib, ref.input_shapes(), ref.input_names(), o.nhwc);
    }
  }
  const auto t0 = Clock::now();
  compiler::CompileResult cr;
  try {
    cr = compiler::compile_onnx(o.model, copts);
  } catch (const UserError& e) {
    // The compiler names its API (CompileOptions::calibration); on the command line the fix is
    // --calib.
    if (o.calib.empty() && std::string_view(e.what()).find("CompileOptions::calibration") != std::string_view::npos) {
      throw_user_error("{} is a float model: quantising it needs calibration inputs; pass --calib FILE "
                       "(one or more input tensor files)",
                       support::quote(o.model));
    }
    throw;
  }
  const double ms = seconds_since(t0) * 1e3;
  if (!o.dump_ir.empty()) out << cr.ir_dump << (cr.ir_dump.empty() || cr.ir_dump.back() == '\n' ? "" : "\n");
  const std::vector<uint8_t> bytes = cr.exe.serialize();
  support::write_file_bytes(o.output_path, bytes);
  int accel = 0;
  for (const compiler::LayerInfo& l : cr.layers) accel += l.placement == runtime::Placement::kAccel;
  out << fmt::format("compiled {} in {:.1f} ms{}: {} steps, {} layers ({} on the accelerator), "
                     "{} programs\n",
                     support::escape_bytes(o.model), ms, cr.quantized_by_tessel ? " (quantised by tessel)" : "",
                     cr.exe.steps.size(), cr.layers.size(), accel, cr.exe.programs.size());
  if (o.time_passes) {
    print_pass_times(cr, out);
  } else {
    print_timings(cr.pass_timings, out);
  }
  out << fmt::format("wrote {} ({} bytes)\n", support::escape_bytes(o.output_path), bytes.size());
  return 0;
}

int config_command(const std::string& config_path, std::ostream& out) {
  const std::string json = load_config(config_path).to_json();
  out << json << (json.empty() || json.back() != '\n' ? "\n" : "");
  return 0;
}

std::string dump_ir_error(const std::string& pass) {
  if (pass.empty() || pass == "all" || pass == "list") return "";
  const std::vector<std::string> names = compiler::pass_names();
  if (std::find(names.begin(), names.end(), pass) != names.end()) return "";
  std::string list;
  for (const std::string& n : names) {
    if (n.find(':') == std::string::npos) list += (list.empty() ? "" : ", ") + n;
  }
  return fmt::format("unknown pass {} for --dump-ir (passes: {}, each also as level:name, or all)",
                     support::quote(pass), list);
}

}  // namespace tessel::tools
