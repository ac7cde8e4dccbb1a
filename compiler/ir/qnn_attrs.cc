#include "compiler/ir/qnn_attrs.h"

#include "runtime/cpu/kernels.h"
#include "support/error.h"

namespace tessel::compiler::ir {

nlohmann::json requant_to_json(const runtime::Requant& rq) {
  nlohmann::json j{{"multiplier", rq.multiplier}, {"shift", rq.shift},     {"out_zero_point", rq.out_zero_point},
                   {"clip_lo", rq.clip_lo},       {"clip_hi", rq.clip_hi}};
  // The centring offset and the clamp only when used (their defaults are 0 and no clamp).
  auto all = [](const std::vector<int32_t>& v, int32_t x) {
    for (int32_t e : v)
      if (e != x) return false;
    return true;
  };
  if (!all(rq.acc_offset, 0)) j["acc_offset"] = rq.acc_offset;
  if (!all(rq.acc_min, INT32_MIN)) j["acc_min"] = rq.acc_min;
  if (!all(rq.acc_max, INT32_MAX)) j["acc_max"] = rq.acc_max;
  if (rq.low_limbs() > 0) {
    j["low_multiplier"] = rq.low_multiplier;
    j["low_shift"] = rq.low_shift;
  }
  return j;
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
