// Field-table layout of IsaSpec for several configurations, checked against positions derived by
// hand from VTA's struct order (include/vta/hw_spec.h) and the GCC bit-field packing rule.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "isa/spec.h"
#include "isa_test_util.h"

namespace tessel::isa {
namespace {

struct Pos {
  std::string name;
  uint32_t lsb, width;
};

void expect_layout(const IsaSpec& spec, Format f, const std::vector<Pos>& want) {
  const auto& got = spec.fields(f);
  ASSERT_EQ(got.size(), want.size()) << to_string(f);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].name, want[i].name) << to_string(f) << " field " << i;
    EXPECT_EQ(got[i].lsb, want[i].lsb) << to_string(f) << " " << want[i].name;
    EXPECT_EQ(got[i].width, want[i].width) << to_string(f) << " " << want[i].name;
  }
}

const std::vector<Pos> kHeader = {{"opcode", 0, 3}, {"pop_prev_dep", 3, 1}, {"pop_next_dep", 4, 1},
                                  {"push_prev_dep", 5, 1}, {"push_next_dep", 6, 1}};

std::vector<Pos> with_header(std::vector<Pos> rest) {
  std::vector<Pos> v = kHeader;
  v.insert(v.end(), rest.begin(), rest.end());
  return v;
}

TEST(IsaSpecLayout, DefaultMatchesReferenceTable) {
  const IsaSpec spec{HwConfig{}};
  expect_layout(spec, Format::kMem,
                with_header({{"memory_type", 7, 3}, {"sram_base", 10, 16}, {"dram_base", 26, 32},
                             {"y_size", 64, 16}, {"x_size", 80, 16}, {"x_stride", 96, 16},
                             {"y_pad_0", 112, 4}, {"y_pad_1", 116, 4}, {"x_pad_0", 120, 4},
                             {"x_pad_1", 124, 4}}));
  expect_layout(spec, Format::kGemm,
                with_header({{"reset_reg", 7, 1}, {"uop_bgn", 8, 13}, {"uop_end", 21, 14},
                             {"iter_out", 35, 14}, {"iter_in", 49, 14}, {"dst_factor_out", 64, 11},
                             {"dst_factor_in", 75, 11}, {"src_factor_out", 86, 11},
                             {"src_factor_in", 97, 11}, {"wgt_factor_out", 108, 10},
                             {"wgt_factor_in", 118, 10}}));
  expect_layout(spec, Format::kAlu,
                with_header({{"reset_reg", 7, 1}, {"uop_bgn", 8, 13}, {"uop_end", 21, 14},
                             {"iter_out", 35, 14}, {"iter_in", 49, 14}, {"dst_factor_out", 64, 11},
                             {"dst_factor_in", 75, 11}, {"src_factor_out", 86, 11},
                             {"src_factor_in", 97, 11}, {"alu_opcode", 108, 3}, {"use_imm", 111, 1},
                             {"imm", 112, 16}}));
  expect_layout(spec, Format::kFinish, kHeader);
  expect_layout(spec, Format::kUop, {{"dst_idx", 0, 11}, {"src_idx", 11, 11}, {"wgt_idx", 22, 10}});
  EXPECT_TRUE(spec.field(Format::kAlu, "imm").is_signed);
  EXPECT_EQ(spec.field(Format::kAlu, "imm").min_value(), -32768);
  EXPECT_EQ(spec.field(Format::kAlu, "imm").max_value(), 32767);
  EXPECT_EQ(spec.field(Format::kMem, "dram_base").max_value(), 4294967295);
}

// Batch 2 halves the INP and ACC depths (1024 rows): every GEMM/ALU factor and uop index
// narrows to 10 bits and the fields after them move down.
TEST(IsaSpecLayout, Batch2NarrowsAndMoves) {
  const IsaSpec spec{HwConfig::from_json(R"({"LOG_BATCH": 1})")};
  EXPECT_EQ(spec.config().inp_depth(), 1024);
  EXPECT_EQ(spec.config().acc_depth(), 1024);
  expect_layout(spec, Format::kGemm,
                with_header({{"reset_reg", 7, 1}, {"uop_bgn", 8, 13}, {"uop_end", 21, 14},
                             {"iter_out", 35, 14}, {"iter_in", 49, 14}, {"dst_factor_out", 64, 10},
                             {"dst_factor_in", 74, 10}, {"src_factor_out", 84, 10},
                             {"src_factor_in", 94, 10}, {"wgt_factor_out", 104, 10},
                             {"wgt_factor_in", 114, 10}}));
  expect_layout(spec, Format::kUop, {{"dst_idx", 0, 10}, {"src_idx", 10, 10}, {"wgt_idx", 20, 10}});
}

// INP depth 4096 and WGT depth 512: GEMM src factors widen to 12 bits, WGT factors narrow to 9
// and move; ALU src factors stay at the ACC width (VTAAluInsn uses VTA_LOG_ACC_BUFF_DEPTH).
TEST(IsaSpecLayout, WideInputWidensGemmSourceFactors) {
  const IsaSpec spec{HwConfig::from_json(R"({"LOG_INP_BUFF_SIZE": 16, "LOG_WGT_BUFF_SIZE": 17})")};
  expect_layout(spec, Format::kGemm,
                with_header({{"reset_reg", 7, 1}, {"uop_bgn", 8, 13}, {"uop_end", 21, 14},
                             {"iter_out", 35, 14}, {"iter_in", 49, 14}, {"dst_factor_out", 64, 11},
                             {"dst_factor_in", 75, 11}, {"src_factor_out", 86, 12},
                             {"src_factor_in", 98, 12}, {"wgt_factor_out", 110, 9},
                             {"wgt_factor_in", 119, 9}}));
  EXPECT_EQ(spec.field(Format::kAlu, "src_factor_out").width, 11u);
  EXPECT_EQ(spec.field(Format::kAlu, "alu_opcode").lsb, 108u);
  // VTAUop: src_idx has the ACC width even though GEMM uses it to index INP.
  expect_layout(spec, Format::kUop, {{"dst_idx", 0, 11}, {"src_idx", 11, 11}, {"wgt_idx", 22, 9}});
}

// A 128-byte uop buffer (32 uops): the loop fields shrink enough that dst_factor_out fits in the
// first 64-bit word, and dst_factor_in, which would straddle bit 64, starts at bit 64.
TEST(IsaSpecLayout, SmallUopBufferExercisesStraddleRule) {
  const IsaSpec spec{HwConfig::from_json(R"({"LOG_UOP_BUFF_SIZE": 7})")};
  expect_layout(spec, Format::kGemm,
                with_header({{"reset_reg", 7, 1}, {"uop_bgn", 8, 5}, {"uop_end", 13, 6},
                             {"iter_out", 19, 14}, {"iter_in", 33, 14}, {"dst_factor_out", 47, 11},
                             {"dst_factor_in", 64, 11}, {"src_factor_out", 75, 11},
                             {"src_factor_in", 86, 11}, {"wgt_factor_out", 97, 10},
                             {"wgt_factor_in", 107, 10}}));
  expect_layout(spec, Format::kAlu,
                with_header({{"reset_reg", 7, 1}, {"uop_bgn", 8, 5}, {"uop_end", 13, 6},
                             {"iter_out", 19, 14}, {"iter_in", 33, 14}, {"dst_factor_out", 47, 11},
                             {"dst_factor_in", 64, 11}, {"src_factor_out", 75, 11},
                             {"src_factor_in", 86, 11}, {"alu_opcode", 97, 3}, {"use_imm", 100, 1},
                             {"imm", 101, 16}}));
}

// Independent check of "every bit owned once" for every test config and format.
TEST(IsaSpecLayout, EveryBitOwnedOnceInEveryConfig) {
  for (const auto& nc : test::test_configs()) {
    const IsaSpec spec(nc.cfg);
    for (Format f : {Format::kMem, Format::kGemm, Format::kAlu, Format::kFinish, Format::kUop}) {
      std::set<uint32_t> used;
      uint32_t prev_end = 0;
      for (const auto& fs : spec.fields(f)) {
        EXPECT_GE(fs.lsb, prev_end) << nc.label << " " << fs.name << " is not in bit order";
        prev_end = fs.lsb + fs.width;
        EXPECT_EQ(fs.lsb / 64, fs.msb() / 64) << nc.label << " " << fs.name << " straddles a word";
        for (uint32_t b = fs.lsb; b <= fs.msb(); ++b) EXPECT_TRUE(used.insert(b).second) << nc.label << " bit " << b;
        EXPECT_FALSE(fs.doc.empty()) << fs.name;
      }
      EXPECT_LE(prev_end, format_bits(f)) << nc.label << " " << to_string(f);
    }
  }
}

TEST(IsaSpecLayout, FormatOfOpcode) {
  EXPECT_EQ(format_of(Opcode::kLoad), Format::kMem);
  EXPECT_EQ(format_of(Opcode::kStore), Format::kMem);
  EXPECT_EQ(format_of(Opcode::kGemm), Format::kGemm);
  EXPECT_EQ(format_of(Opcode::kAlu), Format::kAlu);
  EXPECT_EQ(format_of(Opcode::kFinish), Format::kFinish);
}

TEST(IsaSpecEncode, BytesAreLittleEndianWordZeroFirst) {
  EncodedInsn e;
  e.word[0] = 0x0807060504030201ull;
  e.word[1] = 0x100f0e0d0c0b0a09ull;
  uint8_t b[16];
  IsaSpec::to_bytes(e, b);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(b[i], i + 1);
  EXPECT_EQ(IsaSpec::from_bytes(b), e);
}

TEST(IsaSpecEncode, FinishIgnoresOtherFieldsAndDecodeIgnoresUnownedBits) {
  const IsaSpec spec{HwConfig{}};
  Instruction fin = make_finish(DepFlags{true, false, false, true});
  fin.sram_base = 77;  // not a FINISH field
  const EncodedInsn e = spec.encode(fin);
  EXPECT_EQ(e.word[0], 3u | (1u << 3) | (1u << 6));
  EXPECT_EQ(e.word[1], 0u);
  EncodedInsn dirty = e;
  dirty.word[1] = 0xdeadbeef;
  const Instruction d = spec.decode(dirty);
  EXPECT_EQ(d, make_finish(DepFlags{true, false, false, true}));
}

TEST(IsaSpecEncode, NoopsAndModules) {
  EXPECT_EQ(make_noop(Module::kLoad, {}).module(), Module::kLoad);
  EXPECT_EQ(make_noop(Module::kCompute, {}).module(), Module::kCompute);
  EXPECT_EQ(make_noop(Module::kStore, {}).module(), Module::kStore);
  EXPECT_EQ(make_noop(Module::kLoad, {}).mem_type, MemType::kInp);
  EXPECT_EQ(make_noop(Module::kCompute, {}).mem_type, MemType::kUop);
  EXPECT_EQ(make_noop(Module::kStore, {}).opcode, Opcode::kStore);
  EXPECT_EQ(make_noop(Module::kStore, {}).x_size, 0u);
  EXPECT_EQ(make_mem(Opcode::kLoad, MemType::kWgt, 0, 0, 1, 1, 1).module(), Module::kLoad);
  EXPECT_EQ(make_mem(Opcode::kLoad, MemType::kAcc, 0, 0, 1, 1, 1).module(), Module::kCompute);
  EXPECT_EQ(make_mem(Opcode::kLoad, MemType::kAcc8, 0, 0, 1, 1, 1).module(), Module::kCompute);
  EXPECT_EQ(make_mem(Opcode::kLoad, MemType::kOut, 0, 0, 1, 1, 1).module(), Module::kCompute);
  EXPECT_EQ(make_gemm(0, 1, 1, 1, 0, 0, 0, 0).module(), Module::kCompute);
  EXPECT_EQ(make_alu(AluOp::kAdd, 0, 1, 1, 1, 0, 0, 0, 0).module(), Module::kCompute);
  EXPECT_EQ(make_finish().module(), Module::kCompute);
}

TEST(IsaSpecEncode, TokenQueueRouting) {
  EXPECT_EQ(dep_pop_queue(Module::kLoad, true), std::nullopt);
  EXPECT_EQ(dep_pop_queue(Module::kLoad, false), TokenQueue::kG2L);
  EXPECT_EQ(dep_pop_queue(Module::kCompute, true), TokenQueue::kL2G);
  EXPECT_EQ(dep_pop_queue(Module::kCompute, false), TokenQueue::kS2G);
  EXPECT_EQ(dep_pop_queue(Module::kStore, true), TokenQueue::kG2S);
  EXPECT_EQ(dep_pop_queue(Module::kStore, false), std::nullopt);
  EXPECT_EQ(dep_push_queue(Module::kLoad, false), TokenQueue::kL2G);
  EXPECT_EQ(dep_push_queue(Module::kCompute, true), TokenQueue::kG2L);
  EXPECT_EQ(dep_push_queue(Module::kCompute, false), TokenQueue::kG2S);
  EXPECT_EQ(dep_push_queue(Module::kStore, true), TokenQueue::kS2G);
  EXPECT_EQ(dep_push_queue(Module::kStore, false), std::nullopt);
  EXPECT_EQ(token_queue_route(TokenQueue::kS2G), "store->compute");
}

TEST(IsaNames, EnumStrings) {
  EXPECT_EQ(to_string(Opcode::kAlu), "ALU");
  EXPECT_EQ(to_string(MemType::kAcc8), "ACC_8BIT");
  EXPECT_EQ(to_string(AluOp::kShr), "SHR");
  EXPECT_EQ(to_string(Module::kCompute), "compute");
  EXPECT_EQ(to_string(TokenQueue::kG2S), "g2s");
  EXPECT_EQ(to_string(static_cast<Opcode>(7)), "INVALID");
}

}  // namespace
}  // namespace tessel::isa
