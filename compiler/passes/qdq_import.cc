#include "compiler/passes/qdq_import.h"

#include <fmt/format.h>

#include <cmath>

#include "compiler/ir/op_util.h"
#include "compiler/passes/integerize.h"
#include "support/error.h"

namespace tessel::compiler::passes {
namespace {

using ir::DType;
using ir::Node;

bool is_q(const Node& n) { return !n.is_tessel() && n.op == "QuantizeLinear"; }
bool is_dq(const Node& n) { return !n.is_tessel() && n.op == "DequantizeLinear"; }

/// Node-building helper for the expansion.
struct Builder {
  ir::Graph& g;
  std::vector<Node>& out;
  const Node& src;

  int value(const std::string& suffix, DType d, std::vector<int64_t> shape) {
    ir::Value v;
    v.name = g.unique_name(src.name + suffix);
    v.dtype = d;
    v.shape = std::move(shape);
    v.shape_known = true;
    return g.add_value(std::move(v));
  }
  void node(const std::string& op, const std::string& suffix, std::vector<int> ins, std::vector<int> outs,
            nlohmann::json attrs = nlohmann::json::object()) {
    Node n;
    n.name = src.name + suffix;
    n.op = op;
    n.source_op = src.op;
    n.inputs = std::move(ins);
    n.outputs = std::move(outs);
    n.attrs = std::move(attrs);
    out.push_back(std::move(n));
  }
  int input(size_t k) const { return k < src.inputs.size() ? src.inputs[k] : -1; }
  /// DequantizeLinear(input x, scale, zp) -> new float value. The QLinear operators let the
  /// scale and the zero point each be per-tensor or per-channel independently (QLinearConv's
  /// w_scale [M] with a scalar w_zero_point, as ONNX Runtime accepts), DequantizeLinear wants one
  /// shape for both: a one-element constant is repeated to the other's length.
  int dq(size_t x, size_t scale, size_t zp, const std::string& suffix, int axis = -1) {
    const int v = value(suffix, DType::kF32, g.values[input(x)].shape);
    nlohmann::json a = nlohmann::json::object();
    if (axis >= 0) a["axis"] = axis;
    int s = input(scale), z = input(zp);
    if (s >= 0 && z >= 0 && g.values[s].is_const && g.values[z].is_const) {
      const int64_t ns = g.values[s].num_elements(), nz = g.values[z].num_elements();
      if (ns == 1 && nz > 1) {
        const std::vector<float> one = g.const_f32(s);
        const std::string name = g.unique_name(g.values[s].name + "_per_channel");
        s = g.add_const_f32(name, {nz}, std::vector<float>(static_cast<size_t>(nz), one[0]));
      } else if (nz == 1 && ns > 1) {
        const std::vector<uint8_t> bytes = g.values[z].data;  // copies: add_const grows g.values
        const DType dtype = g.values[z].dtype;
        const std::string name = g.unique_name(g.values[z].name + "_per_channel");
        std::vector<uint8_t> data;
        for (int64_t i = 0; i < ns; ++i) data.insert(data.end(), bytes.begin(), bytes.end());
        z = g.add_const(name, dtype, {ns}, std::move(data));
      }
    }
    node("DequantizeLinear", suffix, {input(x), s, z}, {v}, a);
    return v;
  }
  /// QuantizeLinear(float value f, scale, zp) -> the original output of src.
  void q(int f, size_t scale, size_t zp) {
    node("QuantizeLinear", "_quantize", {f, input(scale), input(zp)}, {src.outputs[0]});
  }
};

/// Step 1: QLinear* operators -> DequantizeLinear -> float operator -> QuantizeLinear.
void expand_qlinear(ir::Graph& g) {
  std::vector<Node> out;
  std::vector<Node> nodes = std::move(g.nodes);
  for (Node& n : nodes) {
    const std::string& op = n.op;
    if (n.is_tessel() ||
        (op != "QLinearConv" && op != "QLinearMatMul" && op != "QLinearAdd" && op != "QLinearGlobalAveragePool")) {
      out.push_back(std::move(n));
      continue;
    }
    Builder b{g, out, n};
    const std::vector<int64_t> y_shape = g.values[n.outputs[0]].shape;
    if (op == "QLinearConv") {
      const int x = b.dq(0, 1, 2, "_dq_x");
      const int w = b.dq(3, 4, 5, "_dq_w", 0);
      std::vector<int> ins = {x, w};
      if (b.input(8) >= 0) {
        // Bias: int32 at scale x_scale * w_scale[c], zero point 0.
        for (size_t k : {1, 4})
          if (!g.values[b.input(k)].is_const) ir::throw_unsupported(n, fmt::format("input {} (scale) is not a constant", k));
        const float xs = ir::const_scalar_f32(g, b.input(1), n, "x_scale (input 1)");
        auto ws = g.const_f32(b.input(4));
        for (float& s : ws) s *= xs;
        const int64_t oc = g.values[b.input(8)].num_elements();
        if (ws.size() != 1 && static_cast<int64_t>(ws.size()) != oc)
          ir::throw_unsupported(n, fmt::format("w_scale has {} elements, bias {}", ws.size(), oc));
        const int bs = g.add_const_f32(g.unique_name(n.name + "_bias_scale"), {static_cast<int64_t>(ws.size())}, ws);
        const int bv = b.value("_dq_b", DType::kF32, {oc});
        nlohmann::json a = nlohmann::json::object();
        if (ws.size() > 1) a["axis"] = 0;
        b.node("DequantizeLinear", "_dq_b", {b.input(8), bs, -1}, {bv}, a);
        ins.push_back(bv);
      }
      const int y = b.value("_conv", DType::kF32, y_shape);
      b.node("Conv", "", ins, {y}, n.attrs);
      b.q(y, 6, 7);
    } else if (op == "QLinearMatMul") {
      const int a = b.dq(0, 1, 2, "_dq_a");
      // Per-column scales of B belong to its last dimension (N).
      const bool per_col = g.values[b.input(4)].num_elements() > 1;
      const int last = static_cast<int>(g.values[b.input(3)].shape.size()) - 1;
      const int w = b.dq(3, 4, 5, "_dq_b", per_col ? last : -1);
      const int y = b.value("_matmul", DType::kF32, y_shape);
      b.node("MatMul", "", {a, w}, {y});
      b.q(y, 6, 7);
    } else if (op == "QLinearAdd") {
      const int a = b.dq(0, 1, 2, "_dq_a");
      const int c = b.dq(3, 4, 5, "_dq_b");
      const int y = b.value("_add", DType::kF32, y_shape);
      b.node("Add", "", {a, c}, {y});
      b.q(y, 6, 7);
    } else {
      const int x = b.dq(0, 1, 2, "_dq_x");
      const int y = b.value("_pool", DType::kF32, y_shape);
      b.node("GlobalAveragePool", "", {x}, {y});
      b.q(y, 3, 4);
    }
  }
  g.nodes = std::move(out);
}

bool transparent(const Node& n) {
  if (n.is_tessel()) return false;
  const std::string& op = n.op;
  return op == "MaxPool" || op == "Reshape" || op == "Flatten" || op == "Identity" || op == "Squeeze" ||
         op == "Unsqueeze";
}

/// Step 2: P(Q(v)) -> Q(P(v)) for quantisation-transparent P, until nothing moves. One walk in
/// node (topological) order: the moved QuantizeLinear is emitted right after P and becomes the
/// producer of P's old output, so a transparent node further down the chain sees it when the walk
/// gets there (a chain of k transparent nodes moves the quantisation k times in O(k)).
void move_quantize_down(ir::Graph& g) {
  std::vector<Node> nodes = std::move(g.nodes);
  g.nodes.clear();
  g.nodes.reserve(nodes.size());
  std::vector<int> producers(g.values.size(), -1);  // value -> index in g.nodes
  auto set_producer = [&](const Node& n, int index) {
    for (int o : n.outputs) {
      if (static_cast<size_t>(o) >= producers.size()) producers.resize(g.values.size(), -1);
      producers[o] = index;
    }
  };
  for (Node& p : nodes) {
    const int qv = transparent(p) && !p.inputs.empty() ? p.inputs[0] : -1;
    const int qn = qv >= 0 && static_cast<size_t>(qv) < producers.size() ? producers[qv] : -1;
    if (qn < 0 || !is_q(g.nodes[qn])) {
      set_producer(p, static_cast<int>(g.nodes.size()));
      g.nodes.push_back(std::move(p));
      continue;
    }
    const Node q = g.nodes[qn];
    const int out = p.outputs[0];
    ir::Value f;
    f.name = g.unique_name(g.values[out].name + "_float");
    f.dtype = DType::kF32;
    f.shape = g.values[out].shape;
    f.shape_known = true;
    const int fv = g.add_value(std::move(f));
    p.inputs[0] = q.inputs[0];
    p.outputs[0] = fv;
    Node nq;
    nq.name = p.name + "_quantize";
    nq.op = "QuantizeLinear";
    nq.source_op = q.source_op;
    nq.inputs = q.inputs;
    nq.inputs[0] = fv;
    nq.outputs = {out};
    nq.attrs = q.attrs;
    set_producer(p, static_cast<int>(g.nodes.size()));
    g.nodes.push_back(std::move(p));
    set_producer(nq, static_cast<int>(g.nodes.size()));
    g.nodes.push_back(std::move(nq));
  }
  g.remove_dead();
}

/// Per-tensor (scale, zero point) of a Q/DQ node, with uint8 moved to int8.
std::pair<float, int32_t> qparams(const ir::Graph& g, const Node& n) {
  if (n.inputs.size() < 2 || n.inputs[1] < 0 || !g.values[n.inputs[1]].is_const)
    ir::throw_unsupported(n, "the scale must be a constant");
  const auto s = g.const_f32(n.inputs[1]);
  if (s.size() != 1)
    ir::throw_unsupported(n, fmt::format("per-axis quantisation of activations ({} scales) is not supported", s.size()));
  if (!(s[0] > 0.0f) || !std::isfinite(s[0])) ir::throw_unsupported(n, fmt::format("scale {} must be positive and finite", s[0]));
  int32_t zp = 0;
  DType t = DType::kU8;  // ONNX default zero point type
  if (n.inputs.size() >= 3 && n.inputs[2] >= 0) {
    const ir::Value& z = g.values[n.inputs[2]];
    if (!z.is_const) ir::throw_unsupported(n, "the zero point must be a constant");
    t = z.dtype;
    zp = static_cast<int32_t>(ir::const_scalar_i64(g, n.inputs[2], n, "the zero point (input 2)"));
  }
  if (t == DType::kU8) zp -= 128;
  else if (t != DType::kI8)
    ir::throw_unsupported(n, fmt::format("activation type {} not supported (uint8 or int8)", ir::to_string(t)));
  return {s[0], zp};
}

/// Step 3: Q -> DQ pairs with equal parameters -> fake_quant.
void collapse_pairs(ir::Graph& g) {
  const auto producers = g.producers();
  std::vector<Node> out;
  const std::vector<Node>& nodes = g.nodes;
  for (const Node& n : nodes) {
    if (!is_dq(n) || g.values[n.inputs[0]].is_const) {
      out.push_back(n);
      continue;
    }
    const int p = producers[n.inputs[0]];
    if (p < 0 || !is_q(nodes[p]))
      ir::throw_unsupported(n, fmt::format("its input '{}' is not produced by a QuantizeLinear", g.values[n.inputs[0]].name));
    const Node& q = nodes[p];
    const auto qp = qparams(g, q), dp = qparams(g, n);
    if (qp != dp)
      ir::throw_unsupported(n, fmt::format("parameters (scale {}, zero point {}) differ from those of its QuantizeLinear "
                                           "'{}' (scale {}, zero point {})",
                                           dp.first, dp.second, q.name, qp.first, qp.second));
    Node fq;
    fq.name = n.name;
    fq.op = kFakeQuant;
    fq.domain = "tessel";
    fq.source_op = "QuantizeLinear+DequantizeLinear";
    fq.inputs = {q.inputs[0]};
    fq.outputs = n.outputs;
    fq.attrs = nlohmann::json{{"scale", qp.first}, {"zero_point", qp.second}};
    out.push_back(std::move(fq));
  }
  g.nodes = std::move(out);
  // Every remaining QuantizeLinear output must now be unused.
  const auto after = g.consumers();
  for (const Node& n : g.nodes) {
    if (!is_q(n)) continue;
    const int v = n.outputs[0];
    if (g.is_output(v))
      ir::throw_unsupported(n, fmt::format("quantised graph output '{}' is not supported (outputs must be float)",
                                           g.values[v].name));
    for (int c : after[v])
      ir::throw_unsupported(g.nodes[c], fmt::format("operator cannot take the quantised tensor '{}' from '{}'",
                                                    g.values[v].name, n.name));
  }
  g.remove_dead();
}

}  // namespace

void qdq_import(ir::Graph& g, PassContext& ctx) {
  bool quantized = false;
  for (const Node& n : g.nodes)
    if (!n.is_tessel() && (n.op == "QuantizeLinear" || n.op == "DequantizeLinear" || n.op.rfind("QLinear", 0) == 0))
      quantized = true;
  if (!quantized) return;
  ctx.model_was_quantized = true;
  expand_qlinear(g);
  g.topo_sort();
  move_quantize_down(g);
  collapse_pairs(g);
  integerize(g);
}

}  // namespace tessel::compiler::passes
