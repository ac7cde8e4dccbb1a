#include "compiler/passes/integerize.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include "compiler/ir/op_util.h"
#include "compiler/passes/requant.h"
#include "support/error.h"
#include "support/text.h"

namespace tessel::compiler::passes {
namespace {

using ir::DType;
using ir::Node;
using ir::QuantInfo;
using nlohmann::json;

/// An integer constant with its quantisation parameters (uint8 already shifted to int8).
struct QConst {
  int value = -1;  ///< constant value id (i8 or i32)
  QuantInfo q;
};

int8_t sat8(double v) { return static_cast<int8_t>(std::min(127.0, std::max(-128.0, v))); }

/// Power-of-two scale covering max |x| in int8: 2^ceil(log2(max / 127)); 1 for max = 0.
float pow2_scale(float max_abs) {
  if (!(max_abs > 0.0f) || !std::isfinite(max_abs)) return 1.0f;
  // At least 2^-126, the smallest normal float32 power of two (as the weight scales' floor in
  // integerize): a tensor whose values are all denormal (|x| < 127 * 2^-149, e.g. activations that
  // decayed through a long chain) would otherwise get the scale 2^-150 or less, which is 0 in
  // float32; at 2^-126 they quantise to 0.
  return std::ldexp(1.0f, std::max(-126, static_cast<int>(std::ceil(std::log2(static_cast<double>(max_abs) / 127.0)))));
}

class Integerizer {
 public:
  Integerizer(ir::Graph& g, const IntegerizeOptions& opts) : g_(g), opts_(opts), consumers_(g.consumers()) {}

  void run() {
    // A compiled model's outputs are real numbers: float32, or int8/uint8 with their quantisation
    // (the reference interpreter also evaluates integer outputs such as Shape's).
    for (int o : g_.outputs) {
      const ir::Value& v = g_.values[o];
      if (v.dtype == DType::kI32 || v.dtype == DType::kI64)
        throw_user_error("graph output {} is an {} tensor{}; compiled models output float32 tensors or quantised "
                         "int8/uint8 ones",
                         support::quote(v.name), ir::to_string(v.dtype), v.is_const ? " (a constant)" : "");
    }
    for (int in : g_.inputs) flt_[in] = in;
    std::vector<Node> old = std::move(g_.nodes);
    g_.nodes.clear();
    old_nodes_ = &old;
    for (Node& n : old) lower(n);
    // Graph outputs: float, keeping the ONNX names.
    for (int& o : g_.outputs) {
      const int f = get_flt(o, nullptr);
      if (f != o) {
        const std::string name = g_.values[o].name;
        g_.rename_value(o, g_.unique_name(name + "_unused"));
        g_.rename_value(f, name);
        o = f;
      }
    }
    g_.remove_dead();
  }

 private:
  ir::Graph& g_;
  IntegerizeOptions opts_;
  std::vector<std::vector<int>> consumers_;  // of the original graph
  const std::vector<Node>* old_nodes_ = nullptr;
  std::map<int, int> rep_;      // original value -> int8 value
  std::map<int, int> flt_;      // original value -> float value
  std::map<int, QConst> qconst_;
  std::map<std::pair<int, std::pair<float, int32_t>>, int> fq_cache_;
  std::vector<char> fq_known_;                   // find_fq's memo, per original value
  std::vector<std::optional<QuantInfo>> fq_memo_;

  int new_value(const std::string& base, DType d, std::vector<int64_t> shape, std::optional<QuantInfo> q) {
    ir::Value v;
    v.name = g_.unique_name(base);
    v.dtype = d;
    v.shape = std::move(shape);
    v.shape_known = true;
    v.quant = std::move(q);
    return g_.add_value(std::move(v));
  }

  void emit(const Node& src, const std::string& op, std::vector<int> inputs, std::vector<int> outputs,
            json attrs = json::object(), const std::string& suffix = "") {
    Node n;
    n.name = suffix.empty() ? src.name : src.name + suffix;
    n.op = op;
    n.domain = "tessel";
    n.source_op = src.source_op.empty() ? src.op : src.source_op;
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    n.attrs = std::move(attrs);
    g_.nodes.push_back(std::move(n));
  }

  const QuantInfo& quant_of(int v) const { return *g_.values[v].quant; }

  /// int8 representation of an original value (activations or per-tensor int8 constants).
  int get_rep(int v) const {
    const auto it = rep_.find(v);
    return it == rep_.end() ? -1 : it->second;
  }

  /// Float version of an original value; emits dequantize (or dequantises a constant).
  int get_flt(int v, const Node* user) {
    if (const auto it = flt_.find(v); it != flt_.end()) return it->second;
    if (g_.values[v].is_const && g_.values[v].dtype == DType::kF32) return flt_[v] = v;
    if (const auto it = qconst_.find(v); it != qconst_.end()) {
      const QConst& c = it->second;
      const auto raw = g_.const_f32(c.value);
      const ir::Value& cv = g_.values[c.value];
      std::vector<float> f(raw.size());
      const int64_t inner = inner_size(cv.shape, c.q.axis);
      const int64_t dim = c.q.axis < 0 ? 1 : cv.shape[c.q.axis];
      for (size_t i = 0; i < raw.size(); ++i) {
        const size_t ch = c.q.axis < 0 ? 0 : static_cast<size_t>((static_cast<int64_t>(i) / inner) % dim);
        f[i] = (raw[i] - static_cast<float>(c.q.zero_point_at(ch))) * c.q.scale_at(ch);
      }
      const std::vector<int64_t> shape = cv.shape;
      return flt_[v] = g_.add_const_f32(g_.unique_name(g_.values[v].name + "_f32"), shape, f);
    }
    if (const int r = get_rep(v); r >= 0) {
      const int out = new_value(g_.values[v].name + "_f32", DType::kF32, g_.values[r].shape, std::nullopt);
      Node src;
      src.name = g_.values[v].name;
      src.op = "dequantize";
      emit(src, "dequantize", {r}, {out}, json::object(), "_dequantize");
      return flt_[v] = out;
    }
    throw_internal_error("value '{}' has no float or int8 form{}", g_.values[v].name,
                         user ? " (used by " + ir::describe(*user) + ")" : std::string());
  }

  static int64_t inner_size(const std::vector<int64_t>& shape, int axis) {
    if (axis < 0) return 1;
    int64_t inner = 1;
    for (size_t k = axis + 1; k < shape.size(); ++k) inner *= shape[k];
    return inner;
  }

  /// The fake_quant parameters that value `v` reaches, directly or through a chain of sole
  /// consumers that commute with quantisation (Relu, Clip, MaxPool, Reshape, Flatten, Squeeze,
  /// Unsqueeze, Identity): quantising before them gives the same int8 values as after them.
  /// Iterative and memoised (fq_known_ / fq_memo_): every value on a chain gets the chain's
  /// answer, so the walks of a whole graph are O(values), and a long chain does not recurse.
  std::optional<QuantInfo> find_fq(int v) {
    if (fq_known_.empty()) {
      fq_known_.assign(consumers_.size(), 0);
      fq_memo_.assign(consumers_.size(), std::nullopt);
    }
    std::vector<int> path;
    std::optional<QuantInfo> r;
    for (int cur = v;;) {
      if (fq_known_[cur]) {
        r = fq_memo_[cur];
        break;
      }
      path.push_back(cur);
      bool direct = false;
      for (int c : consumers_[cur]) {
        const Node& m = (*old_nodes_)[c];
        if (m.is_tessel() && m.op == kFakeQuant) {
          r = QuantInfo::tensor(m.attrs.at("scale").get<float>(), m.attrs.at("zero_point").get<int32_t>());
          direct = true;
          break;
        }
      }
      if (direct) break;
      if (consumers_[cur].size() != 1 || g_.is_output(cur)) break;
      const Node& m = (*old_nodes_)[consumers_[cur][0]];
      const bool through = m.op == "Relu" || m.op == "Clip" || m.op == "MaxPool" || m.op == "Reshape" ||
                           m.op == "Flatten" || m.op == "Squeeze" || m.op == "Unsqueeze" || m.op == "Identity";
      if (m.is_tessel() || !through || m.inputs[0] != cur) break;
      cur = m.outputs[0];
    }
    for (int p : path) {
      fq_known_[p] = 1;
      fq_memo_[p] = r;
    }
    return r;
  }

  /// Per-tensor int8 representation of an activation or a quantised/float constant operand
  /// (float constants are quantised per tensor with a power-of-two scale).
  int operand_rep(int v) {
    if (const int r = get_rep(v); r >= 0) return r;
    if (const auto it = qconst_.find(v); it != qconst_.end()) {
      const QConst& c = it->second;
      if (!c.q.per_tensor() || g_.values[c.value].dtype != DType::kI8) return -1;
      g_.values[c.value].quant = c.q;
      return rep_[v] = c.value;
    }
    const ir::Value& cv = g_.values[v];
    if (cv.is_const && cv.dtype == DType::kF32) {
      const auto f = g_.const_f32(v);
      float m = 0;
      for (float x : f) m = std::max(m, std::fabs(x));
      const float s = pow2_scale(m);
      std::vector<int8_t> q(f.size());
      for (size_t i = 0; i < f.size(); ++i) q[i] = sat8(std::nearbyint(f[i] / s));
      const std::vector<int64_t> shape = cv.shape;
      const int id = g_.add_const_i8(g_.unique_name(cv.name + "_i8"), shape, q);
      g_.values[id].quant = QuantInfo::tensor(s, 0);
      return rep_[v] = id;
    }
    return -1;
  }

  // ---- node lowering ----

  void lower(const Node& n) {
    if (n.is_tessel()) {
      if (n.op == kFakeQuant) return lower_fake_quant(n);
      g_.nodes.push_back(n);  // already a Tessel kernel node
      return;
    }
    const std::string& op = n.op;
    if (op == "DequantizeLinear") return lower_dequantize(n);
    if (op == "QuantizeLinear")
      ir::throw_unsupported(n, "a QuantizeLinear whose output is not dequantized with the same parameters cannot be "
                               "imported");
    if (op == "Conv" && try_qconv(n)) return;
    if ((op == "Gemm" || op == "MatMul") && try_qdense(n)) return;
    if (op == "Add" && try_qadd(n)) return;
    if ((op == "Relu" || op == "Clip") && try_qclip(n)) return;
    if (op == "MaxPool" && get_rep(n.inputs[0]) >= 0) return same_params(n, "maxpool", pool_attrs(n, false));
    if ((op == "AveragePool" || op == "GlobalAveragePool") && try_qavgpool(n)) return;
    if ((op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Identity") &&
        get_rep(n.inputs[0]) >= 0)
      return same_params(n, "reshape", json::object());
    if (op == "Concat" && try_qconcat(n)) return;
    lower_float(n);
  }

  void lower_fake_quant(const Node& n) {
    const QuantInfo q = QuantInfo::tensor(n.attrs.at("scale").get<float>(), n.attrs.at("zero_point").get<int32_t>());
    const int x = n.inputs[0], y = n.outputs[0];
    const auto key = std::make_pair(x, std::make_pair(q.scale[0], q.zero_point[0]));
    if (const auto it = fq_cache_.find(key); it != fq_cache_.end()) {
      rep_[y] = it->second;
      return;
    }
    const int r = operand_rep(x);
    int out;
    if (r >= 0 && *g_.values[r].quant == q) {
      out = r;
    } else if (r >= 0) {
      out = new_value(g_.values[y].name + "_i8", DType::kI8, g_.values[r].shape, q);
      emit(n, "requantize", {r}, {out}, json::object(), "_requantize");
    } else {
      const int f = get_flt(x, &n);
      out = new_value(g_.values[y].name + "_i8", DType::kI8, g_.values[f].shape, q);
      emit(n, "quantize", {f}, {out}, json::object(), "_quantize");
    }
    fq_cache_[key] = out;
    rep_[y] = out;
  }

  void lower_dequantize(const Node& n) {
    const int x = n.inputs[0];
    const ir::Value& xv = g_.values[x];
    if (!xv.is_const) ir::throw_unsupported(n, fmt::format("dequantizing the non-constant tensor '{}' is not supported here", xv.name));
    if (n.inputs.size() < 2 || n.inputs[1] < 0 || !g_.values[n.inputs[1]].is_const)
      ir::throw_unsupported(n, "the scale is not a constant");
    QuantInfo q;
    q.scale = g_.const_f32(n.inputs[1]);
    if (n.inputs.size() >= 3 && n.inputs[2] >= 0) {
      if (!g_.values[n.inputs[2]].is_const) ir::throw_unsupported(n, "the zero point is not a constant");
      for (int64_t z : g_.const_i64(n.inputs[2])) q.zero_point.push_back(static_cast<int32_t>(z));
    } else {
      q.zero_point.assign(q.scale.size(), 0);
    }
    if (q.zero_point.size() != q.scale.size())
      ir::throw_unsupported(n, fmt::format("zero point has {} elements, scale {}", q.zero_point.size(), q.scale.size()));
    for (float s : q.scale)
      if (!(s > 0.0f) || !std::isfinite(s)) ir::throw_unsupported(n, fmt::format("scale {} must be positive and finite", s));
    if (q.scale.size() > 1) {
      q.axis = static_cast<int>(ir::normalize_axis(n, ir::attr_int(n, "axis", 1), static_cast<int64_t>(xv.shape.size())));
      if (xv.shape[q.axis] != static_cast<int64_t>(q.scale.size()))
        ir::throw_unsupported(n, fmt::format("scale has {} elements, axis {} of {} has {}", q.scale.size(), q.axis,
                                             ir::shape_string(xv.shape), xv.shape[q.axis]));
    }
    QConst c;
    if (xv.dtype == DType::kU8) {
      // uint8 -> int8: q - 128, zero point - 128 (same real values).
      const auto raw = g_.const_i64(x);
      std::vector<int8_t> s(raw.size());
      for (size_t i = 0; i < raw.size(); ++i) s[i] = static_cast<int8_t>(raw[i] - 128);
      for (int32_t& z : q.zero_point) z -= 128;
      const std::vector<int64_t> shape = xv.shape;
      c.value = g_.add_const_i8(g_.unique_name(xv.name + "_s8"), shape, s);
    } else if (xv.dtype == DType::kI8 || xv.dtype == DType::kI32) {
      c.value = x;
    } else {
      ir::throw_unsupported(n, fmt::format("dequantizing a {} constant is not supported", ir::to_string(xv.dtype)));
    }
    c.q = q;
    qconst_[n.outputs[0]] = c;
  }

  /// Emits a node reading the int8 representation of input 0 and producing an int8 value with
  /// the same parameters and the original output's shape.
  void same_params(const Node& n, const std::string& op, json attrs) {
    const int r = get_rep(n.inputs[0]);
    const int y = n.outputs[0];
    const int out = new_value(g_.values[y].name + "_i8", DType::kI8, g_.values[y].shape, g_.values[r].quant);
    emit(n, op, {r}, {out}, std::move(attrs));
    rep_[y] = out;
  }

  json pool_attrs(const Node& n, bool avg) {
    const ir::Value& x = g_.values[n.inputs[0]];
    ir::Window2d w;
    if (n.op == "GlobalAveragePool") {
      w.kh = x.shape[2];
      w.kw = x.shape[3];
      w.sh = w.sw = 1;
    } else {
      w = ir::window_2d(n, x.shape[2], x.shape[3], 1, 1);
    }
    json a = {{"kernel", {w.kh, w.kw}}, {"stride", {w.sh, w.sw}},
              {"pads", {w.pad_top, w.pad_left, w.pad_bottom, w.pad_right}}};
    if (ir::attr_int(n, "ceil_mode", 0) != 0) a["ceil_mode"] = true;
    if (avg) a["count_include_pad"] = ir::attr_int(n, "count_include_pad", 0) != 0;
    return a;
  }

  /// Weight quantisation check: int8, zero point 0 everywhere, per-tensor or per-channel along
  /// `axis` with `channels` entries. Returns the per-channel scales (size `channels`).
  std::optional<std::vector<float>> weight_scales(const QConst& c, int axis, int64_t channels) const {
    if (g_.values[c.value].dtype != DType::kI8) return std::nullopt;
    for (int32_t z : c.q.zero_point)
      if (z != 0) return std::nullopt;
    if (c.q.per_tensor()) return std::vector<float>(channels, c.q.scale[0]);
    if (c.q.axis != axis || static_cast<int64_t>(c.q.scale.size()) != channels) return std::nullopt;
    return c.q.scale;
  }

  /// The elements of a tensor of `shape` in channel-major order for channel axis `axis`:
  /// out[c * per + i] with i running over the other axes in their order.
  template <typename T>
  static std::vector<T> channel_major(const std::vector<T>& v, const std::vector<int64_t>& shape, int axis) {
    int64_t inner = 1, outer = 1;
    for (size_t k = 0; k < shape.size(); ++k) {
      if (static_cast<int>(k) > axis) inner *= shape[k];
      if (static_cast<int>(k) < axis) outer *= shape[k];
    }
    const int64_t dim = shape[static_cast<size_t>(axis)], per = outer * inner;
    std::vector<T> out(v.size());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t c = 0; c < dim; ++c)
        for (int64_t i = 0; i < inner; ++i) out[c * per + o * inner + i] = v[(o * dim + c) * inner + i];
    return out;
  }

  /// The integer constants of a conv / dense layer: int8 weights in channel-major order
  /// ([OC][per], i.e. OIHW for a conv, [N][K] for a dense layer), per-channel weight scales and
  /// the int32 bias at scale s_in * scale[c].
  struct LayerConsts {
    std::vector<int8_t> w;
    std::vector<float> scale;
    std::vector<int32_t> bias;
    bool from_float = false;  ///< quantised here from float weights
    bool floored = false;     ///< some channel's imported weight scale was raised (see below)
  };

  /// The layer's weights `w` (channel axis `axis`, `oc` channels) and optional bias `b` as
  /// integers for input parameters `qx`, or nullopt when they are not usable (weights neither an
  /// int8 quantised constant with zero point 0 nor, with quantize_float_weights, a float
  /// constant; a bias of the wrong size or kind).
  ///
  /// Scales: imported weights keep theirs; float weights get per-channel power-of-two scales
  /// 2^ceil(log2(max|w| / 127)) (at least 2^-126, the float32 minimum; an all-zero channel starts
  /// from the floor below, or 1 without a bias). The bias is the model's int32 when its scale is
  /// s_in * s_w, else rhe(real / (s_in * s_w)).
  ///
  /// The floor (a channel whose accumulator cannot be held in 32 bits): the exact range of the
  /// channel's accumulator over all int8 inputs (passes::qconv2d_acc_ranges) must fit
  /// [-2^30, 2^30 - 1] for float weights (one bit of headroom keeps the power-of-two
  /// requantisation's rounding add from wrapping), and int32 for imported ones (channels that fit
  /// are kept exactly as given). A channel that does not fit gets the smallest scale
  /// s_w * 2^k, k >= 1, at which it fits [-2^30, 2^30 - 1], its weights re-rounded from their
  /// real values (rhe(w / (s_w 2^k)); for imported weights w = q * s_w, so this is rhe(q / 2^k), a
  /// single rounding) and its bias quantised at s_in * s_w * 2^k. A channel with near-zero weights
  /// next to its bias (|w| ~ 1e-30) thus quantises to zero weights and its output is the bias
  /// alone. This is ONNX Runtime's quantiser's rule (quantize_static raises a weight scale until
  /// the int32 bias at s_in * s_w fits, qdq_quantizer._adjust_weight_scale_for_int32_bias, and
  /// floors scales below the float32 minimum, quant_utils.compute_scale_zp), applied to the whole
  /// accumulator (bias and products) that the 32-bit accelerator must hold. Throws UserError
  /// naming the node when a bias is so large for its input scale that no float32 weight scale
  /// brings it into range.
  std::optional<LayerConsts> layer_consts(const Node& n, int w, int axis, int64_t oc, int b, const QuantInfo& qx) {
    const ir::Value& wv = g_.values[w];
    LayerConsts lc;
    std::vector<double> real;  // channel-major real weights (float weights)
    std::vector<int64_t> q0;   // channel-major int8 weights (imported)
    std::vector<float> s0;
    if (const auto it = qconst_.find(w); it != qconst_.end()) {
      const auto sw = weight_scales(it->second, axis, oc);
      if (!sw) return std::nullopt;
      s0 = *sw;
      const ir::Value& cv = g_.values[it->second.value];
      q0 = channel_major(g_.const_i64(it->second.value), cv.shape, axis);
    } else if (opts_.quantize_float_weights && wv.is_const && wv.dtype == DType::kF32) {
      const auto f = channel_major(g_.const_f32(w), wv.shape, axis);
      real.assign(f.begin(), f.end());
      lc.from_float = true;
    } else {
      return std::nullopt;
    }
    const int64_t per = static_cast<int64_t>(lc.from_float ? real.size() : q0.size()) / oc;
    // The bias: raw int32 at the layer's scale (imported, matching), or real values.
    std::vector<std::optional<int64_t>> raw(static_cast<size_t>(oc));
    std::vector<double> real_b(static_cast<size_t>(oc), 0.0);
    std::optional<QConst> bq;
    if (b >= 0) {
      if (const auto it = qconst_.find(b); it != qconst_.end()) {
        bq = it->second;
        if (g_.values[bq->value].num_elements() != oc) return std::nullopt;
      } else if (g_.values[b].is_const && g_.values[b].dtype == DType::kF32) {
        const auto f = g_.const_f32(b);
        if (static_cast<int64_t>(f.size()) != oc) return std::nullopt;
        for (int64_t c = 0; c < oc; ++c) real_b[c] = f[c];
      } else {
        return std::nullopt;
      }
    }
    const double s_in = qx.scale[0];
    const int32_t zx = qx.zero_point[0];
    const int64_t dlo = -128 - zx, dhi = 127 - zx;
    std::vector<int64_t> braw;
    if (bq) braw = g_.const_i64(bq->value);
    lc.w.resize(static_cast<size_t>(oc * per));
    lc.scale.resize(static_cast<size_t>(oc));
    lc.bias.resize(static_cast<size_t>(oc));
    constexpr int64_t kLimit = int64_t{1} << 30;
    std::vector<int64_t> q(static_cast<size_t>(per));
    for (int64_t c = 0; c < oc; ++c) {
      // initial scale and bias form
      double start;
      if (lc.from_float) {
        float m = 0;
        for (int64_t k = 0; k < per; ++k) m = std::max(m, static_cast<float>(std::fabs(real[c * per + k])));
        start = m > 0 ? std::max(std::ldexp(1.0, static_cast<int>(std::ceil(std::log2(static_cast<double>(m) / 127.0)))),
                                 std::ldexp(1.0, -126))
                      : 0.0;  // all zero: from the floor
      } else {
        start = s0[c];
      }
      if (bq) {
        const double s_b = bq->q.scale_at(bq->q.per_tensor() ? 0 : static_cast<size_t>(c));
        const int64_t qb = braw[c] - bq->q.zero_point_at(bq->q.per_tensor() ? 0 : static_cast<size_t>(c));
        const double want = s_in * start;
        if (!lc.from_float && std::fabs(s_b - want) <= 1e-6 * want) raw[c] = qb;  // already at s_in * s_w
        real_b[c] = static_cast<double>(qb) * s_b;
      }
      if (start == 0.0) {
        // all-zero float weights: from the smallest power-of-two scale at which the bias can fit
        // (1 without a bias)
        start = real_b[c] == 0.0 ? 1.0
                                 : std::max(std::ldexp(1.0, static_cast<int>(std::floor(std::log2(
                                                                std::fabs(real_b[c]) / (s_in * kLimit))))),
                                            std::ldexp(1.0, -126));
      }
      auto check_scale = [&](double s) {
        if (!(s <= std::numeric_limits<float>::max()))
          ir::throw_unsupported(n, fmt::format("the bias {} of output channel {} is too large for the input scale {}: "
                                               "no float32 weight scale brings its accumulator into 32 bits",
                                               real_b[c], c, s_in));
      };
      check_scale(start);
      // The channel at scale `s` (k: the power of two it was raised by): weights, bias, range.
      int64_t bias_q = 0;
      auto at_scale = [&](double s, int k) -> bool {
        for (int64_t i = 0; i < per; ++i) {
          const double v = lc.from_float ? std::nearbyint(real[c * per + i] / s)
                                         : (k == 0 ? static_cast<double>(q0[c * per + i])
                                                   : std::nearbyint(std::ldexp(static_cast<double>(q0[c * per + i]), -k)));
          q[static_cast<size_t>(i)] = static_cast<int64_t>(std::clamp(v, -128.0, 127.0));
        }
        if (raw[c] && k == 0) {
          bias_q = *raw[c];
        } else {
          const double v = std::nearbyint(real_b[c] / (s_in * s));
          if (!(std::fabs(v) < 9.0e18)) return false;  // far outside any range (or not finite)
          bias_q = static_cast<int64_t>(v);
        }
        const AccRange r = channel_acc_range(q, bias_q, dlo, dhi);
        const int64_t lo = lc.from_float || k > 0 ? -kLimit : INT32_MIN;
        const int64_t hi = lc.from_float || k > 0 ? kLimit - 1 : INT32_MAX;
        return r.lo >= lo && r.hi <= hi;
      };
      int k = 0;
      if (!at_scale(start, 0)) {
        // estimate of the first power of two that can fit, from the bias alone
        const double need = std::fabs(real_b[c]) / (s_in * start * static_cast<double>(kLimit));
        k = std::max(1, need > 1 ? static_cast<int>(std::floor(std::log2(need))) : 1);
        while (true) {
          const double s = std::ldexp(start, k);
          check_scale(s);
          if (at_scale(s, k)) break;
          ++k;
        }
      }
      const float s_final = static_cast<float>(std::ldexp(start, k));
      lc.scale[c] = s_final;
      lc.bias[c] = static_cast<int32_t>(bias_q);
      for (int64_t i = 0; i < per; ++i) lc.w[c * per + i] = static_cast<int8_t>(q[static_cast<size_t>(i)]);
      lc.floored = lc.floored || (!lc.from_float && k > 0);
    }
    return lc;
  }

  /// An int8 weight constant with the values of `lc` and its per-channel parameters along
  /// `axis`, shaped like `src`: `src` itself when `reuse` (its values are those of `lc`) and it
  /// has no other parameters yet, else a new constant named `name` (a unique variant of it).
  int weight_value(int src, const LayerConsts& lc, int axis, bool reuse, const std::string& name) {
    QuantInfo q;
    q.scale = lc.scale;
    q.zero_point.assign(lc.scale.size(), 0);
    q.axis = axis;
    bool same = true;
    for (float s : lc.scale) same = same && s == lc.scale[0];
    if (same) q = QuantInfo::tensor(lc.scale[0], 0);
    if (reuse) {
      ir::Value& v = g_.values[src];
      if (!v.quant) {
        v.quant = q;
        return src;
      }
      if (*v.quant == q) return src;
    }
    const std::vector<int64_t> shape = g_.values[src].shape;
    const int id = g_.add_const_i8(g_.unique_name(name), shape, lc.w);
    g_.values[id].quant = q;
    return id;
  }

  bool try_qconv(const Node& n) {
    const int x = n.inputs[0], w = n.inputs[1], b = n.inputs.size() >= 3 ? n.inputs[2] : -1;
    const int rx = get_rep(x);
    const auto fq = find_fq(n.outputs[0]);
    if (rx < 0 || !fq) return false;
    const auto wq = qconst_.find(w);
    const int wconst = wq != qconst_.end() ? wq->second.value : w;
    if (g_.values[wconst].shape.size() != 4) return false;
    const int64_t oc = g_.values[wconst].shape[0];
    const auto lc = layer_consts(n, w, 0, oc, b, quant_of(rx));
    if (!lc) return false;
    const ir::Value& xv = g_.values[x];
    const auto win = ir::window_2d(n, xv.shape[2], xv.shape[3], g_.values[wconst].shape[2], g_.values[wconst].shape[3]);
    // imported weights as given: the constant itself; re-rounded or quantised here: a new one
    const bool as_given = !lc->from_float && !lc->floored;
    const int wid = weight_value(wconst, *lc, 0, as_given,
                                 g_.values[wconst].name + (lc->from_float ? "_i8" : lc->floored ? "_floored" : "_w"));
    const std::vector<int32_t> bias_copy = lc->bias;
    const int bid = g_.add_const_i32(g_.unique_name(n.name + "_bias_i32"), {oc}, bias_copy);
    const int y = n.outputs[0];
    const int out = new_value(g_.values[y].name + "_i8", DType::kI8, g_.values[y].shape, *fq);
    json a = {{"stride", {win.sh, win.sw}},
              {"pads", {win.pad_top, win.pad_left, win.pad_bottom, win.pad_right}},
              {"groups", ir::attr_int(n, "group", 1)},
              {"in_zero_point", quant_of(rx).zero_point[0]}};
    emit(n, "qconv2d", {rx, wid, bid}, {out}, std::move(a));
    rep_[y] = out;
    return true;
  }

  bool try_qdense(const Node& n) {
    const int a = n.inputs[0], bw = n.inputs[1];
    int c = -1;
    bool trans_b = false;
    if (n.op == "Gemm") {
      if (ir::attr_int(n, "transA", 0) != 0 || ir::attr_float(n, "alpha", 1.0f) != 1.0f ||
          ir::attr_float(n, "beta", 1.0f) != 1.0f)
        return false;
      trans_b = ir::attr_int(n, "transB", 0) != 0;
      if (n.inputs.size() >= 3) c = n.inputs[2];
    }
    const int ra = get_rep(a);
    const auto fq = find_fq(n.outputs[0]);
    if (ra < 0 || !fq) return false;
    const auto wq = qconst_.find(bw);
    const int wconst = wq != qconst_.end() ? wq->second.value : bw;
    const ir::Value& av = g_.values[a];
    const ir::Value& wv = g_.values[wconst];
    if (av.shape.size() != 2 || wv.shape.size() != 2) return false;
    const int64_t M = av.shape[0], K = av.shape[1];
    const int64_t N = trans_b ? wv.shape[0] : wv.shape[1];
    if ((trans_b ? wv.shape[1] : wv.shape[0]) != K) return false;
    if (c >= 0 && g_.values[c].num_elements() != N) return false;
    const QuantInfo qa = quant_of(ra);
    const auto lc = layer_consts(n, bw, trans_b ? 0 : 1, N, c, qa);
    if (!lc) return false;
    // Weights as OIHW [N, K, 1, 1]: the channel-major [N][K] order of layer_consts.
    const int wid = g_.add_const_i8(g_.unique_name(g_.values[bw].name + "_oihw"), {N, K, 1, 1}, lc->w);
    QuantInfo wqi;
    wqi.scale = lc->scale;
    wqi.zero_point.assign(N, 0);
    wqi.axis = 0;
    bool same = true;
    for (float s : lc->scale) same = same && s == lc->scale[0];
    g_.values[wid].quant = same ? QuantInfo::tensor(lc->scale[0], 0) : wqi;
    const std::vector<int32_t> bias_copy = lc->bias;
    const int bid = g_.add_const_i32(g_.unique_name(n.name + "_bias_i32"), {N}, bias_copy);
    const int y = n.outputs[0];
    const int x4 = new_value(g_.values[a].name + "_nchw", DType::kI8, {M, K, 1, 1}, qa);
    emit(n, "reshape", {ra}, {x4}, json::object(), "_reshape_in");
    const int y4 = new_value(g_.values[y].name + "_nchw", DType::kI8, {M, N, 1, 1}, *fq);
    json attrs = {{"stride", {1, 1}}, {"pads", {0, 0, 0, 0}}, {"groups", 1}, {"in_zero_point", qa.zero_point[0]}};
    emit(n, "qconv2d", {x4, wid, bid}, {y4}, std::move(attrs));
    const int out = new_value(g_.values[y].name + "_i8", DType::kI8, {M, N}, *fq);
    emit(n, "reshape", {y4}, {out}, json::object(), "_reshape_out");
    rep_[y] = out;
    return true;
  }

  bool try_qadd(const Node& n) {
    const auto fq = find_fq(n.outputs[0]);
    if (!fq) return false;
    const bool a_act = get_rep(n.inputs[0]) >= 0, b_act = get_rep(n.inputs[1]) >= 0;
    if (!a_act && !b_act) return false;  // both constants: nothing to quantise around
    const int ra = operand_rep(n.inputs[0]);
    const int rb = operand_rep(n.inputs[1]);
    if (ra < 0 || rb < 0) return false;
    const int y = n.outputs[0];
    const int out = new_value(g_.values[y].name + "_i8", DType::kI8, g_.values[y].shape, *fq);
    emit(n, "qadd", {ra, rb}, {out}, json{{"relu", false}});
    rep_[y] = out;
    return true;
  }

  bool try_qclip(const Node& n) {
    const int r = get_rep(n.inputs[0]);
    if (r < 0) return false;
    const QuantInfo& q = quant_of(r);
    float lo = 0.0f, hi = std::numeric_limits<float>::infinity();  // Relu
    if (n.op == "Clip") std::tie(lo, hi) = clip_bounds(n);
    auto qv = [&](float v) -> int32_t {
      if (std::isinf(v)) return v < 0 ? -128 : 127;
      return sat8(std::nearbyint(static_cast<double>(v) / q.scale[0]) + q.zero_point[0]);
    };
    // ONNX's Clip is min(max(x, min), max): with min > max every result is max (as in ONNX
    // Runtime and numpy), so the bounds are [max, max].
    const int32_t qlo = qv(lo), qhi = qv(hi);
    same_params(n, "qclip", json{{"lo", std::min(qlo, qhi)}, {"hi", qhi}});
    return true;
  }

  bool try_qavgpool(const Node& n) {
    const int r = get_rep(n.inputs[0]);
    const auto fq = find_fq(n.outputs[0]);
    if (r < 0 || !fq) return false;
    const int y = n.outputs[0];
    const int out = new_value(g_.values[y].name + "_i8", DType::kI8, g_.values[y].shape, *fq);
    if (n.op == "GlobalAveragePool") emit(n, "global_avgpool", {r}, {out});
    else emit(n, "avgpool", {r}, {out}, pool_attrs(n, true));
    rep_[y] = out;
    return true;
  }

  bool try_qconcat(const Node& n) {
    const auto fq = find_fq(n.outputs[0]);
    if (!fq) return false;
    std::vector<int> ins;
    for (int v : n.inputs) {
      const int r = operand_rep(v);
      if (r < 0) return false;
      ins.push_back(r);
    }
    const int y = n.outputs[0];
    const int64_t rank = static_cast<int64_t>(g_.values[y].shape.size());
    const int out = new_value(g_.values[y].name + "_i8", DType::kI8, g_.values[y].shape, *fq);
    emit(n, "concat", ins, {out}, json{{"axis", ir::normalize_axis(n, ir::attr_int(n, "axis", 0), rank)}});
    rep_[y] = out;
    return true;
  }

  /// Float fallback: the node runs in float32 on the CPU.
  void lower_float(const Node& n) {
    const std::string& op = n.op;
    const int y = n.outputs[0];
    auto f = [&](size_t k) { return get_flt(n.inputs[k], &n); };
    auto done = [&]() { flt_[y] = y; };
    if (op == "Relu") {
      emit(n, "relu_f32", {f(0)}, {y});
    } else if (op == "Clip") {
      const auto [lo, hi] = clip_bounds(n);
      if (lo == 0.0f && std::isinf(hi) && hi > 0) {
        emit(n, "relu_f32", {f(0)}, {y});
      } else {
        // min(max(x, lo), hi), an unbounded side (absent, or +-inf on its own side) left out of
        // the attributes; a NaN bound bounds nothing (max(x, NaN) = x), as in the reference
        if ((std::isinf(lo) && lo > 0) || (std::isinf(hi) && hi < 0))
          ir::throw_unsupported(n, fmt::format("float Clip [{}, {}]: a min of +inf or a max of -inf is not supported",
                                               lo, hi));
        json a = json::object();
        if (std::isfinite(lo)) a["lo"] = lo;
        if (std::isfinite(hi)) a["hi"] = hi;
        emit(n, "clip_f32", {f(0)}, {y}, a);
      }
    } else if (op == "Add") {
      emit(n, "add_f32", {f(0), f(1)}, {y});
    } else if (op == "Mul") {
      emit(n, "mul_f32", {f(0), f(1)}, {y});
    } else if (op == "Conv") {
      const ir::Value& xv = g_.values[n.inputs[0]];
      const ir::Value& wv = g_.values[n.inputs[1]];
      const auto win = ir::window_2d(n, xv.shape[2], xv.shape[3], wv.shape[2], wv.shape[3]);
      std::vector<int> ins = {f(0), f(1)};
      if (n.inputs.size() >= 3 && n.inputs[2] >= 0) ins.push_back(f(2));
      emit(n, "conv2d_f32", ins, {y},
           json{{"stride", {win.sh, win.sw}},
                {"pads", {win.pad_top, win.pad_left, win.pad_bottom, win.pad_right}},
                {"groups", ir::attr_int(n, "group", 1)}});
    } else if (op == "MatMul") {
      emit(n, "matmul_f32", {f(0), f(1)}, {y});
    } else if (op == "Gemm") {
      lower_float_gemm(n);
    } else if (op == "MaxPool") {
      emit(n, "maxpool_f32", {f(0)}, {y}, pool_attrs(n, false));
    } else if (op == "AveragePool" || op == "GlobalAveragePool") {
      emit(n, "avgpool_f32", {f(0)}, {y}, pool_attrs(n, true));
    } else if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Identity") {
      emit(n, "reshape", {f(0)}, {y});
    } else if (op == "Concat") {
      std::vector<int> ins;
      for (size_t k = 0; k < n.inputs.size(); ++k) ins.push_back(f(k));
      const int64_t rank = static_cast<int64_t>(g_.values[y].shape.size());
      emit(n, "concat", ins, {y}, json{{"axis", ir::normalize_axis(n, ir::attr_int(n, "axis", 0), rank)}});
    } else if (op == "Softmax") {
      const int64_t rank = static_cast<int64_t>(g_.values[y].shape.size());
      const int64_t axis = ir::normalize_axis(n, ir::attr_int(n, "axis", g_.opset < 13 ? 1 : -1), rank);
      if (g_.opset < 13 && axis != rank - 1)
        ir::throw_unsupported(n, fmt::format("opset {} Softmax over axes {}..{} (coerced to 2-D) is not supported", g_.opset,
                                             axis, rank - 1));
      emit(n, "softmax", {f(0)}, {y}, json{{"axis", axis}});
    } else {
      ir::throw_unsupported(n, "operator has no integer or float lowering");
    }
    done();
  }

  /// Clip's [min, max]: attributes before opset 11, constant inputs from 11; an absent bound is
  /// -inf / +inf. Used by the quantised (qclip) and the float (clip_f32) lowering alike.
  std::pair<float, float> clip_bounds(const Node& n) const {
    float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
    if (g_.opset < 11) return {ir::attr_float(n, "min", lo), ir::attr_float(n, "max", hi)};
    for (size_t k : {size_t{1}, size_t{2}}) {
      if (n.inputs.size() <= k || n.inputs[k] < 0) continue;  // absent: unbounded
      if (!g_.values[n.inputs[k]].is_const)
        ir::throw_unsupported(n, fmt::format("bound input {} ({}) is not a constant", k, k == 1 ? "min" : "max"));
      (k == 1 ? lo : hi) = ir::const_scalar_f32(g_, n.inputs[k], n, k == 1 ? "min (input 1)" : "max (input 2)");
    }
    return {lo, hi};
  }

  /// Float Gemm: Y = alpha * A * op(B) + beta * C with constant B (and C) folded into a
  /// [K, N] matrix for matmul_f32 and a bias for add_f32.
  void lower_float_gemm(const Node& n) {
    if (ir::attr_int(n, "transA", 0) != 0) ir::throw_unsupported(n, "transA = 1 is not supported");
    const int bw = n.inputs[1];
    const int bf = get_flt(bw, &n);
    if (!g_.values[bf].is_const) ir::throw_unsupported(n, "B must be a constant");
    const bool tb = ir::attr_int(n, "transB", 0) != 0;
    const float alpha = ir::attr_float(n, "alpha", 1.0f), beta = ir::attr_float(n, "beta", 1.0f);
    const auto raw = g_.const_f32(bf);
    const auto bshape = g_.values[bf].shape;
    const int64_t K = tb ? bshape[1] : bshape[0], N = tb ? bshape[0] : bshape[1];
    std::vector<float> m(static_cast<size_t>(K * N));
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < N; ++j) m[k * N + j] = alpha * (tb ? raw[j * K + k] : raw[k * N + j]);
    const int mid = g_.add_const_f32(g_.unique_name(g_.values[bw].name + "_kn"), {K, N}, m);
    const int y = n.outputs[0];
    const bool has_c = n.inputs.size() >= 3 && n.inputs[2] >= 0;
    if (!has_c) {
      emit(n, "matmul_f32", {get_flt(n.inputs[0], &n), mid}, {y});
      return;
    }
    const int t = new_value(g_.values[y].name + "_matmul", DType::kF32, g_.values[y].shape, std::nullopt);
    emit(n, "matmul_f32", {get_flt(n.inputs[0], &n), mid}, {t}, json::object(), "_matmul");
    int c = get_flt(n.inputs[2], &n);
    if (beta != 1.0f) {
      if (!g_.values[c].is_const) ir::throw_unsupported(n, "beta != 1 needs a constant C");
      auto cv = g_.const_f32(c);
      for (float& v : cv) v *= beta;
      const auto cshape = g_.values[c].shape;
      c = g_.add_const_f32(g_.unique_name(g_.values[c].name + "_beta"), cshape, cv);
    }
    emit(n, "add_f32", {t, c}, {y});
  }
};

}  // namespace

std::vector<int> insert_fake_quants(ir::Graph& g, const std::vector<FakeQuantMark>& marks) {
  std::vector<int> outs;
  outs.reserve(marks.size());
  std::vector<int> redirect(g.values.size(), -1);  // x -> its fake_quant output
  for (const FakeQuantMark& mark : marks) {
    const int x = mark.value;
    TESSEL_CHECK(x >= 0 && static_cast<size_t>(x) < redirect.size() && redirect[x] < 0,
                 "insert_fake_quants: value {} is not a value of the graph or is marked twice", x);
    ir::Value v;
    v.name = g.values[x].name + "_fq";
    v.dtype = DType::kF32;
    v.shape = g.values[x].shape;
    v.shape_known = g.values[x].shape_known;
    const int y = g.add_value(std::move(v));
    redirect[x] = y;
    outs.push_back(y);
  }
  // Redirect the readers of every marked value in one walk (the new nodes are not added yet;
  // graph outputs keep reading x).
  for (Node& m : g.nodes)
    for (int& in : m.inputs)
      if (in >= 0 && static_cast<size_t>(in) < redirect.size() && redirect[in] >= 0) in = redirect[in];
  for (size_t k = 0; k < marks.size(); ++k) {
    const int x = marks[k].value;
    Node n;
    n.name = g.values[x].name + "_fake_quant";
    n.op = kFakeQuant;
    n.domain = "tessel";
    n.source_op = "QuantizeLinear+DequantizeLinear";
    n.inputs = {x};
    n.outputs = {outs[k]};
    n.attrs = json{{"scale", marks[k].scale}, {"zero_point", marks[k].zero_point}};
    g.nodes.push_back(std::move(n));
  }
  return outs;
}

int insert_fake_quant(ir::Graph& g, int x, float scale, int32_t zero_point) {
  return insert_fake_quants(g, {{x, scale, zero_point}}).at(0);
}

void integerize(ir::Graph& g, const IntegerizeOptions& opts) {
  g.topo_sort();
  Integerizer(g, opts).run();
  g.topo_sort();
}

}  // namespace tessel::compiler::passes
