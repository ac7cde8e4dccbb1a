// The attributes of Tessel's qconv2d node (and Executable step) as runtime/qnn.h structures:
// stride [h,w], pads [t,l,b,r], groups, in_zero_point, requant {multiplier[], shift[],
// out_zero_point, clip_lo, clip_hi, and acc_offset[], acc_min[], acc_max[] when they are not
// their defaults, low_multiplier[][] and low_shift[][] when there are low limbs} (format of runtime/cpu/kernels.h). Reading them
// back is the runtime's job (runtime::cpu::parse_qconv2d / parse_requant); the compiler uses
// the same parser so both sides agree on every field, default and range.
#pragma once

#include <nlohmann/json.hpp>

#include "compiler/ir/graph.h"
#include "runtime/qnn.h"

namespace tessel::compiler::ir {

/// Requant -> JSON object with the fields above (read back by runtime::cpu::parse_requant to the
/// same Requant).
nlohmann::json requant_to_json(const runtime::Requant& rq);

/// QConv2dParams of a qconv2d node: shapes from its input x [N,C,H,W], weights
/// [OC,C/groups,KH,KW] and output y [N,OC,OH,OW]; stride, pads, groups, in_zero_point and
/// requant from its attributes, parsed and checked by runtime::cpu::parse_qconv2d (the node must
/// carry its "requant" attribute, i.e. run after passes::requant). Throws InternalError (the
/// compiler built the node) naming the node and the runtime's complaint if it is malformed.
runtime::QConv2dParams qconv2d_params(const Graph& g, const Node& n);

}  // namespace tessel::compiler::ir
