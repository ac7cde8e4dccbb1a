// The architectural state of the accelerator (UOP, INP, WGT, ACC and OUT scratchpads) and the
// functional semantics of each instruction on it (../shared/reference/isa.md section 3). Shared by
// fsim and the cycle-level model, which adds timing around it; the RTL is an independent
// implementation checked against it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "isa/config.h"
#include "isa/instruction.h"
#include "isa/spec.h"
#include "sim/common/simulator.h"

namespace tessel::sim {

/// Scratchpads and instruction semantics. Every method checks SRAM bounds over the whole loop
/// nest / rectangle before touching state and throws SimError naming `insn_index` and the
/// buffer, so a failing instruction changes nothing.
///
/// Error messages read "<module> module: insn <index> (<LOAD INP|GEMM|ALU ADD|...>): <what>",
/// e.g. "compute module: insn 7 (GEMM): acc index 2050 out of range (acc depth 2048) ...".
/// Exactly the indices an instruction touches are checked: an empty loop nest (iter_out or
/// iter_in 0, or uop_bgn >= uop_end) and a zero-size LOAD/STORE (x_size 0) touch nothing and
/// cannot fail. Illegal in every model (SimError): pads on UOP/WGT loads and on STOREs, a LOAD of
/// memory_type OUT, a STORE of any memory_type but OUT (zero-size ones excepted), uop_end beyond
/// the uop depth, any SRAM or DRAM index outside its buffer. ALU instructions ignore reset_reg
/// (as VTA's fsim), and read no ACC source row when use_imm is set (so none is checked).
class Datapath {
 public:
  explicit Datapath(const isa::HwConfig& cfg);
  const isa::HwConfig& config() const { return cfg_; }

  /// Zeroes every scratchpad (power-on state).
  void reset();

  /// LOAD of UOP, INP, WGT, ACC or ACC_8BIT from `dram` (addresses relative to byte 0 of dram,
  /// dram_base in elements of the memory type). Zero padding as isa.md; ACC/ACC_8BIT loads also
  /// update OUT (low 8 bits). x_size == 0 does nothing. Counts the DRAM bytes read
  /// (y_size*x_size*element bytes, pads excluded) into the counter of the memory type.
  void load(const isa::Instruction& insn, const Dram& dram, uint32_t insn_index, Counters& c);
  /// STORE of OUT rows to dram (dram_base in OUT elements; row y of x_size elements is read from
  /// OUT rows sram_base + y*x_size ... and written at dram_base + y*x_stride). x_size == 0 does
  /// nothing.
  void store(const isa::Instruction& insn, Dram& dram, uint32_t insn_index, Counters& c);
  /// GEMM (or reset when insn.reset): acc[dst] += inp[src] x wgt[wgt]^T per uop, 32-bit
  /// wrapping; OUT mirrors the low 8 bits. Counts iter_out*iter_in*(uop_end-uop_bgn) into
  /// c.gemm_counter for non-reset GEMMs.
  void gemm(const isa::Instruction& insn, uint32_t insn_index, Counters& c);
  /// ALU (MIN, MAX, ADD, SHR with negative amounts, MUL); updates ACC and OUT. ADD and MUL wrap
  /// at 32 bits (MUL keeps the low 32 bits of the product); SHR by a signed amount a shifts right
  /// arithmetically by min(a, 31) when a >= 0 and left by min(-a, 31) (wrapping) when a < 0.
  /// Counts the loop nest into c.alu_counter.
  void alu(const isa::Instruction& insn, uint32_t insn_index, Counters& c);

  // ---- state access for tests and tools (element = one row; lane = one value in it) ----
  /// UOP entry `idx` (decoded), idx < uop depth.
  const isa::Uop& uop(uint32_t idx) const { return uop_[idx]; }
  /// INP row `idx`, lanes [b*BLOCK_IN + c].
  const int8_t* inp_row(uint32_t idx) const { return &inp_[size_t(idx) * cfg_.batch() * cfg_.block_in()]; }
  /// WGT row `idx`, lanes [o*BLOCK_IN + c].
  const int8_t* wgt_row(uint32_t idx) const { return &wgt_[size_t(idx) * cfg_.block_out() * cfg_.block_in()]; }
  /// ACC row `idx`, lanes [b*BLOCK_OUT + o].
  const int32_t* acc_row(uint32_t idx) const { return &acc_[size_t(idx) * cfg_.batch() * cfg_.block_out()]; }
  /// OUT row `idx`, lanes [b*BLOCK_OUT + o].
  const int8_t* out_row(uint32_t idx) const { return &out_[size_t(idx) * cfg_.batch() * cfg_.block_out()]; }

 private:
  [[noreturn]] void fail(const isa::Instruction& insn, uint32_t insn_index,
                         const std::string& what) const;
  void check_dram(const isa::Instruction& insn, uint32_t insn_index, const Dram& dram,
                  uint64_t elem_bytes) const;
  /// Checks a GEMM or ALU loop nest once, before it runs: the uop range [uop_bgn, uop_end) lies
  /// within the uop depth, and the largest index the nest reaches (largest uop field +
  /// (iter_out-1) * factor_out + (iter_in-1) * factor_in) stays below the depth of the scratchpad
  /// it addresses: dst in ACC always; for a GEMM (`kGemm` true) without reset src in INP and wgt
  /// in WGT; for an ALU op (`kGemm` false) without immediate src in ACC. Throws SimError (via
  /// fail) naming the index. Defined and instantiated in datapath.cc.
  template <bool kGemm>
  void check_nest(const isa::Instruction& insn, uint32_t insn_index) const;
  /// Runs a range-checked GEMM loop nest (a datapath.cc-internal Nest) on the best kernel for
  /// the configuration's shape.
  void run_gemm_kernel(const void* nest);

  isa::HwConfig cfg_;
  isa::IsaSpec spec_;  ///< decodes micro-ops on UOP loads
  std::vector<isa::Uop> uop_;
  std::vector<int8_t> inp_, wgt_, out_;
  std::vector<int32_t> acc_;
  /// WGT widened to int16 and interleaved by input-channel pairs ([c/2][o][2]) for the SIMD
  /// GEMM kernel; kept in step with wgt_ by every WGT load.
  std::vector<int16_t> wgt_p_;
};

}  // namespace tessel::sim
