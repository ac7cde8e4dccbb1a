#include "compiler/passes/placement.h"

#include <fmt/format.h>

#include "compiler/passes/qadd_scheme.h"
#include "support/error.h"

namespace tessel::compiler::passes {

QaddQuant qadd_quant(const ir::Graph& g, const ir::Node& n) {
  for (int v : {n.inputs.at(0), n.inputs.at(1), n.outputs.at(0)}) {
    const ir::Value& x = g.values[v];
    if (!x.quant || !x.quant->per_tensor()) {
      throw_internal_error("{}: operand '{}' is not per-tensor quantised", ir::describe(n), x.name);
    }
  }
  const ir::QuantInfo &a = *g.values[n.inputs[0]].quant, &b = *g.values[n.inputs[1]].quant,
                      &y = *g.values[n.outputs[0]].quant;
  QaddQuant q;
  q.a_scale = a.scale.at(0);
  q.b_scale = b.scale.at(0);
  q.y_scale = y.scale.at(0);
  q.a_zero_point = a.zero_point.at(0);
  q.b_zero_point = b.zero_point.at(0);
  q.y_zero_point = y.zero_point.at(0);
  q.relu = n.attrs.value("relu", false);
  return q;
}

std::string qadd_accel_reason(const ir::Graph& g, const ir::Node& n, const isa::HwConfig& cfg,
                              const std::vector<int>& producers) {
  TESSEL_CHECK(n.is_tessel() && n.op == "qadd" && n.inputs.size() == 2 && n.outputs.size() == 1,
               "{} is not a qadd node", ir::describe(n));
  const ir::Value& y = g.values[n.outputs[0]];
  for (int v : {n.inputs[0], n.inputs[1], n.outputs[0]}) {
    const ir::Value& x = g.values[v];
    if (x.dtype != ir::DType::kI8) return fmt::format("operand '{}' is {}, not int8", x.name, ir::to_string(x.dtype));
    if (x.shape.size() != 4) return fmt::format("operand '{}' is not 4-D: {}", x.name, ir::shape_string(x.shape));
    if (x.shape != y.shape) {
      return fmt::format("operand '{}' is broadcast: {} to the output's {}", x.name, ir::shape_string(x.shape),
                         ir::shape_string(y.shape));
    }
  }
  for (int v : {n.inputs[0], n.inputs[1], n.outputs[0]}) {
    const ir::Value& x = g.values[v];
    if (!x.quant || !x.quant->per_tensor()) return fmt::format("operand '{}' is not per-tensor quantised", x.name);
  }
  for (int v : {n.inputs[0], n.inputs[1]}) {
    const int p = producers[v];
    if (p < 0) return fmt::format("operand '{}' is a graph input or constant, not an accelerator layer's output", g.values[v].name);
    const ir::Node& pn = g.nodes[p];
    const bool accel_layer = pn.is_tessel() && pn.placement == runtime::Placement::kAccel &&
                             (pn.op == "qconv2d" || pn.op == "qadd");
    if (!accel_layer) {
      return fmt::format("operand '{}' comes from {} on the CPU, not from an accelerator layer", g.values[v].name,
                         ir::describe(pn));
    }
  }
  // one output row of both operands plus up to three constant rows (multipliers, round)
  const int64_t rows = 2 * y.shape[3] + 3;
  if (rows > cfg.acc_depth()) {
    return fmt::format("a row of {} columns needs {} acc rows, ACC holds {}", y.shape[3], rows, cfg.acc_depth());
  }
  try {
    const QaddSchemeResult r = find_qadd_scheme(qadd_quant(g, n));
    return r.scheme ? std::string() : r.reason;
  } catch (const UserError& e) {
    return e.what();
  }
}

void placement(ir::Graph& g, PassContext& ctx) {
  const std::vector<int> producers = g.producers();  // placement changes no edge
  for (ir::Node& n : g.nodes) {
    n.placement = runtime::Placement::kCpu;
    n.placement_reason.clear();
    if (!ctx.offload) continue;
    if (n.is_tessel() && n.op == "qconv2d") {
      n.placement = runtime::Placement::kAccel;
    } else if (n.is_tessel() && n.op == "qadd") {
      n.placement_reason = qadd_accel_reason(g, n, ctx.config, producers);
      if (n.placement_reason.empty()) n.placement = runtime::Placement::kAccel;
    } else {
      n.placement_reason = fmt::format("no accelerator kernel for {}{} (the accelerator runs qconv2d, i.e. int8 conv "
                                       "and dense, and the residual qadd)",
                                       n.is_tessel() ? "" : (n.domain.empty() ? "ONNX " : n.domain + "."), n.op);
    }
  }
}

}  // namespace tessel::compiler::passes
