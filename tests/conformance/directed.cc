#include "tests/conformance/directed.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <set>
#include <string>

#include "isa/instruction.h"
#include "isa/spec.h"
#include "support/error.h"
#include "tests/conformance/conformance.h"

namespace tessel::conformance {
namespace {

using isa::AluOp;
using isa::DepFlags;
using isa::Instruction;
using isa::MemType;
using isa::Module;
using isa::Opcode;
using isa::TokenQueue;
using isa::Uop;

/// FNV-1a of a Program name: the seed of its random data.
uint64_t name_seed(const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : name) h = (h ^ uint8_t(c)) * 0x100000001b3ull;
  return h;
}

/// Bus beats of a "long" row: more than the 256 beats of one AXI4 burst, so the row is requested
/// as several bursts (docs/microarchitecture.md section 2.1).
constexpr uint32_t kLongRowBeats = 300;

/// DepFlags with a flag set.
DepFlags pop_prev() { return {true, false, false, false}; }
DepFlags pop_next() { return {false, true, false, false}; }
DepFlags push_prev() { return {false, false, true, false}; }
DepFlags push_next() { return {false, false, false, true}; }
DepFlags operator|(DepFlags a, DepFlags b) {
  return {a.pop_prev || b.pop_prev, a.pop_next || b.pop_next, a.push_prev || b.push_prev,
          a.push_next || b.push_next};
}
Instruction with(Instruction in, DepFlags d) {
  in.dep = in.dep | d;
  return in;
}

/// Which module pushes / pops a token queue, and with which flag.
Module producer(TokenQueue q) {
  return q == TokenQueue::kL2G ? Module::kLoad
         : q == TokenQueue::kS2G ? Module::kStore
                                 : Module::kCompute;
}
Module consumer(TokenQueue q) {
  return q == TokenQueue::kG2L ? Module::kLoad
         : q == TokenQueue::kG2S ? Module::kStore
                                 : Module::kCompute;
}
/// l2g: load push_next; g2l: compute push_prev; g2s: compute push_next; s2g: store push_prev.
DepFlags push_flag(TokenQueue q) {
  return (q == TokenQueue::kL2G || q == TokenQueue::kG2S) ? push_next() : push_prev();
}
/// l2g: compute pop_prev; g2l: load pop_next; g2s: store pop_prev; s2g: compute pop_next.
DepFlags pop_flag(TokenQueue q) {
  return (q == TokenQueue::kL2G || q == TokenQueue::kG2S) ? pop_prev() : pop_next();
}
bool has(const DepFlags& d, const DepFlags& f) {
  return (f.pop_prev && d.pop_prev) || (f.pop_next && d.pop_next) ||
         (f.push_prev && d.push_prev) || (f.push_next && d.push_next);
}

/// Builds one directed Program. The image holds, in order: "uop" (the micro-op table, kConst),
/// "inp" (kInput, random int8), "wgt" (random int8), "acc" (random int32), "acc_small" (int32 in
/// [-40, 40], shift amounts), "acc8" (random int8), then "out" (kOutput, zero), sized at the end
/// for the stores made. Segment sizes cover rows of kLongRowBeats beats for every memory type.
class StreamBuilder {
 public:
  /// `min_uop_slots`: entries the "uop" segment must hold at least (default: enough for a
  /// long row and a few hundred more).
  StreamBuilder(const isa::HwConfig& cfg, const std::string& name, uint32_t min_uop_slots = 0)
      : cfg_(cfg), spec_(cfg), rng_(name_seed(name)) {
    prog_.config = cfg;
    prog_.name = name;
    uop_slots_ = std::max({uint32_t{1024}, long_x(MemType::kUop) + 256, min_uop_slots});
    uop_seg_ = add("uop", isa::SegmentKind::kConst, MemType::kUop, uop_slots_, Fill::kZero);
    inp_ = add("inp", isa::SegmentKind::kInput, MemType::kInp,
               std::max<uint32_t>(256, 2 * long_x(MemType::kInp) + 32), Fill::kBytes);
    wgt_ = add("wgt", isa::SegmentKind::kConst, MemType::kWgt,
               std::max<uint32_t>(64, 2 * long_x(MemType::kWgt) + 32), Fill::kBytes);
    acc_ = add("acc", isa::SegmentKind::kConst, MemType::kAcc,
               std::max<uint32_t>(512, 2 * long_x(MemType::kAcc) + 32), Fill::kBytes);
    acc_small_ = add("acc_small", isa::SegmentKind::kConst, MemType::kAcc, 64, Fill::kSmall);
    acc8_ = add("acc8", isa::SegmentKind::kConst, MemType::kAcc8,
                std::max<uint32_t>(512, 2 * long_x(MemType::kAcc8) + 32), Fill::kBytes);
    out_offset_ = (prog_.image.size() + isa::kImageAlign - 1) / isa::kImageAlign * isa::kImageAlign;
  }

  const isa::HwConfig& cfg() const { return cfg_; }
  /// Elements of `type` a row needs to span more than kLongRowBeats bus beats.
  uint32_t long_x(MemType type) const {
    const uint64_t e = isa::dram_elem_bytes(cfg_, type);
    return uint32_t((uint64_t(kLongRowBeats) * cfg_.bus_bytes() + e - 1) / e + 1);
  }
  /// DRAM element index (image-relative, in elements of the type) of element i of a segment.
  uint32_t inp(uint32_t i) const { return inp_ + i; }
  uint32_t wgt(uint32_t i) const { return wgt_ + i; }
  uint32_t acc(uint32_t i) const { return acc_ + i; }
  uint32_t acc_small(uint32_t i) const { return acc_small_ + i; }
  uint32_t acc8(uint32_t i) const { return acc8_ + i; }
  uint32_t uop(uint32_t i) const { return uop_seg_ + i; }
  /// Reserves n OUT elements of the "out" segment; returns the first one's DRAM element index.
  uint32_t reserve_out(uint32_t n) {
    const uint32_t at = out_cursor_;
    out_cursor_ += n;
    return uint32_t(out_offset_ / uint64_t(isa::dram_elem_bytes(cfg_, MemType::kOut))) + at;
  }
  /// A DRAM element index of OUT (from reserve_out) as an ACC_8BIT element index: the same bytes
  /// (both element sizes are BATCH*BLOCK_OUT bytes, so this is the identity for 8-bit lanes).
  uint32_t out_as_acc8(uint32_t out_elem) const {
    return uint32_t(uint64_t(out_elem) * isa::dram_elem_bytes(cfg_, MemType::kOut) /
                    isa::dram_elem_bytes(cfg_, MemType::kAcc8));
  }

  /// Appends micro-ops to the table; returns the index of the first (its UOP DRAM element is
  /// uop(index)).
  uint32_t add_uops(const std::vector<Uop>& uops) {
    const uint32_t at = uint32_t(uops_.size());
    uops_.insert(uops_.end(), uops.begin(), uops.end());
    if (uops_.size() > uop_slots_) {
      throw InternalError("directed program " + prog_.name + ": uop table over its segment");
    }
    return at;
  }
  /// Random micro-ops with dst < dst_n, src < src_n, wgt < wgt_n.
  std::vector<Uop> random_uops(uint32_t n, uint32_t dst_n, uint32_t src_n, uint32_t wgt_n) {
    std::vector<Uop> v(n);
    for (Uop& u : v) {
      u.dst = uint32_t(splitmix64(rng_) % dst_n);
      u.src = uint32_t(splitmix64(rng_) % src_n);
      u.wgt = uint32_t(splitmix64(rng_) % wgt_n);
    }
    return v;
  }

  /// Appends `insn` to the stream; the pops a sync() left pending for its module are added.
  void emit(Instruction insn) {
    const Module m = insn.module();
    for (TokenQueue q : {TokenQueue::kL2G, TokenQueue::kG2L, TokenQueue::kG2S, TokenQueue::kS2G}) {
      if (consumer(q) == m && pending_[size_t(q)] > 0) {
        insn.dep = insn.dep | pop_flag(q);
        --pending_[size_t(q)];
      }
    }
    last_[size_t(m)] = int(prog_.insns.size());
    prog_.insns.push_back(insn);
  }
  /// Orders everything its producer module emitted so far before what its consumer emits next:
  /// the producer's last instruction pushes a token into q (a no-op pushes it when that
  /// instruction already pushes into q, or when the producer has none), and the consumer's next
  /// instruction pops it.
  void sync(TokenQueue q) {
    const Module p = producer(q);
    if (pending_[size_t(q)] > 0) emit(isa::make_noop(consumer(q), {}));  // takes the earlier token
    const int last = last_[size_t(p)];
    if (last >= 0 && !has(prog_.insns[size_t(last)].dep, push_flag(q))) {
      prog_.insns[size_t(last)].dep = prog_.insns[size_t(last)].dep | push_flag(q);
    } else {
      emit(isa::make_noop(p, push_flag(q)));
    }
    ++pending_[size_t(q)];
  }

  // ---- compound steps ----
  /// Compute: LOAD UOP of `uops` into the uop buffer from row `sram`.
  void load_uops(uint32_t sram, const std::vector<Uop>& uops) {
    const uint32_t at = add_uops(uops);
    emit(isa::make_mem(Opcode::kLoad, MemType::kUop, sram, uop(at), 1, uint32_t(uops.size()),
                       uint32_t(uops.size())));
  }
  /// Compute: ACC rows [acc_row, acc_row + rows) = INP rows [inp_row, ...) x WGT row wgt_row
  /// (a reset GEMM then a GEMM over the rows, uop slot 0), then observe() them.
  void gemm_rows_and_observe(uint32_t inp_row, uint32_t rows, uint32_t wgt_row, uint32_t acc_row,
                             int planes) {
    load_uops(0, {{acc_row, inp_row, wgt_row}});
    emit(isa::make_gemm(0, 1, rows, 1, 1, 0, 1, 0, 0, 0, true));
    emit(isa::make_gemm(0, 1, rows, 1, 1, 0, 1, 0, 0, 0));
    observe(acc_row, rows, planes);
  }
  /// Stores OUT rows [acc_row, acc_row + rows) (the low byte of each ACC lane) to fresh OUT
  /// elements; for each further plane, an ALU SHR by 8 of the rows then another STORE, so
  /// `planes` = 4 shows all 32 bits. Ends with a token store -> compute, so compute may rewrite
  /// the rows afterwards.
  void observe(uint32_t acc_row, uint32_t rows, int planes) {
    const uint32_t slot = uint32_t(cfg_.uop_depth() - 1);
    for (int p = 0; p < planes; ++p) {
      if (p > 0) {
        sync(TokenQueue::kS2G);
        if (p == 1) load_uops(slot, {{acc_row, acc_row, 0}});
        emit(isa::make_alu(AluOp::kShr, slot, slot + 1, rows, 1, 1, 0, 1, 0, true, 8));
      }
      sync(TokenQueue::kG2S);
      emit(isa::make_mem(Opcode::kStore, MemType::kOut, acc_row, reserve_out(rows), 1, rows, rows));
    }
    sync(TokenQueue::kS2G);
  }

  /// Ends the stream (the last load and store push a token for compute; no-ops take every
  /// pending token; then FINISH) and returns the Program with its micro-op table written into
  /// the "uop" segment and the "out" segment appended.
  isa::Program finish() {
    // FINISH must be ordered after the last load and store (the verifier's finish rule): their
    // last instructions push a token that compute pops before FINISH (unless they already do).
    const int last_load = last_[size_t(Module::kLoad)];
    if (last_load >= 0 && !prog_.insns[size_t(last_load)].dep.push_next) sync(TokenQueue::kL2G);
    const int last_store = last_[size_t(Module::kStore)];
    if (last_store >= 0 && !prog_.insns[size_t(last_store)].dep.push_prev) sync(TokenQueue::kS2G);
    while (pending_[size_t(TokenQueue::kG2L)] > 0) emit(isa::make_noop(Module::kLoad, {}));
    while (pending_[size_t(TokenQueue::kG2S)] > 0) emit(isa::make_noop(Module::kStore, {}));
    while (pending_[size_t(TokenQueue::kL2G)] > 0 || pending_[size_t(TokenQueue::kS2G)] > 0) {
      emit(isa::make_noop(Module::kCompute, {}));
    }
    emit(isa::make_finish());
    const isa::Segment& us = prog_.segments[0];
    for (size_t k = 0; k < uops_.size(); ++k) {
      const uint32_t bits = spec_.encode_uop(uops_[k]);
      std::memcpy(&prog_.image[us.offset_bytes + 4 * k], &bits, 4);
    }
    prog_.uops = uops_;
    const uint64_t out_bytes =
        std::max<uint64_t>(1, uint64_t(out_cursor_) * isa::dram_elem_bytes(cfg_, MemType::kOut));
    const size_t i = prog_.add_segment("out", isa::SegmentKind::kOutput, out_bytes);
    if (prog_.segments[i].offset_bytes != out_offset_) {
      throw InternalError("directed program " + prog_.name + ": out segment moved");
    }
    return prog_;
  }

 private:
  enum class Fill { kZero, kBytes, kSmall };
  /// Adds a segment of `elems` elements of `type`; returns its first DRAM element index.
  uint32_t add(const std::string& name, isa::SegmentKind kind, MemType type, uint32_t elems,
               Fill fill) {
    const uint64_t e = isa::dram_elem_bytes(cfg_, type);
    const size_t i = prog_.add_segment(name, kind, uint64_t(elems) * e);
    const isa::Segment& s = prog_.segments[i];
    uint8_t* p = &prog_.image[s.offset_bytes];
    if (fill == Fill::kBytes) {
      for (uint64_t b = 0; b < s.size_bytes; b += 8) {
        const uint64_t r = splitmix64(rng_);
        std::memcpy(p + b, &r, std::min<uint64_t>(8, s.size_bytes - b));
      }
    } else if (fill == Fill::kSmall) {
      for (uint64_t b = 0; b + 4 <= s.size_bytes; b += 4) {
        const int32_t v = int32_t(splitmix64(rng_) % 81) - 40;
        std::memcpy(p + b, &v, 4);
      }
    }
    return uint32_t(s.offset_bytes / e);
  }

  isa::HwConfig cfg_;
  isa::IsaSpec spec_;
  isa::Program prog_;
  uint64_t rng_;
  uint32_t uop_slots_ = 0;
  uint32_t uop_seg_ = 0, inp_ = 0, wgt_ = 0, acc_ = 0, acc_small_ = 0, acc8_ = 0;
  uint64_t out_offset_ = 0;
  uint32_t out_cursor_ = 0;
  std::vector<Uop> uops_;
  std::array<int, 4> pending_{};
  std::array<int, 3> last_{-1, -1, -1};
};

struct Pads {
  uint32_t y0 = 0, y1 = 0, x0 = 0, x1 = 0;
};

Instruction mem(Opcode op, MemType t, uint32_t sram, uint32_t dram, uint32_t y, uint32_t x,
                uint32_t stride, Pads p = {}) {
  return isa::make_mem(op, t, sram, dram, y, x, stride, p.y0, p.y1, p.x0, p.x1);
}
Instruction load(MemType t, uint32_t sram, uint32_t dram, uint32_t y, uint32_t x, uint32_t stride,
                 Pads p = {}) {
  return mem(Opcode::kLoad, t, sram, dram, y, x, stride, p);
}

uint32_t rect(uint32_t y, uint32_t x, Pads p) { return (p.y0 + y + p.y1) * (p.x0 + x + p.x1); }

// ---------------------------------------------------------------------------------------------
// LOAD INP: the loaded rows go through a GEMM with one WGT row and are stored (3 byte planes:
// a product of int8 rows fits 19 bits plus sign).

isa::Program load_inp_case(const isa::HwConfig& cfg, const std::string& name, uint32_t y,
                           uint32_t x, uint32_t stride, Pads p, uint32_t dram_off, int planes = 3) {
  StreamBuilder b(cfg, "load_inp/" + name);
  b.emit(load(MemType::kWgt, 0, b.wgt(1), 1, 1, 1));
  b.emit(load(MemType::kInp, 0, b.inp(dram_off), y, x, stride, p));
  b.sync(TokenQueue::kL2G);
  b.gemm_rows_and_observe(0, rect(y, x, p), 0, 0, planes);
  return b.finish();
}

isa::Program load_inp_pads_only(const isa::HwConfig& cfg, const std::string& name, Pads p,
                                uint32_t x) {
  // Random rows first, then a y_size 0 load writes only its pads over the first of them.
  StreamBuilder b(cfg, "load_inp/" + name);
  const uint32_t rows = rect(0, x, p) + 6;
  b.emit(load(MemType::kWgt, 0, b.wgt(2), 1, 1, 1));
  b.emit(load(MemType::kInp, 0, b.inp(5), 1, rows, rows));
  b.emit(load(MemType::kInp, 0, b.inp(0), 0, x, x, p));
  b.sync(TokenQueue::kL2G);
  b.gemm_rows_and_observe(0, rows, 0, 0, 3);
  return b.finish();
}

isa::Program load_inp_x0_noop(const isa::HwConfig& cfg) {
  // x_size 0 (with y_size and pads) changes nothing and only carries its token.
  StreamBuilder b(cfg, "load_inp/x0_noop");
  b.emit(load(MemType::kWgt, 0, b.wgt(0), 1, 1, 1));
  b.emit(load(MemType::kInp, 0, b.inp(3), 1, 12, 12));
  b.emit(with(load(MemType::kInp, 0, b.inp(40), 3, 0, 4, {1, 1, 2, 2}), push_next()));
  b.emit(with(isa::make_noop(Module::kCompute, {}), pop_prev()));
  b.gemm_rows_and_observe(0, 12, 0, 0, 3);
  return b.finish();
}

isa::Program top_rows(const isa::HwConfig& cfg) {
  // The last rows of every scratchpad and the last uop slots: INP and WGT loaded at their top,
  // a GEMM from the second-to-last uop slot writing the top ACC rows, observed through the top
  // uop slot (full index widths in every address path).
  StreamBuilder b(cfg, "load_inp/top_rows");
  const uint32_t inp_top = uint32_t(cfg.inp_depth()) - 6;
  const uint32_t wgt_top = uint32_t(cfg.wgt_depth()) - 1;
  const uint32_t acc_top = uint32_t(cfg.acc_depth()) - 6;
  const uint32_t slot = uint32_t(cfg.uop_depth()) - 2;
  b.emit(load(MemType::kWgt, wgt_top, b.wgt(5), 1, 1, 1));
  b.emit(load(MemType::kInp, inp_top, b.inp(9), 2, 3, 4));
  b.sync(TokenQueue::kL2G);
  b.load_uops(slot, {{acc_top, inp_top, wgt_top}});
  b.emit(isa::make_gemm(slot, slot + 1, 6, 1, 1, 0, 1, 0, 0, 0, true));
  b.emit(isa::make_gemm(slot, slot + 1, 6, 1, 1, 0, 1, 0, 0, 0));
  b.observe(acc_top, 6, 4);
  return b.finish();
}

std::vector<isa::Program> load_inp_programs(const isa::HwConfig& cfg) {
  StreamBuilder probe(cfg, "probe");
  const uint32_t lx = probe.long_x(MemType::kInp);
  std::vector<isa::Program> v;
  v.push_back(load_inp_case(cfg, "plain", 3, 5, 7, {}, 3));
  v.push_back(load_inp_case(cfg, "pad_y0", 3, 5, 6, {2, 0, 0, 0}, 1));
  v.push_back(load_inp_case(cfg, "pad_y1", 3, 5, 6, {0, 3, 0, 0}, 2));
  v.push_back(load_inp_case(cfg, "pad_x0", 3, 5, 6, {0, 0, 1, 0}, 0));
  v.push_back(load_inp_case(cfg, "pad_x1", 3, 5, 6, {0, 0, 0, 4}, 7));
  v.push_back(load_inp_case(cfg, "pad_all", 3, 5, 6, {1, 2, 3, 4}, 9));
  v.push_back(load_inp_case(cfg, "pad_max", 1, 1, 1, {15, 15, 15, 15}, 11, 1));
  v.push_back(load_inp_pads_only(cfg, "pads_only", {1, 2, 1, 3}, 3));
  v.push_back(load_inp_pads_only(cfg, "pads_only_empty", {}, 3));
  v.push_back(load_inp_x0_noop(cfg));
  v.push_back(load_inp_case(cfg, "stride_gap", 4, 3, 7, {}, 1));
  v.push_back(load_inp_case(cfg, "stride_dense", 4, 3, 3, {}, 2));
  v.push_back(load_inp_case(cfg, "stride_overlap", 4, 3, 2, {}, 3));
  v.push_back(load_inp_case(cfg, "stride_zero", 4, 3, 0, {}, 4));
  v.push_back(load_inp_case(cfg, "long_rows", 2, lx, lx + 5, {0, 0, 1, 0}, 1, 1));
  v.push_back(top_rows(cfg));
  return v;
}

// ---------------------------------------------------------------------------------------------
// LOAD WGT: a GEMM uses every loaded WGT row against one INP row.

isa::Program load_wgt_case(const isa::HwConfig& cfg, const std::string& name, uint32_t y,
                           uint32_t x, uint32_t stride, uint32_t sram) {
  StreamBuilder b(cfg, "load_wgt/" + name);
  const uint32_t rows = y * x;
  b.emit(load(MemType::kInp, 0, b.inp(4), 1, 1, 1));
  b.emit(load(MemType::kWgt, sram, b.wgt(1), y, x, stride));
  b.sync(TokenQueue::kL2G);
  // acc[r] = inp[0] . wgt[sram + r]: one uop, the loop steps dst and wgt.
  b.load_uops(0, {{0, 0, sram}});
  b.emit(isa::make_gemm(0, 1, rows, 1, 1, 0, 0, 0, 1, 0, true));
  b.emit(isa::make_gemm(0, 1, rows, 1, 1, 0, 0, 0, 1, 0));
  b.observe(0, rows, 3);
  return b.finish();
}

isa::Program load_wgt_empty(const isa::HwConfig& cfg, const std::string& name, uint32_t y,
                            uint32_t x) {
  // A zero-size WGT load (y_size 0 or x_size 0) after real data: only its token moves.
  StreamBuilder b(cfg, "load_wgt/" + name);
  b.emit(load(MemType::kInp, 0, b.inp(2), 1, 1, 1));
  b.emit(load(MemType::kWgt, 0, b.wgt(3), 1, 4, 4));
  b.emit(with(load(MemType::kWgt, 0, b.wgt(20), y, x, x), push_next()));
  b.emit(with(isa::make_noop(Module::kCompute, {}), pop_prev()));
  b.load_uops(0, {{0, 0, 0}});
  b.emit(isa::make_gemm(0, 1, 4, 1, 1, 0, 0, 0, 1, 0, true));
  b.emit(isa::make_gemm(0, 1, 4, 1, 1, 0, 0, 0, 1, 0));
  b.observe(0, 4, 3);
  return b.finish();
}

std::vector<isa::Program> load_wgt_programs(const isa::HwConfig& cfg) {
  StreamBuilder probe(cfg, "probe");
  const uint32_t lx = probe.long_x(MemType::kWgt);
  std::vector<isa::Program> v;
  v.push_back(load_wgt_case(cfg, "plain", 2, 3, 5, 2));
  v.push_back(load_wgt_case(cfg, "long_rows", 2, lx, lx + 3, 1));
  v.push_back(load_wgt_empty(cfg, "y0_zero_size", 0, 4));
  v.push_back(load_wgt_empty(cfg, "x0_noop", 3, 0));
  return v;
}

// ---------------------------------------------------------------------------------------------
// LOAD UOP: micro-ops loaded at odd SRAM rows from odd DRAM elements (half bus words), then used.

isa::Program load_uop_unaligned(const isa::HwConfig& cfg) {
  StreamBuilder b(cfg, "load_uop/unaligned");
  b.emit(load(MemType::kInp, 0, b.inp(1), 1, 16, 16));
  b.emit(load(MemType::kWgt, 0, b.wgt(0), 1, 4, 4));
  b.sync(TokenQueue::kL2G);
  // Reset ACC rows 0..15.
  b.load_uops(0, {{0, 0, 0}});
  b.emit(isa::make_gemm(0, 1, 16, 1, 1, 0, 0, 0, 0, 0, true));
  // Table: 1 padding uop, then 20 random ones; load 5 (from element 1) to row 3, a 2-D block
  // of 3 rows x 3 uops, stride 5, from element 7 to row 9, and 6 from element 2 to row 21
  // (element offsets 1, 2 and 3 within a 16-byte word).
  const std::vector<Uop> rnd = b.random_uops(21, 16, 16, 4);
  const uint32_t at = b.add_uops(rnd);
  b.emit(load(MemType::kUop, 3, b.uop(at + 1), 1, 5, 5));
  b.emit(load(MemType::kUop, 9, b.uop(at + 7), 3, 3, 5));
  b.emit(load(MemType::kUop, 21, b.uop(at + 2), 1, 6, 6));
  b.emit(isa::make_gemm(3, 8, 1, 1, 0, 0, 0, 0, 0, 0));
  b.emit(isa::make_gemm(9, 18, 1, 1, 0, 0, 0, 0, 0, 0));
  b.emit(isa::make_gemm(21, 27, 1, 1, 0, 0, 0, 0, 0, 0));
  b.observe(0, 16, 3);
  return b.finish();
}

isa::Program load_uop_long_row(const isa::HwConfig& cfg) {
  StreamBuilder b(cfg, "load_uop/long_row");
  const uint32_t n = b.long_x(MemType::kUop);
  b.emit(load(MemType::kInp, 0, b.inp(6), 1, 16, 16));
  b.emit(load(MemType::kWgt, 0, b.wgt(2), 1, 4, 4));
  b.sync(TokenQueue::kL2G);
  b.load_uops(0, {{0, 0, 0}});
  b.emit(isa::make_gemm(0, 1, 16, 1, 1, 0, 0, 0, 0, 0, true));
  const uint32_t at = b.add_uops(b.random_uops(n + 1, 16, 16, 4));
  b.emit(load(MemType::kUop, 1, b.uop(at + 1), 1, n, n));
  b.emit(isa::make_gemm(1, 1 + n, 1, 1, 0, 0, 0, 0, 0, 0));
  b.observe(0, 16, 4);
  return b.finish();
}

isa::Program load_uop_empty(const isa::HwConfig& cfg, const std::string& name, uint32_t y,
                            uint32_t x) {
  // A zero-size UOP load must not change the uop buffer: the GEMM still uses the old uops.
  StreamBuilder b(cfg, "load_uop/" + name);
  b.emit(load(MemType::kInp, 0, b.inp(0), 1, 16, 16));
  b.emit(load(MemType::kWgt, 0, b.wgt(1), 1, 2, 2));
  b.sync(TokenQueue::kL2G);
  b.load_uops(0, {{0, 0, 0}});
  b.emit(isa::make_gemm(0, 1, 8, 1, 1, 0, 0, 0, 0, 0, true));
  b.load_uops(2, {{0, 1, 0}, {1, 2, 1}, {2, 3, 0}, {3, 4, 1}});
  const uint32_t at = b.add_uops({{5, 5, 0}, {6, 6, 1}, {7, 7, 0}, {4, 4, 1}});
  b.emit(with(load(MemType::kUop, 2, b.uop(at), y, x, x), push_next()));
  b.emit(with(isa::make_noop(Module::kStore, {}), pop_prev()));
  b.emit(isa::make_gemm(2, 6, 2, 1, 4, 0, 4, 0, 0, 0));
  b.observe(0, 8, 3);
  return b.finish();
}

std::vector<isa::Program> load_uop_programs(const isa::HwConfig& cfg) {
  return {load_uop_unaligned(cfg), load_uop_long_row(cfg),
          load_uop_empty(cfg, "y0_zero_size", 0, 4), load_uop_empty(cfg, "x0_noop", 2, 0)};
}

// ---------------------------------------------------------------------------------------------
// LOAD ACC / ACC_8BIT (compute module): observed directly, all four byte planes.

isa::Program load_acc_case(const isa::HwConfig& cfg, MemType t, const std::string& name,
                           uint32_t y, uint32_t x, uint32_t stride, Pads p, uint32_t dram_off,
                           bool preload_then_pads_only = false) {
  const std::string group = t == MemType::kAcc ? "load_acc/" : "load_acc8/";
  StreamBuilder b(cfg, group + name);
  const uint32_t base = t == MemType::kAcc ? b.acc(dram_off) : b.acc8(dram_off);
  uint32_t rows = rect(y, x, p);
  if (preload_then_pads_only) {
    // Random rows first (from the other segment), then the pads-only load over the first ones.
    rows = rect(0, x, p) + 5;
    b.emit(load(MemType::kAcc, 0, b.acc(100), 1, rows, rows));
    b.emit(load(MemType::kAcc8, 2, b.acc8(50), 1, 2, 2));
    b.emit(load(t, 0, base, 0, x, x, p));
  } else {
    b.emit(load(t, 0, base, y, x, stride, p));
  }
  b.observe(0, rows, 4);
  return b.finish();
}

isa::Program load_acc_x0(const isa::HwConfig& cfg, MemType t) {
  const std::string group = t == MemType::kAcc ? "load_acc/" : "load_acc8/";
  StreamBuilder b(cfg, group + "x0_noop");
  b.emit(load(MemType::kAcc, 0, b.acc(7), 1, 6, 6));
  b.emit(with(load(t, 0, t == MemType::kAcc ? b.acc(40) : b.acc8(40), 2, 0, 3, {1, 0, 1, 0}),
              push_next()));
  b.emit(with(isa::make_noop(Module::kStore, {}), pop_prev()));
  b.observe(0, 6, 4);
  return b.finish();
}

std::vector<isa::Program> load_acc_programs(const isa::HwConfig& cfg, MemType t) {
  StreamBuilder probe(cfg, "probe");
  const uint32_t lx = probe.long_x(t);
  std::vector<isa::Program> v;
  v.push_back(load_acc_case(cfg, t, "plain", 3, 4, 6, {}, 1));
  v.push_back(load_acc_case(cfg, t, "pad_y0", 2, 3, 5, {2, 0, 0, 0}, 2));
  v.push_back(load_acc_case(cfg, t, "pad_y1", 2, 3, 5, {0, 1, 0, 0}, 3));
  v.push_back(load_acc_case(cfg, t, "pad_x0", 2, 3, 5, {0, 0, 3, 0}, 4));
  v.push_back(load_acc_case(cfg, t, "pad_x1", 2, 3, 5, {0, 0, 0, 2}, 5));
  v.push_back(load_acc_case(cfg, t, "pad_all", 2, 3, 5, {2, 1, 3, 1}, 6));
  v.push_back(load_acc_case(cfg, t, "pads_only", 0, 3, 3, {1, 1, 2, 1}, 0, true));
  v.push_back(load_acc_case(cfg, t, "long_rows", 2, lx, lx + 2, {}, 1));
  v.push_back(load_acc_x0(cfg, t));
  return v;
}

// ---------------------------------------------------------------------------------------------
// STORE

isa::Program store_case(const isa::HwConfig& cfg, const std::string& name, uint32_t y, uint32_t x,
                        uint32_t stride) {
  StreamBuilder b(cfg, "store/" + name);
  const uint32_t rows = y * x;
  b.emit(load(MemType::kAcc8, 0, b.acc8(3), 1, rows, rows));
  b.sync(TokenQueue::kG2S);
  const uint32_t dst = b.reserve_out(y == 0 ? 1 : (y - 1) * stride + x);
  b.emit(mem(Opcode::kStore, MemType::kOut, 0, dst, y, x, stride));
  return b.finish();
}

isa::Program store_long_row(const isa::HwConfig& cfg) {
  StreamBuilder b(cfg, "store/long_row");
  const uint32_t x = b.long_x(MemType::kOut);
  b.emit(load(MemType::kAcc8, 0, b.acc8(1), 1, 2 * x, 2 * x));
  b.sync(TokenQueue::kG2S);
  const uint32_t dst = b.reserve_out(2 * x + 3);
  b.emit(mem(Opcode::kStore, MemType::kOut, 0, dst, 2, x, x + 3));
  return b.finish();
}

isa::Program store_zero_size(const isa::HwConfig& cfg) {
  // y_size 0 and x_size 0 stores write nothing and only carry tokens; a real store follows.
  StreamBuilder b(cfg, "store/zero_size");
  b.emit(load(MemType::kAcc, 0, b.acc(2), 1, 4, 4));
  b.sync(TokenQueue::kG2S);
  const uint32_t dst = b.reserve_out(8);
  b.emit(with(mem(Opcode::kStore, MemType::kOut, 0, dst, 0, 3, 3), push_prev()));
  b.emit(with(isa::make_noop(Module::kCompute, {}), pop_next()));
  b.emit(with(mem(Opcode::kStore, MemType::kOut, 0, dst + 4, 2, 0, 0), push_prev()));
  b.emit(with(isa::make_noop(Module::kCompute, {}), pop_next()));
  b.emit(mem(Opcode::kStore, MemType::kOut, 0, dst + 1, 1, 4, 4));
  return b.finish();
}

isa::Program store_reload(const isa::HwConfig& cfg) {
  // A STORE, then (after its token) a LOAD ACC_8BIT of the same DRAM: the store's data must be
  // in DRAM when the load reads it.
  StreamBuilder b(cfg, "store/reload");
  b.emit(load(MemType::kAcc, 0, b.acc(9), 1, 6, 6));
  b.sync(TokenQueue::kG2S);
  const uint32_t dst = b.reserve_out(6);
  b.emit(mem(Opcode::kStore, MemType::kOut, 0, dst, 1, 6, 6));
  b.sync(TokenQueue::kS2G);
  b.emit(load(MemType::kAcc8, 8, b.out_as_acc8(dst), 2, 3, 3, {0, 0, 1, 0}));
  b.observe(8, 8, 4);
  return b.finish();
}

std::vector<isa::Program> store_programs(const isa::HwConfig& cfg) {
  return {store_case(cfg, "strided", 3, 4, 9), store_case(cfg, "single", 1, 1, 1),
          store_case(cfg, "overlap", 3, 4, 2), store_long_row(cfg), store_zero_size(cfg),
          store_reload(cfg)};
}

// ---------------------------------------------------------------------------------------------
// GEMM

/// Load 64 INP rows and 16 WGT rows (ordered before compute by an l2g token).
void load_operands(StreamBuilder& b) {
  b.emit(load(MemType::kInp, 0, b.inp(1), 1, 64, 64));
  b.emit(load(MemType::kWgt, 0, b.wgt(0), 1, 16, 16));
  b.sync(TokenQueue::kL2G);
}

isa::Program gemm_loops_factors(const isa::HwConfig& cfg) {
  StreamBuilder b(cfg, "gemm/loops_factors");
  load_operands(b);
  // Two uops, iter_out 3 x iter_in 4, every factor non-zero and distinct: dst rows up to
  // 1 + 2*8 + 3*2 = 23, src up to 3 + 2*11 + 3*3 = 34, wgt up to 1 + 2*4 + 3 = 12.
  b.load_uops(0, {{0, 0, 0}, {1, 3, 1}});
  b.emit(isa::make_gemm(0, 2, 3, 4, 8, 2, 11, 3, 4, 1, true));
  b.emit(isa::make_gemm(0, 2, 3, 4, 8, 2, 11, 3, 4, 1));
  b.observe(0, 24, 4);
  return b.finish();
}

isa::Program gemm_accumulate(const isa::HwConfig& cfg) {
  // No reset: products accumulate onto loaded ACC (32-bit wrap), twice over overlapping rows.
  StreamBuilder b(cfg, "gemm/accumulate");
  load_operands(b);
  b.emit(load(MemType::kAcc, 0, b.acc(5), 1, 16, 16));
  b.load_uops(0, {{0, 2, 3}, {1, 4, 5}, {2, 6, 7}});
  b.emit(isa::make_gemm(0, 3, 2, 2, 4, 1, 6, 2, 1, 2));
  b.emit(isa::make_gemm(0, 3, 2, 2, 5, 2, 3, 5, 2, 1));
  b.observe(0, 16, 4);
  return b.finish();
}

isa::Program gemm_reset_loops(const isa::HwConfig& cfg) {
  // A reset GEMM with loops and factors over random ACC rows: only the rows of the nest are zero.
  StreamBuilder b(cfg, "gemm/reset_loops");
  b.emit(load(MemType::kAcc, 0, b.acc(11), 1, 32, 32));
  b.load_uops(0, {{1, 0, 0}, {4, 0, 0}});
  b.emit(isa::make_gemm(0, 2, 2, 3, 13, 2, 5, 7, 3, 9, true));
  b.observe(0, 32, 4);
  return b.finish();
}

isa::Program gemm_chain(const isa::HwConfig& cfg, uint32_t k) {
  // k back-to-back uops accumulating into ACC row 0; the next GEMM and an ALU read it at once;
  // an iter_in loop of k with dst_factor_in 0 accumulates into row 3 k times.
  StreamBuilder b(cfg, "gemm/chain_" + std::to_string(k));
  load_operands(b);
  b.emit(load(MemType::kAcc, 0, b.acc(20), 1, 8, 8));
  std::vector<Uop> chain;
  for (uint32_t j = 0; j < k; ++j) chain.push_back({0, 2 * j + 1, j % 4});
  chain.push_back({0, 17, 5});  // slot k: one more write of row 0
  chain.push_back({3, 9, 6});   // slot k + 1: row 3
  b.load_uops(0, chain);
  b.load_uops(32, {{2, 0, 0}});
  b.emit(isa::make_gemm(0, k, 1, 1, 0, 0, 0, 0, 0, 0));
  b.emit(isa::make_gemm(k, k + 1, 1, 1, 0, 0, 0, 0, 0, 0));
  b.emit(isa::make_alu(AluOp::kAdd, 32, 33, 1, 1, 0, 0, 0, 0));  // row 2 += row 0
  b.emit(isa::make_gemm(k + 1, k + 2, 1, k, 0, 0, 0, 1, 0, 1));
  b.emit(isa::make_alu(AluOp::kMul, 32, 33, 1, 1, 0, 0, 0, 0));  // row 2 *= row 0
  b.observe(0, 8, 4);
  return b.finish();
}

isa::Program gemm_empty(const isa::HwConfig& cfg) {
  // GEMM/ALU with no uop to issue (uop_end == uop_bgn, iter_out 0, iter_in 0), carrying tokens
  // between real instructions; the data must stay as loaded.
  StreamBuilder b(cfg, "gemm/empty");
  load_operands(b);
  b.emit(load(MemType::kAcc, 0, b.acc(30), 1, 8, 8));
  b.load_uops(0, {{0, 0, 0}, {1, 1, 1}});
  b.emit(isa::make_gemm(1, 1, 3, 3, 1, 1, 1, 1, 1, 1, false, push_next()));
  b.emit(with(mem(Opcode::kStore, MemType::kOut, 0, b.reserve_out(8), 1, 8, 8),
              pop_prev() | push_prev()));
  b.emit(isa::make_gemm(0, 2, 0, 4, 1, 1, 1, 1, 1, 1, false, pop_next()));
  b.emit(isa::make_gemm(0, 2, 4, 0, 1, 1, 1, 1, 1, 1, true));
  b.emit(isa::make_alu(AluOp::kAdd, 0, 2, 0, 2, 1, 0, 1, 0, true, 5));
  b.emit(isa::make_alu(AluOp::kMul, 0, 2, 3, 0, 1, 0, 1, 0));
  b.emit(isa::make_alu(AluOp::kMax, 2, 2, 3, 3, 1, 0, 1, 0));
  b.emit(isa::make_gemm(0, 2, 2, 2, 2, 1, 2, 1, 2, 1));  // a real GEMM after the empty ones
  b.observe(0, 8, 4);
  return b.finish();
}

isa::Program gemm_full_uop_buffer(const isa::HwConfig& cfg) {
  // Every uop slot loaded by one LOAD UOP (a row of many bursts) and used by one GEMM whose
  // uop_end is the buffer depth; then a GEMM of the top slot alone.
  const uint32_t depth = uint32_t(cfg.uop_depth());
  StreamBuilder b(cfg, "gemm/full_uop_buffer", depth + 16);
  load_operands(b);
  b.load_uops(0, {{0, 0, 0}});
  b.emit(isa::make_gemm(0, 1, 16, 1, 1, 0, 0, 0, 0, 0, true));
  b.load_uops(0, b.random_uops(depth, 16, 64, 16));
  b.emit(isa::make_gemm(0, depth, 1, 1, 0, 0, 0, 0, 0, 0));
  b.emit(isa::make_gemm(depth - 1, depth, 2, 1, 0, 0, 1, 0, 1, 0));
  b.observe(0, 16, 4);
  return b.finish();
}

isa::Program gemm_long_loops(const isa::HwConfig& cfg) {
  // Loop counts past 16 bits of uops: 300 x 300 into one ACC row (a dependent chain of 90000
  // uops), and iter_out at its field maximum (16383) with iter_in 2.
  StreamBuilder b(cfg, "gemm/long_loops");
  load_operands(b);
  b.emit(load(MemType::kAcc, 0, b.acc(3), 1, 4, 4));
  b.load_uops(0, {{0, 5, 2}, {1, 6, 3}});
  b.emit(isa::make_gemm(0, 1, 300, 300, 0, 0, 0, 0, 0, 0));
  b.emit(isa::make_gemm(1, 2, 16383, 2, 0, 0, 0, 0, 0, 0));
  b.observe(0, 4, 4);
  return b.finish();
}

std::vector<isa::Program> gemm_programs(const isa::HwConfig& cfg) {
  std::vector<isa::Program> v{gemm_loops_factors(cfg), gemm_accumulate(cfg), gemm_reset_loops(cfg)};
  for (uint32_t k = 1; k <= 5; ++k) v.push_back(gemm_chain(cfg, k));
  v.push_back(gemm_empty(cfg));
  v.push_back(gemm_full_uop_buffer(cfg));
  v.push_back(gemm_long_loops(cfg));
  return v;
}

// ---------------------------------------------------------------------------------------------
// ALU

const char* op_name(AluOp op) {
  switch (op) {
    case AluOp::kMin: return "min";
    case AluOp::kMax: return "max";
    case AluOp::kAdd: return "add";
    case AluOp::kShr: return "shr";
    case AluOp::kMul: return "mul";
  }
  return "?";
}

isa::Program alu_imm(const isa::HwConfig& cfg, AluOp op) {
  StreamBuilder b(cfg, std::string("alu/") + op_name(op) + "_imm");
  std::vector<int32_t> imms = {5, -7, 0, 1, 32767, -32768, 100, -1};
  if (op == AluOp::kShr) imms = {0, 1, 5, 8, 31, 32, 40, -1, -3, -31, -32, -40, 32767, -32768};
  const uint32_t n = uint32_t(imms.size());
  b.emit(load(MemType::kAcc, 0, b.acc(3), 1, 2 * n, 2 * n));
  std::vector<Uop> u;
  for (uint32_t j = 0; j < n; ++j) u.push_back({2 * j, 2 * j, 0});
  b.load_uops(0, u);
  // Immediate j over rows 2j, 2j+1 (iter_out 2, dst_factor_out 1).
  for (uint32_t j = 0; j < n; ++j) {
    b.emit(isa::make_alu(op, j, j + 1, 2, 1, 1, 0, 1, 0, true, imms[j]));
  }
  b.observe(0, 2 * n, 4);
  return b.finish();
}

isa::Program alu_vector(const isa::HwConfig& cfg, AluOp op) {
  StreamBuilder b(cfg, std::string("alu/") + op_name(op) + "_vector");
  // Rows 0..15 random; source rows S.. random, or small shift amounts for SHR.
  b.emit(load(MemType::kAcc, 0, b.acc(1), 1, 16, 16));
  const uint32_t s = 16;
  if (op == AluOp::kShr) {
    b.emit(load(MemType::kAcc, s, b.acc_small(0), 1, 16, 16));
  } else {
    b.emit(load(MemType::kAcc, s, b.acc(40), 1, 16, 16));
  }
  b.load_uops(0, {
                     {0, s + 0, 0},  // src != dst
                     {1, 1, 0},      // src == dst
                     {2, 1, 0},      // src written by the previous uop
                     {2, s + 1, 0},  // dst written by the previous uop
                     {3, 2, 0},      // src written by the previous uop again
                 });
  b.emit(isa::make_alu(op, 0, 5, 1, 1, 0, 0, 0, 0));
  // Loops: dst 4 + 2i + j, src s + 2 + 3i + j (i < 2, j < 2), then a chained instruction on
  // the rows just written.
  b.load_uops(8, {{4, s + 2, 0}, {8, 4, 0}});
  b.emit(isa::make_alu(op, 8, 9, 2, 2, 2, 1, 3, 1));
  b.emit(isa::make_alu(op, 9, 10, 2, 2, 2, 1, 2, 1));
  b.observe(0, 12, 4);
  return b.finish();
}

isa::Program alu_long_loop(const isa::HwConfig& cfg) {
  // 16383 x 4 ADDs of 3 into one row, then a vector MUL chain of 1000 on another.
  StreamBuilder b(cfg, "alu/long_loop");
  b.emit(load(MemType::kAcc, 0, b.acc(8), 1, 4, 4));
  b.load_uops(0, {{0, 0, 0}, {1, 2, 0}});
  b.emit(isa::make_alu(AluOp::kAdd, 0, 1, 16383, 4, 0, 0, 0, 0, true, 3));
  b.emit(isa::make_alu(AluOp::kMul, 1, 2, 1000, 1, 0, 0, 0, 0));
  b.observe(0, 4, 4);
  return b.finish();
}

std::vector<isa::Program> alu_programs(const isa::HwConfig& cfg) {
  std::vector<isa::Program> v;
  for (AluOp op : {AluOp::kMin, AluOp::kMax, AluOp::kAdd, AluOp::kShr, AluOp::kMul}) {
    v.push_back(alu_imm(cfg, op));
    v.push_back(alu_vector(cfg, op));
  }
  v.push_back(alu_long_loop(cfg));
  return v;
}

// ---------------------------------------------------------------------------------------------
// Queues and tokens

isa::Program long_stream(const isa::HwConfig& cfg) {
  // Twelve rounds of one INP load, five compute instructions and one store, plus setup: long
  // enough to fill small command queues in every module.
  StreamBuilder b(cfg, "queues/long_stream");
  b.emit(load(MemType::kWgt, 0, b.wgt(0), 1, 4, 4));
  b.emit(with(load(MemType::kInp, 0, b.inp(0), 1, 16, 16), push_next()));
  std::vector<Uop> u;
  for (uint32_t r = 0; r < 12; ++r) u.push_back({r, 16 + r, r % 4});
  b.emit(with(load(MemType::kUop, 0, b.uop(b.add_uops(u)), 1, 12, 12), pop_prev()));
  b.load_uops(12, {{0, 0, 0}});
  b.emit(isa::make_gemm(12, 13, 12, 1, 1, 0, 0, 0, 0, 0, true));
  const uint32_t out = b.reserve_out(12);
  for (uint32_t r = 0; r < 12; ++r) {
    b.emit(with(load(MemType::kInp, 16 + r, b.inp(20 + 3 * r), 1, 1, 1), push_next()));
    b.emit(isa::make_gemm(r, r + 1, 1, 1, 0, 0, 0, 0, 0, 0, false, pop_prev()));
    b.emit(isa::make_alu(AluOp::kAdd, r, r + 1, 1, 1, 0, 0, 0, 0, true, int32_t(r) * 37 - 200));
    b.emit(isa::make_alu(AluOp::kMul, r, r + 1, 1, 1, 0, 0, 0, 0, true, 3 - int32_t(r)));
    b.emit(isa::make_alu(AluOp::kShr, r, r + 1, 1, 1, 0, 0, 0, 0, true, int32_t(r % 5)));
    b.emit(isa::make_alu(AluOp::kMax, r, r + 1, 1, 1, 0, 0, 0, 0, true, -1000, push_next()));
    b.emit(with(mem(Opcode::kStore, MemType::kOut, r, out + r, 1, 1, 1), pop_prev()));
  }
  return b.finish();
}

isa::Program token_flood(const isa::HwConfig& cfg, const std::string& name, uint32_t n,
                         bool with_s2g) {
  // n tokens into l2g before compute's first pop (load no-ops finish in their start cycle and
  // fetch dispatches every load before any compute instruction), then n into g2s, then (with_s2g)
  // n into s2g; every fourth instruction moves real data.
  StreamBuilder b(cfg, "queues/" + name);
  b.emit(load(MemType::kWgt, 0, b.wgt(3), 1, 1, 1));
  for (uint32_t i = 0; i < n; ++i) {
    if (i % 4 == 0) {
      b.emit(with(load(MemType::kInp, i, b.inp(i % 200), 1, 1, 1), push_next()));
    } else {
      b.emit(isa::make_noop(Module::kLoad, push_next()));
    }
  }
  std::vector<Uop> u;
  for (uint32_t i = 0; i < n; ++i) u.push_back({i, i, 0});
  b.emit(load(MemType::kUop, 0, b.uop(b.add_uops(u)), 1, n, n));
  b.emit(isa::make_gemm(0, 1, n, 1, 1, 0, 0, 0, 0, 0, true));
  const DepFlags g = pop_prev() | push_next();
  for (uint32_t i = 0; i < n; ++i) {
    if (i % 4 == 0) {
      b.emit(isa::make_gemm(i, i + 1, 1, 1, 0, 0, 0, 0, 0, 0, false, g));
    } else {
      b.emit(isa::make_noop(Module::kCompute, g));
    }
  }
  const uint32_t out = b.reserve_out(n);
  const DepFlags s = with_s2g ? pop_prev() | push_prev() : pop_prev();
  for (uint32_t i = 0; i < n; ++i) {
    if (i % 4 == 0) {
      b.emit(with(mem(Opcode::kStore, MemType::kOut, i, out + i, 1, 1, 1), s));
    } else {
      b.emit(isa::make_noop(Module::kStore, s));
    }
  }
  if (with_s2g) {
    for (uint32_t i = 0; i < n; ++i) b.emit(isa::make_noop(Module::kCompute, pop_next()));
  }
  return b.finish();
}

isa::Program cmd_queue_full(const isa::HwConfig& cfg) {
  // Compute's first instruction waits for a token that the load module pushes only after four
  // INP loads of 2048 rows each (thousands of cycles), while fetch keeps dispatching compute
  // instructions: the compute command queue fills to its depth (the built maximum of the base
  // config) and fetch stalls on it.
  StreamBuilder b(cfg, "queues/cmd_queue_full");
  const uint32_t rows = std::min<uint32_t>(2048, uint32_t(cfg.inp_depth()));
  b.emit(load(MemType::kWgt, 0, b.wgt(6), 1, 1, 1));
  for (int k = 0; k < 4; ++k) {
    // 64 DRAM rows of rows/64 elements, stride 0: the same elements again and again.
    b.emit(load(MemType::kInp, 0, b.inp(uint32_t(k)), 64, rows / 64, 0));
  }
  b.emit(isa::make_noop(Module::kLoad, push_next()));
  b.emit(with(load(MemType::kAcc, 0, b.acc(4), 1, 8, 8), pop_prev()));
  b.load_uops(0, {{0, 0, 0}, {1, 1, 0}, {2, 2, 0}, {3, 3, 0}, {4, 2, 0}});
  const uint32_t n = uint32_t(cfg.cmd_queue_depth) + 40;
  for (uint32_t i = 0; i < n; ++i) {
    b.emit(isa::make_alu(i % 3 == 0 ? AluOp::kAdd : i % 3 == 1 ? AluOp::kMax : AluOp::kShr,
                         i % 5, i % 5 + 1, 1, 1, 0, 0, 0, 0, i % 3 != 0, int32_t(i % 7) - 3));
  }
  // Rows 0..4 hold the ALU results; row 5 accumulates INP row 7 x WGT row 0.
  b.load_uops(8, {{5, 7, 0}});
  b.emit(isa::make_gemm(8, 9, 1, 1, 0, 0, 0, 0, 0, 0));
  b.observe(0, 6, 4);
  return b.finish();
}

isa::Program ping_pong(const isa::HwConfig& cfg, uint32_t regions, uint32_t rounds) {
  // Virtual-thread style: round i uses INP/WGT/ACC region i % regions; load waits (g2l) until
  // compute freed the region, compute waits for load (l2g) and for store to drain the region's
  // OUT rows (s2g), store waits for compute (g2s).
  StreamBuilder b(cfg, "queues/ping_pong_" + std::to_string(regions));
  constexpr uint32_t kRows = 4;  // INP/ACC rows per region
  std::vector<Uop> u;
  for (uint32_t r = 0; r < regions; ++r) {
    u.push_back({r * kRows, r * kRows, r});  // GEMM: acc[r*4 + i] += inp[r*4 + i] . wgt[r]
  }
  const uint32_t uops_at = b.add_uops(u);
  const uint32_t out = b.reserve_out(rounds * kRows);
  for (uint32_t i = 0; i < rounds; ++i) {
    const uint32_t r = i % regions;
    const bool reuse_prev = i >= regions;       // region used before: wait for its release
    const bool reused_next = i + regions < rounds;  // region used again: release it
    b.emit(with(load(MemType::kInp, r * kRows, b.inp(7 * i), 1, kRows, kRows),
                reuse_prev ? pop_next() : DepFlags{}));
    b.emit(with(load(MemType::kWgt, r, b.wgt(i % 13), 1, 1, 1), push_next()));
    b.emit(with(load(MemType::kUop, r, b.uop(uops_at + r), 1, 1, 1),
                reuse_prev ? pop_prev() | pop_next() : pop_prev()));
    b.emit(isa::make_gemm(r, r + 1, kRows, 1, 1, 0, 1, 0, 0, 0, true));
    b.emit(isa::make_gemm(r, r + 1, kRows, 1, 1, 0, 1, 0, 0, 0, false,
                          reused_next ? push_prev() : DepFlags{}));
    b.emit(isa::make_alu(AluOp::kAdd, r, r + 1, kRows, 1, 1, 0, 1, 0, true, int32_t(i) * 11 - 50));
    b.emit(isa::make_alu(AluOp::kShr, r, r + 1, kRows, 1, 1, 0, 1, 0, true, 2, push_next()));
    // Every store releases its region (s2g): compute pops the token before reusing the region,
    // and the last rounds' tokens at the end, so FINISH waits for every store.
    b.emit(with(mem(Opcode::kStore, MemType::kOut, r * kRows, out + i * kRows, 1, kRows, kRows),
                pop_prev() | push_prev()));
  }
  for (uint32_t i = 0; i < std::min(regions, rounds); ++i) {
    b.emit(isa::make_noop(Module::kCompute, pop_next()));
  }
  return b.finish();
}

isa::Program bus_contention(const isa::HwConfig& cfg) {
  // Phase 1 computes rows that a long STORE writes while phase 2's long loads of the load
  // module (INP) and the compute module (UOP, ACC, ACC_8BIT) read: every master on the bus.
  StreamBuilder b(cfg, "queues/bus_contention");
  const uint32_t lx_out = b.long_x(MemType::kOut);
  const uint32_t lx_inp = b.long_x(MemType::kInp);
  const uint32_t lx_acc8 = b.long_x(MemType::kAcc8);
  const uint32_t lx_acc = b.long_x(MemType::kAcc);
  // Phase 1: ACC rows 0..lx_out-1 from ACC_8BIT data, stored as one long row.
  b.emit(load(MemType::kAcc8, 0, b.acc8(2), 1, lx_out, lx_out));
  b.sync(TokenQueue::kG2S);
  b.emit(mem(Opcode::kStore, MemType::kOut, 0, b.reserve_out(lx_out), 1, lx_out, lx_out));
  // Phase 2, concurrently: load module INP + WGT, compute ACC and ACC_8BIT into other rows.
  b.emit(load(MemType::kInp, 0, b.inp(3), 2, lx_inp, lx_inp + 1));
  b.emit(load(MemType::kWgt, 0, b.wgt(1), 1, 2, 2));
  const uint32_t a0 = lx_out + 8;
  b.emit(load(MemType::kAcc, a0, b.acc(1), 1, lx_acc, lx_acc));
  b.emit(load(MemType::kAcc8, a0 + lx_acc, b.acc8(7), 1, lx_acc8, lx_acc8));
  b.sync(TokenQueue::kL2G);
  // acc[a0 + i] += inp[2i] . wgt[1] over the ACC rows: INP rows exist for i < lx_inp.
  const uint32_t m = std::min(lx_acc + lx_acc8, lx_inp);
  b.load_uops(0, {{a0, 0, 1}});
  b.emit(isa::make_gemm(0, 1, m, 1, 1, 0, 2, 0, 0, 0));
  b.observe(a0, lx_acc + lx_acc8, 2);
  return b.finish();
}

std::vector<isa::Program> queue_programs(const isa::HwConfig& base) {
  std::vector<isa::Program> v;
  for (int depth : {0, 4, 2, 1}) {
    v.push_back(long_stream(with_runtime_keys(base, depth, 0)));
  }
  v.push_back(long_stream(with_runtime_keys(base, 0, 0, 0)));
  v.push_back(cmd_queue_full(base));
  // Token flood: every token queue filled to its depth (at most 1024 tokens).
  const uint32_t n = uint32_t(std::min(1024, base.token_queue_depth));
  v.push_back(token_flood(base, "token_flood", n, true));
  // Back-pressure: fetch must dispatch all n load instructions (blocked on a full l2g queue)
  // before compute's first, so the load command queue must hold them.
  const int backpressure_n = std::min(40, base.cmd_queue_depth - 2);
  if (backpressure_n >= 4) {
    for (int depth : {1, 2}) {
      v.push_back(token_flood(with_runtime_keys(base, 0, depth), "token_flood_backpressure",
                              uint32_t(backpressure_n), false));
    }
  }
  struct Variant {
    int cmd, tok, lat;
  };
  for (const Variant& var : {Variant{0, 0, -1}, Variant{0, 1, -1}, Variant{0, 2, -1},
                             Variant{1, 1, -1}, Variant{2, 0, -1}, Variant{0, 0, 0},
                             Variant{0, 0, 100}}) {
    const isa::HwConfig cfg = with_runtime_keys(base, var.cmd, var.tok, var.lat);
    // At most as many regions (tokens in flight per queue) as the token queues hold.
    const auto regions = [&cfg](int r) { return uint32_t(std::min(r, cfg.token_queue_depth)); };
    v.push_back(ping_pong(cfg, regions(2), 10));
    if (var.tok == 0 && var.cmd == 0 && var.lat < 0) {
      v.push_back(ping_pong(cfg, 1, 6));
      v.push_back(ping_pong(cfg, regions(8), 20));
    }
  }
  for (int lat : {-1, 0, 100}) v.push_back(bus_contention(with_runtime_keys(base, 0, 0, lat)));
  return v;
}

}  // namespace

std::vector<isa::Program> directed_programs(const isa::HwConfig& base) {
  base.validate();
  std::vector<isa::Program> v;
  auto append = [&v](std::vector<isa::Program> more) {
    for (isa::Program& p : more) v.push_back(std::move(p));
  };
  append(load_inp_programs(base));
  append(load_wgt_programs(base));
  append(load_uop_programs(base));
  append(load_acc_programs(base, MemType::kAcc));
  append(load_acc_programs(base, MemType::kAcc8));
  append(store_programs(base));
  append(gemm_programs(base));
  append(alu_programs(base));
  v.push_back(StreamBuilder(base, "finish/alone").finish());
  append(queue_programs(base));
  return v;
}

std::vector<isa::HwConfig> configs_of(const std::vector<isa::Program>& programs) {
  std::vector<isa::HwConfig> out;
  std::set<std::string> seen;
  for (const isa::Program& p : programs) {
    if (seen.insert(p.config.label()).second) out.push_back(p.config);
  }
  return out;
}

}  // namespace tessel::conformance
