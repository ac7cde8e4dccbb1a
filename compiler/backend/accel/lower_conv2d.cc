#include "compiler/backend/accel/lower_conv2d.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <optional>

#include "compiler/backend/accel/loop_ir.h"
#include "compiler/backend/accel/passes.h"
#include "compiler/backend/accel/schedule.h"
#include "compiler/backend/accel/stream_cost.h"
#include "isa/spec.h"
#include "isa/verifier.h"
#include "support/error.h"

namespace tessel::compiler::accel {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

void put_i32(std::vector<uint8_t>& image, uint64_t byte, int32_t v) {
  const uint32_t u = static_cast<uint32_t>(v);
  for (int i = 0; i < 4; ++i) image[byte + i] = static_cast<uint8_t>(u >> (8 * i));
}

/// Packs the weights per VTA: for each oc block its structurally non-zero input blocks, each as
/// [KH][KW] WGT elements of [BLOCK_OUT][BLOCK_IN] int8 (zero outside OC, IC and the group).
void pack_weights(const AccelLayer& layer, const ConvGeometry& g, const isa::HwConfig& cfg,
                  uint8_t* dst, std::vector<int64_t>& offsets) {
  const int64_t icg = g.ic / g.groups, ocg = g.oc / g.groups;
  const int64_t bo = g.block_out, bi = g.block_in;
  const int64_t elem = cfg.wgt_elem_bytes();
  int64_t e = 0;
  for (int64_t ob = 0; ob < g.ocb; ++ob) {
    offsets.push_back(e);
    for (int64_t icb = g.nz[ob].first; icb < g.nz[ob].second; ++icb) {
      for (int64_t ky = 0; ky < g.kh; ++ky) {
        for (int64_t kx = 0; kx < g.kw; ++kx, ++e) {
          int8_t* w = reinterpret_cast<int8_t*>(dst + e * elem);
          for (int64_t o = 0; o < bo; ++o) {
            const int64_t oo = ob * bo + o;
            if (oo >= g.oc) continue;
            const int64_t grp = oo / ocg;
            for (int64_t c = 0; c < bi; ++c) {
              const int64_t cc = icb * bi + c;
              if (cc >= g.ic || cc / icg != grp) continue;
              const int64_t cl = cc - grp * icg;
              w[o * bi + c] =
                  layer.weights[static_cast<size_t>(((oo * icg + cl) * g.kh + ky) * g.kw + kx)];
            }
          }
        }
      }
    }
  }
}

}  // namespace

LoweredLayer lower_conv2d(const AccelLayer& layer, const isa::HwConfig& cfg,
                          const LowerOptions& opts) {
  cfg.validate();
  const runtime::QConv2dParams& p = layer.params;
  const ConvGeometry g = make_geometry(layer.name, p, cfg);
  const size_t want_w = static_cast<size_t>(g.oc * (g.ic / g.groups) * g.kh * g.kw);
  if (layer.weights.size() != want_w) {
    throw_user_error("layer '{}': weights hold {} values, expected oc*ic/groups*kh*kw = {}",
                     layer.name, layer.weights.size(), want_w);
  }
  if (!layer.bias.empty() && layer.bias.size() != static_cast<size_t>(g.oc)) {
    throw_user_error("layer '{}': bias holds {} values, expected oc = {} (or none)", layer.name,
                     layer.bias.size(), g.oc);
  }
  const std::vector<int32_t> bias =
      layer.bias.empty() ? std::vector<int32_t>(static_cast<size_t>(g.oc), 0) : layer.bias;
  // per output channel: the wrapping int32 sum of its weights over every tap (zero-point
  // correction of windows inside the input, plan.h)
  std::vector<int32_t> weight_sums(static_cast<size_t>(g.oc), 0);
  const int64_t taps = (g.ic / g.groups) * g.kh * g.kw;
  for (int64_t o = 0; o < g.oc; ++o) {
    for (int64_t k = 0; k < taps; ++k) {
      weight_sums[static_cast<size_t>(o)] = runtime::wrap_add(
          weight_sums[static_cast<size_t>(o)], layer.weights[static_cast<size_t>(o * taps + k)]);
    }
  }
  using Clock = std::chrono::steady_clock;
  auto elapsed_ms = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  bool known =
      opts.dump_ir_after.empty() || opts.dump_ir_after == "all" || opts.dump_ir_after == "schedule";
  for (const Pass& pass : pass_pipeline()) known = known || opts.dump_ir_after == pass.name;
  if (!known) {
    std::string names = "schedule";
    for (const Pass& pass : pass_pipeline()) names += fmt::format(", {}", pass.name);
    throw_user_error("unknown pass '{}' for dump_ir_after (passes: {}, all)", opts.dump_ir_after,
                     names);
  }
  const Clock::time_point t_schedule = Clock::now();

  // ---- candidate plans and schedules: the pruning model's few best of each plan ----
  struct PlanCandidates {
    LayerPlan plan;
    std::vector<Schedule> scheds;
  };
  std::vector<PlanCandidates> plans;
  auto schedule_for = [&](const LayerPlan& plan) {
    const int64_t alu_ops =
        static_cast<int64_t>(plan.requant.size()) + (plan.bias_row >= 0 ? 1 : 0);
    return schedule_candidates(layer.name, g, cfg, opts.knobs,
                               static_cast<int64_t>(plan.const_rows.size()), alu_ops,
                               plan.acc_init_tensor, plan.init_every_tile, plan.scratch_regions,
                               opts.candidates);
  };
  LayerPlan border = make_plan(layer.name, p, bias, weight_sums, layer_touches_padding(g));
  if (!border.acc_init_tensor) {
    std::vector<Schedule> sc = schedule_for(border);
    plans.push_back({std::move(border), std::move(sc)});
  } else {
    // windows touch the padding: the border-tile init tensor + bias row, or the whole addend
    // from an init tensor loaded by every tile; the stream cost model picks among the candidates
    // of both (ties: the border plan, which moves fewer DRAM bytes). A plan whose tiles fit
    // nowhere has no candidates.
    LayerPlan every = make_plan(layer.name, p, bias, weight_sums, true, true);
    std::exception_ptr border_error;
    if (opts.zero_point_init != ZeroPointInit::kEveryTile) {
      try {
        std::vector<Schedule> sc = schedule_for(border);
        plans.push_back({std::move(border), std::move(sc)});
      } catch (const UserError&) {
        if (opts.zero_point_init == ZeroPointInit::kBorderTiles) throw;
        border_error = std::current_exception();
      }
    }
    if (opts.zero_point_init != ZeroPointInit::kBorderTiles) {
      try {
        std::vector<Schedule> sc = schedule_for(every);
        plans.push_back({std::move(every), std::move(sc)});
      } catch (const UserError&) {
        if (plans.empty()) {
          if (border_error) std::rethrow_exception(border_error);
          throw;
        }
      }
    }
  }

  // ---- per plan: the Program image's segments (sizes and bases; filled for the chosen one) ----
  // Segments: inp, out, wgt, constants, acc init, then uop (added last, after the passes). The
  // bases depend on the plan only, so every candidate of a plan is lowered against its final
  // addresses and the stream cost model times the stream that is emitted.
  auto layout = [&](const LayerPlan& plan, LoweringContext& c) {
    isa::Program prog;
    prog.config = cfg;
    prog.name = layer.name;
    auto elem_base = [&](size_t seg, isa::MemType t) {
      return prog.segments[seg].offset_bytes / isa::dram_elem_bytes(cfg, t);
    };
    const size_t s_inp = prog.add_segment("inp", isa::SegmentKind::kInput,
                                          static_cast<uint64_t>(g.nb * g.icb * g.ih * g.iw) *
                                              static_cast<uint64_t>(cfg.inp_elem_bytes()));
    const size_t s_out = prog.add_segment("out", isa::SegmentKind::kOutput,
                                          static_cast<uint64_t>(g.nb * g.ocb * g.oh * g.ow) *
                                              static_cast<uint64_t>(cfg.out_elem_bytes()));
    const size_t s_wgt =
        prog.add_segment("wgt", isa::SegmentKind::kConst,
                         static_cast<uint64_t>(g.nnz_tiles * g.kh * g.kw) * cfg.wgt_elem_bytes());
    c.inp_base = elem_base(s_inp, isa::MemType::kInp);
    c.out_base = elem_base(s_out, isa::MemType::kOut);
    c.wgt_base = elem_base(s_wgt, isa::MemType::kWgt);
    c.wgt_offset = g.wgt_offset;  // pack_weights' offsets (checked when the weights are packed)
    const int64_t n_rows = static_cast<int64_t>(plan.const_rows.size());
    if (n_rows > 0) {
      const size_t s_c = prog.add_segment(
          "acc_const", isa::SegmentKind::kConst,
          static_cast<uint64_t>(g.ocb * n_rows) * static_cast<uint64_t>(cfg.acc_elem_bytes()));
      c.const_base = elem_base(s_c, isa::MemType::kAcc);
    }
    if (plan.acc_init_tensor) {
      const size_t s_i = prog.add_segment(
          "acc_init", isa::SegmentKind::kConst,
          static_cast<uint64_t>(g.ocb * g.oh * g.ow) * static_cast<uint64_t>(cfg.acc_elem_bytes()));
      c.init_base = elem_base(s_i, isa::MemType::kAcc);
    }
    // the uop segment goes last, so its base is the current end of the image
    c.uop_base = prog.image.size() / isa::dram_elem_bytes(cfg, isa::MemType::kUop);
    return prog;
  };

  // ---- every candidate through the passes; the stream cost model picks ----
  struct Lowered {
    size_t plan = 0;
    LoweringContext ctx;
    std::vector<isa::Instruction> insns;
    int64_t cycles = -1;  ///< estimate_cycles of the stream; -1: it cannot be timed (deadlock)
    std::string ir_dump;
    std::vector<std::pair<std::string, double>> pass_ms;
  };
  std::optional<Lowered> best;
  std::vector<isa::Program> images;
  for (size_t pi = 0; pi < plans.size(); ++pi) {
    LoweringContext base;
    base.layer = layer.name;
    base.cfg = cfg;
    base.geom = g;
    base.plan = plans[pi].plan;
    images.push_back(layout(base.plan, base));
    for (Schedule& sched : plans[pi].scheds) {
      Lowered cand;
      cand.plan = pi;
      cand.ctx = base;
      cand.ctx.sched = std::move(sched);
      auto dump = [&](const char* name, const Stmt& root) {
        if (opts.dump_ir_after == "all" || opts.dump_ir_after == name) {
          cand.ir_dump += fmt::format("// ---- IR after {} ----\n", name);
          cand.ir_dump += print_ir(root, cand.ctx.kernels);
        }
      };
      Stmt root = build_initial_ir(cand.ctx);
      dump("schedule", root);
      for (const Pass& pass : pass_pipeline()) {
        const Clock::time_point t0 = Clock::now();
        pass.run(root, cand.ctx);
        cand.pass_ms.emplace_back(pass.name, elapsed_ms(t0));
        dump(pass.name, root);
      }
      for_each_insn(root, [&](const Stmt& st) { cand.insns.push_back(st.insn); });
      // image-relative DRAM addresses and the stream at 0: the runtime's kImageAlign placement
      // gives the same cycles (stream_cost.h). A stream that deadlocks under cfg's queue depths
      // cannot be timed; it is chosen only when no candidate can be.
      try {
        cand.cycles = static_cast<int64_t>(estimate_cycles(cfg, cand.insns));
      } catch (const UserError&) {
        cand.cycles = -1;
      }
      // fewest stream cycles; ties (and untimed streams: the lowest pruning-model cost) to the
      // earlier candidate (border plan first, then the pruning model's order)
      bool better = !best;
      if (best) {
        if (cand.cycles >= 0 && best->cycles >= 0) {
          better = cand.cycles < best->cycles;
        } else if (cand.cycles >= 0 || best->cycles >= 0) {
          better = cand.cycles >= 0;
        } else {
          better = cand.ctx.sched.prune_cycles < best->ctx.sched.prune_cycles;
        }
      }
      if (better) best = std::move(cand);
    }
  }
  TESSEL_CHECK(best.has_value(), "layer '{}': no schedule candidate", layer.name);
  LoweringContext& ctx = best->ctx;
  isa::Program prog = std::move(images[best->plan]);
  const double schedule_ms = elapsed_ms(t_schedule);

  // ---- the chosen plan's image: weights, constant rows, init tensor ----
  std::vector<int64_t> packed_offsets;
  pack_weights(layer, g, cfg, prog.image.data() + prog.segment("wgt").offset_bytes, packed_offsets);
  TESSEL_CHECK(packed_offsets == g.wgt_offset, "layer '{}': packed weight offsets differ from the geometry's",
               layer.name);
  const int64_t lanes = g.batch * g.block_out;
  const int64_t n_rows = static_cast<int64_t>(ctx.plan.const_rows.size());
  if (n_rows > 0) {
    const uint64_t off = prog.segment("acc_const").offset_bytes;
    for (int64_t ob = 0; ob < g.ocb; ++ob) {
      for (int64_t r = 0; r < n_rows; ++r) {
        for (int64_t l = 0; l < lanes; ++l) {
          const int64_t o = ob * g.block_out + l % g.block_out;
          const int32_t v = o < g.oc ? ctx.plan.const_rows[r][static_cast<size_t>(o)] : 0;
          put_i32(prog.image, off + static_cast<uint64_t>(((ob * n_rows + r) * lanes + l) * 4), v);
        }
      }
    }
  }
  if (ctx.plan.acc_init_tensor) {
    // init[o,y,x] = in_zero_point * (sum of w over the taps of (y,x) in the padding): the
    // correction -in_zero_point * (sum over the taps inside the input) less its constant part
    // -in_zero_point * sum(w[o]), which is in the bias row (plan.h); 0 away from the borders.
    // With init_every_tile: plan.bias[o] - in_zero_point * (sum over the taps inside), the
    // whole addend (there is no bias row).
    const uint64_t off = prog.segment("acc_init").offset_bytes;
    const int64_t icg = g.ic / g.groups;
    for (int64_t o = 0; o < g.oc; ++o) {
      for (int64_t y = 0; y < g.oh; ++y) {
        for (int64_t x = 0; x < g.ow; ++x) {
          int32_t wsum = 0;  // over the taps in the padding
          int32_t wsum_in = 0;  // over the taps inside the input
          for (int64_t c = 0; c < icg; ++c) {
            for (int64_t ky = 0; ky < g.kh; ++ky) {
              const int64_t iy = y * g.sh - g.pt + ky;
              const bool row_in = iy >= 0 && iy < g.ih;
              for (int64_t kx = 0; kx < g.kw; ++kx) {
                const int64_t ix = x * g.sw - g.pl + kx;
                int32_t& sum = row_in && ix >= 0 && ix < g.iw ? wsum_in : wsum;
                sum = runtime::wrap_add(
                    sum,
                    layer.weights[static_cast<size_t>(((o * icg + c) * g.kh + ky) * g.kw + kx)]);
              }
            }
          }
          const int32_t v =
              ctx.plan.init_every_tile
                  ? runtime::wrap_add(ctx.plan.bias[static_cast<size_t>(o)],
                                      runtime::wrap_mul(-p.in_zero_point, wsum_in))
                  : runtime::wrap_mul(p.in_zero_point, wsum);
          const int64_t ob = o / g.block_out, lane = o % g.block_out;
          for (int64_t b = 0; b < g.batch; ++b) {
            const int64_t elem = (ob * g.oh + y) * g.ow + x;
            put_i32(prog.image,
                    off + static_cast<uint64_t>((elem * lanes + b * g.block_out + lane) * 4), v);
          }
        }
      }
    }
  }
  LoweredLayer out;
  // "schedule": the candidate search, and the passes and stream estimates of the candidates not
  // chosen; the chosen one's passes are timed under their own names
  double chosen_ms = 0;
  for (const auto& pm : best->pass_ms) chosen_ms += pm.second;
  out.pass_ms.emplace_back("schedule", schedule_ms - chosen_ms);
  for (auto& pm : best->pass_ms) out.pass_ms.push_back(std::move(pm));
  out.ir_dump = std::move(best->ir_dump);

  // ---- micro-ops and instructions ----
  const isa::IsaSpec spec(cfg);
  const size_t s_uop =
      prog.add_segment("uop", isa::SegmentKind::kConst,
                       ctx.uop_table.size() * static_cast<uint64_t>(cfg.uop_elem_bytes()));
  TESSEL_CHECK(prog.segments[s_uop].offset_bytes / 4 == ctx.uop_base,
               "uop segment at byte {} but micro-op base {}", prog.segments[s_uop].offset_bytes,
               ctx.uop_base);
  for (size_t i = 0; i < ctx.uop_table.size(); ++i) {
    const uint32_t bits = spec.encode_uop(ctx.uop_table[i]);
    put_i32(prog.image, prog.segments[s_uop].offset_bytes + i * 4, static_cast<int32_t>(bits));
  }
  prog.uops = ctx.uop_table;
  prog.insns = std::move(best->insns);
  if (opts.verify) {
    try {
      isa::verify(prog);
    } catch (const UserError& e) {
      throw_internal_error("layer '{}': the lowered stream fails the verifier: {}", layer.name,
                           e.what());
    }
  }

  out.program = std::move(prog);
  out.macs = p.macs();
  // useful MACs with N, OC and IC per group rounded up to the blocks, over MACs per uop
  out.ideal_gemm_uops =
      g.nb * g.ocb * ceil_div(g.ic / g.groups, g.block_in) * g.kh * g.kw * g.oh * g.ow;
  // the emitted stream's cycles; a stream the verifier would reject (with verify = false, e.g. one
  // that deadlocks under cfg's queue depths) cannot be timed
  if (best->cycles < 0 && opts.verify) {
    (void)estimate_cycles(out.program);  // throws the UserError that names the instruction
  }
  out.est_cycles = best->cycles;
  ctx.sched.est_cycles = std::max<int64_t>(best->cycles, 0);
  out.schedule = ctx.sched.describe();
  out.zero_point_init =
      ctx.plan.init_every_tile ? ZeroPointInit::kEveryTile : ZeroPointInit::kBorderTiles;
  return out;
}

}  // namespace tessel::compiler::accel
