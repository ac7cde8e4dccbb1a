#include "compiler/passes/fuse_bias.h"

#include "support/error.h"

namespace tessel::compiler::passes {
namespace {

/// Values of constant `c` when it is a per-channel bias: shape [C,1,1] or [1,C,1,1] for a 4-D
/// NCHW output (`last_axis` false), [N] or [1,N] for a 2-D [M,N] output; empty otherwise.
std::vector<float> per_channel(const ir::Graph& g, int c, int64_t channels, bool last_axis) {
  const ir::Value& v = g.values[c];
  if (!v.is_const || v.dtype != ir::DType::kF32) return {};
  using S = std::vector<int64_t>;
  const bool ok = last_axis ? (v.shape == S{channels} || v.shape == S{1, channels})
                            : (v.shape == S{channels, 1, 1} || v.shape == S{1, channels, 1, 1});
  return ok ? g.const_f32(c) : std::vector<float>{};
}

}  // namespace

void fuse_bias(ir::Graph& g, PassContext&) {
  bool changed = true;
  while (changed) {
    changed = false;
    const auto consumers = g.consumers();
    const auto producers = g.producers();
    for (size_t k = 0; k < g.nodes.size() && !changed; ++k) {
      ir::Node& add = g.nodes[k];
      if (add.op != "Add" || add.is_tessel()) continue;
      for (int side = 0; side < 2 && !changed; ++side) {
        const int x = add.inputs[side], c = add.inputs[1 - side];
        const int p = producers[x];
        if (p < 0 || consumers[x].size() != 1 || g.is_output(x)) continue;
        ir::Node& prod = g.nodes[p];
        if (prod.is_tessel()) continue;
        const ir::Value& xv = g.values[x];
        if (prod.op == "Conv" && g.values[prod.inputs[1]].is_const && xv.shape.size() == 4) {
          const int64_t oc = xv.shape[1];
          auto b = per_channel(g, c, oc, false);
          if (b.empty()) continue;
          if (prod.inputs.size() >= 3 && prod.inputs[2] >= 0) {
            if (!g.values[prod.inputs[2]].is_const) continue;
            const auto old = g.const_f32(prod.inputs[2]);
            for (int64_t i = 0; i < oc; ++i) b[i] += old[i];
          }
          const int nb = g.add_const_f32(g.unique_name(prod.name + "_bias"), {oc}, b);
          ir::Node& conv = g.nodes[p];
          conv.inputs.resize(3);
          conv.inputs[2] = nb;
          conv.outputs[0] = g.nodes[k].outputs[0];
          conv.source_op += "+Add";
          g.nodes.erase(g.nodes.begin() + static_cast<long>(k));
          changed = true;
        } else if ((prod.op == "MatMul" || prod.op == "Gemm") && xv.shape.size() == 2) {
          const int64_t n = xv.shape[1];
          if (prod.op == "MatMul" && !(g.values[prod.inputs[1]].is_const && g.values[prod.inputs[1]].shape.size() == 2))
            continue;
          if (prod.op == "Gemm" && prod.inputs.size() >= 3 && prod.inputs[2] >= 0) continue;
          if (prod.op == "Gemm" && ir::attr_float(prod, "beta", 1.0f) != 1.0f) continue;
          auto b = per_channel(g, c, n, true);
          if (b.empty()) continue;
          const int nb = g.add_const_f32(g.unique_name(prod.name + "_bias"), {n}, b);
          ir::Node& mm = g.nodes[p];
          if (mm.op == "MatMul") {
            mm.op = "Gemm";
            mm.attrs = nlohmann::json::object();
          }
          mm.inputs.resize(3);
          mm.inputs[2] = nb;
          mm.outputs[0] = g.nodes[k].outputs[0];
          mm.source_op += "+Add";
          g.nodes.erase(g.nodes.begin() + static_cast<long>(k));
          changed = true;
        }
      }
    }
  }
  g.remove_dead();
}

}  // namespace tessel::compiler::passes
