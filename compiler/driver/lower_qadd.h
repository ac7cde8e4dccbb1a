// Lowering of an offloaded residual add (a qadd the placement pass put on the accelerator) to a
// verified accelerator Program, through the tensor-expression path: the topi qadd template
// (compiler/topi/accel/schedule.h schedule_qadd: operands loaded into ACC with LOAD ACC_8BIT, the
// scheme's chain as ALU instructions, the int8 result stored) -> te::lower ->
// compiler/backend/accel/tir build_accel_program (inject_dma_copy, tensorize_gemm, inject_alu,
// allocate_scratchpads, fold_uop_loops, emit_instructions with dependency tokens and the verifier).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/backend/accel/lower_conv2d.h"
#include "compiler/passes/qadd_scheme.h"
#include "isa/config.h"

namespace tessel::compiler::driver {

/// One residual add for the accelerator: y = scheme(a, b) element-wise, a, b and y of one
/// logical shape [N, C, H, W], all three in NCHWnc with blocks (BATCH, BLOCK_OUT) of the
/// configuration (N and C zero-padded to the blocks, as runtime::TensorDesc::size_bytes).
struct QaddAccelLayer {
  std::string name;             ///< node name, copied into the Program and error messages
  std::vector<int64_t> shape;   ///< logical NCHW shape of a, b and y
  int32_t a_zero_point = 0, b_zero_point = 0;
  passes::QaddScheme scheme;    ///< from passes::find_qadd_scheme (exact against the CPU kernel)
};

/// The Program's segments: "a" and "b" (kInput, the operands as LOAD ACC_8BIT reads them),
/// "const" (kConst, only when some value of the scheme does not fit the ALU's 16-bit
/// immediate: one int32 [BATCH][BLOCK_OUT] element per such value, in chain order, each filled
/// with the value), "out" (kOutput, y), then "uop".
inline constexpr const char* kQaddSegA = "a";
inline constexpr const char* kQaddSegB = "b";
inline constexpr const char* kQaddSegOut = "out";

/// Lowers `layer` for `cfg`. The chain the ALU runs is the scheme's, with the zero points and
/// the output offset folded into the round term when that keeps every step in int32:
///   y = clip((qa A + qb B + R') >> s), R' = R - za A - zb B + zy 2^s
/// (adding a multiple of 2^s before a floor shift adds it after: the same value on every pair,
/// checked on all 65,536 pairs), which saves three ALU instructions per tile; otherwise the
/// scheme's chain as written. The template's knob tile_h (output rows per tile, a divisor of H)
/// is chosen by the stream cost model (accel::estimate_cycles of each candidate's emitted
/// Program: the fewest cycles, ties to the smaller tile_h); candidates whose tile does not fit
/// ACC are skipped, and so are those whose stream deadlocks under cfg's CMD_QUEUE_DEPTH and
/// TOKEN_QUEUE_DEPTH (each candidate is built with deep queues and checked with isa::
/// check_program under cfg's). LoweredLayer::schedule reads "tile_h=2 (56 tiles), 3 int32
/// constant rows, zero points folded"; macs and ideal_gemm_uops are 0; est_cycles as for conv layers; pass_ms has
/// "schedule" (the candidates), the build passes of the chosen candidate, and "verify".
/// `dump_ir_after` "all" or a name of accel_tir::pass_names() (or "input") appends that TIR to
/// LoweredLayer::ir_dump; other names dump nothing.
/// Throws UserError naming the layer when the shape is not 4-D with positive extents, and when
/// no candidate fits or runs with the configured queue depths (with the first candidate's
/// reason); InternalError when a candidate fails the verifier for another reason (a bug).
/// Deterministic: the same inputs give a byte-identical Program.
accel::LoweredLayer lower_qadd_layer(const QaddAccelLayer& layer, const isa::HwConfig& cfg,
                                     const std::string& dump_ir_after = "");

}  // namespace tessel::compiler::driver
