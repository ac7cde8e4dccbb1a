// `tessel asm`, `tessel disasm` and `tessel sim`: single Programs.
#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <functional>
#include <tuple>

#include "isa/asm.h"
#include "isa/program.h"
#include "isa/verifier.h"
#include "runtime/device.h"
#include "sim/common/timeline.h"
#ifdef TESSEL_HAVE_CYCLE_SIM
#include "sim/cycle/cycle_sim.h"
#endif
#ifdef TESSEL_HAVE_RTL_SIM
#include "sim/rtl/rtl_sim.h"
#endif
#include "support/error.h"
#include "support/file_read.h"
#include "support/npy.h"
#include "support/text.h"
#include "tools/commands.h"
#include "tools/report.h"

namespace tessel::tools {
namespace {

constexpr char kProgramMagic[] = "TSLPROG1";
constexpr char kExecutableMagic[] = "TSLEXEC1";  // runtime::Executable::serialize

bool is_program_binary(const std::vector<uint8_t>& bytes) {
  return bytes.size() >= 8 && std::memcmp(bytes.data(), kProgramMagic, 8) == 0;
}

// A compiled Executable (`tessel compile`) given where a Program is expected: say what it is.
void reject_executable(const std::vector<uint8_t>& bytes, const std::string& path) {
  if (bytes.size() >= 8 && std::memcmp(bytes.data(), kExecutableMagic, 8) == 0) {
    throw_user_error("{} is a compiled Executable (TSLEXEC1), not a Program: run it with `tessel run {} "
                     "--input FILE`",
                     support::quote(path), path);
  }
}

std::string stem_of(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  const size_t dot = name.find_last_of('.');
  return dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
}

isa::Program load_program_binary(const std::string& path) {
  const std::vector<uint8_t> bytes = support::read_file_bounded(path, support::kMaxProgramFileBytes, "a Program binary");
  reject_executable(bytes, path);
  if (!is_program_binary(bytes)) {
    throw_user_error("{} is not a Program binary (no TSLPROG1 header; {} bytes)", support::quote(path), bytes.size());
  }
  try {
    return isa::Program::deserialize(bytes);
  } catch (const UserError& e) {
    throw UserError(fmt::format("{}: {}", support::quote(path), e.what()));
  }
}

// Assembles a text file. The configuration is --config's when given, else the text's `.config`,
// else the defaults. With both, the `.config` must describe the same hardware
// (HwConfig::same_hardware) and the run-time settings are --config's.
isa::Program assemble_file(const std::string& path, const std::string& config_path) {
  const std::vector<uint8_t> bytes = support::read_file_bounded(path, support::kMaxTextFileBytes, "assembler text");
  reject_executable(bytes, path);
  if (is_program_binary(bytes)) {
    throw_user_error("{} is already a Program binary (TSLPROG1), not assembler text: `tessel disasm {}` shows it, "
                     "`tessel sim` runs it",
                     support::quote(path), path);
  }
  // Assembler text is text: a NUL or another control byte (other than tab, carriage return, form
  // feed and newline) is an error naming its line and column.
  size_t line = 1, column = 1;
  for (uint8_t b : bytes) {
    if (b == '\n') {
      ++line;
      column = 1;
      continue;
    }
    if ((b < 0x20 && b != '\t' && b != '\r' && b != '\f') || b == 0x7f) {
      throw_user_error("{} line {}, column {}: byte 0x{:02x} is not assembler text (nor is the file a Program "
                       "binary)",
                       support::quote(path), line, column, b);
    }
    ++column;
  }
  const std::string text(bytes.begin(), bytes.end());
  try {
    const isa::AsmListing listing = isa::parse_asm(text);
    if (!listing.config) return isa::assemble(text, load_config(config_path), stem_of(path));
    if (config_path.empty()) return isa::assemble(text, *listing.config, stem_of(path));
    const isa::HwConfig given = load_config(config_path);
    if (!listing.config->same_hardware(given)) {
      throw_user_error("line {}: .config {} describes other hardware than --config {} ({})", listing.config_line,
                       listing.config->label(), config_path,
                       isa::config_differences(*listing.config, given.with_run_settings(*listing.config)));
    }
    isa::Program p = isa::assemble(text, *listing.config, stem_of(path));
    p.config = p.config.with_run_settings(given);
    return p;
  } catch (const UserError& e) {
    throw UserError(fmt::format("{}: {}", support::quote(path), e.what()));
  }
}

// Parses the BYTES of --alloc name=BYTES: a positive decimal count no larger than the device DRAM.
uint64_t parse_alloc_bytes(const std::string& binding, const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
    throw_user_error("--alloc {}: {} is not a positive byte count", binding, support::quote(text));
  }
  uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range || v > kMaxDeviceDramBytes) {
    throw_user_error("--alloc {}: {} bytes is too large; the device DRAM holds at most {} bytes", binding, text,
                     kMaxDeviceDramBytes);
  }
  if (ec != std::errc() || ptr != text.data() + text.size() || v == 0) {
    throw_user_error("--alloc {}: {} is not a positive byte count", binding, support::quote(text));
  }
  return v;
}

// Splits "name=value" of `option`; `form` is how the option is written ("name=FILE",
// "name=BYTES") for the error message.
std::pair<std::string, std::string> split_binding(const std::string& s, const char* option, const char* form) {
  const size_t eq = s.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == s.size()) {
    throw_user_error("{} {} must have the form {}", option, support::quote(s), form);
  }
  return {s.substr(0, eq), s.substr(eq + 1)};
}

// Every LOAD must read inside one segment of the Program and every STORE must write inside one
// output segment (image-relative bytes): segments are laid out in command-line order, so a
// --segment file larger than the stream expects, or a missing --alloc, would otherwise move the
// data under a fixed dram_base and a STORE would silently overwrite an input. Throws UserError
// naming the instruction, its byte range and the segment layout.
void check_segment_footprints(const isa::Program& p) {
  auto layout = [&] {
    std::string s;
    for (const isa::Segment& seg : p.segments) {
      s += fmt::format("{}{} {} [{}, {})", s.empty() ? "" : ", ", seg.name, isa::to_string(seg.kind),
                       seg.offset_bytes, seg.offset_bytes + seg.size_bytes);
    }
    return s;
  };
  for (size_t i = 0; i < p.insns.size(); ++i) {
    const isa::Instruction& in = p.insns[i];
    if ((in.opcode != isa::Opcode::kLoad && in.opcode != isa::Opcode::kStore) || in.x_size == 0 ||
        in.y_size == 0) {
      continue;
    }
    const bool store = in.opcode == isa::Opcode::kStore;
    for (uint32_t r = 0; r < in.y_size; ++r) {
      const auto [first, end] = isa::dram_row(p.config, in, r);
      const isa::Segment* inside = nullptr;
      for (const isa::Segment& seg : p.segments) {
        if (first >= seg.offset_bytes && end <= seg.offset_bytes + seg.size_bytes) inside = &seg;
      }
      if (inside && (!store || inside->kind == isa::SegmentKind::kOutput)) continue;
      throw_user_error(
          "insn {} ({} {}) {} image bytes [{}, {}) (row {}), which {}: the segment layout is {}; "
          "check the sizes of the --segment files and the --alloc sizes (segments follow each "
          "other in command-line order, each at a 4096-byte boundary)",
          i, isa::to_string(in.opcode), isa::to_string(in.mem_type), store ? "writes" : "reads", first, end, r,
          inside ? fmt::format("lie in {} segment {}, not an output segment", isa::to_string(inside->kind),
                               support::quote(inside->name))
                 : std::string("are not inside one segment"),
          layout());
    }
  }
}

// FNV-1a, 64 bit (Fowler, Noll, Vo): a short fingerprint of a segment's bytes.
uint64_t fnv1a64(const std::vector<uint8_t>& bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t b : bytes) {
    h ^= b;
    h *= 0x100000001b3ull;
  }
  return h;
}

// Turns the verifier's diagnostics (none: returns) into the command's UserError: the first
// problem and how many more there are; with all_errors every problem is first listed on `out`,
// numbered and with its rule. When a problem is a DRAM range error and the Program brought no
// data segments of its own (only_own_uops: from `tessel asm`, only its micro-ops), a hint names
// the segments it has and the options that add the missing ones; other problems get no hint.
void report_verifier_problems(const isa::Program& p, const std::vector<isa::Diagnostic>& diags, bool only_own_uops,
                              bool all_errors, std::ostream& out) {
  if (diags.empty()) return;
  bool dram_bounds = false;
  for (const isa::Diagnostic& d : diags) dram_bounds = dram_bounds || d.rule == isa::VerifyRule::kDramBounds;
  std::string msg = diags[0].message;
  if (all_errors) {
    out << fmt::format("verifier: {} problem{} in program {}\n", diags.size(), diags.size() == 1 ? "" : "s",
                       support::quote(p.name));
    for (size_t i = 0; i < diags.size(); ++i) {
      out << fmt::format("  {:>3}. [{}] {}\n", i + 1, isa::to_string(diags[i].rule), diags[i].message);
    }
    out.flush();
    if (diags.size() > 1) {
      msg += fmt::format(" (and {} more problem{}, listed above)", diags.size() - 1, diags.size() == 2 ? "" : "s");
    }
  } else if (diags.size() > 1) {
    msg += fmt::format(" (and {} more problem{}; --all-errors lists every one)", diags.size() - 1,
                       diags.size() == 2 ? "" : "s");
  }
  if (dram_bounds && only_own_uops) {
    if (p.segments.size() == 1) {
      msg += fmt::format(" (the program has only its {} segment: add its data with --segment NAME=FILE and "
                         "--alloc NAME=BYTES)",
                         support::quote(p.segments[0].name));
    } else {
      std::string names;
      for (size_t i = 1; i < p.segments.size(); ++i) {
        names += fmt::format("{}{}", i == 1 ? "" : ", ", support::quote(p.segments[i].name));
      }
      msg += fmt::format(" (the program brought only its {} segment and the command line added {}, {} image "
                         "bytes in all: add the rest of its data with --segment NAME=FILE and --alloc NAME=BYTES)",
                         support::quote(p.segments[0].name), names, p.image.size());
    }
  }
  throw UserError(msg);
}

// A Program ready to load: the binary or assembled text of o.program_path (with --config's
// run-time settings) with its --segment inputs and --alloc outputs, verified (isa::check_program,
// report_verifier_problems).
struct PreparedProgram {
  isa::Program p;
  std::vector<std::pair<std::string, std::vector<uint8_t>>> inputs;  ///< segment -> bytes
};

PreparedProgram prepare_program(const SimCmdOptions& o, std::ostream& out) {
  const std::vector<uint8_t> head = support::read_file_bounded(o.program_path, support::kMaxProgramFileBytes, "a Program binary or assembler text");
  PreparedProgram prep;
  isa::Program& p = prep.p;
  const bool binary = is_program_binary(head);
  if (binary) {
    p = load_program_binary(o.program_path);
    if (!o.config_path.empty()) {
      // The hardware keys are the Program's identity; the run-time settings are the run's.
      const isa::HwConfig cfg = load_config(o.config_path);
      if (!p.config.same_hardware(cfg)) {
        throw_user_error("{} was built for config {} but --config {} describes other hardware ({})",
                         support::quote(o.program_path), p.config.label(), support::quote(o.config_path),
                         isa::config_differences(p.config, cfg.with_run_settings(p.config)));
      }
      p.config = p.config.with_run_settings(cfg);
    }
  } else {
    p = assemble_file(o.program_path, o.config_path);
  }
  // Segments the Program brought itself: a Program from `tessel asm` has only its micro-ops.
  const bool only_own_uops = p.segments.size() == 1;

  // Input data. --segment NAME=FILE writes FILE into the input segment NAME when the Program has
  // one, else appends a new input segment holding FILE; then each --alloc appends a zero-filled
  // output segment. Binary Programs and assembler text are treated alike, in command-line order.
  auto& inputs = prep.inputs;
  const auto has_segment = [&](const std::string& name) {
    for (const isa::Segment& seg : p.segments) {
      if (seg.name == name) return true;
    }
    return false;
  };
  for (const std::string& binding : o.segments) {
    const auto [name, file] = split_binding(binding, "--segment", "name=FILE");
    for (const auto& [done, data] : inputs) {
      if (done == name) throw_user_error("--segment {}: segment {} is given twice", binding, support::quote(name));
    }
    std::vector<uint8_t> data = support::read_file_bounded(file, kMaxDeviceDramBytes, "--segment data (the device DRAM)");
    if (!has_segment(name)) {
      if (data.size() > kMaxDeviceDramBytes) {
        throw_user_error("--segment {}: {} holds {} bytes, more than the device DRAM ({} bytes)", binding, file,
                         data.size(), kMaxDeviceDramBytes);
      }
      p.add_segment(name, isa::SegmentKind::kInput, data.size());
    }
    const isa::Segment& seg = p.segment(name);
    if (seg.kind != isa::SegmentKind::kInput) {
      throw_user_error("--segment {}: segment {} is a {} segment; only input segments can be written",
                       binding, support::quote(name), isa::to_string(seg.kind));
    }
    if (data.size() > seg.size_bytes) {
      throw_user_error("--segment {}: {} holds {} bytes but segment {} holds {} bytes", binding, file,
                       data.size(), support::quote(name), seg.size_bytes);
    }
    inputs.emplace_back(name, std::move(data));
  }
  for (const std::string& binding : o.allocs) {
    const auto [name, size_text] = split_binding(binding, "--alloc", "name=BYTES");
    const uint64_t size = parse_alloc_bytes(binding, size_text);
    if (has_segment(name)) throw_user_error("--alloc {}: segment {} already exists", binding, support::quote(name));
    p.add_segment(name, isa::SegmentKind::kOutput, size);
  }
  if (dram_bytes_for({p}) > kMaxDeviceDramBytes) {
    throw_user_error("program {} needs {} bytes of device DRAM with its segments, more than the {} bytes "
                     "the device has",
                     support::quote(p.name), dram_bytes_for({p}), kMaxDeviceDramBytes);
  }
  // The device loads a non-empty image; a program without micro-ops or segments (e.g. FINISH
  // alone) gets one zero-filled alignment block in its (empty) uop segment so that it runs.
  if (p.image.empty() && !p.segments.empty()) {
    p.segments.front().size_bytes = isa::kImageAlign;
    p.image.assign(isa::kImageAlign, 0);
  }
  for (const std::string& binding : o.dump_segments) {
    const std::string name = split_binding(binding, "--dump-segment", "name=FILE").first;
    if (!has_segment(name)) throw_user_error("--dump-segment {}: program {} has no segment {}", binding, support::quote(p.name), support::quote(name));
  }
  report_verifier_problems(p, isa::check_program(p), only_own_uops, o.all_errors, out);
  check_segment_footprints(p);
  return prep;
}

// Parses --wave-cycles "A:B" (or "A:" for A to the end of the run), cycles relative to launch.
std::pair<uint64_t, uint64_t> parse_wave_cycles(const std::string& text) {
  const size_t colon = text.find(':');
  auto number = [&](const std::string& part, uint64_t& v) {
    const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    return !part.empty() && ec == std::errc() && ptr == part.data() + part.size();
  };
  uint64_t a = 0, b = UINT64_MAX;
  if (colon == std::string::npos || !number(text.substr(0, colon), a) ||
      (colon + 1 < text.size() && !number(text.substr(colon + 1), b))) {
    throw_user_error("--wave-cycles {} must be FIRST:LAST or FIRST: (cycles, e.g. 0:5000)", support::quote(text));
  }
  if (a > b) throw_user_error("--wave-cycles {}: the first cycle {} is after the last {}", text, a, b);
  return {a, b};
}

// --wave/--wave-cycles are for rtl, --trace for cycle; output paths must be writable.
void check_sim_output_options(const SimCmdOptions& o) {
  if (!o.wave.empty() && o.sim != "rtl") {
    throw_user_error("--wave {} needs --sim rtl (waveforms come from the RTL; simulator is {})", o.wave, o.sim);
  }
  if (!o.wave_cycles.empty() && o.wave.empty()) {
    throw_user_error("--wave-cycles {} needs --wave FILE", o.wave_cycles);
  }
  if (!o.trace.empty() && o.sim != "cycle") {
    throw_user_error("--trace {} needs --sim cycle (the Perfetto trace is the cycle model's; simulator is {})",
                     o.trace, o.sim);
  }
  if (!o.wave.empty()) {
    check_output_path(o.wave, "--wave");
    if (o.wave.size() < 4 || o.wave.compare(o.wave.size() - 4, 4, ".fst") != 0) {
      throw_user_error("--wave {}: the waveform is FST and its file name must end in .fst", o.wave);
    }
  }
  if (!o.trace.empty()) check_output_path(o.trace, "--trace");
  if (!o.wave_cycles.empty()) parse_wave_cycles(o.wave_cycles);
}


// A device of kind `kind` whose simulator honours --wave/--wave-cycles/--trace, and (for the
// timed simulators, when record_trace) gives its per-instruction timeline after each run.
struct ToolDevice {
  std::unique_ptr<runtime::Device> device;
  std::function<std::vector<sim::InsnTiming>()> timeline;  ///< empty for fsim
};

ToolDevice make_tool_device(const std::string& kind, const SimCmdOptions& o, const isa::HwConfig& cfg,
                            uint64_t dram_bytes, bool record_trace) {
  ToolDevice d;
  if (kind == "cycle") {
#ifdef TESSEL_HAVE_CYCLE_SIM
    sim::CycleSimOptions opt;
    opt.record_trace = record_trace;
    opt.perfetto_path = o.trace;
    std::unique_ptr<sim::CycleSimulator> s = sim::make_cycle_sim(cfg, opt);
    const sim::CycleSimulator* raw = s.get();
    d.timeline = [raw] { return raw->trace(); };
    d.device = runtime::Device::create(std::move(s), cfg, dram_bytes);
    return d;
#endif
  } else if (kind == "rtl") {
#ifdef TESSEL_HAVE_RTL_SIM
    sim::RtlSimOptions opt;
    opt.record_trace = record_trace;
    opt.wave_path = o.wave;
    if (!o.wave_cycles.empty()) {
      std::tie(opt.wave_first_cycle, opt.wave_last_cycle) = parse_wave_cycles(o.wave_cycles);
    }
    std::unique_ptr<sim::RtlSimulator> s = sim::make_rtl_sim(cfg, opt);
    const sim::RtlSimulator* raw = s.get();
    d.timeline = [raw] { return raw->trace(); };
    d.device = runtime::Device::create(std::move(s), cfg, dram_bytes);
    return d;
#endif
  }
  d.device = runtime::Device::create(kind, cfg, dram_bytes);  // fsim, or the "not in this build" error
  return d;
}

}  // namespace

int asm_command(const std::string& in_path, const std::string& out_path, const std::string& config_path,
                std::ostream& out) {
  check_output_path(out_path, "--output");
  check_distinct_files({{"--output", out_path}}, {{"input", in_path}, {"--config", config_path}});
  const isa::Program p = assemble_file(in_path, config_path);
  const std::vector<uint8_t> bytes = p.serialize();
  support::write_file_bytes(out_path, bytes);
  out << fmt::format("assembled {}: {} instructions, {} micro-ops, config {} -> {} ({} bytes)\n",
                     support::escape_bytes(in_path), p.insns.size(), p.uops.size(), p.config.label(), support::escape_bytes(out_path), bytes.size());
  return 0;
}

int disasm_command(const std::string& in_path, std::ostream& out) {
  out << isa::disassemble(load_program_binary(in_path));
  return 0;
}

int sim_command(const SimCmdOptions& o, std::ostream& out, std::ostream& warn) {
  check_sim_available(o.sim, runtime::Device::kinds());
  for (const std::string& binding : o.dump_segments) {
    check_output_path(split_binding(binding, "--dump-segment", "name=FILE").second, "--dump-segment");
  }
  check_sim_output_options(o);
  {
    std::vector<FileRole> outs = {{"--wave", o.wave}, {"--trace", o.trace}};
    for (const std::string& binding : o.dump_segments) {
      outs.push_back({"--dump-segment", split_binding(binding, "--dump-segment", "name=FILE").second});
    }
    std::vector<FileRole> ins = {{"program", o.program_path}, {"--config", o.config_path}};
    for (const std::string& binding : o.segments) {
      ins.push_back({"--segment", split_binding(binding, "--segment", "name=FILE").second});
    }
    check_distinct_files(outs, ins);
  }
  PreparedProgram prep = prepare_program(o, out);
  const isa::Program& p = prep.p;
  const auto& inputs = prep.inputs;
  runtime::Device::check_kind(o.sim, p.config);

  out << fmt::format("program   {} ({} instructions, {} micro-ops, {} image bytes)\n", support::escape_bytes(p.name), p.insns.size(),
                     p.uops.size(), p.image.size());
  out << fmt::format("config    {}\n", p.config.label());
  out << fmt::format("simulator {}\n", o.sim);
  for (const isa::Segment& seg : p.segments) {
    out << fmt::format("segment   {:<12} {:<7} bytes [{}, {})\n", support::escape_bytes(seg.name), isa::to_string(seg.kind),
                       seg.offset_bytes, seg.offset_bytes + seg.size_bytes);
  }

  std::unique_ptr<runtime::Device> device = make_tool_device(o.sim, o, p.config, dram_bytes_for({p}), false).device;
  const runtime::LoadedProgram lp = device->load(p);
  for (const auto& [name, data] : inputs) {
    device->copy_to_device(lp.segment_addr(p, name), data.data(), data.size());
  }
  device->submit(lp);
  const sim::RunStats st = device->wait();

  if (st.cycles) {
    out << fmt::format("cycles    {} ({:.3f} us at {} MHz)\n", st.cycles, st.cycles / p.config.clock_mhz,
                       p.config.clock_mhz);
  } else {
    out << "cycles    - (fsim is functional: no timing)\n";
  }
  const sim::Counters& c = st.counters;
  out << "counters\n";
  out << fmt::format("  insn_count        {}\n", c.insn_count);
  out << fmt::format("  inp_load_nbytes   {}\n", c.inp_load_nbytes);
  out << fmt::format("  wgt_load_nbytes   {}\n", c.wgt_load_nbytes);
  out << fmt::format("  acc_load_nbytes   {}\n", c.acc_load_nbytes);
  out << fmt::format("  uop_load_nbytes   {}\n", c.uop_load_nbytes);
  out << fmt::format("  out_store_nbytes  {}\n", c.out_store_nbytes);
  out << fmt::format("  gemm_counter      {}\n", c.gemm_counter);
  out << fmt::format("  alu_counter       {}\n", c.alu_counter);
  if (st.cycles) out << module_stats_table(o.sim, st);
  for (const isa::Segment& seg : p.segments) {
    if (seg.kind != isa::SegmentKind::kOutput) continue;
    std::vector<uint8_t> bytes(seg.size_bytes);
    device->copy_from_device(bytes.data(), lp.segment_addr(p, seg.name), bytes.size());
    out << fmt::format("segment {} (output, {} bytes): fnv1a64 {:016x}\n", support::escape_bytes(seg.name), bytes.size(), fnv1a64(bytes));
  }
  for (const std::string& binding : o.dump_segments) {
    const auto [name, file] = split_binding(binding, "--dump-segment", "name=FILE");
    const isa::Segment& seg = p.segment(name);
    std::vector<uint8_t> bytes(seg.size_bytes);
    device->copy_from_device(bytes.data(), lp.segment_addr(p, name), bytes.size());
    support::write_file_bytes(file, bytes);
    out << fmt::format("wrote segment {} ({} bytes) to {}\n", support::escape_bytes(name), bytes.size(), support::escape_bytes(file));
  }
  device->unload(lp);
  if (!o.wave.empty() && !o.wave_cycles.empty()) {
    const uint64_t first = parse_wave_cycles(o.wave_cycles).first;
    // Cycles 0 .. st.cycles are clocked (st.cycles: the cycle `done` is first high).
    if (first > st.cycles) {
      out.flush();
      warn << fmt::format("warning: --wave-cycles {} starts after the run's last cycle {}: nothing was dumped "
                          "({} holds no cycles; the run has cycles 0..{})\n",
                          o.wave_cycles, st.cycles, o.wave, st.cycles);
    }
  }
  return 0;
}

int simcmp_command(const SimcmpOptions& o, std::ostream& out) {
  for (const std::string& kind : {o.a, o.b}) {
    if (kind != "cycle" && kind != "rtl") {
      throw_user_error("simcmp compares the timed simulators: {} is not cycle or rtl", support::quote(kind));
    }
    check_sim_available(kind, runtime::Device::kinds());
  }
  SimCmdOptions so;
  so.program_path = o.program_path;
  so.config_path = o.config_path;
  so.segments = o.segments;
  so.allocs = o.allocs;
  so.all_errors = o.all_errors;
  const PreparedProgram prep = prepare_program(so, out);
  const isa::Program& p = prep.p;
  runtime::Device::check_kind(o.a, p.config);
  runtime::Device::check_kind(o.b, p.config);

  struct Side {
    std::string name;
    ToolDevice dev;
    runtime::LoadedProgram lp;
    sim::RunStats stats;
    std::vector<sim::InsnTiming> timeline;
  };
  std::vector<Side> sides;
  for (const std::string& kind : {o.a, o.b}) {
    Side s;
    s.name = kind;
    s.dev = make_tool_device(kind, so, p.config, dram_bytes_for({p}), true);
    s.lp = s.dev.device->load(p);
    for (const auto& [name, data] : prep.inputs) {
      s.dev.device->copy_to_device(s.lp.segment_addr(p, name), data.data(), data.size());
    }
    s.dev.device->submit(s.lp);
    s.stats = s.dev.device->wait();
    s.timeline = s.dev.timeline();
    sides.push_back(std::move(s));
  }
  Side& a = sides[0];
  Side& b = sides[1];
  // Same labels for a self-comparison would make the message ambiguous.
  const std::string a_name = a.name == b.name ? a.name + " (a)" : a.name;
  const std::string b_name = a.name == b.name ? b.name + " (b)" : b.name;
  int status = 0;
  if (const auto div = sim::compare_timelines(a.timeline, b.timeline, a_name, b_name)) {
    out << fmt::format("first divergence at cycle {}: {}\n", div->cycle, div->message);
    status = 1;
  } else if (a.stats.cycles != b.stats.cycles) {
    out << fmt::format("cycles differ: {} {}, {} {} (every instruction's timing agrees)\n", a_name, a.stats.cycles,
                       b_name, b.stats.cycles);
    status = 1;
  }
  for (const isa::Segment& seg : p.segments) {
    std::vector<uint8_t> ba(seg.size_bytes), bb(seg.size_bytes);
    a.dev.device->copy_from_device(ba.data(), a.lp.segment_addr(p, seg.name), ba.size());
    b.dev.device->copy_from_device(bb.data(), b.lp.segment_addr(p, seg.name), bb.size());
    if (ba == bb) continue;
    size_t first = 0, count = 0;
    for (size_t i = 0; i < ba.size(); ++i) {
      if (ba[i] != bb[i]) {
        if (count++ == 0) first = i;
      }
    }
    out << fmt::format("dram differs: segment {} byte {}: {} 0x{:02x}, {} 0x{:02x} ({} of {} bytes differ)\n",
                       support::quote(seg.name), first, a_name, ba[first], b_name, bb[first], count, ba.size());
    status = 1;
  }
  if (!(a.stats.counters == b.stats.counters)) {
    out << fmt::format("counters differ: {} counts {} instructions, {} counts {}\n", a_name,
                       a.stats.counters.insn_count, b_name, b.stats.counters.insn_count);
    status = 1;
  }
  if (status == 0) {
    out << fmt::format("identical: {} instruction{}, {} cycles ({} and {}; dram segments bit-identical)\n",
                       a.timeline.size(), a.timeline.size() == 1 ? "" : "s", a.stats.cycles, a_name, b_name);
  }
  for (Side& s : sides) s.dev.device->unload(s.lp);
  return status;
}

}  // namespace tessel::tools
