// The stream verifier (rules: isa/verifier.h).
#include "isa/verifier.h"

#include <algorithm>
#include <array>
#include <deque>

#include "isa/spec.h"
#include "support/error.h"

namespace tessel::isa {

namespace {

bool valid_opcode(const Instruction& in) { return static_cast<uint32_t>(in.opcode) <= static_cast<uint32_t>(Opcode::kAlu); }
bool valid_mem_type(const Instruction& in) {
  return static_cast<uint32_t>(in.mem_type) <= static_cast<uint32_t>(MemType::kAcc8);
}
bool is_mem(const Instruction& in) { return in.opcode == Opcode::kLoad || in.opcode == Opcode::kStore; }
bool has_pads(const Instruction& in) { return in.y_pad_0 || in.y_pad_1 || in.x_pad_0 || in.x_pad_1; }

std::string_view queue_route(TokenQueue q) { return token_queue_route(q); }

// Token queues an instruction pops before and pushes after executing (isa.md section 4), in flag
// order (prev before next). Flags that are illegal for the module are reported by the deps rule
// and have no queue here.
struct Ports {
  std::vector<TokenQueue> pops, pushes;
};

Ports ports_of(const Instruction& in) {
  Ports p;
  const Module m = in.module();
  auto add = [](std::vector<TokenQueue>& to, bool flag, std::optional<TokenQueue> q) {
    if (flag && q) to.push_back(*q);
  };
  add(p.pops, in.dep.pop_prev, dep_pop_queue(m, true));
  add(p.pops, in.dep.pop_next, dep_pop_queue(m, false));
  add(p.pushes, in.dep.push_prev, dep_push_queue(m, true));
  add(p.pushes, in.dep.push_next, dep_push_queue(m, false));
  return p;
}

class Checker {
 public:
  Checker(const Program& p, const VerifyOptions& opt, const IsaSpec& spec)
      : p_(p), opt_(opt), spec_(spec), cfg_(p.config) {}

  std::vector<Diagnostic> run() {
    if (p_.insns.empty()) {
      add(VerifyRule::kFinish, std::nullopt, "the stream is empty; it must end with FINISH");
      return std::move(diags_);
    }
    for (size_t i = 0; i < p_.insns.size(); ++i) check_static(i);
    check_uop_table();
    check_bounds();
    check_tokens();
    std::stable_sort(diags_.begin(), diags_.end(), [](const Diagnostic& a, const Diagnostic& b) {
      const size_t ia = a.insn.value_or(SIZE_MAX), ib = b.insn.value_or(SIZE_MAX);
      return ia < ib;
    });
    return std::move(diags_);
  }

 private:
  void add(VerifyRule r, std::optional<size_t> i, const std::string& msg) {
    std::string text = i ? fmt::format("insn {} ({}): {}", *i, describe_insn(p_.insns[*i]), msg) : msg;
    diags_.push_back(Diagnostic{r, i, std::move(text)});
  }

  // Fields, memory types, pads, dependency flags, FINISH placement.
  void check_static(size_t i) {
    const Instruction& in = p_.insns[i];
    try {
      (void)spec_.encode(in);
    } catch (const UserError& e) {
      add(VerifyRule::kFields, i, e.what());
    }
    if (!valid_opcode(in)) return;
    if (is_mem(in) && valid_mem_type(in)) {
      if (in.opcode == Opcode::kLoad && in.mem_type == MemType::kOut) {
        add(VerifyRule::kMemType, i, "LOAD of OUT is illegal (OUT is written by GEMM/ALU and read by STORE)");
      }
      if (in.opcode == Opcode::kStore && in.mem_type != MemType::kOut) {
        add(VerifyRule::kMemType, i, fmt::format("STORE must read OUT, not {}", to_string(in.mem_type)));
      }
      if (has_pads(in) && (in.opcode == Opcode::kStore || in.mem_type == MemType::kUop ||
                           in.mem_type == MemType::kWgt)) {
        add(VerifyRule::kPad, i,
            fmt::format("pads {},{},{},{} are illegal on {} {} (only LOADs of INP, ACC, ACC_8BIT pad)",
                        in.y_pad_0, in.y_pad_1, in.x_pad_0, in.x_pad_1, to_string(in.opcode),
                        to_string(in.mem_type)));
      }
    }
    const Module m = in.module();
    if (m == Module::kLoad) {
      if (in.dep.pop_prev) add(VerifyRule::kDeps, i, "the load module has no previous module: pop_prev is illegal");
      if (in.dep.push_prev) add(VerifyRule::kDeps, i, "the load module has no previous module: push_prev is illegal");
    } else if (m == Module::kStore) {
      if (in.dep.pop_next) add(VerifyRule::kDeps, i, "the store module has no next module: pop_next is illegal");
      if (in.dep.push_next) add(VerifyRule::kDeps, i, "the store module has no next module: push_next is illegal");
    }
    const size_t last = p_.insns.size() - 1;
    if (in.opcode == Opcode::kFinish && i != last) {
      add(VerifyRule::kFinish, i, fmt::format("FINISH before the end of the stream (the last instruction is insn {})", last));
    }
    if (i == last && in.opcode != Opcode::kFinish) {
      add(VerifyRule::kFinish, i, "the stream must end with FINISH");
    }
  }

  void check_uop_table() {
    for (size_t k = 0; k < p_.uops.size(); ++k) {
      try {
        (void)spec_.encode_uop(p_.uops[k]);
      } catch (const UserError& e) {
        add(VerifyRule::kFields, std::nullopt, fmt::format("uop table entry {}: {}", k, e.what()));
      }
    }
    const Segment* seg = nullptr;
    for (const auto& s : p_.segments) {
      if (s.name == "uop") seg = &s;
    }
    if (!seg) return;
    if (seg->offset_bytes + seg->size_bytes > p_.image.size() || p_.uops.size() * 4 > seg->size_bytes) {
      add(VerifyRule::kUop, std::nullopt,
          fmt::format("the uop segment ({} bytes at {}) cannot hold the {}-entry uop table inside the {}-byte image",
                      seg->size_bytes, seg->offset_bytes, p_.uops.size(), p_.image.size()));
      return;
    }
    for (size_t k = 0; k < p_.uops.size(); ++k) {
      const Uop img = spec_.decode_uop(word_at(seg->offset_bytes + 4 * k));
      if (!(img == p_.uops[k])) {
        add(VerifyRule::kUop, std::nullopt,
            fmt::format("uop table entry {} ({}, {}, {}) differs from the image's uop segment ({}, {}, {})", k,
                        p_.uops[k].dst, p_.uops[k].src, p_.uops[k].wgt, img.dst, img.src, img.wgt));
        return;
      }
    }
  }

  uint32_t word_at(uint64_t byte) const {
    uint32_t v = 0;
    for (int b = 0; b < 4; ++b) v |= uint32_t{p_.image[byte + b]} << (8 * b);
    return v;
  }

  // SRAM depth (rows) addressed by a memory type, and the buffer's name.
  std::pair<uint64_t, const char*> sram_of(MemType t) const {
    switch (t) {
      case MemType::kUop: return {uint64_t(cfg_.uop_depth()), "uop buffer"};
      case MemType::kWgt: return {uint64_t(cfg_.wgt_depth()), "weight scratchpad"};
      case MemType::kInp: return {uint64_t(cfg_.inp_depth()), "input scratchpad"};
      case MemType::kAcc:
      case MemType::kAcc8: return {uint64_t(cfg_.acc_depth()), "accumulator scratchpad"};
      case MemType::kOut: return {uint64_t(cfg_.out_depth()), "output buffer"};
    }
    return {0, "?"};
  }

  enum class Slot : uint8_t { kEmpty, kValid, kUnknown };

  void check_bounds() {
    std::vector<Slot> state(cfg_.uop_depth(), Slot::kEmpty);
    std::vector<Uop> uop_sram(cfg_.uop_depth());
    for (size_t i = 0; i < p_.insns.size(); ++i) {
      const Instruction& in = p_.insns[i];
      if (!valid_opcode(in)) continue;
      if (is_mem(in)) {
        if (valid_mem_type(in)) check_mem(i, in, state, uop_sram);
      } else if (in.opcode == Opcode::kGemm || in.opcode == Opcode::kAlu) {
        check_loop(i, in, state, uop_sram);
      }
    }
  }

  void check_mem(size_t i, const Instruction& in, std::vector<Slot>& state, std::vector<Uop>& uop_sram) {
    if (in.x_size == 0) return;  // a no-op that only moves tokens
    if (in.opcode == Opcode::kLoad && in.mem_type == MemType::kOut) return;  // mem-type rule
    const bool load = in.opcode == Opcode::kLoad;
    const uint64_t rows = load ? uint64_t{in.y_pad_0} + in.y_size + in.y_pad_1 : in.y_size;
    const uint64_t cols = load ? uint64_t{in.x_pad_0} + in.x_size + in.x_pad_1 : in.x_size;
    const auto [depth, buffer] = sram_of(in.mem_type);
    if (rows * cols > 0) {
      const uint64_t last = in.sram_base + rows * cols - 1;
      if (last >= depth) {
        add(VerifyRule::kSramBounds, i,
            fmt::format("SRAM rows {}..{} ({} x {}) out of range 0..{} of the {}", in.sram_base, last, rows,
                        cols, depth - 1, buffer));
      }
    }
    bool dram_ok = true;
    if (in.y_size > 0) {
      const uint64_t elem = dram_elem_bytes(cfg_, in.mem_type);
      const uint64_t last_elem = uint64_t{in.dram_base} + uint64_t{in.y_size - 1} * in.x_stride + in.x_size - 1;
      const uint64_t end_byte = (last_elem + 1) * elem;
      if (end_byte > p_.image.size()) {
        dram_ok = false;
        if (opt_.check_dram_bounds) {
          add(VerifyRule::kDramBounds, i,
              fmt::format("DRAM elements {}..{} ({}-byte elements, bytes {}..{}) outside the {}-byte program image",
                          in.dram_base, last_elem, elem, uint64_t{in.dram_base} * elem, end_byte - 1,
                          p_.image.size()));
        }
      }
    }
    if (load && in.mem_type == MemType::kUop) {
      // Pads on UOP loads are illegal (pad rule); the rows land densely from sram_base.
      for (uint64_t y = 0; y < in.y_size; ++y) {
        for (uint64_t x = 0; x < in.x_size; ++x) {
          const uint64_t slot = in.sram_base + y * in.x_size + x;
          if (slot >= state.size()) continue;  // reported by sram-bounds
          const uint64_t byte = (uint64_t{in.dram_base} + y * in.x_stride + x) * 4;
          if (dram_ok || byte + 4 <= p_.image.size()) {
            state[slot] = Slot::kValid;
            uop_sram[slot] = spec_.decode_uop(word_at(byte));
          } else {
            state[slot] = Slot::kUnknown;
          }
        }
      }
    }
  }

  void check_loop(size_t i, const Instruction& in, const std::vector<Slot>& state,
                  const std::vector<Uop>& uop_sram) {
    const uint64_t udepth = state.size();
    if (in.uop_end > udepth) {
      add(VerifyRule::kSramBounds, i,
          fmt::format("uop_end {} beyond the {}-entry uop buffer", in.uop_end, udepth));
      return;
    }
    if (in.uop_bgn > in.uop_end) {
      add(VerifyRule::kUop, i, fmt::format("uop_bgn {} is greater than uop_end {}", in.uop_bgn, in.uop_end));
      return;
    }
    if (in.iter_out == 0 || in.iter_in == 0 || in.uop_bgn == in.uop_end) return;  // empty nest
    const bool gemm = in.opcode == Opcode::kGemm;
    const bool reads_src = !in.reset && (gemm || !in.use_imm);
    const bool reads_wgt = gemm && !in.reset;
    // Largest base index of each kind over the micro-ops, and where it comes from.
    uint64_t max_dst = 0, max_src = 0, max_wgt = 0;
    size_t k_dst = 0, k_src = 0, k_wgt = 0;
    bool any = false;
    for (uint64_t k = in.uop_bgn; k < in.uop_end; ++k) {
      if (state[k] == Slot::kEmpty) {
        add(VerifyRule::kUop, i, fmt::format("uop slot {} was never loaded (uop={}:{})", k, in.uop_bgn, in.uop_end));
        return;
      }
      if (state[k] == Slot::kUnknown) continue;
      const Uop& u = uop_sram[k];
      if (!any || u.dst > max_dst) max_dst = u.dst, k_dst = k;
      if (!any || u.src > max_src) max_src = u.src, k_src = k;
      if (!any || u.wgt > max_wgt) max_wgt = u.wgt, k_wgt = k;
      any = true;
    }
    if (!any) return;
    const uint64_t io = in.iter_out - 1, ii = in.iter_in - 1;
    auto check = [&](const char* what, uint64_t base, size_t k, uint64_t f_out, uint64_t f_in, uint64_t depth) {
      const uint64_t idx = base + io * f_out + ii * f_in;
      if (idx >= depth) {
        add(VerifyRule::kSramBounds, i,
            fmt::format("{} index {} out of range 0..{} (uop slot {} index {} + {}*{} + {}*{})", what, idx,
                        depth - 1, k, base, io, f_out, ii, f_in));
      }
    };
    check("acc", max_dst, k_dst, in.dst_factor_out, in.dst_factor_in, cfg_.acc_depth());
    if (reads_src) {
      check(gemm ? "inp" : "acc source", max_src, k_src, in.src_factor_out, in.src_factor_in,
            gemm ? cfg_.inp_depth() : cfg_.acc_depth());
    }
    if (reads_wgt) check("wgt", max_wgt, k_wgt, in.wgt_factor_out, in.wgt_factor_in, cfg_.wgt_depth());
  }

  // Token balance and the abstract in-order execution.
  void check_tokens() {
    const size_t n = p_.insns.size();
    std::vector<Ports> ports(n);
    std::array<uint64_t, 4> pushes{}, pops{};
    for (size_t i = 0; i < n; ++i) {
      if (!valid_opcode(p_.insns[i])) continue;
      ports[i] = ports_of(p_.insns[i]);
      for (auto q : ports[i].pops) ++pops[static_cast<size_t>(q)];
      for (auto q : ports[i].pushes) ++pushes[static_cast<size_t>(q)];
    }
    for (size_t q = 0; q < 4; ++q) {
      if (pushes[q] != pops[q]) {
        const auto tq = static_cast<TokenQueue>(q);
        add(VerifyRule::kTokenBalance, std::nullopt,
            fmt::format("token queue {} ({}): {} pushes but {} pops", to_string(tq), queue_route(tq), pushes[q],
                        pops[q]));
      }
    }
    simulate(ports);
  }

  void simulate(const std::vector<Ports>& ports) {
    const size_t n = p_.insns.size();
    const auto cmd_depth = static_cast<size_t>(cfg_.cmd_queue_depth);
    const auto tok_depth = static_cast<uint64_t>(cfg_.token_queue_depth);
    std::array<std::deque<size_t>, 3> cmd;
    std::array<bool, 3> popped{};
    std::array<uint64_t, 4> tokens{};
    size_t fetched = 0, retired = 0;
    std::vector<Module> module(n);
    for (size_t i = 0; i < n; ++i) module[i] = p_.insns[i].module();

    auto on_finish = [&](size_t i) {
      if (i != n - 1) return;  // an early FINISH is reported by check_static
      for (Module m : {Module::kLoad, Module::kStore}) {
        const auto& q = cmd[static_cast<size_t>(m)];
        const size_t left = q.size() + static_cast<size_t>(std::count(module.begin() + fetched, module.end(), m));
        if (left > 0) {
          add(VerifyRule::kFinish, i,
              fmt::format("FINISH can complete while the {} module still has {} unfinished instruction(s) "
                          "(first: insn {}); make FINISH wait for them with dependency tokens",
                          to_string(m), left, q.empty() ? fetched : q.front()));
        }
      }
      for (size_t q = 0; q < 4; ++q) {
        if (tokens[q] != 0) {
          const auto tq = static_cast<TokenQueue>(q);
          add(VerifyRule::kFinish, i,
              fmt::format("token queue {} ({}) holds {} token(s) when FINISH completes", to_string(tq),
                          queue_route(tq), tokens[q]));
        }
      }
    };

    auto step_module = [&](Module m) -> bool {
      auto& q = cmd[static_cast<size_t>(m)];
      if (q.empty()) return false;
      const size_t h = q.front();
      bool& got = popped[static_cast<size_t>(m)];
      if (!got) {
        for (auto t : ports[h].pops) {
          if (tokens[static_cast<size_t>(t)] == 0) return false;
        }
        for (auto t : ports[h].pops) --tokens[static_cast<size_t>(t)];
        got = true;
        return true;
      }
      for (auto t : ports[h].pushes) {
        if (tokens[static_cast<size_t>(t)] >= tok_depth) return false;
      }
      for (auto t : ports[h].pushes) ++tokens[static_cast<size_t>(t)];
      got = false;
      q.pop_front();
      ++retired;
      if (p_.insns[h].opcode == Opcode::kFinish) on_finish(h);
      return true;
    };
    auto step_fetch = [&]() -> bool {
      if (fetched == n) return false;
      auto& q = cmd[static_cast<size_t>(module[fetched])];
      if (q.size() >= cmd_depth) return false;
      q.push_back(fetched++);
      return true;
    };

    // Compute first (so FINISH runs as early as any schedule allows), then fetch, load, store.
    while (step_module(Module::kCompute) || step_fetch() || step_module(Module::kLoad) ||
           step_module(Module::kStore)) {
    }
    if (retired == n) return;

    std::vector<std::string> why;
    size_t first = SIZE_MAX;
    for (Module m : {Module::kLoad, Module::kCompute, Module::kStore}) {
      const auto& q = cmd[static_cast<size_t>(m)];
      if (q.empty()) continue;
      const size_t h = q.front();
      first = std::min(first, h);
      std::string head = fmt::format("the {} module at insn {} ({})", to_string(m), h, describe_insn(p_.insns[h]));
      if (!popped[static_cast<size_t>(m)]) {
        for (auto t : ports[h].pops) {
          if (tokens[static_cast<size_t>(t)] == 0) {
            why.push_back(fmt::format("{} waits to pop token queue {} ({}), which is empty", head, to_string(t),
                                      queue_route(t)));
            break;
          }
        }
      } else {
        for (auto t : ports[h].pushes) {
          if (tokens[static_cast<size_t>(t)] >= tok_depth) {
            why.push_back(fmt::format("{} waits to push token queue {} ({}), which is full ({} tokens)", head,
                                      to_string(t), queue_route(t), tok_depth));
            break;
          }
        }
      }
    }
    if (fetched < n) {
      first = std::min(first, fetched);
      why.push_back(fmt::format("fetch at insn {} ({}) waits for room in the {} command queue, which is full ({} entries)",
                                fetched, describe_insn(p_.insns[fetched]), to_string(module[fetched]), cmd_depth));
    }
    std::string msg = "deadlock: ";
    for (size_t k = 0; k < why.size(); ++k) msg += (k ? "; " : "") + why[k];
    add(VerifyRule::kDeadlock, first == SIZE_MAX ? std::nullopt : std::optional<size_t>(first), msg);
  }

  const Program& p_;
  const VerifyOptions& opt_;
  const IsaSpec& spec_;
  const HwConfig& cfg_;
  std::vector<Diagnostic> diags_;
};

}  // namespace

std::string_view to_string(VerifyRule r) {
  switch (r) {
    case VerifyRule::kConfig: return "config";
    case VerifyRule::kFields: return "fields";
    case VerifyRule::kMemType: return "mem-type";
    case VerifyRule::kPad: return "pad";
    case VerifyRule::kDeps: return "deps";
    case VerifyRule::kTokenBalance: return "token-balance";
    case VerifyRule::kDeadlock: return "deadlock";
    case VerifyRule::kFinish: return "finish";
    case VerifyRule::kSramBounds: return "sram-bounds";
    case VerifyRule::kDramBounds: return "dram-bounds";
    case VerifyRule::kUop: return "uop";
  }
  return "invalid";
}

std::string describe_insn(const Instruction& in) {
  if (!valid_opcode(in)) return fmt::format("opcode {}", static_cast<int>(in.opcode));
  std::string s(to_string(in.opcode));
  if (is_mem(in)) {
    s += ' ';
    s += valid_mem_type(in) ? std::string(to_string(in.mem_type)) : fmt::format("type {}", static_cast<int>(in.mem_type));
  } else if (in.opcode == Opcode::kAlu) {
    s += ' ';
    s += static_cast<uint32_t>(in.alu_op) <= static_cast<uint32_t>(AluOp::kMul)
             ? std::string(to_string(in.alu_op))
             : fmt::format("op {}", static_cast<int>(in.alu_op));
  }
  return s;
}

std::vector<Diagnostic> check_program(const Program& p, const VerifyOptions& opt) {
  std::optional<IsaSpec> spec;
  try {
    spec.emplace(p.config);
  } catch (const UserError& e) {
    return {Diagnostic{VerifyRule::kConfig, std::nullopt, e.what()}};
  }
  return Checker(p, opt, *spec).run();
}

void verify(const Program& p, const VerifyOptions& opt) {
  const auto d = check_program(p, opt);
  if (d.empty()) return;
  if (d.size() == 1) throw UserError(d[0].message);
  throw UserError(fmt::format("{} (and {} more problem{})", d[0].message, d.size() - 1, d.size() == 2 ? "" : "s"));
}

}  // namespace tessel::isa
