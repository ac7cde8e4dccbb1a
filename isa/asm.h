// A text assembler and disassembler for Tessel/VTA instruction streams and micro-op tables.
//
// One statement per line; '#' starts a comment; blank lines are ignored. Mnemonics, memory types
// and ALU ops are case-insensitive; keys are lower-case. Numbers are decimal or 0x-hex; only imm
// may be negative. Omitted keys are zero. Canonical form (what disasm prints, in this order):
//
//   LOAD <UOP|WGT|INP|ACC|ACC_8BIT|OUT> sram=S dram=D y=Y x=X stride=T [pad=YP0,YP1,XP0,XP1] [deps=F]
//   STORE <type> sram=S dram=D y=Y x=X stride=T [pad=...] [deps=F]
//   GEMM uop=BGN:END iter=OUT,IN dst=OUT,IN src=OUT,IN wgt=OUT,IN [reset] [deps=F]
//   ALU <MIN|MAX|ADD|SHR|MUL> uop=BGN:END iter=OUT,IN dst=OUT,IN src=OUT,IN [imm=N] [use_imm=0] [reset] [deps=F]
//   FINISH [deps=F]
//   .uop DST SRC WGT
//   .name NAME                      (at most once: the Program's name; NAME has no spaces, or is
//                                    quoted as support::quote writes it: '...' with \xNN, \\, \')
//   .config {"LOG_INP_WIDTH":3,...} (at most once: the HwConfig as one-line JSON, HwConfig::from_json)
//
// A UTF-8 byte order mark (EF BB BF) at the start of the text is skipped; a '\r' before a '\n'
// is white space.
// F is a '|'-separated subset of pop_prev, pop_next, push_prev, push_next (printed in that
// order). For ALU, imm=N selects the immediate operand (use_imm = 1); `use_imm=0` after it keeps
// the value but selects ACC[src] (only needed to show raw decoded bits). `.uop` lines append to
// the micro-op table in order; they may appear anywhere. Units are those of isa/instruction.h:
// SRAM rows, DRAM elements of the memory type, strides in elements.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "isa/config.h"
#include "isa/instruction.h"
#include "isa/program.h"

namespace tessel::isa {

/// The result of parsing assembler text: the stream, the micro-op table, and the 1-based source
/// line of each entry (for error messages of later checks).
struct AsmListing {
  std::vector<Instruction> insns;
  std::vector<Uop> uops;
  std::vector<int> insn_lines;  ///< insn_lines[i] = line of insns[i]
  std::vector<int> uop_lines;   ///< uop_lines[i] = line of uops[i]
  std::optional<std::string> name;      ///< from a `.name` directive
  std::optional<HwConfig> config;       ///< from a `.config` directive (validated)
  int config_line = 0;                  ///< line of the `.config` directive (0 if none)
};

/// Parses assembler text (syntax only: values must fit uint32_t, imm int32_t; field widths are
/// checked by assemble()). Throws UserError "line N: ..." naming the offending token, a repeated
/// `.name`/`.config`, or a `.config` that HwConfig::from_json rejects.
AsmListing parse_asm(std::string_view text);

/// One instruction in canonical form, without a newline. Fields outside the instruction's format
/// are not printed. Throws UserError for an opcode, memory type or ALU op outside its enum.
std::string disasm(const Instruction& insn);
/// One micro-op as a ".uop DST SRC WGT" line, without a newline.
std::string disasm(const Uop& uop);
/// A whole listing: every micro-op (".uop" lines) first, then every instruction, one per line,
/// each line ending in '\n'. parse_asm(disasm_listing(i, u)) gives back i and u (fields of
/// other formats aside), and disasm_listing(parse_asm(t)) == t for canonical text t.
std::string disasm_listing(const std::vector<Instruction>& insns, const std::vector<Uop>& uops);

/// Assembles text into a Program for `cfg`: instructions, micro-op table, and a kConst segment
/// named "uop" in the image holding the encoded micro-ops (4 bytes each, little-endian, table
/// index k at byte offset 4*k of the segment; the segment exists even when the table is empty).
/// Every instruction and micro-op is encoded once to check its fields; errors name the line:
/// "line 7: GEMM field uop_end: 20000 does not fit 14 bits (0..16383)". Does not run the
/// verifier (see isa/verifier.h). A `.name` directive overrides `name`; a `.config` directive
/// must equal `cfg` (UserError "line N: .config ... differs from ...: LOG_BUS_WIDTH 6 vs 7"
/// otherwise; callers that want the text's config use parse_asm() first).
Program assemble(std::string_view text, const HwConfig& cfg, const std::string& name = "asm");

/// Disassembles a Program's micro-op table and stream: a comment line naming the program and its
/// config (the name quoted and escaped, support::quote), a `.name` line (the name as it is when
/// it is one token of printable bytes with no `#` or backslash that does not start with a quote;
/// otherwise quoted, support::quote, with space and `#` written \x20 and \x23), a `.config`
/// line with the full config, then disasm_listing(p.insns, p.uops). For a Program made by
/// assemble() (one "uop" segment), assemble(disassemble(p), p.config) serialises to the same bytes,
/// whatever bytes its name holds (the empty name included).
std::string disassemble(const Program& p);

/// The keys (HwConfig::to_json names) whose values differ between `a` and `b`, as
/// "KEY a_value vs b_value" joined by ", "; empty when a == b. Distinguishes configs whose
/// name() is equal (name() omits LOG_BUS_WIDTH, CLOCK_MHZ, DRAM_LATENCY and the queue depths).
std::string config_differences(const HwConfig& a, const HwConfig& b);

}  // namespace tessel::isa
