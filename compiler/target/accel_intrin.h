// The accelerator as TIR sees it: the scratchpad scopes (their element shape, type and depth for
// a configuration) and the intrinsic calls and attributes through which the accelerator
// backend's passes describe the instruction stream before emitting it (the counterpart of VTA's
// VTALoadBuffer2D / VTAStoreBuffer2D / VTAUopPush / coproc_dep_push/pop). Sizes, strides and
// pads follow isa::Instruction (SRAM rows, DRAM elements of the memory type); every
// tir.access_ptr offset and extent counts elements of its buffer's dtype, as everywhere in tir
// (intrinsics.h), so tir's transforms (inject_virtual_threads, storage_flatten) may shift them;
// the backend converts them to rows and memory-type elements (row_elems, dram_unit_elems) when it
// emits instructions.
//
//   accel.dma_load(mem_type, sram_ptr, dram_ptr, y_size, x_size, x_stride,
//                  y_pad_0, y_pad_1, x_pad_0, x_pad_1)               -> one LOAD
//   accel.dma_store(sram_ptr, dram_ptr, y_size, x_size, x_stride)   -> one STORE (OUT)
//   accel.gemm_uop(reset, dst_index, src_index, wgt_index)          -> one GEMM micro-op
//   accel.alu_uop(alu_op, use_imm, imm, dst_index, src_index)       -> one ALU micro-op
//   accel.uop_loop(extent, dst_factor, src_factor, wgt_factor)      -> one level of the GEMM/ALU
//                                                                      loop nest (fold_uop_loops)
//   accel.dep_push(from_module, to_module), accel.dep_pop(from, to) -> dependency tokens
// The *_ptr arguments are tir.access_ptr calls (compiler/tir/intrinsics.h), so tir's
// buffer_access() sees which scratchpad and DRAM buffers every DMA reads and writes. Micro-op
// calls appear inside an AttrStmt kUopKernel (value 0 GEMM, 1 ALU); every accelerator statement
// sits inside an AttrStmt kCoprocScope whose value is the module (isa::Module + 1, as VTA's
// coproc_scope 1 load, 2 compute, 3 store).
#pragma once

#include <cstdint>
#include <string_view>

#include "compiler/tir/stmt.h"
#include "isa/config.h"
#include "isa/instruction.h"

namespace tessel::compiler::target::accel {

inline constexpr std::string_view kDmaLoad = "accel.dma_load";
inline constexpr std::string_view kDmaStore = "accel.dma_store";
inline constexpr std::string_view kGemmUop = "accel.gemm_uop";
inline constexpr std::string_view kAluUop = "accel.alu_uop";
inline constexpr std::string_view kUopLoop = "accel.uop_loop";
inline constexpr std::string_view kDepPush = "accel.dep_push";
inline constexpr std::string_view kDepPop = "accel.dep_pop";

/// AttrStmt keys.
inline constexpr std::string_view kCoprocScope = "accel.coproc_scope";  ///< value: module + 1
inline constexpr std::string_view kUopKernel = "accel.uop_kernel";      ///< value: 0 GEMM, 1 ALU
inline constexpr std::string_view kPragmaDmaCopy = "pragma_dma_copy";   ///< schedule: a copy stage
inline constexpr std::string_view kPragmaAlu = "pragma_alu";            ///< schedule: an ALU stage

/// One scratchpad as a TIR scope. An element is one SRAM row: a rows x cols matrix of `dtype`
/// (INP: BATCH x BLOCK_IN int8; WGT: BLOCK_OUT x BLOCK_IN int8; ACC: BATCH x BLOCK_OUT int32;
/// UOP: one 32-bit micro-op), docs/isa.md section 1.
struct ScopeInfo {
  tir::MemScope scope;
  isa::MemType mem_type;  ///< the LOAD memory type that fills it
  int64_t depth = 0;      ///< elements the scratchpad holds (HwConfig::*_depth())
  int rows = 0, cols = 0; ///< element shape
  tir::DataType dtype;    ///< value type inside an element
  int64_t elem_bytes = 0; ///< bytes of one element (HwConfig::*_elem_bytes())
};

/// The scope's facts for `cfg`. UserError for a scope that is not a scratchpad (global, local,
/// shared).
ScopeInfo scope_info(const isa::HwConfig& cfg, tir::MemScope scope);

/// The scratchpad memory type of a scope (INP, WGT, ACC, UOP); UserError otherwise.
isa::MemType mem_type_of(tir::MemScope scope);

/// Elements of `sram`'s dtype in one row of its scratchpad scope under `cfg` (scope element bytes
/// over dtype bytes: BATCH x BLOCK_IN for an int8 inp buffer, BATCH x BLOCK_OUT for an int32 acc
/// buffer, 1 for a uint32 uop buffer). UserError naming the buffer when the row is not a whole
/// number of its elements, or its scope is not a scratchpad.
int64_t row_elems(const isa::HwConfig& cfg, const tir::Buffer& sram);
/// Elements of `dram`'s dtype in one DRAM element of memory type `type` (isa::dram_elem_bytes
/// over dtype bytes: BATCH x BLOCK_IN for an int8 buffer loaded as INP, BATCH x BLOCK_OUT for an
/// int32 buffer loaded as ACC). UserError naming the buffer when it is not a whole number.
int64_t dram_unit_elems(const isa::HwConfig& cfg, isa::MemType type, const tir::Buffer& dram);
/// tir.access_ptr of `rows` scratchpad rows of `sram` from row `row` (offset row * row_elems,
/// extent rows * row_elems), `rw_mask` as for access_ptr.
tir::Expr sram_ptr(const isa::HwConfig& cfg, const tir::Buffer& sram, tir::Expr row, tir::Expr rows, int rw_mask);

/// accel.dma_load: `sram` must be a scratchpad buffer of the scope `type` fills (ACC for kAcc
/// and kAcc8), `dram` a global buffer. `sram_row` is the first scratchpad row, `dram_index` the
/// first DRAM element of memory type `type`; both become access_ptr element offsets (see the file
/// comment). Indices and sizes are int32 expressions (constants by the time instructions are
/// emitted). InternalError on a scope mismatch; UserError as row_elems / dram_unit_elems.
tir::Stmt dma_load(const isa::HwConfig& cfg, isa::MemType type, const tir::Buffer& sram, tir::Expr sram_row,
                   const tir::Buffer& dram, tir::Expr dram_index, tir::Expr y_size, tir::Expr x_size,
                   tir::Expr x_stride, tir::Expr y_pad_0 = 0, tir::Expr y_pad_1 = 0, tir::Expr x_pad_0 = 0,
                   tir::Expr x_pad_1 = 0);
/// accel.dma_store from an ACC-scope buffer (the OUT view of its rows) to a global buffer; units
/// as dma_load (dram_index in OUT elements).
tir::Stmt dma_store(const isa::HwConfig& cfg, const tir::Buffer& sram, tir::Expr sram_row, const tir::Buffer& dram,
                    tir::Expr dram_index, tir::Expr y_size, tir::Expr x_size, tir::Expr x_stride);
/// accel.gemm_uop over ACC element dst += INP element src x WGT element wgt^T (reset: dst = 0);
/// each index an absolute scratchpad row or a sram_ptr (an access_ptr in elements) of a buffer.
tir::Stmt gemm_uop(bool reset, tir::Expr dst_index, tir::Expr src_index, tir::Expr wgt_index);
/// accel.alu_uop: ACC[dst] = op(ACC[dst], use_imm ? imm : ACC[src]); imm is 16-bit signed.
/// InternalError when imm does not fit.
tir::Stmt alu_uop(isa::AluOp op, bool use_imm, int32_t imm, tir::Expr dst_index, tir::Expr src_index);
/// accel.dep_push / accel.dep_pop between two adjacent modules (load-compute, compute-store);
/// InternalError for any other pair (there is no such queue, isa.md section 4).
tir::Stmt dep_push(isa::Module from, isa::Module to);
tir::Stmt dep_pop(isa::Module from, isa::Module to);
/// `body` as the statement of module `m` (AttrStmt kCoprocScope).
tir::Stmt coproc_scope(isa::Module m, tir::Stmt body);

}  // namespace tessel::compiler::target::accel
