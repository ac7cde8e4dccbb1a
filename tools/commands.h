// The subcommands of the `tessel` command line. Each returns the process exit code (0 on success)
// and writes its normal output to `out`; errors are thrown (tessel::UserError / IoError /
// InternalError) and turned into one "error: ..." line with exit code 1 by main.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "isa/config.h"
#include "isa/program.h"
#include "runtime/device.h"

namespace tessel::tools {

/// Options of `tessel run`.
struct RunOptions {
  std::string model;                   ///< ONNX file, or an Executable (.tsx, TSLEXEC1 magic)
  /// For an Executable: the ONNX model whose float evaluation the outputs are compared with
  /// ("" = no comparison). An error for ONNX models (they are their own reference).
  std::string reference_model;
  std::vector<std::string> inputs;     ///< one tensor file per graph input, in graph order
  std::optional<std::vector<int64_t>> shape;  ///< --shape for raw inputs
  bool nhwc = false;                   ///< input files are NHWC; transpose to NCHW
  int64_t batch = 1;                   ///< value of symbolic batch dimensions
  std::string sim = "fsim";            ///< "fsim", "cycle" or "rtl" (check_sim_available)
  /// HwConfig JSON ("" = defaults). For an Executable: it must describe the same hardware
  /// (isa::HwConfig::same_hardware) and its run-time settings (DRAM_LATENCY, CLOCK_MHZ, queue
  /// depths) are the run's.
  std::string config_path;
  std::string output_path;             ///< .npy of the output(s) ("" = none)
  std::string report_json;             ///< report JSON path ("" = none)
  std::string labels_path;             ///< label file ("" = built-in defaults)
  std::vector<std::string> calib;      ///< calibration files (float models)
  bool offload = true;
  bool approximate_requant = false;    ///< --approximate-requant (CompileOptions::exact_requant false)
  std::string dump_ir;                 ///< pass name or "all" ("" = none); "list": print the passes, run nothing
  bool time_passes = false;            ///< --time-passes: print every pass's time (graph and per-layer)
  std::vector<std::string> label_search_dirs;  ///< where data/imagenet/imagenet_classes.txt is looked for
};

/// Compiles and runs a model (or runs an Executable written by `tessel compile`), prints the
/// top-5, the error against the float reference and the per-layer report (tools/report.h); writes
/// --output and --report-json. Output paths, --labels (line count == class count) and --batch
/// (the model must have a symbolic batch dimension when it is not 1) are checked before compiling.
/// An Executable run with a --config of the same hardware but other queue depths has every
/// Program verified at the run's depths first (UserError naming the Program otherwise).
int run_command(const RunOptions& o, std::ostream& out);

/// The usage error of a --dump-ir value: "" when `pass` is "", "all", "list" or a pass of the
/// registry (compiler::pass_names()), else "unknown pass 'X' for --dump-ir (passes: ..., or
/// all)". tessel reports it as a usage error (exit code 2) before it reads any file.
std::string dump_ir_error(const std::string& pass);

/// Options of `tessel compile`.
struct CompileCmdOptions {
  std::string model, output_path, config_path, dump_ir;  ///< dump_ir "list": print the passes, compile nothing
  std::vector<std::string> calib;
  bool time_passes = false;  ///< --time-passes: also the per-layer passes' times (summed over layers)
  bool nhwc = false;
  int64_t batch = 1;
  bool offload = true;
  bool approximate_requant = false;  ///< --approximate-requant (CompileOptions::exact_requant false)
};
/// Compiles a model and writes the Executable (.tsx); prints a one-paragraph summary.
int compile_command(const CompileCmdOptions& o, std::ostream& out);

/// `tessel config --print`: the effective HwConfig (defaults, or --config) as JSON.
int config_command(const std::string& config_path, std::ostream& out);

/// `tessel asm IN.s -o OUT.bin`: assembles text into a serialised Program (Program::serialize).
/// The configuration is `config_path`'s when given (a `.config` directive in the text must equal
/// it), else the text's `.config` directive, else the defaults; a `.name` directive names the
/// Program (else the file stem).
int asm_command(const std::string& in_path, const std::string& out_path, const std::string& config_path,
                std::ostream& out);
/// `tessel disasm PROGRAM.bin`: prints the Program as assembler text with `.name` and `.config`
/// directives, so that `tessel asm` of the text gives back the same bytes (isa::disassemble).
int disasm_command(const std::string& in_path, std::ostream& out);

/// Options of `tessel sim`.
struct SimCmdOptions {
  std::string program_path;            ///< Program::serialize binary or assembler text
  std::string sim = "fsim";
  /// HwConfig JSON. Text programs are assembled for it; a binary Program (or a text one with a
  /// `.config` directive) must describe the same hardware (isa::HwConfig::same_hardware), and
  /// the run uses its run-time settings (DRAM_LATENCY, CLOCK_MHZ, queue depths).
  std::string config_path;
  /// "name=file": raw bytes written into the Program's input segment `name`; when the Program has
  /// no segment of that name (binary or text alike), a new input segment holding the file is
  /// appended to the image (in command-line order).
  std::vector<std::string> segments;
  /// "name=BYTES": appends a zero-filled output segment of BYTES (1..kMaxDeviceDramBytes) bytes,
  /// after the --segment ones; binary Programs and assembler text alike.
  std::vector<std::string> allocs;
  std::vector<std::string> dump_segments;  ///< "name=file": segment bytes written out after the run
  /// rtl only: an FST waveform of the run written here ("" = none; must end in .fst).
  std::string wave;
  /// With `wave`: the cycles to dump, "FIRST:LAST" or "FIRST:" (run-relative; "" = all).
  std::string wave_cycles;
  /// cycle only: a Chrome/Perfetto JSON trace of the run written here (CycleSimOptions::perfetto_path).
  std::string trace;
  /// When the verifier finds problems: list every one on `out` (numbered, with its rule) before
  /// the error, instead of the first and a count.
  bool all_errors = false;
};
/// Verifies and runs one Program on a simulator; prints counters, cycles and per-module stats
/// (on rtl only the instructions per module and fetch's busy cycles are derived: the other
/// columns print "-"). UserError for a simulator this build lacks (check_sim_available),
/// --wave/--wave-cycles without --sim rtl, --trace without --sim cycle, a bad --wave-cycles
/// range or unwritable output paths (all checked before the run), and for a Program the
/// verifier rejects: the first problem and how many more (all listed on `out` with
/// all_errors); a DRAM range error of a Program that brought only its micro-ops (`tessel asm`)
/// adds a hint to give its data segments with --segment / --alloc. Writes a "warning: ..." line
/// to `warn` when the --wave-cycles window starts after the run's last cycle (nothing dumped;
/// exit code still 0).
int sim_command(const SimCmdOptions& o, std::ostream& out, std::ostream& warn);

/// Options of `tessel simcmp`.
struct SimcmpOptions {
  std::string program_path;            ///< Program binary or assembler text (as `tessel sim`)
  std::string a = "cycle";             ///< first simulator: cycle or rtl
  std::string b = "rtl";               ///< second simulator: cycle or rtl (the CLI's default is cycle in builds without rtl)
  std::string config_path;             ///< for text programs
  std::vector<std::string> segments;   ///< as SimCmdOptions::segments
  std::vector<std::string> allocs;     ///< as SimCmdOptions::allocs
  bool all_errors = false;             ///< as SimCmdOptions::all_errors
};
/// Runs one Program on two timed simulators with per-instruction timelines and compares them:
/// every instruction's dispatch, start and done cycle (sim::compare_timelines), the run's
/// cycles, every segment's bytes after the run, and the counters. Prints "identical: N
/// instructions, C cycles ..." and returns 0, or prints each difference (the first timeline
/// divergence, the first differing byte of each segment) and returns 1. Simulator errors are
/// thrown as from `tessel sim`.
int simcmp_command(const SimcmpOptions& o, std::ostream& out);

/// The device DRAM a set of Programs needs (defined by the runtime, which places them).
using runtime::dram_bytes_for;

/// The largest device DRAM the command line creates: 1 GiB, runtime::Device::create's default.
/// `tessel sim` rejects --alloc / --segment sizes (and Programs) that need more.
inline constexpr uint64_t kMaxDeviceDramBytes = runtime::kDefaultDeviceDramBytes;

/// Checks, before any work, that `path` (the value of `option`) can be written: it is not a
/// directory, and its parent directory exists. Throws UserError "--output /x/y.npy: directory /x
/// does not exist" / "...: is a directory".
void check_output_path(const std::string& path, const std::string& option);

/// One file a command names on its command line: the option that names it ("--output",
/// "--input", "model") and the path.
struct FileRole {
  std::string option;
  std::string path;
};
/// Checks, before any work, that no two outputs of a command are the same file and that no
/// output is one of its input files. Two paths are the same file when both exist and have the
/// same device and inode (hard links, symbolic links, "./a" and "a"), or when their absolute,
/// lexically normalised forms (symbolic links of the existing part resolved) are equal. Empty
/// paths are skipped. Throws UserError naming both options and both paths, e.g. "--output a.npy
/// and --report-json a.npy are the same file".
void check_distinct_files(const std::vector<FileRole>& outputs, const std::vector<FileRole>& inputs);

/// Throws UserError unless `kind` is one of `built` (runtime::Device::kinds()): an unknown name
/// lists the built kinds; "rtl" or "cycle" missing from this build also says how to get it
/// (rtl: install Verilator with scripts/install-deps.sh and configure with -DTESSEL_WITH_RTL=ON).
void check_sim_available(const std::string& kind, const std::vector<std::string>& built);

/// Loads the HwConfig of --config (defaults when `path` is empty). Throws IoError / UserError.
isa::HwConfig load_config(const std::string& path);

}  // namespace tessel::tools
