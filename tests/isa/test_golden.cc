// Golden tests: hand-computed encodings (tests/golden/isa/encodings.txt) and the generated
// artefacts (hw/generated/*.sv, docs/isa.md), which must equal what the generator writes now.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "isa/asm.h"
#include "isa/gen/isagen.h"
#include "isa/spec.h"

namespace tessel::isa {
namespace {

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << p;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

uint64_t hex64(const std::string& s) { return std::stoull(s, nullptr, 16); }

TEST(IsaGolden, HandComputedEncodings) {
  const std::string text = read_text(std::filesystem::path(TESSEL_SOURCE_DIR) / "tests/golden/isa/encodings.txt");
  std::istringstream lines(text);
  std::string line;
  std::optional<IsaSpec> spec;
  int n_insn = 0, n_uop = 0, line_no = 0;
  while (std::getline(lines, line)) {
    ++line_no;
    SCOPED_TRACE(fmt::format("encodings.txt line {}: {}", line_no, line));
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("config ", 0) == 0) {
      spec.emplace(HwConfig::from_json(line.substr(7)));
      continue;
    }
    ASSERT_TRUE(spec.has_value()) << "no config line before the first encoding";
    const size_t arrow = line.find(" => ");
    ASSERT_NE(arrow, std::string::npos);
    const std::string asm_text = line.substr(0, arrow);
    const std::string hex = line.substr(arrow + 4);
    const AsmListing l = parse_asm(asm_text);
    if (asm_text.rfind(".uop", 0) == 0) {
      ASSERT_EQ(l.uops.size(), 1u);
      const auto want = static_cast<uint32_t>(hex64(hex));
      EXPECT_EQ(spec->encode_uop(l.uops[0]), want);
      EXPECT_EQ(spec->decode_uop(want), l.uops[0]);
      EXPECT_EQ(disasm(spec->decode_uop(want)), asm_text);
      ++n_uop;
      continue;
    }
    ASSERT_EQ(l.insns.size(), 1u);
    ASSERT_EQ(hex.size(), 33u);
    EncodedInsn want;
    want.word[1] = hex64(hex.substr(0, 16));
    want.word[0] = hex64(hex.substr(17, 16));
    const EncodedInsn got = spec->encode(l.insns[0]);
    EXPECT_EQ(got.word[1], want.word[1]) << std::hex << got.word[1];
    EXPECT_EQ(got.word[0], want.word[0]) << std::hex << got.word[0];
    EXPECT_EQ(disasm(spec->decode(want)), asm_text);
    uint8_t bytes[16];
    IsaSpec::to_bytes(want, bytes);
    EXPECT_EQ(bytes[0], want.word[0] & 0xff);
    EXPECT_EQ(bytes[15], want.word[1] >> 56);
    ++n_insn;
  }
  EXPECT_EQ(n_insn, 16);
  EXPECT_EQ(n_uop, 4);
}

TEST(IsaGolden, GeneratedFilesMatchCommittedOnes) {
  const std::filesystem::path tmp =
      std::filesystem::temp_directory_path() / fmt::format("tessel_isagen_{}", ::getpid());
  std::filesystem::remove_all(tmp);
  gen::write_all(HwConfig{}, tmp.string());
  const auto files = gen::generate_all(HwConfig{});
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].path, "hw/generated/tessel_isa_pkg_1x16_i8w8a32_15_15_18_17.sv");
  EXPECT_EQ(files[1].path, "docs/isa.md");
  for (const auto& f : files) {
    const std::string fresh = read_text(tmp / f.path);
    EXPECT_EQ(fresh, f.text) << f.path;
    EXPECT_EQ(read_text(std::filesystem::path(TESSEL_SOURCE_DIR) / f.path), fresh)
        << f.path << " is stale: regenerate with tessel-isagen --out <repository root>";
  }
  EXPECT_TRUE(gen::check_all(HwConfig{}, TESSEL_SOURCE_DIR).empty());
  EXPECT_EQ(gen::check_all(HwConfig{}, tmp.string() + "/nowhere").size(), 2u);
  std::filesystem::remove_all(tmp);
}

TEST(IsaGolden, SvPackageCarriesTheFieldPositions) {
  const IsaSpec spec{HwConfig::from_json(R"({"LOG_INP_BUFF_SIZE": 16, "LOG_WGT_BUFF_SIZE": 17})")};
  const std::string sv = gen::generate_sv_package(spec);
  EXPECT_NE(sv.find("localparam int GEMM_SRC_FACTOR_IN_LSB = 98;"), std::string::npos);
  EXPECT_NE(sv.find("localparam int GEMM_SRC_FACTOR_IN_WIDTH = 12;"), std::string::npos);
  EXPECT_NE(sv.find("localparam int GEMM_WGT_FACTOR_IN_MSB = 127;"), std::string::npos);
  EXPECT_NE(sv.find("localparam int INP_DEPTH = 4096;"), std::string::npos);
  EXPECT_NE(sv.find("logic signed [15:0] imm;  // [127:112]"), std::string::npos);
  EXPECT_NE(sv.find("localparam logic [2:0] MEM_ID_ACC_8BIT = 3'd5;"), std::string::npos);
  const std::string md = gen::generate_isa_doc(spec);
  EXPECT_NE(md.find("| [109:98] | src_factor_in | 12 |"), std::string::npos);
  EXPECT_NE(md.find("| INP | 1x16 int8 | 16 | 4096 | 12 | 65536 |"), std::string::npos);
}

}  // namespace
}  // namespace tessel::isa
