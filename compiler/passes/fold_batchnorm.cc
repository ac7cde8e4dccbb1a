#include "compiler/passes/fold_batchnorm.h"

#include <fmt/format.h>

#include <cmath>

#include "support/error.h"

namespace tessel::compiler::passes {

void fold_batchnorm(ir::Graph& g, PassContext&) {
  const auto consumers = g.consumers();
  const auto producers = g.producers();
  std::vector<char> erased(g.nodes.size(), 0);
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    ir::Node& bn = g.nodes[k];
    if (bn.op != "BatchNormalization" || bn.is_tessel()) continue;
    for (size_t p = 1; p < 5; ++p)
      if (p >= bn.inputs.size() || bn.inputs[p] < 0 || !g.values[bn.inputs[p]].is_const)
        ir::throw_unsupported(bn, fmt::format("parameter input {} is not a constant", p));
    const auto gamma = g.const_f32(bn.inputs[1]), beta = g.const_f32(bn.inputs[2]);
    const auto mean = g.const_f32(bn.inputs[3]), var = g.const_f32(bn.inputs[4]);
    const float eps = ir::attr_float(bn, "epsilon", 1e-5f);
    const std::vector<int64_t> xshape = g.values[bn.inputs[0]].shape;
    const int64_t C = xshape.size() >= 2 ? xshape[1] : 0;
    for (const auto* v : {&gamma, &beta, &mean, &var})
      if (static_cast<int64_t>(v->size()) != C)
        ir::throw_unsupported(bn, fmt::format("parameter has {} elements, input has {} channels", v->size(), C));
    if (!std::isfinite(eps) || eps < 0.0f) ir::throw_unsupported(bn, fmt::format("epsilon {} must be finite and >= 0", eps));
    std::vector<float> s(C), t(C);
    for (int64_t c = 0; c < C; ++c) {
      if (!(var[c] + eps > 0.0f))
        ir::throw_unsupported(bn, fmt::format("variance + epsilon of channel {} is {} + {}, not positive", c, var[c], eps));
      s[c] = gamma[c] / std::sqrt(var[c] + eps);
      t[c] = beta[c] - mean[c] * s[c];
      if (!std::isfinite(s[c]) || !std::isfinite(t[c]))
        ir::throw_unsupported(bn, fmt::format("folding channel {} gives the non-finite scale {} / shift {}", c, s[c], t[c]));
    }
    const int prod = producers[bn.inputs[0]];
    const bool foldable = prod >= 0 && g.nodes[prod].op == "Conv" && !g.nodes[prod].is_tessel() &&
                          consumers[bn.inputs[0]].size() == 1 && !g.is_output(bn.inputs[0]) &&
                          g.values[g.nodes[prod].inputs[1]].is_const &&
                          (g.nodes[prod].inputs.size() < 3 || g.nodes[prod].inputs[2] < 0 ||
                           g.values[g.nodes[prod].inputs[2]].is_const);
    if (foldable) {
      ir::Node& conv = g.nodes[prod];
      const ir::Value wv = g.values[conv.inputs[1]];
      auto w = g.const_f32(conv.inputs[1]);
      const int64_t per = static_cast<int64_t>(w.size()) / C;
      for (int64_t c = 0; c < C; ++c)
        for (int64_t i = 0; i < per; ++i) w[c * per + i] *= s[c];
      std::vector<float> b(C, 0.0f);
      if (conv.inputs.size() >= 3 && conv.inputs[2] >= 0) b = g.const_f32(conv.inputs[2]);
      for (int64_t c = 0; c < C; ++c) b[c] = b[c] * s[c] + t[c];
      for (size_t i = 0; i < w.size(); ++i)
        if (!std::isfinite(w[i]))
          ir::throw_unsupported(bn, fmt::format("folding into {} gives the non-finite weight {} at element {}",
                                                ir::describe(conv), w[i], i));
      for (int64_t c = 0; c < C; ++c)
        if (!std::isfinite(b[c]))
          ir::throw_unsupported(bn, fmt::format("folding into {} gives the non-finite bias {} for channel {}",
                                                ir::describe(conv), b[c], c));
      const std::string wname = g.unique_name(wv.name + "_bnfold");
      const std::vector<int64_t> wshape = wv.shape;
      const int nw = g.add_const_f32(wname, wshape, w);
      const int nb = g.add_const_f32(g.unique_name(bn.name + "_bias"), {C}, b);
      conv.inputs.resize(3);
      conv.inputs[1] = nw;
      conv.inputs[2] = nb;
      // The conv now produces the BatchNormalization's output (its old output becomes dead).
      conv.outputs[0] = bn.outputs[0];
      conv.source_op = conv.source_op + "+BatchNormalization";
      erased[k] = 1;
      continue;
    }
    // Not foldable: y = x * s + t with per-channel constants [C,1,...,1].
    std::vector<int64_t> pshape(xshape.size() - 1, 1);
    pshape[0] = C;
    const int sv = g.add_const_f32(g.unique_name(bn.name + "_scale"), pshape, s);
    const int tv = g.add_const_f32(g.unique_name(bn.name + "_shift"), pshape, t);
    ir::Value mid;
    mid.name = g.unique_name(bn.name + "_mul");
    mid.dtype = ir::DType::kF32;
    mid.shape = xshape;
    mid.shape_known = true;
    const int mv = g.add_value(mid);
    ir::Node mul;
    mul.name = bn.name + "_mul";
    mul.op = "Mul";
    mul.source_op = "BatchNormalization";
    mul.inputs = {bn.inputs[0], sv};
    mul.outputs = {mv};
    ir::Node add;
    add.name = bn.name + "_add";
    add.op = "Add";
    add.source_op = "BatchNormalization";
    add.inputs = {mv, tv};
    add.outputs = {bn.outputs[0]};
    bn = std::move(mul);
    // Insert the Add right after the Mul (topological order is restored below).
    g.nodes.push_back(std::move(add));
    erased.push_back(0);
  }
  std::vector<ir::Node> kept;
  for (size_t k = 0; k < g.nodes.size(); ++k)
    if (!erased[k]) kept.push_back(std::move(g.nodes[k]));
  g.nodes = std::move(kept);
  g.topo_sort();
  g.remove_dead();
}

}  // namespace tessel::compiler::passes
