#include "compiler/backend/accel/dep_tokens.h"

#include <algorithm>
#include <array>
#include <optional>

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
        if (in.x_size == 0 || in.y_size == 0) break;
        const int64_t rows = int64_t{in.y_pad_0} + in.y_size + in.y_pad_1;
        const int64_t cols = int64_t{in.x_pad_0} + in.x_size + in.x_pad_1;
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

}  // namespace

void insert_dependency_tokens(std::vector<isa::Instruction>& insns, const isa::HwConfig& cfg,
                              const std::vector<isa::Uop>& dram_uops, uint64_t uop_dram_base) {
  for (size_t i = 0; i < insns.size(); ++i) {
    if (insns[i].opcode == Opcode::kFinish) {
      throw_user_error("instruction {}: finish before the end of the stream", i);
    }
    insns[i].dep = {};
  }
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
