// The Program container: segments, element sizes, relocation, serialisation round trip.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "isa/asm.h"
#include "isa/program.h"
#include "support/error.h"

namespace tessel::isa {
namespace {

Program sample_program() {
  Program p = assemble(
      ".uop 0 0 0\n.uop 1 1 1\n"
      "LOAD UOP sram=0 dram=0 y=1 x=2 stride=2\n"
      "LOAD INP sram=0 dram=256 y=2 x=4 stride=4 pad=1,0,0,1 deps=push_next\n"
      "GEMM uop=0:2 iter=1,1 dst=0,0 src=0,0 wgt=0,0 deps=pop_prev|push_next\n"
      "ALU SHR uop=0:1 iter=1,1 dst=0,0 src=0,0 imm=-4\n"
      "STORE OUT sram=0 dram=1024 y=1 x=1 stride=1 deps=pop_prev\n"
      "FINISH\n",
      HwConfig::from_json(R"({"LOG_BATCH": 1, "CLOCK_MHZ": 250.5})"), "layer 3");
  p.add_segment("inp", SegmentKind::kInput, 100);
  p.add_segment("out", SegmentKind::kOutput, 8192);
  // Scramble the data segments (not the micro-ops, which must match the table).
  for (size_t i = p.segment("inp").offset_bytes; i < p.image.size(); i += 7) p.image[i] ^= static_cast<uint8_t>(i * 13 + 1);
  return p;
}

TEST(IsaProgram, AddSegmentAlignsAndRounds) {
  Program p;
  EXPECT_EQ(p.add_segment("a", SegmentKind::kConst, 1), 0u);
  EXPECT_EQ(p.add_segment("b", SegmentKind::kScratch, 4096), 1u);
  EXPECT_EQ(p.add_segment("c", SegmentKind::kOutput, 4097), 2u);
  EXPECT_EQ(p.segment("a").offset_bytes, 0u);
  EXPECT_EQ(p.segment("a").size_bytes, 4096u);
  EXPECT_EQ(p.segment("b").offset_bytes, 4096u);
  EXPECT_EQ(p.segment("c").offset_bytes, 8192u);
  EXPECT_EQ(p.segment("c").size_bytes, 8192u);
  EXPECT_EQ(p.image.size(), 16384u);
  p.image.resize(16385);  // someone appended bytes by hand: the next segment is still aligned
  p.add_segment("d", SegmentKind::kConst, 0);
  EXPECT_EQ(p.segment("d").offset_bytes, 20480u);
}

TEST(IsaProgram, DramElementBytes) {
  const HwConfig def;
  EXPECT_EQ(dram_elem_bytes(def, MemType::kUop), 4u);
  EXPECT_EQ(dram_elem_bytes(def, MemType::kInp), 16u);
  EXPECT_EQ(dram_elem_bytes(def, MemType::kWgt), 256u);
  EXPECT_EQ(dram_elem_bytes(def, MemType::kAcc), 64u);
  EXPECT_EQ(dram_elem_bytes(def, MemType::kOut), 16u);
  EXPECT_EQ(dram_elem_bytes(def, MemType::kAcc8), 16u);
  const HwConfig b2 = HwConfig::from_json(R"({"LOG_BATCH": 1, "LOG_BLOCK": 3, "LOG_INP_BUFF_SIZE": 14,
      "LOG_WGT_BUFF_SIZE": 16, "LOG_ACC_BUFF_SIZE": 16})");
  EXPECT_EQ(dram_elem_bytes(b2, MemType::kInp), 16u);   // 2 x 8 int8
  EXPECT_EQ(dram_elem_bytes(b2, MemType::kWgt), 64u);   // 8 x 8 int8
  EXPECT_EQ(dram_elem_bytes(b2, MemType::kAcc), 64u);   // 2 x 8 int32
  EXPECT_EQ(dram_elem_bytes(b2, MemType::kAcc8), 16u);  // 2 x 8 int8
}

TEST(IsaProgram, RelocateMovesEveryMemoryInstructionByItsElementSize) {
  const HwConfig cfg;
  std::vector<Instruction> in = {
      make_mem(Opcode::kLoad, MemType::kUop, 0, 1, 1, 1, 1),
      make_mem(Opcode::kLoad, MemType::kWgt, 0, 2, 1, 1, 1),
      make_mem(Opcode::kLoad, MemType::kInp, 0, 3, 1, 1, 1),
      make_mem(Opcode::kLoad, MemType::kAcc, 0, 4, 1, 1, 1),
      make_mem(Opcode::kLoad, MemType::kAcc8, 0, 5, 1, 1, 1),
      make_mem(Opcode::kStore, MemType::kOut, 0, 6, 1, 1, 1),
      make_gemm(0, 1, 1, 1, 0, 0, 0, 0),
      make_finish(),
  };
  const auto out = relocate(cfg, in, 3 * 4096);
  EXPECT_EQ(out[0].dram_base, 1u + 12288 / 4);
  EXPECT_EQ(out[1].dram_base, 2u + 12288 / 256);
  EXPECT_EQ(out[2].dram_base, 3u + 12288 / 16);
  EXPECT_EQ(out[3].dram_base, 4u + 12288 / 64);
  EXPECT_EQ(out[4].dram_base, 5u + 12288 / 16);
  EXPECT_EQ(out[5].dram_base, 6u + 12288 / 16);
  EXPECT_EQ(out[6], in[6]);
  EXPECT_EQ(out[7], in[7]);
  EXPECT_EQ(relocate(cfg, in, 0), in);
}

TEST(IsaProgram, SerializeRoundTrip) {
  const Program p = sample_program();
  const auto bytes = p.serialize();
  ASSERT_GE(bytes.size(), 8u);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 8), "TSLPROG1");
  const Program q = Program::deserialize(bytes);
  EXPECT_EQ(q.config, p.config);
  EXPECT_EQ(q.name, p.name);
  EXPECT_EQ(q.insns, p.insns);
  EXPECT_EQ(q.uops, p.uops);
  EXPECT_EQ(q.segments, p.segments);
  EXPECT_EQ(q.image, p.image);
  EXPECT_EQ(q.serialize(), bytes);  // deterministic
}

TEST(IsaProgram, SerializeDropsFieldsOutsideTheFormat) {
  Program p = assemble("FINISH\n", HwConfig{});
  p.insns[0].sram_base = 12;  // meaningless for FINISH
  const Program q = Program::deserialize(p.serialize());
  EXPECT_EQ(q.insns[0], make_finish());
}

// The decoded micro-op table is what the tools show, the image's "uop" segment what the
// simulators run: a Program where they differ (hostile review 2, F4: a mutated table was shown by
// disasm while the simulators ran the image) does not serialise or deserialise.
TEST(IsaProgram, MicroOpTableMustMatchTheImage) {
  const Program p = assemble(".uop 1 2 3\n.uop 4 5 6\nFINISH\n", HwConfig{});
  const std::vector<uint8_t> good = p.serialize();
  EXPECT_EQ(Program::deserialize(good).uops.size(), 2u);
  auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const tessel::UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  Program table = p;
  table.uops[1].dst = 9;
  EXPECT_NE(message([&] { (void)table.serialize(); }).find("micro-op 1 of the table"), std::string::npos);
  // The same disagreement in a binary: one image word changed (the image is the last field of
  // the serialised form), the table left as it was.
  std::vector<uint8_t> bytes = good;
  bytes[bytes.size() - p.image.size() + p.segment("uop").offset_bytes + 4] ^= 1;
  EXPECT_NE(message([&] { (void)Program::deserialize(bytes); }).find("differs from word 1 of segment 'uop'"),
            std::string::npos);
  // A word after the table (hostile review 3: LOAD UOP x=2 of a 1-entry table ran a micro-op
  // disasm did not show, so disasm -> asm changed the result).
  Program hidden = p;
  hidden.image[hidden.segment("uop").offset_bytes + 8] = 0x41;
  EXPECT_NE(message([&] { (void)hidden.serialize(); })
                .find("segment 'uop' holds a non-zero byte at offset 8, after the 2 micro-ops of the table"),
            std::string::npos)
      << message([&] { (void)hidden.serialize(); });
  Program more = p;  // the segment holds kImageAlign bytes: 1024 micro-ops
  more.uops.resize(1025, more.uops[0]);
  EXPECT_NE(message([&] { (void)more.serialize(); }).find("holds 1025 micro-ops (4100 bytes) but segment 'uop' has 4096 bytes"),
            std::string::npos);
  Program none = p;
  none.segments.clear();
  EXPECT_NE(message([&] { (void)none.serialize(); }).find("no segment 'uop'"), std::string::npos);
}

}  // namespace
}  // namespace tessel::isa
