#include "compiler/backend/accel/dep_tokens.h"

#include <algorithm>
#include <array>
#include <optional>

#include "isa/program.h"
#include "support/error.h"

namespace tessel::compiler::accel {

using isa::MemType;
using isa::Module;
using isa::Opcode;

namespace {

/// Hull of an affine loop nest over the micro-ops [bgn, end): returns {lo, hi} or nullopt.
struct Hull {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  void add(int64_t base, int64_t span) {
    lo = std::min(lo, base);
    hi = std::max(hi, base + span);
  }
  bool empty() const { return lo > hi; }
};

}  // namespace

std::vector<Access> compute_accesses(const std::vector<isa::Instruction>& insns,
                                     const isa::HwConfig& cfg,
                                     const std::vector<isa::Uop>& dram_uops,
                                     uint64_t uop_dram_base) {
  std::vector<std::optional<isa::Uop>> uop_sram(static_cast<size_t>(cfg.uop_depth()));
  std::vector<Access> out(insns.size());
  for (size_t i = 0; i < insns.size(); ++i) {
    const isa::Instruction& in = insns[i];
    Access& a = out[i];
    switch (in.opcode) {
      case Opcode::kLoad: {
        // x_size 0: no effect; y_size 0 with pads: a pads-only LOAD, which writes its pad rows
        // (isa/timing.h pad_elems)
        if (in.x_size == 0) break;
        const int64_t rows = int64_t{in.y_pad_0} + in.y_size + in.y_pad_1;
        const int64_t cols = int64_t{in.x_pad_0} + in.x_size + in.x_pad_1;
        if (rows == 0) break;
        MemType buf = in.mem_type;
        if (buf == MemType::kAcc8 || buf == MemType::kOut) buf = MemType::kAcc;
        a.writes.push_back({buf, in.sram_base, in.sram_base + rows * cols - 1});
        if (in.mem_type == MemType::kUop) {
          for (uint32_t y = 0; y < in.y_size; ++y) {
            for (uint32_t x = 0; x < in.x_size; ++x) {
              const uint64_t d = uint64_t{in.dram_base} + uint64_t{y} * in.x_stride + x;
              const uint64_t s = uint64_t{in.sram_base} + uint64_t{y} * in.x_size + x;
              if (d < uop_dram_base || d - uop_dram_base >= dram_uops.size()) {
                throw_user_error(
                    "instruction {}: load uop reads dram element {} outside the micro-op table "
                    "[{}, {})",
                    i, d, uop_dram_base, uop_dram_base + dram_uops.size());
              }
              if (s >= uop_sram.size()) {
                throw_user_error("instruction {}: load uop writes uop row {} beyond depth {}", i, s,
                                 uop_sram.size());
              }
              uop_sram[s] = dram_uops[d - uop_dram_base];
            }
          }
        }
        break;
      }
      case Opcode::kStore:
        if (in.x_size == 0 || in.y_size == 0) break;
        a.reads.push_back(
            {MemType::kAcc, in.sram_base, in.sram_base + int64_t{in.y_size} * in.x_size - 1});
        break;
      case Opcode::kGemm:
      case Opcode::kAlu: {
        if (in.iter_out == 0 || in.iter_in == 0 || in.uop_end <= in.uop_bgn) break;
        a.reads.push_back({MemType::kUop, in.uop_bgn, int64_t{in.uop_end} - 1});
        const int64_t io = in.iter_out - 1, ii = in.iter_in - 1;
        Hull dst, src, wgt;
        for (uint32_t k = in.uop_bgn; k < in.uop_end; ++k) {
          if (k >= uop_sram.size() || !uop_sram[k]) {
            throw_user_error("instruction {}: {} uses uop row {} that no load uop has filled", i,
                             isa::to_string(in.opcode), k);
          }
          const isa::Uop& u = *uop_sram[k];
          dst.add(u.dst, io * in.dst_factor_out + ii * in.dst_factor_in);
          src.add(u.src, io * in.src_factor_out + ii * in.src_factor_in);
          wgt.add(u.wgt, io * in.wgt_factor_out + ii * in.wgt_factor_in);
        }
        a.writes.push_back({MemType::kAcc, dst.lo, dst.hi});
        if (in.opcode == Opcode::kGemm && !in.reset) {
          a.reads.push_back({MemType::kAcc, dst.lo, dst.hi});
          a.reads.push_back({MemType::kInp, src.lo, src.hi});
          a.reads.push_back({MemType::kWgt, wgt.lo, wgt.hi});
        } else if (in.opcode == Opcode::kAlu) {
          a.reads.push_back({MemType::kAcc, dst.lo, dst.hi});
          if (!in.use_imm) a.reads.push_back({MemType::kAcc, src.lo, src.hi});
        }
        break;
      }
      case Opcode::kFinish:
        break;
    }
  }
  return out;
}

namespace {

bool any_overlap(const std::vector<SramRegion>& a, const std::vector<SramRegion>& b) {
  for (const SramRegion& x : a) {
    for (const SramRegion& y : b) {
      if (x.overlaps(y)) return true;
    }
  }
  return false;
}

/// True when `later` must wait for `earlier` (RAW, WAR or WAW).
bool conflicts(const Access& earlier, const Access& later) {
  return any_overlap(earlier.writes, later.reads) || any_overlap(earlier.reads, later.writes) ||
         any_overlap(earlier.writes, later.writes);
}

int mod_index(Module m) { return static_cast<int>(m); }

/// Image-relative DRAM bytes of a LOAD/STORE: one [first, end) range per row (empty for no-ops).
std::vector<std::pair<uint64_t, uint64_t>> dram_rows(const isa::Instruction& in, const isa::HwConfig& cfg) {
  std::vector<std::pair<uint64_t, uint64_t>> rows;
  if (in.x_size == 0 || in.y_size == 0) return rows;
  for (uint32_t r = 0; r < in.y_size; ++r) {
    const isa::DramRow row = isa::dram_row(cfg, in, r);
    rows.emplace_back(row.first, row.end);
  }
  return rows;
}

/// The insertion above orders adjacent modules only (load<->compute, compute<->store). A STORE and
/// a LOAD of the same DRAM bytes would need a chain through compute, which a single-layer Program
/// never needs (its stores write the output segment, its loads read the others): reject such a
/// stream with a clear error instead of emitting a racy one.
void check_no_dram_dependency(const std::vector<isa::Instruction>& insns, const isa::HwConfig& cfg) {
  std::vector<size_t> stores, loads;
  for (size_t i = 0; i < insns.size(); ++i) {
    if (insns[i].opcode == Opcode::kStore) stores.push_back(i);
    if (insns[i].opcode == Opcode::kLoad) loads.push_back(i);
  }
  if (stores.empty() || loads.empty()) return;
  struct Span {
    size_t insn;
    uint64_t lo, hi;  // hull [lo, hi)
    std::vector<std::pair<uint64_t, uint64_t>> rows;
  };
  std::vector<Span> store_spans;
  uint64_t union_lo = UINT64_MAX, union_hi = 0;
  for (size_t i : stores) {
    Span sp{i, UINT64_MAX, 0, dram_rows(insns[i], cfg)};
    for (const auto& [a, b] : sp.rows) {
      sp.lo = std::min(sp.lo, a);
      sp.hi = std::max(sp.hi, b);
    }
    if (sp.rows.empty()) continue;
    union_lo = std::min(union_lo, sp.lo);
    union_hi = std::max(union_hi, sp.hi);
    store_spans.push_back(std::move(sp));
  }
  for (size_t i : loads) {
    const auto rows = dram_rows(insns[i], cfg);
    if (rows.empty()) continue;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (const auto& [a, b] : rows) {
      lo = std::min(lo, a);
      hi = std::max(hi, b);
    }
    if (hi <= union_lo || lo >= union_hi) continue;
    for (const Span& sp : store_spans) {
      if (hi <= sp.lo || lo >= sp.hi) continue;
      for (const auto& [a, b] : rows) {
        for (const auto& [c, d] : sp.rows) {
          if (a < d && c < b) {
            throw_user_error(
                "instruction {} ({} {}) and instruction {} (STORE) both touch dram bytes [{}, {}): "
                "dependency-token insertion orders load<->compute and compute<->store only, so a "
                "Program must not load bytes it also stores",
                i, isa::to_string(insns[i].opcode), isa::to_string(insns[i].mem_type), sp.insn,
                std::max(a, c), std::min(b, d));
          }
        }
      }
    }
  }
}

}  // namespace

void insert_dependency_tokens(std::vector<isa::Instruction>& insns, const isa::HwConfig& cfg,
                              const std::vector<isa::Uop>& dram_uops, uint64_t uop_dram_base) {
  for (size_t i = 0; i < insns.size(); ++i) {
    if (insns[i].opcode == Opcode::kFinish) {
      throw_user_error("instruction {}: finish before the end of the stream", i);
    }
    insns[i].dep = {};
  }
  check_no_dram_dependency(insns, cfg);
  const std::vector<Access> acc = compute_accesses(insns, cfg, dram_uops, uop_dram_base);
  // Instruction indices of each module, in program order.
  std::array<std::vector<size_t>, 3> by_mod;
  for (size_t i = 0; i < insns.size(); ++i) by_mod[mod_index(insns[i].module())].push_back(i);
  // last_synced[q][p]: position (in by_mod[p]) of the latest P instruction whose token Q popped,
  // -1 if none. Positions only grow because consumers are visited in program order.
  std::array<std::array<int64_t, 3>, 3> last_synced;
  for (auto& row : last_synced) row.fill(-1);
  // pos[i]: position of instruction i within its module's list.
  std::vector<int64_t> pos(insns.size());
  for (const auto& list : by_mod) {
    for (size_t k = 0; k < list.size(); ++k) pos[list[k]] = static_cast<int64_t>(k);
  }
  for (size_t i = 0; i < insns.size(); ++i) {
    const Module q = insns[i].module();
    std::vector<Module> producers;
    if (q == Module::kLoad) producers = {Module::kCompute};
    if (q == Module::kCompute) producers = {Module::kLoad, Module::kStore};
    if (q == Module::kStore) producers = {Module::kCompute};
    for (Module p : producers) {
      const auto& plist = by_mod[mod_index(p)];
      int64_t& synced = last_synced[mod_index(q)][mod_index(p)];
      // scan the P instructions before i, newest first, down to the last synchronised one
      auto it = std::lower_bound(plist.begin(), plist.end(), i);
      int64_t k = static_cast<int64_t>(it - plist.begin()) - 1;
      for (; k > synced; --k) {
        if (conflicts(acc[plist[static_cast<size_t>(k)]], acc[i])) break;
      }
      if (k <= synced) continue;
      const size_t j = plist[static_cast<size_t>(k)];
      // P pushes towards Q after j; Q pops before i.
      const bool q_is_next_of_p = mod_index(q) > mod_index(p);
      if (q_is_next_of_p) {
        insns[j].dep.push_next = true;
        insns[i].dep.pop_prev = true;
      } else {
        insns[j].dep.push_prev = true;
        insns[i].dep.pop_next = true;
      }
      synced = k;
    }
  }
  // VTA-style ending: FINISH waits for the last load and the last store.
  insns.push_back(isa::make_noop(Module::kLoad, {.push_next = true}));
  insns.push_back(isa::make_noop(Module::kStore, {.push_prev = true}));
  insns.push_back(isa::make_noop(Module::kCompute, {.pop_prev = true, .pop_next = true}));
  insns.push_back(isa::make_finish());
}

}  // namespace tessel::compiler::accel
