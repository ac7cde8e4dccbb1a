// Graph pass 'placement' (see compiler/passes/pass.h for the pipeline).
//
// Places each node, when PassContext::offload is set:
//  - qconv2d (conv2d and dense) on the accelerator;
//  - qadd (the residual blocks' QLinearAdd) on the accelerator when the accelerator can run it
//    bit-exactly in the layout its neighbours leave the operands in (qadd_accel_reason() is
//    empty), else on the CPU with Node::placement_reason saying why;
//  - everything else on the CPU, with the reason "no accelerator kernel for <op> (...)" (the op
//    prefixed "ONNX " when it is not a Tessel operator).
// Without offload everything is on the CPU (no reason recorded: nothing was considered).
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/qadd_scheme.h"

namespace tessel::compiler::passes {

/// Why qadd node `n` of `g` (already placed: its producers have their placements) cannot run
/// on the accelerator of `cfg`, or "" when it can. In order, the first that applies:
///  - "operand 'x' is i32, not int8", "operand 'x' is not 4-D: [..]", "operand 'x' is
///    broadcast: [..] to the output's [..]": a, b and y must be int8 4-D tensors of one shape;
///  - "operand 'x' is not per-tensor quantised";
///  - "operand 'x' comes from <producer> on the CPU, not from an accelerator layer": each operand
///    must be written by an accelerator qconv2d or qadd, so that it is already in NCHWnc with
///    blocks (BATCH, BLOCK_OUT) (the layout pass packs nothing for it);
///  - "a row of W columns needs 2*W+3 acc rows, ACC holds D": one output row of both operands
///    and the scheme's int32 constant rows must fit the accumulator (the qadd template,
///    compiler/topi/accel/schedule.h);
///  - "no exact int32 scheme: ..." (find_qadd_scheme's reason), or its UserError text for a scale
///    that is not positive and finite.
/// `producers` is g.producers() (computed once by the caller: the pass stays linear).
std::string qadd_accel_reason(const ir::Graph& g, const ir::Node& n, const isa::HwConfig& cfg,
                              const std::vector<int>& producers);

/// The quantisation of qadd node `n` as find_qadd_scheme takes it (scales and zero points of
/// a, b, y; the relu attribute). InternalError when an operand is not per-tensor quantised.
QaddQuant qadd_quant(const ir::Graph& g, const ir::Node& n);

/// Runs the 'placement' pass on `g` in place.
void placement(ir::Graph& g, PassContext& ctx);

}  // namespace tessel::compiler::passes
