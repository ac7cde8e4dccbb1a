// The single ISA specification: one field table per instruction format (and one for micro-ops),
// with every field's bit position derived from the HwConfig. Encode, decode, the assembler, the
// disassembler, the SystemVerilog package (hw/) and docs/isa.md are all generated from it.
// Bit layout and field order: ../shared/reference/isa.md section 2 (VTA include/vta/hw_spec.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "isa/config.h"
#include "isa/instruction.h"

namespace tessel::isa {

/// Instruction formats that have their own field table.
enum class Format : uint8_t { kMem = 0, kGemm = 1, kAlu = 2, kFinish = 3, kUop = 4 };

/// One field of a format: bits [lsb, lsb+width) of the 128-bit instruction (or 32-bit uop).
struct FieldSpec {
  std::string name;   ///< VTA's field name, e.g. "sram_base", "dst_factor_out"
  uint32_t lsb = 0;
  uint32_t width = 0;
  bool is_signed = false;  ///< only "imm"
  uint32_t msb() const { return lsb + width - 1; }
};

/// The ISA of one HwConfig. Construction validates that every format fits (128 bits per
/// instruction, 32 bits per uop) and throws UserError naming the format and field otherwise.
class IsaSpec {
 public:
  explicit IsaSpec(const HwConfig& cfg);
  const HwConfig& config() const { return cfg_; }

  /// The field table of a format, in bit order.
  const std::vector<FieldSpec>& fields(Format f) const;
  /// Looks up one field; throws InternalError if the format has no such field.
  const FieldSpec& field(Format f, const std::string& name) const;

  /// Encodes an instruction. Throws UserError naming the field and value when a value does not
  /// fit its field (e.g. "sram_base 70000 does not fit 16 bits").
  EncodedInsn encode(const Instruction& insn) const;
  /// Decodes 128 bits. Throws UserError on an unknown opcode, memory type or ALU opcode.
  Instruction decode(const EncodedInsn& bits) const;
  /// Encodes/decodes a 32-bit micro-op (dst_idx, src_idx, wgt_idx; widths from the depths).
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
