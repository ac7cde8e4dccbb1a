// Errors of the config parser, the encoder/decoder, the assembler and the Program container:
// each must be a tessel::UserError (or IoError) whose message names the thing and the value.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>

#include "isa/asm.h"
#include "isa/program.h"
#include "isa/spec.h"
#include "support/error.h"

namespace tessel::isa {
namespace {

// Runs f, expects exception type E whose message contains every fragment.
template <typename E = UserError, typename F>
void expect_error(F&& f, std::initializer_list<std::string> fragments) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one containing '" << *fragments.begin() << "'";
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const auto& frag : fragments) EXPECT_NE(msg.find(frag), std::string::npos) << "message: " << msg << "\nmissing: " << frag;
  }
}

// ---------------------------------------------------------------- config
// Scratchpads are real SRAM that the simulators allocate, so every configuration validate()
// accepts must give bounded memory: over all BATCH / BLOCK_IN / BLOCK_OUT and every buffer size
// key up to its maximum (30), no accepted buffer exceeds 256 MiB (2^16 entries of at most the
// 4096-byte image alignment), and a larger one is rejected naming its key.
TEST(IsaConfigParse, EveryAcceptedScratchpadIsBounded) {
  uint64_t largest[4] = {0, 0, 0, 0};
  int accepted = 0;
  for (int lb = 0; lb <= 6; ++lb) {
    for (int bi = 0; bi <= 8; ++bi) {
      for (int bo = 0; bo <= 8; ++bo) {
        HwConfig base;
        base.log_batch = lb;
        base.log_block_in = bi;
        base.log_block_out = bo;
        // The smallest legal sizes (two entries each), so one key at a time can be varied.
        base.log_uop_buff_size = 3;
        base.log_inp_buff_size = lb + bi + 1;
        base.log_wgt_buff_size = bo + bi + 1;
        base.log_acc_buff_size = lb + bo + 3;
        int HwConfig::*keys[4] = {&HwConfig::log_uop_buff_size, &HwConfig::log_inp_buff_size,
                                  &HwConfig::log_wgt_buff_size, &HwConfig::log_acc_buff_size};
        for (int k = 0; k < 4; ++k) {
          for (int size = 0; size <= 30; ++size) {
            HwConfig c = base;
            c.*keys[k] = size;
            try {
              c.validate();
            } catch (const UserError&) {
              continue;
            }
            ++accepted;
            largest[k] = std::max(largest[k], uint64_t{1} << size);
          }
        }
      }
    }
  }
  EXPECT_GT(accepted, 1000);
  for (uint64_t b : largest) EXPECT_LE(b, uint64_t{256} << 20);
  EXPECT_EQ(largest[1], uint64_t{256} << 20);  // e.g. BATCH 16 x BLOCK_IN 256 x 2^16 entries
  expect_error([] { HwConfig::from_json(R"({"LOG_ACC_BUFF_SIZE": 30})"); }, {"LOG_ACC_BUFF_SIZE", "30"});
}

TEST(IsaConfigParse, VtaConfigFileAndExtensions) {
  const HwConfig c = HwConfig::from_json(R"({
    "TARGET": "sim", "HW_VER": "0.0.2",
    "LOG_INP_WIDTH": 3, "LOG_WGT_WIDTH": 3, "LOG_ACC_WIDTH": 5,
    "LOG_BATCH": 0, "LOG_BLOCK": 4,
    "LOG_UOP_BUFF_SIZE": 15, "LOG_INP_BUFF_SIZE": 15, "LOG_WGT_BUFF_SIZE": 18, "LOG_ACC_BUFF_SIZE": 17,
    "LOG_BUS_WIDTH": 7, "CLOCK_MHZ": 200, "DRAM_LATENCY": 40, "CMD_QUEUE_DEPTH": 64, "TOKEN_QUEUE_DEPTH": 8})");
  HwConfig want;
  want.log_bus_width = 7;
  want.clock_mhz = 200;
  want.dram_latency = 40;
  want.cmd_queue_depth = 64;
  want.token_queue_depth = 8;
  EXPECT_EQ(c, want);
  EXPECT_EQ(c.name(), "1x16_i8w8a32_15_15_18_17");
  // the label tells configs apart that VTA's name does not
  EXPECT_EQ(c.label(),
            "1x16_i8w8a32_15_15_18_17 (LOG_BUS_WIDTH=7, CLOCK_MHZ=200, DRAM_LATENCY=40, "
            "CMD_QUEUE_DEPTH=64, TOKEN_QUEUE_DEPTH=8)");
  EXPECT_EQ(HwConfig{}.label(), "1x16_i8w8a32_15_15_18_17");
  EXPECT_EQ(HwConfig::from_json(c.to_json()), c);
  EXPECT_EQ(HwConfig::from_json("{}"), HwConfig{});
}

TEST(IsaConfigParse, DerivedSizesAndNames) {
  const HwConfig d;
  EXPECT_EQ(d.inp_elem_bytes(), 16);
  EXPECT_EQ(d.wgt_elem_bytes(), 256);
  EXPECT_EQ(d.acc_elem_bytes(), 64);
  EXPECT_EQ(d.uop_depth(), 8192);
  EXPECT_EQ(d.inp_depth(), 2048);
  EXPECT_EQ(d.wgt_depth(), 1024);
  EXPECT_EQ(d.acc_depth(), 2048);
  EXPECT_EQ(d.macs_per_uop(), 256);
  const HwConfig b = HwConfig::from_json(R"({"LOG_BATCH": 1, "LOG_BLOCK_IN": 4, "LOG_BLOCK_OUT": 5,
      "LOG_WGT_BUFF_SIZE": 19, "LOG_ACC_BUFF_SIZE": 19})");
  EXPECT_EQ(b.name(), "2x16x32_i8w8a32_15_15_19_19");
  EXPECT_EQ(b.acc_depth(), 1 << (19 - 1 - 5 - 5 + 3));
}

TEST(IsaConfigParse, ToJsonIsStableAndComplete) {
  const std::string j = HwConfig{}.to_json();
  for (const char* key : {"LOG_INP_WIDTH", "LOG_WGT_WIDTH", "LOG_ACC_WIDTH", "LOG_BATCH", "LOG_BLOCK_IN",
                          "LOG_BLOCK_OUT", "LOG_UOP_BUFF_SIZE", "LOG_INP_BUFF_SIZE", "LOG_WGT_BUFF_SIZE",
                          "LOG_ACC_BUFF_SIZE", "LOG_BUS_WIDTH", "CLOCK_MHZ", "DRAM_LATENCY",
                          "CMD_QUEUE_DEPTH", "TOKEN_QUEUE_DEPTH"}) {
    EXPECT_NE(j.find(std::string("\"") + key + "\""), std::string::npos) << key;
  }
  EXPECT_LT(j.find("LOG_INP_WIDTH"), j.find("TOKEN_QUEUE_DEPTH"));
  EXPECT_EQ(j, HwConfig{}.to_json());
}

// Issue 7 F11: every numeric key has a range, checked when the configuration is read; a clock
// that makes every derived time infinite (a subnormal 1e-310 MHz) or enormous is an error.
TEST(IsaConfigErrors, EveryNumericKeyHasARange) {
  for (const char* clock : {"1e-310", "1e-300", "0.0009", "-1", "1000000.5", "1e300"}) {
    const std::string json = std::string(R"({"CLOCK_MHZ": )") + clock + "}";
    expect_error([&] { HwConfig::from_json(json); }, {"config key CLOCK_MHZ: ", "is out of range (a clock of 0.001 to 1000000 MHz)"});
  }
  EXPECT_EQ(HwConfig::from_json(R"({"CLOCK_MHZ": 0.001})").clock_mhz, 0.001);
  EXPECT_EQ(HwConfig::from_json(R"({"CLOCK_MHZ": 1000000})").clock_mhz, 1e6);
  const std::pair<const char*, const char*> outside[] = {
      {"LOG_BATCH", "7"},          {"LOG_BLOCK_IN", "9"},        {"LOG_BLOCK_OUT", "-1"},
      {"LOG_UOP_BUFF_SIZE", "31"}, {"LOG_INP_BUFF_SIZE", "-1"},  {"LOG_WGT_BUFF_SIZE", "31"},
      {"LOG_ACC_BUFF_SIZE", "31"}, {"LOG_BUS_WIDTH", "11"},      {"DRAM_LATENCY", "1000001"},
      {"CMD_QUEUE_DEPTH", "16777217"}, {"TOKEN_QUEUE_DEPTH", "16777217"}, {"LOG_BATCH", "4294967296"}};
  for (const auto& [key, value] : outside) {
    const std::string json = fmt::format(R"({{"{}": {}}})", key, value);
    expect_error([&] { HwConfig::from_json(json); }, {key, value});
  }
  EXPECT_EQ(HwConfig::from_json(R"({"DRAM_LATENCY": 1000000})").dram_latency, 1000000);
  EXPECT_EQ(HwConfig::from_json(R"({"TOKEN_QUEUE_DEPTH": 16777216})").token_queue_depth, 1 << 24);
}

TEST(IsaConfigErrors, NamedKeyAndValue) {
  expect_error([] { HwConfig::from_json(R"({"LOG_BLOK": 4})"); }, {"unknown key 'LOG_BLOK'"});
  // nlohmann keeps the last duplicate silently; the config rejects it by name.
  expect_error([] { HwConfig::from_json(R"({"LOG_BLOCK": 4, "LOG_BLOCK": 5})"); }, {"key 'LOG_BLOCK' is given twice"});
  expect_error<IoError>([] { HwConfig::from_file("/tmp"); }, {"/tmp", "is a directory"});
  expect_error([] { HwConfig::from_json(R"({"LOG_BATCH": "one"})"); }, {"LOG_BATCH", "expected an integer", "\"one\""});
  expect_error([] { HwConfig::from_json(R"({"LOG_BATCH": 0.5})"); }, {"LOG_BATCH", "expected an integer"});
  expect_error([] { HwConfig::from_json(R"({"LOG_INP_WIDTH": 4})"); }, {"LOG_INP_WIDTH", "4", "int8"});
  expect_error([] { HwConfig::from_json(R"({"LOG_WGT_WIDTH": 2})"); }, {"LOG_WGT_WIDTH", "2"});
  expect_error([] { HwConfig::from_json(R"({"LOG_ACC_WIDTH": 4})"); }, {"LOG_ACC_WIDTH", "4", "int32"});
  expect_error([] { HwConfig::from_json(R"({"LOG_BUS_WIDTH": 2})"); }, {"LOG_BUS_WIDTH", "2", "3..10"});
  expect_error([] { HwConfig::from_json(R"({"LOG_BUS_WIDTH": 11})"); }, {"LOG_BUS_WIDTH", "11"});
  expect_error([] { HwConfig::from_json(R"({"LOG_INP_BUFF_SIZE": 3})"); },
               {"LOG_INP_BUFF_SIZE", "8-byte buffer", "0 input element", "16 bytes"});
  expect_error([] { HwConfig::from_json(R"({"LOG_ACC_BUFF_SIZE": 6})"); },
               {"LOG_ACC_BUFF_SIZE", "64-byte buffer", "1 accumulator element", "at least 2"});
  expect_error([] { HwConfig::from_json(R"({"LOG_BATCH": -1})"); }, {"LOG_BATCH", "-1"});
  expect_error([] { HwConfig::from_json(R"({"CMD_QUEUE_DEPTH": 0})"); }, {"CMD_QUEUE_DEPTH", "0"});
  expect_error([] { HwConfig::from_json(R"({"TOKEN_QUEUE_DEPTH": 0})"); }, {"TOKEN_QUEUE_DEPTH", "0"});
  expect_error([] { HwConfig::from_json(R"({"CLOCK_MHZ": 0})"); }, {"CLOCK_MHZ", "0"});
  expect_error([] { HwConfig::from_json(R"({"CLOCK_MHZ": "fast"})"); }, {"CLOCK_MHZ", "expected a number"});
  expect_error([] { HwConfig::from_json(R"({"DRAM_LATENCY": -5})"); }, {"DRAM_LATENCY", "-5"});
  expect_error([] { HwConfig::from_json(R"({"LOG_BLOCK": 4, "LOG_BLOCK_IN": 3})"); },
               {"LOG_BLOCK 4 conflicts with LOG_BLOCK_IN 3"});
  expect_error([] { HwConfig::from_json(R"({"LOG_BLOCK": 7})"); }, {"exceeds the 4096-byte image alignment"});
  expect_error([] { HwConfig::from_json("{\"LOG_BATCH\": "); }, {"malformed JSON"});
  expect_error([] { HwConfig::from_json("[1, 2]"); }, {"expected a JSON object", "array"});
  expect_error([] { HwConfig::from_json(R"({"LOG_BATCH": 99999999999})"); }, {"LOG_BATCH", "99999999999"});
  // Found by fuzz_config: a number beyond a double made the JSON library throw out_of_range,
  // which escaped as a library exception; and an integer above INT64_MAX wrapped to -1.
  expect_error([] { HwConfig::from_json("111111122e1111"); }, {"malformed JSON", "too large for a double"});
  expect_error([] { HwConfig::from_json(R"({"CLOCK_MHZ": 1e400})"); }, {"malformed JSON", "too large"});
  expect_error([] { HwConfig::from_json(R"({"LOG_BATCH": 18446744073709551615})"); },
               {"LOG_BATCH", "18446744073709551615", "out of range"});
}

// Depths that no longer fit the 128-bit instruction (or the 32-bit micro-op) are rejected by
// validate(), naming the format and the field that overflows.
TEST(IsaConfigErrors, FieldsMustFitTheInstruction) {
  // LOG_BLOCK 3 with VTA's default buffer sizes: depths 4096/4096/4096; wgt_factor_in would
  // straddle bit 128, so it moves to bit 128 and overflows.
  expect_error([] { HwConfig::from_json(R"({"LOG_BLOCK": 3})"); },
               {"config 1x8_i8w8a32_15_15_18_17", "gemm field wgt_factor_in (12 bits) would occupy bits 128..139"});
  // INP depth 4096 with the default WGT depth: GEMM needs 130 bits.
  expect_error([] { HwConfig::from_json(R"({"LOG_INP_BUFF_SIZE": 16})"); },
               {"gemm field wgt_factor_in (10 bits) would occupy bits 128..137", "128-bit instruction"});
  // ACC depth 4096: the ALU word 1 needs 4 x 12 + 20 = 68 bits.
  expect_error([] { HwConfig::from_json(R"({"LOG_ACC_BUFF_SIZE": 18, "LOG_WGT_BUFF_SIZE": 16})"); },
               {"alu field imm"});
  // WGT depth 2048 with INP depth 1024: the instructions fit, the micro-op needs 33 bits.
  expect_error([] { HwConfig::from_json(R"({"LOG_WGT_BUFF_SIZE": 19, "LOG_INP_BUFF_SIZE": 14})"); },
               {"uop field wgt_idx (11 bits) would occupy bits 32..42, beyond the 32-bit micro-op"});
  // UOP depth 16384: GEMM word 0 overflows into word 1, and so on to bit 128.
  expect_error([] { HwConfig::from_json(R"({"LOG_UOP_BUFF_SIZE": 16})"); }, {"gemm field"});
  // Direct validate() on a struct edited by hand.
  HwConfig c;
  c.log_inp_buff_size = 31;
  expect_error([&] { c.validate(); }, {"LOG_INP_BUFF_SIZE", "31"});
  c = HwConfig{};
  c.log_inp_buff_size = 28;  // depth 2^24 > 65536 addressable by sram_base
  expect_error([&] { c.validate(); }, {"LOG_INP_BUFF_SIZE", "16-bit sram_base"});
  expect_error([&] { IsaSpec{c}; }, {"LOG_INP_BUFF_SIZE"});
}

TEST(IsaConfigErrors, FromFile) {
  expect_error<IoError>([] { HwConfig::from_file("/nonexistent/tessel.json"); }, {"/nonexistent/tessel.json"});
  const std::string path = ::testing::TempDir() + "tessel_bad_config.json";
  {
    std::ofstream out(path);
    out << R"({"LOG_BATCH": 0, "FOO": 1})";
  }
  expect_error([&] { HwConfig::from_file(path); }, {path, "unknown key 'FOO'"});
  {
    std::ofstream out(path);
    out << R"({"LOG_BLOCK": 3, "LOG_INP_BUFF_SIZE": 14, "LOG_WGT_BUFF_SIZE": 16, "LOG_ACC_BUFF_SIZE": 16})";
  }
  EXPECT_EQ(HwConfig::from_file(path).name(), "1x8_i8w8a32_15_14_16_16");
  std::remove(path.c_str());
}

// ---------------------------------------------------------------- encode / decode
TEST(IsaEncodeErrors, ValueDoesNotFitField) {
  const IsaSpec spec{HwConfig{}};
  expect_error([&] { spec.encode(make_mem(Opcode::kLoad, MemType::kInp, 70000, 0, 1, 1, 1)); },
               {"LOAD field sram_base: 70000 does not fit 16 bits (0..65535)"});
  expect_error([&] { spec.encode(make_mem(Opcode::kStore, MemType::kOut, 0, 0, 1, 1, 1, 16)); },
               {"STORE field y_pad_0: 16 does not fit 4 bits (0..15)"});
  expect_error([&] { spec.encode(make_gemm(0, 16384, 1, 1, 0, 0, 0, 0)); },
               {"GEMM field uop_end: 16384 does not fit 14 bits (0..16383)"});
  expect_error([&] { spec.encode(make_gemm(0, 1, 16384, 1, 0, 0, 0, 0)); }, {"GEMM field iter_out: 16384"});
  expect_error([&] { spec.encode(make_gemm(0, 1, 1, 1, 0, 0, 0, 0, 1024, 0)); },
               {"GEMM field wgt_factor_out: 1024 does not fit 10 bits (0..1023)"});
  expect_error([&] { spec.encode(make_alu(AluOp::kAdd, 0, 1, 1, 1, 0, 0, 0, 2048)); },
               {"ALU field src_factor_in: 2048 does not fit 11 bits (0..2047)"});
  expect_error([&] { spec.encode(make_alu(AluOp::kAdd, 0, 1, 1, 1, 0, 0, 0, 0, true, 32768)); },
               {"ALU field imm: 32768 does not fit 16 bits (-32768..32767)"});
  expect_error([&] { spec.encode(make_alu(AluOp::kAdd, 0, 1, 1, 1, 0, 0, 0, 0, true, -32769)); },
               {"ALU field imm: -32769"});
  expect_error([&] { spec.encode_uop(Uop{2048, 0, 0}); }, {"uop field dst_idx: 2048 does not fit 11 bits"});
  expect_error([&] { spec.encode_uop(Uop{0, 0, 1024}); }, {"uop field wgt_idx: 1024"});
  Instruction bad;
  bad.opcode = static_cast<Opcode>(6);
  expect_error([&] { spec.encode(bad); }, {"unknown opcode 6"});
  bad = make_mem(Opcode::kLoad, static_cast<MemType>(7), 0, 0, 1, 1, 1);
  expect_error([&] { spec.encode(bad); }, {"memory_type", "unknown memory type 7"});
  bad = make_alu(static_cast<AluOp>(5), 0, 1, 1, 1, 0, 0, 0, 0);
  expect_error([&] { spec.encode(bad); }, {"unknown ALU opcode 5"});
}

TEST(IsaDecodeErrors, UnknownCodes) {
  const IsaSpec spec{HwConfig{}};
  for (uint64_t op : {5, 6, 7}) {
    EncodedInsn e;
    e.word[0] = op;
    expect_error([&] { spec.decode(e); }, {fmt::format("unknown opcode {}", op)});
  }
  EncodedInsn mem;
  mem.word[0] = 0 | (6u << 7);  // LOAD, memory_type 6
  expect_error([&] { spec.decode(mem); }, {"LOAD", "unknown memory type 6"});
  mem.word[0] = 1 | (7u << 7);  // STORE, memory_type 7
  expect_error([&] { spec.decode(mem); }, {"STORE", "unknown memory type 7"});
  EncodedInsn alu;
  alu.word[0] = 4;
  alu.word[1] = uint64_t{5} << (108 - 64);
  expect_error([&] { spec.decode(alu); }, {"unknown ALU opcode 5"});
}

// ---------------------------------------------------------------- assembler
TEST(IsaAsmErrors, LineAndToken) {
  expect_error([] { parse_asm("FINISH\nGEM uop=0:1\n"); }, {"line 2: unknown mnemonic 'GEM'"});
  expect_error([] { parse_asm("LOAD FOO sram=0\n"); }, {"line 1: unknown memory type 'FOO'"});
  expect_error([] { parse_asm("LOAD\n"); }, {"line 1: LOAD needs a memory type"});
  expect_error([] { parse_asm("ALU NOP uop=0:1\n"); }, {"line 1: unknown ALU operation 'NOP'"});
  expect_error([] { parse_asm("\n\nGEMM uop=0:1 foo=3\n"); }, {"line 3: unknown key 'foo' for GEMM"});
  expect_error([] { parse_asm("GEMM uop=0:1 imm=3\n"); }, {"line 1: unknown key 'imm' for GEMM"});
  expect_error([] { parse_asm("LOAD INP sram=abc\n"); }, {"line 1: value 'abc' of 'sram'"});
  expect_error([] { parse_asm("LOAD INP sram=-1\n"); }, {"line 1: value '-1' of 'sram'"});
  expect_error([] { parse_asm("LOAD INP dram=4294967296\n"); }, {"value '4294967296' of 'dram'"});
  expect_error([] { parse_asm("LOAD INP sram=1 sram=2\n"); }, {"line 1: 'sram' given twice"});
  expect_error([] { parse_asm("LOAD INP sram\n"); }, {"'sram' needs a value"});
  expect_error([] { parse_asm("LOAD INP pad=1,2\n"); }, {"'pad=1,2' needs four values"});
  expect_error([] { parse_asm("GEMM iter=4\n"); }, {"'iter=4' needs two values: 'iter=OUT,IN'"});
  expect_error([] { parse_asm("GEMM uop=0,1\n"); }, {"'uop=0,1' needs two values: 'uop=BGN:END'"});
  expect_error([] { parse_asm("GEMM reset=1\n"); }, {"'reset' takes no value"});
  expect_error([] { parse_asm("FINISH deps=pop_prev|pull\n"); }, {"unknown dependency flag 'pull'"});
  expect_error([] { parse_asm("FINISH deps=pop_prev|pop_prev\n"); }, {"'pop_prev' given twice"});
  expect_error([] { parse_asm("ALU ADD imm=x\n"); }, {"value 'x' of 'imm'"});
  expect_error([] { parse_asm("ALU ADD use_imm=2\n"); }, {"use_imm is 0 or 1"});
  expect_error([] { parse_asm(".uop 1 2\n"); }, {"line 1: '.uop' needs three values"});
  expect_error([] { parse_asm(".uops 1 2 3\n"); }, {"unknown directive '.uops'"});
  // Field widths are checked by assemble(), still naming the line.
  expect_error([] { assemble("FINISH\nGEMM uop=0:20000\n", HwConfig{}); },
               {"line 2: GEMM field uop_end: 20000 does not fit 14 bits"});
  expect_error([] { assemble("\n.uop 4096 0 0\nFINISH\n", HwConfig{}); },
               {"line 2: uop field dst_idx: 4096 does not fit 11 bits"});
}

// ---------------------------------------------------------------- program
Program small_program() {
  Program p = assemble(".uop 1 2 3\nLOAD UOP sram=0 dram=0 y=1 x=1 stride=1\nFINISH\n", HwConfig{}, "p");
  p.add_segment("inp", SegmentKind::kInput, 16);
  return p;
}

TEST(IsaProgramErrors, TruncatedInputAtEveryLength) {
  const auto bytes = small_program().serialize();
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_THROW(Program::deserialize(cut), UserError) << "length " << n;
  }
  std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + 20);
  expect_error([&] { Program::deserialize(cut); }, {"truncated at byte 12 reading the config"});
}

TEST(IsaProgramErrors, Garbage) {
  auto bytes = small_program().serialize();
  expect_error([] { Program::deserialize(std::vector<uint8_t>{'h', 'e', 'l', 'l', 'o', '!', '!', '!', 0}); },
               {"does not start with 'TSLPROG'"});
  auto v2 = bytes;
  v2[7] = '2';
  expect_error([&] { Program::deserialize(v2); }, {"version '2' is not supported"});
  auto trailing = bytes;
  trailing.push_back(0);
  expect_error([&] { Program::deserialize(trailing); }, {"1 unexpected bytes after the image"});
  // A huge instruction count must not allocate or read past the end.
  auto huge = bytes;
  const size_t cfg_len = huge[8] | (huge[9] << 8) | (huge[10] << 16) | (huge[11] << 24);
  const size_t name_at = 12 + cfg_len;
  const size_t count_at = name_at + 4 + 1;  // name "p"
  huge[count_at] = huge[count_at + 1] = huge[count_at + 2] = huge[count_at + 3] = 0xff;
  expect_error([&] { Program::deserialize(huge); }, {"instruction count 4294967295"});
  // A corrupted instruction (opcode 7).
  auto badop = bytes;
  badop[count_at + 4] = 7;
  expect_error([&] { Program::deserialize(badop); }, {"insn 0", "unknown opcode 7"});
  // A corrupted config.
  auto badcfg = bytes;
  badcfg[12] = '[';
  expect_error([&] { Program::deserialize(badcfg); }, {"bad config"});
  // Random byte flips: either a Program or a UserError, never a crash.
  std::mt19937_64 rng(5);
  for (int i = 0; i < 2000; ++i) {
    auto f = bytes;
    f[rng() % f.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    try {
      (void)Program::deserialize(f);
    } catch (const UserError&) {
    }
  }
}

TEST(IsaProgramErrors, SegmentsAndRelocation) {
  Program p = small_program();
  expect_error([&] { (void)p.segment("weights"); }, {"program 'p' has no segment 'weights'", "uop, inp"});
  expect_error([&] { p.add_segment("inp", SegmentKind::kConst, 4); }, {"already has a segment 'inp'"});
  Program bad = p;
  bad.segments[1].offset_bytes = 100;
  expect_error([&] { (void)bad.serialize(); }, {"segment 'inp' offset 100 is not a multiple of 4096"});
  bad = p;
  bad.segments[1].size_bytes = 1 << 20;
  expect_error([&] { (void)bad.serialize(); }, {"segment 'inp'", "exceed the"});
  bad = p;
  bad.insns[0].sram_base = 1 << 20;
  expect_error([&] { (void)bad.serialize(); }, {"program 'p' insn 0", "sram_base"});
  const std::vector<Instruction> insns = {make_mem(Opcode::kLoad, MemType::kUop, 0, 0xfffffff0u, 1, 1, 1)};
  expect_error([&] { relocate(HwConfig{}, insns, 100); }, {"relocation base 100 is not a multiple of the 4096"});
  expect_error([&] { relocate(HwConfig{}, insns, 4096); },
               {"insn 0 (LOAD UOP): relocated dram_base 4294968304", "does not fit 32 bits"});
}

}  // namespace
}  // namespace tessel::isa
