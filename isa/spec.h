// The single ISA specification: one field table per instruction format (and one for micro-ops),
// with every field's bit position derived from the HwConfig. Encode, decode, the assembler, the
// disassembler, the SystemVerilog package (hw/) and docs/isa.md are all generated from it.
// Bit layout and field order: ../shared/reference/isa.md section 2 (VTA include/vta/hw_spec.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "isa/config.h"
#include "isa/instruction.h"

namespace tessel::isa {

/// Instruction formats that have their own field table.
enum class Format : uint8_t { kMem = 0, kGemm = 1, kAlu = 2, kFinish = 3, kUop = 4 };

std::string_view to_string(Format f);  ///< "mem", "gemm", "alu", "finish", "uop"

/// Identifies a field independently of its name, so encode/decode need no string compares.
/// Listed in no particular bit order; the tables give the order.
enum class FieldId : uint8_t {
  kOpcode, kPopPrevDep, kPopNextDep, kPushPrevDep, kPushNextDep,
  // LOAD/STORE
  kMemoryType, kSramBase, kDramBase, kYSize, kXSize, kXStride, kYPad0, kYPad1, kXPad0, kXPad1,
  // GEMM/ALU
  kResetReg, kUopBgn, kUopEnd, kIterOut, kIterIn, kDstFactorOut, kDstFactorIn, kSrcFactorOut,
  kSrcFactorIn, kWgtFactorOut, kWgtFactorIn, kAluOpcode, kUseImm, kImm,
  // micro-op
  kDstIdx, kSrcIdx, kWgtIdx,
};

/// One field of a format: bits [lsb, lsb+width) of the 128-bit instruction (or 32-bit uop).
struct FieldSpec {
  std::string name;   ///< VTA's field name, e.g. "sram_base", "dst_factor_out"
  uint32_t lsb = 0;
  uint32_t width = 0;
  bool is_signed = false;  ///< only "imm"
  FieldId id = FieldId::kOpcode;
  std::string doc;    ///< one-line meaning and the source of the width (for docs/isa.md)
  uint32_t msb() const { return lsb + width - 1; }
  /// Largest value the field holds (unsigned: 2^width - 1; signed: 2^(width-1) - 1).
  int64_t max_value() const;
  /// Smallest value the field holds (0, or -2^(width-1) when signed).
  int64_t min_value() const;
};

/// Total bits of a format: 128 for instructions, 32 for micro-ops (VTA_INS_WIDTH, VTA_UOP_WIDTH).
uint32_t format_bits(Format f);

/// Lays out the fields of one format for `cfg`, in VTA's struct order (include/vta/hw_spec.h),
/// with the C bit-field packing VTA relies on (GCC/x86-64 SysV: a field that would straddle a
/// 64-bit storage unit, 32-bit for micro-ops, starts at the next unit). Every field width that
/// depends on the configuration is derived here and nowhere else.
/// Throws UserError naming the format, the field and the config when a field does not fit in
/// format_bits(f). Does not range-check the config keys themselves: HwConfig::validate() does
/// that first and then calls this for every format; IsaSpec's constructor calls validate().
std::vector<FieldSpec> layout_format(Format f, const HwConfig& cfg);

/// The format of an opcode: LOAD/STORE -> kMem, GEMM -> kGemm, ALU -> kAlu, FINISH -> kFinish.
/// Throws UserError for a value outside Opcode.
Format format_of(Opcode op);

/// The ISA of one HwConfig. Construction calls cfg.validate() (so it throws UserError on an
/// impossible config, naming the key and value, or naming the format and field that no longer
/// fits 128 bits per instruction / 32 bits per uop) and then self-checks that no two fields of a
/// format share a bit (InternalError otherwise).
class IsaSpec {
 public:
  explicit IsaSpec(const HwConfig& cfg);
  const HwConfig& config() const { return cfg_; }

  /// The field table of a format, in bit order.
  const std::vector<FieldSpec>& fields(Format f) const;
  /// Looks up one field; throws InternalError if the format has no such field.
  const FieldSpec& field(Format f, const std::string& name) const;

  /// Encodes an instruction. Only the fields of its format are read; bits not owned by a field
  /// are zero. Throws UserError naming the field and value when a value does not fit its field
  /// (e.g. "LOAD field sram_base: 70000 does not fit 16 bits (0..65535)") or when opcode,
  /// memory_type or alu_op hold a value outside their enum.
  EncodedInsn encode(const Instruction& insn) const;
  /// Decodes 128 bits. Only the fields of the opcode's format are set; bits outside them are
  /// ignored. Throws UserError on an unknown opcode (5..7), memory type (6, 7) or ALU opcode
  /// (5..7).
  Instruction decode(const EncodedInsn& bits) const;
  /// Encodes/decodes a 32-bit micro-op (dst_idx, src_idx, wgt_idx; widths from the depths).
  /// encode_uop throws UserError naming the field when an index does not fit; decode_uop
  /// ignores the bits above the last field.
  uint32_t encode_uop(const Uop& uop) const;
  Uop decode_uop(uint32_t bits) const;

  /// 16 little-endian bytes of an encoded instruction, and back.
  static void to_bytes(const EncodedInsn& e, uint8_t out[16]);
  static EncodedInsn from_bytes(const uint8_t in[16]);

 private:
  HwConfig cfg_;
  std::vector<FieldSpec> tables_[5];
};

}  // namespace tessel::isa
