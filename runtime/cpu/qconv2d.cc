// The optimised CPU integer convolution (bit-exact with qconv2d_reference of runtime/qnn.h).
// Attribute parsing and parameter checks are in qconv2d_attrs.cc (this file is built with -O3
// and kept free of formatting code).
//
// Method (single core, no im2col): for every batch image and group, the group's input channels
// are copied once into an int16 buffer with the input zero point subtracted and the padding
// written as 0 (so padded taps add nothing, as qnn.h defines), split into stride phases: phase
// (py, px) of a channel holds padded pixels (y, x) with y % stride_h == py, x % stride_w == px.
// With that split every filter tap (c, ky, kx) reads a contiguous run of one phase plane for a
// whole tile of output rows: acc[i] += w * plane[i + offset(ky, kx)], i = row * row_pitch + col.
// Blocks of up to 4 output channels share each input load and taps are taken two at a time, so
// the inner loop is a dense widening multiply-add over int32 accumulators that stay in L1
// (tiles of about detail::kQConvTileElems accumulators per channel). Columns past the output
// width are computed and discarded. Accumulation wraps at 32 bits exactly like the GEMM core.
// Buffer sizes come from detail::qconv_scratch() (runtime/cpu/qconv2d_attrs.cc), which
// qconv2d_scratch_bytes() reports and check_qconv2d_params() bounds.
#include <algorithm>
#include <cstring>

#include "runtime/cpu/kernel_util.h"
#include "runtime/cpu/kernels.h"

namespace tessel::runtime::cpu {

using detail::check_qconv2d_params;

namespace {

constexpr int64_t kRunAlign = detail::kQConvRunAlign;  // inner-loop runs are rounded up to this

// acc_j[i] += w_j0 * s0[i] + w_j1 * s1[i] for j < NB (two taps), wrapping at 32 bits.
template <int NB>
[[gnu::always_inline]] inline void mac2(uint32_t* __restrict a0, uint32_t* __restrict a1,
                                        uint32_t* __restrict a2, uint32_t* __restrict a3,
                                        const int16_t* __restrict s0, const int16_t* __restrict s1,
                                        const int32_t* w0, const int32_t* w1, int64_t len) {
  for (int64_t i = 0; i < len; ++i) {
    const int32_t v0 = s0[i], v1 = s1[i];
    a0[i] += static_cast<uint32_t>(w0[0] * v0 + w1[0] * v1);
    if constexpr (NB > 1) a1[i] += static_cast<uint32_t>(w0[1] * v0 + w1[1] * v1);
    if constexpr (NB > 2) a2[i] += static_cast<uint32_t>(w0[2] * v0 + w1[2] * v1);
    if constexpr (NB > 3) a3[i] += static_cast<uint32_t>(w0[3] * v0 + w1[3] * v1);
  }
}

template <int NB>
[[gnu::always_inline]] inline void mac1(uint32_t* __restrict a0, uint32_t* __restrict a1,
                                        uint32_t* __restrict a2, uint32_t* __restrict a3,
                                        const int16_t* __restrict s0, const int32_t* w0,
                                        int64_t len) {
  for (int64_t i = 0; i < len; ++i) {
    const int32_t v0 = s0[i];
    a0[i] += static_cast<uint32_t>(w0[0] * v0);
    if constexpr (NB > 1) a1[i] += static_cast<uint32_t>(w0[1] * v0);
    if constexpr (NB > 2) a2[i] += static_cast<uint32_t>(w0[2] * v0);
    if constexpr (NB > 3) a3[i] += static_cast<uint32_t>(w0[3] * v0);
  }
}

// Geometry of one (image, group) pass.
struct Geo {
  int64_t icg, kh, kw, sh, sw;
  int64_t ph2, pw2;       // phase plane rows / row pitch
  int64_t plane;          // elements per phase plane
  int64_t chan;           // elements per channel (all phases)
  int64_t oh, ow;
  int64_t tile;           // accumulators per output channel per tile (run-aligned)
};

// Accumulates taps [0, T) for NB channels whose weights start at `wq` (layout [NB][T]) over
// tile rows [ty, ty + tr) into acc (NB rows of pitch `tile`). tap_off[t]: offset in `pad` of the
// first element tap t reads for output (0, 0).
template <int NB>
[[gnu::always_inline]] inline void tile_block(const Geo& g, const int16_t* pad,
                                              const int64_t* tap_off, const int32_t* wq,
                                              int64_t taps, int64_t ty, int64_t tr,
                                              uint32_t* acc, int64_t tile) {
  uint32_t* a[4] = {acc, acc + tile, acc + 2 * tile, acc + 3 * tile};
  // Whole vectors only: the run is rounded up to kRunAlign (the extra columns are discarded;
  // the accumulator tile and the input buffer have room for them).
  const int64_t len = (tr * g.pw2 + kRunAlign - 1) / kRunAlign * kRunAlign;
  const int16_t* base = pad + ty * g.pw2;
  auto src = [&](int64_t t) { return base + tap_off[t]; };
  int32_t w0[4] = {0, 0, 0, 0}, w1[4] = {0, 0, 0, 0};
  int64_t t = 0;
  for (; t + 1 < taps; t += 2) {
    for (int j = 0; j < NB; ++j) {
      w0[j] = wq[j * taps + t];
      w1[j] = wq[j * taps + t + 1];
    }
    mac2<NB>(a[0], a[1], a[2], a[3], src(t), src(t + 1), w0, w1, len);
  }
  if (t < taps) {
    for (int j = 0; j < NB; ++j) w0[j] = wq[j * taps + t];
    mac1<NB>(a[0], a[1], a[2], a[3], src(t), w0, len);
  }
}

// One (image, group): all output channels of the group. Compiled for AVX2 and baseline x86-64
// (selected at load time); integer results are identical on both.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
[[gnu::target_clones("avx2", "default")]]
#endif
void conv_group(const Geo& g, const int16_t* pad, const int64_t* tap_off, const int32_t* wq,
                const int32_t* bias,
                const Requant& rq, int64_t oc0, int64_t ocg, int8_t* out_n, uint32_t* acc,
                int64_t tile_rows) {
  const int64_t taps = g.icg * g.kh * g.kw;
  const int64_t tile = g.tile;
  for (int64_t ob = 0; ob < ocg; ob += 4) {
    const int nb = static_cast<int>(std::min<int64_t>(4, ocg - ob));
    const int32_t* wb = wq + ob * taps;
    for (int64_t ty = 0; ty < g.oh; ty += tile_rows) {
      const int64_t tr = std::min(tile_rows, g.oh - ty);
      for (int j = 0; j < nb; ++j) {
        std::fill(acc + j * tile, acc + j * tile + tile,
                  static_cast<uint32_t>(bias[oc0 + ob + j]));
      }
      switch (nb) {
        case 4: tile_block<4>(g, pad, tap_off, wb, taps, ty, tr, acc, tile); break;
        case 3: tile_block<3>(g, pad, tap_off, wb, taps, ty, tr, acc, tile); break;
        case 2: tile_block<2>(g, pad, tap_off, wb, taps, ty, tr, acc, tile); break;
        default: tile_block<1>(g, pad, tap_off, wb, taps, ty, tr, acc, tile); break;
      }
      for (int j = 0; j < nb; ++j) {
        const int64_t o = oc0 + ob + j;
        int8_t* dst = out_n + (o * g.oh + ty) * g.ow;
        const uint32_t* src = acc + j * tile;
        // runtime/qnn.h requantize(): the channel's chain resolved once, then applied per element
        // (branch-free; the constants and the trip count are locals, which the int8 stores cannot
        // alias, so the loop vectorises).
        const RequantChannel ch = requant_channel(rq, static_cast<size_t>(o));
        const int64_t ow = g.ow, pitch = g.pw2;
        for (int64_t r = 0; r < tr; ++r) {
          const uint32_t* __restrict srow = src + r * pitch;
          int8_t* __restrict drow = dst + r * ow;
          if (ch.n_low == 0) {
            for (int64_t x = 0; x < ow; ++x) drow[x] = RequantChannel::apply_one_limb(ch, static_cast<int32_t>(srow[x]));
          } else {
            for (int64_t x = 0; x < ow; ++x) drow[x] = RequantChannel::apply(ch, static_cast<int32_t>(srow[x]));
          }
        }
      }
    }
  }
}

}  // namespace

void qconv2d(const QConv2dParams& p, const int8_t* in, const int8_t* w, const int32_t* bias,
             int8_t* out, std::vector<int16_t>& pad_scratch, std::vector<int32_t>& acc_scratch) {
  // Checks the parameters and bounds the working memory (qconv_scratch, overflow-checked, the
  // one computation of these sizes) before anything is allocated.
  check_qconv2d_params(p);
  const detail::QConvScratch sz = detail::qconv_scratch(p);
  Geo g{};
  g.icg = p.ic / p.groups;
  g.kh = p.kh;
  g.kw = p.kw;
  g.sh = p.stride_h;
  g.sw = p.stride_w;
  g.oh = p.oh();
  g.ow = p.ow();
  g.ph2 = sz.ph2;
  g.pw2 = sz.pw2;
  g.plane = sz.plane;
  g.chan = sz.chan;
  g.tile = sz.tile;
  const int64_t ocg = p.oc / p.groups;
  const int64_t tile_rows = sz.tile_rows;
  const size_t pad_need = static_cast<size_t>(sz.pad_elems);
  if (pad_scratch.size() < pad_need) pad_scratch.resize(pad_need);
  const size_t acc_need = static_cast<size_t>(sz.acc_elems);
  if (acc_scratch.size() < acc_need) acc_scratch.resize(acc_need);
  // Weights widened to int32 once, per group laid out [ocg][taps] (= OIHW order already).
  const int64_t taps = sz.taps;
  thread_local std::vector<int32_t> wq;
  if (wq.size() < static_cast<size_t>(sz.weight_elems)) wq.resize(static_cast<size_t>(sz.weight_elems));
  for (int64_t i = 0; i < sz.weight_elems; ++i) wq[static_cast<size_t>(i)] = w[i];

  thread_local std::vector<int64_t> tap_off;
  tap_off.resize(static_cast<size_t>(taps));
  for (int64_t t = 0; t < taps; ++t) {
    const int64_t kx = t % g.kw, ky = (t / g.kw) % g.kh, ci = t / (g.kw * g.kh);
    tap_off[static_cast<size_t>(t)] = ci * g.chan + ((ky % g.sh) * g.sw + (kx % g.sw)) * g.plane +
                                      (ky / g.sh) * g.pw2 + kx / g.sw;
  }

  int16_t* pad = pad_scratch.data();
  std::fill(pad_scratch.begin(), pad_scratch.begin() + static_cast<std::ptrdiff_t>(pad_need), 0);
  for (int64_t n = 0; n < p.n; ++n) {
    for (int64_t gi = 0; gi < p.groups; ++gi) {
      // Zero-point-subtracted, zero-padded, phase-split copy of this group's channels. Every
      // pass writes the same interior positions, so the zero padding set above persists.
      for (int64_t ci = 0; ci < g.icg; ++ci) {
        const int8_t* src = in + ((n * p.ic + gi * g.icg + ci) * p.ih) * p.iw;
        int16_t* dst = pad + ci * g.chan;
        for (int64_t y = 0; y < p.ih; ++y) {
          const int64_t py = y + p.pad_top;
          int16_t* drow = dst + (py % g.sh) * g.sw * g.plane + (py / g.sh) * g.pw2;
          const int8_t* srow = src + y * p.iw;
          for (int64_t x = 0; x < p.iw; ++x) {
            const int64_t px = x + p.pad_left;
            drow[(px % g.sw) * g.plane + px / g.sw] =
                static_cast<int16_t>(srow[x] - p.in_zero_point);
          }
        }
      }
      conv_group(g, pad, tap_off.data(), wq.data() + gi * ocg * taps, bias, p.rq, gi * ocg, ocg,
                 out + n * p.oc * g.oh * g.ow, reinterpret_cast<uint32_t*>(acc_scratch.data()),
                 tile_rows);
    }
  }
}

void qconv2d(const QConv2dParams& p, const int8_t* in, const int8_t* w, const int32_t* bias,
             int8_t* out) {
  std::vector<int16_t> pad;
  std::vector<int32_t> acc;
  qconv2d(p, in, w, bias, out, pad, acc);
}

}  // namespace tessel::runtime::cpu
