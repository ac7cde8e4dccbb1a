#include "compiler/passes/fuse_activation.h"

#include <algorithm>

#include "support/error.h"

namespace tessel::compiler::passes {

void fuse_activation(ir::Graph& g, PassContext&) {
  const auto consumers = g.consumers();
  const auto producers = g.producers();
  std::vector<char> erase(g.nodes.size(), 0);
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const ir::Node& clip = g.nodes[k];
    if (!clip.is_tessel() || clip.op != "qclip") continue;
    const int x = clip.inputs[0];
    const int p = producers[x];
    if (p < 0 || erase[p] || consumers[x].size() != 1 || g.is_output(x)) continue;
    ir::Node& prod = g.nodes[p];
    if (!prod.is_tessel()) continue;
    const int lo = clip.attrs.at("lo").get<int>(), hi = clip.attrs.at("hi").get<int>();
    if (prod.op == "qconv2d") {
      if (!prod.attrs.contains("requant")) prod.attrs["requant"] = {{"clip_lo", -128}, {"clip_hi", 127}};
      auto& rq = prod.attrs["requant"];
      rq["clip_lo"] = std::max(rq.value("clip_lo", -128), lo);
      rq["clip_hi"] = std::min(rq.value("clip_hi", 127), hi);
      if (rq["clip_lo"].get<int>() > rq["clip_hi"].get<int>()) rq["clip_hi"] = rq["clip_lo"];
    } else if (prod.op == "qadd" && !prod.attrs.value("relu", false) && hi == 127 &&
               lo == g.values[x].quant->zero_point.at(0)) {
      prod.attrs["relu"] = true;
    } else {
      continue;
    }
    // The producer now writes the clip's output.
    prod.outputs[0] = clip.outputs[0];
    prod.source_op += "+" + clip.source_op;
    erase[k] = 1;
  }
  std::vector<ir::Node> kept;
  for (size_t k = 0; k < g.nodes.size(); ++k)
    if (!erase[k]) kept.push_back(std::move(g.nodes[k]));
  g.nodes = std::move(kept);
  g.remove_dead();
}

}  // namespace tessel::compiler::passes
