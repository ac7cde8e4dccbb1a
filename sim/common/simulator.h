// The interface every accelerator simulator implements (fsim, cycle, later rtl), the DRAM they
// share, and the counters and statistics they report. The runtime's device backends wrap these.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "isa/config.h"
#include "isa/instruction.h"
#include "support/error.h"

namespace tessel::sim {

/// Byte-addressed device DRAM shared by the host (runtime) and the accelerator model.
/// Out-of-range accesses throw tessel::UserError naming the address and size.
/// The storage is zeroed lazily by the operating system (calloc), so a large DRAM costs resident
/// memory only for the pages actually touched.
class Dram {
 public:
  /// Throws tessel::UserError if `size_bytes` cannot be allocated.
  explicit Dram(uint64_t size_bytes);
  uint64_t size() const { return size_; }
  uint8_t* data() { return bytes_.get(); }
  const uint8_t* data() const { return bytes_.get(); }
  /// Checks [addr, addr+n) is inside DRAM; throws UserError("dram access out of range: ...").
  void check_range(uint64_t addr, uint64_t n, const char* what) const {
    if (addr > size_ || n > size_ - addr) {
      throw_user_error("dram {} out of range: bytes [{}, {}) but dram holds {} bytes", what, addr,
                       addr + n, size_);
    }
  }
  void read(uint64_t addr, void* dst, uint64_t n) const;
  void write(uint64_t addr, const void* src, uint64_t n);

 private:
  struct FreeDeleter {
    void operator()(uint8_t* p) const noexcept;
  };
  uint64_t size_ = 0;
  std::unique_ptr<uint8_t[], FreeDeleter> bytes_;
};

/// VTA's functional counters (isa.md section 5), accumulated over one run.
struct Counters {
  uint64_t inp_load_nbytes = 0;
  uint64_t wgt_load_nbytes = 0;
  uint64_t acc_load_nbytes = 0;   ///< ACC and ACC_8BIT loads, bytes read from DRAM
  uint64_t uop_load_nbytes = 0;
  uint64_t out_store_nbytes = 0;
  uint64_t gemm_counter = 0;      ///< sum of iter_out*iter_in*(uop_end-uop_bgn), non-reset GEMMs
  uint64_t alu_counter = 0;       ///< same loop count for ALU instructions
  uint64_t insn_count = 0;        ///< instructions executed, FINISH included
  bool operator==(const Counters&) const = default;
};

/// Per-module timing statistics of a cycle-level run (all in accelerator clock cycles).
struct ModuleStats {
  uint64_t insns = 0;              ///< instructions completed
  uint64_t busy_cycles = 0;        ///< cycles doing work (DMA beats, uops, ...)
  uint64_t stall_token_cycles = 0; ///< waiting for a dependency token to pop
  uint64_t stall_queue_cycles = 0; ///< waiting on an empty command queue or a full token queue
  uint64_t stall_dram_cycles = 0;  ///< waiting for DRAM (latency or bus held by another module)
  bool operator==(const ModuleStats&) const = default;
};

/// What one run of an instruction stream reports.
struct RunStats {
  uint64_t cycles = 0;  ///< total accelerator cycles from start to FINISH; 0 for fsim
  Counters counters;
  ModuleStats fetch, load, compute, store;  ///< all zero for fsim
};

/// A model of the accelerator. Implementations are deterministic: the same DRAM contents and
/// stream give the same DRAM results, counters and cycles. SRAM contents persist between runs,
/// as in hardware; Programs must not rely on them.
class Simulator {
 public:
  virtual ~Simulator() = default;
  /// "fsim", "cycle" or "rtl".
  virtual std::string name() const = 0;
  /// Runs `insn_count` 128-bit instructions read from DRAM at byte address `insn_addr` (16-byte
  /// aligned) until FINISH. Throws UserError (SimError) on an illegal instruction, an SRAM or DRAM
  /// access out of range, a token-protocol violation, or a deadlock; the message names the module,
  /// the queue and the instruction index. After an error the simulator is reset to a clean state
  /// and may be used again; DRAM writes already made by completed stores stay.
  virtual RunStats run(Dram& dram, uint64_t insn_addr, uint32_t insn_count) = 0;
};

/// A simulator error: names the module, queue and instruction index in its message.
class SimError : public UserError {
 public:
  using UserError::UserError;
};

/// Checks that the stream of `insn_count` 16-byte instructions at byte address `insn_addr` lies
/// inside `dram` (the fetch module's range check, shared by the simulators). Throws SimError
/// ("fetch: instruction stream bytes [a, b) out of range (n instructions; dram holds m bytes)").
void check_insn_stream(const Dram& dram, uint64_t insn_addr, uint32_t insn_count);

/// The functional simulator (sim/fsim).
std::unique_ptr<Simulator> make_fsim(const isa::HwConfig& cfg);
/// The cycle-level SystemC simulator (sim/cycle).
std::unique_ptr<Simulator> make_cycle_sim(const isa::HwConfig& cfg);

}  // namespace tessel::sim
