// The graph executor: a plan per step built once (kernel, bound host buffers, device segment
// addresses, scratch for the CPU check of accelerator steps), then run() walks the plans.
#include "runtime/graph_executor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>

#include "isa/asm.h"
#include "runtime/cpu/cycle_counter.h"
#include "runtime/cpu/kernels.h"
#include "support/error.h"
#include "support/text.h"

namespace tessel::runtime {

namespace {

constexpr DeviceAddr kUnbound = std::numeric_limits<DeviceAddr>::max();

// An accelerator step's plan.
struct AccelPlan {
  LoadedProgram* loaded = nullptr;
  std::vector<DeviceAddr> in_addr, out_addr;  // kUnbound for inputs without a segment
  // CPU run of the same layer: NCHW views of the NCHWnc inputs (the activations; weights and
  // bias are plain) and of y.
  std::vector<bool> unpack_in;
  std::vector<TensorDesc> in_plain;          // per input (used where unpack_in)
  std::vector<std::vector<uint8_t>> in_buf;  // per input: unpacked (where unpack_in)
  bool unpack_y = false;
  TensorDesc y_plain;
  std::vector<uint8_t> y_cpu, y_acc;  // y from the CPU; accel y unpacked
  cpu::KernelCall cpu_call;
  int64_t macs = 0;
};

struct StepPlan {
  cpu::KernelFn fn = nullptr;
  cpu::KernelCall call;
  bool accel = false;
  AccelPlan ap;
};

}  // namespace

struct GraphExecutor::Impl {
  Executable exe;
  Device& dev;
  ExecOptions opts;
  std::vector<std::vector<uint8_t>> buffers;  // per tensor, size_bytes()
  std::vector<LoadedProgram> loaded;          // per Program
  std::vector<StepPlan> plans;
  std::vector<StepMeasurement> meas;
  cpu::CycleCounter counter;

  Impl(const Executable& e, Device& d, ExecOptions o) : exe(e), dev(d), opts(o) {}

  void prepare();
  void run_accel(size_t si, StepPlan& plan, StepMeasurement& m);
  // Runs `call` `repeats` times; records min wall time and min cycles.
  void time_kernel(cpu::KernelFn fn, const cpu::KernelCall& call, int repeats,
                   StepMeasurement& m);
};

void GraphExecutor::Impl::prepare() {
  const isa::HwConfig& cfg = dev.config();
  // The device's run-time settings (DRAM latency, clock, queue depths) apply; the hardware keys
  // must match (isa::HwConfig::same_hardware).
  if (!exe.config.same_hardware(cfg)) {
    throw_user_error("executable {} was compiled for config {}, but the {} device has config {} ({})",
                     support::quote(exe.model_name), exe.config.label(), dev.kind(), cfg.label(),
                     isa::config_differences(exe.config, cfg.with_run_settings(exe.config)));
  }
  const int nt = static_cast<int>(exe.tensors.size());
  auto check_idx = [&](int idx, const std::string& what) {
    if (idx < 0 || idx >= nt) {
      throw_user_error("{} refers to tensor {}, but the executable has {} tensors", what, idx, nt);
    }
  };
  buffers.resize(exe.tensors.size());
  std::vector<bool> ready(exe.tensors.size(), false);
  for (size_t i = 0; i < exe.tensors.size(); ++i) {
    const TensorDesc& t = exe.tensors[i];
    buffers[i].assign(static_cast<size_t>(t.size_bytes()), 0);
    if (t.is_constant()) {
      if (t.data.size() != buffers[i].size()) {
        throw_user_error("constant tensor {} holds {} bytes, its shape needs {}", support::quote(t.name),
                         t.data.size(), buffers[i].size());
      }
      std::memcpy(buffers[i].data(), t.data.data(), t.data.size());
      ready[i] = true;
    }
  }
  for (int idx : exe.inputs) {
    check_idx(idx, "a graph input");
    ready[static_cast<size_t>(idx)] = true;
  }
  for (int idx : exe.outputs) check_idx(idx, "a graph output");
  // Structure: an executable computes something, every tensor is written at most once (by one
  // step, never over a graph input or a constant), and every graph output is written by a step
  // or is a graph input or constant (checked after the steps below). A step whose outputs no
  // later step reads and that are no graph output is allowed: it cannot change the outputs.
  if (exe.outputs.empty()) {
    throw_user_error("executable {} has no graph outputs: it computes nothing", support::quote(exe.model_name));
  }
  std::vector<int> writer(exe.tensors.size(), -1);  // tensor -> the step that writes it
  std::vector<bool> is_input(exe.tensors.size(), false);
  for (int idx : exe.inputs) is_input[static_cast<size_t>(idx)] = true;

  loaded.reserve(exe.programs.size());
  for (const isa::Program& p : exe.programs) loaded.push_back(dev.load(p));

  plans.resize(exe.steps.size());
  meas.resize(exe.steps.size());
  for (size_t si = 0; si < exe.steps.size(); ++si) {
    const Step& st = exe.steps[si];
    StepPlan& plan = plans[si];
    plan.fn = cpu::find_kernel(st.op, st.name);
    plan.call.step = &st;
    for (int idx : st.inputs) {
      check_idx(idx, fmt::format("step {} input", support::quote(st.name)));
      if (!ready[static_cast<size_t>(idx)]) {
        throw_user_error("step {} reads tensor {}, which no earlier step, graph input or "
                         "constant provides",
                         support::quote(st.name), support::quote(exe.tensors[static_cast<size_t>(idx)].name));
      }
      plan.call.inputs.push_back({&exe.tensors[static_cast<size_t>(idx)],
                                  buffers[static_cast<size_t>(idx)].data()});
    }
    for (int idx : st.outputs) {
      check_idx(idx, fmt::format("step {} output", support::quote(st.name)));
      if (exe.tensors[static_cast<size_t>(idx)].is_constant()) {
        throw_user_error("step {} writes constant tensor {}", support::quote(st.name),
                         support::quote(exe.tensors[static_cast<size_t>(idx)].name));
      }
      if (is_input[static_cast<size_t>(idx)]) {
        throw_user_error("step {} writes graph input {}", support::quote(st.name),
                         support::quote(exe.tensors[static_cast<size_t>(idx)].name));
      }
      if (const int w = writer[static_cast<size_t>(idx)]; w >= 0) {
        throw_user_error("tensor {} is written twice: by step {} ({}) and by step {} ({})",
                         support::quote(exe.tensors[static_cast<size_t>(idx)].name), w,
                         support::quote(exe.steps[static_cast<size_t>(w)].name), si, support::quote(st.name));
      }
      writer[static_cast<size_t>(idx)] = static_cast<int>(si);
      ready[static_cast<size_t>(idx)] = true;
      plan.call.outputs.push_back({&exe.tensors[static_cast<size_t>(idx)],
                                   buffers[static_cast<size_t>(idx)].data()});
    }
    StepMeasurement& m = meas[si];
    m.name = st.name;
    m.op = st.op;
    m.placement = st.placement;
    m.cpu_cycles_source = std::string(counter.source());
    if (st.placement == Placement::kCpu) continue;

    // ---- accelerator step ----
    plan.accel = true;
    AccelPlan& ap = plan.ap;
    if (st.program < 0 || st.program >= static_cast<int>(exe.programs.size())) {
      throw_user_error("step {} runs program {}, but the executable has {} programs", support::quote(st.name),
                       st.program, exe.programs.size());
    }
    const isa::Program& prog = exe.programs[static_cast<size_t>(st.program)];
    ap.loaded = &loaded[static_cast<size_t>(st.program)];
    if (st.input_segments.size() != st.inputs.size() ||
        st.output_segments.size() != st.outputs.size()) {
      throw_user_error("step {} has {} inputs / {} outputs but {} input / {} output segments",
                       support::quote(st.name), st.inputs.size(), st.outputs.size(), st.input_segments.size(),
                       st.output_segments.size());
    }
    auto bind = [&](const std::string& seg, int idx, bool output) -> DeviceAddr {
      if (seg.empty()) {
        if (output) throw_user_error("step {} output {} has no segment", support::quote(st.name), idx);
        return kUnbound;
      }
      const TensorDesc& t = exe.tensors[static_cast<size_t>(idx)];
      const isa::Segment& s = prog.segment(seg);
      if (static_cast<uint64_t>(t.size_bytes()) > s.size_bytes) {
        throw_user_error("step {}: tensor {} needs {} bytes but segment {} of program {} "
                         "holds {}",
                         support::quote(st.name), support::quote(t.name), t.size_bytes(), support::quote(seg), support::quote(prog.name), s.size_bytes);
      }
      return ap.loaded->segment_addr(prog, seg);
    };
    for (size_t i = 0; i < st.inputs.size(); ++i) {
      ap.in_addr.push_back(bind(st.input_segments[i], st.inputs[i], false));
    }
    for (size_t i = 0; i < st.outputs.size(); ++i) {
      ap.out_addr.push_back(bind(st.output_segments[i], st.outputs[i], true));
    }
    const bool is_conv = st.op == "qconv2d" && st.inputs.size() == 3 && st.outputs.size() == 1;
    const bool is_add = st.op == "qadd" && st.inputs.size() == 2 && st.outputs.size() == 1;
    if (!is_conv && !is_add) {
      throw_user_error("step {}: accelerator steps must be qconv2d with inputs [x, w, bias] or qadd with inputs "
                       "[a, b], and one output, got op {} with {} inputs and {} outputs",
                       support::quote(st.name), support::quote(st.op), st.inputs.size(), st.outputs.size());
    }
    const TensorDesc& y = exe.tensors[static_cast<size_t>(st.outputs[0])];
    auto check_blocks = [&](const TensorDesc& t, int bc, const char* role) {
      if (t.layout == Layout::kNCHWnc && (t.block_n != cfg.batch() || t.block_c != bc)) {
        throw_user_error("step {}: {} {} has NCHWnc blocks {}x{}, the config needs {}x{}",
                         support::quote(st.name), role, support::quote(t.name), t.block_n, t.block_c, cfg.batch(), bc);
      }
    };
    // The activations: qconv2d's x (BATCH x BLOCK_IN); qadd's a and b, which the Program loads
    // into the accumulator (BATCH x BLOCK_OUT), all of y's shape (no broadcast).
    const size_t activations = is_conv ? 1 : 2;
    for (size_t i = 0; i < activations; ++i) {
      const TensorDesc& x = exe.tensors[static_cast<size_t>(st.inputs[i])];
      check_blocks(x, is_conv ? cfg.block_in() : cfg.block_out(), i == 0 ? (is_conv ? "input" : "input a") : "input b");
      if (is_add && x.shape != y.shape) {
        throw_user_error("step {}: accelerator qadd input {} has shape [{}], the output {} has [{}] (the accelerator "
                         "adds tensors of one shape)",
                         support::quote(st.name), support::quote(x.name), fmt::join(x.shape, ", "),
                         support::quote(y.name), fmt::join(y.shape, ", "));
      }
      if (is_add && (x.layout != Layout::kNCHWnc || y.layout != Layout::kNCHWnc)) {
        throw_user_error("step {}: accelerator qadd tensors {} and {} must be NCHWnc (the Program reads and writes "
                         "packed blocks)",
                         support::quote(st.name), support::quote(x.name), support::quote(y.name));
      }
    }
    check_blocks(y, cfg.block_out(), "output");
    ap.unpack_in.assign(st.inputs.size(), false);
    ap.in_plain.resize(st.inputs.size());
    ap.in_buf.resize(st.inputs.size());
    ap.cpu_call.step = &st;
    for (size_t i = 0; i < st.inputs.size(); ++i) {
      const TensorDesc& x = exe.tensors[static_cast<size_t>(st.inputs[i])];
      ap.unpack_in[i] = i < activations && x.layout == Layout::kNCHWnc;
      if (!ap.unpack_in[i]) {
        ap.cpu_call.inputs.push_back(plan.call.inputs[i]);
        continue;
      }
      ap.in_plain[i] = x;
      ap.in_plain[i].layout = Layout::kNCHW;
      ap.in_plain[i].data.clear();
      ap.in_buf[i].assign(static_cast<size_t>(ap.in_plain[i].size_bytes()), 0);
      ap.cpu_call.inputs.push_back({&ap.in_plain[i], ap.in_buf[i].data()});
    }
    ap.unpack_y = y.layout == Layout::kNCHWnc;
    ap.y_plain = y;
    ap.y_plain.layout = Layout::kNCHW;
    ap.y_plain.data.clear();
    ap.y_cpu.assign(static_cast<size_t>(ap.y_plain.size_bytes()), 0);
    if (ap.unpack_y) ap.y_acc.assign(static_cast<size_t>(ap.y_plain.size_bytes()), 0);
    ap.cpu_call.outputs = {{&ap.y_plain, ap.y_cpu.data()}};
    // Validate the layer's attributes now rather than in the first run.
    if (is_conv) {
      const QConv2dParams p = cpu::parse_qconv2d(st, *ap.cpu_call.inputs[0].desc, *plan.call.inputs[1].desc,
                                                 ap.y_plain);
      ap.macs = p.macs();
    }
    m.macs = ap.macs;
  }
  for (int idx : exe.outputs) {
    if (!ready[static_cast<size_t>(idx)]) {
      throw_user_error("graph output {} is written by no step and is no graph input or constant",
                       support::quote(exe.tensors[static_cast<size_t>(idx)].name));
    }
  }
}

void GraphExecutor::Impl::time_kernel(cpu::KernelFn fn, const cpu::KernelCall& call, int repeats,
                                      StepMeasurement& m) {
  double best = std::numeric_limits<double>::infinity();
  uint64_t best_cycles = std::numeric_limits<uint64_t>::max();
  for (int r = 0; r < std::max(1, repeats); ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    counter.start();
    fn(call);
    const uint64_t cyc = counter.stop();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
    best_cycles = std::min(best_cycles, cyc);
  }
  m.cpu_seconds = best;
  m.cpu_cycles = best_cycles;
}

void GraphExecutor::Impl::run_accel(size_t si, StepPlan& plan, StepMeasurement& m) {
  AccelPlan& ap = plan.ap;
  const Step& st = exe.steps[si];
  for (size_t i = 0; i < plan.call.inputs.size(); ++i) {
    if (ap.in_addr[i] == kUnbound) continue;
    dev.copy_to_device(ap.in_addr[i], plan.call.inputs[i].data,
                       static_cast<uint64_t>(plan.call.inputs[i].desc->size_bytes()));
  }
  dev.submit(*ap.loaded);
  m.accel = dev.wait();
  for (size_t i = 0; i < plan.call.outputs.size(); ++i) {
    dev.copy_from_device(plan.call.outputs[i].data, ap.out_addr[i],
                         static_cast<uint64_t>(plan.call.outputs[i].desc->size_bytes()));
  }
  m.cpu_checked = false;
  m.cpu_matches_accel = true;
  if (!opts.measure_cpu && !opts.check_accel) return;

  const TensorDesc& y = *plan.call.outputs[0].desc;
  for (size_t i = 0; i < ap.unpack_in.size(); ++i) {
    if (!ap.unpack_in[i]) continue;
    const TensorDesc& x = *plan.call.inputs[i].desc;
    cpu::unpack_nchwnc(reinterpret_cast<const int8_t*>(plan.call.inputs[i].data), x.shape[0], x.shape[1], x.shape[2],
                       x.shape[3], x.block_n, x.block_c, reinterpret_cast<int8_t*>(ap.in_buf[i].data()));
  }
  time_kernel(plan.fn, ap.cpu_call, opts.measure_cpu ? opts.cpu_repeats : 1, m);
  if (!opts.check_accel) return;
  const uint8_t* acc_plain = plan.call.outputs[0].data;
  if (ap.unpack_y) {
    cpu::unpack_nchwnc(reinterpret_cast<const int8_t*>(plan.call.outputs[0].data), y.shape[0],
                       y.shape[1], y.shape[2], y.shape[3], y.block_n, y.block_c,
                       reinterpret_cast<int8_t*>(ap.y_acc.data()));
    acc_plain = ap.y_acc.data();
  }
  m.cpu_checked = true;
  if (std::memcmp(acc_plain, ap.y_cpu.data(), ap.y_cpu.size()) == 0) return;
  m.cpu_matches_accel = false;
  size_t first = 0, count = 0;
  for (size_t i = ap.y_cpu.size(); i-- > 0;) {
    if (acc_plain[i] != ap.y_cpu[i]) {
      first = i;
      ++count;
    }
  }
  throw StepMismatchError(fmt::format(
      "step {} on device {}: the executable's accelerator step disagrees with its CPU reference (the "
      "{} kernel) in {} of {} elements; first at NCHW index {}: accelerator {} vs cpu {} (the "
      "executable may have been altered after it was compiled, or this is a Tessel bug: please report it)",
      support::quote(st.name), dev.kind(), st.op, count, ap.y_cpu.size(), first, static_cast<int8_t>(acc_plain[first]),
      static_cast<int8_t>(ap.y_cpu[first])));
}

GraphExecutor::GraphExecutor(const Executable& exe, Device& device, ExecOptions opts)
    : impl_(std::make_unique<Impl>(exe, device, opts)) {
  try {
    impl_->prepare();
  } catch (...) {
    for (const LoadedProgram& lp : impl_->loaded) impl_->dev.unload(lp);
    throw;
  }
}

GraphExecutor::~GraphExecutor() {
  for (const LoadedProgram& lp : impl_->loaded) {
    try {
      impl_->dev.unload(lp);
    } catch (const Error&) {
      // The device no longer knows the Program (it cannot be unloaded twice); nothing to free.
    }
  }
}

std::vector<HostTensor> GraphExecutor::run(const std::vector<HostTensor>& inputs) {
  Impl& s = *impl_;
  const Executable& exe = s.exe;
  if (inputs.size() != exe.inputs.size()) {
    throw_user_error("model {} takes {} inputs, got {}", support::quote(exe.model_name), exe.inputs.size(),
                     inputs.size());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const size_t idx = static_cast<size_t>(exe.inputs[i]);
    const TensorDesc& t = exe.tensors[idx];
    const HostTensor& h = inputs[i];
    if (h.dtype != t.dtype || h.shape != t.shape) {
      throw_user_error("input {} {} must be {} [{}], got {} [{}]", i, support::quote(t.name), to_string(t.dtype),
                       fmt::join(t.shape, ", "), to_string(h.dtype), fmt::join(h.shape, ", "));
    }
    if (h.bytes.size() != s.buffers[idx].size()) {
      throw_user_error("input {} {} must hold {} bytes, got {}", i, support::quote(t.name),
                       s.buffers[idx].size(), h.bytes.size());
    }
    std::memcpy(s.buffers[idx].data(), h.bytes.data(), h.bytes.size());
  }
  for (size_t si = 0; si < s.plans.size(); ++si) {
    StepPlan& plan = s.plans[si];
    StepMeasurement& m = s.meas[si];
    if (plan.accel) {
      s.run_accel(si, plan, m);
    } else {
      // CPU-placed step: with measure_cpu its time is the minimum over cpu_repeats runs (kernels
      // are pure functions of their inputs, so re-running gives the same output); without it the
      // step runs once, so the run's wall time counts it once.
      s.time_kernel(plan.fn, plan.call, s.opts.measure_cpu ? s.opts.cpu_repeats : 1, m);
    }
  }
  std::vector<HostTensor> out;
  out.reserve(exe.outputs.size());
  for (int idx : exe.outputs) {
    const TensorDesc& t = exe.tensors[static_cast<size_t>(idx)];
    out.push_back(HostTensor{t.dtype, t.shape, s.buffers[static_cast<size_t>(idx)]});
  }
  return out;
}

const std::vector<StepMeasurement>& GraphExecutor::measurements() const { return impl_->meas; }

}  // namespace tessel::runtime
