// Golden tests of the `tessel` command line: the assembler/disassembler round trip against a
// checked-in listing, and the report JSON / .npy / .tsx files of real runs.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "runtime/device.h"
#include "runtime/executable.h"
#include "support/file_read.h"
#include "support/npy.h"
#include "tools/report.h"

namespace tessel::tools::testing {
namespace {

const std::string kMnistInt8 = "models/onnx-zoo/mnist-12-int8.ort-qoperator.onnx";
const std::string kDigit0 = "data/reference/inputs/mnist_t10k_00000_f32_1x1x28x28.bin";

std::string read_text(const std::string& path) {
  const auto b = support::read_file_bounded(path, support::kMaxModelFileBytes, "a test output");
  return std::string(b.begin(), b.end());
}

std::vector<std::string> keys_of(const nlohmann::ordered_json& j) {
  std::vector<std::string> k;
  for (auto it = j.begin(); it != j.end(); ++it) k.push_back(it.key());
  return k;
}

// assemble -> disassemble gives the golden listing; assembling the listing gives the same bytes.
TEST(CliGolden, AsmDisasmRoundTrip) {
  const std::string src = "tests/golden/tools/gemm_tile.s";
  const std::string golden = "tests/golden/tools/gemm_tile.disasm";
  const std::string bin = temp_file("gemm_tile.bin"), bin2 = temp_file("gemm_tile2.bin");
  CliResult r = run_cli({"asm", src, "-o", bin});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli({"disasm", bin});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, read_text(std::string(TESSEL_SOURCE_DIR) + "/" + golden));
  r = run_cli({"asm", golden, "-o", bin2});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(support::read_file_bounded(bin, support::kMaxModelFileBytes, "a test output"), support::read_file_bounded(bin2, support::kMaxModelFileBytes, "a test output"));
}

// The golden program computes out[o] = 2*inp[o] + inp[0] for inp[k] = k - 8 (see gemm_tile.s):
// the same bytes on both simulators.
TEST(CliGolden, SimRunsTheProgramOnBothSimulators) {
  const std::string dir = std::string(TESSEL_SOURCE_DIR) + "/tests/golden/tools/";
  for (const std::string sim : {"fsim", "cycle"}) {
    const std::string out = temp_file("out_" + sim + ".bin");
    const CliResult r = run_cli({"sim", "tests/golden/tools/gemm_tile.s", "--sim", sim, "--segment",
                                 "inp=tests/golden/tools/gemm_tile_inp.bin", "--segment",
                                 "wgt=tests/golden/tools/gemm_tile_wgt.bin", "--alloc", "out=16",
                                 "--dump-segment", "out=" + out});
    ASSERT_EQ(r.exit_code, 0) << sim << ": " << r.err;
    EXPECT_NE(r.out.find("gemm_counter      1\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("out_store_nbytes  16\n"), std::string::npos) << r.out;
    if (sim == "cycle") {
      EXPECT_NE(r.out.find("module"), std::string::npos) << r.out;
    }
    const std::vector<uint8_t> bytes = support::read_file_bounded(out, support::kMaxModelFileBytes, "a test output");
    ASSERT_GE(bytes.size(), 16u);
    for (int o = 0; o < 16; ++o) {
      const int want = o == 0 ? -16 : 2 * (o - 8) - 8;
      EXPECT_EQ(static_cast<int8_t>(bytes[o]), want) << sim << " lane " << o;
    }
  }
}


// disasm emits .name and .config: asm of the listing alone (no flags, any file name) gives the
// same bytes; the binary runs with --segment/--alloc appending segments, like the text.
TEST(CliGolden, BinaryRoundTripAndSimFromTheBinary) {
  const std::string bin = temp_file("g.bin"), dis = temp_file("other_name.dis"), bin2 = temp_file("x.bin");
  ASSERT_EQ(run_cli({"asm", "tests/golden/tools/gemm_tile.s", "-o", bin}).exit_code, 0);
  CliResult r = run_cli({"disasm", bin});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  support::write_file_bytes(dis, std::vector<uint8_t>(r.out.begin(), r.out.end()));
  r = run_cli({"asm", dis, "-o", bin2});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(support::read_file_bounded(bin, support::kMaxModelFileBytes, "a test output"), support::read_file_bounded(bin2, support::kMaxModelFileBytes, "a test output"));
  const std::string out = temp_file("out.bin");
  r = run_cli({"sim", bin, "--segment", "inp=tests/golden/tools/gemm_tile_inp.bin", "--segment",
               "wgt=tests/golden/tools/gemm_tile_wgt.bin", "--alloc", "out=16", "--dump-segment", "out=" + out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<uint8_t> bytes = support::read_file_bounded(out, support::kMaxModelFileBytes, "a test output");
  ASSERT_GE(bytes.size(), 16u);
  for (int o = 0; o < 16; ++o) EXPECT_EQ(static_cast<int8_t>(bytes[o]), o == 0 ? -16 : 2 * (o - 8) - 8) << o;
}

const std::string kGemmTile = "tests/golden/tools/gemm_tile.s";
const std::vector<std::string> kGemmTileData = {"--segment", "inp=tests/golden/tools/gemm_tile_inp.bin",
                                                "--segment", "wgt=tests/golden/tools/gemm_tile_wgt.bin",
                                                "--alloc",   "out=16"};

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

bool have_kind(const std::string& kind) {
  const std::vector<std::string> k = runtime::Device::kinds();
  return std::find(k.begin(), k.end(), kind) != k.end();
}

// The line of `text` that starts with `prefix` ("" when there is none).
std::string line_starting(const std::string& text, const std::string& prefix) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    if (text.compare(pos, prefix.size(), prefix) == 0) return text.substr(pos, end - pos);
    pos = end + 1;
  }
  return "";
}

// DRAM_LATENCY is a run-time setting: a Program assembled for the default configuration (32) runs
// with --config's 0 and takes exactly the cycles of the same text assembled for DRAM_LATENCY 0
// (66 against 194 on the cycle model), with the same output bytes.
TEST(CliGolden, BinaryProgramRunsWithTheRunsDramLatency) {
  const std::string bin = temp_file("rt_gemm.bin"), lat0 = temp_file("rt_lat0.json");
  support::write_file_bytes(lat0, std::vector<uint8_t>{'{', '"', 'D', 'R', 'A', 'M', '_', 'L', 'A', 'T', 'E', 'N',
                                                       'C', 'Y', '"', ':', ' ', '0', '}'});
  ASSERT_EQ(run_cli({"asm", kGemmTile, "-o", bin}).exit_code, 0);
  const CliResult base = run_cli(concat({"sim", bin, "--sim", "cycle"}, kGemmTileData));
  const CliResult reused = run_cli(concat({"sim", bin, "--sim", "cycle", "--config", lat0}, kGemmTileData));
  const CliResult direct = run_cli(concat({"sim", kGemmTile, "--sim", "cycle", "--config", lat0}, kGemmTileData));
  for (const CliResult* r : {&base, &reused, &direct}) ASSERT_EQ(r->exit_code, 0) << r->err;
  EXPECT_EQ(line_starting(base.out, "cycles "), "cycles    194 (1.940 us at 100 MHz)");
  EXPECT_EQ(line_starting(reused.out, "cycles "), "cycles    66 (0.660 us at 100 MHz)");
  EXPECT_EQ(line_starting(direct.out, "cycles "), line_starting(reused.out, "cycles "));
  EXPECT_EQ(line_starting(reused.out, "config "), "config    1x16_i8w8a32_15_15_18_17 (DRAM_LATENCY=0)");
  EXPECT_EQ(line_starting(reused.out, "segment out "), line_starting(base.out, "segment out "));
  // The text with its own .config (disasm) and --config: the run-time settings are --config's.
  const CliResult dis = run_cli({"disasm", bin});
  ASSERT_EQ(dis.exit_code, 0);
  const std::string text = temp_file("rt_gemm.s");
  support::write_file_bytes(text, std::vector<uint8_t>(dis.out.begin(), dis.out.end()));
  const CliResult from_text = run_cli(concat({"sim", text, "--sim", "cycle", "--config", lat0}, kGemmTileData));
  ASSERT_EQ(from_text.exit_code, 0) << from_text.err;
  EXPECT_EQ(line_starting(from_text.out, "cycles "), "cycles    66 (0.660 us at 100 MHz)");
}

// An Executable compiled for the default configuration runs with --config's DRAM_LATENCY 0: every
// offloaded layer takes fewer cycles, the outputs are unchanged, the report names the run's config.
TEST(CliGolden, ExecutableRunsWithTheRunsDramLatency) {
  const std::string tsx = temp_file("rt.tsx"), lat0 = temp_file("rt_lat0_exe.json"), r32 = temp_file("rt32.json"),
                    r0 = temp_file("rt0.json");
  const std::string lat0_text = "{\"DRAM_LATENCY\": 0}";
  support::write_file_bytes(lat0, std::vector<uint8_t>(lat0_text.begin(), lat0_text.end()));
  ASSERT_EQ(run_cli({"compile", kMnistInt8, "-o", tsx}).exit_code, 0);
  CliResult r = run_cli({"run", tsx, "--input", kDigit0, "--sim", "cycle", "--report-json", r32});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli({"run", tsx, "--input", kDigit0, "--sim", "cycle", "--config", lat0, "--report-json", r0});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json a = nlohmann::json::parse(read_text(r32)), b = nlohmann::json::parse(read_text(r0));
  EXPECT_EQ(a["config"], "1x16_i8w8a32_15_15_18_17");
  EXPECT_EQ(b["config"], "1x16_i8w8a32_15_15_18_17 (DRAM_LATENCY=0)");
  EXPECT_EQ(b["outputs_match_fsim"], true);
  EXPECT_EQ(b["outputs"][0]["top"], a["outputs"][0]["top"]);
  ASSERT_EQ(a["layers"].size(), b["layers"].size());
  int accel = 0;
  for (size_t i = 0; i < a["layers"].size(); ++i) {
    if (a["layers"][i]["placement"] != "accel") continue;
    ++accel;
    EXPECT_LT(b["layers"][i]["cycles"].get<uint64_t>(), a["layers"][i]["cycles"].get<uint64_t>()) << i;
    EXPECT_EQ(b["layers"][i]["dram_bytes"], a["layers"][i]["dram_bytes"]) << i;  // the same Programs
  }
  EXPECT_GE(accel, 2);
}

// --help offers exactly the simulators of this build (runtime::Device::kinds()).
TEST(CliGolden, HelpOffersTheBuiltSimulators) {
  const std::vector<std::string> kinds = runtime::Device::kinds();
  std::string all = "{", timed = "{";
  for (const std::string& k : kinds) {
    all += (all.size() > 1 ? "," : "") + k;
    if (k != "fsim") timed += (timed.size() > 1 ? "," : "") + k;
  }
  all += "}";
  timed += "}";
  for (const std::string cmd : {"run", "sim"}) {
    const CliResult r = run_cli({cmd, "--help"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const size_t at = r.out.find("--sim TEXT:" + all + "=fsim");
    ASSERT_NE(at, std::string::npos) << r.out;
    // The option's entry runs to the next option; its description names only the built kinds.
    const std::string entry = r.out.substr(at, r.out.find("\n  -", at) - at);
    EXPECT_EQ(entry.find("rtl") != std::string::npos, have_kind("rtl")) << entry;
    EXPECT_NE(entry.find("fsim (functional)"), std::string::npos) << entry;
  }
  const CliResult r = run_cli({"simcmp", "--help"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("--a TEXT:" + timed + "=cycle"), std::string::npos) << r.out;
  // --b defaults to rtl when this build has it, else to cycle (a self-comparison).
  EXPECT_NE(r.out.find("--b TEXT:" + timed + (have_kind("rtl") ? "=rtl" : "=cycle")), std::string::npos) << r.out;
}

// rtl: a --wave-cycles window after the run's last cycle dumps nothing and says so on stderr
// (exit 0); a window inside the run gives no warning. The statistics rtl does not derive print "-".
TEST(CliGolden, RtlWaveWindowAfterTheRunWarns) {
  if (!have_kind("rtl")) GTEST_SKIP() << "this build has no rtl simulator";
  const std::string fst = temp_file("late.fst");
  CliResult r = run_cli(concat({"sim", kGemmTile, "--sim", "rtl", "--wave", fst, "--wave-cycles", "100000:200000"},
                               kGemmTileData));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "warning: --wave-cycles 100000:200000 starts after the run's last cycle 194: nothing was dumped (" +
                       fst + " holds no cycles; the run has cycles 0..194)\n");
  EXPECT_EQ(line_starting(r.out, "cycles "), "cycles    194 (1.940 us at 100 MHz)");
  r = run_cli(concat({"sim", kGemmTile, "--sim", "rtl", "--wave", fst, "--wave-cycles", "194:"}, kGemmTileData));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");  // cycle 194 (done) is clocked and dumped
  // The module table: instructions per module (fetch: dispatches); "-" for the rest (fetch's busy
  // cycles, beats + dispatches, are the cycle model's).
  EXPECT_EQ(line_starting(r.out, "fetch "), "fetch           7            -            -            -            -");
  EXPECT_EQ(line_starting(r.out, "load "), "load            2            -            -            -            -");
  EXPECT_EQ(line_starting(r.out, "compute "), "compute         4            -            -            -            -");
  EXPECT_EQ(line_starting(r.out, "store "), "store           1            -            -            -            -");
  EXPECT_NE(r.out.find("(rtl derives the instructions per module (fetch: dispatches) only"), std::string::npos)
      << r.out;
  // The cycle model derives every column: no "-".
  r = run_cli(concat({"sim", kGemmTile, "--sim", "cycle"}, kGemmTileData));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(line_starting(r.out, "load ").find('-'), std::string::npos) << r.out;
}

// FINISH alone is a legal program: it runs and does no work.
TEST(CliGolden, FinishOnlyProgramRuns) {
  const std::string src = temp_file("only.s");
  const std::string text = "\xEF\xBB\xBF" "FINISH\r\n";  // with a UTF-8 byte order mark and CRLF
  support::write_file_bytes(src, std::vector<uint8_t>(text.begin(), text.end()));
  const CliResult r = run_cli({"sim", src});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("insn_count        1\n"), std::string::npos) << r.out;
}

// An executable from `tessel compile` runs; the float comparison only with --reference.
TEST(CliGolden, RunsACompiledExecutable) {
  const std::string tsx = temp_file("m.tsx"), rep = temp_file("r.json");
  ASSERT_EQ(run_cli({"compile", kMnistInt8, "-o", tsx}).exit_code, 0);
  CliResult r = run_cli({"run", tsx, "--input", kDigit0, "--report-json", rep});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("no float reference comparison"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1. class    7"), std::string::npos) << r.out;
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(read_text(rep));
  EXPECT_EQ(j["executable"], true);
  EXPECT_TRUE(j["outputs"][0]["error_vs_reference"].is_null());
  r = run_cli({"run", tsx, "--input", kDigit0, "--reference", kMnistInt8, "--report-json", rep});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::ordered_json::parse(read_text(rep));
  EXPECT_EQ(j["outputs"][0]["error_vs_reference"]["top1_agree"], true);
  EXPECT_EQ(j["outputs"][0]["error_vs_reference"]["reference_top1"], 7);
}

// `tessel compile --dump-ir list` (and `tessel run --dump-ir list`): the pass registry in order
// (graph, driver, tir, backend, loop-ir) with levels and summaries, byte for byte.
TEST(CliGolden, DumpIrListIsThePassRegistry) {
  const std::string golden = read_text(std::string(TESSEL_SOURCE_DIR) + "/tests/golden/tools/dump_ir_list.golden");
  const CliResult c = run_cli({"compile", kMnistInt8, "--dump-ir", "list"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.out, golden);
  const CliResult r = run_cli({"run", kMnistInt8, "--dump-ir", "list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, golden);
}

// --dump-ir abbreviates per-channel arrays (kws01 has 64 channels): "first 8 values,... (64
// values)" instead of 64 values, so no line is kilobytes long.
TEST(CliGolden, DumpIrAbbreviatesLongPerChannelArrays) {
  const CliResult r = run_cli({"compile", "models/mlperf-tiny/kws01_dscnn_int8_qdq.onnx", "-o", temp_file("k.tsx"),
                               "--dump-ir", "placement"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("zp=[0,0,0,0,0,0,0,0,... (64 values)]"), std::string::npos) << r.out.substr(0, 2000);
  size_t longest = 0, start = 0;
  while (start < r.out.size()) {
    size_t end = r.out.find('\n', start);
    if (end == std::string::npos) end = r.out.size();
    longest = std::max(longest, end - start);
    start = end + 1;
  }
  EXPECT_LT(longest, 1000u);
}

TEST(CliGolden, ReportJsonSchemaAndValues) {
  const std::string report = temp_file("report.json"), npy = temp_file("out.npy");
  const CliResult r = run_cli({"run", kMnistInt8, "--input", kDigit0, "--sim", "cycle", "--report-json", report,
                               "--output", npy});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("top-5"), std::string::npos) << r.out;
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(read_text(report));
  EXPECT_EQ(keys_of(j), (std::vector<std::string>{"tessel_report_version", "model", "inputs", "simulator",
                                                   "config", "clock_mhz", "macs_per_uop", "offload",
                                                   "quantized_by_tessel", "requant_mode", "calibration", "executable",
                                                   "reference_model", "compile_ms", "outputs_match_fsim", "cpu_cycles_source", "outputs", "layers", "totals",
                                                   "sim_speed"}));
  EXPECT_EQ(j["simulator"], "cycle");
  EXPECT_EQ(j["config"], "1x16_i8w8a32_15_15_18_17");
  EXPECT_EQ(j["macs_per_uop"], 256);
  EXPECT_EQ(j["quantized_by_tessel"], false);
  EXPECT_EQ(j["requant_mode"], "exact");
  EXPECT_TRUE(j["calibration"].is_null());
  EXPECT_EQ(j["outputs_match_fsim"], true);
  const auto& out = j["outputs"][0];
  EXPECT_EQ(keys_of(out), (std::vector<std::string>{"name", "shape", "classifier", "top", "error_vs_reference"}));
  EXPECT_EQ(out["shape"], nlohmann::json::array({1, 10}));
  EXPECT_EQ(out["top"].size(), 5u);
  EXPECT_EQ(keys_of(out["top"][0]), (std::vector<std::string>{"index", "value", "label"}));
  EXPECT_EQ(out["top"][0]["index"], 7);
  EXPECT_EQ(out["top"][0]["label"], "7");
  EXPECT_EQ(keys_of(out["error_vs_reference"]),
            (std::vector<std::string>{"max_abs_error", "snr_db", "non_finite", "top1_agree", "reference_top1"}));
  EXPECT_EQ(out["error_vs_reference"]["top1_agree"], true);
  EXPECT_EQ(out["error_vs_reference"]["reference_top1"], 7);
  ASSERT_FALSE(j["layers"].empty());
  int accel = 0;
  for (const auto& l : j["layers"]) {
    EXPECT_EQ(keys_of(l), (std::vector<std::string>{"step", "name", "op", "in_shape", "out_shape", "placement",
                                                     "placement_reason", "cycles", "macs", "gemm_uops", "gemm_utilisation",
                                                     "dram_bytes", "cpu_us", "cpu_cycles", "speedup"}));
    if (l["placement"] == "accel") {
      ++accel;
      EXPECT_GT(l["cycles"].get<uint64_t>(), 0u);
      EXPECT_GT(l["macs"].get<int64_t>(), 0);
      EXPECT_GT(l["dram_bytes"].get<uint64_t>(), 0u);
      EXPECT_GT(l["gemm_uops"].get<uint64_t>(), 0u);
      const double util = l["gemm_utilisation"].get<double>();
      EXPECT_GT(util, 0.0);
      EXPECT_LE(util, 1.0);
      EXPECT_TRUE(l["speedup"].is_number());
    }
  }
  EXPECT_GE(accel, 2);  // mnist-12's two convolutions (and its dense layer) are offloaded
  EXPECT_EQ(keys_of(j["totals"]),
            (std::vector<std::string>{"accel_layers", "cpu_layers", "cycles", "accel_us", "macs", "accel_macs",
                                      "gemm_utilisation", "dram_bytes", "accel_cpu_us", "cpu_layers_us",
                                      "other_steps_us", "cpu_cycles", "speedup"}));
  EXPECT_EQ(j["totals"]["accel_layers"], accel);
  EXPECT_EQ(keys_of(j["sim_speed"]),
            (std::vector<std::string>{"wall_seconds", "cycles", "insns", "cycles_per_second", "insns_per_second"}));
  EXPECT_EQ(j["sim_speed"]["cycles"], j["totals"]["cycles"]);
  EXPECT_TRUE(j["sim_speed"]["cycles_per_second"].is_number());

  const support::FloatTensor t = support::read_npy(npy);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{1, 10}));
  EXPECT_EQ(t.data[7], out["top"][0]["value"].get<float>());
}

// Two runs give the same report once the host-time measurements are removed (docs/usage.md).
TEST(CliGolden, ReportIsDeterministicApartFromHostTimes) {
  std::vector<nlohmann::json> reports;
  for (const std::string name : {"det1.json", "det2.json"}) {
    const std::string path = temp_file(name);
    const CliResult r = run_cli({"run", "models/mlperf-tiny/kws01_dscnn_int8_qdq.onnx", "--input",
                                 "data/reference/inputs/kws_sample6_f32_1x1x49x10.bin", "--sim", "cycle",
                                 "--report-json", path});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    nlohmann::json j = nlohmann::json::parse(read_text(path));
    j.erase("compile_ms");
    for (auto& l : j["layers"]) {
      for (const char* k : {"cpu_us", "cpu_cycles", "speedup"}) l.erase(k);
    }
    for (const char* k : {"accel_cpu_us", "cpu_layers_us", "other_steps_us", "cpu_cycles", "speedup"}) {
      j["totals"].erase(k);
    }
    for (const char* k : {"wall_seconds", "cycles_per_second", "insns_per_second"}) j["sim_speed"].erase(k);
    reports.push_back(j);
  }
  EXPECT_EQ(reports[0], reports[1]);
  EXPECT_GT(reports[0]["totals"]["cycles"].get<uint64_t>(), 0u);
  EXPECT_EQ(reports[0]["outputs"][0]["top"][0]["label"], "right");
}

TEST(CliGolden, FloatModelSaysItCalibratesOnTheRunInput) {
  const std::string report = temp_file("report_f32.json");
  const CliResult r = run_cli({"run", "models/onnx-zoo/mnist-12.onnx", "--input", kDigit0, "--report-json", report});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("calibrated on the run input itself (no --calib given)"), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(read_text(report));
  EXPECT_EQ(j["quantized_by_tessel"], true);
  EXPECT_EQ(j["simulator"], "fsim");
  // fsim has no timing: cycle figures are null (docs/usage.md), not 0.
  EXPECT_TRUE(j["totals"]["cycles"].is_null());
  EXPECT_TRUE(j["totals"]["accel_us"].is_null());
  EXPECT_TRUE(j["sim_speed"]["cycles"].is_null());
  EXPECT_TRUE(j["outputs_match_fsim"].is_null());
  for (const auto& l : j["layers"]) EXPECT_TRUE(l["cycles"].is_null());
  EXPECT_TRUE(j["sim_speed"]["cycles_per_second"].is_null());
  EXPECT_EQ(j["outputs"][0]["top"][0]["index"], 7);
}

TEST(CliGolden, CompileWritesALoadableExecutable) {
  const std::string tsx = temp_file("mnist.tsx"), tsx2 = temp_file("mnist2.tsx");
  CliResult r = run_cli({"compile", kMnistInt8, "-o", tsx});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli({"compile", kMnistInt8, "-o", tsx2});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(support::read_file_bounded(tsx, support::kMaxModelFileBytes, "a test output"), support::read_file_bounded(tsx2, support::kMaxModelFileBytes, "a test output"));
  const runtime::Executable exe = runtime::Executable::load(tsx);
  EXPECT_EQ(exe.inputs.size(), 1u);
  EXPECT_EQ(exe.outputs.size(), 1u);
  EXPECT_FALSE(exe.programs.empty());
  r = run_cli({"compile", "models/onnx-zoo/mnist-12.onnx", "-o", tsx});
  EXPECT_EQ(r.exit_code, 1);  // a float model needs --calib
  r = run_cli({"compile", "models/onnx-zoo/mnist-12.onnx", "-o", tsx, "--calib",
               "data/mnist/t10k_first16_u8_16x28x28.bin"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("quantised by tessel"), std::string::npos) << r.out;
}

// The human-readable report of a fixed RunReport, against tests/golden/tools/report_text.golden.
TEST(CliGolden, ReportTextRendering) {
  RunReport r;
  r.model = "models/example.onnx";
  r.inputs = {"data/example_f32_1x3x8x8.bin"};
  r.simulator = "cycle";
  r.config_name = "1x16_i8w8a32_15_15_18_17";
  r.clock_mhz = 100;
  r.macs_per_uop = 256;
  r.quantized_by_tessel = true;
  r.calibration = "the run input itself (no --calib given)";
  r.requant_mode = "exact";
  r.compile_ms = 12.25;
  r.cpu_cycles_source = "tsc_ticks";
  OutputReport o;
  o.name = "logits";
  o.shape = {1, 4};
  o.classifier = true;
  o.top = {{2, 3.5f, "cat"}, {0, 1.25f, "dog"}, {3, -0.5f, ""}, {1, -2.0f, "fish"}};
  o.error = compute_error({1.25f, -2.0f, 3.5f, -0.5f}, {1.0f, -2.0f, 3.5f, -0.25f}, 4);
  r.outputs = {o};
  LayerRow conv;
  conv.step = 2;
  conv.name = "a_very_long_convolution_layer_name_from_onnx";
  conv.op = "Conv+Relu";
  conv.in_shape = {1, 3, 8, 8};
  conv.out_shape = {1, 16, 8, 8};
  conv.placement = "accel";
  conv.cycles = 12000;
  conv.macs = 27648;
  conv.gemm_uops = 192;
  conv.gemm_utilisation = gemm_utilisation(conv.macs, conv.cycles, 256);
  conv.dram_bytes = 20480;
  conv.cpu_us = 30.5;
  conv.cpu_cycles = 79300;
  conv.speedup = speedup(30.5e-6, conv.cycles, 100);
  LayerRow pool;
  pool.step = 4;
  pool.name = "pool";
  pool.op = "MaxPool";
  pool.in_shape = {1, 16, 8, 8};
  pool.out_shape = {1, 16, 4, 4};
  pool.placement = "cpu";
  pool.cpu_us = 1.5;
  pool.cpu_cycles = 3900;
  r.layers = {conv, pool};
  r.totals.other_steps_us = 0.75;
  compute_totals(r);
  r.sim.wall_seconds = 0.002;
  r.sim.cycles = 12000;
  r.sim.insns = 40;
  r.sim.cycles_per_second = 6e6;
  r.sim.insns_per_second = 20000;
  EXPECT_EQ(render_text(r), read_text(std::string(TESSEL_SOURCE_DIR) + "/tests/golden/tools/report_text.golden"));
}

}  // namespace
}  // namespace tessel::tools::testing
