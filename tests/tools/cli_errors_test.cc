// The `tessel` command line on bad arguments and bad files: one "error: ..." line on stderr,
// exit code 2 for usage errors and 1 for everything else, never a crash.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.h"
#include "support/npy.h"

namespace tessel::tools::testing {
namespace {

const std::string kMnistInt8 = "models/onnx-zoo/mnist-12-int8.ort-qoperator.onnx";
const std::string kDigit0 = "data/reference/inputs/mnist_t10k_00000_f32_1x1x28x28.bin";


TEST(CliUsage, NoSubcommand) { expect_error(run_cli({}), 2, "subcommand"); }

TEST(CliUsage, UnknownSubcommand) { expect_error(run_cli({"frobnicate"}), 2, "frobnicate"); }

TEST(CliUsage, RunWithoutInput) { expect_error(run_cli({"run", kMnistInt8}), 2, "--input"); }

TEST(CliUsage, UnknownOption) {
  expect_error(run_cli({"run", kMnistInt8, "--input", kDigit0, "--bogus"}), 2, "--bogus");
}

TEST(CliUsage, UnknownSimulator) {
  expect_error(run_cli({"run", kMnistInt8, "--input", kDigit0, "--sim", "rtl9"}), 2, "rtl9");
}

TEST(CliUsage, AsmWithoutOutput) { expect_error(run_cli({"asm", "x.s"}), 2, "--output"); }

TEST(CliUsage, HelpIsNotAnError) {
  const CliResult r = run_cli({"run", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--report-json"), std::string::npos);
}

// Issue 7 F6: an option given an empty value names nothing: a usage error naming the option, for
// every option that takes a value, of every subcommand.
TEST(CliUsage, EmptyOptionValuesAreErrors) {
  const std::string out = temp_file("empty_out.npy");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"run", kMnistInt8, "--input", kDigit0, "--output", ""}, "--output of tessel run"},
      {{"run", kMnistInt8, "--input", kDigit0, "-o", ""}, "--output of tessel run"},
      {{"run", kMnistInt8, "--input", kDigit0, "--report-json", ""}, "--report-json of tessel run"},
      {{"run", kMnistInt8, "--input", kDigit0, "--shape", ""}, "--shape of tessel run"},
      {{"run", kMnistInt8, "--input", kDigit0, "--config", ""}, "--config of tessel run"},
      {{"run", kMnistInt8, "--input", kDigit0, "--labels", ""}, "--labels of tessel run"},
      {{"run", kMnistInt8, "--input", kDigit0, "--calib", ""}, "--calib of tessel run"},
      {{"run", kMnistInt8, "--input", kDigit0, "--dump-ir", ""}, "--dump-ir of tessel run"},
      {{"run", kMnistInt8, "--input", kDigit0, "--reference", ""}, "--reference of tessel run"},
      {{"run", kMnistInt8, "--input", ""}, "--input of tessel run"},
      {{"run", "", "--input", kDigit0}, "the model argument of tessel run"},
      {{"compile", kMnistInt8, "-o", ""}, "--output of tessel compile"},
      {{"compile", kMnistInt8, "-o", out, "--config", ""}, "--config of tessel compile"},
      {{"asm", "", "-o", out}, "the input argument of tessel asm"},
      {{"asm", "tests/golden/tools/gemm_tile.s", "-o", out, "--config", ""}, "--config of tessel asm"},
      {{"disasm", ""}, "the program argument of tessel disasm"},
      {{"sim", "tests/golden/tools/gemm_tile.s", "--trace", ""}, "--trace of tessel sim"},
      {{"sim", "tests/golden/tools/gemm_tile.s", "--segment", ""}, "--segment of tessel sim"},
      {{"simcmp", "tests/golden/tools/gemm_tile.s", "--config", ""}, "--config of tessel simcmp"},
      {{"config", "--print", "--config", ""}, "--config of tessel config"},
  };
  for (const auto& [args, option] : cases) {
    const CliResult r = run_cli(args);
    expect_error(r, 2, option + " was given an empty value");
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(CliErrors, NonexistentModel) {
  expect_error(run_cli({"run", "models/no_such_model.onnx", "--input", kDigit0}), 1, "no_such_model.onnx");
}

TEST(CliErrors, CompileOptionsDoNotApplyToAnExecutable) {
  // --approximate-requant is a compile option: accepted by compile (and run on a model), an
  // error on an already compiled executable, as --no-offload and --calib are
  const std::string tsx = temp_file("approx.tsx");
  ASSERT_EQ(run_cli({"compile", kMnistInt8, "--approximate-requant", "-o", tsx}).exit_code, 0);
  const std::string approx_report = temp_file("approx_report.json");
  EXPECT_EQ(run_cli({"run", tsx, "--input", kDigit0, "--report-json", approx_report}).exit_code, 0);
  {
    std::ifstream f(approx_report);
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    // the executable records how it was requantised, and the report says so
    EXPECT_NE(text.find("\"requant_mode\": \"approximate\""), std::string::npos) << text;
  }
  EXPECT_EQ(run_cli({"run", kMnistInt8, "--approximate-requant", "--input", kDigit0}).exit_code, 0);
  expect_error(run_cli({"run", tsx, "--input", kDigit0, "--approximate-requant"}), 1,
               "--approximate-requant does not apply to");
  expect_error(run_cli({"run", tsx, "--input", kDigit0, "--no-offload"}), 1, "--no-offload does not apply to");
}

TEST(CliErrors, MalformedOnnx) {
  const std::string bad = temp_file("garbage.onnx");
  write(bad, "this is not a protobuf \x01\x02\x03 at all");
  expect_error(run_cli({"run", bad, "--input", kDigit0}), 1, "garbage.onnx");
}

TEST(CliErrors, WrongSizeBin) {
  const std::string bad = temp_file("short_f32_1x1x28x28.bin");
  write(bad, std::string(100, '\0'));
  expect_error(run_cli({"run", kMnistInt8, "--input", bad}), 1,
               "holds 100 bytes but shape [1, 1, 28, 28] of f32 needs 3136 bytes");
}

TEST(CliErrors, WrongSizeBinWithShapeOption) {
  // A raw file without a shape in its name: --shape gives it, and the byte size must agree.
  const std::string plain = temp_file("digit_plain.bin");
  write(plain, std::string(3136, '\0'));
  expect_error(run_cli({"run", kMnistInt8, "--input", plain, "--shape", "1,1,28,27"}), 1,
               "holds 3136 bytes, more than 3024 bytes, the limit for shape [1, 1, 28, 27] of f32");
  // With a shape in its name, a --shape that differs is an error naming both.
  expect_error(run_cli({"run", kMnistInt8, "--input", kDigit0, "--shape", "1,1,28,27"}), 1,
               "holds shape [1, 1, 28, 28] by its file name, but --shape gives [1, 1, 28, 27]");
}

// Issue 7 F8 and F9: a raw file name's shape is digits and 'x' only; a .npy header is printable
// ASCII padded with spaces and ended by a newline.
TEST(CliErrors, MalformedShapesInNamesAndNpyHeadersAreErrors) {
  for (const char* name : {"x_f32_-1x28x28.bin", "x_f32_+1x1x28x28.bin"}) {
    const std::string p = temp_file(name);
    write(p, std::string(3136, '\0'));
    expect_error(run_cli({"run", kMnistInt8, "--input", p}), 1,
                 std::string("the file name suffix '") + std::string(name).substr(1, std::string(name).size() - 5) +
                     "' has no valid shape");
  }
  std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 28, 28), }";
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  h[h.size() - 3] = '\0';
  std::string npy = std::string("\x93NUMPY\x01\x00", 8);
  npy += static_cast<char>(h.size() & 0xff);
  npy += static_cast<char>(h.size() >> 8);
  const std::string p = temp_file("nul_header.npy");
  write(p, npy + h + std::string(3136, '\0'));
  expect_error(run_cli({"run", kMnistInt8, "--input", p}), 1,
               fmt::format("header byte {} is 0x00, not printable ASCII", h.size() - 3));
}

TEST(CliErrors, RawBinWithoutShapeUsesTheModelShape) {
  const std::string bad = temp_file("plain.bin");
  write(bad, std::string(12, '\0'));
  expect_error(run_cli({"run", kMnistInt8, "--input", bad}), 1,
               "holds 12 bytes but shape [1, 1, 28, 28] of f32 needs 3136 bytes");
}

TEST(CliErrors, MalformedNpy) {
  const std::string bad = temp_file("bad.npy");
  // A version 1.0 header that claims 16 bytes but is cut short after 14.
  const char header[] = "\x93NUMPY\x01\x00\x10\x00{'descr': '<f4'";
  write(bad, std::string(header, sizeof header - 1));
  expect_error(run_cli({"run", kMnistInt8, "--input", bad}), 1, "malformed .npy file");
}

TEST(CliErrors, InputOfAnotherModel) {
  expect_error(run_cli({"run", kMnistInt8, "--input", "data/reference/inputs/ic_sample0_f32_1x3x32x32.bin"}), 1,
               "has shape [1, 3, 32, 32] (3072 elements) but input 'Input3' expects [1, 1, 28, 28] (784 elements)");
}

TEST(CliErrors, NhwcHint) {
  expect_error(run_cli({"run", "models/mlperf-tiny/ic01_resnet8_int8_qdq.onnx", "--input",
                        "data/mlperf-tiny/image_classification_int8_0.npy"}),
               1, "pass --nhwc");
}

TEST(CliErrors, BadShapeText) {
  expect_error(run_cli({"run", kMnistInt8, "--input", kDigit0, "--shape", "1,x,28"}), 1,
               "bad shape '1,x,28'");
}

TEST(CliErrors, UnknownDumpIrPass) {
  // a bad option value: a usage error (exit code 2), for run and compile alike
  expect_error(run_cli({"run", kMnistInt8, "--input", kDigit0, "--dump-ir", "no-such-pass"}), 2,
               "unknown pass 'no-such-pass'");
  expect_error(run_cli({"compile", kMnistInt8, "-o", "x.tsx", "--dump-ir", "no-such-pass"}), 2,
               "unknown pass 'no-such-pass'");
}

TEST(CliErrors, ConfigPrintsWithoutTheFlag) {
  // `tessel config` prints the configuration; --print is the same command spelled out
  const CliResult a = run_cli({"config"});
  const CliResult b = run_cli({"config", "--print"});
  EXPECT_EQ(a.exit_code, 0);
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out.find("\"LOG_BLOCK_IN\": 4,"), std::string::npos) << a.out;
}

TEST(CliErrors, MissingLabelFile) {
  expect_error(run_cli({"run", kMnistInt8, "--input", kDigit0, "--labels", "no_such_labels.txt"}), 1,
               "no_such_labels.txt");
}

TEST(CliErrors, BadConfigFile) {
  const std::string bad = temp_file("bad_config.json");
  write(bad, "{\"LOG_BLOCK_IN\": 4, ");
  expect_error(run_cli({"config", "--print", "--config", bad}), 1, "");
  expect_error(run_cli({"config", "--print", "--config", "no_such_config.json"}), 1, "no_such_config.json");
}

TEST(CliErrors, DisasmOfANonProgram) {
  expect_error(run_cli({"disasm", kDigit0}), 1, "is not a Program binary");
  expect_error(run_cli({"disasm", "no_such_program.bin"}), 1, "no_such_program.bin");
  const std::string trunc = temp_file("trunc.bin");
  const char truncated[] = "TSLPROG1\x01\x00";
  write(trunc, std::string(truncated, sizeof truncated - 1));
  expect_error(run_cli({"disasm", trunc}), 1, "trunc.bin");
}

TEST(CliErrors, AsmSyntaxErrorNamesTheLine) {
  const std::string src = temp_file("bad.s");
  write(src, "# comment\nLOAD INP sram=0 dram=0 y=1 x=1 stride=1\nGEMM uop=0:1 iter=1 dst=0,0\n");
  expect_error(run_cli({"asm", src, "-o", temp_file("bad.bin")}), 1, "line 3");
}

TEST(CliErrors, SimRejectsAnIllegalStream) {
  const std::string src = temp_file("unbalanced.s");
  // compute pushes a token to store that nobody pops: the verifier's token-balance rule.
  write(src, "LOAD UOP sram=0 dram=0 y=1 x=0 stride=0 deps=push_next\nFINISH\n");
  const CliResult r = run_cli({"sim", src});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
}

TEST(CliErrors, SimSegmentErrors) {
  const std::string src = temp_file("finish.s");
  write(src, "FINISH\n");
  expect_error(run_cli({"sim", src, "--segment", "inp"}), 1, "--segment 'inp' must have the form name=FILE");
  expect_error(run_cli({"sim", src, "--alloc", "out="}), 1, "--alloc 'out=' must have the form name=BYTES");
  expect_error(run_cli({"sim", src, "--alloc", "=16"}), 1, "--alloc '=16' must have the form name=BYTES");
  expect_error(run_cli({"sim", src, "--dump-segment", "out"}), 1,
               "--dump-segment 'out' must have the form name=FILE");
  expect_error(run_cli({"simcmp", src, "--alloc", "out"}), 1, "--alloc 'out' must have the form name=BYTES");
  expect_error(run_cli({"sim", src, "--alloc", "out=abc"}), 1, "not a positive byte count");
  expect_error(run_cli({"sim", src, "--segment", "inp=no_such_file.bin"}), 1, "no_such_file.bin");
}


// NaN / infinity in an input or calibration file: rejected, naming the file, count and first index.
TEST(CliErrors, NonFiniteInputValues) {
  std::vector<float> v(28 * 28, 1.0f);
  v[5] = std::numeric_limits<float>::quiet_NaN();
  v[9] = std::numeric_limits<float>::infinity();
  const std::string bad = temp_file("nan.npy");
  support::write_npy_f32(bad, {1, 1, 28, 28}, v);
  expect_error(run_cli({"run", kMnistInt8, "--input", bad}), 1, "holds 2 non-finite value(s) (NaN or infinity); the first is element 5");
  expect_error(run_cli({"compile", "models/onnx-zoo/mnist-12.onnx", "-o", temp_file("m.tsx"), "--calib", bad}), 1,
               "calibration file '" + bad + "' holds 2 non-finite");
}

TEST(CliErrors, MalformedShapeSuffixInFileName) {
  for (const std::string name : {"w_f32_0x28.bin", "w_f32_1xx28.bin", "w_q7_1x1x28x28.bin"}) {
    const std::string path = temp_file(name);
    write(path, std::string(3136, '\0'));
    expect_error(run_cli({"run", kMnistInt8, "--input", path}), 1, "file name suffix");
  }
}

TEST(CliErrors, LabelCountMustMatchTheClasses) {
  const std::string two = temp_file("two.txt"), empty = temp_file("empty.txt");
  write(two, "a\nb\n");
  write(empty, "");
  expect_error(run_cli({"run", kMnistInt8, "--input", kDigit0, "--labels", two}), 1,
               "has 2 lines but output 'Plus214_Output_0' has 10 classes");
  expect_error(run_cli({"run", kMnistInt8, "--input", kDigit0, "--labels", empty}), 1, "is empty");
}

// Output paths are checked before the (long) compile and run: no output on stdout.
TEST(CliErrors, UnwritableOutputPathsFailFirst) {
  CliResult r = run_cli({"run", kMnistInt8, "--input", kDigit0, "-o", "/nonexistent_dir_tessel/x.npy"});
  expect_error(r, 1, "--output '/nonexistent_dir_tessel/x.npy': directory '/nonexistent_dir_tessel' does not exist");
  EXPECT_TRUE(r.out.empty()) << r.out;
  r = run_cli({"run", kMnistInt8, "--input", kDigit0, "--report-json", "/tmp"});
  expect_error(r, 1, "--report-json '/tmp': is a directory");
  EXPECT_TRUE(r.out.empty()) << r.out;
  expect_error(run_cli({"compile", kMnistInt8, "-o", "/nonexistent_dir_tessel/m.tsx"}), 1, "does not exist");
}

TEST(CliErrors, CommandLineTermsInMessages) {
  expect_error(run_cli({"compile", "models/onnx-zoo/mnist-12.onnx", "-o", temp_file("f.tsx")}), 1, "pass --calib FILE");
  const std::string raw = temp_file("plainraw.bin");
  write(raw, std::string(3136, '\0'));
  expect_error(run_cli({"run", kMnistInt8, "--input", raw, "--nhwc"}), 1, "pass --shape N,H,W,C");
  expect_error(run_cli({"config", "--print", "--config", "/tmp"}), 1, "is a directory");
  const std::string dup = temp_file("dup.json");
  write(dup, "{\"LOG_BLOCK\": 4, \"LOG_BLOCK\": 5}");
  expect_error(run_cli({"config", "--print", "--config", dup}), 1, "key 'LOG_BLOCK' is given twice");
}

TEST(CliErrors, BatchNeedsASymbolicBatchDimension) {
  expect_error(run_cli({"run", kMnistInt8, "--input", kDigit0, "--batch", "2"}), 1, "no symbolic (named) batch dimension");
  // The value is checked as text, before a conversion that would saturate (hostile review 2, F5).
  expect_error(run_cli({"run", kMnistInt8, "--input", kDigit0, "--batch", "99999999999999999999"}), 2,
               "--batch: '99999999999999999999' is not a whole number from 1 to 65536");
  expect_error(run_cli({"compile", kMnistInt8, "-o", temp_file("b.tsx"), "--batch", "0"}), 2,
               "--batch: '0' is not a whole number from 1 to 65536");
}

TEST(CliErrors, AllocIsBoundedByTheDeviceDram) {
  const std::string src = temp_file("finish2.s");
  write(src, "FINISH\n");
  expect_error(run_cli({"sim", src, "--alloc", "out=99999999999999"}), 1, "is too large; the device DRAM holds at most 1073741824 bytes");
  expect_error(run_cli({"sim", src, "--alloc", "out=4000000000"}), 1, "too large");
  expect_error(run_cli({"sim", src, "--alloc", "out=0"}), 1, "not a positive byte count");
}

// A .config directive that differs from --config in keys the VTA name omits names those keys.
TEST(CliErrors, ConfigMismatchNamesTheKeys) {
  const std::string src = temp_file("cfg.s"), cfg = temp_file("bus7.json");
  write(src, ".config {\"LOG_BUS_WIDTH\": 6}\nFINISH\n");
  write(cfg, "{\"LOG_BUS_WIDTH\": 7}");
  expect_error(run_cli({"asm", src, "-o", temp_file("cfg.bin"), "--config", cfg}), 1, "LOG_BUS_WIDTH 6 vs 7");
}

// A --segment file larger than the stream expects moves the segments after it: the Program's
// fixed dram_base of the STORE then points into an input segment. That is an error, not a silent
// overwrite of the input.
TEST(CliErrors, StoreOutsideAnOutputSegment) {
  const std::string big = temp_file("inp_5000.bin");
  write(big, std::string(5000, '\1'));
  const CliResult r = run_cli({"sim", "tests/golden/tools/gemm_tile.s", "--segment", "inp=" + big, "--segment",
                               "wgt=tests/golden/tools/gemm_tile_wgt.bin", "--alloc", "out=16"});
  expect_error(r, 1,
               "error: insn 5 (STORE OUT) writes image bytes [12288, 12304) (row 0), which lie in input segment "
               "'wgt', not an output segment: the segment layout is uop const [0, 4096), inp input [4096, 12288), "
               "wgt input [12288, 16384), out output [16384, 20480); check the sizes of the --segment files");
  // The same command with the 16-byte input file runs.
  EXPECT_EQ(run_cli({"sim", "tests/golden/tools/gemm_tile.s", "--segment", "inp=tests/golden/tools/gemm_tile_inp.bin",
                     "--segment", "wgt=tests/golden/tools/gemm_tile_wgt.bin", "--alloc", "out=16"})
                .exit_code,
            0);
}

// The verifier's hint about --segment/--alloc comes only with DRAM range errors of a Program that
// brought no data segments; other problems (an illegal LOAD, a misplaced FINISH, a deadlock at the
// run's queue depths) are reported as they are.
TEST(CliErrors, SegmentHintOnlyForDramRangeErrors) {
  const std::string bin = temp_file("hint_gemm.bin");
  ASSERT_EQ(run_cli({"asm", "tests/golden/tools/gemm_tile.s", "-o", bin}).exit_code, 0);
  // The verifier's own wording (isa/verifier.cc) is not pinned here: the first problem, the count
  // and the hint are.
  CliResult r = run_cli({"sim", bin});
  expect_error(r, 1, "error: insn 0 (LOAD INP): ");
  EXPECT_NE(r.err.find("(and 2 more problems; --all-errors lists every one) (the program has only its 'uop' "
                       "segment: add its data with --segment NAME=FILE and --alloc NAME=BYTES)\n"),
            std::string::npos)
      << r.err;
  // With the inputs given but no output segment, the hint names what the command line added.
  r = run_cli({"sim", bin, "--segment", "inp=tests/golden/tools/gemm_tile_inp.bin", "--segment",
               "wgt=tests/golden/tools/gemm_tile_wgt.bin"});
  expect_error(r, 1, "error: insn 5 (STORE OUT): ");
  EXPECT_NE(r.err.find(" (the program brought only its 'uop' segment and the command line added 'inp', 'wgt', "
                       "12288 image bytes in all: add the rest of its data with --segment NAME=FILE and --alloc "
                       "NAME=BYTES)\n"),
            std::string::npos)
      << r.err;

  const std::string load_out = temp_file("load_out.s"), two_finish = temp_file("two_finish.s"),
                    deadlock = temp_file("deadlock.s"), q1 = temp_file("cmdq1.json");
  write(load_out, "LOAD OUT sram=0 dram=0 y=1 x=1 stride=1\nFINISH\n");
  write(two_finish, "LOAD INP sram=0 dram=0 y=1 x=1 stride=1\nFINISH\nFINISH\n");
  // Compute waits for load's token, but with one command-queue entry fetch cannot dispatch the
  // LOAD INP that pushes it: a deadlock at CMD_QUEUE_DEPTH 1 only (it runs at the default 512).
  write(deadlock,
        "LOAD UOP sram=0 dram=0 y=1 x=1 stride=1\n"
        "GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0 deps=pop_prev\n"
        "GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0\n"
        "GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0\n"
        "LOAD INP sram=0 dram=0 y=1 x=1 stride=1 deps=push_next\n"
        "FINISH\n");
  write(q1, "{\"CMD_QUEUE_DEPTH\": 1}");
  for (const auto& [args, needle] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"sim", load_out}, "insn 0 (LOAD OUT): "},
           {{"sim", two_finish}, "insn 1 (FINISH): "},
           {{"sim", deadlock, "--config", q1}, "deadlock"},
           {{"simcmp", two_finish, "--b", "cycle"}, "insn 1 (FINISH): "}}) {
    const CliResult res = run_cli(args);
    expect_error(res, 1, needle);
    EXPECT_EQ(res.err.find("--segment"), std::string::npos) << res.err;
    EXPECT_EQ(res.err.find("segment:"), std::string::npos) << res.err;
  }
  EXPECT_EQ(run_cli({"sim", deadlock}).exit_code, 0);  // legal at the default queue depths
}

// The first problem and a count, or with --all-errors every problem (numbered, with its rule) on
// stdout and the error line saying so.
TEST(CliErrors, AllErrorsListsEveryVerifierProblem) {
  const std::string src = temp_file("two_problems.s");
  write(src, "FINISH\nFINISH\nFINISH\n");  // two early FINISHes
  CliResult r = run_cli({"sim", src});
  expect_error(r, 1, "error: insn 0 (FINISH): ");
  EXPECT_NE(r.err.find(" (and 1 more problem; --all-errors lists every one)\n"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  for (const std::string cmd : {"sim", "simcmp"}) {
    std::vector<std::string> args = {cmd, src, "--all-errors"};
    if (cmd == "simcmp") args.insert(args.end(), {"--b", "cycle"});  // builds without rtl too
    r = run_cli(args);
    expect_error(r, 1, "error: insn 0 (FINISH): ");
    EXPECT_NE(r.err.find(" (and 1 more problem, listed above)\n"), std::string::npos) << r.err;
    // One header and one numbered line per problem, with its rule (the messages are the verifier's).
    EXPECT_EQ(r.out.rfind("verifier: 2 problems in program 'two_problems'\n    1. [finish] insn 0 (FINISH): ", 0),
              0u)
        << cmd << ": " << r.out;
    const size_t second = r.out.find("\n    2. [finish] insn 1 (FINISH): ");
    ASSERT_NE(second, std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3) << r.out;
  }
}

// A compiled Executable where a Program is expected is named as such.
TEST(CliErrors, ExecutableIsNotAProgram) {
  const std::string tsx = temp_file("not_a_program.tsx");
  ASSERT_EQ(run_cli({"compile", kMnistInt8, "-o", tsx}).exit_code, 0);
  const std::string want = "'" + tsx + "' is a compiled Executable (TSLEXEC1), not a Program: run it with `tessel run " +
                           tsx + " --input FILE`";
  expect_error(run_cli({"sim", tsx}), 1, want);
  expect_error(run_cli({"simcmp", tsx, "--b", "cycle"}), 1, want);
  expect_error(run_cli({"disasm", tsx}), 1, want);
  expect_error(run_cli({"asm", tsx, "-o", temp_file("x.bin")}), 1, want);
}

// An Executable where an onnx model is expected (tessel compile) is named as such; compile
// without -o names the option.
TEST(CliErrors, CompileNamesAnExecutableAndAMissingOutput) {
  const std::string tsx = temp_file("compiled_again.tsx");
  ASSERT_EQ(run_cli({"compile", kMnistInt8, "-o", tsx}).exit_code, 0);
  expect_error(run_cli({"compile", tsx, "-o", temp_file("again2.tsx")}), 1,
               "'" + tsx + "' is already a compiled executable (.tsx), not an onnx model: run it with tessel run '" +
                   tsx + "' -i INPUT");
  expect_error(run_cli({"compile", kMnistInt8}), 2, "--output is required (see tessel compile --help)");
  expect_error(run_cli({"run", kMnistInt8}), 2, "--input is required (see tessel run --help)");
  // --dump-ir list needs neither: it only lists the passes
  EXPECT_EQ(run_cli({"run", kMnistInt8, "--dump-ir", "list"}).exit_code, 0);
}

// --dump-ir list prints every pass in pipeline order (graph, driver, tir, backend, loop-ir) and
// compiles nothing (the text is a golden of cli_golden_test); every listed name is a valid
// --dump-ir name; --time-passes adds the per-kernel passes summed over layers, with their level.
TEST(CliPasses, DumpIrListAndTimePasses) {
  const CliResult list = run_cli({"compile", kMnistInt8, "--dump-ir", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.out;
  std::vector<std::string> names;
  std::istringstream in(list.out);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.rfind("passes in order (graph: once per model; ", 0), 0u) << line;
  std::string footer;
  while (std::getline(in, line)) {
    if (line.rfind("  ", 0) != 0) {  // the note on the timed steps that are not IR passes
      footer = line;
      break;
    }
    std::istringstream f(line);
    std::string level, name;
    f >> level >> name;
    names.push_back(level + " " + name);
  }
  ASSERT_GE(names.size(), 21u) << list.out;
  EXPECT_EQ(names.front(), "graph shape_inference");
  EXPECT_EQ(names[11], "driver lower");
  EXPECT_EQ(names[12], "tir inject_dma_copy");
  EXPECT_EQ(names.back(), "loop-ir insert_dep_tokens");
  EXPECT_EQ(footer, "a name at two levels dumps both; level:name (e.g. tir:fold_uop_loops) dumps one");
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_NE(line.find("import (reading the ONNX model into the graph) and backend verify"), std::string::npos)
      << list.out;
  // a level-qualified name dumps that level's pass only: mnist-12-int8's layers take the loop-IR
  // path, so tir:fold_uop_loops dumps nothing and loop-ir:fold_uop_loops their IR (the dumps
  // compared without the compile summary, which has times)
  {
    auto dump_of = [](const std::string& out) { return out.substr(0, out.find("compiled ")); };
    const CliResult both = run_cli({"compile", kMnistInt8, "-o", temp_file("q.tsx"), "--dump-ir", "fold_uop_loops"});
    const CliResult loop = run_cli({"compile", kMnistInt8, "-o", temp_file("q.tsx"), "--dump-ir", "loop-ir:fold_uop_loops"});
    const CliResult tir = run_cli({"compile", kMnistInt8, "-o", temp_file("q.tsx"), "--dump-ir", "tir:fold_uop_loops"});
    ASSERT_EQ(both.exit_code, 0) << both.err;
    ASSERT_EQ(loop.exit_code, 0) << loop.err;
    ASSERT_EQ(tir.exit_code, 0) << tir.err;
    EXPECT_EQ(dump_of(loop.out), dump_of(both.out));
    EXPECT_NE(loop.out.find("; layer "), std::string::npos) << loop.out;
    EXPECT_EQ(tir.out.find("; layer "), std::string::npos) << tir.out;
    const CliResult graph = run_cli({"compile", kMnistInt8, "-o", temp_file("q.tsx"), "--dump-ir", "graph:placement"});
    const CliResult plain = run_cli({"compile", kMnistInt8, "-o", temp_file("q.tsx"), "--dump-ir", "placement"});
    EXPECT_EQ(dump_of(graph.out), dump_of(plain.out));
    EXPECT_EQ(run_cli({"compile", kMnistInt8, "-o", temp_file("q.tsx"), "--dump-ir", "tir:placement"}).exit_code, 2);
  }
  // every listed pass is a valid --dump-ir name (one name at two levels is tried once)
  std::set<std::string> tried;
  for (const std::string& n : names) {
    const std::string pass = n.substr(n.find(' ') + 1);
    if (!tried.insert(pass).second) continue;
    const CliResult r = run_cli({"compile", kMnistInt8, "-o", temp_file("dump.tsx"), "--dump-ir", pass});
    EXPECT_EQ(r.exit_code, 0) << pass << ": " << r.out;
  }
  const CliResult timed = run_cli({"compile", kMnistInt8, "-o", temp_file("timed.tsx"), "--time-passes"});
  ASSERT_EQ(timed.exit_code, 0) << timed.out;
  EXPECT_NE(timed.out.find("pass times (wall, ms):\n  import "), std::string::npos) << timed.out;
  const size_t per_kernel = timed.out.find("per-kernel passes (summed over the offloaded layers, thread time, ms):\n");
  ASSERT_NE(per_kernel, std::string::npos) << timed.out;
  for (const char* p : {"  loop-ir schedule ", "  loop-ir inject_dma_copy ", "  loop-ir insert_dep_tokens ",
                        "  backend verify "})
    EXPECT_NE(timed.out.find(p, per_kernel), std::string::npos) << p << timed.out;
}

// Hardware keys are a Program's and an Executable's identity: a --config that changes one is an
// error naming the key. Queue depths may change, but the Programs must not deadlock with them.
TEST(CliErrors, ConfigOfOtherHardwareNamesTheKey) {
  const std::string bin = temp_file("hw_gemm.bin"), tsx = temp_file("hw.tsx"), bus7 = temp_file("hw_bus7.json"),
                    batch2 = temp_file("hw_batch2.json"), q11 = temp_file("hw_q11.json");
  write(bus7, "{\"LOG_BUS_WIDTH\": 7, \"DRAM_LATENCY\": 0}");
  write(batch2, "{\"LOG_BATCH\": 1}");
  write(q11, "{\"CMD_QUEUE_DEPTH\": 1, \"TOKEN_QUEUE_DEPTH\": 1}");
  ASSERT_EQ(run_cli({"asm", "tests/golden/tools/gemm_tile.s", "-o", bin}).exit_code, 0);
  ASSERT_EQ(run_cli({"compile", kMnistInt8, "-o", tsx}).exit_code, 0);
  expect_error(run_cli({"sim", bin, "--config", bus7}), 1,
               "'" + bin + "' was built for config 1x16_i8w8a32_15_15_18_17 but --config '" + bus7 + "'" +
                   " describes other hardware (LOG_BUS_WIDTH 6 vs 7)");
  expect_error(run_cli({"sim", bin, "--config", batch2}), 1, "(LOG_BATCH 0 vs 1)");
  expect_error(run_cli({"run", tsx, "--input", kDigit0, "--config", bus7}), 1,
               "'" + tsx + "' was compiled for config 1x16_i8w8a32_15_15_18_17 but --config '" + bus7 + "'" +
                   " describes other hardware (LOG_BUS_WIDTH 6 vs 7)");
  expect_error(run_cli({"run", tsx, "--input", kDigit0, "--config", q11}), 1,
               "cannot run with CMD_QUEUE_DEPTH=1, TOKEN_QUEUE_DEPTH=1 (it was compiled for 512 and 1024): ");
  // A smaller TOKEN_QUEUE_DEPTH alone (the command queues keep their 512 entries): the verifier
  // models the token queues as fsim does, so the double-buffered first layer is refused before
  // anything runs, by name; compiled for that depth, the model runs.
  const std::string tq1 = temp_file("hw_tq1.json"), tsx_tq1 = temp_file("hw_tq1.tsx");
  write(tq1, "{\"TOKEN_QUEUE_DEPTH\": 1}");
  expect_error(run_cli({"run", tsx, "--input", kDigit0, "--config", tq1}), 1,
               "program 0 ('Convolution28_quant') cannot run with CMD_QUEUE_DEPTH=512, TOKEN_QUEUE_DEPTH=1 (it was "
               "compiled for 512 and 1024): insn 10 (GEMM): deadlock: the load module at insn 37 (LOAD INP) waits to "
               "push token queue l2g (load->compute), which is full (1 tokens, TOKEN_QUEUE_DEPTH=1)");
  ASSERT_EQ(run_cli({"compile", kMnistInt8, "--config", tq1, "-o", tsx_tq1}).exit_code, 0);
  EXPECT_EQ(run_cli({"run", tsx_tq1, "--input", kDigit0, "--config", tq1}).exit_code, 0);
  // A .config directive and --config of other hardware (the text form of the same check).
  const std::string dis = temp_file("hw_gemm.s");
  const CliResult d = run_cli({"disasm", bin});
  ASSERT_EQ(d.exit_code, 0);
  write(dis, d.out);
  expect_error(run_cli({"sim", dis, "--config", bus7}), 1,
               ".config 1x16_i8w8a32_15_15_18_17 describes other hardware than --config " + bus7 +
                   " (LOG_BUS_WIDTH 6 vs 7)");
}

// An unknown simulator name is a usage error listing the kinds of this build.
TEST(CliUsage, UnknownSimulatorListsTheBuiltKinds) {
  const std::string src = temp_file("finish_sim.s");
  write(src, "FINISH\n");
  expect_error(run_cli({"sim", src, "--sim", "tsim"}), 2, "unknown simulator 'tsim' (this build has ");
  expect_error(run_cli({"simcmp", src, "--a", "fsim"}), 2, "simcmp compares timed simulators: 'fsim' has no cycles");
  expect_error(run_cli({"simcmp", src, "--b", "tsim"}), 2, "unknown simulator 'tsim' (this build has ");
}

TEST(CliConfig, PrintsTheDefaultConfig) {
  const CliResult r = run_cli({"config", "--print"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"LOG_BLOCK_IN\": 4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"LOG_WGT_BUFF_SIZE\": 18"), std::string::npos) << r.out;
}

// Hostile review 3: what each command prints on standard output never carries a raw control
// byte from a name or path (a Program name, segment names, output paths), and late failures are
// caught before the run (a label file that is not UTF-8, an output name too long for the file
// system); `asm` of a Program binary says what the file is.
TEST(CliErrors, OutputLinesEscapeNamesAndLateFailuresComeFirst) {
  const std::string src = temp_file("evil.s"), bin = temp_file("evil.bin");
  write(src, std::string(".name 'evil\\x1b[2J'\n") + "FINISH\n");
  ASSERT_EQ(run_cli({"asm", src, "-o", bin}).exit_code, 0);
  const std::string seg = temp_file("seg.bin");
  write(seg, std::string(16, '\0'));
  const CliResult r = run_cli({"sim", bin, "--segment", std::string("x\x07y=") + seg, "--alloc", "o\x1bz=16",
                               "--dump-segment", "o\x1bz=" + temp_file("dump\x1b.bin")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char c : r.out) {
    const auto u = static_cast<unsigned char>(c);
    EXPECT_TRUE(c == '\n' || (u >= 0x20 && u != 0x7f)) << int(u) << " in " << r.out;
  }
  EXPECT_NE(r.out.find("program   evil\\x1b[2J"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("x\\x07y"), std::string::npos) << r.out;
  expect_error(run_cli({"asm", bin, "-o", temp_file("again.bin")}), 1,
               "is already a Program binary (TSLPROG1), not assembler text");
  const std::string labels = temp_file("labels_latin1.txt");
  std::string lines;
  for (int i = 0; i < 10; ++i) lines += (i == 3 ? std::string("caf\xe9") : std::to_string(i)) + "\n";
  write(labels, lines);
  const std::string report = temp_file("late.json");
  const CliResult l = run_cli({"run", kMnistInt8, "--input", kDigit0, "--labels", labels, "--report-json", report});
  expect_error(l, 1, "line 4 holds 'caf\\xe9', which is not UTF-8 text");
  EXPECT_EQ(l.out.find("per-layer"), std::string::npos) << "the run happened before the error";
  const CliResult n = run_cli({"run", kMnistInt8, "--input", kDigit0, "--output", "/tmp/" + std::string(300, 'a') + ".npy"});
  expect_error(n, 1, "the file name is 304 bytes; the file system takes names of at most 255 bytes");
  EXPECT_EQ(n.out.find("per-layer"), std::string::npos) << "the run happened before the error";
}

}  // namespace
}  // namespace tessel::tools::testing