#include "compiler/passes/placement.h"

namespace tessel::compiler::passes {

void placement(ir::Graph& g, PassContext& ctx) {
  for (ir::Node& n : g.nodes) {
    const bool accel = ctx.offload && n.is_tessel() && n.op == "qconv2d";
    n.placement = accel ? runtime::Placement::kAccel : runtime::Placement::kCpu;
  }
}

}  // namespace tessel::compiler::passes
