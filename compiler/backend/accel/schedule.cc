#include "compiler/backend/accel/schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "isa/spec.h"
#include "isa/timing.h"
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

/// Why thread_region(depth, vt, need, {{top, reach}}) is 0, for the no-fit message.
std::string region_failure(const char* buf, int64_t need, int64_t cap, int vt, int64_t top, int64_t reach,
                           const char* field) {
  if (need > cap) return fmt::format("its tiles need {} {} entries per virtual thread (capacity {})", need, buf, cap);
  if (top >= reach)
    return fmt::format("its uops name {} rows up to {}, beyond the {} field's reach {}", buf, top, field, reach);
  return fmt::format(
      "with {} virtual threads the last thread's {} region (at least {} rows each) puts its uops' {} rows at {} + {}, "
      "beyond the {} field's reach {} (one virtual thread would fit)",
      vt, buf, need, buf, (vt - 1) * need, top, field, reach);
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

bool tile_touches_padding(const ConvGeometry& g, const Tile& t) {
  const Window wy = input_window(t.y0, t.th, g.kh, g.sh, g.pt, g.ih);
  const Window wx = input_window(t.x0, t.tw, g.kw, g.sw, g.pl, g.iw);
  return wy.real != wy.total() || wx.real != wx.total();
}

bool tile_window_empty(const ConvGeometry& g, const Tile& t) {
  return input_window(t.y0, t.th, g.kh, g.sh, g.pt, g.ih).real == 0 ||
         input_window(t.x0, t.tw, g.kw, g.sw, g.pl, g.iw).real == 0;
}

bool layer_touches_padding(const ConvGeometry& g) {
  Tile whole;
  whole.th = g.oh;
  whole.tw = g.ow;
  return tile_touches_padding(g, whole);
}

UopReach uop_reach(const isa::HwConfig& cfg) {
  const isa::IsaSpec spec(cfg);
  auto reach = [&](const char* field) {
    return int64_t{1} << spec.field(isa::Format::kUop, field).width;
  };
  UopReach r;
  r.inp = reach("src_idx");
  r.wgt = reach("wgt_idx");
  r.acc_dst = reach("dst_idx");
  r.acc_src = reach("src_idx");
  return r;
}

int64_t thread_region(int64_t depth, int vt, int64_t need,
                      const std::vector<std::pair<int64_t, int64_t>>& top_reach) {
  int64_t r = depth / vt;
  for (const auto& [top, reach] : top_reach) {
    if (top < 0) continue;
    if (top >= reach) return 0;
    if (vt > 1) r = std::min(r, (reach - 1 - top) / (vt - 1));
  }
  return r >= need ? r : 0;
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
    g.wgt_offset.push_back(g.nnz_tiles * g.kh * g.kw);
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

std::vector<WgtLoad> group_wgt_loads(const std::vector<WgtPiece>& pieces) {
  constexpr int64_t kMaxStride = 65535;
  std::vector<WgtLoad> loads;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const WgtPiece& p = pieces[i];
    if (!loads.empty()) {
      WgtLoad& l = loads.back();
      if (l.rows == 1 && l.dram + l.entries == p.dram && l.sram + l.entries == p.sram) {
        l.entries += p.entries;  // contiguous: one longer row
        l.stride = l.entries;
        ++l.count;
        continue;
      }
      const int64_t step = p.dram - l.dram;
      const bool evenly = l.rows == 1 ? step > l.entries && step <= kMaxStride
                                      : step == l.rows * l.stride;
      if (p.entries == l.entries && p.sram == l.sram + l.rows * l.entries && evenly) {
        if (l.rows == 1) l.stride = step;
        ++l.rows;
        ++l.count;
        continue;
      }
    }
    loads.push_back({p.dram, p.sram, 1, p.entries, p.entries, i, 1});
  }
  return loads;
}

std::string Schedule::describe() const {
  std::string d = fmt::format("tiles={} oc_tile={} oh_tile={} ow_tile={} ic_chunk={} chunks={} vthreads={} const_rows={}",
                              tiles.size(), oc_tile_blocks, oh_tile, ow_tile, ic_chunk, n_chunks, virtual_threads,
                              const_rows);
  if (est_cycles > 0) d += fmt::format(" est_cycles={}", est_cycles);
  return d;
}

namespace {

/// Per (oc tile, chunk) needs that do not depend on the spatial tile sizes.
struct ChunkNeeds {
  int64_t inp_blocks = 0;  ///< distinct input-channel blocks (INP slots, one LOAD INP each)
  int64_t wgt_tiles = 0;   ///< weight tiles (each KH*KW WGT entries)
  /// The LOAD WGTs (group_wgt_loads, as inject_dma_copy emits them).
  std::vector<WgtLoad> wgt_loads;
};

std::vector<ChunkNeeds> chunk_needs(const ConvGeometry& g, const Schedule& s, int64_t ob0,
                                    int64_t obn) {
  const int64_t khw = g.kh * g.kw;
  std::vector<ChunkNeeds> v;
  for (int c = 0; c < s.n_chunks; ++c) {
    std::set<int64_t> blocks;
    ChunkNeeds n;
    std::vector<WgtPiece> pieces;
    int64_t sram = 0;
    for (int64_t ob = ob0; ob < ob0 + obn; ++ob) {
      const auto [a, b] = chunk_blocks(g, s, ob, c);
      for (int64_t i = a; i < b; ++i) blocks.insert(i);
      n.wgt_tiles += b - a;
      if (b == a) continue;
      const int64_t dram =
          g.wgt_offset[static_cast<size_t>(ob)] + (a - g.nz[static_cast<size_t>(ob)].first) * khw;
      pieces.push_back({dram, sram, (b - a) * khw});
      sram += (b - a) * khw;
    }
    n.wgt_loads = group_wgt_loads(pieces);
    n.inp_blocks = static_cast<int64_t>(blocks.size());
    v.push_back(std::move(n));
  }
  return v;
}

/// The timing rules of docs/microarchitecture.md (isa/timing.h, the cycle model's too) applied
/// to the instructions the passes emit. Every time below is the cycle a module can start its
/// next instruction: the previous done cycle D + 1, which is also the first cycle a token pushed
/// in D is visible to its consumer.
struct Rates {
  int64_t bus = 8;  ///< bytes per beat
  int64_t lat = 0;  ///< DRAM latency (cycles)
  /// Beats of one DMA row of `bytes` bytes from a bus-aligned address (every row is its own
  /// bursts; the Programs' DRAM tensors start bus-aligned, their rows at element multiples).
  int64_t row_beats(int64_t bytes) const {
    return static_cast<int64_t>(isa::timing::aligned_beats(0, static_cast<uint64_t>(bytes),
                                                          static_cast<uint64_t>(bus)));
  }
  /// Beats of a fetch burst of kFetchBurstInsns 16-byte instructions.
  int64_t burst_beats() const {
    return row_beats(static_cast<int64_t>(isa::timing::kInsnBytes) *
                     int64_t{isa::timing::kFetchBurstInsns});
  }
  /// Cycles between two fetch bursts on an otherwise idle bus (section 3, no prefetch): the grant
  /// in the request cycle r, beats from r + 1 + lat, one dispatch a cycle from the cycle after
  /// the last beat, the next request the cycle after the last dispatch.
  int64_t burst_period() const {
    return 1 + lat + burst_beats() + int64_t{isa::timing::kFetchBurstInsns};
  }
  /// First cycle instruction `i` (0-based, program order) is visible in its command queue (its
  /// dispatch + 1), ignoring full command queues (512 entries: fetch runs far ahead whenever it
  /// is not the bottleneck) and bus contention of the fetch bursts.
  int64_t dispatched(int64_t i) const {
    const int64_t burst = int64_t{isa::timing::kFetchBurstInsns};
    return (i / burst) * burst_period() + 1 + lat + burst_beats() + i % burst + 1;
  }
};

/// `count` back-to-back instructions of one kind on one module.
struct Op {
  enum Kind { kCompute, kRead, kWrite } kind = kCompute;
  int64_t count = 1;
  int64_t beats = 0;  ///< bus beats of each (kRead, kWrite)
  int64_t extra = 0;  ///< kCompute: cycles of each; kRead: pad rows written after the beats
};

/// Work of one module stage: its instructions in program order.
struct Stage {
  std::vector<Op> ops;
  int64_t insns = 0;
  void compute(int64_t cycles, int64_t n = 1) { push({Op::kCompute, n, 0, cycles}); }
  void read(int64_t beats, int64_t pad = 0, int64_t n = 1) { push({Op::kRead, n, beats, pad}); }
  void write(int64_t beats, int64_t n = 1) { push({Op::kWrite, n, beats, 0}); }
  void clear() {
    ops.clear();
    insns = 0;
  }

 private:
  void push(const Op& op) {
    if (op.count == 0) return;
    ops.push_back(op);
    insns += op.count;
  }
};

/// The DRAM bus, served in grant order (docs/microarchitecture.md sections 2.2-2.3): a
/// transfer's first beat waits for every transfer requested before it. The stages are estimated
/// in program order, which is not quite time order (the load module runs ahead of compute and
/// store), so a transfer reached later in the walk but requested earlier does not wait for the
/// ones requested after it (the layer-wide bus bound in schedule_candidates covers the overlap).
class Bus {
 public:
  /// A transfer of `beats` beats requested at cycle `request` whose first beat can come at cycle
  /// `earliest` at the soonest; returns the cycle of its first beat.
  int64_t reserve(int64_t request, int64_t earliest, int64_t beats) {
    int64_t first = earliest;
    if (request >= max_request_) {
      first = std::max(first, max_end_);  // the usual case: requested after every other
    } else {
      for (const auto& [req, end] : busy_) {
        if (req <= request) first = std::max(first, end);
      }
    }
    if (beats > 0) {
      busy_.emplace_back(request, first + beats);
      max_request_ = std::max(max_request_, request);
      max_end_ = std::max(max_end_, first + beats);
    }
    return first;
  }
  /// Forgets the transfers that end by `cycle` (no later request is made before it).
  void retire(int64_t cycle) {
    std::erase_if(busy_, [&](const std::pair<int64_t, int64_t>& b) { return b.second <= cycle; });
  }

 private:
  std::vector<std::pair<int64_t, int64_t>> busy_;  ///< (request cycle, end of the last beat)
  int64_t max_request_ = 0, max_end_ = 0;          ///< over every transfer reserved so far
};

/// Cost-model view of one tile: per input-channel chunk the load stage (LOAD INP/WGT) and the GEMM
/// stage (LOAD UOP when the kernels do not all fit the UOP buffer, GEMM); the compute work before
/// the first GEMM (LOAD ACC of constants or of the init tensor, GEMM reset) and after the last
/// (the ALU requantisation); the store stage; and the DRAM bus beats of all of it.
struct TileCost {
  std::vector<Stage> load, gemm;  ///< per input-channel chunk (the first `chunks` entries)
  size_t chunks = 0;
  Stage pre, post, store;
  int64_t beats = 0;
  /// Empties the tile for reuse with `n` chunks, keeping every vector's capacity (the search
  /// costs millions of tiles; allocating per tile dominated the compile time).
  void reset(size_t n) {
    if (load.size() < n) {
      load.resize(n);
      gemm.resize(n);
    }
    chunks = n;
    for (size_t k = 0; k < n; ++k) {
      load[k].clear();
      gemm[k].clear();
    }
    pre.clear();
    post.clear();
    store.clear();
    beats = 0;
  }
};

/// Estimated cycles of the modules running the stream that the passes emit: tiles in groups of
/// `vt` (one per virtual thread) whose stages are interleaved (the chunk-k loads of every tile of
/// the group, then their chunk-k GEMMs, ...; then the ALU work of each, then the stores). A stage
/// starts when its module is free, its dependency tokens are available and fetch has dispatched
/// its first instruction; it ends no earlier than one cycle after fetch dispatched its last. A
/// load waits for the GEMMs that last used its thread's INP/WGT half; a GEMM for its load; a
/// tile's first compute work for the store that last used its thread's ACC half; a store for its
/// tile's ALU work. Each module runs its instructions in program order.
class Pipeline {
 public:
  Pipeline(int vt, const Rates& r) : vt_(static_cast<size_t>(vt)), r_(r),
        buf_ready_(vt_, 0), acc_ready_(vt_, 0), group_(vt_), load_end_(vt_), comp_end_(vt_) {}
  /// Adds work to the compute module outside the tiles (the up-front LOAD UOP).
  void add_compute(const Stage& s) { run(comp_free_, 0, s); }
  /// The next tile's slot, emptied for `chunks` input-channel chunks; fill it, then add().
  TileCost& next(size_t chunks) {
    TileCost& t = group_[group_n_];
    t.reset(chunks);
    return t;
  }
  /// Adds the tile filled in next()'s slot (tiles are grouped by vt); returns the estimated end
  /// (cycles) so far.
  int64_t add() {
    if (++group_n_ == vt_) flush();
    return store_free_;
  }
  /// Runs a partial last group and the stream's ending (store no-op, compute no-op, FINISH);
  /// returns the estimated end of everything added.
  int64_t finish() {
    flush();
    const int64_t one = 1;  // a zero-length instruction: D = S, the next starts in S + 1
    Stage noop;
    noop.compute(one);
    run(store_free_, 0, noop);
    Stage ending;
    ending.compute(one, 2);
    run(comp_free_, store_free_, ending);
    return comp_free_;
  }
  /// Instructions added so far.
  int64_t insns() const { return next_insn_; }

 private:
  /// Runs stage `s` on the module whose free time is `module_free` after `ready`; returns its
  /// end (unchanged module time for an empty stage).
  int64_t run(int64_t& module_free, int64_t ready, const Stage& s) {
    if (s.insns == 0) return std::max(module_free, ready);
    int64_t t = std::max({module_free, ready, r_.dispatched(next_insn_)});
    for (const Op& op : s.ops) {
      for (int64_t k = 0; k < op.count; ++k) {
        switch (op.kind) {
          case Op::kCompute:
            t += op.extra;
            break;
          case Op::kRead: {  // request from S + 1, latency, beats; pads in the beat-free cycles
            if (op.beats == 0) {
              t += op.extra + 1;  // pads only: D = S + P
              break;
            }
            const int64_t first = bus_.reserve(t + 1, t + 2 + r_.lat, op.beats);
            t = static_cast<int64_t>(isa::timing::dma_read_done(
                    static_cast<uint64_t>(t), static_cast<uint64_t>(op.extra),
                    static_cast<uint64_t>(first), static_cast<uint64_t>(op.beats))) +
                1;
            break;
          }
          case Op::kWrite: {  // W beats from the cycle after the grant; done at the response
            if (op.beats == 0) {
              t += 1;
              break;
            }
            const int64_t first = bus_.reserve(t + 1, t + 2, op.beats);
            t = static_cast<int64_t>(isa::timing::store_done(static_cast<uint64_t>(r_.lat),
                                                             static_cast<uint64_t>(first),
                                                             static_cast<uint64_t>(op.beats))) +
                1;
            break;
          }
        }
      }
    }
    next_insn_ += s.insns;
    module_free = std::max(t, r_.dispatched(next_insn_ - 1) + 1);
    const int64_t floor = std::min({load_free_, comp_free_, store_free_});
    bus_.retire(floor);
    return module_free;
  }

  void flush() {
    if (group_n_ == 0) return;
    size_t chunks = 0;
    for (size_t i = 0; i < group_n_; ++i) chunks = std::max(chunks, group_[i].chunks);
    std::fill(load_end_.begin(), load_end_.end(), 0);
    for (size_t k = 0; k < chunks; ++k) {
      for (size_t i = 0; i < group_n_; ++i) {
        if (k >= group_[i].chunks) continue;
        load_end_[i] = run(load_free_, buf_ready_[i], group_[i].load[k]);
      }
      for (size_t i = 0; i < group_n_; ++i) {
        if (k == 0) run(comp_free_, acc_ready_[i], group_[i].pre);
        if (k >= group_[i].chunks || group_[i].gemm[k].insns == 0) continue;
        buf_ready_[i] = run(comp_free_, load_end_[i], group_[i].gemm[k]);
      }
    }
    for (size_t i = 0; i < group_n_; ++i) comp_end_[i] = run(comp_free_, 0, group_[i].post);
    for (size_t i = 0; i < group_n_; ++i) {
      acc_ready_[i] = run(store_free_, comp_end_[i], group_[i].store);
    }
    group_n_ = 0;
  }

  size_t vt_;
  Rates r_;
  std::vector<int64_t> buf_ready_, acc_ready_;  ///< per virtual thread
  std::vector<TileCost> group_;  ///< one slot per virtual thread, reused
  size_t group_n_ = 0;            ///< slots filled
  std::vector<int64_t> load_end_, comp_end_;  ///< per slot, scratch of flush()
  int64_t load_free_ = 0, comp_free_ = 0, store_free_ = 0;
  int64_t next_insn_ = 0;  ///< program-order index of the next instruction
  Bus bus_;
};

}  // namespace

std::vector<Schedule> schedule_candidates(const std::string& layer, const ConvGeometry& g, const isa::HwConfig& cfg,
                                          const ScheduleKnobs& knobs, int64_t const_rows, int64_t alu_ops,
                                          bool acc_init_tensor, bool init_every_tile, int scratch_regions,
                                          const CandidateFilter& filter) {
  if (filter.max_candidates < 1) {
    throw_user_error("layer '{}': max_candidates must be >= 1, got {}", layer, filter.max_candidates);
  }
  if (!(filter.band >= 0.0)) throw_user_error("layer '{}': candidate band must be >= 0, got {}", layer, filter.band);
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
  if (uop_cap < 1) {
    throw_user_error(
        "layer '{}': the micro-op buffer's {} entries give {} per virtual thread ({} virtual "
        "threads), none left after the {} reserved for ALU micro-ops; use a larger "
        "LOG_UOP_BUFF_SIZE or fewer virtual threads",
        layer, cfg.uop_depth(), cfg.uop_depth() / vt, vt, kAluUopReserve);
  }
  // the rows a uop's own index fields can name (the regions below keep every uop index in reach)
  const UopReach reach = uop_reach(cfg);
  const int64_t khw = g.kh * g.kw;
  const int64_t lat = cfg.dram_latency;
  Rates rates;
  rates.bus = cfg.bus_bytes();
  rates.lat = lat;
  // DRAM bytes of one element of each kind (isa::dram_elem_bytes)
  const int64_t inp_bytes = cfg.inp_elem_bytes(), wgt_bytes = cfg.wgt_elem_bytes();
  const int64_t acc_bytes = cfg.acc_elem_bytes(), out_bytes = cfg.out_elem_bytes();
  const int64_t uop_bytes = cfg.uop_elem_bytes();
  // A GEMM (reset or not) or ALU of n > 0 uops is done in S + n + 4, so the next instruction of
  // the module starts n + 5 cycles after it (docs/microarchitecture.md section 5.3).
  const int64_t gemm_fill = static_cast<int64_t>(isa::timing::kComputePipelineDepth) + 1;
  const int64_t reset_fill = gemm_fill;
  const int64_t alu_fill = gemm_fill;

  std::vector<int64_t> ob_cands, th_cands, tw_cands, icc_cands;
  if (knobs.oc_tile_blocks > 0) {
    ob_cands = {knobs.oc_tile_blocks};
  } else {
    ob_cands = balanced_sizes(g.ocb);
  }
  th_cands = knobs.oh_tile > 0 ? std::vector<int64_t>{knobs.oh_tile} : balanced_sizes(g.oh);
  tw_cands = knobs.ow_tile > 0 ? std::vector<int64_t>{knobs.ow_tile} : balanced_sizes(g.ow);
  icc_cands = knobs.ic_chunk > 0 ? std::vector<int64_t>{knobs.ic_chunk} : balanced_sizes(g.max_nnz);

  // The candidates kept so far, cheapest first by the pruning model (ties: enumeration order,
  // i.e. larger tiles first: a candidate goes after those of equal cost), at most
  // max_candidates of them.
  struct Kept {
    int64_t cost = 0;
    Schedule s;
  };
  std::vector<Kept> kept;
  // The largest pruning-model cost a candidate may have to be kept: within the band of the
  // cheapest so far, and below the last kept one once max_candidates are kept.
  auto threshold = [&]() -> int64_t {
    if (kept.empty()) return std::numeric_limits<int64_t>::max();
    const double band_limit = std::floor(static_cast<double>(kept.front().cost) * (1.0 + filter.band));
    int64_t t = band_limit >= 9.0e18 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(band_limit);
    if (kept.size() >= filter.max_candidates) t = std::min(t, kept.back().cost - 1);
    return t;
  };
  std::string why = "no candidate was tried";  // the last candidate's rejection
  for (int64_t obt : ob_cands) {
    for (int64_t icc : icc_cands) {
      Schedule s;
      s.oc_tile_blocks = obt;
      s.ic_chunk = icc;
      s.n_chunks = ceil_div(g.max_nnz, icc);
      // A lower bound first, so that the walks over every output block below (O(ocb) each) run
      // only for candidates with a chance to fit, at most about min(wgt, uop capacity) of them
      // whatever the layer's width: chunk 0 of every output block holds at least one non-zero
      // input block, that of a block with max_nnz of them ic_chunk, so some chunk needs at least
      // max(oc_tile_blocks, ic_chunk) weight tiles; the constant rows need oc_tile_blocks *
      // const_rows ACC rows.
      if (std::max(obt, icc) * khw > std::min(wgt_cap, uop_cap)) {
        why = fmt::format("its weights need at least {} wgt entries and gemm uops per virtual thread (capacities wgt {}, "
                          "uop {})",
                          std::max(obt, icc) * khw, wgt_cap, uop_cap);
        continue;
      }
      if (obt * const_rows >= acc_cap) {
        why = fmt::format("its {} acc rows of per-channel constants leave no room for accumulators (acc capacity {})",
                          obt * const_rows, acc_cap);
        continue;
      }
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
      if (max_wgt > wgt_cap || max_wgt > uop_cap) {
        why = fmt::format("its weights need {} wgt entries and gemm uops per virtual thread (capacities wgt {}, uop {})",
                          max_wgt, wgt_cap, uop_cap);
        continue;
      }
      // a GEMM uop names every weight row itself (the weight factors are 0)
      s.wgt_region = thread_region(cfg.wgt_depth(), vt, max_wgt, {{max_wgt - 1, reach.wgt}});
      if (s.wgt_region == 0) {
        why = fmt::format("the wgt rows its uops name on virtual thread {} (up to {} + {}) are beyond the wgt_idx "
                          "field's reach {}",
                          vt - 1, (vt - 1) * max_wgt, max_wgt - 1, reach.wgt);
        continue;
      }
      // uops of the distinct GEMM kernels of one virtual thread and tile width
      int64_t kernel_uops = 0;
      {
        std::set<std::vector<int64_t>> kernels;
        for (int64_t ob0 = 0; ob0 < g.ocb; ob0 += obt) {
          const int64_t obn = std::min(obt, g.ocb - ob0);
          for (int c = 0; c < s.n_chunks; ++c) {
            std::vector<int64_t> key{c};
            int64_t first = std::numeric_limits<int64_t>::max(), uops = 0;
            for (int64_t ob = ob0; ob < ob0 + obn; ++ob) {
              const auto [a, b] = chunk_blocks(g, s, ob, c);
              if (b > a) first = std::min(first, a);
            }
            for (int64_t ob = ob0; ob < ob0 + obn; ++ob) {
              const auto [a, b] = chunk_blocks(g, s, ob, c);
              key.push_back(b > a ? a - first : 0);
              key.push_back(b - a);
              uops += (b - a) * khw;
            }
            if (uops > 0 && kernels.insert(key).second) kernel_uops += uops;
          }
        }
      }
      for (int64_t th : th_cands) {
        const int64_t win_h = (th - 1) * g.sh + g.kh;
        if (max_inp_blocks * win_h > inp_cap) {
          why = fmt::format("its input window needs at least {} inp entries per virtual thread ({} input blocks x {} "
                            "rows; capacity inp {})",
                            max_inp_blocks * win_h, max_inp_blocks, win_h, inp_cap);
          continue;
        }
        for (int64_t tw : tw_cands) {
          const int64_t win_w = (tw - 1) * g.sw + g.kw;
          // INP: a GEMM uop names the top-left tap of each slot's window, (ky, kx) inside it;
          // the loop factors (their own, depth-wide fields) step over the output positions
          const int64_t slot = win_h * win_w;
          const int64_t inp_top = (max_inp_blocks - 1) * slot + (g.kh - 1) * win_w + g.kw - 1;
          s.inp_region = thread_region(cfg.inp_depth(), vt, max_inp_blocks * slot, {{inp_top, reach.inp}});
          if (s.inp_region == 0) {
            why = region_failure("inp", max_inp_blocks * slot, inp_cap, vt, inp_top, reach.inp, "src_idx");
            continue;
          }
          // ACC: GEMM uops name the first row of each output block's tile, the reset/ALU uops
          // row 0 (the loops step over the rest), ALU uops with a vector source the constant
          // rows after the tile
          // (and the scratch regions of the low limbs after them, each a copy of the tile: ALU
          // uops name their row 0 as dst and as src)
          const int64_t acc_need = obt * th * tw * (1 + scratch_regions) + obt * const_rows;
          const int64_t scratch_top =
              scratch_regions > 0 ? obt * th * tw + obt * const_rows + (scratch_regions - 1) * obt * th * tw : -1;
          const int64_t acc_dst_top = std::max((obt - 1) * th * tw, scratch_top);
          const int64_t acc_src_top = std::max(const_rows > 0 ? obt * th * tw + const_rows - 1 : -1, scratch_top);
          s.acc_region = thread_region(cfg.acc_depth(), vt, acc_need,
                                       {{acc_dst_top, reach.acc_dst}, {acc_src_top, reach.acc_src}});
          if (s.acc_region == 0) {
            why = thread_region(cfg.acc_depth(), vt, acc_need, {{acc_dst_top, reach.acc_dst}}) == 0
                      ? region_failure("acc", acc_need, acc_cap, vt, acc_dst_top, reach.acc_dst, "dst_idx")
                      : region_failure("acc", acc_need, acc_cap, vt, acc_src_top, reach.acc_src, "src_idx");
            continue;
          }
          // A tile whose input window holds no real row or column (it lies wholly in the
          // padding, e.g. stride 2 and pad_top 1 on a height of 1) loads no input and runs no
          // GEMM: its accumulators are the init tensor's zero-point correction plus the bias
          // (tile_window_empty, plan.h), then requantised and stored like any other tile.
          // the micro-op table: every distinct GEMM kernel (per virtual thread, tile width - the
          // last tile of a row may be narrower - and chunk layout: the per-output-block input
          // blocks relative to the chunk's first) and the one-uop reset and ALU kernels.
          // allocate_uops loads it once when it fits the UOP buffer; otherwise every kernel is
          // loaded before its use (the kernels cycle through the buffer).
          const int64_t w_classes = g.ow % tw == 0 ? 1 : 2;
          const int64_t n_tiles = ceil_div(g.ocb, obt) * ceil_div(g.oh, th) * ceil_div(g.ow, tw);
          const int64_t vt_used = std::min<int64_t>(vt, n_tiles);
          // the GEMM reset kernel exists when some tile resets (every tile without the init
          // tensor, otherwise the tiles none of whose output windows touch the padding)
          bool any_reset = !acc_init_tensor;
          for (int64_t y0 = 0; y0 < g.oh && !any_reset && !init_every_tile; y0 += th) {
            const Window wy = input_window(y0, std::min(th, g.oh - y0), g.kh, g.sh, g.pt, g.ih);
            if (wy.real != wy.total()) continue;
            for (int64_t x0 = 0; x0 < g.ow && !any_reset; x0 += tw) {
              const Window wx = input_window(x0, std::min(tw, g.ow - x0), g.kw, g.sw, g.pl, g.iw);
              any_reset = wx.real == wx.total();
            }
          }
          int64_t table_uops = vt_used * (alu_ops + (any_reset ? 1 : 0));
          table_uops += vt_used * w_classes * kernel_uops;
          const bool uops_resident = table_uops <= cfg.uop_depth();
          // per-tile costs in program order (one batch block) through the pipeline estimate;
          // stops as soon as it exceeds what a kept candidate may cost (the estimate only grows
          // as tiles are added)
          const int64_t keep_limit = threshold();
          const int64_t limit = keep_limit / std::max<int64_t>(g.nb, 1);
          Pipeline pipe(vt, rates);
          int64_t beats = 0;
          if (uops_resident) {
            const int64_t b = rates.row_beats(table_uops * uop_bytes);
            Stage uop_load;
            uop_load.read(b);
            pipe.add_compute(uop_load);
            beats += b;
          }
          int64_t cost = 0;
          size_t oi = 0;
          // per virtual thread: the first output block whose constant rows its ACC region holds
          // (inject_bias loads them only when a thread's tile changes output blocks)
          std::vector<int64_t> const_held(static_cast<size_t>(vt), -1);
          // likewise the weights (inject_dma_copy reuses them when a thread's tile has the same
          // output blocks and the reduction is one chunk)
          std::vector<int64_t> wgt_held(static_cast<size_t>(vt), -1);
          int64_t tile_index = 0;
          for (int64_t ob0 = 0; ob0 < g.ocb && cost <= limit; ob0 += obt, ++oi) {
            const int64_t obn = std::min(obt, g.ocb - ob0);
            for (int64_t y0 = 0; y0 < g.oh && cost <= limit; y0 += th) {
              const int64_t h = std::min(th, g.oh - y0);
              const Window wy = input_window(y0, h, g.kh, g.sh, g.pt, g.ih);
              for (int64_t x0 = 0; x0 < g.ow && cost <= limit; x0 += tw) {
                const int64_t w = std::min(tw, g.ow - x0);
                const Window wx = input_window(x0, w, g.kw, g.sw, g.pl, g.iw);
                const size_t thread = static_cast<size_t>(tile_index++ % vt);
                const bool no_input = wy.real == 0 || wx.real == 0;  // tile_window_empty
                const bool wgt_reused = s.n_chunks == 1 && wgt_held[thread] == ob0;
                if (!no_input) wgt_held[thread] = ob0;
                // LOAD INP: real rows from DRAM (one burst each), then the zero padding
                const int64_t inp_beats = wy.real * rates.row_beats(wx.real * inp_bytes);
                const int64_t inp_pad = wy.total() * wx.total() - wy.real * wx.real;
                TileCost& tc = pipe.next(needs[oi].size());
                for (size_t k = 0; k < needs[oi].size() && !no_input; ++k) {
                  const ChunkNeeds& n = needs[oi][k];
                  Stage& ld = tc.load[k];
                  Stage& gm = tc.gemm[k];
                  ld.read(inp_beats, inp_pad, n.inp_blocks);
                  tc.beats += n.inp_blocks * inp_beats;
                  for (size_t r = 0; r < (wgt_reused ? 0 : n.wgt_loads.size()); ++r) {
                    const WgtLoad& wl = n.wgt_loads[r];
                    const int64_t b = wl.rows * rates.row_beats(wl.entries * wgt_bytes);
                    ld.read(b);
                    tc.beats += b;
                  }
                  if (n.wgt_tiles > 0) {
                    if (!uops_resident) {
                      const int64_t b = rates.row_beats(n.wgt_tiles * khw * uop_bytes);
                      gm.read(b);
                      tc.beats += b;
                    }
                    gm.compute(n.wgt_tiles * khw * h * w + gemm_fill);
                  }
                }
                int64_t& held = const_held[thread];
                if (const_rows > 0 && held != ob0) {
                  held = ob0;
                  const int64_t b = rates.row_beats(obn * const_rows * acc_bytes);
                  tc.pre.read(b);
                  tc.beats += b;
                }
                if (acc_init_tensor &&
                    (init_every_tile || wy.real != wy.total() || wx.real != wx.total())) {
                  const int64_t b = h * rates.row_beats(w * acc_bytes);
                  tc.pre.read(b, 0, obn);
                  tc.beats += obn * b;
                } else {
                  tc.pre.compute(obn * h * w + reset_fill);
                }
                if (alu_ops > 0) tc.post.compute(obn * h * w + alu_fill, alu_ops);
                const int64_t out_beats = h * rates.row_beats(w * out_bytes);
                tc.store.write(out_beats, obn);
                tc.beats += obn * out_beats;
                beats += tc.beats;
                cost = pipe.add();
              }
            }
          }
          if (cost <= limit) {
            cost = pipe.finish();
            // the one DRAM bus moves every beat: fetch bursts, loads and stores
            beats += ceil_div(pipe.insns(), int64_t{isa::timing::kFetchBurstInsns}) *
                     rates.burst_beats();
            cost = std::max(cost, beats + lat);
          }
          cost *= g.nb;
          if (cost <= keep_limit) {
            s.oh_tile = th;
            s.ow_tile = tw;
            s.win_h = win_h;
            auto at = std::upper_bound(kept.begin(), kept.end(), cost,
                                       [](int64_t c, const Kept& k) { return c < k.cost; });
            kept.insert(at, Kept{cost, s});
            if (kept.size() > filter.max_candidates) kept.pop_back();
            // a new cheapest one narrows the band
            const int64_t t = threshold();
            while (kept.size() > 1 && kept.back().cost > t) kept.pop_back();
          }
        }
      }
    }
  }
  if (kept.empty()) {
    // `why` is the reason the last candidate tried, the smallest (every list is descending), was
    // rejected: the constraint that actually fails, not only the sizes below
    throw NoTileFits(fmt::format(
        "layer '{}': no tile fits the scratchpads: the smallest candidate (oc_tile={} ic_chunk={} "
        "oh_tile={} ow_tile={}) fails because {} (capacities per virtual thread: inp {}, wgt {}, acc {}, uop {}, "
        "virtual_threads {}; a micro-op's index fields name inp rows below {}, wgt rows below {}, acc rows below {})",
        layer, ob_cands.back(), icc_cands.back(), th_cands.back(), tw_cands.back(), why, inp_cap, wgt_cap, acc_cap,
        uop_cap, vt, reach.inp, reach.wgt, std::min(reach.acc_dst, reach.acc_src)));
  }
  std::vector<Schedule> out;
  for (Kept& k : kept) {
    Schedule& best = k.s;
    best.virtual_threads = vt;
    best.const_rows = const_rows;
    best.acc_tile_stride = best.oh_tile * best.ow_tile;
    best.prune_cycles = k.cost;
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
    out.push_back(std::move(best));
  }
  return out;
}

}  // namespace tessel::compiler::accel
