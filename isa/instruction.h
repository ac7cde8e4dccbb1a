// The decoded form of Tessel/VTA instructions and micro-ops (reference: ../shared/reference/isa.md
// sections 2-4). Encoding to and from the 128-bit / 32-bit binary forms lives in isa/spec.h, which
// is driven by one field table per format and the HwConfig.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tessel::isa {

/// Instruction opcodes, bits [2:0] of every instruction.
enum class Opcode : uint8_t { kLoad = 0, kStore = 1, kGemm = 2, kFinish = 3, kAlu = 4 };

/// memory_type of LOAD/STORE, bits [9:7].
enum class MemType : uint8_t { kUop = 0, kWgt = 1, kInp = 2, kAcc = 3, kOut = 4, kAcc8 = 5 };

/// ALU opcodes (alu_opcode field of ALU instructions).
enum class AluOp : uint8_t { kMin = 0, kMax = 1, kAdd = 2, kShr = 3, kMul = 4 };

/// The three modules of the decoupled access-execute pipeline.
enum class Module : uint8_t { kLoad = 0, kCompute = 1, kStore = 2 };

/// The four dependency-token queues (isa.md section 4).
enum class TokenQueue : uint8_t {
  kL2G = 0,  ///< load -> compute: data loaded
  kG2L = 1,  ///< compute -> load: INP/WGT buffer free again
  kG2S = 2,  ///< compute -> store: results ready
  kS2G = 3,  ///< store -> compute: OUT drained
};

/// Assembler names: "LOAD", "STORE", "GEMM", "FINISH", "ALU" ("INVALID" for a value outside the
/// enum, which only a cast can produce).
std::string_view to_string(Opcode op);
/// "UOP", "WGT", "INP", "ACC", "OUT", "ACC_8BIT" ("INVALID" outside the enum).
std::string_view to_string(MemType m);
/// "MIN", "MAX", "ADD", "SHR", "MUL" ("INVALID" outside the enum).
std::string_view to_string(AluOp op);
/// "load", "compute", "store" ("invalid" outside the enum).
std::string_view to_string(Module m);
/// "l2g", "g2l", "g2s", "s2g" ("invalid" outside the enum).
std::string_view to_string(TokenQueue q);

struct Instruction;
/// Micro-ops a GEMM or ALU issues (its loop nest, isa.md): iter_out * iter_in * (uop_end -
/// uop_bgn), 0 when uop_end <= uop_bgn. VTA's gemm/alu counters count the same.
uint64_t loop_uops(const Instruction& insn);

/// "load->compute", "compute->load", "compute->store", "store->compute".
std::string_view token_queue_route(TokenQueue q);

/// The token queue module `m` pops for pop_prev (prev = true) or pop_next (prev = false) (isa.md
/// section 4): load pops g2l (next); compute pops l2g (prev) and s2g (next); store pops g2s
/// (prev). nullopt for the combinations the module does not have (load prev, store next).
std::optional<TokenQueue> dep_pop_queue(Module m, bool prev);
/// The token queue module `m` pushes for push_prev / push_next: load pushes l2g (next); compute
/// pushes g2l (prev) and g2s (next); store pushes s2g (prev). nullopt when the module has none.
std::optional<TokenQueue> dep_push_queue(Module m, bool prev);

/// Dependency-token flags: bits [3] pop_prev, [4] pop_next, [5] push_prev, [6] push_next.
struct DepFlags {
  bool pop_prev = false;
  bool pop_next = false;
  bool push_prev = false;
  bool push_next = false;
  bool operator==(const DepFlags&) const = default;
};

/// One decoded instruction. Only the fields of its format are meaningful; the others stay zero
/// (encode() ignores them, decode() leaves them zero). Units: SRAM indices in elements (rows) of
/// the addressed buffer, DRAM addresses in elements of memory_type (NOT bytes), strides in elements.
struct Instruction {
  Opcode opcode = Opcode::kFinish;
  DepFlags dep;
  // ---- LOAD / STORE ----
  MemType mem_type = MemType::kUop;
  uint32_t sram_base = 0;
  uint32_t dram_base = 0;
  uint32_t y_size = 0, x_size = 0, x_stride = 0;
  uint32_t y_pad_0 = 0, y_pad_1 = 0, x_pad_0 = 0, x_pad_1 = 0;
  // ---- GEMM / ALU (shared loop nest) ----
  bool reset = false;  ///< reset_reg: write zeros over the loop nest instead of computing
  uint32_t uop_bgn = 0, uop_end = 0;  ///< micro-op range [bgn, end) in the uop buffer
  uint32_t iter_out = 0, iter_in = 0;
  uint32_t dst_factor_out = 0, dst_factor_in = 0;
  uint32_t src_factor_out = 0, src_factor_in = 0;
  uint32_t wgt_factor_out = 0, wgt_factor_in = 0;  ///< GEMM only
  // ---- ALU only ----
  AluOp alu_op = AluOp::kMin;
  bool use_imm = false;
  int32_t imm = 0;  ///< sign-extended 16-bit immediate

  bool operator==(const Instruction&) const = default;

  /// Which module executes this instruction (dispatch rule of isa.md section 4): STORE -> store;
  /// LOAD of INP/WGT -> load; LOAD of UOP/ACC/ACC_8BIT, GEMM, ALU, FINISH -> compute.
  /// A LOAD with memory_type OUT is routed to compute (and rejected by the verifier).
  Module module() const;
};

/// One micro-op: indices into ACC (dst), INP for GEMM or ACC for ALU (src), WGT (wgt).
struct Uop {
  uint32_t dst = 0;
  uint32_t src = 0;
  uint32_t wgt = 0;
  bool operator==(const Uop&) const = default;
};

/// A 128-bit encoded instruction: word[0] holds bits [63:0], word[1] bits [127:64]. In memory
/// it is stored little-endian, word 0 first (16 bytes).
struct EncodedInsn {
  uint64_t word[2] = {0, 0};
  bool operator==(const EncodedInsn&) const = default;
};

// ---- convenience builders (used by the compiler, tests and the runtime) ----

/// LOAD/STORE with the given fields (units as in Instruction); pads default to zero, dependency
/// flags are clear. Throws UserError if `op` is not LOAD or STORE. Field ranges are checked by
/// IsaSpec::encode and the verifier, not here.
Instruction make_mem(Opcode op, MemType type, uint32_t sram_base, uint32_t dram_base,
                     uint32_t y_size, uint32_t x_size, uint32_t x_stride, uint32_t y_pad_0 = 0,
                     uint32_t y_pad_1 = 0, uint32_t x_pad_0 = 0, uint32_t x_pad_1 = 0);
/// A zero-size memory instruction that only moves dependency tokens (x_size = 0): memory_type
/// INP for the load module, UOP for compute, OUT (as a STORE) for store; every other field zero
/// (VTA runtime's no-op). Throws UserError for a Module value outside the enum.
Instruction make_noop(Module m, DepFlags dep);
/// FINISH with the given dependency flags.
Instruction make_finish(DepFlags dep = {});
/// GEMM over the loop nest i < iter_out, j < iter_in, k in [uop_bgn, uop_end) (isa.md section
/// 3); factors are index steps in elements of ACC (dst), INP (src) and WGT (wgt). reset = true
/// zeroes ACC over the nest instead of multiplying.
Instruction make_gemm(uint32_t uop_bgn, uint32_t uop_end, uint32_t iter_out, uint32_t iter_in,
                      uint32_t dst_factor_out, uint32_t dst_factor_in, uint32_t src_factor_out,
                      uint32_t src_factor_in, uint32_t wgt_factor_out = 0,
                      uint32_t wgt_factor_in = 0, bool reset = false, DepFlags dep = {});
/// ALU `op` over the same loop nest; dst and src factors step ACC indices. use_imm = true takes
/// the second operand from `imm` (16-bit signed in the encoding) instead of ACC[src].
Instruction make_alu(AluOp op, uint32_t uop_bgn, uint32_t uop_end, uint32_t iter_out,
                     uint32_t iter_in, uint32_t dst_factor_out, uint32_t dst_factor_in,
                     uint32_t src_factor_out, uint32_t src_factor_in, bool use_imm = false,
                     int32_t imm = 0, DepFlags dep = {});

}  // namespace tessel::isa
