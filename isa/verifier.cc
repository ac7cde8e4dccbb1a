// The stream verifier (rules: isa/verifier.h).
#include "isa/verifier.h"

#include <algorithm>
#include <array>
#include <deque>
#include <map>

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
    module_.resize(p_.insns.size());
    for (size_t i = 0; i < p_.insns.size(); ++i) module_[i] = p_.insns[i].module();
    encodes_.assign(p_.insns.size(), 0);
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
      encodes_[i] = 1;
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
    if (in.y_size > 0) {
      const uint64_t elem = dram_elem_bytes(cfg_, in.mem_type);
      const uint64_t last_elem = uint64_t{in.dram_base} + uint64_t{in.y_size - 1} * in.x_stride + in.x_size - 1;
      const uint64_t end_byte = (last_elem + 1) * elem;
      if (end_byte > p_.image.size() && opt_.check_dram_bounds) {
        add(VerifyRule::kDramBounds, i,
            fmt::format("DRAM elements {}..{} ({}-byte elements, bytes {}..{}) outside the {}-byte program image",
                        in.dram_base, last_elem, elem, uint64_t{in.dram_base} * elem, end_byte - 1,
                        p_.image.size()));
      }
    }
    if (load && in.mem_type == MemType::kUop) load_uops(in, state, uop_sram);
  }

  // Applies a LOAD UOP (x_size > 0) to the tracked uop buffer: slots whose DRAM word lies in the
  // image become kValid with the decoded micro-op, the others kUnknown. Pads on UOP loads are
  // illegal (pad rule); the rows land densely from sram_base.
  // Only the slots inside the buffer are visited (the rest is reported by sram-bounds): the work
  // is bounded by the buffer's size, not by y_size * x_size (up to 2^32 for a hostile LOAD).
  void load_uops(const Instruction& in, std::vector<Slot>& state, std::vector<Uop>& uop_sram) const {
    if (in.x_size == 0 || in.sram_base >= state.size()) return;
    const uint64_t n = std::min<uint64_t>(uint64_t{in.y_size} * in.x_size, state.size() - in.sram_base);
    for (uint64_t k = 0; k < n; ++k) {
      const uint64_t y = k / in.x_size, x = k % in.x_size;
      const uint64_t slot = in.sram_base + k;
      const uint64_t byte = (uint64_t{in.dram_base} + y * in.x_stride + x) * 4;
      if (byte + 4 <= p_.image.size()) {
        state[slot] = Slot::kValid;
        uop_sram[slot] = spec_.decode_uop(word_at(byte));
      } else {
        state[slot] = Slot::kUnknown;
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


  // ---- race: happens-before over the shared scratchpads (rules: isa/verifier.h) ----

  // The scratchpads one module writes and another reads, in the order diagnostics rank them, and
  // DRAM last (kDram names a conflict's memory only; it has no RowState).
  enum class Pad : uint8_t { kInp, kWgt, kOut, kDram };
  static constexpr size_t kNoInsn = SIZE_MAX;

  // The last write of a row and, per module, its last read (instruction indices, kNoInsn: none).
  // Accesses of one module are ordered by program order, so the last one of each module stands
  // for all earlier ones: if it happens before an access, they all do.
  struct RowState {
    size_t writer = kNoInsn;
    std::array<size_t, 3> reader{kNoInsn, kNoInsn, kNoInsn};
  };

  // The first conflict (lowest scratchpad, then lowest row; DRAM last, lowest byte) of the
  // instruction being retired.
  struct Conflict {
    Pad pad = Pad::kInp;
    uint64_t row = 0;          // scratchpad row, or (kDram) first byte of the common range
    uint64_t end = 0;          // kDram: one past the last byte of the first common range
    bool write = false;        // the retiring instruction writes the row (else reads it)
    size_t other = kNoInsn;    // the unordered access's instruction
    bool other_write = false;  // it wrote the row (else read it)
  };

  // The DRAM bytes of a LOAD or STORE (image-relative, as dram_base is): `rows` rows of `len`
  // bytes, row k at base + k*stride. Rows that touch or overlap (stride <= len) are merged into
  // one, so when rows > 1 the rows are disjoint, increasing and separated by gaps.
  struct Footprint {
    uint64_t base = 0, stride = 0, len = 0, rows = 0;
    uint64_t end() const { return base + (rows - 1) * stride + len; }
  };
  // A retired LOAD or STORE of DRAM not yet ordered before every module that could race with it.
  struct DramAccess {
    size_t insn = kNoInsn;
    Footprint bytes;
  };

  // A GEMM/ALU loop nest as far as the rows it touches go, and those rows (see nest_rows).
  struct NestKey {
    uint32_t uop_bgn, uop_end, iter_out, iter_in, dst_out, dst_in, src_out, src_in, wgt_out, wgt_in;
    bool reads;
    auto operator<=>(const NestKey&) const = default;
  };
  struct NestRows {
    std::vector<uint32_t> out, inp, wgt;
  };
  static constexpr size_t kMaxCachedRows = size_t{1} << 22;

  using Clock = std::array<uint64_t, 3>;  // per module: accesses up to this sequence number happen before

  struct RaceState {
    std::array<std::vector<RowState>, 3> rows;  // by Pad
    std::vector<uint64_t> seq;                  // per instruction: 1-based position in its module
    std::array<Clock, 3> clock{};               // per module: the clock of its current instruction
    std::array<std::deque<Clock>, 4> token;     // per token queue: clocks of the pushes not yet popped
    std::vector<Slot> uop_state;                // uop buffer as the compute module sees it
    std::vector<Uop> uop_sram;
    std::map<NestKey, NestRows> nests;          // rows of the nests seen since the last LOAD UOP
    size_t cached_rows = 0;
    std::array<std::vector<uint64_t>, 3> stamp;  // by Pad: stamp_now where nest_rows saw the row
    uint64_t stamp_now = 0;
    size_t insn = 0;                            // instruction being retired
    Module module = Module::kLoad;
    std::optional<Conflict> conflict;
    // DRAM: the STOREs not yet ordered before both the load and the compute module, and per
    // loading module (load, compute) the LOADs not yet ordered before the store module, each in
    // program order; and the union extent [lo, hi) of every STORE's and of every LOAD's bytes.
    std::deque<DramAccess> dram_stores;
    std::array<std::deque<DramAccess>, 2> dram_loads;
    uint64_t store_lo = UINT64_MAX, store_hi = 0, load_lo = UINT64_MAX, load_hi = 0;
  };

  void race_init(RaceState& r, const std::vector<Module>& module) const {
    r.rows[size_t(Pad::kInp)].resize(size_t(cfg_.inp_depth()));
    r.rows[size_t(Pad::kWgt)].resize(size_t(cfg_.wgt_depth()));
    r.rows[size_t(Pad::kOut)].resize(size_t(std::max(cfg_.out_depth(), cfg_.acc_depth())));
    r.seq.resize(module.size());
    std::array<uint64_t, 3> count{};
    for (size_t i = 0; i < module.size(); ++i) r.seq[i] = ++count[size_t(module[i])];
    r.uop_state.assign(size_t(cfg_.uop_depth()), Slot::kEmpty);
    r.uop_sram.assign(size_t(cfg_.uop_depth()), Uop{});
    for (size_t k = 0; k < 3; ++k) r.stamp[k].assign(r.rows[k].size(), 0);
  }

  // Instruction h of module m starts: program order, then the clock of every push it pops (the
  // k-th pop of a queue takes the k-th push, FIFO).
  static void race_start(RaceState& r, size_t h, Module m, const Ports& ports) {
    Clock& c = r.clock[size_t(m)];
    c[size_t(m)] = r.seq[h];
    for (TokenQueue t : ports.pops) {
      auto& q = r.token[size_t(t)];
      if (q.empty()) continue;  // cannot happen: the abstract execution pops only present tokens
      for (size_t k = 0; k < 3; ++k) c[k] = std::max(c[k], q.front()[k]);
      q.pop_front();
    }
  }

  // Instruction h of module m completes: its scratchpad accesses, then its pushes.
  void race_retire(RaceState& r, size_t h, Module m, const Ports& ports) {
    r.insn = h;
    r.module = m;
    r.conflict.reset();
    race_accesses(r, p_.insns[h]);
    if (r.conflict) add_race(r, *r.conflict);
    for (TokenQueue t : ports.pushes) r.token[size_t(t)].push_back(r.clock[size_t(m)]);
  }

  // True when access `other` (of another module) happens before the retiring instruction.
  bool ordered(const RaceState& r, size_t other) const {
    return r.seq[other] <= r.clock[size_t(r.module)][size_t(module_[other])];
  }

  void note_conflict(RaceState& r, Pad pad, uint64_t row, bool write, size_t other, bool other_write,
                     uint64_t end = 0) {
    if (r.conflict && std::pair(r.conflict->pad, r.conflict->row) <= std::pair(pad, row)) return;
    r.conflict = Conflict{pad, row, end, write, other, other_write};
  }

  void race_read(RaceState& r, Pad pad, uint64_t row) {
    auto& rows = r.rows[size_t(pad)];
    if (row >= rows.size()) return;  // reported by sram-bounds
    RowState& s = rows[row];
    size_t& mine = s.reader[size_t(r.module)];
    if (mine == r.insn) return;  // this instruction already read (and checked) the row
    mine = r.insn;
    if (s.writer != kNoInsn && module_[s.writer] != r.module && !ordered(r, s.writer)) {
      note_conflict(r, pad, row, false, s.writer, true);
    }
  }

  void race_write(RaceState& r, Pad pad, uint64_t row) {
    auto& rows = r.rows[size_t(pad)];
    if (row >= rows.size()) return;  // reported by sram-bounds
    RowState& s = rows[row];
    if (s.writer == r.insn) return;  // this instruction already wrote (and checked) the row
    if (s.writer != kNoInsn && module_[s.writer] != r.module && !ordered(r, s.writer)) {
      note_conflict(r, pad, row, true, s.writer, true);
    }
    for (size_t m = 0; m < 3; ++m) {
      const size_t rd = s.reader[m];
      if (m != size_t(r.module) && rd != kNoInsn && !ordered(r, rd)) {
        note_conflict(r, pad, row, true, rd, false);
      }
    }
    s.writer = r.insn;
  }

  // How many of the `n` consecutive rows from `base` lie inside scratchpad `pad`: the rest are
  // sram-bounds errors, which race_read/race_write ignore, so a LOAD/STORE costs at most the
  // scratchpad's depth however large its (illegal) rectangle is.
  static uint64_t rows_inside(const RaceState& r, Pad pad, uint64_t base, uint64_t n) {
    const uint64_t depth = r.rows[size_t(pad)].size();
    return base >= depth ? 0 : std::min(n, depth - base);
  }

  // The rows of the shared scratchpads that instruction `in` reads and writes, as the datapath
  // does (sim/common/datapath.cc); UOP and ACC are compute-only and not tracked, but LOAD UOP
  // updates the resident micro-ops the loop nests use.
  void race_accesses(RaceState& r, const Instruction& in) {
    if (!valid_opcode(in)) return;
    if (is_mem(in)) {
      if (!valid_mem_type(in) || in.x_size == 0) return;
      if (in.opcode == Opcode::kStore) {
        if (in.mem_type != MemType::kOut) return;  // mem-type rule
        const uint64_t n = rows_inside(r, Pad::kOut, in.sram_base, uint64_t{in.y_size} * in.x_size);
        for (uint64_t k = 0; k < n; ++k) race_read(r, Pad::kOut, uint64_t{in.sram_base} + k);
        race_dram(r, in);
        return;
      }
      if (in.mem_type != MemType::kOut) race_dram(r, in);  // LOAD OUT: mem-type rule
      Pad pad = Pad::kOut;
      switch (in.mem_type) {
        case MemType::kUop:
          load_uops(in, r.uop_state, r.uop_sram);
          r.nests.clear();  // the cached rows assumed the previous micro-ops
          r.cached_rows = 0;
          return;
        case MemType::kOut: return;  // mem-type rule
        case MemType::kInp: pad = Pad::kInp; break;
        case MemType::kWgt: pad = Pad::kWgt; break;
        case MemType::kAcc:
        case MemType::kAcc8: pad = Pad::kOut; break;  // LOAD ACC also writes the OUT rows
      }
      // Pads are written (zeros) like the loaded elements.
      const uint64_t n = rows_inside(r, pad, in.sram_base,
                                     (uint64_t{in.y_pad_0} + in.y_size + in.y_pad_1) *
                                         (uint64_t{in.x_pad_0} + in.x_size + in.x_pad_1));
      for (uint64_t k = 0; k < n; ++k) race_write(r, pad, uint64_t{in.sram_base} + k);
      return;
    }
    if (in.opcode != Opcode::kGemm && in.opcode != Opcode::kAlu) return;
    if (in.uop_end > r.uop_state.size() || in.uop_bgn >= in.uop_end) return;  // sram-bounds / uop rules
    const NestRows& rows = nest_rows(r, in);
    for (uint32_t row : rows.out) race_write(r, Pad::kOut, row);
    for (uint32_t row : rows.inp) race_read(r, Pad::kInp, row);
    for (uint32_t row : rows.wgt) race_read(r, Pad::kWgt, row);
  }

  // The DRAM bytes a LOAD/STORE with x_size > 0 and valid fields reads or writes (pads are not
  // DRAM bytes): y_size rows of x_size elements from element dram_base + r*x_stride.
  Footprint dram_footprint(const Instruction& in) const {
    const uint64_t e = dram_elem_bytes(cfg_, in.mem_type);
    Footprint f{uint64_t{in.dram_base} * e, uint64_t{in.x_stride} * e, uint64_t{in.x_size} * e, in.y_size};
    if (f.rows > 1 && f.stride <= f.len) f = Footprint{f.base, 0, f.end() - f.base, 1};
    return f;
  }

  // The first row of `f` that ends after byte p (f.rows when none does).
  static uint64_t first_row_ending_after(const Footprint& f, uint64_t p) {
    if (f.base + f.len > p) return 0;
    if (f.rows == 1) return 1;
    return std::min(f.rows, (p - f.base - f.len) / f.stride + 1);
  }

  // The first (lowest) maximal byte range [lo, hi) both footprints cover, if any. Walks the rows
  // of both in increasing order, skipping rows that end before the other's current row starts,
  // so it costs at most rows(a) + rows(b) steps and usually a few.
  static std::optional<std::pair<uint64_t, uint64_t>> first_common(const Footprint& a, const Footprint& b) {
    uint64_t p = 0;
    for (;;) {
      const uint64_t ra = first_row_ending_after(a, p), rb = first_row_ending_after(b, p);
      if (ra >= a.rows || rb >= b.rows) return std::nullopt;
      const uint64_t sa = a.base + ra * a.stride, sb = b.base + rb * b.stride;
      const uint64_t lo = std::max(sa, sb), hi = std::min(sa + a.len, sb + b.len);
      if (lo < hi) return std::pair(lo, hi);
      p = lo;  // the row that ends at or before lo has no common byte
    }
  }

  // DRAM accesses of the retiring LOAD/STORE `in` (x_size > 0, memory type legal for the
  // opcode). Only the store module writes DRAM, in program order, so the conflicts are a STORE
  // and a LOAD (load module: INP, WGT; compute module: UOP, ACC, ACC_8BIT) with a common byte
  // and no happens-before: a retiring STORE is checked against the earlier-retired LOADs, a
  // retiring LOAD against the earlier-retired STOREs. Accesses that are ordered before every
  // module that could still race with them are dropped (module clocks only grow, and each list is
  // in program order of one module, so they are a prefix). The union extents skip the search
  // when the access lies outside every opposite access so far; inside, each kept access is
  // compared by extent first, and byte-exactly (first_common) only when the extents overlap.
  void race_dram(RaceState& r, const Instruction& in) {
    if (!encodes_[r.insn] || in.y_size == 0) return;  // fields rule; y_size 0 moves no bytes
    const Footprint f = dram_footprint(in);
    const uint64_t f_end = f.end();
    auto check = [&](const std::deque<DramAccess>& others, bool write) {
      for (const DramAccess& o : others) {
        if (o.bytes.base >= f_end || o.bytes.end() <= f.base || ordered(r, o.insn)) continue;
        if (const auto common = first_common(f, o.bytes)) {
          note_conflict(r, Pad::kDram, common->first, write, o.insn, !write, common->second);
        }
      }
    };
    if (in.opcode == Opcode::kStore) {
      for (auto& loads : r.dram_loads) {
        while (!loads.empty() && ordered(r, loads.front().insn)) loads.pop_front();
        if (f.base < r.load_hi && f_end > r.load_lo) check(loads, true);
      }
      r.dram_stores.push_back(DramAccess{r.insn, f});
      r.store_lo = std::min(r.store_lo, f.base);
      r.store_hi = std::max(r.store_hi, f_end);
      return;
    }
    const size_t store = size_t(Module::kStore);
    const uint64_t seen = std::min(r.clock[size_t(Module::kLoad)][store], r.clock[size_t(Module::kCompute)][store]);
    auto& stores = r.dram_stores;
    while (!stores.empty() && r.seq[stores.front().insn] <= seen) stores.pop_front();
    if (f.base < r.store_hi && f_end > r.store_lo) check(stores, false);
    r.dram_loads[r.module == Module::kLoad ? 0 : 1].push_back(DramAccess{r.insn, f});
    r.load_lo = std::min(r.load_lo, f.base);
    r.load_hi = std::max(r.load_hi, f_end);
  }

  // The distinct offsets io*f_out + ii*f_in below `limit` (io < iter_out, ii < iter_in), each
  // once, in increasing order within each residue class modulo f_in. For each io the ii terms
  // form an arithmetic progression of step f_in; progressions are merged as intervals of
  // quotients per residue, so the cost is O(min(iter_out, limit) log + result), not
  // iter_out * iter_in.
  static std::vector<uint32_t> nest_offsets(uint64_t iter_out, uint64_t iter_in, uint64_t f_out, uint64_t f_in,
                                            uint64_t limit) {
    std::vector<uint32_t> offsets;
    if (iter_out == 0 || iter_in == 0 || limit == 0) return offsets;
    const uint64_t n_out = f_out == 0 ? 1 : std::min(iter_out, (limit - 1) / f_out + 1);  // io*f_out < limit
    if (f_in == 0) {
      for (uint64_t io = 0; io < n_out; ++io) offsets.push_back(uint32_t(io * f_out));
      return offsets;
    }
    struct Run {
      uint64_t residue, q_lo, q_end;  // offsets residue + q*f_in for q in [q_lo, q_end)
      bool operator<(const Run& o) const { return std::pair(residue, q_lo) < std::pair(o.residue, o.q_lo); }
    };
    std::vector<Run> runs;
    runs.reserve(size_t(n_out));
    for (uint64_t io = 0; io < n_out; ++io) {
      const uint64_t o = io * f_out;
      const uint64_t count = std::min(iter_in, (limit - 1 - o) / f_in + 1);  // o + ii*f_in < limit
      runs.push_back(Run{o % f_in, o / f_in, o / f_in + count});
    }
    std::sort(runs.begin(), runs.end());
    for (size_t k = 0; k < runs.size();) {
      const uint64_t residue = runs[k].residue;
      uint64_t q = runs[k].q_lo, end = runs[k].q_end;
      for (++k; k < runs.size() && runs[k].residue == residue && runs[k].q_lo <= end; ++k) {
        end = std::max(end, runs[k].q_end);
      }
      for (; q < end; ++q) offsets.push_back(uint32_t(residue + q * f_in));
    }
    return offsets;
  }

  // The distinct in-bounds rows a GEMM/ALU loop nest touches (uop range checked by the caller):
  // for each scratchpad, {uop base + offset} over the resident micro-ops' distinct bases and the
  // nest's distinct offsets (nest_offsets). Streams repeat the same nest over the same resident
  // micro-ops many times (once per tile), so the lists are cached per nest until the next LOAD
  // UOP.
  const NestRows& nest_rows(RaceState& r, const Instruction& in) {
    const bool reads = in.opcode == Opcode::kGemm && !in.reset;  // GEMM reads INP and WGT; ALU only ACC
    const NestKey key{in.uop_bgn, in.uop_end, in.iter_out, in.iter_in,
                      in.dst_factor_out, in.dst_factor_in,
                      reads ? in.src_factor_out : 0, reads ? in.src_factor_in : 0,
                      reads ? in.wgt_factor_out : 0, reads ? in.wgt_factor_in : 0, reads};
    if (auto it = r.nests.find(key); it != r.nests.end()) return it->second;
    NestRows rows;
    auto collect = [&](Pad pad, uint32_t Uop::*field, uint32_t f_out, uint32_t f_in, std::vector<uint32_t>& to) {
      auto& stamp = r.stamp[size_t(pad)];
      const uint64_t depth = stamp.size();
      const std::vector<uint32_t> offsets = nest_offsets(in.iter_out, in.iter_in, f_out, f_in, depth);
      ++r.stamp_now;
      std::vector<uint64_t> bases;  // distinct in-range bases, first-seen order
      for (uint32_t k = in.uop_bgn; k < in.uop_end; ++k) {
        if (r.uop_state[k] != Slot::kValid) continue;  // uop rule
        const uint64_t b = r.uop_sram[k].*field;
        if (b >= depth || stamp[b] == r.stamp_now) continue;  // out of range: sram-bounds rule
        stamp[b] = r.stamp_now;
        bases.push_back(b);
      }
      ++r.stamp_now;
      for (uint64_t b : bases) {
        for (uint32_t o : offsets) {
          const uint64_t row = b + o;
          if (row >= depth || stamp[row] == r.stamp_now) continue;
          stamp[row] = r.stamp_now;
          to.push_back(uint32_t(row));
        }
        if (to.size() == depth) break;  // every row touched
      }
    };
    collect(Pad::kOut, &Uop::dst, in.dst_factor_out, in.dst_factor_in, rows.out);
    if (reads) {
      collect(Pad::kInp, &Uop::src, in.src_factor_out, in.src_factor_in, rows.inp);
      collect(Pad::kWgt, &Uop::wgt, in.wgt_factor_out, in.wgt_factor_in, rows.wgt);
    }
    // Bound the cache's memory: start over when it holds too many rows.
    const size_t n = rows.out.size() + rows.inp.size() + rows.wgt.size();
    if (r.cached_rows + n > kMaxCachedRows) {
      r.nests.clear();
      r.cached_rows = 0;
    }
    r.cached_rows += n;
    return r.nests.emplace(key, std::move(rows)).first->second;
  }

  // Names the racing pair in stream order, the later instruction first (the diagnostic is
  // attached to it), so the message reads as the stream means it: "insn 9 ... reads ... that
  // insn 5 ... writes" (read-after-write) or "insn 9 ... writes ... that insn 5 ... reads
  // earlier" (write-after-read); the fix orders the earlier instruction's module before the later's.
  void add_race(const RaceState& r, const Conflict& c) {
    static constexpr std::array<const char*, 3> kPadName{"inp", "wgt", "out"};
    const bool retiring_later = r.insn > c.other;
    const size_t late = retiring_later ? r.insn : c.other, early = retiring_later ? c.other : r.insn;
    const bool late_write = retiring_later ? c.write : c.other_write;
    const bool early_write = retiring_later ? c.other_write : c.write;
    const Module a = module_[late], b = module_[early];
    const std::string what = c.pad == Pad::kDram ? fmt::format("dram bytes [{}, {})", c.row, c.end)
                                                 : fmt::format("{} row {}", kPadName[size_t(c.pad)], c.row);
    // No queue joins load and store: their ordering is a chain through compute.
    const bool chain = (a == Module::kLoad && b == Module::kStore) || (a == Module::kStore && b == Module::kLoad);
    const std::string fix = fmt::format("add a push/pop{} from {} to {}", chain ? " chain" : "", to_string(b),
                                        to_string(a));
    const char* early_verb = !early_write ? "reads earlier" : late_write ? "writes earlier" : "writes";
    diags_.push_back(Diagnostic{
        VerifyRule::kRace, late,
        fmt::format("insn {} ({} {}) {} {} that insn {} ({} {}) {}, with no dependency token ordering them: {}", late,
                    to_string(a), describe_insn(p_.insns[late]), late_write ? "writes" : "reads", what, early,
                    to_string(b), describe_insn(p_.insns[early]), early_verb, fix)});
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
    const std::vector<Module>& module = module_;
    RaceState race;
    race_init(race, module);

    auto on_finish = [&](size_t i) {
      if (i != n - 1) return;  // an early FINISH is reported by check_static
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
        // FINISH starts once load and store have completed every instruction fetch gave them
        // (docs/microarchitecture.md section 4); FINISH is the last instruction, so every earlier
        // one has been fetched.
        if (p_.insns[h].opcode == Opcode::kFinish &&
            (!cmd[static_cast<size_t>(Module::kLoad)].empty() ||
             !cmd[static_cast<size_t>(Module::kStore)].empty())) {
          return false;
        }
        // As fsim and the cycle model (sim/common/queues.h): an instruction starts only when
        // every token it pops is there and every queue it pushes has room; its pops do not make
        // room for its own pushes (each queue has one producer and one consumer, so the room
        // stays until the push after the instruction).
        for (auto t : ports[h].pops) {
          if (tokens[static_cast<size_t>(t)] == 0) return false;
        }
        for (auto t : ports[h].pushes) {
          if (tokens[static_cast<size_t>(t)] >= tok_depth) return false;
        }
        for (auto t : ports[h].pops) --tokens[static_cast<size_t>(t)];
        race_start(race, h, m, ports[h]);
        got = true;
        return true;
      }
      race_retire(race, h, m, ports[h]);
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
      // A module blocks only before it starts its head instruction (see step_module).
      TESSEL_CHECK(!popped[static_cast<size_t>(m)], "verifier: the {} module blocked after starting insn {}",
                   to_string(m), h);
      bool waits = false;
      for (auto t : ports[h].pops) {
        if (tokens[static_cast<size_t>(t)] == 0) {
          why.push_back(fmt::format("{} waits to pop token queue {} ({}), which is empty", head, to_string(t),
                                    queue_route(t)));
          waits = true;
          break;
        }
      }
      for (auto t : ports[h].pushes) {
        if (waits) break;
        if (tokens[static_cast<size_t>(t)] >= tok_depth) {
          why.push_back(fmt::format("{} waits to push token queue {} ({}), which is full ({} tokens, "
                                    "TOKEN_QUEUE_DEPTH={})",
                                    head, to_string(t), queue_route(t), tokens[static_cast<size_t>(t)], tok_depth));
          break;
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
  std::vector<Module> module_;  // per instruction: the module that executes it
  std::vector<char> encodes_;   // per instruction: 1 when it encodes (its fields fit)
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
    case VerifyRule::kRace: return "race";
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

bool only_deadlocks(const std::vector<Diagnostic>& d) {
  for (const Diagnostic& x : d)
    if (x.rule != VerifyRule::kDeadlock) return false;
  return !d.empty();
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
