// The accelerator backend's last stage on TIR: a PrimFunc written with the accelerator's
// intrinsics (compiler/target/accel_intrin.h) -> an isa::Program (instruction stream, micro-op
// table, DRAM image with named segments). The contract the TIR must meet is in
// docs/accel-backend.md ("The TIR contract"); the passes run in this order, each in its own
// header and source:
//
//   inject_dma_copy       copy loop nests under pragma_dma_copy -> accel.dma_load / dma_store
//   tensorize_gemm        GEMM and acc-init loop nests -> accel.gemm_uop kernels
//   inject_alu            element-wise acc loop nests under pragma_alu -> accel.alu_uop kernels
//   allocate_scratchpads  Allocate nodes of the inp/wgt/acc/uop scopes -> SRAM row offsets
//   fold_uop_loops        the loops inside each accel.uop_kernel -> the GEMM/ALU loop nest
//   emit_instructions     unroll, DMA -> LOAD/STORE, kernels -> micro-ops + GEMM/ALU, tokens,
//                         verifier, FINISH
//
// The first five are PrimFunc -> PrimFunc passes run by one tir::PassManager (tir_pipeline();
// compiler/tir/pass_manager.h); emit_instructions is the code generator after them.
// build_accel_program() runs them and can dump the IR after any one ("input" is the function
// as given, "emit_instructions" the disassembled stream), times each, and with
// BuildOptions::verify_ir checks the TIR after every pass. The first three turn the loop nests a
// tensor-expression schedule produces into the intrinsics; TIR already written with them passes
// through them unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "compiler/tir/function.h"
#include "compiler/tir/pass_manager.h"
#include "isa/config.h"
#include "isa/instruction.h"
#include "isa/program.h"

namespace tessel::compiler::accel_tir {

/// Where one global buffer parameter lives in the Program's DRAM image.
struct SegmentSpec {
  std::string buffer;   ///< the parameter's buffer name (BufferNode::name)
  std::string segment;  ///< the Program segment holding it (several buffers may share one)
  isa::SegmentKind kind = isa::SegmentKind::kConst;
  uint64_t offset_bytes = 0;  ///< buffer start inside the segment; a multiple of the element size
  /// The memory type DMA indices into the buffer count in: INP, WGT, ACC, ACC_8BIT or UOP for a
  /// loaded buffer, OUT for a stored one (indices are elements of this type, isa.md section 2).
  isa::MemType mem_type = isa::MemType::kInp;
};

/// Options of build_accel_program().
struct BuildOptions {
  /// "" (no dump), "input", a pass name of pass_names(), or "all".
  std::string dump_ir_after;
  /// tir::check_well_formed on the input and after every TIR pass (InternalError naming the
  /// pass); default on in debug builds, off in release (tir::kVerifyPassesByDefault).
  bool verify_ir = tir::kVerifyPassesByDefault;
};

/// What build_accel_program() reports.
struct BuildReport {
  /// (pass name, IR text after it) for every pass dump_ir_after selects, in pipeline order.
  std::vector<std::pair<std::string, std::string>> ir_after;
  int64_t instructions = 0;                            ///< Program::insns.size(), FINISH included
  int64_t loads = 0, stores = 0, gemms = 0, alus = 0;  ///< by opcode (LOAD counts UOP loads)
  int64_t uops = 0;                                    ///< micro-ops in the table (after interning)
  int64_t gemm_uop_executions = 0;  ///< non-reset GEMM micro-ops run: sum iter_out*iter_in*len
  bool explicit_tokens = false;     ///< the TIR's dep_push/dep_pop were used as written
  /// (pass name, wall milliseconds) of every pass, in order: for reports, the only output that is
  /// not deterministic.
  std::vector<std::pair<std::string, double>> pass_ms;
};

/// The TIR passes of build_accel_program for `cfg` (validated by the caller), in order:
/// inject_dma_copy, tensorize_gemm, inject_alu, inject_virtual_threads, allocate_scratchpads,
/// fold_uop_loops. Names and
/// summaries do not depend on cfg.
tir::PassManager tir_pipeline(const isa::HwConfig& cfg);

/// UserError ("unknown pass '<name>' for the ir dump (passes: input, ..., all)") unless
/// `dump_ir_after` is "", "input", "all" or a stage of pass_names(): build_accel_program's check,
/// for callers that take the name from a user before building anything.
void check_dump_ir_after(const std::string& dump_ir_after);

/// Every stage name, in order: tir_pipeline()'s passes, then emit_instructions.
const std::vector<std::string>& pass_names();

/// Builds the Program named f->name for `cfg` from `f` (see the file comment). `segments` gives
/// the DRAM placement of every buffer parameter; segments are created in the order of their
/// first mention, sized to hold every buffer placed in them, followed by the "uop" segment.
/// The image is zero except the micro-op table (callers write constants and inputs into the
/// segments). Throws UserError for: an invalid cfg; a buffer parameter without a SegmentSpec, or
/// a SegmentSpec naming no parameter; an unknown dump_ir_after; and everything the passes throw
/// (see their headers), including a stream the isa verifier rejects.
isa::Program build_accel_program(const tir::PrimFunc& f, const isa::HwConfig& cfg,
                                 const std::vector<SegmentSpec>& segments, const BuildOptions& opts = {},
                                 BuildReport* report = nullptr);

}  // namespace tessel::compiler::accel_tir
