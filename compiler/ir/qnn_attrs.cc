#include "compiler/ir/qnn_attrs.h"

#include "support/error.h"

namespace tessel::compiler::ir {

nlohmann::json requant_to_json(const runtime::Requant& rq) {
  return nlohmann::json{{"pre_shift", rq.pre_shift},     {"multiplier", rq.multiplier},
                        {"shift", rq.shift},             {"out_zero_point", rq.out_zero_point},
                        {"clip_lo", rq.clip_lo},         {"clip_hi", rq.clip_hi}};
}

runtime::Requant requant_from_json(const nlohmann::json& j) {
  runtime::Requant rq;
  try {
    if (j.contains("pre_shift")) rq.pre_shift = j.at("pre_shift").get<int32_t>();
    if (j.contains("multiplier")) rq.multiplier = j.at("multiplier").get<std::vector<int32_t>>();
    if (j.contains("shift")) rq.shift = j.at("shift").get<std::vector<int32_t>>();
    if (j.contains("out_zero_point")) rq.out_zero_point = j.at("out_zero_point").get<int32_t>();
    if (j.contains("clip_lo")) rq.clip_lo = j.at("clip_lo").get<int32_t>();
    if (j.contains("clip_hi")) rq.clip_hi = j.at("clip_hi").get<int32_t>();
  } catch (const nlohmann::json::exception& e) {
    throw_internal_error("malformed requant attribute {}: {}", j.dump(), e.what());
  }
  return rq;
}

runtime::QConv2dParams qconv2d_params(const Graph& g, const Node& n) {
  TESSEL_CHECK(n.op == "qconv2d" && n.inputs.size() == 3 && n.outputs.size() == 1, "{} is not a qconv2d node",
               describe(n));
  const Value& x = g.values[n.inputs[0]];
  const Value& w = g.values[n.inputs[1]];
  const Value& y = g.values[n.outputs[0]];
  TESSEL_CHECK(x.shape.size() == 4 && w.shape.size() == 4 && y.shape.size() == 4, "{}: qconv2d needs 4-D tensors",
               describe(n));
  runtime::QConv2dParams p;
  p.n = x.shape[0];
  p.ic = x.shape[1];
  p.ih = x.shape[2];
  p.iw = x.shape[3];
  p.oc = w.shape[0];
  p.kh = w.shape[2];
  p.kw = w.shape[3];
  const auto stride = attr_ints(n, "stride", {1, 1});
  const auto pads = attr_ints(n, "pads", {0, 0, 0, 0});
  TESSEL_CHECK(stride.size() == 2 && pads.size() == 4, "{}: bad stride/pads", describe(n));
  p.stride_h = stride[0];
  p.stride_w = stride[1];
  p.pad_top = pads[0];
  p.pad_left = pads[1];
  p.pad_bottom = pads[2];
  p.pad_right = pads[3];
  p.groups = attr_int(n, "groups", 1);
  p.in_zero_point = static_cast<int32_t>(attr_int(n, "in_zero_point", 0));
  if (n.attrs.contains("requant")) p.rq = requant_from_json(n.attrs.at("requant"));
  TESSEL_CHECK(p.oh() == y.shape[2] && p.ow() == y.shape[3] && y.shape[1] == p.oc,
               "{}: output shape {} does not match the conv ({}x{})", describe(n), shape_string(y.shape), p.oh(),
               p.ow());
  return p;
}

}  // namespace tessel::compiler::ir
