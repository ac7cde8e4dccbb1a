// The ISA field tables and the table-driven encoder/decoder.
//
// Field order and fixed widths: VTA include/vta/hw_spec.h (structs VTAMemInsn, VTAGemInsn,
// VTAAluInsn, VTAUop) and include/vta/hw_spec_const.h (VTA_OPCODE_BIT_WIDTH 3,
// VTA_MEMOP_ID_BIT_WIDTH 3, VTA_MEMOP_SRAM_ADDR_BIT_WIDTH 16, VTA_MEMOP_DRAM_ADDR_BIT_WIDTH 32,
// VTA_MEMOP_SIZE_BIT_WIDTH 16, VTA_MEMOP_STRIDE_BIT_WIDTH 16, VTA_MEMOP_PAD_BIT_WIDTH 4,
// VTA_LOOP_ITER_WIDTH 14, VTA_ALU_OPCODE_BIT_WIDTH 3, VTA_ALUOP_IMM_BIT_WIDTH 16), as read from
// apache/tvm-vta at commit 0931ec2e. Two widths checked against that source:
//  - VTAAluInsn declares src_factor_out/src_factor_in with VTA_LOG_ACC_BUFF_DEPTH (the ALU
//    source is the accumulator), not the INP depth that VTAGemInsn uses.
//  - VTAUop declares src_idx with VTA_LOG_ACC_BUFF_DEPTH for GEMM and ALU alike (the comment
//    says "indexes input buffer for GEMM"). The HLS decoder (hardware/xilinx/src/vta.cc) reads
//    the GEMM src index with the INP depth instead; the two agree whenever the INP and ACC
//    depths are equal, as in every configuration VTA ships. Tessel follows the struct, which is
//    what VTA's runtime uses to write micro-ops, so a stream made by VTA's runtime decodes the
//    same here.
// Positions follow the GCC/x86-64 bit-field packing those structs rely on: fields are allocated
// from bit 0 upwards and a field that would straddle a storage unit of its declared type
// (uint64_t for instructions, uint32_t for micro-ops) starts at the next unit.
#include "isa/spec.h"

#include <algorithm>
#include <array>

#include "support/error.h"

namespace tessel::isa {

namespace {

// Fixed widths from hw_spec_const.h.
constexpr uint32_t kOpcodeBits = 3;
constexpr uint32_t kMemIdBits = 3;
constexpr uint32_t kSramAddrBits = 16;
constexpr uint32_t kDramAddrBits = 32;
constexpr uint32_t kSizeBits = 16;
constexpr uint32_t kStrideBits = 16;
constexpr uint32_t kPadBits = 4;
constexpr uint32_t kLoopIterBits = 14;
constexpr uint32_t kAluOpcodeBits = 3;
constexpr uint32_t kImmBits = 16;

struct FieldDecl {
  const char* name;
  FieldId id;
  int width;  // may be out of range for a bad config; checked by the layout
  bool is_signed;
  std::string doc;
};

std::vector<FieldDecl> header_decls() {
  return {
      {"opcode", FieldId::kOpcode, kOpcodeBits, false,
       "LOAD 0, STORE 1, GEMM 2, FINISH 3, ALU 4 (VTA_OPCODE_BIT_WIDTH)"},
      {"pop_prev_dep", FieldId::kPopPrevDep, 1, false,
       "pop a dependency token from the previous module before executing"},
      {"pop_next_dep", FieldId::kPopNextDep, 1, false,
       "pop a dependency token from the next module before executing"},
      {"push_prev_dep", FieldId::kPushPrevDep, 1, false,
       "push a dependency token to the previous module after completing"},
      {"push_next_dep", FieldId::kPushNextDep, 1, false,
       "push a dependency token to the next module after completing"},
  };
}

std::vector<FieldDecl> loop_decls(const HwConfig& cfg) {
  const int u = cfg.log_uop_depth();
  return {
      {"reset_reg", FieldId::kResetReg, 1, false,
       "1: write zeros over the loop nest instead of computing"},
      {"uop_bgn", FieldId::kUopBgn, u, false, "first micro-op index (log2 UOP depth bits)"},
      {"uop_end", FieldId::kUopEnd, u + 1, false,
       "micro-op index one past the last (log2 UOP depth + 1 bits)"},
      {"iter_out", FieldId::kIterOut, static_cast<int>(kLoopIterBits), false,
       "outer loop trip count (VTA_LOOP_ITER_WIDTH)"},
      {"iter_in", FieldId::kIterIn, static_cast<int>(kLoopIterBits), false,
       "inner loop trip count (VTA_LOOP_ITER_WIDTH)"},
  };
}

std::vector<FieldDecl> declare(Format f, const HwConfig& cfg) {
  const int a = cfg.log_acc_depth();
  const int i = cfg.log_inp_depth();
  const int w = cfg.log_wgt_depth();
  std::vector<FieldDecl> d;
  switch (f) {
    case Format::kMem:
      d = header_decls();
      d.push_back({"memory_type", FieldId::kMemoryType, kMemIdBits, false,
                   "UOP 0, WGT 1, INP 2, ACC 3, OUT 4, ACC_8BIT 5 (VTA_MEMOP_ID_BIT_WIDTH)"});
      d.push_back({"sram_base", FieldId::kSramBase, kSramAddrBits, false,
                   "first SRAM row, in elements of the buffer"});
      d.push_back({"dram_base", FieldId::kDramBase, kDramAddrBits, false,
                   "first DRAM element, in elements of memory_type (not bytes)"});
      d.push_back({"y_size", FieldId::kYSize, kSizeBits, false, "rows"});
      d.push_back({"x_size", FieldId::kXSize, kSizeBits, false,
                   "elements per row (0: a no-op that only moves tokens)"});
      d.push_back({"x_stride", FieldId::kXStride, kStrideBits, false,
                   "DRAM distance between rows, in elements"});
      d.push_back({"y_pad_0", FieldId::kYPad0, kPadBits, false, "zero rows before (LOAD only)"});
      d.push_back({"y_pad_1", FieldId::kYPad1, kPadBits, false, "zero rows after (LOAD only)"});
      d.push_back(
          {"x_pad_0", FieldId::kXPad0, kPadBits, false, "zero elements before each row (LOAD only)"});
      d.push_back(
          {"x_pad_1", FieldId::kXPad1, kPadBits, false, "zero elements after each row (LOAD only)"});
      break;
    case Format::kGemm:
    case Format::kAlu: {
      d = header_decls();
      for (auto& l : loop_decls(cfg)) d.push_back(std::move(l));
      d.push_back({"dst_factor_out", FieldId::kDstFactorOut, a, false,
                   "ACC index step per outer iteration (log2 ACC depth bits)"});
      d.push_back({"dst_factor_in", FieldId::kDstFactorIn, a, false,
                   "ACC index step per inner iteration (log2 ACC depth bits)"});
      if (f == Format::kGemm) {
        d.push_back({"src_factor_out", FieldId::kSrcFactorOut, i, false,
                     "INP index step per outer iteration (log2 INP depth bits)"});
        d.push_back({"src_factor_in", FieldId::kSrcFactorIn, i, false,
                     "INP index step per inner iteration (log2 INP depth bits)"});
        d.push_back({"wgt_factor_out", FieldId::kWgtFactorOut, w, false,
                     "WGT index step per outer iteration (log2 WGT depth bits)"});
        d.push_back({"wgt_factor_in", FieldId::kWgtFactorIn, w, false,
                     "WGT index step per inner iteration (log2 WGT depth bits)"});
      } else {
        // VTAAluInsn: src factors index the accumulator (VTA_LOG_ACC_BUFF_DEPTH).
        d.push_back({"src_factor_out", FieldId::kSrcFactorOut, a, false,
                     "ACC source index step per outer iteration (log2 ACC depth bits)"});
        d.push_back({"src_factor_in", FieldId::kSrcFactorIn, a, false,
                     "ACC source index step per inner iteration (log2 ACC depth bits)"});
        d.push_back({"alu_opcode", FieldId::kAluOpcode, kAluOpcodeBits, false,
                     "MIN 0, MAX 1, ADD 2, SHR 3, MUL 4 (VTA_ALU_OPCODE_BIT_WIDTH)"});
        d.push_back({"use_imm", FieldId::kUseImm, 1, false,
                     "1: the second operand is imm, 0: ACC[src]"});
        d.push_back({"imm", FieldId::kImm, kImmBits, true,
                     "signed immediate, sign-extended to 32 bits (VTA_ALUOP_IMM_BIT_WIDTH)"});
      }
      break;
    }
    case Format::kFinish:
      // VTA writes FINISH through VTAGemInsn with every other field zero.
      d = header_decls();
      break;
    case Format::kUop:
      d.push_back({"dst_idx", FieldId::kDstIdx, a, false, "ACC index (log2 ACC depth bits)"});
      d.push_back({"src_idx", FieldId::kSrcIdx, a, false,
                   "INP index for GEMM, ACC index for ALU (log2 ACC depth bits, as VTAUop)"});
      d.push_back({"wgt_idx", FieldId::kWgtIdx, w, false, "WGT index (log2 WGT depth bits)"});
      break;
  }
  return d;
}

// Storage unit of the C struct the format mirrors.
uint32_t unit_bits(Format f) { return f == Format::kUop ? 32 : 64; }

uint64_t mask_of(uint32_t width) { return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1; }

// Fields never straddle a 64-bit word (the layout guarantees it), but these helpers handle any
// position so the self-check is the only place that relies on that.
uint64_t get_bits(const uint64_t word[2], uint32_t lsb, uint32_t width) {
  uint64_t v = 0;
  for (uint32_t done = 0; done < width;) {
    const uint32_t bit = lsb + done;
    const uint32_t w = bit / 64, off = bit % 64;
    const uint32_t n = std::min(width - done, 64 - off);
    v |= ((word[w] >> off) & mask_of(n)) << done;
    done += n;
  }
  return v;
}

void put_bits(uint64_t word[2], uint32_t lsb, uint32_t width, uint64_t value) {
  for (uint32_t done = 0; done < width;) {
    const uint32_t bit = lsb + done;
    const uint32_t w = bit / 64, off = bit % 64;
    const uint32_t n = std::min(width - done, 64 - off);
    word[w] = (word[w] & ~(mask_of(n) << off)) | (((value >> done) & mask_of(n)) << off);
    done += n;
  }
}

// Reads the value of a field from an instruction or uop (as a 64-bit signed value so that every
// uint32_t and the signed imm are represented exactly).
int64_t read_field(const Instruction& in, FieldId id) {
  switch (id) {
    case FieldId::kOpcode: return static_cast<int64_t>(in.opcode);
    case FieldId::kPopPrevDep: return in.dep.pop_prev;
    case FieldId::kPopNextDep: return in.dep.pop_next;
    case FieldId::kPushPrevDep: return in.dep.push_prev;
    case FieldId::kPushNextDep: return in.dep.push_next;
    case FieldId::kMemoryType: return static_cast<int64_t>(in.mem_type);
    case FieldId::kSramBase: return in.sram_base;
    case FieldId::kDramBase: return in.dram_base;
    case FieldId::kYSize: return in.y_size;
    case FieldId::kXSize: return in.x_size;
    case FieldId::kXStride: return in.x_stride;
    case FieldId::kYPad0: return in.y_pad_0;
    case FieldId::kYPad1: return in.y_pad_1;
    case FieldId::kXPad0: return in.x_pad_0;
    case FieldId::kXPad1: return in.x_pad_1;
    case FieldId::kResetReg: return in.reset;
    case FieldId::kUopBgn: return in.uop_bgn;
    case FieldId::kUopEnd: return in.uop_end;
    case FieldId::kIterOut: return in.iter_out;
    case FieldId::kIterIn: return in.iter_in;
    case FieldId::kDstFactorOut: return in.dst_factor_out;
    case FieldId::kDstFactorIn: return in.dst_factor_in;
    case FieldId::kSrcFactorOut: return in.src_factor_out;
    case FieldId::kSrcFactorIn: return in.src_factor_in;
    case FieldId::kWgtFactorOut: return in.wgt_factor_out;
    case FieldId::kWgtFactorIn: return in.wgt_factor_in;
    case FieldId::kAluOpcode: return static_cast<int64_t>(in.alu_op);
    case FieldId::kUseImm: return in.use_imm;
    case FieldId::kImm: return in.imm;
    case FieldId::kDstIdx:
    case FieldId::kSrcIdx:
    case FieldId::kWgtIdx: break;
  }
  throw_internal_error("field id {} is not an instruction field", static_cast<int>(id));
}

void write_field(Instruction& in, FieldId id, int64_t v) {
  const auto u = static_cast<uint32_t>(v);
  switch (id) {
    case FieldId::kOpcode: in.opcode = static_cast<Opcode>(v); return;
    case FieldId::kPopPrevDep: in.dep.pop_prev = v != 0; return;
    case FieldId::kPopNextDep: in.dep.pop_next = v != 0; return;
    case FieldId::kPushPrevDep: in.dep.push_prev = v != 0; return;
    case FieldId::kPushNextDep: in.dep.push_next = v != 0; return;
    case FieldId::kMemoryType: in.mem_type = static_cast<MemType>(v); return;
    case FieldId::kSramBase: in.sram_base = u; return;
    case FieldId::kDramBase: in.dram_base = u; return;
    case FieldId::kYSize: in.y_size = u; return;
    case FieldId::kXSize: in.x_size = u; return;
    case FieldId::kXStride: in.x_stride = u; return;
    case FieldId::kYPad0: in.y_pad_0 = u; return;
    case FieldId::kYPad1: in.y_pad_1 = u; return;
    case FieldId::kXPad0: in.x_pad_0 = u; return;
    case FieldId::kXPad1: in.x_pad_1 = u; return;
    case FieldId::kResetReg: in.reset = v != 0; return;
    case FieldId::kUopBgn: in.uop_bgn = u; return;
    case FieldId::kUopEnd: in.uop_end = u; return;
    case FieldId::kIterOut: in.iter_out = u; return;
    case FieldId::kIterIn: in.iter_in = u; return;
    case FieldId::kDstFactorOut: in.dst_factor_out = u; return;
    case FieldId::kDstFactorIn: in.dst_factor_in = u; return;
    case FieldId::kSrcFactorOut: in.src_factor_out = u; return;
    case FieldId::kSrcFactorIn: in.src_factor_in = u; return;
    case FieldId::kWgtFactorOut: in.wgt_factor_out = u; return;
    case FieldId::kWgtFactorIn: in.wgt_factor_in = u; return;
    case FieldId::kAluOpcode: in.alu_op = static_cast<AluOp>(v); return;
    case FieldId::kUseImm: in.use_imm = v != 0; return;
    case FieldId::kImm: in.imm = static_cast<int32_t>(v); return;
    case FieldId::kDstIdx:
    case FieldId::kSrcIdx:
    case FieldId::kWgtIdx: break;
  }
  throw_internal_error("field id {} is not an instruction field", static_cast<int>(id));
}

size_t index_of(Format f) {
  const auto i = static_cast<size_t>(f);
  if (i > static_cast<size_t>(Format::kUop)) {
    throw_internal_error("format {} does not exist", i);
  }
  return i;
}

}  // namespace

std::string_view to_string(Format f) {
  switch (f) {
    case Format::kMem: return "mem";
    case Format::kGemm: return "gemm";
    case Format::kAlu: return "alu";
    case Format::kFinish: return "finish";
    case Format::kUop: return "uop";
  }
  return "invalid";
}

int64_t FieldSpec::max_value() const {
  if (is_signed) return (int64_t{1} << (width - 1)) - 1;
  return static_cast<int64_t>(mask_of(width));
}

int64_t FieldSpec::min_value() const { return is_signed ? -(int64_t{1} << (width - 1)) : 0; }

uint32_t format_bits(Format f) { return f == Format::kUop ? 32 : 128; }

Format format_of(Opcode op) {
  switch (op) {
    case Opcode::kLoad:
    case Opcode::kStore: return Format::kMem;
    case Opcode::kGemm: return Format::kGemm;
    case Opcode::kAlu: return Format::kAlu;
    case Opcode::kFinish: return Format::kFinish;
  }
  throw_user_error("unknown opcode {}", static_cast<int>(op));
}

std::vector<FieldSpec> layout_format(Format f, const HwConfig& cfg) {
  const uint32_t unit = unit_bits(f);
  const uint32_t total = format_bits(f);
  std::vector<FieldSpec> out;
  uint32_t pos = 0;
  for (auto& d : declare(f, cfg)) {
    if (d.width < 1 || static_cast<uint32_t>(d.width) > unit) {
      throw_user_error(
          "config {}: {} field {} would be {} bits wide; a field needs 1..{} bits (check the "
          "buffer sizes)",
          cfg.name(), to_string(f), d.name, d.width, unit);
    }
    const auto width = static_cast<uint32_t>(d.width);
    if (pos % unit + width > unit) pos = (pos / unit + 1) * unit;  // no straddling a unit
    if (pos + width > total) {
      throw_user_error(
          "config {}: {} field {} ({} bits) would occupy bits {}..{}, beyond the {}-bit {}; "
          "reduce the buffer depths (log2 depths uop {}, inp {}, wgt {}, acc {})",
          cfg.name(), to_string(f), d.name, width, pos, pos + width - 1, total,
          f == Format::kUop ? "micro-op" : "instruction", cfg.log_uop_depth(),
          cfg.log_inp_depth(), cfg.log_wgt_depth(), cfg.log_acc_depth());
    }
    out.push_back(FieldSpec{d.name, pos, width, d.is_signed, d.id, std::move(d.doc)});
    pos += width;
  }
  return out;
}

IsaSpec::IsaSpec(const HwConfig& cfg) : cfg_(cfg) {
  cfg_.validate();
  for (Format f : {Format::kMem, Format::kGemm, Format::kAlu, Format::kFinish, Format::kUop}) {
    auto& t = tables_[index_of(f)];
    t = layout_format(f, cfg_);
    // Self-check: every bit owned once, inside the format.
    std::vector<int> owner(format_bits(f), -1);
    for (size_t k = 0; k < t.size(); ++k) {
      TESSEL_CHECK(t[k].width >= 1 && t[k].msb() < format_bits(f), "{} field {} bits {}..{}",
                   to_string(f), t[k].name, t[k].lsb, t[k].msb());
      for (uint32_t b = t[k].lsb; b <= t[k].msb(); ++b) {
        TESSEL_CHECK(owner[b] < 0, "{} bit {} owned by {} and {}", to_string(f), b,
                     owner[b] < 0 ? "" : t[owner[b]].name, t[k].name);
        owner[b] = static_cast<int>(k);
      }
    }
    // Fields never straddle a 64-bit word, so a word is always read with one shift and mask.
    for (const auto& fs : t) {
      TESSEL_CHECK(fs.lsb / 64 == fs.msb() / 64, "{} field {} straddles bit 64", to_string(f),
                   fs.name);
    }
  }
}

const std::vector<FieldSpec>& IsaSpec::fields(Format f) const { return tables_[index_of(f)]; }

const FieldSpec& IsaSpec::field(Format f, const std::string& name) const {
  for (const auto& fs : fields(f)) {
    if (fs.name == name) return fs;
  }
  throw_internal_error("format {} has no field '{}'", to_string(f), name);
}

EncodedInsn IsaSpec::encode(const Instruction& insn) const {
  const auto op = static_cast<uint32_t>(insn.opcode);
  if (op > static_cast<uint32_t>(Opcode::kAlu)) throw_user_error("unknown opcode {}", op);
  const Format f = format_of(insn.opcode);
  if (f == Format::kMem && static_cast<uint32_t>(insn.mem_type) > static_cast<uint32_t>(MemType::kAcc8)) {
    throw_user_error("{} field memory_type: unknown memory type {}", to_string(insn.opcode),
                     static_cast<int>(insn.mem_type));
  }
  if (f == Format::kAlu && static_cast<uint32_t>(insn.alu_op) > static_cast<uint32_t>(AluOp::kMul)) {
    throw_user_error("ALU field alu_opcode: unknown ALU opcode {}", static_cast<int>(insn.alu_op));
  }
  EncodedInsn e;
  for (const auto& fs : fields(f)) {
    const int64_t v = read_field(insn, fs.id);
    if (v < fs.min_value() || v > fs.max_value()) {
      throw_user_error("{} field {}: {} does not fit {} bits ({}..{})", to_string(insn.opcode),
                       fs.name, v, fs.width, fs.min_value(), fs.max_value());
    }
    put_bits(e.word, fs.lsb, fs.width, static_cast<uint64_t>(v) & mask_of(fs.width));
  }
  return e;
}

Instruction IsaSpec::decode(const EncodedInsn& bits) const {
  const auto op = get_bits(bits.word, 0, kOpcodeBits);
  if (op > static_cast<uint64_t>(Opcode::kAlu)) {
    throw_user_error("cannot decode instruction {:016x}{:016x}: unknown opcode {}", bits.word[1],
                     bits.word[0], op);
  }
  Instruction in;
  in.opcode = static_cast<Opcode>(op);
  const Format f = format_of(in.opcode);
  for (const auto& fs : fields(f)) {
    uint64_t raw = get_bits(bits.word, fs.lsb, fs.width);
    int64_t v = static_cast<int64_t>(raw);
    if (fs.is_signed && (raw >> (fs.width - 1)) != 0) v -= int64_t{1} << fs.width;
    if (fs.id == FieldId::kMemoryType && v > static_cast<int64_t>(MemType::kAcc8)) {
      throw_user_error("cannot decode {} instruction {:016x}{:016x}: unknown memory type {}",
                       to_string(in.opcode), bits.word[1], bits.word[0], v);
    }
    if (fs.id == FieldId::kAluOpcode && v > static_cast<int64_t>(AluOp::kMul)) {
      throw_user_error("cannot decode ALU instruction {:016x}{:016x}: unknown ALU opcode {}",
                       bits.word[1], bits.word[0], v);
    }
    write_field(in, fs.id, v);
  }
  return in;
}

uint32_t IsaSpec::encode_uop(const Uop& uop) const {
  uint64_t word[2] = {0, 0};
  for (const auto& fs : fields(Format::kUop)) {
    const uint32_t v = fs.id == FieldId::kDstIdx ? uop.dst : fs.id == FieldId::kSrcIdx ? uop.src : uop.wgt;
    if (static_cast<int64_t>(v) > fs.max_value()) {
      throw_user_error("uop field {}: {} does not fit {} bits (0..{})", fs.name, v, fs.width,
                       fs.max_value());
    }
    put_bits(word, fs.lsb, fs.width, v);
  }
  return static_cast<uint32_t>(word[0]);
}

Uop IsaSpec::decode_uop(uint32_t bits) const {
  const uint64_t word[2] = {bits, 0};
  Uop u;
  for (const auto& fs : fields(Format::kUop)) {
    const auto v = static_cast<uint32_t>(get_bits(word, fs.lsb, fs.width));
    if (fs.id == FieldId::kDstIdx) u.dst = v;
    else if (fs.id == FieldId::kSrcIdx) u.src = v;
    else u.wgt = v;
  }
  return u;
}

void IsaSpec::to_bytes(const EncodedInsn& e, uint8_t out[16]) {
  for (int w = 0; w < 2; ++w) {
    for (int b = 0; b < 8; ++b) out[w * 8 + b] = static_cast<uint8_t>(e.word[w] >> (8 * b));
  }
}

EncodedInsn IsaSpec::from_bytes(const uint8_t in[16]) {
  EncodedInsn e;
  for (int w = 0; w < 2; ++w) {
    for (int b = 0; b < 8; ++b) e.word[w] |= uint64_t{in[w * 8 + b]} << (8 * b);
  }
  return e;
}

}  // namespace tessel::isa
