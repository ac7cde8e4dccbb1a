#include "compiler/topi/accel/schedule.h"

#include <fmt/format.h>

#include <algorithm>

#include "compiler/target/accel_intrin.h"
#include "compiler/tir/intrinsics.h"
#include "support/error.h"

namespace tessel::topi::accel {

using te::IterVar;
using te::Tensor;
using tir::DataType;
using tir::Expr;
using tir::MemScope;
using tir::Var;
namespace ta = compiler::target::accel;

te::TensorIntrin gemm_intrin(const isa::HwConfig& cfg) {
  const int64_t b = cfg.batch(), bi = cfg.block_in(), bo = cfg.block_out();
  Tensor inp = te::placeholder({Expr(b), Expr(bi)}, DataType::int8(), "inp");
  Tensor wgt = te::placeholder({Expr(bo), Expr(bi)}, DataType::int8(), "wgt");
  IterVar k = te::reduce_axis(bi, "k");
  Tensor out = te::compute(
      {Expr(b), Expr(bo)},
      [&](const std::vector<Var>& i) {
        return te::sum(tir::cast(DataType::int32(), inp(i[0], k)) * tir::cast(DataType::int32(), wgt(i[1], k)), {k});
      },
      "gemm");
  auto ptr = [](const tir::Buffer& buf, int64_t elems, int rw) {
    return tir::intrin::access_ptr(buf, buf->elem_offset, Expr(elems), rw);
  };
  return te::decl_tensor_intrin(
      out,
      [=](const te::IntrinCall& c) {
        if (c.part == te::IntrinPart::kReset) return ta::gemm_uop(true, ptr(c.output, b * bo, 2), Expr(0), Expr(0));
        return ta::gemm_uop(false, ptr(c.output, b * bo, 3), ptr(c.inputs[0], b * bi, 1),
                            ptr(c.inputs[1], bo * bi, 1));
      },
      "accel.gemm");
}

namespace {

/// Checks that every requantisation field is one ALU immediate.
void check_per_tensor(const std::string& what, const RequantParams& p) {
  auto one = [&](const std::string& field, const std::vector<int32_t>& v) {
    if (v.size() != 1) {
      throw_user_error("{}: requantisation field {} has {} entries; the template needs one (per-tensor)", what, field,
                       v.size());
    }
  };
  one("acc_offset", p.acc_offset);
  one("acc_min", p.acc_min);
  one("acc_max", p.acc_max);
  one("multiplier", p.multiplier);
  one("round", p.round);
  one("shift", p.shift);
  one("out_add", p.out_add);
  for (size_t j = 0; j < p.low.size(); ++j) {
    one(fmt::format("low_multiplier[{}]", j), p.low[j].multiplier);
    one(fmt::format("low_round[{}]", j), p.low[j].round);
    one(fmt::format("low_shift[{}]", j), p.low[j].shift);
  }
}

void check_steps(const std::string& what, const RequantOps& ops) {
  for (const RequantStep& s : ops.steps) {
    if (s.is_imm && (s.imm < -32768 || s.imm > 32767)) {
      throw_user_error("{}: requantisation step {} has immediate {}, outside the ALU's 16-bit range", what,
                       s.tensor.name(), s.imm);
    }
  }
}

void check_rows(const std::string& what, const isa::HwConfig& hw, MemScope scope, int64_t rows,
                const std::string& knobs) {
  const ta::ScopeInfo info = ta::scope_info(hw, scope);
  if (rows > info.depth) {
    throw_user_error("{}: {} needs {} rows for knobs {}, capacity {} rows", what, tir::to_string(scope), rows, knobs,
                     info.depth);
  }
}

/// The requantisation stages into acc at `at` of the output stage, each an ALU nest. A step
/// whose operand is a constant of `ops` reads it from acc: each constant is cache_read into
/// local.acc_buffer once for all the steps that read it (pragma dma_copy) at the root for a
/// kUniform one (one LOAD ACC for the whole kernel), at `chan_at` (the output-channel tile loop;
/// undefined: at the root, every channel block once) for a kChannel one (with
/// ImmPolicy::stack_channels one copy of every field's rows), at `at`
/// (the tile, a 2-D copy per channel block: pragma at its row loop) for a kElement one.
void schedule_alu_steps(te::Schedule& s, const RequantOps& ops, const te::Stage& out, const IterVar& at,
                        const IterVar& chan_at) {
  std::vector<std::vector<Tensor>> readers(ops.constants.size());
  for (const RequantStep& st : ops.steps) {
    Tensor acc = s.cache_write(st.tensor, MemScope::kAcc);
    s[st.tensor].compute_inline();
    te::Stage sa = s[acc];
    sa.compute_at(out, at);
    sa.pragma(sa->leaf_iter_vars.front(), "alu");
    if (st.is_imm) continue;
    for (size_t k = 0; k < ops.constants.size(); ++k) {
      if (ops.constants[k].tensor.same_as(st.operand)) readers[k].push_back(acc);
    }
  }
  for (size_t k = 0; k < ops.constants.size(); ++k) {
    const ChannelConstant& c = ops.constants[k];
    if (readers[k].empty()) continue;
    Tensor rows = s.cache_read(c.tensor, MemScope::kAcc, readers[k]);
    te::Stage sc = s[rows];
    switch (c.kind) {
      case ChannelConstant::Kind::kUniform:
        break;
      case ChannelConstant::Kind::kChannel:
        // at the channel tile loop, or (chan_at undefined: knob const_root) every channel
        // block's rows once at the root
        if (chan_at.defined()) sc.compute_at(out, chan_at);
        break;
      case ChannelConstant::Kind::kElement:
        sc.compute_at(out, at);
        break;
    }
    sc.pragma(sc->leaf_iter_vars.front(), "dma_copy");
  }
}

/// The constants of a chain by kind: (uniform, per channel, per element).
struct ConstantCounts {
  int64_t uniform = 0, channel = 0, element = 0;
};
ConstantCounts count_constants(const RequantOps& ops) {
  ConstantCounts n;
  for (const ChannelConstant& c : ops.constants) {
    n.uniform += c.kind == ChannelConstant::Kind::kUniform;
    // a stacked one ([F][C/lanes][B][lanes]: ImmPolicy::stack_channels) is F fields
    if (c.kind == ChannelConstant::Kind::kChannel) n.channel += c.tensor.ndim() == 4 ? const_shape(c.tensor)[0] : 1;
    n.element += c.kind == ChannelConstant::Kind::kElement;
  }
  return n;
}

/// The parenthesis of the acc capacity error: the acc buffers and, when there are any, the
/// zero-point buffer and the constants.
std::string acc_buffers_text(int64_t acc_stages, const ConstantCounts& n) {
  std::string t = fmt::format("{} acc buffers", acc_stages);
  if (n.element > 0) t += fmt::format(", {} zero-point init buffer", n.element);
  if (n.channel > 0) t += fmt::format(", {} channel constants", n.channel);
  if (n.uniform > 0) t += fmt::format(", {} uniform constants", n.uniform);
  return t;
}

int32_t wrap_add32(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}

/// The chain with the layer's bias and input zero point folded in (see schedule.h), and the
/// conv2d border tensor ([OCB][OH][OW][B][BO], empty when none): `attrs` null for dense.
struct Folded {
  RequantParams rq;
  std::vector<int32_t> border;
};
Folded fold_addends(const std::string& what, const Tensor& x, const Tensor& w, const Conv2dAttrs* attrs,
                    const RequantParams& rq, const std::vector<int32_t>& bias, int32_t zx,
                    const std::vector<int8_t>& w_values, bool into_border = false) {
  const std::vector<int64_t> xs = const_shape(x), ws = const_shape(w);
  const int64_t channels = ws[0] * ws[ws.size() - 2];
  if (!bias.empty() && static_cast<int64_t>(bias.size()) != channels) {
    throw_user_error("{}: bias has {} entries, expected {} (output channels: {} blocks of {})", what, bias.size(),
                     channels, ws[0], ws[ws.size() - 2]);
  }
  if (zx < -128 || zx > 127) throw_user_error("{}: x_zero_point {} is outside [-128, 127]", what, zx);
  int64_t w_elems = 1;
  for (int64_t d : ws) w_elems *= d;
  if (zx != 0 && static_cast<int64_t>(w_values.size()) != w_elems) {
    throw_user_error("{}: x_zero_point {} needs the weights' values: w_values has {} entries, w {} has {} elements",
                     what, zx, w_values.size(), w.name(), w_elems);
  }
  Folded f{rq, {}};
  if (bias.empty() && zx == 0) return f;
  // an acc_offset of another size: left as it is, for requantize's error
  if (rq.acc_offset.size() != 1 && static_cast<int64_t>(rq.acc_offset.size()) != channels) return f;
  const std::vector<int32_t> zp =
      zx != 0 ? zero_point_channel_addend(ws, w_values, zx) : std::vector<int32_t>(static_cast<size_t>(channels), 0);
  std::vector<int32_t> off(static_cast<size_t>(channels));
  for (size_t o = 0; o < off.size(); ++o) {
    const int32_t a = rq.acc_offset.size() == 1 ? rq.acc_offset[0] : rq.acc_offset[o];
    off[o] = wrap_add32(wrap_add32(a, bias.empty() ? 0 : bias[o]), zp[o]);
  }
  if (attrs && zx != 0 && conv2d_window_touches_padding(xs[2], xs[3], ws[2], ws[3], *attrs)) {
    // the correction at the padding only (zero where a window stays inside the input, so the
    // interior tiles skip it: guard_zero_constant_tiles); what is per channel stays in the
    // chain's acc_offset (int32 adds wrap: the sum is the same in either order)
    f.border = conv2d_zero_point_border(xs, ws, w_values, *attrs, zx);
    if (into_border) {
      // every tile adds the border anyway (no interior tile): the per-channel addend goes into
      // it too, and the chain's ADD acc_offset is left out
      const size_t bo = static_cast<size_t>(ws[4]);
      const size_t per_block = f.border.size() / static_cast<size_t>(ws[0]);
      for (size_t i = 0; i < f.border.size(); ++i) {
        const size_t o = (i / per_block) * bo + i % bo;
        f.border[i] = wrap_add32(f.border[i], off[o]);
      }
      f.rq.acc_offset = {0};
      return f;
    }
  }
  bool uniform = true;
  for (int32_t v : off) uniform = uniform && v == off[0];
  f.rq.acc_offset = uniform ? std::vector<int32_t>{off[0]} : off;
  return f;
}

/// The requantisation policy of conv2d and dense: 16-bit immediates, wide values one acc
/// element, per-channel fields packed by channel block and stacked into one constant.
constexpr ImmPolicy kAccelPolicy{16, 2, true, true};

/// requantize under kAccelPolicy, its UserErrors prefixed by the template's name.
RequantOps requantize_for(const std::string& what, const Tensor& acc, const RequantParams& rq) {
  try {
    return requantize(acc, rq, true, "requant", kAccelPolicy);
  } catch (const UserError& e) {
    throw_user_error("{}: {}", what, e.what());
  }
}

void check_blocks(const std::string& what, const Tensor& t, size_t lane_dim_a, int64_t want_a, size_t lane_dim_b,
                  int64_t want_b) {
  const std::vector<int64_t> s = const_shape(t);
  if (s[lane_dim_a] != want_a || s[lane_dim_b] != want_b) {
    throw_user_error("{}: tensor {} has blocks {} x {}, the configuration's are {} x {}", what, t.name(),
                     s[lane_dim_a], s[lane_dim_b], want_a, want_b);
  }
}

}  // namespace

bool const_root(const te::ConfigEntity& cfg) { return cfg.has("const_root") && cfg.knob("const_root") != 0; }

AccBuffers conv2d_acc_buffers(const Conv2dLayer& layer) {
  const std::string what = "conv2d template";
  const Folded folded = fold_addends(what, layer.x, layer.w, &layer.attrs, layer.rq, layer.bias, layer.x_zero_point,
                                     layer.w_values);
  const RequantOps rq = requantize_for(what, conv2d_nchwnc(layer.x, layer.w, layer.attrs, "conv2d"), folded.rq);
  const ConstantCounts nc = count_constants(rq);
  return {1 + static_cast<int64_t>(layer.rq.low.size()), nc.element + (folded.border.empty() ? 0 : 1), nc.channel,
          nc.uniform};
}

TileRows conv2d_tile_rows(const Conv2dLayer& layer, const AccBuffers& bufs, const te::ConfigEntity& cfg) {
  const std::vector<int64_t> ws = const_shape(layer.w);
  const Conv2dAttrs& a = layer.attrs;
  const int64_t tile_oc = cfg.split("tile_oc")[1], tile_h = cfg.split("tile_h")[1], tile_w = cfg.split("tile_w")[1],
                tile_ic = cfg.split("tile_ic")[1];
  // every buffer inside the virtual threads (cthread) is per thread
  const int64_t nthread = cfg.knob("oc_nthread") * cfg.knob("h_nthread");
  const int64_t win_h = (tile_h - 1) * a.stride_h + (ws[2] - 1) * a.dilation_h + 1;
  const int64_t win_w = (tile_w - 1) * a.stride_w + (ws[3] - 1) * a.dilation_w + 1;
  TileRows r;
  r.inp = nthread * conv2d_window_blocks(layer, tile_oc, tile_ic) * win_h * win_w;
  r.wgt = nthread * tile_oc * tile_ic * ws[2] * ws[3];
  r.acc = nthread * tile_oc * tile_h * tile_w * (bufs.stages + bufs.element) +
          (const_root(cfg) ? ws[0] : nthread * tile_oc) * bufs.channel +
          bufs.uniform;
  return r;
}

AccBuffers dense_acc_buffers(const DenseLayer& layer) {
  const std::string what = "dense template";
  const Folded folded = fold_addends(what, layer.x, layer.w, nullptr, layer.rq, layer.bias, layer.x_zero_point,
                                     layer.w_values);
  const RequantOps rq = requantize_for(what, dense_packed(layer.x, layer.w, "dense"), folded.rq);
  const ConstantCounts nc = count_constants(rq);
  return {1 + static_cast<int64_t>(layer.rq.low.size()), nc.element, nc.channel, nc.uniform};
}

namespace {

/// Why the point's virtual-thread knobs do not fit their loops (threads_divide's rules), or "".
std::string threads_refusal(const te::ConfigEntity& cfg, int64_t oc_blocks, int64_t out_rows) {
  struct Axis {
    const char *split, *knob, *outer_what, *extent_what;
    int64_t extent;
  };
  std::vector<Axis> axes = {{"tile_oc", "oc_nthread", "outer channel-block iterations", "channel blocks", oc_blocks}};
  if (cfg.has("h_nthread")) axes.push_back({"tile_h", "h_nthread", "outer row iterations", "output rows", out_rows});
  for (const Axis& x : axes) {
    const std::vector<int64_t>& f = cfg.split(x.split);
    const int64_t n = cfg.knob(x.knob);
    if (f[0] % n != 0) {
      return fmt::format("knob {}={} does not divide the {} {} ({}={})", x.knob, n, f[0], x.outer_what, x.split, f[1]);
    }
    // a split over threads must be whole tiles: each thread's loops the same (a smaller last
    // tile of one thread would clip its loops by the thread's index)
    if (n > 1 && f[0] * f[1] != x.extent) {
      return fmt::format("knob {}={} needs whole tiles: {}={} does not divide the {} {}", x.knob, n, x.split, f[1],
                         x.extent, x.extent_what);
    }
  }
  return "";
}

}  // namespace

bool threads_divide(const te::ConfigEntity& cfg, int64_t oc_blocks, int64_t out_rows) {
  return threads_refusal(cfg, oc_blocks, out_rows).empty();
}

int64_t conv2d_interior_tiles(const Conv2dLayer& layer, int64_t tile_h, int64_t tile_w) {
  const std::vector<int64_t> xs = const_shape(layer.x), ws = const_shape(layer.w);
  const Conv2dAttrs& a = layer.attrs;
  // the tiles of `tile` outputs along one axis whose windows stay inside the input
  auto inside = [](int64_t in, int64_t pad0, int64_t pad1, int64_t k, int64_t stride, int64_t dil, int64_t tile) {
    const int64_t out = conv_output_size("conv2d template", in, pad0, pad1, k, stride, dil);
    int64_t n = 0;
    for (int64_t j = 0; j * tile < out; ++j) {
      const int64_t last = std::min((j + 1) * tile, out) - 1;
      n += j * tile * stride - pad0 >= 0 && last * stride - pad0 + (k - 1) * dil < in;
    }
    return n;
  };
  return inside(xs[2], a.pad_top, a.pad_bottom, ws[2], a.stride_h, a.dilation_h, tile_h) *
         inside(xs[3], a.pad_left, a.pad_right, ws[3], a.stride_w, a.dilation_w, tile_w);
}

int64_t conv2d_window_blocks(const Conv2dLayer& layer, int64_t tile_oc, int64_t tile_ic) {
  const std::vector<int64_t> ws = const_shape(layer.w);
  const int64_t groups = layer.attrs.groups, ocb = ws[0], icbg = ws[1];
  if (groups <= 1 || ocb % groups != 0) return tile_ic;  // (conv2d_nchwnc refuses the latter)
  const int64_t ocbg = ocb / groups;
  int64_t span = 0;
  for (int64_t ob0 = 0; ob0 < ocb; ob0 += tile_oc) {
    const int64_t last = std::min(ob0 + tile_oc, ocb) - 1;
    span = std::max(span, (last / ocbg - ob0 / ocbg) * icbg + tile_ic);
  }
  return span;
}

TileRows dense_tile_rows(const DenseLayer& layer, const AccBuffers& bufs, const te::ConfigEntity& cfg) {
  const int64_t m_blocks = const_shape(layer.x)[0];
  const int64_t tile_oc = cfg.split("tile_oc")[1], tile_ic = cfg.split("tile_ic")[1], nthread = cfg.knob("oc_nthread");
  TileRows r;
  r.inp = nthread * m_blocks * tile_ic;  // per thread (cthread)
  r.wgt = nthread * tile_oc * tile_ic;
  r.acc = nthread * m_blocks * tile_oc * (bufs.stages + bufs.element) +
          (const_root(cfg) ? const_shape(layer.w)[0] : nthread * tile_oc) * bufs.channel + bufs.uniform;
  return r;
}

void conv2d_config_space(const Conv2dLayer& layer, te::ConfigSpace& space, te::SplitPolicy policy) {
  const std::vector<int64_t> xs = const_shape(layer.x), ws = const_shape(layer.w);
  const Conv2dAttrs& a = layer.attrs;
  const int64_t oh = conv_output_size("conv2d template", xs[2], a.pad_top, a.pad_bottom, ws[2], a.stride_h, a.dilation_h);
  const int64_t ow = conv_output_size("conv2d template", xs[3], a.pad_left, a.pad_right, ws[3], a.stride_w, a.dilation_w);
  space.define_split("tile_oc", ws[0], 2, policy);
  space.define_split("tile_h", oh, 2, policy);
  space.define_split("tile_w", ow, 2, policy);
  space.define_split("tile_ic", ws[1], 2, policy);  // the input blocks of a group (all of them with groups 1)
  space.define_knob("oc_nthread", {1, 2});
  space.define_knob("h_nthread", {1, 2});
  if (conv2d_acc_buffers(layer).channel > 0) space.define_knob("const_root", {0, 1});
}

ScheduledOp schedule_conv2d(const Conv2dLayer& layer, const isa::HwConfig& hw, const te::ConfigEntity& cfg) {
  const std::string what = "conv2d template";
  const Conv2dAttrs& a = layer.attrs;
  if (layer.x.ndim() != 6 || layer.w.ndim() != 6) throw_user_error("{}: x and w must be packed (rank 6)", what);
  check_blocks(what, layer.x, 4, hw.batch(), 5, hw.block_in());
  check_blocks(what, layer.w, 4, hw.block_out(), 5, hw.block_in());
  const std::vector<int64_t> ws = const_shape(layer.w);
  const int64_t tile_oc = cfg.split("tile_oc")[1], tile_h = cfg.split("tile_h")[1], tile_w = cfg.split("tile_w")[1],
                tile_ic = cfg.split("tile_ic")[1], nthread = cfg.knob("oc_nthread"), h_nthread = cfg.knob("h_nthread");
  {
    const std::vector<int64_t> xs = const_shape(layer.x);
    const int64_t oh = conv_output_size(what, xs[2], a.pad_top, a.pad_bottom, ws[2], a.stride_h, a.dilation_h);
    if (const std::string why = threads_refusal(cfg, ws[0], oh); !why.empty()) throw_user_error("{}: {}", what, why);
  }
  const Folded folded = fold_addends(what, layer.x, layer.w, &a, layer.rq, layer.bias, layer.x_zero_point,
                                     layer.w_values, conv2d_interior_tiles(layer, tile_h, tile_w) == 0);
  Tensor acc = conv2d_nchwnc(layer.x, layer.w, a, "conv2d");
  // the zero-point border term (with the per-channel addend): one ALU ADD after the GEMMs
  Tensor acc_in = acc;
  RequantStep zp_step;
  if (!folded.border.empty()) {
    const std::vector<tir::Expr>& os = acc.shape();
    Tensor init = te::placeholder({os[1], os[2], os[3], os[4], os[5]}, DataType::int32(), "conv2d.zp_init");
    acc_in = te::compute(
        os,
        [&](const std::vector<Var>& i) {
          return acc({i[0], i[1], i[2], i[3], i[4], i[5]}) + init({i[1], i[2], i[3], i[4], i[5]});
        },
        "conv2d.zp");
    zp_step = RequantStep{acc_in, "add", false, 0, init};
  }
  RequantOps rq = requantize_for(what, acc_in, folded.rq);
  if (!folded.border.empty()) {
    rq.steps.insert(rq.steps.begin(), zp_step);
    rq.constants.insert(rq.constants.begin(),
                        ChannelConstant{zp_step.operand, folded.border, ChannelConstant::Kind::kElement});
  }
  check_steps(what, rq);
  const ConstantCounts nc = count_constants(rq);
  // Scratchpad rows of one tile (conv2d_tile_rows, which tuners' cost models share).
  const AccBuffers bufs{1 + static_cast<int64_t>(layer.rq.low.size()), nc.element, nc.channel, nc.uniform};
  const TileRows rows = conv2d_tile_rows(layer, bufs, cfg);
  const int64_t win_h = (tile_h - 1) * a.stride_h + (ws[2] - 1) * a.dilation_h + 1;
  const int64_t win_w = (tile_w - 1) * a.stride_w + (ws[3] - 1) * a.dilation_w + 1;
  const std::string threads = h_nthread > 1 ? fmt::format("oc_nthread={}, h_nthread={}", nthread, h_nthread)
                                             : fmt::format("oc_nthread={}", nthread);
  check_rows(what, hw, MemScope::kInp, rows.inp,
             fmt::format("{}tile_ic={}, tile_h={}, tile_w={} (input window {} x {}{})",
                         nthread * h_nthread > 1 ? threads + ", " : std::string(), tile_ic, tile_h, tile_w, win_h,
                         win_w,
                         a.groups > 1 ? fmt::format(", {} channel blocks for tile_oc={} in {} groups",
                                                    conv2d_window_blocks(layer, tile_oc, tile_ic), tile_oc, a.groups)
                                      : std::string()));
  check_rows(what, hw, MemScope::kWgt, rows.wgt,
             fmt::format("{}, tile_oc={}, tile_ic={} (kernel {} x {})", threads, tile_oc, tile_ic, ws[2], ws[3]));
  check_rows(what, hw, MemScope::kAcc, rows.acc,
             fmt::format("{}, tile_oc={}, tile_h={}, tile_w={} ({})", threads, tile_oc, tile_h, tile_w,
                         acc_buffers_text(bufs.stages, nc)));

  te::Schedule s = te::create_schedule({rq.out});
  // The padded input stage (if any) is inlined into the input copy.
  const Tensor xp = acc.op()->inputs[0];
  const bool padded = !xp.same_as(layer.x);
  Tensor x_buf = s.cache_read(xp, MemScope::kInp, {acc});
  Tensor w_buf = s.cache_read(layer.w, MemScope::kWgt, {acc});
  if (padded) s[xp].compute_inline();
  Tensor acc_c = s.cache_write(acc, MemScope::kAcc);
  s[acc].compute_inline();

  te::Stage out = s[rq.out];
  const std::vector<IterVar> ax = out->leaf_iter_vars;  // bn, bo, y, x, b, o
  auto [bo_o, bo_i] = out.split(ax[1], tile_oc);
  auto [y_o, y_i] = out.split(ax[2], tile_h);
  auto [x_o, x_i] = out.split(ax[3], tile_w);
  // Virtual threads (cthread: every buffer per thread, so one thread's loads overlap the other's
  // compute) over the outer channel-block loop and/or the outer row loop, outermost.
  IterVar chan_at = bo_o, rows_at = y_o;  // chan_at: the output-channel tile loop
  std::vector<IterVar> order = {ax[0]};
  if (nthread > 1) {
    auto [t, bo_oi] = out.split_nparts(bo_o, nthread);
    order.push_back(t);
    chan_at = bo_oi;
  }
  if (h_nthread > 1) {
    auto [t, y_oi] = out.split_nparts(y_o, h_nthread);
    order.push_back(t);
    rows_at = y_oi;
  }
  const size_t n_threads = order.size() - 1;
  for (const IterVar& v : {chan_at, rows_at, x_o, bo_i, y_i, x_i, ax[4], ax[5]}) order.push_back(v);
  out.reorder(order);
  for (size_t k = 1; k <= n_threads; ++k) out.bind(order[k], "cthread");
  // The tile's store from its first loop: inject_dma_copy makes it the fewest DMAs (one per
  // output-channel block of the tile, a single run when the tile is whole planes).
  out.pragma(bo_i, "dma_copy");
  schedule_alu_steps(s, rq, out, x_o, const_root(cfg) ? IterVar() : chan_at);

  te::Stage sc = s[acc_c];
  sc.compute_at(out, x_o);
  const std::vector<IterVar> cl = sc->leaf_iter_vars;  // bn, bo, y, x, b, o, rc, ry, rx, ri
  auto [rc_o, rc_i] = sc.split(cl[6], tile_ic);
  sc.reorder({rc_o, cl[0], cl[1], cl[2], rc_i, cl[7], cl[8], cl[3], cl[4], cl[5], cl[9]});
  sc.tensorize(cl[4], gemm_intrin(hw));
  te::Stage sx = s[x_buf], sw = s[w_buf];
  sx.compute_at(sc, rc_o);
  // With one input-channel chunk the tile's weights do not change with its rows and columns:
  // they are loaded once per output-channel tile (before the row and column tile loops) and
  // reused by every spatial tile; with several chunks each chunk loads its own.
  if (cfg.split("tile_ic")[0] == 1) {
    sw.compute_at(out, chan_at);
  } else {
    sw.compute_at(sc, rc_o);
  }
  // Both copies from their first loop: inject_dma_copy merges what is contiguous (the window's
  // channel blocks when it is whole unpadded planes; a weight tile's channel blocks and taps)
  // and leaves the rest as loops around the DMA (a padded window: one per channel block).
  sx.pragma(sx->leaf_iter_vars.front(), "dma_copy");
  sw.pragma(sw->leaf_iter_vars.front(), "dma_copy");
  std::vector<Tensor> args = {layer.x, layer.w};
  for (const ChannelConstant& c : rq.constants) args.push_back(c.tensor);
  args.push_back(rq.out);
  return {s, args, rq.out, rq.constants};
}

void dense_config_space(const DenseLayer& layer, te::ConfigSpace& space, te::SplitPolicy policy) {
  space.define_split("tile_oc", const_shape(layer.w)[0], 2, policy);
  space.define_split("tile_ic", const_shape(layer.x)[1], 2, policy);
  space.define_knob("oc_nthread", {1, 2});
  if (dense_acc_buffers(layer).channel > 0) space.define_knob("const_root", {0, 1});
}

ScheduledOp schedule_dense(const DenseLayer& layer, const isa::HwConfig& hw, const te::ConfigEntity& cfg) {
  const std::string what = "dense template";
  if (layer.x.ndim() != 4 || layer.w.ndim() != 4) throw_user_error("{}: x and w must be packed (rank 4)", what);
  check_blocks(what, layer.x, 2, hw.batch(), 3, hw.block_in());
  check_blocks(what, layer.w, 2, hw.block_out(), 3, hw.block_in());
  const std::vector<int64_t> xs = const_shape(layer.x);
  const int64_t tile_oc = cfg.split("tile_oc")[1], tile_ic = cfg.split("tile_ic")[1], nthread = cfg.knob("oc_nthread");
  if (const std::string why = threads_refusal(cfg, const_shape(layer.w)[0], 0); !why.empty()) {
    throw_user_error("{}: {}", what, why);
  }
  const Folded folded = fold_addends(what, layer.x, layer.w, nullptr, layer.rq, layer.bias, layer.x_zero_point,
                                     layer.w_values);
  Tensor acc = dense_packed(layer.x, layer.w, "dense");
  RequantOps rq = requantize_for(what, acc, folded.rq);
  check_steps(what, rq);
  const ConstantCounts nc = count_constants(rq);
  const AccBuffers bufs{1 + static_cast<int64_t>(layer.rq.low.size()), nc.element, nc.channel, nc.uniform};
  const TileRows rows = dense_tile_rows(layer, bufs, cfg);
  check_rows(what, hw, MemScope::kInp, rows.inp, fmt::format("tile_ic={} ({} row blocks)", tile_ic, xs[0]));
  check_rows(what, hw, MemScope::kWgt, rows.wgt,
             fmt::format("oc_nthread={}, tile_oc={}, tile_ic={}", nthread, tile_oc, tile_ic));
  check_rows(what, hw, MemScope::kAcc, rows.acc,
             fmt::format("oc_nthread={}, tile_oc={} ({} row blocks, {})", nthread, tile_oc, xs[0],
                         acc_buffers_text(bufs.stages, nc)));

  te::Schedule s = te::create_schedule({rq.out});
  Tensor x_buf = s.cache_read(layer.x, MemScope::kInp, {acc});
  Tensor w_buf = s.cache_read(layer.w, MemScope::kWgt, {acc});
  Tensor acc_c = s.cache_write(acc, MemScope::kAcc);
  s[acc].compute_inline();
  te::Stage out = s[rq.out];
  const std::vector<IterVar> ax = out->leaf_iter_vars;  // bm, bn, b, o
  auto [bn_o, bn_i] = out.split(ax[1], tile_oc);
  IterVar at = bn_o;
  if (nthread > 1) {
    auto [t, bn_oi] = out.split_nparts(bn_o, nthread);
    out.reorder({t, bn_oi, ax[0], bn_i, ax[2], ax[3]});
    out.bind(t, "cthread");
    at = bn_oi;
  } else {
    out.reorder({bn_o, ax[0], bn_i, ax[2], ax[3]});
  }
  out.pragma(ax[0], "dma_copy");
  schedule_alu_steps(s, rq, out, at, const_root(cfg) ? IterVar() : at);
  te::Stage sc = s[acc_c];
  sc.compute_at(out, at);
  const std::vector<IterVar> cl = sc->leaf_iter_vars;  // bm, bn, b, o, rk, ri
  auto [rk_o, rk_i] = sc.split(cl[4], tile_ic);
  sc.reorder({rk_o, cl[0], cl[1], rk_i, cl[2], cl[3], cl[5]});
  sc.tensorize(cl[2], gemm_intrin(hw));
  te::Stage sx = s[x_buf], sw = s[w_buf];
  sx.compute_at(sc, rk_o);
  sw.compute_at(sc, rk_o);
  sx.pragma(sx->leaf_iter_vars.front(), "dma_copy");
  sw.pragma(sw->leaf_iter_vars.front(), "dma_copy");
  std::vector<Tensor> args = {layer.x, layer.w};
  for (const ChannelConstant& c : rq.constants) args.push_back(c.tensor);
  args.push_back(rq.out);
  return {s, args, rq.out, rq.constants};
}

void qadd_config_space(const QaddLayer& layer, te::ConfigSpace& space) {
  space.define_split("tile_h", const_shape(layer.a)[2]);
}

ScheduledOp schedule_qadd(const QaddLayer& layer, const isa::HwConfig& hw, const te::ConfigEntity& cfg) {
  const std::string what = "qadd template";
  if (layer.a.ndim() != 6) throw_user_error("{}: operands must be packed (rank 6)", what);
  check_blocks(what, layer.a, 4, hw.batch(), 5, hw.block_out());
  check_per_tensor(what, layer.rq);
  const std::vector<int64_t> as = const_shape(layer.a);
  const int64_t tile_h = cfg.split("tile_h")[1];
  // Values beyond the ALU's 16-bit immediate are int32 constants of one acc element
  // ([BATCH][BLOCK_OUT]), each loaded once into its own acc row.
  RequantOps rq = qadd(layer.a, layer.b, layer.a_zero_point, layer.a_multiplier, layer.b_zero_point,
                       layer.b_multiplier, layer.rq, "qadd", ImmPolicy{16, 2});
  check_steps(what, rq);
  // After alu_in_place: the two loaded operands (the sum goes into the first), plus one buffer
  // per low limb; and one row per constant.
  const int64_t acc_stages = 2 + static_cast<int64_t>(layer.rq.low.size());
  const int64_t rows = tile_h * as[3];  // per batch and channel block (the outer loops)
  const int64_t const_rows = static_cast<int64_t>(rq.constants.size());
  check_rows(what, hw, MemScope::kAcc, rows * acc_stages + const_rows,
             fmt::format("tile_h={} ({} rows per stage, {} acc buffers, {} constant rows)", tile_h, rows, acc_stages,
                         const_rows));
  te::Schedule s = te::create_schedule({rq.out});
  std::vector<Tensor> loads;
  for (const Tensor& t : rq.loads) {
    loads.push_back(s.cache_write(t, MemScope::kAcc));
    s[t].compute_inline();
  }
  te::Stage out = s[rq.out];
  const std::vector<IterVar> ax = out->leaf_iter_vars;  // n, c, y, x, b, o
  auto [y_o, y_i] = out.split(ax[2], tile_h);
  out.reorder({ax[0], ax[1], y_o, y_i, ax[3], ax[4], ax[5]});
  out.pragma(y_i, "dma_copy");
  schedule_alu_steps(s, rq, out, y_o, IterVar());
  for (const Tensor& t : loads) {
    te::Stage st = s[t];
    st.compute_at(out, y_o);
    st.pragma(st->leaf_iter_vars.front(), "dma_copy");
  }
  std::vector<Tensor> args = {layer.a, layer.b};
  for (const ChannelConstant& c : rq.constants) args.push_back(c.tensor);
  args.push_back(rq.out);
  return {s, args, rq.out, rq.constants};
}

}  // namespace tessel::topi::accel
