#include "compiler/driver/lower_conv_template.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <climits>
#include <optional>

#include "compiler/backend/accel/schedule.h"
#include "compiler/driver/template_search.h"
#include "compiler/topi/accel/schedule.h"
#include "isa/verifier.h"
#include "runtime/qnn.h"

namespace tessel::compiler::driver {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

[[noreturn]] void unsupported(const accel::AccelLayer& layer, const std::string& feature, const std::string& detail) {
  throw TemplateUnsupported(feature,
                            fmt::format("layer '{}': unsupported by the template: {}: {}", layer.name, feature, detail));
}

// ---- feature: groups (grouped and depthwise convolutions) ----

/// The block groups of a layer with G channel groups: the most groups of whole channel blocks
/// (the templates' attrs.groups: output block ob reads the input blocks of its group only) that
/// keep every channel group inside one of them: the largest divisor d of G whose merged groups
/// (G/d channel groups each) hold whole input blocks and whole output blocks, else 1 (one block
/// group, the weights dense with zeros between the channels of different groups). Depthwise 32
/// channels in blocks of 16: d = 2 (two block groups of one block each, diagonal weight tiles).
int64_t block_groups(const accel::ConvGeometry& g) {
  const int64_t icg = g.ic / g.groups, ocg = g.oc / g.groups;
  for (int64_t d = g.groups; d > 1; --d) {
    if (g.groups % d != 0) continue;
    const int64_t k = g.groups / d;  // channel groups per block group
    if ((k * icg) % g.block_in == 0 && (k * ocg) % g.block_out == 0) return d;
  }
  return 1;
}

/// OIHW weights ([OC][IC/groups][KH][KW]) packed for the templates in `gb` block groups
/// (block_groups): [OCB][ICB/gb][KH][KW][BO][BI] row-major, output block ob's input blocks
/// counted from its block group's first; zero in the padding lanes and between the channels of
/// different channel groups. For a dense layer (groups 1, KH = KW = 1) this is the dense
/// template's [OCB][KB][BO][BI].
std::vector<int8_t> pack_weights(const accel::AccelLayer& layer, const accel::ConvGeometry& g, int64_t gb) {
  const int64_t bo = g.block_out, bi = g.block_in;
  const int64_t icg = g.ic / g.groups, ocg = g.oc / g.groups;
  const int64_t icbg = g.icb / gb, ocbg = g.ocb / gb;
  std::vector<int8_t> w(static_cast<size_t>(g.ocb * icbg * g.kh * g.kw * bo * bi), 0);
  for (int64_t o = 0; o < g.oc; ++o) {
    const int64_t first_block = (o / bo) / ocbg * icbg;  // the block group's first input block
    for (int64_t cg = 0; cg < icg; ++cg) {
      const int64_t c = (o / ocg) * icg + cg;  // the input channel
      const int64_t cb = c / bi - first_block;
      TESSEL_CHECK(cb >= 0 && cb < icbg, "layer '{}': channel {} of output {} outside its block group", layer.name, c,
                   o);
      for (int64_t ky = 0; ky < g.kh; ++ky) {
        for (int64_t kx = 0; kx < g.kw; ++kx) {
          const int64_t dst = ((((o / bo) * icbg + cb) * g.kh + ky) * g.kw + kx) * bo * bi + (o % bo) * bi + c % bi;
          w[static_cast<size_t>(dst)] = layer.weights[static_cast<size_t>(((o * icg + cg) * g.kh + ky) * g.kw + kx)];
        }
      }
    }
  }
  return w;
}

// ---- feature: the requantisation ----

/// The chain of runtime/qnn.h resolved per channel (runtime::requant_channel), as
/// topi::RequantParams (the bias and the input zero point are the template's: topi::accel::
/// Conv2dLayer::bias, x_zero_point): one entry per field when
/// every channel's chain is the same, else `lanes` entries (OCB * BO: the padding lanes repeat
/// channel 0's chain; their outputs are never read).
topi::RequantParams requant_params(const accel::AccelLayer& layer, int64_t lanes,
                                   bool* per_channel) {
  const runtime::QConv2dParams& p = layer.params;
  std::vector<runtime::RequantChannel> ch;
  for (int64_t o = 0; o < p.oc; ++o) {
    runtime::RequantChannel c = runtime::requant_channel(p.rq, static_cast<size_t>(o));
    ch.push_back(c);
  }
  auto same = [](const runtime::RequantChannel& a, const runtime::RequantChannel& b) {
    if (a.acc_offset != b.acc_offset || a.acc_min != b.acc_min || a.acc_max != b.acc_max ||
        a.multiplier != b.multiplier || a.round != b.round || a.shift != b.shift || a.out_add != b.out_add ||
        a.n_low != b.n_low) {
      return false;
    }
    for (int32_t j = 0; j < a.n_low; ++j) {
      if (a.low[j].multiplier != b.low[j].multiplier || a.low[j].round != b.low[j].round ||
          a.low[j].shift != b.low[j].shift) {
        return false;
      }
    }
    return true;
  };
  bool uniform = true;
  for (const runtime::RequantChannel& c : ch) uniform = uniform && same(c, ch.front());
  *per_channel = !uniform;
  const int64_t n = uniform ? 1 : lanes;
  // a padding lane repeats channel 0's chain: any chain would do (its outputs are not read),
  // and a real one keeps topi::requantize's clip elision (the identity chain, unclamped, would
  // need both clips)
  auto at = [&](int64_t o) -> const runtime::RequantChannel& { return ch[static_cast<size_t>(o < p.oc ? o : 0)]; };
  topi::RequantParams r;
  r.acc_offset.clear();
  r.acc_min.clear();
  r.acc_max.clear();
  r.multiplier.clear();
  r.round.clear();
  r.shift.clear();
  r.out_add.clear();
  const int32_t n_low = ch.front().n_low;
  r.low.resize(static_cast<size_t>(n_low));
  for (int64_t o = 0; o < n; ++o) {
    const runtime::RequantChannel& c = at(o);
    r.acc_offset.push_back(c.acc_offset);
    r.acc_min.push_back(c.acc_min);
    r.acc_max.push_back(c.acc_max);
    r.multiplier.push_back(c.multiplier);
    r.round.push_back(c.round);
    r.shift.push_back(c.shift);
    r.out_add.push_back(c.out_add);
    for (int32_t j = 0; j < n_low; ++j) {
      // a channel with fewer limbs adds nothing in the others: multiplier 0, round 0, shift 0
      const runtime::RequantLimb l = j < c.n_low ? c.low[j] : runtime::RequantLimb{};
      r.low[static_cast<size_t>(j)].multiplier.push_back(l.multiplier);
      r.low[static_cast<size_t>(j)].round.push_back(l.round);
      r.low[static_cast<size_t>(j)].shift.push_back(l.shift);
    }
  }
  r.clip_lo = ch.front().clip_lo;
  r.clip_hi = ch.front().clip_hi;
  return r;
}

// ---- the templates' fit checks and the fast model ----

/// The fast model's view of one point (see lower_conv_template.h).
struct FastModel {
  accel::ConvGeometry g;
  isa::HwConfig cfg;
  bool dense = false;
  const topi::accel::Conv2dLayer* conv = nullptr;  ///< the template's layer (conv2d)
  const topi::accel::DenseLayer* fc = nullptr;     ///< the template's layer (dense)
  topi::accel::AccBuffers bufs;                     ///< the chain's acc buffers (every point)
  int64_t alu_steps = 0;                            ///< ALU instructions per tile

  /// The template's own fit check (topi::accel::*_tile_rows), so the model never ranks first a
  /// point the template then refuses.
  bool fits(const te::ConfigEntity& pt) const {
    const topi::accel::TileRows r =
        dense ? topi::accel::dense_tile_rows(*fc, bufs, pt) : topi::accel::conv2d_tile_rows(*conv, bufs, pt);
    return r.inp <= cfg.inp_depth() && r.wgt <= cfg.wgt_depth() && r.acc <= cfg.acc_depth();
  }

  /// Bus beats of `bytes` (a fractional byte count: an average over tiles), rounded up.
  double beats(double bytes) const { return std::ceil(bytes / static_cast<double>(cfg.bus_bytes())); }

  /// The point's cycles as a pipeline of the three modules over its tiles, in the order
  /// inject_virtual_threads interleaves them (tile j of every thread, then tile j + 1), a tile
  /// being its chunks (LOAD of the window and, with several chunks or at a new output-channel
  /// tile, the weights; then the chunk's GEMMs) and its epilogue (the ALU steps, then the
  /// STOREs). Each thread has its own buffers: a thread's next LOAD waits for its previous
  /// chunk's GEMMs, its next tile's GEMMs for its previous STORE. Every DMA instruction costs
  /// DRAM_LATENCY plus its beats (docs/microarchitecture.md section 2); the shared data bus
  /// bounds the total from below by all beats.
  std::optional<double> operator()(const te::ConfigEntity& pt) const {
    const int64_t tile_oc = pt.split("tile_oc")[1], tile_ic = pt.split("tile_ic")[1];
    const int64_t oc_outer = pt.split("tile_oc")[0], chunks = pt.split("tile_ic")[0];
    const int64_t h_nthread = dense ? 1 : pt.knob("h_nthread");
    const int64_t nthread = pt.knob("oc_nthread") * h_nthread;
    if (!topi::accel::threads_divide(pt, g.ocb, dense ? 0 : g.oh) || !fits(pt)) return std::nullopt;
    const double lat = static_cast<double>(cfg.dram_latency);
    const double ie = static_cast<double>(cfg.inp_elem_bytes()), we = static_cast<double>(cfg.wgt_elem_bytes());
    const double oe = static_cast<double>(cfg.out_elem_bytes()), ae = static_cast<double>(cfg.acc_elem_bytes());
    // per chunk: LOAD beats and instructions of the window and of the weights, GEMM cycles;
    // per tile: the reset, the ALU steps and constant rows, the STORE beats and instructions
    double inp_beats = 0, inp_insns = 0, wgt_beats = 0, wgt_insns = 0, gemm = 0, epilogue = 0;
    double store_beats = 0, store_insns = 0;
    int64_t tiles = 0, spatial = 1;  // tiles in all; spatial tiles per output-channel tile
    if (dense) {
      tiles = oc_outer;
      // averages over the tiles, as conv2d's below
      const double toc = static_cast<double>(g.ocb) / static_cast<double>(oc_outer);
      const double tic = static_cast<double>(g.icb) / static_cast<double>(chunks);
      inp_beats = static_cast<double>(g.nb) * beats(tic * ie);
      inp_insns = 1;
      wgt_beats = toc * beats(tic * we);
      wgt_insns = toc;
      gemm = static_cast<double>(g.nb) * toc * tic + 4 * toc;
      const double elems = static_cast<double>(g.nb) * toc;
      epilogue = elems + 4 + static_cast<double>(alu_steps) * (elems + 4);
      store_beats = static_cast<double>(g.nb) * beats(toc * oe);
      store_insns = 1;
    } else {
      const int64_t tile_h = pt.split("tile_h")[1], tile_w = pt.split("tile_w")[1];
      const int64_t ho = pt.split("tile_h")[0], wo = pt.split("tile_w")[0];
      spatial = ho * wo / h_nthread;
      tiles = g.nb * oc_outer * ho * wo;
      // A split that does not divide (SplitPolicy::kBalanced) has a smaller last tile: the
      // sizes below are the averages over the tiles (the GEMM work exact in total). A narrower
      // last window than the buffer's (its rows further apart than the run copied) is one LOAD
      // per row, and its tile's STOREs one per row (accel_tir inject_dma_copy).
      const double th = static_cast<double>(g.oh) / static_cast<double>(ho);
      const double tw = static_cast<double>(g.ow) / static_cast<double>(wo);
      const double toc = static_cast<double>(g.ocb) / static_cast<double>(oc_outer);
      const double tic = static_cast<double>(topi::const_shape(conv->w)[1]) / static_cast<double>(chunks);
      const int64_t tail_w = g.ow - (wo - 1) * tile_w;
      const double narrow = tail_w < tile_w ? 1.0 / static_cast<double>(wo) : 0.0;  // of the tiles
      const double win_h = (th - 1) * static_cast<double>(g.sh) + static_cast<double>(g.kh);
      const double win_w = (tw - 1) * static_cast<double>(g.sw) + static_cast<double>(g.kw);
      const double rows = std::min(win_h, static_cast<double>(g.ih)), cols = std::min(win_w, static_cast<double>(g.iw));
      // the window's channel blocks (more than tile_ic when a tile spans several groups)
      const double win_blocks = static_cast<double>(topi::accel::conv2d_window_blocks(*conv, tile_oc, tile_ic)) *
                                tic / static_cast<double>(tile_ic);
      inp_beats = win_blocks * rows * beats(cols * ie);
      inp_insns = win_blocks * ((1 - narrow) + narrow * rows);
      wgt_beats = toc * beats(tic * static_cast<double>(g.kh * g.kw) * we);
      wgt_insns = toc;
      const double elems = toc * th * tw;
      gemm = elems * tic * static_cast<double>(g.kh * g.kw) + 4 * toc * tic * static_cast<double>(g.kh);
      epilogue = elems + 4 + static_cast<double>(alu_steps) * (elems + 4);
      if (bufs.element > 0) {
        // the zero-point border's LOAD ACC, in the tiles whose windows reach into the padding
        // only (topi::accel::guard_zero_constant_tiles): on average over the tiles
        const int64_t interior = topi::accel::conv2d_interior_tiles(*conv, tile_h, tile_w);
        const double frac = static_cast<double>(ho * wo - interior) / static_cast<double>(ho * wo);
        // a border tile loads it straight into the accumulator in place of the reset
        // (topi::accel::init_accumulator_from_constants)
        epilogue += frac * (lat + beats(elems * ae) - (elems + 4));
      }
      store_beats = toc * th * beats(tw * oe);
      store_insns = toc * ((1 - narrow) + narrow * th);
    }
    // the per-channel constants' LOAD ACC (compute module): once at the start (const_root) or
    // per output-channel tile and thread, spread over that tile's spatial tiles
    double cp0 = 0;
    if (bufs.channel > 0) {
      const double rows = static_cast<double>(bufs.channel) *
                          (topi::accel::const_root(pt) ? static_cast<double>(g.ocb)
                                                       : static_cast<double>(g.ocb) / static_cast<double>(oc_outer));
      const double load = lat + beats(rows * ae);
      if (topi::accel::const_root(pt)) {
        cp0 = load;
      } else {
        epilogue += load / static_cast<double>(spatial);
      }
    }
    const int64_t per_thread = tiles / nthread;
    std::vector<double> buf_free(static_cast<size_t>(nthread), 0), acc_free(static_cast<size_t>(nthread), 0);
    double ld = 0, cp = cp0, st = 0;
    std::vector<double> loaded(buf_free.size(), 0);
    for (int64_t j = 0; j < per_thread; ++j) {
      const bool weights = chunks > 1 || j % spatial == 0;
      for (int64_t k = 0; k < chunks; ++k) {
        // the threads' loads of chunk k, then their GEMMs (a loop inside the threads is shared,
        // its body interleaved)
        for (size_t t = 0; t < buf_free.size(); ++t) {
          ld = std::max(ld, buf_free[t]) + inp_insns * lat + inp_beats + (weights ? wgt_insns * lat + wgt_beats : 0);
          loaded[t] = ld;
        }
        for (size_t t = 0; t < buf_free.size(); ++t) {
          cp = std::max(cp, loaded[t]);
          if (k == 0) cp = std::max(cp, acc_free[t]);
          cp += gemm;
          buf_free[t] = cp;
        }
      }
      for (size_t t = 0; t < buf_free.size(); ++t) {
        cp += epilogue;
        st = std::max(st, cp) + store_insns * lat + store_beats;
        acc_free[t] = st;
      }
    }
    // every beat crosses the one data bus
    const double weights_loads = static_cast<double>(chunks > 1 ? tiles * chunks : tiles / spatial);
    const double bus = static_cast<double>(tiles * chunks) * inp_beats + weights_loads * wgt_beats +
                       static_cast<double>(tiles) * store_beats;
    return std::max(st, bus + lat);
  }
};

}  // namespace

bool is_dense_layer(const accel::AccelLayer& layer) {
  const runtime::QConv2dParams& p = layer.params;
  return p.ih == 1 && p.iw == 1 && p.kh == 1 && p.kw == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 &&
         p.pad_left == 0 && p.pad_bottom == 0 && p.pad_right == 0;
}

accel::LoweredLayer lower_conv2d_template(const accel::AccelLayer& layer, const isa::HwConfig& cfg,
                                          const ConvTemplateOptions& opts) {
  cfg.validate();
  if (opts.max_candidates < 1) throw_user_error("layer '{}': max_candidates must be at least 1, got 0", layer.name);
  const runtime::QConv2dParams& p = layer.params;
  const accel::ConvGeometry g = accel::make_geometry(layer.name, p, cfg);
  const size_t want_w = static_cast<size_t>(g.oc * (g.ic / g.groups) * g.kh * g.kw);
  if (layer.weights.size() != want_w) {
    throw_user_error("layer '{}': weights hold {} values, expected oc*ic/groups*kh*kw = {}", layer.name,
                     layer.weights.size(), want_w);
  }
  if (!layer.bias.empty() && layer.bias.size() != static_cast<size_t>(g.oc)) {
    throw_user_error("layer '{}': bias holds {} values, expected oc = {} (or none)", layer.name, layer.bias.size(),
                     g.oc);
  }
  const auto t_schedule = Clock::now();
  // ---- conversion, one step per feature ----
  // The requantisation chain per channel (constant ACC rows where it differs between channels or
  // a value is wider than the ALU's immediate); the bias and the input zero point's correction
  // (per channel, and at the padding per output position) are the template's to fold.
  bool per_channel = false;
  const int64_t lanes = g.ocb * g.block_out;
  const topi::RequantParams rq = requant_params(layer, lanes, &per_channel);
  const int64_t gb = block_groups(g);
  const std::vector<int8_t> wpacked = pack_weights(layer, g, gb);
  std::vector<int32_t> bias(static_cast<size_t>(lanes), 0);
  std::copy(layer.bias.begin(), layer.bias.end(), bias.begin());

  // ---- the template's operator ----
  const bool dense = is_dense_layer(layer) && p.groups == 1;  // a grouped 1x1 on 1x1 goes through conv2d
  const int64_t B = cfg.batch(), BI = cfg.block_in(), BO = cfg.block_out();
  auto shape = [](std::initializer_list<int64_t> v) {
    std::vector<tir::Expr> s;
    for (int64_t d : v) s.emplace_back(d);
    return s;
  };
  topi::accel::Conv2dLayer conv;
  topi::accel::DenseLayer fc;
  te::ConfigSpace space;
  if (dense) {
    fc.x = te::placeholder(shape({g.nb, g.icb, B, BI}), tir::DataType::int8(), "x");
    fc.w = te::placeholder(shape({g.ocb, g.icb, BO, BI}), tir::DataType::int8(), "w");
    fc.rq = rq;
    fc.bias = bias;
    fc.x_zero_point = p.in_zero_point;
    if (p.in_zero_point != 0) fc.w_values = wpacked;
    topi::accel::dense_config_space(fc, space);
  } else {
    conv.x = te::placeholder(shape({g.nb, g.icb, g.ih, g.iw, B, BI}), tir::DataType::int8(), "x");
    conv.w = te::placeholder(shape({g.ocb, g.icb / gb, g.kh, g.kw, BO, BI}), tir::DataType::int8(), "w");
    conv.attrs.stride_h = g.sh;
    conv.attrs.stride_w = g.sw;
    conv.attrs.pad_top = g.pt;
    conv.attrs.pad_left = g.pl;
    conv.attrs.pad_bottom = g.pb;
    conv.attrs.pad_right = g.pr;
    conv.attrs.groups = gb;
    conv.rq = rq;
    conv.bias = bias;
    conv.x_zero_point = p.in_zero_point;
    if (p.in_zero_point != 0) conv.w_values = wpacked;
    topi::accel::conv2d_config_space(conv, space);
  }
  const std::string what = fmt::format("layer '{}'", layer.name);
  TemplateBuilder builder;
  builder.schedule = [&](const te::ConfigEntity& pt) {
    return dense ? topi::accel::schedule_dense(fc, cfg, pt) : topi::accel::schedule_conv2d(conv, cfg, pt);
  };
  builder.segments = [&](const topi::accel::ScheduledOp& op) {
    std::vector<accel_tir::SegmentSpec> segs = {
        {"x", "inp", isa::SegmentKind::kInput, 0, isa::MemType::kInp},
        {op.out.name(), "out", isa::SegmentKind::kOutput, 0, isa::MemType::kOut},
        {"w", "wgt", isa::SegmentKind::kConst, 0, isa::MemType::kWgt},
    };
    uint64_t off = 0;
    for (const topi::ChannelConstant& c : op.constants) {
      segs.push_back({c.tensor.name(), "acc_const", isa::SegmentKind::kConst, off, isa::MemType::kAcc});
      off += ceil_div(static_cast<int64_t>(c.values.size() * 4), cfg.acc_elem_bytes()) * cfg.acc_elem_bytes();
    }
    return segs;
  };
  builder.fill = [&](const topi::accel::ScheduledOp& op, isa::Program& prog) {
    const isa::Segment& sw = prog.segment("wgt");
    TESSEL_CHECK(sw.size_bytes >= wpacked.size(), "layer '{}': wgt segment of {} bytes for {} bytes of packed weights",
                 layer.name, sw.size_bytes, wpacked.size());
    std::copy(wpacked.begin(), wpacked.end(), prog.image.begin() + static_cast<std::ptrdiff_t>(sw.offset_bytes));
    if (op.constants.empty()) return;
    uint64_t off = prog.segment("acc_const").offset_bytes;
    for (const topi::ChannelConstant& c : op.constants) {
      for (size_t i = 0; i < c.values.size(); ++i) {
        const uint32_t u = static_cast<uint32_t>(c.values[i]);
        for (int byte = 0; byte < 4; ++byte) prog.image[off + i * 4 + byte] = static_cast<uint8_t>(u >> (8 * byte));
      }
      off += ceil_div(static_cast<int64_t>(c.values.size() * 4), cfg.acc_elem_bytes()) * cfg.acc_elem_bytes();
    }
  };
  FastModel model;
  model.g = g;
  model.cfg = cfg;
  model.dense = dense;
  model.conv = &conv;
  model.fc = &fc;
  model.bufs = dense ? topi::accel::dense_acc_buffers(fc) : topi::accel::conv2d_acc_buffers(conv);
  {
    // the ALU steps of the chain (the same for every point)
    const te::Tensor acc = dense ? topi::dense_packed(fc.x, fc.w, "dense") : topi::conv2d_nchwnc(conv.x, conv.w, conv.attrs, "conv2d");
    model.alu_steps = static_cast<int64_t>(topi::requantize(acc, rq, true, "requant").steps.size());
  }
  TemplateSearchOptions so;
  so.fast_cost = model;
  so.max_candidates = opts.max_candidates;
  so.pass_errors_are_bugs = false;
  TemplateSearchFailure failure;
  std::optional<TemplateChoice> best;
  try {
    best = search_template(what, layer.name, space, cfg, builder, so, opts.dump_ir_after, &failure);
  } catch (const TemplateRefusal& e) {
    unsupported(layer, "template refusal", e.what());
  }
  if (!best) {
    throw_user_error("layer '{}' cannot be lowered through the {} template: none of its {} points ({} fit the "
                     "scratchpads, {} built) fits and runs{}",
                     layer.name, dense ? "dense" : "conv2d", failure.points, failure.screened, failure.built,
                     failure.first_reason.empty() ? std::string() : fmt::format(" ({})", failure.first_reason));
  }
  accel::LoweredLayer out;
  out.pass_ms.emplace_back("schedule", ms_since(t_schedule));
  for (const auto& [pass, ms] : best->report.pass_ms) out.pass_ms.emplace_back(pass, ms);
  const auto t_verify = Clock::now();
  isa::verify(best->program);
  out.pass_ms.emplace_back("verify", ms_since(t_verify));
  out.ir_dump = best->ir_dump;
  out.est_cycles = static_cast<int64_t>(best->cycles);
  out.macs = p.macs();
  out.ideal_gemm_uops = g.nb * g.ocb * ceil_div(g.ic / g.groups, g.block_in) * g.kh * g.kw * g.oh * g.ow;
  out.schedule = fmt::format("{} template {} ({} points, {} fit, {} built)", dense ? "dense" : "conv2d",
                             describe_point(space, best->point), best->points, best->screened, best->built);
  out.zero_point_init = accel::ZeroPointInit::kBorderTiles;
  out.program = std::move(best->program);
  return out;
}

}  // namespace tessel::compiler::driver
