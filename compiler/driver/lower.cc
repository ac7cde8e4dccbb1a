#include "compiler/driver/lower.h"

#include <fmt/format.h>

#include "compiler/backend/accel/passes.h"
#include "compiler/ir/qnn_attrs.h"
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

}  // namespace

std::vector<std::string> accel_pass_names() {
  std::vector<std::string> names = {"schedule"};
  for (const accel::Pass& p : accel::pass_pipeline()) names.push_back(p.name);
  return names;
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
  // Loop-IR dumps: "all", or the name of one of the accelerator backend's passes.
  std::string accel_dump_after;
  if (opts.dump_ir_after == "all") accel_dump_after = "all";
  for (const std::string& name : accel_pass_names())
    if (name == opts.dump_ir_after) accel_dump_after = name;
  for (const ir::Node& n : g.nodes) {
    if (!n.is_tessel()) throw_internal_error("{} was not lowered to a tessel kernel by the graph passes", ir::describe(n));
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
    info.macs = step_macs(g, n);
    if (n.placement == runtime::Placement::kAccel) {
      TESSEL_CHECK(n.op == "qconv2d", "{} placed on the accelerator", ir::describe(n));
      accel::AccelLayer layer;
      layer.name = n.name;
      layer.params = ir::qconv2d_params(g, n);
      const auto w = g.const_i64(n.inputs[1]);
      layer.weights.assign(w.begin(), w.end());
      const auto b = g.const_i64(n.inputs[2]);
      layer.bias.assign(b.begin(), b.end());
      accel::LowerOptions lo;
      lo.knobs = opts.knobs;
      lo.dump_ir_after = accel_dump_after;
      accel::LoweredLayer lowered = accel::lower_conv2d(layer, opts.config, lo);
      if (!lowered.ir_dump.empty()) accel_dump += fmt::format("; layer {}\n{}", n.name, lowered.ir_dump);
      info.ideal_gemm_uops = lowered.ideal_gemm_uops;
      info.dram_bytes = program_dram_bytes(lowered.program);
      info.schedule = lowered.schedule;
      s.program = static_cast<int>(exe.programs.size());
      s.input_segments = {"inp", "", ""};
      s.output_segments = {"out"};
      exe.programs.push_back(std::move(lowered.program));
    }
    if (n.op != "reshape") result.layers.push_back(std::move(info));
    exe.steps.push_back(std::move(s));
  }
  result.ir_dump += accel_dump;
}

}  // namespace tessel::compiler::driver
