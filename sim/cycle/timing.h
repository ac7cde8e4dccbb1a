// The timing rules of the cycle-level model (sim/cycle), as plain functions of one instruction and
// the HwConfig, so the SystemC model, the tests and docs/cycle-model.md state every rate once.
// Units: accelerator clock cycles, bus beats (one beat = one cycle of the DRAM bus, bus_bytes()
// bytes), SRAM rows (one scratchpad element).
//
// These rates are Tessel's model, not measured figures: a GEMM uop per cycle is VTA's design point
// (isa.md section 5: "GEMM uops at one per cycle"); the fill/drain depths and the fetch burst are
// our choices, to be calibrated against the RTL (see docs/cycle-model.md, "What will be refined").
#pragma once

#include <cstdint>

#include "isa/config.h"
#include "isa/instruction.h"

namespace tessel::sim::cycle {

/// Instructions fetch reads from DRAM in one bus transaction (16 bytes each), at most.
inline constexpr uint32_t kFetchBurstInsns = 8;
/// Cycles fetch spends dispatching one instruction into a command queue.
inline constexpr uint64_t kDispatchCycles = 1;
/// Pipeline fill/drain of a GEMM (uop read, operand read, multiply/adder tree, ACC write-back):
/// a GEMM of n uops takes n + kGemmFillCycles cycles.
inline constexpr uint64_t kGemmFillCycles = 4;
/// Fill/drain of a GEMM with reset_reg (uop read, ACC write): n + kResetFillCycles cycles.
inline constexpr uint64_t kResetFillCycles = 1;
/// Fill/drain of the ALU pipeline (uop read, two ACC reads, op + write-back): n +
/// kAluFillCycles cycles. Every ALU opcode, MUL included, issues one uop per cycle.
inline constexpr uint64_t kAluFillCycles = 3;
/// Minimum cycles of any instruction: a no-op (x_size = 0), an empty loop nest, FINISH.
inline constexpr uint64_t kIssueCycles = 1;

/// Bus beats of one row of `row_bytes` bytes: ceil(row_bytes / cfg.bus_bytes()).
uint64_t row_beats(const isa::HwConfig& cfg, uint64_t row_bytes);

/// Bus beats moved by a LOAD or STORE: y_size rows of x_size DRAM elements each, every row a
/// separate burst of row_beats(x_size * dram_elem_bytes(mem_type)) beats (rows are never merged,
/// even when x_stride == x_size). 0 when x_size or y_size is 0.
uint64_t transfer_beats(const isa::HwConfig& cfg, const isa::Instruction& insn);

/// Zero-padding SRAM rows written by a LOAD: (y_pad_0 + y_size + y_pad_1) *
/// (x_pad_0 + x_size + x_pad_1) - y_size * x_size, one row per cycle. 0 when x_size is 0
/// (a no-op load).
uint64_t pad_rows(const isa::Instruction& insn);

/// Uops issued by a GEMM or ALU: iter_out * iter_in * (uop_end - uop_bgn), 0 when uop_end <=
/// uop_bgn.
uint64_t loop_uops(const isa::Instruction& insn);

/// Cycles a GEMM (reset or not) or ALU instruction occupies the compute module:
/// max(kIssueCycles, n + fill) with n = loop_uops(insn) and the fill above (no fill when n = 0).
uint64_t compute_cycles(const isa::Instruction& insn);

/// Bus beats of a fetch burst of `insns` 16-byte instructions: row_beats(16 * insns).
uint64_t fetch_beats(const isa::HwConfig& cfg, uint32_t insns);

}  // namespace tessel::sim::cycle
