// The `tessel` command line: run, compile, asm, disasm, sim, simcmp, config.
// Exit codes: 0 success, 1 an error (one "error: ..." line on stderr), 2 a usage error, 3 an
// executable whose accelerator step disagrees with its CPU reference (runtime::StepMismatchError).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <new>
#include <system_error>
#include <string>
#include <typeinfo>
#include <vector>

#include "support/atomic_file.h"
#include "support/error.h"
#include "support/npy.h"
#include "support/text.h"
#include "runtime/graph_executor.h"
#include "tools/commands.h"

#ifndef TESSEL_SOURCE_DIR
#define TESSEL_SOURCE_DIR ""
#endif

namespace {

// One line: newlines become "; ".
std::string one_line(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') {
      if (!out.empty() && out.back() != ' ') out += "; ";
    } else {
      out += c;
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == ';')) out.pop_back();
  return out;
}

// What each simulator is, for --help.
std::string describe_kind(const std::string& kind) {
  if (kind == "fsim") return "fsim (functional)";
  if (kind == "cycle") return "cycle (cycle-level SystemC)";
  if (kind == "rtl") return "rtl (Verilated RTL)";
  return kind;
}

// "a", "a or b", "a, b or c".
std::string or_list(const std::vector<std::string>& items) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) {
    s += i == 0 ? "" : (i + 1 == items.size() ? " or " : ", ");
    s += items[i];
  }
  return s;
}

// The --sim/--a/--b validator: `allowed` (the kinds of runtime::Device::kinds() the option takes)
// is what --help shows. A name that is no simulator at all is a usage error listing them; a known
// simulator this build lacks (rtl without Verilator) passes, and the command explains how to build
// it (tools::check_sim_available).
// `timed`: the option takes only cycle and rtl (simcmp).
CLI::Validator sim_kind_validator(const std::vector<std::string>& allowed, const std::vector<std::string>& known,
                                  bool timed) {
  std::string desc = "{";
  for (size_t i = 0; i < allowed.size(); ++i) desc += (i ? "," : "") + allowed[i];
  desc += "}";
  return CLI::Validator(
      [allowed, known, timed](std::string& value) -> std::string {
        if (std::find(known.begin(), known.end(), value) != known.end()) return {};
        if (timed && value == "fsim") {
          return fmt::format("simcmp compares timed simulators: 'fsim' has no cycles (this build has {})",
                             or_list(allowed));
        }
        return fmt::format("unknown simulator {} (this build has {})", tessel::support::quote(value), or_list(allowed));
      },
      desc, "SIM");
}

// The --batch validator, on the text before CLI11 converts it (a conversion saturates: 10^20
// would be echoed back as 9223372036854775807): a decimal integer in [1, kMaxBatch].
constexpr int64_t kMaxBatch = 65536;
CLI::Validator batch_validator() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        int64_t v = 0;
        const char* end = value.data() + value.size();
        const auto [ptr, ec] = std::from_chars(value.data(), end, v);
        if (value.empty() || ptr != end || ec != std::errc() || v < 1 || v > kMaxBatch) {
          return fmt::format("{} is not a whole number from 1 to {}", tessel::support::quote(value), kMaxBatch);
        }
        return {};
      },
      fmt::format("1..{}", kMaxBatch), "BATCH");
}

int fail(const std::string& msg, int code) {
  // The message is printed as its author wrote it: never re-cased (a file name 'Short_Input.bin'
  // must not become another file's name).
  // A last guard for the terminal: no control byte or broken UTF-8 from an input is printed raw,
  // even in a part of a message that did not quote() it.
  const std::string m = tessel::support::escape_control(one_line(msg));
  std::cout.flush();
  std::cerr << "error: " << m << "\n";
  return code;
}

// --help and --version print on standard output: text that did not reach it (a full disk, a
// closed pipe) is an error, exit code 1, as for every command's results.
int printed(int rc) {
  if (const std::string lost = tessel::support::check_stdout(); !lost.empty()) return fail(lost, 1);
  return rc;
}

// The first option (of the app or a subcommand that was used) that takes a value and was given
// an empty one, as "--output" / "model"; "" when there is none.
std::string empty_option_value(const CLI::App& app) {
  std::vector<const CLI::App*> apps{&app};
  for (const CLI::App* sub : app.get_subcommands()) apps.push_back(sub);
  for (const CLI::App* a : apps) {
    for (const CLI::Option* opt : a->get_options()) {
      if (opt->get_type_size_max() == 0) continue;  // a flag
      for (const std::string& v : opt->results()) {
        if (v.empty()) {
          const std::string name = opt->get_name(false, true);
          return opt->get_positional() ? fmt::format("the {} argument of tessel {}", name, a->get_name())
                                       : fmt::format("{} of tessel {}", opt->get_name(), a->get_name());
        }
      }
    }
  }
  return {};
}

}  // namespace

// " (see tessel SUB --help)" for the subcommand the command line named, where its options are
// listed; " (see tessel --help)" when it named none.
std::string help_hint(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) return fmt::format(" (see tessel {} --help)", sub->get_name());
  return " (see tessel --help)";
}

/// Help of --approximate-requant (run and compile).
constexpr const char* kApproximateRequantHelp =
    "requantise with one 32-bit multiplier per channel (fewer ALU instructions; an output may be 1 LSB off "
    "round(acc * scale) near a rounding boundary, within the worst-case error the requant pass states) instead of "
    "exactly";

int main(int argc, char** argv) {
  using namespace tessel::tools;
  CLI::App app{"tessel: compile ONNX models for a VTA-style accelerator and run them on its simulators"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tessel 0.1.0");

  // Simulators: --help offers the kinds this build has (runtime::Device::kinds()).
  const std::vector<std::string> built = tessel::runtime::Device::kinds();
  std::vector<std::string> built_timed;
  for (const std::string& k : built) {
    if (k != "fsim") built_timed.push_back(k);
  }
  std::vector<std::string> built_described;
  for (const std::string& k : built) built_described.push_back(describe_kind(k));
  const std::string sim_help = "simulator: " + or_list(built_described);
  const CLI::Validator any_sim = sim_kind_validator(built, {"fsim", "cycle", "rtl"}, false);
  const CLI::Validator timed_sim = sim_kind_validator(built_timed, {"cycle", "rtl"}, true);

  // ---- run ----
  RunOptions ro;
  std::string shape_text;
  CLI::App* run = app.add_subcommand("run", "compile a model, run it on a simulator, report accuracy and per-layer performance");
  run->add_option("model", ro.model, "ONNX model, or an executable (.tsx) from tessel compile")->required();
  run->add_option("--reference", ro.reference_model, "for an executable: the ONNX model to compare with in float");
  run->add_option("--input,-i", ro.inputs, "input tensor file(s) (.npy, or raw float32 .bin), one per graph input (required unless --dump-ir list)");
  run->add_option("--shape", shape_text, "shape of a raw .bin input, e.g. 1,3,224,224");
  run->add_flag("--nhwc", ro.nhwc, "input files are NHWC; transpose them to the model's NCHW");
  run->add_option("--batch", ro.batch, "value of symbolic batch dimensions")->check(batch_validator())->capture_default_str();
  run->add_option("--sim", ro.sim, sim_help)->check(any_sim)->capture_default_str();
  run->add_option("--config", ro.config_path, "hardware configuration file: JSON with VTA keys (default: VTA's defaults)");
  run->add_option("--output,-o", ro.output_path, "write the output tensor(s) as .npy");
  run->add_option("--report-json", ro.report_json, "write the report as JSON");
  run->add_option("--labels", ro.labels_path, "class labels, one per line");
  run->add_option("--calib", ro.calib, "calibration input files for float models (default: the run input)");
  bool run_no_offload = false;
  run->add_flag("--no-offload", run_no_offload, "run every layer on the CPU");
  run->add_flag("--approximate-requant", ro.approximate_requant, kApproximateRequantHelp);
  run->add_option("--dump-ir", ro.dump_ir, "print the IR after this pass ('all': after every pass; 'list': list the passes and exit)");
  run->add_flag("--time-passes", ro.time_passes, "print every pass's time (graph passes, and the per-layer passes summed over layers)");

  // ---- compile ----
  CompileCmdOptions co;
  CLI::App* compile = app.add_subcommand("compile", "compile a model into an executable (.tsx)");
  compile->add_option("model", co.model, "ONNX model")->required();
  compile->add_option("-o,--output", co.output_path, "output executable (required unless --dump-ir list)");
  compile->add_option("--config", co.config_path, "hardware configuration file: JSON with VTA keys (default: VTA's defaults)");
  compile->add_option("--calib", co.calib, "calibration input files (required for float models)");
  compile->add_flag("--nhwc", co.nhwc, "calibration files are NHWC");
  compile->add_option("--batch", co.batch, "value of symbolic batch dimensions")->check(batch_validator())->capture_default_str();
  bool compile_no_offload = false;
  compile->add_flag("--no-offload", compile_no_offload, "place every layer on the CPU");
  compile->add_flag("--approximate-requant", co.approximate_requant, kApproximateRequantHelp);
  compile->add_option("--dump-ir", co.dump_ir, "print the IR after this pass ('all': after every pass; 'list': list the passes and exit)");
  compile->add_flag("--time-passes", co.time_passes, "print every pass's time (graph passes, and the per-layer passes summed over layers)");

  // ---- asm / disasm ----
  std::string asm_in, asm_out, asm_config;
  CLI::App* as = app.add_subcommand("asm", "assemble a text program into a binary Program");
  as->add_option("input", asm_in, "assembler text (.s)")->required();
  as->add_option("-o,--output", asm_out, "output Program binary")->required();
  as->add_option("--config", asm_config, "hardware configuration file: JSON with VTA keys (default: VTA's defaults)");
  std::string disasm_in;
  CLI::App* disasm = app.add_subcommand("disasm", "print a binary Program as assembler text");
  disasm->add_option("program", disasm_in, "Program binary")->required();

  // ---- sim ----
  SimCmdOptions so;
  CLI::App* simc = app.add_subcommand("sim", "verify and run one Program on a simulator");
  simc->add_option("program", so.program_path, "Program binary or assembler text")->required();
  simc->add_option("--sim", so.sim, sim_help)->check(any_sim)->capture_default_str();
  simc->add_option("--config", so.config_path, "hardware configuration file: JSON with VTA keys, for text programs (default: VTA's defaults)");
  simc->add_option("--segment", so.segments, "name=file: raw bytes for an input segment (appended when the program has none of that name)");
  simc->add_option("--alloc", so.allocs, "name=BYTES: append a zero-filled output segment");
  simc->add_option("--dump-segment", so.dump_segments, "name=file: write a segment's bytes after the run");
  simc->add_option("--wave", so.wave, "rtl: write an FST waveform of the run to FILE (.fst)");
  simc->add_option("--wave-cycles", so.wave_cycles, "rtl: with --wave, dump only cycles FIRST:LAST (or FIRST:)");
  simc->add_option("--trace", so.trace, "cycle: write a Chrome/Perfetto trace (JSON) of the run to FILE");
  simc->add_flag("--all-errors", so.all_errors, "list every problem the verifier finds (default: the first and a count)");

  // ---- simcmp ----
  SimcmpOptions sco;
  // Compare the cycle model with the RTL; without an RTL in this build, the cycle model with itself.
  if (std::find(built.begin(), built.end(), "rtl") == built.end()) sco.b = "cycle";
  CLI::App* simcmp = app.add_subcommand("simcmp", "run one Program on two timed simulators and compare them cycle by cycle");
  simcmp->add_option("program", sco.program_path, "Program binary or assembler text")->required();
  simcmp->add_option("--a", sco.a, "first simulator: " + or_list(built_timed))->check(timed_sim)->capture_default_str();
  simcmp->add_option("--b", sco.b, "second simulator: " + or_list(built_timed))->check(timed_sim)->capture_default_str();
  simcmp->add_option("--config", sco.config_path, "hardware configuration file: JSON with VTA keys, for text programs (default: VTA's defaults)");
  simcmp->add_option("--segment", sco.segments, "name=file: raw bytes for an input segment (as tessel sim)");
  simcmp->add_option("--alloc", sco.allocs, "name=BYTES: append a zero-filled output segment (as tessel sim)");
  simcmp->add_flag("--all-errors", sco.all_errors, "list every problem the verifier finds (as tessel sim)");

  // ---- config ----
  std::string cfg_path;
  bool cfg_print = false;
  CLI::App* config = app.add_subcommand("config", "show the hardware configuration");
  config->add_flag("--print", cfg_print,
                   "print the effective configuration as JSON (what tessel config does; the flag may be left out)");
  config->add_option("--config", cfg_path, "hardware configuration file: JSON with VTA keys (default: VTA's defaults)");

  if (argc > 1 && argv[1][0] != '-') {
    const std::string sub = argv[1];
    bool known = false;
    for (const CLI::App* a : app.get_subcommands({})) known = known || a->get_name() == sub;
    if (!known) {
      return fail(fmt::format("unknown subcommand {} (run, compile, asm, disasm, sim, simcmp, config; see tessel --help)",
                              tessel::support::quote(sub)),
                  2);
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return printed(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return printed(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return printed(app.exit(e));
  } catch (const CLI::ParseError& e) {
    return fail(std::string(e.what()) + help_hint(app), 2);
  }
  // An option given an empty value ("--output ''") names no file, pass or shape: a usage error
  // naming the option, for every option that takes a value, of every subcommand.
  if (const std::string empty = empty_option_value(app); !empty.empty()) {
    return fail(fmt::format("{} was given an empty value{}", empty, help_hint(app)), 2);
  }
  // Options that are required unless --dump-ir list (which only lists the passes): the same
  // usage error as CLI11's own for a missing required option.
  if (*compile && co.dump_ir != "list" && co.output_path.empty()) {
    return fail("--output is required" + help_hint(app), 2);
  }
  if (*run && ro.dump_ir != "list" && ro.inputs.empty()) return fail("--input is required" + help_hint(app), 2);
  // An unknown --dump-ir pass is a bad option value, as CLI11's own checks: a usage error.
  for (const std::string* d : {&ro.dump_ir, &co.dump_ir}) {
    if (const std::string e = tessel::tools::dump_ir_error(*d); !e.empty()) return fail(e + help_hint(app), 2);
  }

  // Runs the chosen command; its results on standard output must have reached it (a full disk or
  // a closed pipe is an error, exit code 1).
  const auto finish = [](int rc) {
    if (const std::string lost = tessel::support::check_stdout(); !lost.empty()) return fail(lost, 1);
    return rc;
  };
  try {
    if (*run) {
      if (!shape_text.empty()) ro.shape = tessel::support::parse_shape(shape_text);
      ro.offload = !run_no_offload;
      ro.label_search_dirs = {".", TESSEL_SOURCE_DIR};
      return finish(run_command(ro, std::cout));
    }
    if (*compile) {
      co.offload = !compile_no_offload;
      return finish(compile_command(co, std::cout));
    }
    if (*as) return finish(asm_command(asm_in, asm_out, asm_config, std::cout));
    if (*disasm) return finish(disasm_command(disasm_in, std::cout));
    if (*simc) return finish(sim_command(so, std::cout, std::cerr));
    if (*simcmp) return finish(simcmp_command(sco, std::cout));
    if (*config) return finish(config_command(cfg_path, std::cout));
  } catch (const tessel::runtime::StepMismatchError& e) {
    // An executable whose accelerator step disagrees with its own CPU reference: exit code 3.
    return fail(e.what(), 3);
  } catch (const tessel::Error& e) {
    return fail(e.what(), 1);
  } catch (const std::bad_alloc&) {
    // Sizes that come from input are bounded before they are allocated (named errors); an
    // allocation that still fails is the machine's limit, said with the command it stopped.
    std::string sub;
    for (const CLI::App* a : app.get_subcommands()) sub = a->get_name();
    return fail(fmt::format("out of memory: tessel {} could not allocate what it needed (the machine's memory or "
                            "a ulimit is smaller than this input needs)",
                            sub),
                1);
  } catch (const std::exception& e) {
    // Every input error is a tessel::Error raised where it is found; anything else is a bug.
    // The library's own text is no message for users; TESSEL_DEBUG=1 adds it for whoever fixes
    // the bug.
    int status = 0;
    char* demangled = abi::__cxa_demangle(typeid(e).name(), nullptr, nullptr, &status);
    const std::string type = status == 0 && demangled != nullptr ? demangled : typeid(e).name();
    std::free(demangled);
    const char* debug = std::getenv("TESSEL_DEBUG");
    return fail(fmt::format("internal error: an unexpected {} escaped from tessel {} (a bug: please report the "
                            "command line){}",
                            type, app.get_subcommands().empty() ? "" : app.get_subcommands()[0]->get_name(),
                            debug != nullptr && *debug != '\0' ? fmt::format(": {}", e.what()) : ""),
                1);
  }
  return fail("no subcommand given (see tessel --help)", 2);
}
