// The attributes of Tessel's qconv2d node (and Executable step) as runtime/qnn.h structures:
// stride [h,w], pads [t,l,b,r], groups, in_zero_point, requant {pre_shift, multiplier[],
// shift[], out_zero_point, clip_lo, clip_hi} (format of runtime/cpu/kernels.h).
#pragma once

#include <nlohmann/json.hpp>

#include "compiler/ir/graph.h"
#include "runtime/qnn.h"

namespace tessel::compiler::ir {

/// Requant -> JSON object with the six fields above.
nlohmann::json requant_to_json(const runtime::Requant& rq);
/// JSON object -> Requant; missing fields keep the defaults of runtime::Requant. Throws
/// InternalError on wrong JSON types (the compiler wrote it).
runtime::Requant requant_from_json(const nlohmann::json& j);

/// QConv2dParams of a qconv2d node: shapes from its input x [N,C,H,W], weights
/// [OC,C/groups,KH,KW] and output; stride, pads, groups, in_zero_point and requant from its
/// attributes (requant defaults when absent). Throws InternalError if the node is malformed.
runtime::QConv2dParams qconv2d_params(const Graph& g, const Node& n);

}  // namespace tessel::compiler::ir
