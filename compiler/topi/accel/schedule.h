// Accelerator schedule templates (TVM's vta.top schedules): the declared GEMM tensor intrinsic of
// a configuration, and templates for packed conv2d, packed dense and the residual qadd whose
// knobs live in a te::ConfigSpace.
//
// What a template does to the operator's stages (scopes: compiler/target/accel_intrin.h):
//  - the output (int8, DRAM) is tiled: output-channel blocks by `tile_oc`, rows by `tile_h`,
//    columns by `tile_w` (conv2d; dense tiles the output blocks only), the tile loops outermost;
//    with `oc_nthread` > 1 the outer channel-block loop is split into that many parts bound to
//    "vthread" (virtual threads: the accelerator's latency-hiding contexts);
//  - the accumulator stage is cache_write'n into local.acc_buffer and computed at the tile
//    (compute_at the output's innermost tile loop); its input-channel blocks are split by
//    `tile_ic`, the chunk loop outermost; the input window (the padded input stage inlined, so
//    the copy carries the padding as select(...)) and the weights are cache_read into
//    local.inp_buffer / local.wgt_buffer at the chunk loop, each copy loop marked pragma
//    dma_copy; the block (BATCH x BLOCK_OUT x BLOCK_IN) is tensorized with gemm_intrin;
//  - every requantisation step (topi/qnn.h) is cache_write'n into local.acc_buffer (its global
//    copy inlined), computed at the tile and marked pragma alu;
//  - the output's copy from the last acc stage (y = int8(acc)) is marked pragma dma_copy.
// The requantisation must be per-tensor (every field one entry, an ALU immediate of 16 bits).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/te/config_space.h"
#include "compiler/te/schedule.h"
#include "compiler/te/tensor_intrin.h"
#include "compiler/topi/nn.h"
#include "compiler/topi/qnn.h"
#include "isa/config.h"

namespace tessel::topi::accel {

/// The GEMM of `cfg` as a tensor intrinsic "accel.gemm": with B = BATCH, BI = BLOCK_IN, BO =
/// BLOCK_OUT,
///   out int32 [B][BO] = sum over i < BI of int32(inp int8 [B][BI][b, i]) * int32(wgt int8 [BO][BI][o, i])
/// Its builder emits accel.gemm_uop(reset, dst, src, wgt) (compiler/target/accel_intrin.h) with
/// each index a tir.access_ptr of the bound buffer at its scratchpad row (the bound region's
/// first element divided by the element size); the reset part has src = wgt = 0.
te::TensorIntrin gemm_intrin(const isa::HwConfig& cfg);

/// A template instance ready for te::lower: the schedule, the PrimFunc arguments in order
/// (inputs, then the output) and the output tensor.
struct ScheduledOp {
  te::Schedule schedule;
  std::vector<te::Tensor> args;
  te::Tensor out;
};

/// The packed conv2d layer: x int8 [N/B][IC/BI][H][W][B][BI], w int8
/// [OC/BO][IC/BI][KH][KW][BO][BI] (blocks of `cfg`), groups 1, followed by the per-tensor
/// requantisation `rq`. UserError when the blocks differ from cfg's, groups != 1, or the
/// requantisation is per-channel or has an immediate outside 16 bits (naming the field).
struct Conv2dLayer {
  te::Tensor x, w;
  Conv2dAttrs attrs;
  RequantParams rq;
};

/// The knobs of the conv2d template: splits "tile_oc" (output-channel blocks), "tile_h" (output
/// rows), "tile_w" (output columns) and "tile_ic" (input-channel blocks), each [outer, inner]
/// over the divisors of its extent (SplitPolicy::kFactors), and knob "oc_nthread" in {1, 2}
/// (virtual threads over the outer channel-block loop).
void conv2d_config_space(const Conv2dLayer& layer, te::ConfigSpace& space);

/// The conv2d template under `cfg` (a point of conv2d_config_space). UserError, before any
/// scheduling, when the tile does not fit a scratchpad, naming the scope, the knobs deciding it
/// and the rows needed and available:
///   "conv2d template: local.inp_buffer needs 2048 rows for knobs tile_ic=4, tile_h=8,
///    tile_w=8 (input window 10 x 10), capacity 2048 rows" (inp: tile_ic x window rows x window
///   columns; wgt: oc_nthread x tile_oc x tile_ic x KH x KW; acc: oc_nthread x tile_oc x tile_h
///   x tile_w x (1 + the requantisation steps), each acc stage its own buffer); also when
///   oc_nthread does not divide the outer channel-block count.
ScheduledOp schedule_conv2d(const Conv2dLayer& layer, const isa::HwConfig& hw, const te::ConfigEntity& cfg);

/// The packed dense layer: x int8 [M/B][K/BI][B][BI], w int8 [N/BO][K/BI][BO][BI], then `rq`.
struct DenseLayer {
  te::Tensor x, w;
  RequantParams rq;
};
/// Knobs: splits "tile_oc" (output blocks) and "tile_ic" (K blocks), knob "oc_nthread" {1, 2}.
void dense_config_space(const DenseLayer& layer, te::ConfigSpace& space);
/// The dense template (the conv2d template without rows and columns). UserError as
/// schedule_conv2d ("dense template: ...").
ScheduledOp schedule_dense(const DenseLayer& layer, const isa::HwConfig& hw, const te::ConfigEntity& cfg);

/// The residual qadd on packed int8 tensors a, b [N/B][C/BO][H][W][B][BO]: both operands are
/// loaded into local.acc_buffer (cache_read, pragma dma_copy: y = int32(x), LOAD ACC_8BIT), the
/// scaling, sum and requantisation are ALU stages in acc (pragma alu) and the result is stored
/// (pragma dma_copy), one tile of tile_h rows x W columns of one batch and channel block at a
/// time (the batch and channel-block loops outermost, so every copy is a 2-D DMA). Knob
/// "tile_h" (rows per tile, a split of H). UserError as the others (acc: 2 loads + the ALU
/// steps, each tile_h x W rows).
struct QaddLayer {
  te::Tensor a, b;
  int32_t a_zero_point = 0, a_multiplier = 1, b_zero_point = 0, b_multiplier = 1;
  RequantParams rq;
};
void qadd_config_space(const QaddLayer& layer, te::ConfigSpace& space);
ScheduledOp schedule_qadd(const QaddLayer& layer, const isa::HwConfig& hw, const te::ConfigEntity& cfg);

}  // namespace tessel::topi::accel
