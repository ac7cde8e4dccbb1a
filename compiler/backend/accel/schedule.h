// Compute definition and schedule of one quantised conv2d on the accelerator.
//
// Compute definition (runtime/qnn.h): out[n,o,y,x] = requantize(bias[o] + sum over valid taps of
// (in[n,c,y*sh-pt+ky,x*sw-pl+kx] - in_zero_point) * w[o,c,ky,kx]). The accelerator view: a dense
// conv over BLOCK_IN x BLOCK_OUT blocks whose weight is block-sparse for grouped/depthwise convs
// (tiles of channels in different groups are structurally zero and skipped), N padded to BATCH and
// IC/OC padded to the blocks. Dense = 1x1 conv on [N,K,1,1].
//
// Schedule: the output is split into tiles of (batch block, oc_tile_blocks output-channel blocks,
// oh_tile rows, ow_tile columns); the reduction over the structurally non-zero input-channel blocks
// is split into chunks of ic_chunk blocks per output-channel block. Tiles are cached into the
// scratchpads (input window with halo into INP, weights into WGT, the accumulator tile and the
// per-channel constant rows into ACC) and dealt round-robin to `virtual_threads` virtual threads,
// each owning 1/virtual_threads of every scratchpad. A fast analytic model prunes the tile sizes to
// a few candidates under the scratchpad capacities (schedule_candidates()); lower_conv2d lowers
// each and keeps the one whose instruction stream the stream cost model (stream_cost.h) times
// fastest.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/backend/accel/lower_conv2d.h"
#include "isa/config.h"
#include "runtime/qnn.h"
#include "support/error.h"

namespace tessel::compiler::accel {

/// Shapes of a layer in the accelerator's blocked view (all counts in elements or blocks).
struct ConvGeometry {
  int64_t n = 1, ic = 0, ih = 0, iw = 0, oc = 0, kh = 1, kw = 1;
  int64_t sh = 1, sw = 1, pt = 0, pl = 0, pb = 0, pr = 0, groups = 1;
  int64_t oh = 0, ow = 0;
  int64_t batch = 1, block_in = 16, block_out = 16;
  int64_t nb = 1;   ///< batch blocks: ceil(n / BATCH)
  int64_t icb = 1;  ///< input-channel blocks: ceil(ic / BLOCK_IN)
  int64_t ocb = 1;  ///< output-channel blocks: ceil(oc / BLOCK_OUT)
  /// For each output-channel block, the first and one-past-last input-channel block whose weight
  /// tile is structurally non-zero (channels of a common group). Contiguous because groups are.
  std::vector<std::pair<int64_t, int64_t>> nz;
  int64_t max_nnz = 1;    ///< max over output-channel blocks of the non-zero input blocks
  int64_t nnz_tiles = 0;  ///< sum over output-channel blocks of the non-zero input blocks
  /// For each output-channel block, the WGT entry (relative to the weight segment) of its first
  /// non-zero tile: the prefix sums of (nz.second - nz.first) * kh * kw (the packing of
  /// lower_conv2d.cc), computed once so that per-tile lookups are O(1).
  std::vector<int64_t> wgt_offset;
};

/// Validates `p` (throws UserError naming the layer and the bad value: non-positive sizes, groups
/// not dividing IC and OC, a kernel larger than the padded input, DMA pads above 15, an input
/// width above the 16-bit DMA stride) and derives the blocked geometry.
ConvGeometry make_geometry(const std::string& layer, const runtime::QConv2dParams& p,
                           const isa::HwConfig& cfg);

/// One output tile: batch block `nb`, output-channel blocks [ob0, ob0+obn), output rows
/// [y0, y0+th), output columns [x0, x0+tw); `vthread` = index % virtual_threads.
struct Tile {
  int64_t nb = 0, ob0 = 0, obn = 0, y0 = 0, th = 0, x0 = 0, tw = 0;
  int vthread = 0;
};

/// The chosen schedule.
struct Schedule {
  int64_t oc_tile_blocks = 1;  ///< output-channel blocks per tile
  int64_t oh_tile = 1;         ///< output rows per tile (the last tile may be shorter)
  int64_t ow_tile = 1;         ///< output columns per tile (the last tile may be narrower)
  int64_t ic_chunk = 1;        ///< non-zero input-channel blocks per output block per chunk
  int64_t n_chunks = 1;        ///< ceil(max_nnz / ic_chunk)
  int virtual_threads = 2;
  int64_t const_rows = 0;  ///< ACC rows of per-channel constants per output-channel block
  // per-virtual-thread scratchpad regions (entries): thread t owns [t*size, (t+1)*size)
  int64_t inp_region = 0, wgt_region = 0, acc_region = 0;
  int64_t win_h = 0;            ///< input rows of a full-height tile: (oh_tile-1)*sh + kh
  int64_t acc_tile_stride = 0;  ///< ACC rows per output-channel block in a tile: oh_tile*ow_tile
  /// The pruning model's estimate (cycles) of the whole layer (schedule_candidates: the filter
  /// that ranks the candidates to lower, not the final choice).
  int64_t prune_cycles = 0;
  /// The stream cost model's cycles of the layer's emitted instruction stream (estimate_cycles,
  /// stream_cost.h; exact against the cycle model): set by lower_conv2d once the candidate is
  /// lowered; 0 before.
  int64_t est_cycles = 0;
  std::vector<Tile> tiles;      ///< in program order: nb, oc tile, row tile, column tile
  /// One line, e.g. "tiles=8 oc_tile=2 oh_tile=7 ow_tile=14 ic_chunk=4 chunks=1 vthreads=2
  /// const_rows=2", followed by " est_cycles=N" once est_cycles is set.
  std::string describe() const;
};

/// The schedule candidates of one layer that lower_conv2d lowers to pick from, cheapest first by
/// the PRUNING model below (ties: the earlier in enumeration order, i.e. the larger tiles); the
/// first is the pruning model's best, so the final choice is never worse by the stream cost model
/// than ranking by the pruning model alone. Each has its tiles, regions and prune_cycles set
/// (est_cycles = 0).
///
/// The pruning model is a fast analytic estimate (cycles) that walks the tiles of a candidate
/// without emitting its instructions, applying the timing rules of docs/microarchitecture.md
/// (the cycle model's; per-instruction rules from isa/timing.h) to the instructions the passes
/// emit, tile by tile in program order. It is a filter only: it models the stream coarsely (the
/// stages are walked in program order, not time order; command queues never fill) and reads up
/// to ~20% low against the cycle model, so it can rank two close candidates wrongly; the final
/// choice is by the stream cost model on the lowered candidates. Its rules:
///  - load stage per tile and input-channel chunk: one LOAD INP per input block (requested the
///    cycle after its start, first beat dram_latency + 1 after the grant, one bus burst of
///    ceil(real columns * element bytes / bus_bytes) beats per real row, the zero-padding
///    elements one per cycle in the beat-free cycles) and the LOAD WGTs of group_wgt_loads
///    (skipped when the thread's previous tile left the same weights, i.e. one chunk per tile and
///    the same output blocks);
///  - compute stage: the up-front LOAD UOP of the micro-op table when every distinct kernel fits
///    the UOP buffer (otherwise a LOAD UOP before every GEMM), the constant rows' LOAD ACC when the
///    thread's output blocks change, the GEMM reset or the init tensor's LOAD ACC
///    (`acc_init_tensor`, border tiles only), the GEMM of each chunk, `alu_ops` ALU
///    instructions (each GEMM, reset or ALU of n uops done n + 4 cycles after its start);
///  - store stage: one STORE per output block (write beats from the cycle after the grant, done
///    at the write response dram_latency after them).
/// Every module runs its instructions in order, the next starting the cycle after the previous
/// one's done cycle; a stage starts when fetch has dispatched its first instruction (bursts of 8
/// instructions, no prefetch) and its dependency tokens are available (a load waits for the GEMMs
/// that last used its virtual thread's INP/WGT half, a GEMM for its load, a tile's first compute
/// work for the store that last used its ACC half, a store for the ALU work; a token is visible
/// the cycle after its push); every transfer waits for the bus (served in grant order; see Bus in
/// schedule.cc). The layer cost is the end of the stream (with the ending no-ops and FINISH), at
/// least the beats the one bus moves, times the batch blocks.
///
/// Constraints per virtual thread: the INP window, the WGT tiles, the ACC tile + constant rows
/// and the GEMM micro-op kernel each fit depth / virtual_threads entries (16 uops kept for ALU
/// kernels). Candidates: oc_tile_blocks, oh_tile and ow_tile of the form ceil(extent / k)
/// (balanced tiles), ic_chunk of the form ceil(max_nnz / k). Knobs other than 0 fix their
/// dimension. `const_rows`: ACC rows of per-channel constants per output block; `alu_ops`: ALU
/// instructions per tile; `acc_init_tensor`: the accumulators of the tiles with an output window
/// touching the padding start from a LOAD ACC of the init tensor instead of a GEMM reset (layer
/// plan, plan.h); the other tiles reset; with `init_every_tile` every tile loads it;
/// `scratch_regions` copies of the tile's accumulators follow the constant rows in ACC
/// (LayerPlan::scratch_regions). Each virtual thread's scratchpad regions (Schedule::inp_region
/// etc.) are sized by thread_region so that every index a micro-op names stays within
/// uop_reach(cfg).
/// Throws UserError naming the layer when a knob is out of range (virtual_threads < 1, tile
/// sizes < 0 or above the layer's extent) or `filter` is (max_candidates < 1, band < 0), and
/// NoTileFits when no candidate fits (naming the smallest candidate, the constraint it fails, and
/// the capacities).
/// The UserError schedule_candidates throws when no candidate fits the scratchpads (so that a
/// caller can try other knobs, e.g. one virtual thread).
class NoTileFits : public UserError {
 public:
  using UserError::UserError;
};

std::vector<Schedule> schedule_candidates(const std::string& layer, const ConvGeometry& g, const isa::HwConfig& cfg,
                                          const ScheduleKnobs& knobs, int64_t const_rows, int64_t alu_ops,
                                          bool acc_init_tensor, bool init_every_tile, int scratch_regions,
                                          const CandidateFilter& filter);

/// A piece of weights to load: `entries` WGT entries from DRAM entry `dram` (relative to the
/// weight segment) to WGT entry `sram`.
struct WgtPiece {
  int64_t dram = 0, sram = 0, entries = 0;
};
/// One LOAD WGT: `rows` rows of `entries` entries each, the rows `stride` entries apart in DRAM
/// (stride == entries when rows == 1) and contiguous in WGT; it covers pieces [first, first +
/// count) of the list it was made from.
struct WgtLoad {
  int64_t dram = 0, sram = 0, rows = 1, entries = 0, stride = 0;
  size_t first = 0, count = 0;
};
/// Groups `pieces` (in order, non-empty) into LOADs: pieces contiguous in DRAM and in WGT join
/// one row; pieces of equal length, contiguous in WGT and evenly spaced in DRAM (at most 65535
/// entries apart: the 16-bit x_stride) become the rows of one 2-D LOAD. Used by inject_dma_copy
/// and by the cost model.
std::vector<WgtLoad> group_wgt_loads(const std::vector<WgtPiece>& pieces);

/// Input-channel blocks of output block `ob` in chunk `chunk`: [first, last) (may be empty).
std::pair<int64_t, int64_t> chunk_blocks(const ConvGeometry& g, const Schedule& s, int64_t ob,
                                         int chunk);

/// Input window of a tile along one axis: first input coordinate (may be negative), the number of
/// real rows/columns inside [0, extent), and the zero padding before and after.
struct Window {
  int64_t first = 0, real = 0, pad0 = 0, pad1 = 0;
  int64_t total() const { return pad0 + real + pad1; }
};
/// The window of output range [o0, o0+on) for kernel k, stride s, leading pad p, input extent n.
Window input_window(int64_t o0, int64_t on, int64_t k, int64_t s, int64_t p, int64_t n);

/// True when some output of tile `t` has a window that touches the zero padding (its input
/// window along y or x has padding before or after), i.e. the zero-point correction of some of
/// its outputs differs from the constant -in_zero_point * sum(w[o]) (docs/accel-backend.md s. 2).
bool tile_touches_padding(const ConvGeometry& g, const Tile& t);

/// True when the input window of tile `t` holds no real input row or no real column: it lies
/// wholly in the zero padding. Such a tile loads no input or weights and runs no GEMM; its
/// accumulators are its init-tensor rows (plan.h: the padding's zero-point correction; with
/// input zero point 0 there is none and the tile resets) plus the bias row, i.e. exactly the
/// conv of an all-padding window.
bool tile_window_empty(const ConvGeometry& g, const Tile& t);

/// True when some output window of the layer touches the zero padding (any tile would).
bool layer_touches_padding(const ConvGeometry& g);

/// Scratchpad rows a micro-op field can name: 2^width of the field in the uop format
/// (isa::IsaSpec(cfg), VTA's VTAUop), independent of the scratchpad depth. Per VTAUop, src_idx is
/// as wide as the ACC index (log2 ACC depth bits) for GEMM too, so when INP is deeper than ACC a
/// GEMM uop cannot name the INP rows at and above `inp`. The loop factors of GEMM/ALU
/// instructions have their own (depth-wide) fields, so an index reached through them may go
/// further; only the uop's own index is bounded by these values.
struct UopReach {
  int64_t inp = 0;      ///< INP rows named by a GEMM uop's src_idx
  int64_t wgt = 0;      ///< WGT rows named by a GEMM uop's wgt_idx
  int64_t acc_dst = 0;  ///< ACC rows named by a GEMM/ALU uop's dst_idx
  int64_t acc_src = 0;  ///< ACC rows named by an ALU uop's src_idx
};
/// The reach of each uop index field for `cfg` (from the IsaSpec field widths; the one place the
/// schedule learns them).
UopReach uop_reach(const isa::HwConfig& cfg);

/// The size (entries) of each virtual thread's region of one scratchpad: thread t owns
/// [t*R, t*R + need). Returns the largest R <= depth / vt with R >= need and, for every (top,
/// reach) pair, (vt-1)*R + top < reach, where `top` is the largest index a uop names inside a
/// thread's region (the last thread's uops are the highest; a pair with top < 0, i.e. no uop
/// names the scratchpad, is ignored); 0 when no R qualifies. With every reach >= depth the
/// result is depth / vt whenever need fits, as without the uop bound.
int64_t thread_region(int64_t depth, int vt, int64_t need,
                      const std::vector<std::pair<int64_t, int64_t>>& top_reach);

}  // namespace tessel::compiler::accel
