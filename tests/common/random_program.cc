#include "tests/common/random_program.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "isa/spec.h"
#include "support/error.h"

namespace tessel::testgen {

using isa::DepFlags;
using isa::Instruction;
using isa::MemType;
using isa::Module;
using isa::Opcode;
using isa::Uop;

namespace {

/// splitmix64 (Steele, Lea, Flood 2014): small, fast and identical on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [lo, hi] (hi >= lo); the modulo bias is irrelevant for tests.
  uint64_t range(uint64_t lo, uint64_t hi) { return lo + next() % (hi - lo + 1); }
  bool chance(uint32_t num, uint32_t den) { return next() % den < num; }

 private:
  uint64_t state_;
};

/// A dense SRAM rectangle of a LOAD: pads and sizes, rows() elements in all.
struct Rect {
  uint32_t x_size = 1, y_size = 1;
  uint32_t y_pad_0 = 0, y_pad_1 = 0, x_pad_0 = 0, x_pad_1 = 0;
  uint64_t row_w() const { return uint64_t(x_pad_0) + x_size + x_pad_1; }
  uint64_t total() const { return (uint64_t(y_pad_0) + y_size + y_pad_1) * row_w(); }
};

/// One data segment: offset in elements of its type from image byte 0, and its length.
struct Seg {
  uint64_t elem_offset = 0;
  uint64_t elems = 0;
};

class Generator {
 public:
  Generator(const isa::HwConfig& cfg, uint64_t seed, const RandomProgramOptions& o)
      : cfg_(cfg), spec_(cfg), rng_(seed), o_(o) {}

  isa::Program run(uint64_t seed);

 private:
  Rect pick_rect(uint64_t capacity, bool pads);
  /// A LOAD/STORE of `r` at sram `sram`, reading/writing segment `seg` (elements).
  Instruction mem_insn(Opcode op, MemType type, const Rect& r, uint64_t sram, const Seg& seg);
  /// Picks loop factors for [lo, lo+n) and returns (factor_out, factor_in, largest base index).
  void pick_axis(uint32_t iter_out, uint32_t iter_in, uint64_t lo, uint64_t n, uint32_t& f_out,
                 uint32_t& f_in, std::vector<uint32_t>& bases, uint32_t count);
  Instruction nest_insn(Opcode op, uint32_t uop_bgn, uint32_t n_uops, uint64_t acc_lo,
                        uint64_t acc_n, uint64_t src_lo, uint64_t src_n, uint64_t wgt_lo,
                        uint64_t wgt_n, std::vector<Uop>& round_uops);
  static void set_first_last(std::vector<Instruction>& v, DepFlags first, DepFlags last);

  const isa::HwConfig& cfg_;
  isa::IsaSpec spec_;
  Rng rng_;
  RandomProgramOptions o_;
  std::vector<Uop> uops_;  ///< the "uop" segment, decoded
  uint64_t uop_seg_elem_ = 0;
};

Rect Generator::pick_rect(uint64_t capacity, bool pads) {
  Rect r;
  r.x_size = uint32_t(rng_.range(1, o_.max_x_size));
  r.y_size = uint32_t(rng_.range(1, o_.max_y_size));
  if (pads && o_.padding && o_.max_pad > 0 && rng_.chance(2, 3)) {
    r.y_pad_0 = uint32_t(rng_.range(0, o_.max_pad));
    r.y_pad_1 = uint32_t(rng_.range(0, o_.max_pad));
    r.x_pad_0 = uint32_t(rng_.range(0, o_.max_pad));
    r.x_pad_1 = uint32_t(rng_.range(0, o_.max_pad));
  }
  // Shrink until it fits; a 1x1 rectangle without pads always fits (capacity >= 1).
  while (r.total() > capacity) {
    if (r.y_size > 1) {
      --r.y_size;
    } else if (r.y_pad_0 + r.y_pad_1 > 0) {
      if (r.y_pad_0) --r.y_pad_0; else --r.y_pad_1;
    } else if (r.x_pad_0 + r.x_pad_1 > 0) {
      if (r.x_pad_0) --r.x_pad_0; else --r.x_pad_1;
    } else {
      --r.x_size;
    }
  }
  return r;
}

Instruction Generator::mem_insn(Opcode op, MemType type, const Rect& r, uint64_t sram,
                                const Seg& seg) {
  uint32_t stride = r.x_size + uint32_t(rng_.range(0, 2));
  if (uint64_t(r.y_size - 1) * stride + r.x_size > seg.elems) stride = r.x_size;
  const uint64_t extent = uint64_t(r.y_size - 1) * stride + r.x_size;
  TESSEL_CHECK(extent <= seg.elems, "random rectangle of {} elements exceeds its segment ({})",
               extent, seg.elems);
  const uint64_t dram = seg.elem_offset + rng_.range(0, seg.elems - extent);
  return isa::make_mem(op, type, uint32_t(sram), uint32_t(dram), r.y_size, r.x_size, stride,
                       r.y_pad_0, r.y_pad_1, r.x_pad_0, r.x_pad_1);
}

void Generator::pick_axis(uint32_t iter_out, uint32_t iter_in, uint64_t lo, uint64_t n,
                          uint32_t& f_out, uint32_t& f_in, std::vector<uint32_t>& bases,
                          uint32_t count) {
  f_out = uint32_t(rng_.range(0, 3));
  f_in = uint32_t(rng_.range(0, 3));
  uint64_t span = uint64_t(iter_out - 1) * f_out + uint64_t(iter_in - 1) * f_in;
  if (span >= n) {
    f_out = 0;
    f_in = 0;
    span = 0;
  }
  bases.resize(count);
  for (uint32_t k = 0; k < count; ++k) bases[k] = uint32_t(lo + rng_.range(0, n - 1 - span));
}

Instruction Generator::nest_insn(Opcode op, uint32_t uop_bgn, uint32_t n_uops, uint64_t acc_lo,
                                 uint64_t acc_n, uint64_t src_lo, uint64_t src_n,
                                 uint64_t wgt_lo, uint64_t wgt_n,
                                 std::vector<Uop>& round_uops) {
  Instruction in;
  in.opcode = op;
  in.iter_out = uint32_t(rng_.range(1, o_.max_iter));
  in.iter_in = uint32_t(rng_.range(1, o_.max_iter));
  in.uop_bgn = uop_bgn;
  in.uop_end = uop_bgn + n_uops;
  std::vector<uint32_t> dst, src, wgt;
  pick_axis(in.iter_out, in.iter_in, acc_lo, acc_n, in.dst_factor_out, in.dst_factor_in, dst,
            n_uops);
  pick_axis(in.iter_out, in.iter_in, src_lo, src_n, in.src_factor_out, in.src_factor_in, src,
            n_uops);
  if (op == Opcode::kGemm) {
    pick_axis(in.iter_out, in.iter_in, wgt_lo, wgt_n, in.wgt_factor_out, in.wgt_factor_in, wgt,
              n_uops);
  } else {
    wgt.assign(n_uops, 0);
  }
  for (uint32_t k = 0; k < n_uops; ++k) round_uops.push_back(Uop{dst[k], src[k], wgt[k]});
  return in;
}

void Generator::set_first_last(std::vector<Instruction>& v, DepFlags first, DepFlags last) {
  TESSEL_CHECK(!v.empty(), "a module part of a round has no instruction");
  DepFlags& f = v.front().dep;
  f.pop_prev |= first.pop_prev;
  f.pop_next |= first.pop_next;
  DepFlags& l = v.back().dep;
  l.push_prev |= last.push_prev;
  l.push_next |= last.push_next;
}

isa::Program Generator::run(uint64_t seed) {
  isa::Program p;
  p.config = cfg_;
  p.name = "random_" + std::to_string(seed);

  const uint64_t inp_depth = cfg_.inp_depth(), wgt_depth = cfg_.wgt_depth();
  const uint64_t acc_depth = cfg_.acc_depth(), uop_depth = cfg_.uop_depth();
  const uint64_t n_regions = std::clamp<uint64_t>(
      o_.regions, 1,
      std::min<uint64_t>({uint64_t(cfg_.token_queue_depth), inp_depth, wgt_depth, acc_depth}));
  const uint64_t inp_reg = inp_depth / n_regions, wgt_reg = wgt_depth / n_regions;
  const uint64_t acc_reg = acc_depth / n_regions;
  // ALU micro-ops index ACC with the uop's src field; use immediates where it is too narrow.
  const uint64_t uop_src_limit = uint64_t(1) << spec_.field(isa::Format::kUop, "src_idx").width;

  // ---- data segments (sizes fixed up front; the uop segment goes last) ----
  // Elements per data segment: at least the largest rectangle extent (rows * (x_size + 2)).
  const uint64_t kElems =
      std::max<uint64_t>(512, uint64_t(o_.max_y_size) * (uint64_t(o_.max_x_size) + 2));
  struct SegDef {
    const char* name;
    isa::SegmentKind kind;
    uint64_t elem_bytes;
  };
  const SegDef defs[] = {
      {"inp", isa::SegmentKind::kInput, uint64_t(cfg_.inp_elem_bytes())},
      {"wgt", isa::SegmentKind::kConst, uint64_t(cfg_.wgt_elem_bytes())},
      {"acc", isa::SegmentKind::kConst, uint64_t(cfg_.acc_elem_bytes())},
      {"acc8", isa::SegmentKind::kConst, uint64_t(cfg_.batch()) * cfg_.block_out()},
      {"out", isa::SegmentKind::kOutput, uint64_t(cfg_.out_elem_bytes())},
  };
  Seg seg[5];
  for (int i = 0; i < 5; ++i) {
    const size_t idx = p.add_segment(defs[i].name, defs[i].kind, kElems * defs[i].elem_bytes);
    const isa::Segment& s = p.segments[idx];
    seg[i].elem_offset = s.offset_bytes / defs[i].elem_bytes;
    seg[i].elems = kElems;
    if (defs[i].kind != isa::SegmentKind::kOutput) {
      for (uint64_t b = 0; b < s.size_bytes; ++b) p.image[s.offset_bytes + b] = uint8_t(rng_.next());
    }
  }
  const Seg& inp_seg = seg[0];
  const Seg& wgt_seg = seg[1];
  const Seg& acc_seg = seg[2];
  const Seg& acc8_seg = seg[3];
  const Seg& out_seg = seg[4];
  uop_seg_elem_ = p.image.size() / 4;  // the uop segment starts at the current end of the image

  std::vector<Instruction>& out = p.insns;
  auto uop_load = [&](uint32_t sram, const std::vector<Uop>& list) {
    const uint64_t at = uops_.size();
    uops_.insert(uops_.end(), list.begin(), list.end());
    return isa::make_mem(Opcode::kLoad, MemType::kUop, sram, uint32_t(uop_seg_elem_ + at), 1,
                         uint32_t(list.size()), uint32_t(list.size()));
  };

  // ---- prologue: reset every ACC row (and so OUT) with one zero micro-op ----
  {
    out.push_back(uop_load(0, {Uop{0, 0, 0}}));
    Instruction g;
    g.opcode = Opcode::kGemm;
    g.reset = true;
    g.uop_bgn = 0;
    g.uop_end = 1;
    g.iter_in = uint32_t(std::min<uint64_t>(acc_depth, 8192));
    g.iter_out = uint32_t(acc_depth / g.iter_in);
    g.dst_factor_in = 1;
    g.dst_factor_out = g.iter_out > 1 ? g.iter_in : 0;
    out.push_back(g);
  }

  for (uint32_t b = 0; b < o_.blocks; ++b) {
    const uint64_t r = b % n_regions;
    const bool reuse = b >= n_regions;
    const uint64_t ib = r * inp_reg, wb = r * wgt_reg, ab = r * acc_reg;

    // ---- load ----
    std::vector<Instruction> load;
    if (o_.zero_size && rng_.chance(1, 4)) load.push_back(isa::make_noop(Module::kLoad, {}));
    if (o_.extra_loads && rng_.chance(1, 2)) {
      const Rect e = pick_rect(inp_reg, true);
      load.push_back(mem_insn(Opcode::kLoad, MemType::kInp, e, ib + rng_.range(0, inp_reg - e.total()),
                              inp_seg));
    }
    const Rect ir = pick_rect(inp_reg, true);
    const uint64_t inp_lo = ib + rng_.range(0, inp_reg - ir.total());
    load.push_back(mem_insn(Opcode::kLoad, MemType::kInp, ir, inp_lo, inp_seg));
    const Rect wr = pick_rect(wgt_reg, false);
    const uint64_t wgt_lo = wb + rng_.range(0, wgt_reg - wr.total());
    load.push_back(mem_insn(Opcode::kLoad, MemType::kWgt, wr, wgt_lo, wgt_seg));
    if (o_.zero_size && rng_.chance(1, 4)) load.push_back(isa::make_noop(Module::kLoad, {}));
    set_first_last(load, DepFlags{false, reuse, false, false}, DepFlags{false, false, false, true});

    // ---- compute ----
    std::vector<Instruction> body;
    std::vector<Uop> round_uops;
    const uint32_t uop_base = 0;
    auto room = [&](uint32_t n) { return uop_base + round_uops.size() + n <= uop_depth; };
    if (o_.acc_load && rng_.chance(1, 2)) {
      const Rect a = pick_rect(acc_reg, true);
      body.push_back(mem_insn(Opcode::kLoad, MemType::kAcc, a, ab + rng_.range(0, acc_reg - a.total()),
                              acc_seg));
    }
    if (o_.acc8_load && rng_.chance(1, 2)) {
      const Rect a = pick_rect(acc_reg, true);
      body.push_back(mem_insn(Opcode::kLoad, MemType::kAcc8, a,
                              ab + rng_.range(0, acc_reg - a.total()), acc8_seg));
    }
    if (o_.gemm) {
      const uint32_t n = o_.max_gemms ? uint32_t(rng_.range(1, o_.max_gemms)) : 0;
      for (uint32_t k = 0; k < n; ++k) {
        const uint32_t nu = uint32_t(rng_.range(1, o_.max_uops));
        if (!room(nu)) break;
        Instruction g = nest_insn(Opcode::kGemm, uint32_t(uop_base + round_uops.size()), nu, ab,
                                  acc_reg, inp_lo, ir.total(), wgt_lo, wr.total(), round_uops);
        g.reset = rng_.chance(1, 5);
        body.push_back(g);
      }
    }
    if (o_.alu) {
      const uint32_t n = o_.max_alus ? uint32_t(rng_.range(1, o_.max_alus)) : 0;
      for (uint32_t k = 0; k < n; ++k) {
        const uint32_t nu = uint32_t(rng_.range(1, o_.max_uops));
        if (!room(nu)) break;
        const bool src_fits = ab + acc_reg <= uop_src_limit;
        Instruction a = nest_insn(Opcode::kAlu, uint32_t(uop_base + round_uops.size()), nu, ab,
                                  acc_reg, src_fits ? ab : 0, src_fits ? acc_reg : 1, 0, 1,
                                  round_uops);
        a.alu_op = isa::AluOp(rng_.range(0, 4));
        a.use_imm = !src_fits || rng_.chance(1, 2);
        if (a.use_imm) {
          static const int32_t kShifts[] = {-40, -31, -8, -1, 0, 1, 5, 31, 40};
          a.imm = a.alu_op == isa::AluOp::kShr && rng_.chance(2, 3)
                      ? kShifts[rng_.range(0, 8)]
                      : int32_t(int16_t(uint16_t(rng_.next())));
          a.src_factor_out = a.src_factor_in = 0;
        }
        body.push_back(a);
      }
    }
    // Shuffle the body (Fisher-Yates with our generator), then put the UOP load in front.
    for (size_t i = body.size(); i > 1; --i) std::swap(body[i - 1], body[rng_.range(0, i - 1)]);
    std::vector<Instruction> compute;
    if (!round_uops.empty()) compute.push_back(uop_load(uop_base, round_uops));
    compute.insert(compute.end(), body.begin(), body.end());
    if (compute.empty() || (o_.zero_size && rng_.chance(1, 4))) {
      compute.push_back(isa::make_noop(Module::kCompute, {}));
    }
    set_first_last(compute, DepFlags{true, reuse, false, false}, DepFlags{false, false, true, true});

    // ---- store ----
    std::vector<Instruction> store;
    const uint32_t n_stores = uint32_t(rng_.range(1, 2));
    for (uint32_t k = 0; k < n_stores; ++k) {
      const Rect s = pick_rect(acc_reg, false);
      store.push_back(mem_insn(Opcode::kStore, MemType::kOut, s,
                               ab + rng_.range(0, acc_reg - s.total()), out_seg));
    }
    if (o_.zero_size && rng_.chance(1, 4)) store.push_back(isa::make_noop(Module::kStore, {}));
    set_first_last(store, DepFlags{true, false, false, false}, DepFlags{false, false, true, false});

    out.insert(out.end(), load.begin(), load.end());
    out.insert(out.end(), compute.begin(), compute.end());
    out.insert(out.end(), store.begin(), store.end());
  }

  // ---- epilogue: drain the tokens still outstanding, then FINISH ----
  const uint64_t left = std::min<uint64_t>(n_regions, o_.blocks);
  for (uint64_t k = 0; k < left; ++k) {
    out.push_back(isa::make_noop(Module::kLoad, DepFlags{false, true, false, false}));
  }
  for (uint64_t k = 0; k < left; ++k) {
    out.push_back(isa::make_noop(Module::kCompute, DepFlags{false, true, false, false}));
  }
  out.push_back(isa::make_finish());

  // ---- the uop segment ----
  const size_t ui = p.add_segment("uop", isa::SegmentKind::kConst, uops_.size() * 4);
  const isa::Segment& us = p.segments[ui];
  TESSEL_CHECK(us.offset_bytes / 4 == uop_seg_elem_, "uop segment placed at {} not {}",
               us.offset_bytes / 4, uop_seg_elem_);
  for (size_t k = 0; k < uops_.size(); ++k) {
    const uint32_t bits = spec_.encode_uop(uops_[k]);
    std::memcpy(&p.image[us.offset_bytes + k * 4], &bits, 4);
  }
  p.uops = uops_;
  return p;
}

}  // namespace

isa::Program random_program(const isa::HwConfig& cfg, uint64_t seed,
                            const RandomProgramOptions& options) {
  cfg.validate();
  const RandomProgramOptions& o = options;
  if (o.blocks == 0) throw_user_error("random program options: blocks 0 must be at least 1");
  if (o.regions == 0) throw_user_error("random program options: regions 0 must be at least 1");
  if (o.max_pad > 15) throw_user_error("random program options: max_pad {} exceeds 15", o.max_pad);
  if (o.max_iter == 0 || o.max_uops == 0 || o.max_x_size == 0 || o.max_y_size == 0) {
    throw_user_error(
        "random program options: max_iter {}, max_uops {}, max_x_size {}, max_y_size {} must "
        "all be at least 1",
        o.max_iter, o.max_uops, o.max_x_size, o.max_y_size);
  }
  if (o.max_x_size > 64 || o.max_y_size > 64 || o.max_iter > 64) {
    throw_user_error(
        "random program options: max_x_size {}, max_y_size {} and max_iter {} must be <= 64",
        o.max_x_size, o.max_y_size, o.max_iter);
  }
  Generator g(cfg, seed, o);
  return g.run(seed);
}

}  // namespace tessel::testgen
