// Assembler and disassembler (syntax: isa/asm.h).
#include "isa/asm.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>

#include <nlohmann/json.hpp>

#include "isa/spec.h"
#include "support/error.h"
#include "support/text.h"

namespace tessel::isa {

namespace {

std::string upper(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return r;
}

[[noreturn]] void fail(int line, const std::string& msg) {
  throw UserError(fmt::format("line {}: {}", line, msg));
}

// Parses a decimal or 0x-hex integer, optionally negative; nullopt if malformed or if it does not
// fit int64_t.
std::optional<int64_t> parse_int(std::string_view s) {
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (base == 16 && c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (base == 16 && c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return std::nullopt;
    if (v > (uint64_t{1} << 62) / static_cast<uint64_t>(base)) return std::nullopt;
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  if (v > (uint64_t{1} << 62)) return std::nullopt;
  return neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
}

uint32_t parse_u32(int line, std::string_view key, std::string_view s) {
  // Unsigned fields take no sign at all ("-0" and "+1" included): only imm is signed (asm.h).
  const bool signed_text = !s.empty() && (s[0] == '-' || s[0] == '+');
  auto v = signed_text ? std::nullopt : parse_int(s);
  if (!v || *v < 0 || *v > std::numeric_limits<uint32_t>::max()) {
    fail(line, fmt::format("value {} of {} is not an unsigned 32-bit integer", support::quote(s), support::quote(key)));
  }
  return static_cast<uint32_t>(*v);
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

// key=A,B -> two unsigned values.
std::pair<uint32_t, uint32_t> parse_pair(int line, std::string_view key, std::string_view val,
                                         char sep, const char* form) {
  auto parts = split(val, sep);
  if (parts.size() != 2) fail(line, fmt::format("'{}={}' needs two values: '{}={}'", key, val, key, form));
  return {parse_u32(line, key, parts[0]), parse_u32(line, key, parts[1])};
}

DepFlags parse_deps(int line, std::string_view val) {
  DepFlags d;
  for (auto f : split(val, '|')) {
    bool* slot = f == "pop_prev"    ? &d.pop_prev
                 : f == "pop_next"  ? &d.pop_next
                 : f == "push_prev" ? &d.push_prev
                 : f == "push_next" ? &d.push_next
                                    : nullptr;
    if (!slot) {
      fail(line, fmt::format("unknown dependency flag {} in 'deps={}' (pop_prev, pop_next, "
                             "push_prev, push_next)",
                             support::quote(f), val));
    }
    if (*slot) fail(line, fmt::format("dependency flag {} given twice in 'deps={}'", support::quote(f), val));
    *slot = true;
  }
  return d;
}

std::optional<MemType> parse_mem_type(std::string_view s) {
  const std::string u = upper(s);
  for (int m = 0; m <= static_cast<int>(MemType::kAcc8); ++m) {
    if (u == to_string(static_cast<MemType>(m))) return static_cast<MemType>(m);
  }
  return std::nullopt;
}

std::optional<AluOp> parse_alu_op(std::string_view s) {
  const std::string u = upper(s);
  for (int m = 0; m <= static_cast<int>(AluOp::kMul); ++m) {
    if (u == to_string(static_cast<AluOp>(m))) return static_cast<AluOp>(m);
  }
  return std::nullopt;
}

// Splits a line (comment removed) into whitespace-separated tokens.
std::vector<std::string_view> tokens(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    size_t j = i;
    while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

Instruction parse_insn(int line, const std::vector<std::string_view>& tok) {
  const std::string mn = upper(tok[0]);
  Instruction in;
  size_t first_kv = 1;
  if (mn == "LOAD" || mn == "STORE") {
    in.opcode = mn == "LOAD" ? Opcode::kLoad : Opcode::kStore;
    if (tok.size() < 2) fail(line, fmt::format("{} needs a memory type (UOP, WGT, INP, ACC, OUT, ACC_8BIT)", mn));
    auto m = parse_mem_type(tok[1]);
    if (!m) fail(line, fmt::format("unknown memory type {} (UOP, WGT, INP, ACC, OUT, ACC_8BIT)", support::quote(tok[1])));
    in.mem_type = *m;
    first_kv = 2;
  } else if (mn == "GEMM") {
    in.opcode = Opcode::kGemm;
  } else if (mn == "ALU") {
    in.opcode = Opcode::kAlu;
    if (tok.size() < 2) fail(line, "ALU needs an operation (MIN, MAX, ADD, SHR, MUL)");
    auto op = parse_alu_op(tok[1]);
    if (!op) fail(line, fmt::format("unknown ALU operation {} (MIN, MAX, ADD, SHR, MUL)", support::quote(tok[1])));
    in.alu_op = *op;
    first_kv = 2;
  } else if (mn == "FINISH") {
    in.opcode = Opcode::kFinish;
  } else {
    fail(line, fmt::format("unknown mnemonic {} (LOAD, STORE, GEMM, ALU, FINISH, .uop)", support::quote(tok[0])));
  }
  const Format fmt_ = format_of(in.opcode);
  std::vector<std::string> seen;
  std::optional<bool> use_imm_explicit;
  bool has_imm = false;
  for (size_t t = first_kv; t < tok.size(); ++t) {
    const std::string_view kv = tok[t];
    const size_t eq = kv.find('=');
    const std::string_view key = kv.substr(0, eq);
    const std::string_view val = eq == std::string_view::npos ? std::string_view{} : kv.substr(eq + 1);
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      fail(line, fmt::format("{} given twice", support::quote(key)));
    }
    seen.emplace_back(key);
    auto need_value = [&] {
      if (eq == std::string_view::npos || val.empty()) fail(line, fmt::format("{} needs a value: '{}=...'", support::quote(kv), key));
    };
    const bool loop = fmt_ == Format::kGemm || fmt_ == Format::kAlu;
    if (key == "deps") {
      need_value();
      in.dep = parse_deps(line, val);
    } else if (fmt_ == Format::kMem && key == "sram") {
      need_value();
      in.sram_base = parse_u32(line, key, val);
    } else if (fmt_ == Format::kMem && key == "dram") {
      need_value();
      in.dram_base = parse_u32(line, key, val);
    } else if (fmt_ == Format::kMem && key == "y") {
      need_value();
      in.y_size = parse_u32(line, key, val);
    } else if (fmt_ == Format::kMem && key == "x") {
      need_value();
      in.x_size = parse_u32(line, key, val);
    } else if (fmt_ == Format::kMem && key == "stride") {
      need_value();
      in.x_stride = parse_u32(line, key, val);
    } else if (fmt_ == Format::kMem && key == "pad") {
      need_value();
      auto p = split(val, ',');
      if (p.size() != 4) fail(line, fmt::format("{} needs four values: 'pad=Y0,Y1,X0,X1'", support::quote(kv)));
      in.y_pad_0 = parse_u32(line, key, p[0]);
      in.y_pad_1 = parse_u32(line, key, p[1]);
      in.x_pad_0 = parse_u32(line, key, p[2]);
      in.x_pad_1 = parse_u32(line, key, p[3]);
    } else if (loop && key == "uop") {
      need_value();
      std::tie(in.uop_bgn, in.uop_end) = parse_pair(line, key, val, ':', "BGN:END");
    } else if (loop && key == "iter") {
      need_value();
      std::tie(in.iter_out, in.iter_in) = parse_pair(line, key, val, ',', "OUT,IN");
    } else if (loop && key == "dst") {
      need_value();
      std::tie(in.dst_factor_out, in.dst_factor_in) = parse_pair(line, key, val, ',', "OUT,IN");
    } else if (loop && key == "src") {
      need_value();
      std::tie(in.src_factor_out, in.src_factor_in) = parse_pair(line, key, val, ',', "OUT,IN");
    } else if (fmt_ == Format::kGemm && key == "wgt") {
      need_value();
      std::tie(in.wgt_factor_out, in.wgt_factor_in) = parse_pair(line, key, val, ',', "OUT,IN");
    } else if (loop && key == "reset") {
      if (eq != std::string_view::npos) fail(line, fmt::format("'reset' takes no value, got {}", support::quote(kv)));
      in.reset = true;
    } else if (fmt_ == Format::kAlu && key == "imm") {
      need_value();
      auto v = parse_int(val);
      if (!v || *v < std::numeric_limits<int32_t>::min() || *v > std::numeric_limits<int32_t>::max()) {
        fail(line, fmt::format("value {} of 'imm' is not a signed 32-bit integer", support::quote(val)));
      }
      in.imm = static_cast<int32_t>(*v);
      has_imm = true;
    } else if (fmt_ == Format::kAlu && key == "use_imm") {
      need_value();
      if (val != "0" && val != "1") fail(line, fmt::format("{}: use_imm is 0 or 1", support::quote(kv)));
      use_imm_explicit = val == "1";
    } else {
      fail(line, fmt::format("unknown key {} for {}", support::quote(key), to_string(in.opcode)));
    }
  }
  in.use_imm = use_imm_explicit.value_or(has_imm);
  return in;
}

std::string deps_text(const DepFlags& d) {
  std::string s;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!s.empty()) s += '|';
    s += name;
  };
  add(d.pop_prev, "pop_prev");
  add(d.pop_next, "pop_next");
  add(d.push_prev, "push_prev");
  add(d.push_next, "push_next");
  return s;
}

}  // namespace

AsmListing parse_asm(std::string_view text) {
  AsmListing out;
  int line_no = 0;
  size_t pos = 0;
  if (text.size() >= 3 && static_cast<unsigned char>(text[0]) == 0xEF &&
      static_cast<unsigned char>(text[1]) == 0xBB && static_cast<unsigned char>(text[2]) == 0xBF) {
    pos = 3;  // UTF-8 byte order mark
  }
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    const auto tok = tokens(line);
    if (!tok.empty() && tok[0] == ".config") {
      if (out.config) fail(line_no, fmt::format(".config given twice (first on line {})", out.config_line));
      const size_t at = line.find(".config") + 7;
      const std::string json(line.substr(at));
      try {
        out.config = HwConfig::from_json(json);
      } catch (const UserError& e) {
        fail(line_no, fmt::format(".config: {}", e.what()));
      }
      out.config_line = line_no;
      if (end == text.size()) break;
      continue;
    }
    if (!tok.empty() && tok[0] == ".name") {
      if (out.name) fail(line_no, ".name given twice");
      if (tok.size() != 2) fail(line_no, fmt::format("'.name' needs one value without spaces, got {}", tok.size() - 1));
      if (tok[1].front() == '\'') {
        std::optional<std::string> name = support::unquote(tok[1]);
        if (!name) {
          fail(line_no, fmt::format("'.name' {} starts with a quote but is not a quoted name (between single quotes, "
                                    "with \\xNN, \\\\ and \\' escapes)",
                                    support::quote(tok[1])));
        }
        out.name = std::move(*name);
      } else {
        out.name = std::string(tok[1]);
      }
      if (end == text.size()) break;
      continue;
    }
    if (tok.empty()) {
      if (end == text.size()) break;
      continue;
    }
    if (tok[0] == ".uop") {
      if (tok.size() != 4) {
        fail(line_no, fmt::format("'.uop' needs three values 'DST SRC WGT', got {}", tok.size() - 1));
      }
      out.uops.push_back(Uop{parse_u32(line_no, "dst", tok[1]), parse_u32(line_no, "src", tok[2]),
                             parse_u32(line_no, "wgt", tok[3])});
      out.uop_lines.push_back(line_no);
    } else if (tok[0][0] == '.') {
      fail(line_no, fmt::format("unknown directive {} (.uop, .name, .config)", support::quote(tok[0])));
    } else {
      out.insns.push_back(parse_insn(line_no, tok));
      out.insn_lines.push_back(line_no);
    }
    if (end == text.size()) break;
  }
  return out;
}

std::string disasm(const Instruction& in) {
  const auto op = static_cast<uint32_t>(in.opcode);
  if (op > static_cast<uint32_t>(Opcode::kAlu)) throw_user_error("cannot disassemble opcode {}", op);
  std::string s(to_string(in.opcode));
  switch (format_of(in.opcode)) {
    case Format::kMem:
      if (static_cast<uint32_t>(in.mem_type) > static_cast<uint32_t>(MemType::kAcc8)) {
        throw_user_error("cannot disassemble memory type {}", static_cast<int>(in.mem_type));
      }
      s += fmt::format(" {} sram={} dram={} y={} x={} stride={}", to_string(in.mem_type), in.sram_base,
                       in.dram_base, in.y_size, in.x_size, in.x_stride);
      if (in.y_pad_0 || in.y_pad_1 || in.x_pad_0 || in.x_pad_1) {
        s += fmt::format(" pad={},{},{},{}", in.y_pad_0, in.y_pad_1, in.x_pad_0, in.x_pad_1);
      }
      break;
    case Format::kGemm:
    case Format::kAlu:
      if (in.opcode == Opcode::kAlu) {
        if (static_cast<uint32_t>(in.alu_op) > static_cast<uint32_t>(AluOp::kMul)) {
          throw_user_error("cannot disassemble ALU opcode {}", static_cast<int>(in.alu_op));
        }
        s += fmt::format(" {}", to_string(in.alu_op));
      }
      s += fmt::format(" uop={}:{} iter={},{} dst={},{} src={},{}", in.uop_bgn, in.uop_end, in.iter_out,
                       in.iter_in, in.dst_factor_out, in.dst_factor_in, in.src_factor_out,
                       in.src_factor_in);
      if (in.opcode == Opcode::kGemm) {
        s += fmt::format(" wgt={},{}", in.wgt_factor_out, in.wgt_factor_in);
      } else if (in.use_imm) {
        s += fmt::format(" imm={}", in.imm);
      } else if (in.imm != 0) {
        s += fmt::format(" imm={} use_imm=0", in.imm);
      }
      if (in.reset) s += " reset";
      break;
    case Format::kFinish:
    case Format::kUop:
      break;
  }
  const std::string d = deps_text(in.dep);
  if (!d.empty()) s += " deps=" + d;
  return s;
}

std::string disasm(const Uop& u) { return fmt::format(".uop {} {} {}", u.dst, u.src, u.wgt); }

std::string disasm_listing(const std::vector<Instruction>& insns, const std::vector<Uop>& uops) {
  std::string s;
  for (const auto& u : uops) s += disasm(u) + "\n";
  for (const auto& in : insns) s += disasm(in) + "\n";
  return s;
}

Program assemble(std::string_view text, const HwConfig& cfg, const std::string& name) {
  const IsaSpec spec(cfg);
  AsmListing l = parse_asm(text);
  if (l.config && !(*l.config == cfg)) {
    fail(l.config_line, fmt::format(".config {} differs from the configuration given ({}): {}", l.config->label(),
                                    cfg.label(), config_differences(*l.config, cfg)));
  }
  Program p;
  p.config = cfg;
  p.name = l.name.value_or(name);
  for (size_t i = 0; i < l.insns.size(); ++i) {
    try {
      (void)spec.encode(l.insns[i]);
    } catch (const UserError& e) {
      fail(l.insn_lines[i], e.what());
    }
  }
  const size_t seg = p.add_segment("uop", SegmentKind::kConst, l.uops.size() * 4);
  uint8_t* base = p.image.data() + p.segments[seg].offset_bytes;
  for (size_t k = 0; k < l.uops.size(); ++k) {
    uint32_t bits = 0;
    try {
      bits = spec.encode_uop(l.uops[k]);
    } catch (const UserError& e) {
      fail(l.uop_lines[k], e.what());
    }
    for (int b = 0; b < 4; ++b) base[4 * k + b] = static_cast<uint8_t>(bits >> (8 * b));
  }
  p.insns = std::move(l.insns);
  p.uops = std::move(l.uops);
  return p;
}

std::string disassemble(const Program& p) {
  // The header comment shows the name escaped (support::quote: no control byte, NUL or broken
  // UTF-8 reaches the text). `.name` carries every name back: as it is when it is one token of
  // printable bytes that does not start with a quote and holds no '#' or backslash, else in
  // quoted form (support::quote, with space and '#' also written \x20 and \x23 so that the value
  // stays one token before any comment), which the assembler reads back with support::unquote.
  std::string s = fmt::format("# program {}, config {}, {} instructions, {} uops\n", support::quote(p.name),
                              p.config.label(), p.insns.size(), p.uops.size());
  const bool plain_name = !p.name.empty() && p.name.front() != '\'' && support::escape_bytes(p.name) == p.name &&
                          p.name.find_first_of(" #\\") == std::string::npos;
  if (plain_name) {
    s += ".name " + p.name + "\n";
  } else {
    std::string quoted;
    for (const char c : support::quote(p.name)) {
      if (c == ' ') {
        quoted += "\\x20";
      } else if (c == '#') {
        quoted += "\\x23";
      } else {
        quoted += c;
      }
    }
    s += ".name " + quoted + "\n";
  }
  s += ".config " + nlohmann::ordered_json::parse(p.config.to_json()).dump() + "\n";
  return s + disasm_listing(p.insns, p.uops);
}

std::string config_differences(const HwConfig& a, const HwConfig& b) {
  const nlohmann::ordered_json ja = nlohmann::ordered_json::parse(a.to_json());
  const nlohmann::ordered_json jb = nlohmann::ordered_json::parse(b.to_json());
  std::string out;
  for (auto it = ja.begin(); it != ja.end(); ++it) {
    const nlohmann::ordered_json& vb = jb.at(it.key());
    if (it.value() != vb) out += fmt::format("{}{} {} vs {}", out.empty() ? "" : ", ", it.key(), it.value().dump(), vb.dump());
  }
  return out;
}

}  // namespace tessel::isa
