#include "sim/common/datapath.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sim/common/queues.h"

namespace tessel::sim {

static_assert(std::endian::native == std::endian::little,
              "the datapath reads little-endian DRAM words with memcpy");

using isa::AluOp;
using isa::Instruction;
using isa::MemType;
using isa::Uop;

namespace {

const char* module_name(isa::Module m) {
  switch (m) {
    case isa::Module::kLoad: return "load";
    case isa::Module::kCompute: return "compute";
    case isa::Module::kStore: return "store";
  }
  return "?";
}

const char* mem_name(MemType t) {
  switch (t) {
    case MemType::kUop: return "uop";
    case MemType::kWgt: return "wgt";
    case MemType::kInp: return "inp";
    case MemType::kAcc: return "acc";
    case MemType::kOut: return "out";
    case MemType::kAcc8: return "acc_8bit";
  }
  return "?";
}

/// The loop nest shared by GEMM and ALU, with the uop range already bounds-checked.
struct Nest {
  uint32_t iter_out, iter_in;
  uint32_t dst_out, dst_in, src_out, src_in, wgt_out, wgt_in;
  const Uop* uop_bgn;
  const Uop* uop_end;
};

// GEMM kernels. Each runs a whole loop nest whose indices were range-checked up front, so the
// inner loops index the scratchpads without further checks. Products are int8 x int8 summed in
// 32 bits; the add into ACC wraps at 32 bits (done in unsigned arithmetic).

// Portable kernel: WGT in its architectural layout [o][c], one dot product per output lane.
// kB/kBI/kBO = 0 take the sizes from rb/rbi/rbo at run time.
template <int kB, int kBI, int kBO>
void gemm_nest_scalar(const Nest& n, int rb, int rbi, int rbo, int32_t* __restrict acc,
                      int8_t* __restrict out, const int8_t* __restrict inp,
                      const int8_t* __restrict wgt) {
  const int B = kB ? kB : rb;
  const int BI = kBI ? kBI : rbi;
  const int BO = kBO ? kBO : rbo;
  const size_t acc_lanes = size_t(B) * BO;
  const size_t inp_lanes = size_t(B) * BI;
  const size_t wgt_lanes = size_t(BO) * BI;
  for (uint32_t i = 0; i < n.iter_out; ++i) {
    for (uint32_t j = 0; j < n.iter_in; ++j) {
      const size_t dst_off = size_t(i) * n.dst_out + size_t(j) * n.dst_in;
      const size_t src_off = size_t(i) * n.src_out + size_t(j) * n.src_in;
      const size_t wgt_off = size_t(i) * n.wgt_out + size_t(j) * n.wgt_in;
      for (const Uop* u = n.uop_bgn; u != n.uop_end; ++u) {
        int32_t* a = acc + (u->dst + dst_off) * acc_lanes;
        int8_t* o = out + (u->dst + dst_off) * acc_lanes;
        const int8_t* x = inp + (u->src + src_off) * inp_lanes;
        const int8_t* w = wgt + (u->wgt + wgt_off) * wgt_lanes;
        for (int b = 0; b < B; ++b) {
          for (int oo = 0; oo < BO; ++oo) {
            int32_t sum = 0;
            for (int c = 0; c < BI; ++c) sum += int32_t(x[b * BI + c]) * int32_t(w[oo * BI + c]);
            const uint32_t r = uint32_t(a[b * BO + oo]) + uint32_t(sum);
            a[b * BO + oo] = int32_t(r);
            o[b * BO + oo] = int8_t(r);
          }
        }
      }
    }
  }
}

#if defined(__SSE2__)
// SSE2 kernel (x86-64 baseline): WGT pre-widened to int16 and interleaved by input-channel pairs,
// wgt_p[(p * BO + o) * 2 + {0, 1}] = w[o][2p], w[o][2p + 1], so one PMADDWD multiplies a broadcast
// input pair with four output lanes and adds the two products into 32-bit lanes.
template <int kBI, int kBO>
void gemm_nest_sse2(const Nest& n, int B, int32_t* __restrict acc, int8_t* __restrict out,
                    const int8_t* __restrict inp, const int16_t* __restrict wgt_p) {
  static_assert(kBI % 2 == 0 && kBO % 16 == 0, "kernel needs input pairs and 16-lane groups");
  constexpr int kPairs = kBI / 2;
  constexpr int kVec = kBO / 4;
  const size_t acc_lanes = size_t(B) * kBO;
  const size_t inp_lanes = size_t(B) * kBI;
  constexpr size_t kWgtLanes = size_t(kPairs) * kBO * 2;
  const __m128i low_byte = _mm_set1_epi32(0xFF);
  for (uint32_t i = 0; i < n.iter_out; ++i) {
    for (uint32_t j = 0; j < n.iter_in; ++j) {
      const size_t dst_off = size_t(i) * n.dst_out + size_t(j) * n.dst_in;
      const size_t src_off = size_t(i) * n.src_out + size_t(j) * n.src_in;
      const size_t wgt_off = size_t(i) * n.wgt_out + size_t(j) * n.wgt_in;
      for (const Uop* u = n.uop_bgn; u != n.uop_end; ++u) {
        int32_t* a = acc + (u->dst + dst_off) * acc_lanes;
        int8_t* o = out + (u->dst + dst_off) * acc_lanes;
        const int8_t* x = inp + (u->src + src_off) * inp_lanes;
        const int16_t* w = wgt_p + (u->wgt + wgt_off) * kWgtLanes;
        for (int b = 0; b < B; ++b) {
          __m128i s[kVec];
          for (int v = 0; v < kVec; ++v) s[v] = _mm_setzero_si128();
          const int8_t* xb = x + b * kBI;
          for (int p = 0; p < kPairs; ++p) {
            const uint32_t pair = uint32_t(uint16_t(int16_t(xb[2 * p]))) |
                                  (uint32_t(uint16_t(int16_t(xb[2 * p + 1]))) << 16);
            const __m128i xp = _mm_set1_epi32(int32_t(pair));
            const __m128i* wv = reinterpret_cast<const __m128i*>(w + size_t(p) * kBO * 2);
            for (int v = 0; v < kVec; ++v) {
              s[v] = _mm_add_epi32(s[v], _mm_madd_epi16(xp, _mm_loadu_si128(wv + v)));
            }
          }
          __m128i* ab = reinterpret_cast<__m128i*>(a + b * kBO);
          __m128i* ob = reinterpret_cast<__m128i*>(o + b * kBO);
          for (int g = 0; g < kVec / 4; ++g) {
            __m128i r[4];
            for (int v = 0; v < 4; ++v) {
              r[v] = _mm_add_epi32(_mm_loadu_si128(ab + 4 * g + v), s[4 * g + v]);
              _mm_storeu_si128(ab + 4 * g + v, r[v]);
            }
            // OUT = low 8 bits of each lane: mask, then two non-saturating packs.
            const __m128i lo = _mm_packs_epi32(_mm_and_si128(r[0], low_byte),
                                               _mm_and_si128(r[1], low_byte));
            const __m128i hi = _mm_packs_epi32(_mm_and_si128(r[2], low_byte),
                                               _mm_and_si128(r[3], low_byte));
            _mm_storeu_si128(ob + g, _mm_packus_epi16(lo, hi));
          }
        }
      }
    }
  }
}
#endif

inline int32_t shift(int32_t x, int32_t a) {
  if (a >= 0) return x >> std::min<int32_t>(a, 31);
  const int64_t left = std::min<int64_t>(-int64_t(a), 31);
  return int32_t(uint32_t(x) << left);
}

template <AluOp kOp>
inline int32_t alu_lane(int32_t x, int32_t y) {
  if constexpr (kOp == AluOp::kMin) return x < y ? x : y;
  if constexpr (kOp == AluOp::kMax) return x > y ? x : y;
  if constexpr (kOp == AluOp::kAdd) return int32_t(uint32_t(x) + uint32_t(y));
  if constexpr (kOp == AluOp::kShr) return shift(x, y);
  if constexpr (kOp == AluOp::kMul) return int32_t(uint32_t(x) * uint32_t(y));
  return 0;
}

template <AluOp kOp, bool kImm>
void alu_nest(const Nest& n, size_t lanes, int32_t imm, int32_t* acc, int8_t* out) {
  for (uint32_t i = 0; i < n.iter_out; ++i) {
    for (uint32_t j = 0; j < n.iter_in; ++j) {
      const size_t dst_off = size_t(i) * n.dst_out + size_t(j) * n.dst_in;
      const size_t src_off = size_t(i) * n.src_out + size_t(j) * n.src_in;
      for (const Uop* u = n.uop_bgn; u != n.uop_end; ++u) {
        int32_t* a = acc + (u->dst + dst_off) * lanes;
        int8_t* o = out + (u->dst + dst_off) * lanes;
        if constexpr (kImm) {
          for (size_t l = 0; l < lanes; ++l) {
            const int32_t r = alu_lane<kOp>(a[l], imm);
            a[l] = r;
            o[l] = int8_t(r);
          }
        } else {
          // The source row may be the destination row: read each lane before writing it.
          const int32_t* s = acc + (u->src + src_off) * lanes;
          for (size_t l = 0; l < lanes; ++l) {
            const int32_t r = alu_lane<kOp>(a[l], s[l]);
            a[l] = r;
            o[l] = int8_t(r);
          }
        }
      }
    }
  }
}

template <AluOp kOp>
void alu_dispatch_imm(bool use_imm, const Nest& n, size_t lanes, int32_t imm, int32_t* acc,
                      int8_t* out) {
  if (use_imm) {
    alu_nest<kOp, true>(n, lanes, imm, acc, out);
  } else {
    alu_nest<kOp, false>(n, lanes, imm, acc, out);
  }
}

}  // namespace

Datapath::Datapath(const isa::HwConfig& cfg) : cfg_(cfg), spec_(cfg) {
  uop_.assign(size_t(cfg_.uop_depth()), Uop{});
  inp_.assign(size_t(cfg_.inp_depth()) * cfg_.batch() * cfg_.block_in(), 0);
  wgt_.assign(size_t(cfg_.wgt_depth()) * cfg_.block_out() * cfg_.block_in(), 0);
  wgt_p_.assign(size_t(cfg_.wgt_depth()) * ((cfg_.block_in() + 1) / 2) * 2 * cfg_.block_out(), 0);
  acc_.assign(size_t(cfg_.acc_depth()) * cfg_.batch() * cfg_.block_out(), 0);
  out_.assign(acc_.size(), 0);
}

void Datapath::reset() {
  std::fill(uop_.begin(), uop_.end(), Uop{});
  std::fill(inp_.begin(), inp_.end(), int8_t(0));
  std::fill(wgt_.begin(), wgt_.end(), int8_t(0));
  std::fill(wgt_p_.begin(), wgt_p_.end(), int16_t(0));
  std::fill(acc_.begin(), acc_.end(), 0);
  std::fill(out_.begin(), out_.end(), int8_t(0));
}

void Datapath::fail(const Instruction& insn, uint32_t insn_index, const std::string& what) const {
  throw SimError(fmt::format("{} module: insn {} ({}): {}", module_name(insn.module()),
                             insn_index, describe(insn), what));
}

void Datapath::check_dram(const Instruction& insn, uint32_t insn_index, const Dram& dram,
                          uint64_t elem_bytes) const {
  if (insn.y_size == 0 || insn.x_size == 0) return;
  const uint64_t first = uint64_t(insn.dram_base) * elem_bytes;
  const uint64_t end =
      (uint64_t(insn.dram_base) + uint64_t(insn.y_size - 1) * insn.x_stride + insn.x_size) *
      elem_bytes;
  if (end > dram.size()) {
    fail(insn, insn_index,
         fmt::format("dram bytes [{}, {}) out of range (dram_base {} x {} bytes, y_size {}, "
                     "x_size {}, x_stride {}; dram holds {} bytes)",
                     first, end, insn.dram_base, elem_bytes, insn.y_size, insn.x_size,
                     insn.x_stride, dram.size()));
  }
}

void Datapath::load(const Instruction& insn, const Dram& dram, uint32_t insn_index, Counters& c) {
  if (insn.x_size == 0) return;
  const MemType type = insn.mem_type;
  uint64_t depth = 0, elem_bytes = 0;
  switch (type) {
    case MemType::kUop: depth = cfg_.uop_depth(); elem_bytes = cfg_.uop_elem_bytes(); break;
    case MemType::kInp: depth = cfg_.inp_depth(); elem_bytes = cfg_.inp_elem_bytes(); break;
    case MemType::kWgt: depth = cfg_.wgt_depth(); elem_bytes = cfg_.wgt_elem_bytes(); break;
    case MemType::kAcc: depth = cfg_.acc_depth(); elem_bytes = cfg_.acc_elem_bytes(); break;
    case MemType::kAcc8:
      depth = cfg_.acc_depth();
      elem_bytes = uint64_t(cfg_.batch()) * cfg_.block_out();
      break;
    case MemType::kOut:
      fail(insn, insn_index, "a load of memory_type out is illegal (OUT is written by compute)");
  }
  const bool padded = insn.y_pad_0 || insn.y_pad_1 || insn.x_pad_0 || insn.x_pad_1;
  if (padded && (type == MemType::kUop || type == MemType::kWgt)) {
    fail(insn, insn_index,
         fmt::format("pads are illegal on {} loads (y_pad {}/{}, x_pad {}/{})", mem_name(type),
                     insn.y_pad_0, insn.y_pad_1, insn.x_pad_0, insn.x_pad_1));
  }
  const uint64_t row_w = uint64_t(insn.x_pad_0) + insn.x_size + insn.x_pad_1;
  const uint64_t rows = uint64_t(insn.y_pad_0) + insn.y_size + insn.y_pad_1;
  // An empty rectangle (no rows, pads included) writes no SRAM row, wherever sram_base points:
  // as the verifier's sram-bounds rule (isa/verifier.cc check_mem) has it.
  const uint64_t end = uint64_t(insn.sram_base) + rows * row_w;
  if (rows * row_w > 0 && end > depth) {
    fail(insn, insn_index,
         fmt::format("{} index range [{}, {}) out of range ({} depth {}; {} rows of {} elements "
                     "with pads)",
                     mem_name(type), insn.sram_base, end, mem_name(type), depth, rows, row_w));
  }
  check_dram(insn, insn_index, dram, elem_bytes);

  const uint8_t* src = dram.data();
  const uint64_t dram_bytes = uint64_t(insn.y_size) * insn.x_size * elem_bytes;
  switch (type) {
    case MemType::kUop: {
      c.uop_load_nbytes += dram_bytes;
      size_t idx = insn.sram_base;
      for (uint32_t y = 0; y < insn.y_size; ++y) {
        const uint8_t* row = src + (uint64_t(insn.dram_base) + uint64_t(y) * insn.x_stride) * 4;
        for (uint32_t x = 0; x < insn.x_size; ++x) {
          uint32_t bits;
          std::memcpy(&bits, row + size_t(x) * 4, 4);
          uop_[idx++] = spec_.decode_uop(bits);
        }
      }
      return;
    }
    case MemType::kInp:
    case MemType::kWgt: {
      const bool inp = type == MemType::kInp;
      (inp ? c.inp_load_nbytes : c.wgt_load_nbytes) += dram_bytes;
      int8_t* buf = inp ? inp_.data() : wgt_.data();
      const size_t eb = size_t(elem_bytes);
      uint64_t idx = insn.sram_base;
      auto zero = [&](uint64_t n) {
        std::memset(buf + idx * eb, 0, size_t(n) * eb);
        idx += n;
      };
      const uint64_t first_row = idx;
      zero(uint64_t(insn.y_pad_0) * row_w);
      for (uint32_t y = 0; y < insn.y_size; ++y) {
        zero(insn.x_pad_0);
        const uint8_t* row =
            src + (uint64_t(insn.dram_base) + uint64_t(y) * insn.x_stride) * elem_bytes;
        std::memcpy(buf + idx * eb, row, size_t(insn.x_size) * eb);
        idx += insn.x_size;
        zero(insn.x_pad_1);
      }
      zero(uint64_t(insn.y_pad_1) * row_w);
      if (!inp) {
        // Keep the widened, pair-interleaved copy used by the SIMD GEMM kernel in step:
        // wgt_p_[(p * BO + o) * 2 + h] = wgt_[o][2p + h] (0 past BLOCK_IN).
        const int bi = cfg_.block_in(), bo = cfg_.block_out();
        const size_t pairs = size_t(bi + 1) / 2, prow = pairs * bo * 2;
        for (uint64_t r = first_row; r < end; ++r) {
          const int8_t* w = &wgt_[r * eb];
          int16_t* t = &wgt_p_[r * prow];
          for (size_t pp = 0; pp < pairs; ++pp)
            for (int o = 0; o < bo; ++o)
              for (int h = 0; h < 2; ++h) {
                const size_t ci = 2 * pp + h;
                t[(pp * bo + o) * 2 + h] = ci < size_t(bi) ? w[size_t(o) * bi + ci] : 0;
              }
        }
      }
      return;
    }
    case MemType::kAcc:
    case MemType::kAcc8: {
      c.acc_load_nbytes += dram_bytes;
      const bool narrow = type == MemType::kAcc8;
      const size_t lanes = size_t(cfg_.batch()) * cfg_.block_out();
      uint64_t idx = insn.sram_base;
      auto zero = [&](uint64_t n) {
        std::fill_n(acc_.begin() + idx * lanes, n * lanes, 0);
        std::fill_n(out_.begin() + idx * lanes, n * lanes, int8_t(0));
        idx += n;
      };
      zero(uint64_t(insn.y_pad_0) * row_w);
      for (uint32_t y = 0; y < insn.y_size; ++y) {
        zero(insn.x_pad_0);
        const uint8_t* row =
            src + (uint64_t(insn.dram_base) + uint64_t(y) * insn.x_stride) * elem_bytes;
        int32_t* a = &acc_[idx * lanes];
        int8_t* o = &out_[idx * lanes];
        const size_t n = size_t(insn.x_size) * lanes;
        if (narrow) {
          const int8_t* s = reinterpret_cast<const int8_t*>(row);
          for (size_t l = 0; l < n; ++l) {
            a[l] = s[l];
            o[l] = s[l];
          }
        } else {
          std::memcpy(a, row, n * 4);
          for (size_t l = 0; l < n; ++l) o[l] = int8_t(a[l]);
        }
        idx += insn.x_size;
        zero(insn.x_pad_1);
      }
      zero(uint64_t(insn.y_pad_1) * row_w);
      return;
    }
    case MemType::kOut:
      break;
  }
}

void Datapath::store(const Instruction& insn, Dram& dram, uint32_t insn_index, Counters& c) {
  if (insn.x_size == 0) return;
  if (insn.mem_type != MemType::kOut) {
    fail(insn, insn_index,
         fmt::format("a store of memory_type {} is illegal (only out is stored)",
                     mem_name(insn.mem_type)));
  }
  if (insn.y_pad_0 || insn.y_pad_1 || insn.x_pad_0 || insn.x_pad_1) {
    fail(insn, insn_index,
         fmt::format("pads are illegal on stores (y_pad {}/{}, x_pad {}/{})", insn.y_pad_0,
                     insn.y_pad_1, insn.x_pad_0, insn.x_pad_1));
  }
  const uint64_t depth = cfg_.out_depth();
  const uint64_t end = uint64_t(insn.sram_base) + uint64_t(insn.y_size) * insn.x_size;
  if (insn.y_size > 0 && end > depth) {  // an empty rectangle reads no row (as the verifier)
    fail(insn, insn_index,
         fmt::format("out index range [{}, {}) out of range (out depth {})", insn.sram_base, end,
                     depth));
  }
  const uint64_t eb = cfg_.out_elem_bytes();
  check_dram(insn, insn_index, dram, eb);
  uint8_t* dst = dram.data();
  for (uint32_t y = 0; y < insn.y_size; ++y) {
    const uint64_t sram = uint64_t(insn.sram_base) + uint64_t(y) * insn.x_size;
    std::memcpy(dst + (uint64_t(insn.dram_base) + uint64_t(y) * insn.x_stride) * eb,
                &out_[sram * eb], size_t(insn.x_size * eb));
  }
  c.out_store_nbytes += uint64_t(insn.y_size) * insn.x_size * eb;
}

namespace {

/// Largest index the nest reaches from base indices `max_base`: max_base + (iter_out-1)*f_out +
/// (iter_in-1)*f_in (factors are unsigned, so the maximum is at the last iteration).
uint64_t nest_max(uint64_t max_base, const Instruction& insn, uint32_t f_out, uint32_t f_in) {
  return max_base + uint64_t(insn.iter_out - 1) * f_out + uint64_t(insn.iter_in - 1) * f_in;
}

}  // namespace

template <bool kGemm>
void Datapath::check_nest(const Instruction& insn, uint32_t insn_index) const {
  if (insn.uop_end > uint32_t(cfg_.uop_depth())) {
    fail(insn, insn_index,
         fmt::format("uop range [{}, {}) out of range (uop depth {})", insn.uop_bgn, insn.uop_end,
                     cfg_.uop_depth()));
  }
  uint64_t max_dst = 0, max_src = 0, max_wgt = 0;
  for (uint32_t k = insn.uop_bgn; k < insn.uop_end; ++k) {
    max_dst = std::max<uint64_t>(max_dst, uop_[k].dst);
    max_src = std::max<uint64_t>(max_src, uop_[k].src);
    if constexpr (kGemm) max_wgt = std::max<uint64_t>(max_wgt, uop_[k].wgt);
  }
  // `index` names the index in the message, `mem` the scratchpad, `field` the uop field.
  auto check = [&](std::string_view index, std::string_view mem, int depth, std::string_view field,
                   uint64_t max_base, uint32_t f_out, uint32_t f_in) {
    const uint64_t top = nest_max(max_base, insn, f_out, f_in);
    if (top < uint64_t(depth)) return;
    fail(insn, insn_index,
         fmt::format("{} index {} out of range ({} depth {}) after the loop nest (largest uop {} "
                     "{}, iter_out {} x {}_factor_out {}, iter_in {} x {}_factor_in {})",
                     index, top, mem, depth, field, max_base, insn.iter_out, field, f_out,
                     insn.iter_in, field, f_in));
  };
  check("acc", "acc", cfg_.acc_depth(), "dst", max_dst, insn.dst_factor_out, insn.dst_factor_in);
  if constexpr (kGemm) {
    if (insn.reset) return;
    check("inp", "inp", cfg_.inp_depth(), "src", max_src, insn.src_factor_out, insn.src_factor_in);
    check("wgt", "wgt", cfg_.wgt_depth(), "wgt", max_wgt, insn.wgt_factor_out, insn.wgt_factor_in);
  } else {
    if (insn.use_imm) return;
    check("acc source", "acc", cfg_.acc_depth(), "src", max_src, insn.src_factor_out,
          insn.src_factor_in);
  }
}

void Datapath::run_gemm_kernel(const void* nest) {
  const Nest& n = *static_cast<const Nest*>(nest);
  const int b = cfg_.batch(), bi = cfg_.block_in(), bo = cfg_.block_out();
  int32_t* acc = acc_.data();
  int8_t* out = out_.data();
  const int8_t* inp = inp_.data();
#if defined(__SSE2__)
  const int16_t* wp = wgt_p_.data();
  if (bi == 16 && bo == 16) return gemm_nest_sse2<16, 16>(n, b, acc, out, inp, wp);
  if (bi == 8 && bo == 16) return gemm_nest_sse2<8, 16>(n, b, acc, out, inp, wp);
  if (bi == 32 && bo == 32) return gemm_nest_sse2<32, 32>(n, b, acc, out, inp, wp);
  if (bi == 32 && bo == 16) return gemm_nest_sse2<32, 16>(n, b, acc, out, inp, wp);
  if (bi == 16 && bo == 32) return gemm_nest_sse2<16, 32>(n, b, acc, out, inp, wp);
#endif
  const int8_t* w = wgt_.data();
  if (b == 1 && bi == 16 && bo == 16) return gemm_nest_scalar<1, 16, 16>(n, b, bi, bo, acc, out, inp, w);
  if (b == 1 && bi == 8 && bo == 8) return gemm_nest_scalar<1, 8, 8>(n, b, bi, bo, acc, out, inp, w);
  gemm_nest_scalar<0, 0, 0>(n, b, bi, bo, acc, out, inp, w);
}

void Datapath::gemm(const Instruction& insn, uint32_t insn_index, Counters& c) {
  if (insn.iter_out == 0 || insn.iter_in == 0 || insn.uop_bgn >= insn.uop_end) return;
  check_nest<true>(insn, insn_index);
  const Nest n{insn.iter_out,       insn.iter_in,        insn.dst_factor_out,
               insn.dst_factor_in,  insn.src_factor_out, insn.src_factor_in,
               insn.wgt_factor_out, insn.wgt_factor_in,  &uop_[insn.uop_bgn],
               &uop_[0] + insn.uop_end};
  const size_t lanes = size_t(cfg_.batch()) * cfg_.block_out();
  if (insn.reset) {
    for (uint32_t i = 0; i < n.iter_out; ++i) {
      for (uint32_t j = 0; j < n.iter_in; ++j) {
        const size_t off = size_t(i) * n.dst_out + size_t(j) * n.dst_in;
        for (const Uop* u = n.uop_bgn; u != n.uop_end; ++u) {
          std::fill_n(&acc_[(u->dst + off) * lanes], lanes, 0);
          std::fill_n(&out_[(u->dst + off) * lanes], lanes, int8_t(0));
        }
      }
    }
    return;
  }
  run_gemm_kernel(&n);
  c.gemm_counter += isa::loop_uops(insn);
}

void Datapath::alu(const Instruction& insn, uint32_t insn_index, Counters& c) {
  if (insn.iter_out == 0 || insn.iter_in == 0 || insn.uop_bgn >= insn.uop_end) return;
  check_nest<false>(insn, insn_index);
  const Nest n{insn.iter_out,      insn.iter_in,        insn.dst_factor_out, insn.dst_factor_in,
               insn.src_factor_out, insn.src_factor_in, 0,                   0,
               &uop_[insn.uop_bgn], &uop_[0] + insn.uop_end};
  const size_t lanes = size_t(cfg_.batch()) * cfg_.block_out();
  switch (insn.alu_op) {
    case AluOp::kMin:
      alu_dispatch_imm<AluOp::kMin>(insn.use_imm, n, lanes, insn.imm, acc_.data(), out_.data());
      break;
    case AluOp::kMax:
      alu_dispatch_imm<AluOp::kMax>(insn.use_imm, n, lanes, insn.imm, acc_.data(), out_.data());
      break;
    case AluOp::kAdd:
      alu_dispatch_imm<AluOp::kAdd>(insn.use_imm, n, lanes, insn.imm, acc_.data(), out_.data());
      break;
    case AluOp::kShr:
      alu_dispatch_imm<AluOp::kShr>(insn.use_imm, n, lanes, insn.imm, acc_.data(), out_.data());
      break;
    case AluOp::kMul:
      alu_dispatch_imm<AluOp::kMul>(insn.use_imm, n, lanes, insn.imm, acc_.data(), out_.data());
      break;
    default:
      fail(insn, insn_index, fmt::format("unknown alu_opcode {}", unsigned(insn.alu_op)));
  }
  c.alu_counter += isa::loop_uops(insn);
}

}  // namespace tessel::sim
