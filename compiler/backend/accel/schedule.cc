#include "compiler/backend/accel/schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>

#include "support/error.h"

namespace tessel::compiler::accel {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Distinct values ceil(extent / k) for k = 1..extent, descending.
std::vector<int64_t> balanced_sizes(int64_t extent) {
  std::vector<int64_t> v;
  for (int64_t k = 1; k <= extent; ++k) {
    const int64_t s = ceil_div(extent, k);
    if (v.empty() || v.back() != s) v.push_back(s);
  }
  return v;
}

/// The DMA pad fields are 4 bits wide (isa.md section 2).
constexpr int64_t kMaxDmaPad = 15;
/// Micro-ops kept free in each virtual thread's share of the UOP buffer for ALU kernels.
constexpr int64_t kAluUopReserve = 16;

}  // namespace

Window input_window(int64_t o0, int64_t on, int64_t k, int64_t s, int64_t p, int64_t n) {
  Window w;
  w.first = o0 * s - p;
  const int64_t len = (on - 1) * s + k;
  const int64_t lo = std::max<int64_t>(w.first, 0);
  const int64_t hi = std::min<int64_t>(w.first + len, n);
  w.real = std::max<int64_t>(hi - lo, 0);
  w.pad0 = std::min<int64_t>(lo - w.first, len);
  w.pad1 = len - w.pad0 - w.real;
  return w;
}

ConvGeometry make_geometry(const std::string& layer, const runtime::QConv2dParams& p,
                           const isa::HwConfig& cfg) {
  auto positive = [&](const char* what, int64_t v) {
    if (v < 1) throw_user_error("layer '{}': {} must be >= 1, got {}", layer, what, v);
  };
  positive("n", p.n);
  positive("ic", p.ic);
  positive("ih", p.ih);
  positive("iw", p.iw);
  positive("oc", p.oc);
  positive("kh", p.kh);
  positive("kw", p.kw);
  positive("stride_h", p.stride_h);
  positive("stride_w", p.stride_w);
  positive("groups", p.groups);
  const std::pair<const char*, int64_t> pads[] = {{"pad_top", p.pad_top},
                                                  {"pad_left", p.pad_left},
                                                  {"pad_bottom", p.pad_bottom},
                                                  {"pad_right", p.pad_right}};
  for (const auto& [what, v] : pads) {
    if (v < 0) throw_user_error("layer '{}': {} must be >= 0, got {}", layer, what, v);
    if (v > kMaxDmaPad) {
      throw_user_error("layer '{}': {} {} exceeds the dma pad limit {}", layer, what, v,
                       kMaxDmaPad);
    }
  }
  // DRAM row strides (x_stride) and tile widths (x_size) are 16-bit fields
  constexpr int64_t kMaxDmaWidth = 65535;
  if (p.iw > kMaxDmaWidth) {
    throw_user_error("layer '{}': input width {} exceeds the dma stride limit {}", layer, p.iw,
                     kMaxDmaWidth);
  }
  if (p.ic % p.groups != 0 || p.oc % p.groups != 0) {
    throw_user_error("layer '{}': groups {} must divide ic {} and oc {}", layer, p.groups, p.ic,
                     p.oc);
  }
  if (p.ih + p.pad_top + p.pad_bottom < p.kh || p.iw + p.pad_left + p.pad_right < p.kw) {
    throw_user_error("layer '{}': kernel {}x{} is larger than the padded input {}x{}", layer, p.kh,
                     p.kw, p.ih + p.pad_top + p.pad_bottom, p.iw + p.pad_left + p.pad_right);
  }
  ConvGeometry g;
  g.n = p.n;
  g.ic = p.ic;
  g.ih = p.ih;
  g.iw = p.iw;
  g.oc = p.oc;
  g.kh = p.kh;
  g.kw = p.kw;
  g.sh = p.stride_h;
  g.sw = p.stride_w;
  g.pt = p.pad_top;
  g.pl = p.pad_left;
  g.pb = p.pad_bottom;
  g.pr = p.pad_right;
  g.groups = p.groups;
  g.oh = p.oh();
  g.ow = p.ow();
  g.batch = cfg.batch();
  g.block_in = cfg.block_in();
  g.block_out = cfg.block_out();
  g.nb = ceil_div(g.n, g.batch);
  g.icb = ceil_div(g.ic, g.block_in);
  g.ocb = ceil_div(g.oc, g.block_out);
  const int64_t icg = g.ic / g.groups, ocg = g.oc / g.groups;
  g.max_nnz = 0;
  for (int64_t ob = 0; ob < g.ocb; ++ob) {
    const int64_t o_lo = ob * g.block_out, o_hi = std::min(g.oc, o_lo + g.block_out);
    const int64_t g_lo = o_lo / ocg, g_hi = (o_hi - 1) / ocg;
    const int64_t c_lo = g_lo * icg, c_hi = (g_hi + 1) * icg;  // channels [c_lo, c_hi)
    const int64_t b_lo = c_lo / g.block_in, b_hi = (c_hi - 1) / g.block_in + 1;
    g.nz.emplace_back(b_lo, b_hi);
    g.max_nnz = std::max(g.max_nnz, b_hi - b_lo);
    g.nnz_tiles += b_hi - b_lo;
  }
  return g;
}

std::pair<int64_t, int64_t> chunk_blocks(const ConvGeometry& g, const Schedule& s, int64_t ob,
                                         int chunk) {
  const auto [lo, hi] = g.nz[static_cast<size_t>(ob)];
  const int64_t a = std::min(hi, lo + chunk * s.ic_chunk);
  const int64_t b = std::min(hi, a + s.ic_chunk);
  return {a, b};
}

std::string Schedule::describe() const {
  return fmt::format(
      "tiles={} oc_tile={} oh_tile={} ow_tile={} ic_chunk={} chunks={} vthreads={} "
      "const_rows={} est_cycles={}",
      tiles.size(), oc_tile_blocks, oh_tile, ow_tile, ic_chunk, n_chunks, virtual_threads,
      const_rows, est_cycles);
}

namespace {

/// Per (oc tile, chunk) needs that do not depend on the spatial tile sizes.
struct ChunkNeeds {
  int64_t inp_blocks = 0;  ///< distinct input-channel blocks (INP slots)
  int64_t wgt_tiles = 0;   ///< weight tiles (each KH*KW WGT entries)
};

std::vector<ChunkNeeds> chunk_needs(const ConvGeometry& g, const Schedule& s, int64_t ob0,
                                    int64_t obn) {
  std::vector<ChunkNeeds> v;
  for (int c = 0; c < s.n_chunks; ++c) {
    std::set<int64_t> blocks;
    ChunkNeeds n;
    for (int64_t ob = ob0; ob < ob0 + obn; ++ob) {
      const auto [a, b] = chunk_blocks(g, s, ob, c);
      for (int64_t i = a; i < b; ++i) blocks.insert(i);
      n.wgt_tiles += b - a;
    }
    n.inp_blocks = static_cast<int64_t>(blocks.size());
    v.push_back(n);
  }
  return v;
}

/// Cost-model view of one tile: per input-channel chunk the load (DMA) and GEMM cycles; the
/// compute-module work before (ACC loads, reset) and after (ALU) the GEMMs; the store cycles.
struct TileCost {
  std::vector<int64_t> load, gemm;
  int64_t pre = 0, post = 0, store = 0;
};

/// Estimated cycles of the three modules running the stream that the passes emit: tiles in
/// groups of `vt` (one per virtual thread) whose stages are interleaved (the chunk-k loads of
/// every tile of the group, then their chunk-k GEMMs, ...; then the ALU work of each, then the
/// stores). A load waits for the load module and for the GEMMs that last used its thread's
/// INP/WGT half; a GEMM waits for its load and the compute module; a tile's first compute work
/// waits for the store that last used its thread's ACC half; a store waits for its tile's compute
/// and the store module. Each module runs its instructions in program order.
class Pipeline {
 public:
  explicit Pipeline(int vt)
      : vt_(static_cast<size_t>(vt)), buf_ready_(vt_, 0), acc_ready_(vt_, 0) {}
  /// Adds the next tile (tiles are grouped by vt); returns the estimated end (cycles) so far.
  int64_t add(const TileCost& t) {
    group_.push_back(t);
    if (group_.size() == vt_) flush();
    return store_free_;
  }
  /// Runs a partial last group; returns the estimated end of everything added.
  int64_t finish() {
    flush();
    return store_free_;
  }

 private:
  void flush() {
    if (group_.empty()) return;
    size_t chunks = 0;
    for (const TileCost& t : group_) chunks = std::max(chunks, t.load.size());
    std::vector<int64_t> load_end(group_.size());
    for (size_t k = 0; k < chunks; ++k) {
      for (size_t i = 0; i < group_.size(); ++i) {
        if (k >= group_[i].load.size()) continue;
        load_free_ = std::max(load_free_, buf_ready_[i]) + group_[i].load[k];
        load_end[i] = load_free_;
      }
      for (size_t i = 0; i < group_.size(); ++i) {
        if (k == 0) comp_free_ = std::max(comp_free_, acc_ready_[i]) + group_[i].pre;
        if (k >= group_[i].gemm.size()) continue;
        comp_free_ = std::max(comp_free_, load_end[i]) + group_[i].gemm[k];
        buf_ready_[i] = comp_free_;
      }
    }
    std::vector<int64_t> comp_end(group_.size());
    for (size_t i = 0; i < group_.size(); ++i) {
      comp_free_ += group_[i].post;
      comp_end[i] = comp_free_;
    }
    for (size_t i = 0; i < group_.size(); ++i) {
      store_free_ = std::max(store_free_, comp_end[i]) + group_[i].store;
      acc_ready_[i] = store_free_;
    }
    group_.clear();
  }

  size_t vt_;
  std::vector<int64_t> buf_ready_, acc_ready_;  ///< per virtual thread
  std::vector<TileCost> group_;
  int64_t load_free_ = 0, comp_free_ = 0, store_free_ = 0;
};

}  // namespace

Schedule choose_schedule(const std::string& layer, const ConvGeometry& g, const isa::HwConfig& cfg,
                         const ScheduleKnobs& knobs, int64_t const_rows, int64_t alu_ops) {
  if (knobs.virtual_threads < 1) {
    throw_user_error("layer '{}': virtual_threads must be >= 1, got {}", layer,
                     knobs.virtual_threads);
  }
  if (knobs.oc_tile_blocks < 0 || knobs.oc_tile_blocks > g.ocb) {
    throw_user_error("layer '{}': oc_tile_blocks {} out of range [0, {}]", layer,
                     knobs.oc_tile_blocks, g.ocb);
  }
  if (knobs.oh_tile < 0 || knobs.oh_tile > g.oh) {
    throw_user_error("layer '{}': oh_tile {} out of range [0, {}]", layer, knobs.oh_tile, g.oh);
  }
  if (knobs.ow_tile < 0 || knobs.ow_tile > g.ow) {
    throw_user_error("layer '{}': ow_tile {} out of range [0, {}]", layer, knobs.ow_tile, g.ow);
  }
  if (knobs.ic_chunk < 0 || knobs.ic_chunk > g.max_nnz) {
    throw_user_error("layer '{}': ic_chunk {} out of range [0, {}]", layer, knobs.ic_chunk,
                     g.max_nnz);
  }
  const int vt = knobs.virtual_threads;
  const int64_t inp_cap = cfg.inp_depth() / vt, wgt_cap = cfg.wgt_depth() / vt;
  const int64_t acc_cap = cfg.acc_depth() / vt, uop_cap = cfg.uop_depth() / vt - kAluUopReserve;
  const int64_t khw = g.kh * g.kw;
  const int64_t bus = cfg.bus_bytes(), lat = cfg.dram_latency;

  std::vector<int64_t> ob_cands, th_cands, tw_cands, icc_cands;
  if (knobs.oc_tile_blocks > 0) {
    ob_cands = {knobs.oc_tile_blocks};
  } else {
    ob_cands = balanced_sizes(g.ocb);
  }
  th_cands = knobs.oh_tile > 0 ? std::vector<int64_t>{knobs.oh_tile} : balanced_sizes(g.oh);
  tw_cands = knobs.ow_tile > 0 ? std::vector<int64_t>{knobs.ow_tile} : balanced_sizes(g.ow);
  icc_cands = knobs.ic_chunk > 0 ? std::vector<int64_t>{knobs.ic_chunk} : balanced_sizes(g.max_nnz);

  Schedule best;
  int64_t best_cost = std::numeric_limits<int64_t>::max();
  bool found = false;
  for (int64_t obt : ob_cands) {
    for (int64_t icc : icc_cands) {
      Schedule s;
      s.oc_tile_blocks = obt;
      s.ic_chunk = icc;
      s.n_chunks = ceil_div(g.max_nnz, icc);
      // needs per oc tile (the weight and input-block needs only depend on the oc tile)
      std::vector<std::vector<ChunkNeeds>> needs;
      int64_t max_inp_blocks = 0, max_wgt = 0;
      for (int64_t ob0 = 0; ob0 < g.ocb; ob0 += obt) {
        needs.push_back(chunk_needs(g, s, ob0, std::min(obt, g.ocb - ob0)));
        for (const ChunkNeeds& n : needs.back()) {
          max_inp_blocks = std::max(max_inp_blocks, n.inp_blocks);
          max_wgt = std::max(max_wgt, n.wgt_tiles * khw);
        }
      }
      if (max_wgt > wgt_cap || max_wgt > uop_cap) continue;
      if (obt * const_rows >= acc_cap) continue;
      for (int64_t th : th_cands) {
        const int64_t win_h = (th - 1) * g.sh + g.kh;
        if (max_inp_blocks * win_h > inp_cap) continue;
        for (int64_t tw : tw_cands) {
          const int64_t win_w = (tw - 1) * g.sw + g.kw;
          if (max_inp_blocks * win_h * win_w > inp_cap) continue;
          if (obt * th * tw + obt * const_rows > acc_cap) continue;
          // every window must hold at least one real input row and column
          bool real_ok = true;
          for (int64_t y0 = 0; y0 < g.oh && real_ok; y0 += th) {
            real_ok = input_window(y0, std::min(th, g.oh - y0), g.kh, g.sh, g.pt, g.ih).real > 0;
          }
          for (int64_t x0 = 0; x0 < g.ow && real_ok; x0 += tw) {
            real_ok = input_window(x0, std::min(tw, g.ow - x0), g.kw, g.sw, g.pl, g.iw).real > 0;
          }
          if (!real_ok) continue;
          // per-tile costs in program order (one batch block) through the pipeline estimate;
          // stops as soon as it exceeds the best so far
          const int64_t limit = best_cost / std::max<int64_t>(g.nb, 1);
          Pipeline pipe(vt);
          TileCost tc;
          int64_t cost = 0;
          size_t oi = 0;
          for (int64_t ob0 = 0; ob0 < g.ocb && cost <= limit; ob0 += obt, ++oi) {
            const int64_t obn = std::min(obt, g.ocb - ob0);
            for (int64_t y0 = 0; y0 < g.oh && cost <= limit; y0 += th) {
              const int64_t h = std::min(th, g.oh - y0);
              const Window wy = input_window(y0, h, g.kh, g.sh, g.pt, g.ih);
              for (int64_t x0 = 0; x0 < g.ow && cost <= limit; x0 += tw) {
                const int64_t w = std::min(tw, g.ow - x0);
                const Window wx = input_window(x0, w, g.kw, g.sw, g.pl, g.iw);
                tc.load.clear();
                tc.gemm.clear();
                for (const ChunkNeeds& n : needs[oi]) {
                  tc.load.push_back(
                      ceil_div(n.inp_blocks * wy.real * wx.real * cfg.inp_elem_bytes(), bus) +
                      ceil_div(n.wgt_tiles * khw * cfg.wgt_elem_bytes(), bus) +
                      (n.inp_blocks + 1) * lat);
                  tc.gemm.push_back(n.wgt_tiles * khw * h * w);
                }
                tc.pre = ceil_div(obn * const_rows * cfg.acc_elem_bytes(), bus) + lat + obn * h * w;
                tc.post = alu_ops * obn * h * w;
                tc.store = ceil_div(obn * h * w * cfg.out_elem_bytes(), bus) + obn * lat;
                cost = pipe.add(tc);
              }
            }
          }
          if (cost <= limit) cost = pipe.finish();
          cost *= g.nb;
          if (cost < best_cost) {
            best_cost = cost;
            s.oh_tile = th;
            s.ow_tile = tw;
            s.win_h = win_h;
            best = s;
            found = true;
          }
        }
      }
    }
  }
  if (!found) {
    throw_user_error(
        "layer '{}': no tile fits the scratchpads (the smallest tile - 1 output block, 1x1 "
        "outputs, 1 input block - needs {} inp, {} wgt, {} acc entries and {} uops per virtual "
        "thread; capacities per virtual thread: inp {}, wgt {}, acc {}, uop {}, virtual_threads "
        "{})",
        layer, khw, khw, 1 + const_rows, khw, inp_cap, wgt_cap, acc_cap, uop_cap, vt);
  }
  best.virtual_threads = vt;
  best.const_rows = const_rows;
  best.inp_region = cfg.inp_depth() / vt;
  best.wgt_region = cfg.wgt_depth() / vt;
  best.acc_region = cfg.acc_depth() / vt;
  best.acc_tile_stride = best.oh_tile * best.ow_tile;
  best.est_cycles = best_cost;
  int64_t idx = 0;
  for (int64_t nb = 0; nb < g.nb; ++nb) {
    for (int64_t ob0 = 0; ob0 < g.ocb; ob0 += best.oc_tile_blocks) {
      for (int64_t y0 = 0; y0 < g.oh; y0 += best.oh_tile) {
        for (int64_t x0 = 0; x0 < g.ow; x0 += best.ow_tile) {
          Tile t;
          t.nb = nb;
          t.ob0 = ob0;
          t.obn = std::min(best.oc_tile_blocks, g.ocb - ob0);
          t.y0 = y0;
          t.th = std::min(best.oh_tile, g.oh - y0);
          t.x0 = x0;
          t.tw = std::min(best.ow_tile, g.ow - x0);
          t.vthread = static_cast<int>(idx % vt);
          best.tiles.push_back(t);
          ++idx;
        }
      }
    }
  }
  return best;
}

}  // namespace tessel::compiler::accel
