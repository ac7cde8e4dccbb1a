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
//    local.inp_buffer / local.wgt_buffer at the chunk loop, each copy marked pragma dma_copy
//    at its row loop (one 2-D DMA per channel block: the batch and channel-block loops stay
//    outside); the block (BATCH x BLOCK_OUT x BLOCK_IN) is tensorized with gemm_intrin;
//  - every requantisation step (topi/qnn.h) is cache_write'n into local.acc_buffer (its global
//    copy inlined), computed at the tile and marked pragma alu;
//  - the output's copy from the last acc stage (y = int8(acc)) is marked pragma dma_copy at
//    its row loop (conv2d: one 2-D store per output-channel block of the tile).
// The requantisation must be per-tensor (every field one entry). conv2d and dense take ALU
// immediates of 16 bits only; qadd takes any int32 (wider values are constant acc rows).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/te/config_space.h"
#include "compiler/te/schedule.h"
#include "compiler/te/tensor_intrin.h"
#include "compiler/tir/function.h"
#include "compiler/topi/nn.h"
#include "compiler/topi/qnn.h"
#include "isa/config.h"

namespace tessel::topi::accel {

/// The GEMM of `cfg` as a tensor intrinsic "accel.gemm": with B = BATCH, BI = BLOCK_IN, BO =
/// BLOCK_OUT,
///   out int32 [B][BO] = sum over i < BI of int32(inp int8 [B][BI][b, i]) * int32(wgt int8 [BO][BI][o, i])
/// Its builder emits accel.gemm_uop(reset, dst, src, wgt) (compiler/target/accel_intrin.h) with
/// each index a tir.access_ptr of the bound buffer at the bound region's first element, its
/// extent the block's elements (offsets in elements, as tir counts them; the accelerator backend
/// turns them into scratchpad rows); the reset part has src = wgt = 0.
te::TensorIntrin gemm_intrin(const isa::HwConfig& cfg);

/// A template instance ready for te::lower: the schedule, the PrimFunc arguments in order
/// (inputs, then the constants, then the output), the output tensor, and the constant operands
/// with their contents (the caller places them in the Program's DRAM image).
struct ScheduledOp {
  te::Schedule schedule;
  std::vector<te::Tensor> args;
  te::Tensor out;
  std::vector<ChannelConstant> constants;
};

/// The accelerator's ALU updates an acc element in place (acc = acc op v). The templates'
/// requantisation steps are te stages, each writing its own acc buffer from the previous one;
/// this rewrite makes them in place: a pragma_alu nest storing dst[idx] = op(src[idx], v), dst
/// and src acc buffers of one shape, where no statement after the nest (in its sequence or
/// outside it) reads src, writes src instead (dst renamed to src everywhere, dst's Allocate
/// removed), repeated until no nest qualifies. A source read later (the clamped accumulator a
/// low limb copies) keeps its nest out of place. The values computed are unchanged.
tir::PrimFunc alu_in_place(const tir::PrimFunc& f);

/// The GEMM micro-ops gemm_intrin's builder leaves in the lowered loops become micro-op kernels
/// (compiler/target/accel_intrin.h): every perfect loop nest (or single statement) around one
/// accel.gemm_uop, not already inside an accel.uop_kernel, is wrapped in accel.coproc_scope
/// (compute) { accel.uop_kernel 0 { nest } }, so fold_uop_loops makes its outer loops the
/// instruction's loop levels.
tir::PrimFunc mark_gemm_kernels(const tir::PrimFunc& f);

/// te::lower(op.schedule, op.args, name), alu_in_place, then mark_gemm_kernels: the TIR the
/// accelerator passes (inject_dma_copy, inject_alu; the GEMM kernels are already formed) take.
tir::PrimFunc lower_template(const ScheduledOp& op, const std::string& name);

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
///   x tile_w x (1 + low limbs): the buffers left after alu_in_place); also when
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
/// time (the batch and channel-block loops outermost, so every copy is a 2-D DMA). Every value
/// of the chain (multipliers, round, offsets) is an int32: one that does not fit the ALU's
/// 16-bit immediate is an int32 constant [BATCH][BLOCK_OUT] (topi::ImmPolicy{16, 2}), a PrimFunc
/// argument after a and b (ScheduledOp::constants, in chain order: "qadd.a_multiplier",
/// "qadd.b_multiplier", "qadd.round", ...) cache_read once at the root into its own acc row
/// (LOAD ACC) and used as the ALU's vector operand (use_imm 0, source row fixed). Knob
/// "tile_h" (rows per tile, a split of H). UserError as the others (acc: tile_h x W rows for
/// each operand and each low limb, plus one row per constant).
struct QaddLayer {
  te::Tensor a, b;
  int32_t a_zero_point = 0, a_multiplier = 1, b_zero_point = 0, b_multiplier = 1;
  RequantParams rq;
};
void qadd_config_space(const QaddLayer& layer, te::ConfigSpace& space);
ScheduledOp schedule_qadd(const QaddLayer& layer, const isa::HwConfig& hw, const te::ConfigEntity& cfg);

}  // namespace tessel::topi::accel
