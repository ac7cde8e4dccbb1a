// Round-trip properties over seeded random field values, for every test configuration:
// decode(encode(i)) == i, from_bytes(to_bytes(e)) == e, parse(disasm(i)) == i, canonical text
// survives disasm(parse(text)), and encode(decode(bits)) == bits for random field bits.
#include <gtest/gtest.h>

#include <random>

#include "isa/asm.h"
#include "isa/spec.h"
#include "isa_test_util.h"

namespace tessel::isa {
namespace {

constexpr int kInsnsPerConfig = 3000;

TEST(IsaRoundTrip, EncodeDecodeAndAsmOverRandomInstructions) {
  for (const auto& nc : test::test_configs()) {
    SCOPED_TRACE(nc.label);
    const IsaSpec spec(nc.cfg);
    std::mt19937_64 rng(0x7e55e1 + nc.cfg.log_block_in * 131 + nc.cfg.log_inp_buff_size);
    std::vector<Instruction> insns;
    for (int n = 0; n < kInsnsPerConfig; ++n) {
      const Instruction in = test::random_insn(rng, spec);
      const EncodedInsn e = spec.encode(in);
      ASSERT_EQ(spec.decode(e), in) << disasm(in);
      uint8_t b[16];
      IsaSpec::to_bytes(e, b);
      ASSERT_EQ(IsaSpec::from_bytes(b), e);
      const std::string text = disasm(in);
      const AsmListing l = parse_asm(text);
      ASSERT_EQ(l.insns.size(), 1u) << text;
      ASSERT_EQ(l.insns[0], in) << text;
      ASSERT_EQ(disasm(l.insns[0]), text);
      insns.push_back(in);
    }
    std::vector<Uop> uops;
    for (int n = 0; n < 1000; ++n) {
      const Uop u = test::random_uop(rng, spec);
      ASSERT_EQ(spec.decode_uop(spec.encode_uop(u)), u);
      uops.push_back(u);
    }
    // A whole listing round-trips as text and as values.
    const std::string listing = disasm_listing(insns, uops);
    const AsmListing back = parse_asm(listing);
    EXPECT_EQ(back.insns, insns);
    EXPECT_EQ(back.uops, uops);
    EXPECT_EQ(disasm_listing(back.insns, back.uops), listing);
  }
}

// Random bits in every field (valid enum values), zero elsewhere: decoding and re-encoding gives
// the same 128 bits, so the decoder reads every field and the encoder writes every field.
TEST(IsaRoundTrip, DecodeEncodeOverRandomFieldBits) {
  for (const auto& nc : test::test_configs()) {
    SCOPED_TRACE(nc.label);
    const IsaSpec spec(nc.cfg);
    std::mt19937_64 rng(99 + nc.cfg.log_acc_buff_size);
    for (int n = 0; n < kInsnsPerConfig; ++n) {
      const auto op = static_cast<uint32_t>(rng() % 5);
      const Format f = format_of(static_cast<Opcode>(op));
      EncodedInsn e;
      for (const auto& fs : spec.fields(f)) {
        uint64_t v = rng() & ((uint64_t{1} << fs.width) - 1);
        if (fs.name == "opcode") v = op;
        if (fs.name == "memory_type") v %= 6;
        if (fs.name == "alu_opcode") v %= 5;
        e.word[fs.lsb / 64] |= v << (fs.lsb % 64);
      }
      ASSERT_EQ(spec.encode(spec.decode(e)), e) << std::hex << e.word[1] << "_" << e.word[0];
    }
    for (int n = 0; n < 1000; ++n) {
      uint32_t bits = 0;
      for (const auto& fs : spec.fields(Format::kUop)) {
        bits |= static_cast<uint32_t>(rng() & ((uint64_t{1} << fs.width) - 1)) << fs.lsb;
      }
      ASSERT_EQ(spec.encode_uop(spec.decode_uop(bits)), bits);
    }
  }
}

// The maximum and minimum of every field survive encoding (catches off-by-one masks).
TEST(IsaRoundTrip, FieldExtremes) {
  for (const auto& nc : test::test_configs()) {
    SCOPED_TRACE(nc.label);
    const IsaSpec spec(nc.cfg);
    Instruction alu = make_alu(AluOp::kMul, 0, 0, 0, 0, 0, 0, 0, 0, true, -32768);
    EXPECT_EQ(spec.decode(spec.encode(alu)).imm, -32768);
    alu.imm = 32767;
    EXPECT_EQ(spec.decode(spec.encode(alu)).imm, 32767);
    alu.imm = -1;
    const uint32_t imm_lsb = spec.field(Format::kAlu, "imm").lsb;
    ASSERT_GE(imm_lsb, 64u);
    EXPECT_EQ((spec.encode(alu).word[1] >> (imm_lsb - 64)) & 0xffff, 0xffffu);  // two's complement
    const auto& end = spec.field(Format::kGemm, "uop_end");
    Instruction g = make_gemm(0, static_cast<uint32_t>(end.max_value()), 16383, 16383, 0, 0, 0, 0);
    EXPECT_EQ(spec.decode(spec.encode(g)), g);
  }
}

}  // namespace
}  // namespace tessel::isa
