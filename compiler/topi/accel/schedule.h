// Accelerator schedule templates (TVM's vta.top schedules): the declared GEMM tensor intrinsic of
// a configuration, and templates for packed conv2d, packed dense and the residual qadd whose
// knobs live in a te::ConfigSpace.
//
// What a template does to the operator's stages (scopes: compiler/target/accel_intrin.h):
//  - the output (int8, DRAM) is tiled: output-channel blocks by `tile_oc`, rows by `tile_h`,
//    columns by `tile_w` (conv2d; dense tiles the output blocks only), the tile loops outermost;
//    with `oc_nthread` > 1 the outer channel-block loop, with `h_nthread` > 1 (conv2d) the outer
//    row loop, is split into that many parts bound to "cthread" (virtual threads, the
//    accelerator's latency-hiding contexts, each with its own copy of every buffer: one
//    thread's loads fill its buffers while the other computes; the threads' statements are
//    interleaved by inject_virtual_threads);
//  - the accumulator stage is cache_write'n into local.acc_buffer and computed at the tile
//    (compute_at the output's innermost tile loop); its input-channel blocks are split by
//    `tile_ic`, the chunk loop outermost; the input window (the padded input stage inlined, so
//    the copy carries the padding as select(...)) and the weights are cache_read into
//    local.inp_buffer / local.wgt_buffer at the chunk loop, each copy marked pragma dma_copy
//    at its row loop (one 2-D DMA per channel block: the batch and channel-block loops stay
//    outside); conv2d with one chunk (tile_ic = all input blocks) computes the weight copy at
//    the output-channel tile loop instead, so a tile's weights are loaded once and reused by
//    all its row and column tiles; the block (BATCH x BLOCK_OUT x BLOCK_IN) is tensorized with gemm_intrin;
//  - every requantisation step (topi/qnn.h) is cache_write'n into local.acc_buffer (its global
//    copy inlined), computed at the tile and marked pragma alu;
//  - the output's copy from the last acc stage (y = int8(acc)) is marked pragma dma_copy at
//    its row loop (conv2d: one 2-D store per output-channel block of the tile).
// The requantisation may be per channel and its values any int32: conv2d and dense build the
// chain under ImmPolicy{16, 2, packed_channels, stack_channels}, so
//  - a one-entry value that fits the ALU's 16-bit immediate is an immediate (use_imm 1);
//  - a one-entry value beyond it is an int32 constant of one accumulator element [BATCH]
//    [BLOCK_OUT] (ChannelConstant::Kind::kUniform), cache_read into local.acc_buffer once at
//    the root (one LOAD ACC for the whole kernel, one acc row shared by every tile and virtual
//    thread) and read as the ALU's vector operand (use_imm 0, source row fixed);
//  - the F fields with C entries are the rows of one int32 constant "requant.channel"
//    [F][OC/BO][BATCH][BLOCK_OUT] (kChannel: every batch lane the channel's value), cache_read
//    into local.acc_buffer at the output-channel tile loop (one 2-D LOAD ACC of F rows of the
//    tile's tile_oc channel blocks, strided by OC/BO: DRAM_LATENCY once per channel tile and
//    virtual thread, not once per field; reused by its every row, column and input chunk; with
//    knob const_root 1 instead once at the root, every channel block, shared by the threads) and
//    read as the vector operand, field k at row k * tile_oc + the tile's channel block (with
//    const_root: row k * OC/BO + the global channel block), its row stepping with the channel
//    block (ALU src factor 1 on that loop, 0 on the rows and columns).
// Bias and input zero point (conv2d, dense; the layer's `bias`, `x_zero_point`, `w_values`): the
// accumulator must be runtime/qnn.h's bias[o] + sum over the taps inside the input of (x - zx) *
// w, the GEMM gives sum over all taps of x * w (the DMA pads with 0). The difference is split as
// topi/qnn.h describes:
//  - the per-channel part, bias[o] - zx * (sum of w[o]), is folded into the chain's first step,
//    ADD acc_offset (all int32 wrapping adds before any other step, so bit-identical): free when
//    the chain has a per-channel acc_offset already; otherwise that ADD appears (immediate when
//    the sum is one value that fits, else one kChannel row per channel block);
//  - conv2d whose some output window reaches into the padding (with zx != 0): the
//    position-dependent part zx * (sum of w[o] over the window's padded taps) is an int32
//    tensor "conv2d.zp_init" [OC/BO][OH][OW][BATCH][BLOCK_OUT] (kElement, computed by
//    topi::conv2d_zero_point_border; 0 away from the borders), cache_read into
//    local.acc_buffer with every tile (a 2-D LOAD ACC per channel block of the tile, rows x
//    columns) and added by an ALU ADD (step "conv2d.zp", vector operand) right after the GEMMs;
//    the per-channel addend stays in the chain's ADD acc_offset, so the tensor is zero in the
//    interior and lower_template's guard_zero_constant_tiles makes the load and the ADD
//    conditional on the tile reaching into the padding (interior tiles issue neither); at a
//    point without interior tiles (conv2d_interior_tiles) the addend is folded into the tensor
//    instead and the chain's ADD acc_offset is left out. Cost per
//    border tile: the load of tile_oc x tile_h x tile_w acc elements (4 bytes per value) and
//    one ALU ADD over the tile; the acc rows are allocated for every tile. A GEMM whose initial
//    accumulator is that load (instead of the reset) would save the ADD, which the template
//    does not do.
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

/// Per-element constants (ChannelConstant::Kind::kElement, e.g. the zero-point border) that are
/// zero in most tiles: an allocation in acc whose body copies such a constant in (pragma
/// dma_copy, from a PrimFunc argument named as the constant's tensor, at indices linear in the
/// loops) and only ADDs it in place (pragma alu: dst = dst + it) gets the copy and the ADDs
/// guarded by `if (the tile reads a non-zero value)`, a condition on the loops around the
/// allocation computed from the constant's values: when the non-zero tiles are those where
/// some loop variable is in a set (the first and last rows and columns of tiles: the windows
/// that reach into the padding), one range test per run of that set, else one test per
/// non-zero tile (at most 64; more: no guard). No non-zero tile: the copy and the ADDs go; all
/// non-zero, any other use of the buffer, a non-constant loop or more than 65536 tiles: the body
/// is left as it is. emit_instructions evaluates the condition per tile (the loops unrolled), so
/// interior tiles issue neither the LOAD ACC nor the ALU ADD.
tir::PrimFunc guard_zero_constant_tiles(const tir::PrimFunc& f, const std::vector<ChannelConstant>& constants);

/// A constant copied into acc only to be added once, in place, to an accumulator that a GEMM
/// reset cleared (between the two, the accumulator is only accumulated into by GEMMs): the
/// copy goes straight into the accumulator in the reset's place (acc = constant + the GEMMs'
/// sums: int32 adds wrap, so the same values), the ADD and the constant's own acc buffer go.
/// When guard_zero_constant_tiles guarded the copy and the ADD, the tiles outside the guard
/// keep the reset: if (guard) copy into acc else reset. The copy's indices into its buffer must
/// be its own loop variables (or 0 on an extent-1 dimension) and the ADD must cover the whole
/// accumulator; anything else is left as it is. Saves per element of a tile the reset and the
/// ADD micro-ops and the constant's acc rows (the old path's ZeroPointInit).
tir::PrimFunc init_accumulator_from_constants(const tir::PrimFunc& f);

/// te::lower(op.schedule, op.args, name), alu_in_place, guard_zero_constant_tiles,
/// init_accumulator_from_constants, tir::transforms::loop_partition (a split that does not
/// divide: the smaller last tile peeled off with constant extents; nothing otherwise), then
/// mark_gemm_kernels: the TIR the accelerator passes
/// (inject_dma_copy, inject_alu; the GEMM kernels are already formed) take.
tir::PrimFunc lower_template(const ScheduledOp& op, const std::string& name);

/// The packed conv2d layer: x int8 [N/B][IC/BI][H][W][B][BI], w int8
/// [OC/BO][IC/BI/G][KH][KW][BO][BI] (blocks of `cfg`; G = attrs.groups, groups of channel
/// *blocks*: output block ob reads input blocks [ob / (OCB/G) * (ICB/G), + ICB/G), as
/// topi::conv2d_nchwnc; a grouped or depthwise conv whose channel groups are not whole blocks
/// is packed into block groups with zeros between channels of different groups by the caller),
/// the accumulator
///   acc[n, o, y, x] = bias[o] + sum over the taps inside the input of (x - x_zero_point) * w[o]
/// (runtime/qnn.h qconv2d_reference on the packed tensors), then the requantisation `rq`
/// (topi/qnn.h; fields of 1 or OC = OC/BO * BO entries, any int32 values). `bias`: int32, OC
/// entries (padding lanes: any value, their outputs are not real) or empty (no bias).
/// `x_zero_point` in [-128, 127]; when it is not 0, `w_values` must hold w's contents (row-major,
/// padding lanes 0) for the correction terms; otherwise it may be empty. UserError naming the
/// field when the blocks differ from cfg's, bias or w_values have another size,
/// x_zero_point is out of range, or rq is invalid (topi::requantize's errors).
struct Conv2dLayer {
  te::Tensor x, w;
  Conv2dAttrs attrs;
  RequantParams rq;
  std::vector<int32_t> bias;
  int32_t x_zero_point = 0;
  std::vector<int8_t> w_values;
};

/// The knobs of the conv2d template: splits "tile_oc" (output-channel blocks), "tile_h" (output
/// rows), "tile_w" (output columns) and "tile_ic" (input-channel blocks of a group: IC/BI/G),
/// each [outer, inner] under `policy`: by default the divisors of its extent
/// (SplitPolicy::kFactors); with SplitPolicy::kBalanced also the sizes whose last tile is
/// smaller (bound inference clips that tile's loops, lower_template's loop_partition peels it
/// off with constant extents; a narrower last window is one DMA per row; virtual threads only
/// over whole tiles: threads_divide) - bit-exact, not yet the drivers' default (its points are
/// slower to lower and the search's fast model ranks them poorly); and knobs "oc_nthread" and
/// "h_nthread" in {1, 2} (virtual threads over the outer channel-block loop, over the outer row
/// loop: threads over channels each load the input window, threads over rows each load the
/// weights); when the chain has per-channel constants, knob "const_root" in {0, 1} (0: each
/// output-channel tile and thread loads its channel blocks' rows of them, 1: every channel
/// block's rows are loaded once at the root, one LOAD ACC for the kernel, shared by the threads:
/// F x OC/BO acc rows instead of T x F x tile_oc).
void conv2d_config_space(const Conv2dLayer& layer, te::ConfigSpace& space,
                         te::SplitPolicy policy = te::SplitPolicy::kFactors);

/// The conv2d template under `cfg` (a point of conv2d_config_space). UserError, before any
/// scheduling, when the tile does not fit a scratchpad, naming the scope, the knobs deciding it
/// and the rows needed and available:
///   "conv2d template: local.inp_buffer needs 2048 rows for knobs tile_ic=4, tile_h=8,
///    tile_w=8 (input window 10 x 10), capacity 2048 rows" (with T = oc_nthread x h_nthread
///   threads, each with its own buffers; the knobs named start with the thread counts when T >
///   1: inp: T x tile_ic x window rows x window columns; wgt: T x tile_oc x tile_ic x KH x KW;
///   acc: T x tile_oc x tile_h x tile_w x (1 + low limbs): the buffers left after
///   alu_in_place, plus T x tile_oc x tile_h x tile_w for the zero-point border tensor, T x
///   tile_oc per per-channel field (OC/BO with const_root) and 1 per uniform constant; the
///   parenthesis then names them:
///   "(1 acc buffers, 1 zero-point init buffer, 2 channel constants, 1 uniform constants)");
///   also when oc_nthread does not divide the outer channel-block count or h_nthread the outer
///   row count.
/// PrimFunc arguments (ScheduledOp::args): x, w, then the constants in ScheduledOp::constants'
/// order (conv2d.zp_init first when there is one, then the chain's in chain order: the wide
/// one-entry ones "requant.acc_offset", "requant.acc_min", "requant.acc_max",
/// "requant.low<j>.multiplier", "requant.low<j>.round", "requant.low<j>.shift",
/// "requant.multiplier", "requant.round", "requant.shift", "requant.out_add", as far as they are
/// constants, and the stacked per-channel fields "requant.channel" where the first of them is
/// in that order), then the output. The
/// caller places each constant's values (int32, row-major) in the DRAM image as ACC elements.
ScheduledOp schedule_conv2d(const Conv2dLayer& layer, const isa::HwConfig& hw, const te::ConfigEntity& cfg);

/// The packed dense layer: x int8 [M/B][K/BI][B][BI], w int8 [N/BO][K/BI][BO][BI],
///   acc[m, n] = bias[n] + sum over k of (x[m, k] - x_zero_point) * w[n, k]
/// then `rq` (fields of 1 or N = N/BO * BO entries). bias, x_zero_point and w_values as
/// Conv2dLayer (dense has no padding: the zero point is only the per-channel addend).
struct DenseLayer {
  te::Tensor x, w;
  RequantParams rq;
  std::vector<int32_t> bias;
  int32_t x_zero_point = 0;
  std::vector<int8_t> w_values;
};
/// Knobs: splits "tile_oc" (output blocks) and "tile_ic" (K blocks) under `policy` (as
/// conv2d_config_space), "const_root" as conv2d_config_space's, knob "oc_nthread" {1, 2}
/// (cthread over the outer output-block loop: each thread its own input, weight and acc buffers).
void dense_config_space(const DenseLayer& layer, te::ConfigSpace& space,
                        te::SplitPolicy policy = te::SplitPolicy::kFactors);
/// The dense template (the conv2d template without rows and columns; the channel constants
/// are loaded at the output-block tile loop, or with const_root once at the root). UserError as
/// schedule_conv2d ("dense template:
/// ..."; acc: oc_nthread x M/B x tile_oc x (1 + low limbs) rows, plus oc_nthread x tile_oc per
/// per-channel field (N/BO with const_root) and 1 per uniform constant). Arguments: x, w, the chain's constants, the
/// output.
ScheduledOp schedule_dense(const DenseLayer& layer, const isa::HwConfig& hw, const te::ConfigEntity& cfg);

/// The acc buffers of a conv2d or dense layer's requantisation chain, the same at every point of
/// its config space: `stages` (1 + low limbs: the accumulator and the limbs' copies left after
/// alu_in_place), `element` (1 when there is a zero-point border tensor, one row per output
/// element of the tile), `channel` (per-channel fields: rows of the stacked constant, one per
/// channel block each), `uniform`
/// (constants of one row for the whole layer).
struct AccBuffers {
  int64_t stages = 1;
  int64_t element = 0, channel = 0, uniform = 0;
};

/// The scratchpad rows one tile of a template needs at one point, per scope: the counts its fit
/// check compares with isa::HwConfig::inp_depth(), wgt_depth() and acc_depth().
struct TileRows {
  int64_t inp = 0, wgt = 0, acc = 0;
};

/// The acc buffers of the conv2d template for `layer` (folds the bias and the zero point as
/// schedule_conv2d does). UserError as schedule_conv2d for a chain it cannot take (field sizes,
/// bias size, zero point out of range).
AccBuffers conv2d_acc_buffers(const Conv2dLayer& layer);
/// The rows of one tile of the conv2d template at `cfg` (the formulas of schedule_conv2d's
/// UserErrors); schedule_conv2d's fit check is this function, so a caller that screens points
/// with it (a tuner's cost model) agrees with the template on which points fit.
TileRows conv2d_tile_rows(const Conv2dLayer& layer, const AccBuffers& bufs, const te::ConfigEntity& cfg);
/// Whether the point's virtual-thread knobs divide their loops: oc_nthread the outer
/// output-channel-block count and, for conv2d (a point with knob "h_nthread"), h_nthread the
/// outer row count; and whether a split with more than one thread is whole tiles (tile_oc
/// divides `oc_blocks`, tile_h divides `out_rows`: a smaller last tile, SplitPolicy::kBalanced,
/// only where no thread splits the loop; `out_rows` is ignored for a point without "h_nthread",
/// a dense one: pass 0). schedule_conv2d / schedule_dense refuse the other
/// points with a UserError naming the knob; a tuner's screen calls this instead.
bool threads_divide(const te::ConfigEntity& cfg, int64_t oc_blocks, int64_t out_rows);
/// Whether the point loads the per-channel constants once at the root (knob "const_root" 1;
/// false for a point without that knob: a chain without per-channel constants).
bool const_root(const te::ConfigEntity& cfg);

/// The input-channel blocks one tile's input window spans (per thread) for tiles of `tile_oc`
/// output-channel blocks and chunks of `tile_ic` input blocks: tile_ic with groups 1; with G
/// block groups of OCB/G output and ICB/G input blocks, the most over the tiles of
/// (last group - first group) * ICB/G + tile_ic (the input blocks between a tile's groups are
/// loaded too: one window per tile).
int64_t conv2d_window_blocks(const Conv2dLayer& layer, int64_t tile_oc, int64_t tile_ic);
/// The output tiles of tile_h x tile_w (per output-channel tile and batch block) whose input
/// windows stay inside the input (none of their taps in the padding). With a zero-point border
/// and none of them, schedule_conv2d folds the per-channel addend into the border tensor (every
/// tile adds it: the chain's ADD acc_offset goes); otherwise the border holds the padding
/// correction only and the interior tiles skip it (guard_zero_constant_tiles).
int64_t conv2d_interior_tiles(const Conv2dLayer& layer, int64_t tile_h, int64_t tile_w);
/// As conv2d_acc_buffers, for the dense template.
AccBuffers dense_acc_buffers(const DenseLayer& layer);
/// As conv2d_tile_rows, for the dense template (schedule_dense's fit check).
TileRows dense_tile_rows(const DenseLayer& layer, const AccBuffers& bufs, const te::ConfigEntity& cfg);

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
