#include "compiler/driver/lower.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <optional>
#include <thread>

#include "compiler/backend/accel/passes.h"
#include "compiler/backend/accel/tir/accel_tir.h"
#include "compiler/driver/lower_qadd.h"
#include "compiler/passes/placement.h"
#include "compiler/ir/qnn_attrs.h"
#include "isa/verifier.h"
#include "support/error.h"

namespace tessel::compiler::driver {
namespace {

runtime::DType to_runtime(const ir::Value& v) {
  switch (v.dtype) {
    case ir::DType::kF32: return runtime::DType::kF32;
    case ir::DType::kI8: return runtime::DType::kI8;
    case ir::DType::kI32: return runtime::DType::kI32;
    case ir::DType::kI64: return runtime::DType::kI64;
    case ir::DType::kU8: break;
  }
  throw_internal_error("value '{}' is still uint8 after the graph passes", v.name);
}

int64_t step_macs(const ir::Graph& g, const ir::Node& n) {
  if (n.op == "qconv2d") return ir::qconv2d_params(g, n).macs();
  if (n.op == "conv2d_f32") {
    const auto& w = g.values[n.inputs[1]].shape;
    const auto& y = g.values[n.outputs[0]].shape;
    return ir::shape_elements(y) * w[1] * w[2] * w[3];
  }
  if (n.op == "matmul_f32") {
    const auto& a = g.values[n.inputs[0]].shape;
    const auto& y = g.values[n.outputs[0]].shape;
    return ir::shape_elements(y) * a.back();
  }
  return 0;
}

/// The accelerator qadd of node `n` (placed by passes::placement, which found its scheme).
QaddAccelLayer qadd_layer(const ir::Graph& g, const ir::Node& n) {
  const ir::Value& y = g.values[n.outputs[0]];
  const passes::QaddQuant q = passes::qadd_quant(g, n);
  const passes::QaddSchemeResult r = passes::find_qadd_scheme(q);
  TESSEL_CHECK(r.scheme.has_value(), "{} on the accelerator has no scheme: {}", ir::describe(n), r.reason);
  QaddAccelLayer l;
  l.name = n.name;
  l.shape = y.shape;
  l.a_zero_point = q.a_zero_point;
  l.b_zero_point = q.b_zero_point;
  l.scheme = *r.scheme;
  return l;
}

// ---- offloaded layers under the configured queue depths ----

using isa::only_deadlocks;
constexpr int kDeepQueue = isa::kMaxQueueDepth;

bool verifies(isa::Program& p, int cmd, int tok) {
  p.config.cmd_queue_depth = cmd;
  p.config.token_queue_depth = tok;
  return isa::check_program(p).empty();
}

/// Smallest d in [lo, hi] for which verifies(p, cmd(d), tok(d)), by bisection (a deeper queue
/// never makes the in-order execution wait longer); nullopt if d = hi fails.
template <typename Cmd, typename Tok>
std::optional<int> smallest_depth(isa::Program p, int lo, int hi, Cmd cmd, Tok tok) {
  if (!verifies(p, cmd(hi), tok(hi))) return std::nullopt;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (verifies(p, cmd(mid), tok(mid))) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return hi;
}

/// "the smallest depths this layer needs are ..." over the Programs of the schedules tried: the
/// smallest CMD_QUEUE_DEPTH that works with the configured TOKEN_QUEUE_DEPTH (if any does) and the
/// smallest TOKEN_QUEUE_DEPTH that works with the configured CMD_QUEUE_DEPTH. The latter always
/// exists: the backend's tokens are pushed before they are popped in program order
/// (compiler/backend/accel/dep_tokens.h), so once no push waits for room (a token queue as deep
/// as the stream is long) every pop is eventually served, whatever the command-queue depth.
std::string needed_depths(const std::vector<isa::Program>& programs, const isa::HwConfig& cfg) {
  const int c0 = cfg.cmd_queue_depth, t0 = cfg.token_queue_depth;
  std::optional<int> cmd, tok;
  auto keep_min = [](std::optional<int>& best, std::optional<int> v) {
    if (v && (!best || *v < *best)) best = v;
  };
  for (const isa::Program& p : programs) {
    // No queue ever holds more entries or tokens than the stream has instructions.
    const int hi = static_cast<int>(std::min<size_t>(p.insns.size(), kDeepQueue));
    keep_min(cmd, smallest_depth(p, c0, std::max(hi, c0), [](int d) { return d; }, [&](int) { return t0; }));
    keep_min(tok, smallest_depth(p, t0, std::max(hi, t0), [&](int) { return c0; }, [](int d) { return d; }));
  }
  if (!tok) throw_internal_error("the deadlocking streams of layer '{}' deadlock with any token-queue depth", programs.front().name);
  std::string s = "the smallest depths this layer needs are ";
  if (cmd) s += fmt::format("CMD_QUEUE_DEPTH={} (with TOKEN_QUEUE_DEPTH={}) or ", *cmd, t0);
  return s + fmt::format("TOKEN_QUEUE_DEPTH={} (with CMD_QUEUE_DEPTH={})", *tok, c0);
}

std::string describe_knobs(const accel::ScheduleKnobs& k) {
  auto val = [](int v) { return v == 0 ? std::string("auto") : std::to_string(v); };
  return fmt::format("vthreads={} oc_tile={} oh_tile={} ow_tile={} ic_chunk={}", k.virtual_threads,
                     val(k.oc_tile_blocks), val(k.oh_tile), val(k.ow_tile), val(k.ic_chunk));
}

}  // namespace

std::vector<accel::ScheduleKnobs> queue_safe_schedules(const accel::ScheduleKnobs& requested) {
  std::vector<accel::ScheduleKnobs> v = {requested};
  accel::ScheduleKnobs k = requested;
  k.virtual_threads = 1;
  v.push_back(k);
  k.oc_tile_blocks = 1;
  v.push_back(k);
  k.ic_chunk = 1;
  v.push_back(k);
  k.oh_tile = 1;
  v.push_back(k);
  std::vector<accel::ScheduleKnobs> unique;
  for (const accel::ScheduleKnobs& c : v) {
    bool seen = false;
    for (const accel::ScheduleKnobs& u : unique) seen = seen || u == c;
    if (!seen) unique.push_back(c);
  }
  return unique;
}

accel::LoweredLayer lower_offloaded_layer(const accel::AccelLayer& layer, const std::string& op,
                                          const isa::HwConfig& cfg,
                                          const std::vector<accel::ScheduleKnobs>& schedules,
                                          const std::string& dump_ir_after,
                                          const accel::CandidateFilter& candidates) {
  TESSEL_CHECK(!schedules.empty(), "layer '{}': no schedule to try", layer.name);
  std::vector<isa::Program> deadlocked;
  std::string first_message;
  size_t not_fitting = 0;
  // the requested schedule's NoTileFits (then the fallbacks, one virtual thread first, are tried)
  std::exception_ptr requested_no_fit;
  std::string no_fit_message;
  for (size_t k = 0; k < schedules.size(); ++k) {
    accel::LowerOptions lo;
    lo.knobs = schedules[k];
    lo.candidates = candidates;
    lo.dump_ir_after = dump_ir_after;
    lo.verify = false;  // verified below, so a queue-depth deadlock can be told from a bug
    accel::LoweredLayer lowered;
    try {
      lowered = accel::lower_conv2d(layer, cfg, lo);
    } catch (const accel::NoTileFits& e) {
      if (k == 0) {
        requested_no_fit = std::current_exception();
        no_fit_message = e.what();
      }
      ++not_fitting;  // a schedule that does not fit the scratchpads: try the next one
      continue;
    } catch (const UserError&) {
      if (k == 0) throw;  // a bad knob or layer, not a matter of fit
      ++not_fitting;
      continue;
    }
    const auto t_verify = std::chrono::steady_clock::now();
    const std::vector<isa::Diagnostic> diags = isa::check_program(lowered.program);
    lowered.pass_ms.emplace_back(
        "verify", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_verify).count());
    if (diags.empty()) {
      if (k > 0 && requested_no_fit) {
        lowered.schedule += fmt::format(" (the requested schedule, {}, does not fit: {})", describe_knobs(schedules[0]),
                                        no_fit_message);
      } else if (k > 0) {
        lowered.schedule += fmt::format(
            " (the requested schedule, {}, deadlocks with CMD_QUEUE_DEPTH={}, TOKEN_QUEUE_DEPTH={})",
            describe_knobs(schedules[0]), cfg.cmd_queue_depth, cfg.token_queue_depth);
      }
      return lowered;
    }
    if (!only_deadlocks(diags)) {
      throw_internal_error("layer '{}': the lowered stream fails the verifier: {}", layer.name,
                           diags.front().message);
    }
    if (first_message.empty()) first_message = diags.front().message;
    deadlocked.push_back(std::move(lowered.program));
  }
  if (deadlocked.empty()) {
    TESSEL_CHECK(requested_no_fit != nullptr, "layer '{}': no schedule lowered, none deadlocked", layer.name);
    std::rethrow_exception(requested_no_fit);  // none fits: the requested schedule's reason
  }
  const std::string tried =
      schedules.size() == 1
          ? fmt::format("the schedule tried ({}) deadlocks", describe_knobs(schedules[0]))
          : fmt::format("the {} schedules tried ({} first, {} last) all deadlock{}", schedules.size(),
                        describe_knobs(schedules[0]), describe_knobs(schedules.back()),
                        not_fitting > 0 ? " or do not fit the scratchpads" : "");
  throw_user_error("layer '{}' ({}) cannot be scheduled with CMD_QUEUE_DEPTH={}, TOKEN_QUEUE_DEPTH={}: {}; {}; {}",
                   layer.name, op, cfg.cmd_queue_depth, cfg.token_queue_depth, first_message, tried,
                   needed_depths(deadlocked, cfg));
}

std::vector<std::string> loop_ir_pass_names() {
  std::vector<std::string> names = {"schedule"};
  for (const accel::Pass& p : accel::pass_pipeline()) names.emplace_back(p.name);
  return names;
}

std::vector<PassInfo> kernel_pass_list() {
  std::vector<PassInfo> v;
  const tir::PassManager pipeline = accel_tir::tir_pipeline(isa::HwConfig{});
  for (const tir::FuncPass& p : pipeline.passes()) v.push_back({p.name, "tir", p.summary});
  const std::vector<std::string>& stages = accel_tir::pass_names();
  for (size_t k = v.size(); k < stages.size(); ++k)
    v.push_back({stages[k], "backend", "TIR with the accelerator's intrinsics -> instructions, micro-ops, tokens; verifier"});
  v.push_back({"schedule", "loop-ir", "tile sizes, input-channel chunk and virtual threads by the cost model"});
  for (const accel::Pass& p : accel::pass_pipeline()) v.push_back({p.name, "loop-ir", p.summary});
  return v;
}

std::string kernel_dump_after(const std::string& dump_ir_after, const std::vector<std::string>& stages) {
  if (dump_ir_after == "all") return dump_ir_after;
  return std::find(stages.begin(), stages.end(), dump_ir_after) != stages.end() ? dump_ir_after : std::string();
}

void add_kernel_timings(const std::vector<std::pair<std::string, double>>& pass_ms, bool tir_path,
                        CompileResult& result) {
  const std::vector<std::string> tir_names = accel_tir::tir_pipeline(isa::HwConfig{}).names();
  for (const auto& [pass, ms] : pass_ms) {
    std::string level;
    if (tir_path) {
      level = std::find(tir_names.begin(), tir_names.end(), pass) != tir_names.end() ? "tir" : "backend";
    } else {
      level = pass == "verify" ? "backend" : "loop-ir";
    }
    auto it = std::find_if(result.kernel_pass_timings.begin(), result.kernel_pass_timings.end(),
                           [&](const PassTiming& t) { return t.pass == pass && t.level == level; });
    if (it == result.kernel_pass_timings.end()) {
      result.kernel_pass_timings.push_back({pass, ms, level});
    } else {
      it->ms += ms;
    }
  }
}

std::string kernel_dump(const std::string& layer, const std::vector<std::pair<std::string, std::string>>& ir_after) {
  if (ir_after.empty()) return "";
  std::string s = fmt::format("; layer {}\n", layer);
  for (const auto& [pass, text] : ir_after) {
    s += fmt::format("; after {}\n{}", pass, text);
    if (text.empty() || text.back() != '\n') s += "\n";
  }
  return s;
}

std::string dump_executable(const runtime::Executable& exe) {
  std::string s = fmt::format("executable '{}' config {} {{\n", exe.model_name, exe.config.name());
  for (size_t i = 0; i < exe.tensors.size(); ++i) {
    const runtime::TensorDesc& t = exe.tensors[i];
    s += fmt::format("  t{} %{}: {}[{}]", i, t.name, runtime::to_string(t.dtype), fmt::join(t.shape, ","));
    if (t.layout == runtime::Layout::kNCHWnc) s += fmt::format(" NCHW{}n{}c", t.block_n, t.block_c);
    if (t.quantized) s += fmt::format(" q({},{})", t.quant.scale, t.quant.zero_point);
    if (t.is_constant()) s += fmt::format(" const {} bytes", t.data.size());
    s += "\n";
  }
  for (size_t k = 0; k < exe.steps.size(); ++k) {
    const runtime::Step& st = exe.steps[k];
    s += fmt::format("  s{} {}(t{}) -> t{}", k, st.op, fmt::join(st.inputs, ", t"), fmt::join(st.outputs, ", t"));
    if (st.placement == runtime::Placement::kAccel) s += fmt::format(" @accel program {}", st.program);
    if (!st.attrs.empty()) s += " " + st.attrs.dump();
    s += fmt::format(" # {}\n", st.name);
  }
  s += fmt::format("  inputs t{}\n  outputs t{}\n}}\n", fmt::join(exe.inputs, ", t"), fmt::join(exe.outputs, ", t"));
  return s;
}

uint64_t program_dram_bytes(const isa::Program& p) {
  uint64_t bytes = 0;
  for (const isa::Instruction& in : p.insns) {
    if (in.opcode != isa::Opcode::kLoad && in.opcode != isa::Opcode::kStore) continue;
    bytes += static_cast<uint64_t>(in.y_size) * in.x_size * isa::dram_elem_bytes(p.config, in.mem_type);
  }
  return bytes;
}

void lower_to_executable(const ir::Graph& g, const CompileOptions& opts, CompileResult& result) {
  runtime::Executable& exe = result.exe;
  exe.config = opts.config;
  exe.model_name = g.name;
  exe.requant_mode = opts.exact_requant ? "exact" : "approximate";
  exe.tensors.clear();
  for (const ir::Value& v : g.values) {
    runtime::TensorDesc t;
    t.name = v.name;
    t.dtype = to_runtime(v);
    t.shape = v.shape;
    t.layout = v.layout;
    t.block_n = v.block_n;
    t.block_c = v.block_c;
    if (v.quant && v.quant->per_tensor()) {
      t.quantized = true;
      t.quant = {v.quant->scale.at(0), v.quant->zero_point.at(0)};
    }
    if (v.is_const) t.data = v.data;
    exe.tensors.push_back(std::move(t));
  }
  exe.inputs = g.inputs;
  exe.outputs = g.outputs;

  std::string accel_dump;
  // Loop-IR dumps: "all", or the name of one of the loop-IR backend's passes.
  const std::string accel_dump_after =
      kernel_dump_after(dump_for_level(opts.dump_ir_after, "loop-ir"), loop_ir_pass_names());
  // TIR dumps (qadd kernels): "all", or the name of one of the TIR backend's stages (its TIR
  // passes at level "tir", emit_instructions at level "backend").
  std::string tir_dump_after = kernel_dump_after(dump_for_level(opts.dump_ir_after, "tir"), accel_tir::pass_names());
  if (tir_dump_after.empty()) {
    tir_dump_after = kernel_dump_after(dump_for_level(opts.dump_ir_after, "backend"), accel_tir::pass_names());
  }
  // The offloaded layers are independent: lower them on a pool of threads (each result in its
  // own slot, so the executable does not depend on the thread count), then assemble in order.
  std::vector<size_t> accel_nodes;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    if (!n.is_tessel()) throw_internal_error("{} was not lowered to a tessel kernel by the graph passes", ir::describe(n));
    if (n.placement == runtime::Placement::kAccel) {
      TESSEL_CHECK(n.op == "qconv2d" || n.op == "qadd", "{} placed on the accelerator", ir::describe(n));
      accel_nodes.push_back(i);
    }
  }
  std::vector<accel::LoweredLayer> lowered_layers(accel_nodes.size());
  std::vector<std::exception_ptr> errors(accel_nodes.size());
  {
    const std::vector<accel::ScheduleKnobs> schedules = queue_safe_schedules(opts.knobs);
    auto lower_one = [&](size_t k) {
      const ir::Node& n = g.nodes[accel_nodes[k]];
      try {
        if (n.op == "qadd") {
          lowered_layers[k] = lower_qadd_layer(qadd_layer(g, n), opts.config, tir_dump_after);
          return;
        }
        accel::AccelLayer layer;
        layer.name = n.name;
        layer.params = ir::qconv2d_params(g, n);
        const auto w = g.const_i64(n.inputs[1]);
        layer.weights.assign(w.begin(), w.end());
        const auto b = g.const_i64(n.inputs[2]);
        layer.bias.assign(b.begin(), b.end());
        lowered_layers[k] = lower_offloaded_layer(layer, n.source_op.empty() ? n.op : n.source_op, opts.config,
                                                  schedules, accel_dump_after);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    };
    const size_t hw = std::max<size_t>(1, std::thread::hardware_concurrency());
    const size_t jobs = std::min(accel_nodes.size(), opts.jobs > 0 ? static_cast<size_t>(opts.jobs) : hw);
    if (jobs <= 1) {
      for (size_t k = 0; k < accel_nodes.size(); ++k) lower_one(k);
    } else {
      std::atomic<size_t> next{0};
      std::vector<std::thread> pool;
      for (size_t t = 0; t < jobs; ++t) {
        pool.emplace_back([&] {
          for (size_t k = next++; k < accel_nodes.size(); k = next++) lower_one(k);
        });
      }
      for (std::thread& t : pool) t.join();
    }
    // the first failing layer in graph order, whatever the thread count
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
  }
  size_t next_accel = 0;
  for (const ir::Node& n : g.nodes) {
    runtime::Step s;
    s.name = n.name;
    s.op = n.op;
    s.inputs = n.inputs;
    s.outputs = n.outputs;
    s.attrs = n.attrs;
    s.placement = n.placement;
    LayerInfo info;
    info.step = static_cast<int>(exe.steps.size());
    info.name = n.name;
    info.op = n.source_op.empty() ? n.op : n.source_op;
    info.in_shape = n.inputs.empty() ? std::vector<int64_t>{} : g.values[n.inputs[0]].shape;
    info.out_shape = g.values[n.outputs[0]].shape;
    info.placement = n.placement;
    info.placement_reason = n.placement_reason;
    info.macs = step_macs(g, n);
    if (n.placement == runtime::Placement::kAccel) {
      accel::LoweredLayer& lowered = lowered_layers[next_accel++];
      add_kernel_timings(lowered.pass_ms, /*tir_path=*/n.op == "qadd", result);
      if (!lowered.ir_dump.empty()) accel_dump += fmt::format("; layer {}\n{}", n.name, lowered.ir_dump);
      info.ideal_gemm_uops = lowered.ideal_gemm_uops;
      info.dram_bytes = program_dram_bytes(lowered.program);
      info.schedule = lowered.schedule;
      info.est_cycles = lowered.est_cycles;
      s.program = static_cast<int>(exe.programs.size());
      if (n.op == "qadd") {
        s.input_segments = {kQaddSegA, kQaddSegB};
        s.output_segments = {kQaddSegOut};
      } else {
        s.input_segments = {"inp", "", ""};
        s.output_segments = {"out"};
      }
      exe.programs.push_back(std::move(lowered.program));
    }
    if (n.op != "reshape") result.layers.push_back(std::move(info));
    exe.steps.push_back(std::move(s));
  }
  result.ir_dump += accel_dump;
}

}  // namespace tessel::compiler::driver
