#include "compiler/driver/compile.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "compiler/driver/lower.h"
#include "compiler/frontend/onnx_import.h"
#include "compiler/passes/pass.h"
#include "support/error.h"

namespace tessel::compiler {

namespace {

reference::RefTensor to_ref(const runtime::HostTensor& h, const std::string& what) {
  if (h.dtype != runtime::DType::kF32)
    throw_user_error("{} has dtype {}, expected f32", what, runtime::to_string(h.dtype));
  const int64_t n = ir::shape_elements(h.shape);
  if (static_cast<int64_t>(h.bytes.size()) != n * 4)
    throw_user_error("{} has {} bytes for shape {} ({} expected)", what, h.bytes.size(), ir::shape_string(h.shape), n * 4);
  reference::RefTensor t;
  t.dtype = ir::DType::kF32;
  t.shape = h.shape;
  t.f.resize(n);
  if (n > 0) std::memcpy(t.f.data(), h.bytes.data(), h.bytes.size());
  return t;
}

}  // namespace

std::vector<PassInfo> pass_list() {
  std::vector<PassInfo> v;
  for (const auto& p : passes::graph_pipeline()) v.push_back({p.name, "graph", p.summary});
  v.push_back({"lower", "driver", "the graph to the executable; offloaded layers lowered in parallel"});
  for (const auto& p : driver::kernel_pass_list()) v.push_back(p);
  return v;
}

std::vector<std::string> pass_names() {
  std::vector<std::string> names;
  for (const PassInfo& p : pass_list()) {
    if (std::find(names.begin(), names.end(), p.name) == names.end()) names.push_back(p.name);
  }
  for (const PassInfo& p : pass_list()) names.push_back(p.level + ":" + p.name);
  return names;
}

std::string dump_for_level(const std::string& dump_ir_after, const std::string& level) {
  const size_t colon = dump_ir_after.find(':');
  if (colon == std::string::npos) return dump_ir_after;
  return dump_ir_after.compare(0, colon, level) == 0 ? dump_ir_after.substr(colon + 1) : std::string();
}

namespace {

/// The graph passes and lowering of compile_onnx / compile_onnx_bytes on the imported `g`;
/// `import_ms` is the import's wall time (the first entry of pass_timings).
CompileResult compile_graph(ir::Graph g, const std::vector<frontend::DeclaredInput>& declared,
                            const std::string& onnx_path, double import_ms, const CompileOptions& opts) {
  if (opts.batch != 1 &&
      std::none_of(declared.begin(), declared.end(), [](const auto& d) { return d.has_symbolic_dim(); })) {
    std::string inputs;
    for (const frontend::DeclaredInput& d : declared)
      inputs += fmt::format("{}'{}' {}", inputs.empty() ? "" : ", ", d.name, ir::shape_string(d.dims));
    throw_user_error(
        "batch {} does not apply to '{}': no graph input has a symbolic (named) dimension, the input shapes are "
        "fixed ({}); compile it with batch 1",
        opts.batch, onnx_path, inputs);
  }

  passes::PassContext ctx;
  ctx.config = opts.config;
  ctx.offload = opts.offload;
  ctx.exact_requant = opts.exact_requant;
  for (size_t r = 0; r < opts.calibration.size(); ++r) {
    std::vector<reference::RefTensor> run;
    for (size_t k = 0; k < opts.calibration[r].size(); ++k)
      run.push_back(to_ref(opts.calibration[r][k], fmt::format("calibration entry {} tensor {}", r, k)));
    ctx.calibration.push_back(std::move(run));
  }

  CompileResult result;
  result.pass_timings.push_back({"import", import_ms});
  std::vector<passes::PassTime> times;
  std::vector<std::string> later;
  for (const PassInfo& p : pass_list())
    if (p.level != "graph") later.push_back(p.name);
  passes::run_pipeline(g, ctx, dump_for_level(opts.dump_ir_after, "graph"), &times, &result.ir_dump, later);
  for (const auto& t : times) result.pass_timings.push_back({t.pass, t.ms});

  const auto t0 = std::chrono::steady_clock::now();
  driver::lower_to_executable(g, opts, result);
  const auto t1 = std::chrono::steady_clock::now();
  result.pass_timings.push_back({"lower", std::chrono::duration<double, std::milli>(t1 - t0).count()});
  if (const std::string d = dump_for_level(opts.dump_ir_after, "driver"); d == "lower" || d == "all")
    result.ir_dump += "; after lower\n" + driver::dump_executable(result.exe);
  result.quantized_by_tessel = ctx.quantized_by_tessel;
  return result;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

CompileResult compile_onnx(const std::string& onnx_path, const CompileOptions& opts) {
  opts.config.validate();
  if (opts.batch < 1) throw_user_error("batch {} is invalid (must be >= 1)", opts.batch);
  std::vector<frontend::DeclaredInput> declared;
  const auto t0 = std::chrono::steady_clock::now();
  ir::Graph g = frontend::import_onnx_file(onnx_path, opts.batch, &declared);
  const double import_ms = ms_since(t0);
  return compile_graph(std::move(g), declared, onnx_path, import_ms, opts);
}

CompileResult compile_onnx_bytes(const std::string& bytes, const std::string& what, const CompileOptions& opts) {
  opts.config.validate();
  if (opts.batch < 1) throw_user_error("batch {} is invalid (must be >= 1)", opts.batch);
  std::vector<frontend::DeclaredInput> declared;
  const auto t0 = std::chrono::steady_clock::now();
  ir::Graph g = frontend::import_onnx_bytes(bytes, what, opts.batch, &declared);
  const double import_ms = ms_since(t0);
  return compile_graph(std::move(g), declared, what, import_ms, opts);
}

}  // namespace tessel::compiler
