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
  // One walk in node (topological) order. A fused Add's producer takes over the Add's output, so
  // `producers` is updated as it goes; a chain Conv -> Add -> Add folds both Adds, the second when
  // the walk reaches it. Consumer counts do not change (the fused Add's input had one reader).
  const auto consumers = g.consumers();
  std::vector<int> producers = g.producers();
  const std::vector<char> is_output = [&] {
    std::vector<char> m(g.values.size(), 0);
    for (int o : g.outputs) m[o] = 1;
    return m;
  }();
  std::vector<char> erased(g.nodes.size(), 0);
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    bool fused = false;
    for (int side = 0; side < 2 && !fused; ++side) {
      const ir::Node& add = g.nodes[k];
      if (add.op != "Add" || add.is_tessel() || add.inputs.size() < 2) break;
      const int x = add.inputs[side], c = add.inputs[1 - side];
      if (x < 0 || c < 0 || static_cast<size_t>(x) >= producers.size()) continue;
      const int p = producers[x];
      if (p < 0 || consumers[x].size() != 1 || is_output[x]) continue;
      const ir::Node& prod = g.nodes[p];
      if (prod.is_tessel()) continue;
      const ir::Value& xv = g.values[x];
      std::vector<float> b;
      const char* fused_op = nullptr;
      if (prod.op == "Conv" && g.values[prod.inputs[1]].is_const && xv.shape.size() == 4) {
        const int64_t oc = xv.shape[1];
        b = per_channel(g, c, oc, false);
        if (b.empty()) continue;
        if (prod.inputs.size() >= 3 && prod.inputs[2] >= 0) {
          if (!g.values[prod.inputs[2]].is_const) continue;
          const auto old = g.const_f32(prod.inputs[2]);
          for (int64_t i = 0; i < oc; ++i) b[i] += old[i];
        }
        fused_op = "Conv";
      } else if ((prod.op == "MatMul" || prod.op == "Gemm") && xv.shape.size() == 2) {
        const int64_t n = xv.shape[1];
        if (prod.op == "MatMul" && !(g.values[prod.inputs[1]].is_const && g.values[prod.inputs[1]].shape.size() == 2))
          continue;
        if (prod.op == "Gemm" && prod.inputs.size() >= 3 && prod.inputs[2] >= 0) continue;
        if (prod.op == "Gemm" && ir::attr_float(prod, "beta", 1.0f) != 1.0f) continue;
        b = per_channel(g, c, n, true);
        if (b.empty()) continue;
        fused_op = "Gemm";
      } else {
        continue;
      }
      const int64_t channels = static_cast<int64_t>(b.size());
      const int nb = g.add_const_f32(g.unique_name(prod.name + "_bias"), {channels}, b);
      ir::Node& fuse = g.nodes[p];
      if (fuse.op == "MatMul") {
        fuse.op = fused_op;
        fuse.attrs = nlohmann::json::object();
      }
      fuse.inputs.resize(3);
      fuse.inputs[2] = nb;
      fuse.outputs[0] = g.nodes[k].outputs[0];
      fuse.source_op += "+Add";
      producers.resize(g.values.size(), -1);
      producers[fuse.outputs[0]] = p;
      erased[k] = 1;
      fused = true;
    }
  }
  std::vector<ir::Node> kept;
  kept.reserve(g.nodes.size());
  for (size_t k = 0; k < g.nodes.size(); ++k)
    if (!erased[k]) kept.push_back(std::move(g.nodes[k]));
  g.nodes = std::move(kept);
  g.remove_dead();
}

}  // namespace tessel::compiler::passes
