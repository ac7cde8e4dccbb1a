#include "compiler/passes/layout_nchwnc.h"

#include <fmt/format.h>

#include "support/error.h"

namespace tessel::compiler::passes {
namespace {

int packed_value(ir::Graph& g, int src, int32_t bn, int32_t bc, const std::string& suffix) {
  ir::Value v = g.values[src];
  v.name = g.unique_name(v.name + suffix);
  v.layout = runtime::Layout::kNCHWnc;
  v.block_n = bn;
  v.block_c = bc;
  v.is_const = false;
  v.data.clear();
  return g.add_value(std::move(v));
}

ir::Node layout_node(const ir::Node& layer, const std::string& op, int in, int out) {
  ir::Node n;
  n.name = layer.name + (op == "pack_nchwnc" ? "_pack" : "_unpack");
  n.op = op;
  n.domain = "tessel";
  n.source_op = layer.source_op;
  n.inputs = {in};
  n.outputs = {out};
  return n;
}

}  // namespace

void layout_nchwnc(ir::Graph& g, PassContext& ctx) {
  const int32_t bn = ctx.config.batch(), bi = ctx.config.block_in(), bo = ctx.config.block_out();
  std::vector<ir::Node> out;
  for (ir::Node& n : g.nodes) {
    const bool accel = n.is_tessel() && n.placement == runtime::Placement::kAccel;
    const bool conv = accel && n.op == "qconv2d", add = accel && n.op == "qadd";
    if (!conv && !add) {
      out.push_back(std::move(n));
      continue;
    }
    // qconv2d packs x for the GEMM (BLOCK_IN); qadd loads a and b into the accumulator
    // (BLOCK_OUT), like the outputs.
    for (size_t i = 0; i < (conv ? 1u : 2u); ++i) {
      const int x = n.inputs[i];
      const int xp = packed_value(g, x, bn, conv ? bi : bo, "_nchwnc");
      ir::Node pack = layout_node(n, "pack_nchwnc", x, xp);
      if (add) pack.name = fmt::format("{}_pack{}", n.name, i);
      out.push_back(std::move(pack));
      n.inputs[i] = xp;
    }
    const int y = n.outputs[0];
    const int yp = packed_value(g, y, bn, bo, "_nchwnc");
    n.outputs[0] = yp;
    const ir::Node unpack = layout_node(n, "unpack_nchwnc", yp, y);
    out.push_back(std::move(n));
    out.push_back(unpack);
  }
  g.nodes = std::move(out);

  // unpack -> pack pairs with the same blocks: the packed tensor feeds the next layer directly
  // (all replacements recorded, then applied in one walk).
  const auto producers = g.producers();
  std::vector<int> forward(g.values.size(), -1);
  for (ir::Node& n : g.nodes) {
    if (!(n.is_tessel() && n.op == "pack_nchwnc")) continue;
    const int p = producers[n.inputs[0]];
    if (p < 0 || !(g.nodes[p].is_tessel() && g.nodes[p].op == "unpack_nchwnc")) continue;
    const ir::Value& packed = g.values[g.nodes[p].inputs[0]];
    const ir::Value& want = g.values[n.outputs[0]];
    if (packed.block_n != want.block_n || packed.block_c != want.block_c) continue;
    forward[n.outputs[0]] = g.nodes[p].inputs[0];
  }
  g.replace_uses(forward);
  g.remove_dead();
}

}  // namespace tessel::compiler::passes
