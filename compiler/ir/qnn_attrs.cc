#include "compiler/ir/qnn_attrs.h"

#include "runtime/cpu/kernels.h"
#include "support/error.h"

namespace tessel::compiler::ir {

nlohmann::json requant_to_json(const runtime::Requant& rq) {
  return nlohmann::json{{"pre_shift", rq.pre_shift},     {"multiplier", rq.multiplier},
                        {"shift", rq.shift},             {"out_zero_point", rq.out_zero_point},
                        {"clip_lo", rq.clip_lo},         {"clip_hi", rq.clip_hi}};
}

runtime::QConv2dParams qconv2d_params(const Graph& g, const Node& n) {
  TESSEL_CHECK(n.op == "qconv2d" && n.inputs.size() == 3 && n.outputs.size() == 1, "{} is not a qconv2d node",
               describe(n));
  runtime::Step step;
  step.name = n.name;
  step.op = n.op;
  step.attrs = n.attrs;
  auto desc = [&](int value) {
    runtime::TensorDesc d;
    d.name = g.values[value].name;
    d.shape = g.values[value].shape;
    return d;
  };
  try {
    return runtime::cpu::parse_qconv2d(step, desc(n.inputs[0]), desc(n.inputs[1]), desc(n.outputs[0]));
  } catch (const UserError& e) {
    throw_internal_error("{}: malformed qconv2d node: {}", describe(n), e.what());
  }
}

}  // namespace tessel::compiler::ir
