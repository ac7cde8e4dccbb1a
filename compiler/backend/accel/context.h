// The state shared by the accelerator backend's loop-IR passes (LoweringContext) and the tile
// layout helpers they use: where each tile and input-channel chunk lives in the scratchpads
// (SRAM indices relative to the tile's virtual thread, see docs/accel-backend.md section 4).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compiler/backend/accel/loop_ir.h"
#include "compiler/backend/accel/plan.h"
#include "compiler/backend/accel/schedule.h"
#include "compiler/backend/accel/uop_table.h"
#include "isa/config.h"

namespace tessel::compiler::accel {

/// Shared state of the passes.
struct LoweringContext {
  std::string layer;
  isa::HwConfig cfg;
  ConvGeometry geom;
  Schedule sched;
  LayerPlan plan;
  // DRAM bases of the segments, in elements of the memory type that reads/writes them
  uint64_t inp_base = 0;            ///< INP elements
  uint64_t out_base = 0;            ///< OUT elements
  uint64_t wgt_base = 0;            ///< WGT elements
  uint64_t const_base = 0;          ///< ACC elements: [OCB][const_rows]
  uint64_t init_base = 0;           ///< ACC elements: [OCB][OH][OW] (acc_init_tensor only)
  uint64_t uop_base = 0;            ///< UOP elements (set after the passes, see allocate_uops)
  std::vector<int64_t> wgt_offset;  ///< per oc block: WGT element of its first non-zero tile
  /// Micro-op kernels; GEMM/ALU kInsn statements refer to them by index.
  std::vector<std::vector<isa::Uop>> kernels;
  /// The final micro-op table in DRAM order (allocate_uops: kernels concatenated).
  std::vector<isa::Uop> uop_table;
  std::vector<int64_t> kernel_dram_offset;  ///< per kernel: its first uop in uop_table

  /// Returns the id of `k`, adding it if no identical kernel exists.
  int intern_kernel(const std::vector<isa::Uop>& k);
  /// Starts a new kernel table (clears `kernels` and the dedup map).
  void clear_kernels() {
    kernels.clear();
    kernel_table_.clear();
  }

 private:
  UopKernelTable kernel_table_;  ///< the interning (kernels mirrors its kernels())
};

/// The scratchpad layout of one tile and input-channel chunk (thread-relative indices).
struct ChunkLayout {
  std::vector<int64_t> icbs;                         ///< input blocks, sorted; INP slot = index
  std::vector<std::pair<int64_t, int64_t>> entries;  ///< per local oc block: input blocks [a, b)
  std::vector<int64_t> wbase;                        ///< per local oc block: its first WGT entry
  int64_t wgt_entries = 0;                           ///< WGT entries of the chunk
  Window wy, wx;                                     ///< the input window of the tile
  int64_t slot_stride = 0;                           ///< INP entries per slot: win_h * wx.total()

  /// INP slot of input block `icb`; throws InternalError if the chunk does not use it.
  int64_t slot_of(int64_t icb) const;
};

/// The layout of tile `t`, chunk `chunk`.
ChunkLayout chunk_layout(const LoweringContext& ctx, const Tile& t, int chunk);

/// First ACC row of the per-channel constant rows in a virtual thread's region: after the
/// accumulator tiles (oc_tile_blocks * acc_tile_stride).
int64_t const_acc_base(const LoweringContext& ctx);

/// First ACC row of region `region` of the tile's accumulators in a virtual thread's region:
/// 0 for the tile itself (region 0), and for scratch region k - 1 (region k >= 1,
/// LayerPlan::scratch_regions) the rows after the constant rows:
/// const_acc_base + oc_tile_blocks * const_rows + (k - 1) * oc_tile_blocks * acc_tile_stride.
int64_t acc_region_base(const LoweringContext& ctx, int region);

/// `v` as an instruction field value; throws InternalError naming `what` if it is negative or
/// above 32 bits (the field widths themselves are checked by the encoder and the verifier).
uint32_t to_u32(int64_t v, const char* what);

/// The stage (kSeq child of a tile) called `name`, or nullptr.
Stmt* find_stage(Stmt& tile, const std::string& name);

/// "load0", "compute1", ...: the name of a per-chunk stage.
std::string stage_name(const char* what, int chunk);

/// A GEMM-reset or ALU micro-op body over tile `t`'s accumulators: `for o in [0, obn) { for p in
/// [0, th*tw) { body } }` with dst = o*acc_tile_stride + p and, when `row` >= 0, src = constant
/// row `row` of block o (const_acc_base + o*const_rows + row). `proto` gives the opcode, reset,
/// alu_op, use_imm and imm. `dst_region` moves dst to that region (acc_region_base);
/// `src_region` >= 0 (with row < 0) makes src the same element of that region.
Stmt acc_loop(const LoweringContext& ctx, const Tile& t, const isa::Instruction& proto, int64_t row,
              std::string comment, int dst_region = 0, int src_region = -1);

}  // namespace tessel::compiler::accel
