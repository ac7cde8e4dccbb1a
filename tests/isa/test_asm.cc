// The assembler and disassembler: syntax, defaults, comments, hex, Program assembly.
#include <gtest/gtest.h>

#include "isa/asm.h"
#include "support/error.h"
#include "isa/spec.h"

namespace tessel::isa {
namespace {

TEST(IsaAsm, ParsesEveryFormWithCommentsAndDefaults) {
  const AsmListing l = parse_asm(R"(# a comment line
    load inp sram=0 dram=128 y=2 x=16 stride=16 pad=0,0,1,1 deps=pop_next|push_next   # trailing
    .uop 1 0x10 3

    GEMM uop=0:8 iter=4,2 dst=16,1 src=4,1 wgt=0,0 reset
    ALU shr imm=-3 uop=0:1 iter=1,1 dst=0,0 src=0,0
    ALU ADD uop=0:1 iter=1,1 dst=0,0 src=0,0 imm=5 use_imm=0
    STORE OUT sram=0 dram=0x20 y=1 x=16 stride=16 deps=pop_prev
    FINISH)");
  ASSERT_EQ(l.insns.size(), 6u);
  ASSERT_EQ(l.uops.size(), 1u);
  EXPECT_EQ(l.insn_lines, (std::vector<int>{2, 5, 6, 7, 8, 9}));
  EXPECT_EQ(l.uop_lines, (std::vector<int>{3}));
  EXPECT_EQ(l.uops[0], (Uop{1, 16, 3}));

  Instruction want = make_mem(Opcode::kLoad, MemType::kInp, 0, 128, 2, 16, 16, 0, 0, 1, 1);
  want.dep.pop_next = want.dep.push_next = true;
  EXPECT_EQ(l.insns[0], want);
  EXPECT_EQ(l.insns[1], make_gemm(0, 8, 4, 2, 16, 1, 4, 1, 0, 0, true));
  EXPECT_EQ(l.insns[2], make_alu(AluOp::kShr, 0, 1, 1, 1, 0, 0, 0, 0, true, -3));
  EXPECT_EQ(l.insns[3], make_alu(AluOp::kAdd, 0, 1, 1, 1, 0, 0, 0, 0, false, 5));
  Instruction st = make_mem(Opcode::kStore, MemType::kOut, 0, 32, 1, 16, 16);
  st.dep.pop_prev = true;
  EXPECT_EQ(l.insns[4], st);
  EXPECT_EQ(l.insns[5], make_finish());
}

TEST(IsaAsm, CanonicalTextRoundTrips) {
  const std::string text =
      ".uop 0 0 0\n"
      ".uop 1 1 1\n"
      "LOAD UOP sram=0 dram=0 y=1 x=2 stride=2\n"
      "LOAD INP sram=0 dram=128 y=2 x=16 stride=16 pad=0,0,1,1 deps=pop_next|push_next\n"
      "GEMM uop=0:2 iter=4,2 dst=16,1 src=4,1 wgt=0,0 deps=pop_prev|push_prev\n"
      "ALU SHR uop=0:2 iter=1,1 dst=0,0 src=0,0 imm=-3\n"
      "ALU MAX uop=0:2 iter=1,1 dst=0,0 src=0,0 imm=7 use_imm=0 reset\n"
      "STORE OUT sram=0 dram=0 y=1 x=16 stride=16 deps=pop_prev|push_prev\n"
      "FINISH deps=pop_prev|pop_next|push_prev|push_next\n";
  const AsmListing l = parse_asm(text);
  EXPECT_EQ(disasm_listing(l.insns, l.uops), text);
}

TEST(IsaAsm, NoopDisassembly) {
  EXPECT_EQ(disasm(make_noop(Module::kCompute, DepFlags{true, false, false, false})),
            "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev");
  EXPECT_EQ(disasm(make_noop(Module::kStore, DepFlags{false, false, true, false})),
            "STORE OUT sram=0 dram=0 y=0 x=0 stride=0 deps=push_prev");
  EXPECT_EQ(disasm(Uop{3, 4, 5}), ".uop 3 4 5");
}

TEST(IsaAsm, AssembleBuildsUopSegmentAndDisassembles) {
  const HwConfig cfg;
  const Program p = assemble(
      ".uop 1 2 3\n.uop 2047 2047 1023\nLOAD UOP sram=0 dram=0 y=1 x=2 stride=2\nFINISH\n", cfg, "k");
  EXPECT_EQ(p.name, "k");
  EXPECT_EQ(p.config, cfg);
  ASSERT_EQ(p.uops.size(), 2u);
  const Segment& s = p.segment("uop");
  EXPECT_EQ(s.offset_bytes, 0u);
  EXPECT_EQ(s.size_bytes, kImageAlign);
  EXPECT_EQ(s.kind, SegmentKind::kConst);
  ASSERT_EQ(p.image.size(), kImageAlign);
  // .uop 1 2 3 = 0x00c01001 (dst [10:0], src [21:11], wgt [31:22]), little-endian.
  EXPECT_EQ(p.image[0], 0x01);
  EXPECT_EQ(p.image[1], 0x10);
  EXPECT_EQ(p.image[2], 0xc0);
  EXPECT_EQ(p.image[3], 0x00);
  for (int b = 4; b < 8; ++b) EXPECT_EQ(p.image[b], 0xff);
  EXPECT_EQ(p.image[8], 0);
  const std::string text = disassemble(p);
  EXPECT_EQ(text,
            "# program 'k', config 1x16_i8w8a32_15_15_18_17, 2 instructions, 2 uops\n"
            ".name k\n"
            ".config {\"LOG_INP_WIDTH\":3,\"LOG_WGT_WIDTH\":3,\"LOG_ACC_WIDTH\":5,\"LOG_BATCH\":0,"
            "\"LOG_BLOCK_IN\":4,\"LOG_BLOCK_OUT\":4,\"LOG_UOP_BUFF_SIZE\":15,\"LOG_INP_BUFF_SIZE\":15,"
            "\"LOG_WGT_BUFF_SIZE\":18,\"LOG_ACC_BUFF_SIZE\":17,\"LOG_BUS_WIDTH\":6,\"CLOCK_MHZ\":100.0,"
            "\"DRAM_LATENCY\":32,\"CMD_QUEUE_DEPTH\":512,\"TOKEN_QUEUE_DEPTH\":1024}\n"
            ".uop 1 2 3\n.uop 2047 2047 1023\nLOAD UOP sram=0 dram=0 y=1 x=2 stride=2\nFINISH\n");
  const Program again = assemble(text, cfg, "k");
  EXPECT_EQ(again.insns, p.insns);
  EXPECT_EQ(again.uops, p.uops);
  EXPECT_EQ(again.image, p.image);
}

// disassemble() records the name and the full config (also keys the VTA name omits), so the text
// assembles back to the same serialised bytes whatever name and config the caller passes.
TEST(IsaAsm, DisassemblyRoundTripsNameAndConfig) {
  HwConfig cfg;
  cfg.log_bus_width = 7;
  cfg.dram_latency = 5;
  const Program p = assemble(".uop 0 0 0\nFINISH\n", cfg, "gemm_x");
  const std::string text = disassemble(p);
  const AsmListing l = parse_asm(text);
  ASSERT_TRUE(l.name);
  EXPECT_EQ(*l.name, "gemm_x");
  ASSERT_TRUE(l.config);
  EXPECT_EQ(*l.config, cfg);
  const Program again = assemble(text, *l.config, "other");
  EXPECT_EQ(again.serialize(), p.serialize());
  // The same text against a config that differs only outside the VTA name: the keys are named.
  try {
    (void)assemble(text, HwConfig{}, "other");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("LOG_BUS_WIDTH 7 vs 6, DRAM_LATENCY 5 vs 32"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(config_differences(cfg, cfg), "");
}

// Every name survives disassemble -> assemble byte for byte (fuzz_asm found the case the first
// version lost: a name with a byte that is not UTF-8 got no .name line, so the round trip gave the
// default name). Names with control bytes, NUL, a newline that would fake an instruction line
// (hostile review, issue 7), spaces, '#', backslashes, quotes, broken UTF-8 or nothing at all are
// written quoted; no raw control byte reaches the text.
TEST(IsaAsm, EveryNameRoundTripsAndControlBytesNeverReachTheText) {
  Program p = assemble(".uop 0 0 0\nFINISH\n", HwConfig{}, "x");
  for (const std::string& name :
       {std::string("a\0b\x1b[31m\n", 9), std::string("x\nFINISH GEMM"), std::string("two words"),
        std::string("back\\slash"), std::string("hash#tag"), std::string("'quoted'"), std::string("it's"),
        std::string("geO\xd1=pop_prev"), std::string(""), std::string("caf\xc3\xa9"), std::string("\\x41")}) {
    p.name = name;
    const std::string text = disassemble(p);
    for (const char c : text) {
      const auto u = static_cast<unsigned char>(c);
      EXPECT_TRUE(c == '\n' || (u >= 0x20 && u != 0x7f)) << int(u) << " in " << text;
    }
    EXPECT_EQ(text.find("\nFINISH GEMM"), std::string::npos) << text;
    const Program again = assemble(text, HwConfig{}, "fallback");
    EXPECT_EQ(again.name, name) << text;
    EXPECT_EQ(again.serialize(), p.serialize()) << text;
  }
  p.name = "two words";
  EXPECT_NE(disassemble(p).find("\n.name 'two\\x20words'\n"), std::string::npos) << disassemble(p);
  p.name = "plain_name-1.x";
  EXPECT_NE(disassemble(p).find("\n.name plain_name-1.x\n"), std::string::npos) << disassemble(p);
  p.name = "back\\slash";
  EXPECT_NE(disassemble(p).find("# program 'back\\\\slash'"), std::string::npos) << disassemble(p);
}

// A `.name` value that starts with a quote must be a whole quoted name.
TEST(IsaAsm, QuotedNameErrors) {
  EXPECT_EQ(*parse_asm(".name 'a\\x20b'\n").name, "a b");
  EXPECT_EQ(*parse_asm(".name ''\n").name, "");
  for (const char* bad : {".name 'open\n", ".name 'a'b'\n", ".name 'bad\\q'\n", ".name 'hex\\x4'\n", ".name '\n"}) {
    EXPECT_THROW(parse_asm(bad), UserError) << bad;
  }
}

// Unsigned fields take no sign (hostile review 4: "sram=-0 dram=+1" assembled); imm does.
TEST(IsaAsm, UnsignedFieldsTakeNoSign) {
  for (const char* bad : {"LOAD INP sram=-0 dram=0 y=1 x=1 stride=1\nFINISH\n",
                          "LOAD INP sram=0 dram=+1 y=1 x=1 stride=1\nFINISH\n", ".uop +0 0 0\nFINISH\n"}) {
    EXPECT_THROW(parse_asm(bad), UserError) << bad;
  }
  const AsmListing l = parse_asm("ALU ADD uop=0:1 iter=1,1 dst=0,0 src=0,0 imm=+3\nALU ADD uop=0:1 iter=1,1 dst=0,0 src=0,0 imm=-0\n");
  ASSERT_EQ(l.insns.size(), 2u);
  EXPECT_EQ(l.insns[0].imm, 3);
  EXPECT_EQ(l.insns[1].imm, 0);
}

TEST(IsaAsm, DirectiveErrorsAndByteOrderMark) {
  EXPECT_THROW(parse_asm(".name a\n.name b\nFINISH\n"), UserError);
  EXPECT_THROW(parse_asm(".name a b\n"), UserError);
  EXPECT_THROW(parse_asm(".config {}\n.config {}\n"), UserError);
  EXPECT_THROW(parse_asm(".config {\"LOG_BUS_WIDTH\": 99}\n"), UserError);
  const AsmListing l = parse_asm("\xEF\xBB\xBF" "FINISH\r\n");
  ASSERT_EQ(l.insns.size(), 1u);
  EXPECT_EQ(l.insns[0].opcode, Opcode::kFinish);
}

TEST(IsaAsm, EmptyUopTableStillHasSegment) {
  const Program p = assemble("FINISH\n", HwConfig{});
  EXPECT_EQ(p.segment("uop").size_bytes, 0u);
  EXPECT_TRUE(p.image.empty());
}

}  // namespace
}  // namespace tessel::isa
