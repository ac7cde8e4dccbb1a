// Generated ONNX models of a given node count, for the compiler's scaling test
// (tests/compiler/test_scaling.cc) and benchmark (bench/compile_scaling_bench.cc): long chains
// that make any pass whose cost grows faster than n log n in the number of nodes stand out.
//
// Every model has one float input "x" of shape [1, 8, 4, 4] (NCHW) and one output; weights come
// from a fixed seed (splitmix64), so a model's bytes depend only on (kind, nodes).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "support/error.h"

namespace tessel::compiler::testing {

/// The model families.
///  - kRelu: x -> Relu -> Relu -> ... (`nodes` Relu nodes).
///  - kConvRelu: (Conv 1x1 8->8, near-identity weights, bias) -> Relu, repeated (2 nodes each);
///    every Conv is offloaded to the accelerator by default.
///  - kAddDiamond: y = Add(Relu(x), Relu(x)) (two Relu nodes reading one value), repeated (3 nodes
///    each): values with two consumers and nodes with two inputs.
///  - kQdqRelu: an int8 QDQ model: (QuantizeLinear -> DequantizeLinear -> Relu), repeated (3 nodes
///    each), then a final QuantizeLinear -> DequantizeLinear: the qdq_import path.
///  - kMixed: (Conv 1x1 -> Add of a per-channel constant -> BatchNormalization -> Identity ->
///    Relu -> MaxPool 1x1), repeated (6 nodes each): exercises fuse_bias, fold_batchnorm and the
///    Identity forwarding of constant_folding on long chains.
///  - kQdqPool: QuantizeLinear -> MaxPool 1x1 on the int8 tensor (`nodes` - 2 of them) ->
///    DequantizeLinear: qdq_import moves the quantisation down the whole chain.
///  - kWideGemm: not a chain but one wide layer: GlobalAveragePool -> Flatten -> Gemm with a
///    weight [8, `nodes`] (3 nodes; `nodes` is the Gemm's output width), offloaded by default:
///    makes a lowering step whose cost grows faster than n log n in a layer's width stand out.
enum class ChainKind { kRelu, kConvRelu, kAddDiamond, kQdqRelu, kMixed, kQdqPool, kWideGemm };

/// "relu", "conv_relu", "add_diamond", "qdq_relu", "mixed", "qdq_pool".
inline const char* chain_kind_name(ChainKind k) {
  switch (k) {
    case ChainKind::kRelu: return "relu";
    case ChainKind::kConvRelu: return "conv_relu";
    case ChainKind::kAddDiamond: return "add_diamond";
    case ChainKind::kQdqRelu: return "qdq_relu";
    case ChainKind::kMixed: return "mixed";
    case ChainKind::kQdqPool: return "qdq_pool";
    case ChainKind::kWideGemm: return "wide_gemm";
  }
  return "?";
}

/// True when the size of `k`'s model is a layer width rather than a node count.
inline bool chain_size_is_width(ChainKind k) { return k == ChainKind::kWideGemm; }

/// All kinds, in the order above.
inline std::vector<ChainKind> all_chain_kinds() {
  return {ChainKind::kRelu,    ChainKind::kConvRelu, ChainKind::kAddDiamond,
          ChainKind::kQdqRelu, ChainKind::kMixed,    ChainKind::kQdqPool, ChainKind::kWideGemm};
}

/// Parses a name of chain_kind_name(); throws UserError naming `name` and the valid names.
inline ChainKind parse_chain_kind(const std::string& name) {
  for (ChainKind k : all_chain_kinds())
    if (name == chain_kind_name(k)) return k;
  throw_user_error(
      "unknown chain model '{}': expected relu, conv_relu, add_diamond, qdq_relu, mixed, qdq_pool or wide_gemm", name);
}

/// Input shape of every chain model.
inline std::vector<int64_t> chain_input_shape() { return {1, 8, 4, 4}; }

namespace chain_detail {

inline uint64_t splitmix64(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
/// Uniform in [-1, 1).
inline float uniform(uint64_t& s) { return static_cast<float>(splitmix64(s) >> 40) / 8388608.0f - 1.0f; }

struct Builder {
  onnx::ModelProto model;
  onnx::GraphProto* g = nullptr;
  uint64_t seed = 20261201;
  Builder() {
    model.set_ir_version(7);
    auto* op = model.add_opset_import();
    op->set_domain("");
    op->set_version(13);
    g = model.mutable_graph();
    g->set_name("chain");
    auto* in = g->add_input();
    in->set_name("x");
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    for (int64_t d : chain_input_shape()) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  onnx::NodeProto* node(const char* op, const std::string& name, std::vector<std::string> ins, const std::string& out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& i : ins) n->add_input(i);
    n->add_output(out);
    return n;
  }
  void init_f32(const std::string& name, std::vector<int64_t> dims, const std::vector<float>& v) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto_DataType_FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float x : v) t->add_float_data(x);
  }
  void init_scalar(const std::string& name, int type, int32_t i, float f) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    if (type == onnx::TensorProto_DataType_FLOAT) t->add_float_data(f);
    else t->add_int32_data(i);
  }
  static void ints(onnx::NodeProto* n, const char* key, std::vector<int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto_AttributeType_INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  /// 8x8 1x1 weights: identity plus +-0.05 noise (activations keep their magnitude through a
  /// long chain), and a small bias.
  std::vector<float> conv_weights() {
    std::vector<float> w(64);
    for (int o = 0; o < 8; ++o)
      for (int i = 0; i < 8; ++i) w[o * 8 + i] = (o == i ? 1.0f : 0.0f) + 0.05f * uniform(seed);
    return w;
  }
  std::vector<float> small(size_t n, float scale) {
    std::vector<float> v(n);
    for (float& x : v) x = scale * uniform(seed);
    return v;
  }
};

}  // namespace chain_detail

/// Serialised ModelProto of `kind` with about `nodes` nodes (rounded down to whole repeats of the
/// kind's block, at least one block; for kWideGemm, the output width). Throws UserError for
/// `nodes` < 1.
inline std::string chain_model(ChainKind kind, int64_t nodes) {
  if (nodes < 1) throw_user_error("chain model with {} nodes: needs at least 1", nodes);
  chain_detail::Builder b;
  std::string x = "x";
  auto next = [&](const std::string& stem, int64_t i) { return fmt::format("{}{}", stem, i); };
  switch (kind) {
    case ChainKind::kRelu:
      for (int64_t i = 0; i < nodes; ++i) {
        b.node("Relu", next("relu", i), {x}, next("r", i));
        x = next("r", i);
      }
      break;
    case ChainKind::kConvRelu:
      for (int64_t i = 0; i < std::max<int64_t>(1, nodes / 2); ++i) {
        b.init_f32(next("w", i), {8, 8, 1, 1}, b.conv_weights());
        b.init_f32(next("b", i), {8}, b.small(8, 0.05f));
        b.node("Conv", next("conv", i), {x, next("w", i), next("b", i)}, next("c", i));
        b.node("Relu", next("relu", i), {next("c", i)}, next("r", i));
        x = next("r", i);
      }
      break;
    case ChainKind::kAddDiamond:
      for (int64_t i = 0; i < std::max<int64_t>(1, nodes / 3); ++i) {
        b.node("Relu", next("left", i), {x}, next("a", i));
        b.node("Relu", next("right", i), {x}, next("b", i));
        b.node("Add", next("add", i), {next("a", i), next("b", i)}, next("s", i));
        x = next("s", i);
      }
      break;
    case ChainKind::kQdqRelu:
      b.init_scalar("scale", onnx::TensorProto_DataType_FLOAT, 0, 1.0f / 32.0f);
      b.init_scalar("zp", onnx::TensorProto_DataType_INT8, 0, 0.0f);
      for (int64_t i = 0; i < std::max<int64_t>(1, nodes / 3); ++i) {
        b.node("QuantizeLinear", next("q", i), {x, "scale", "zp"}, next("qv", i));
        b.node("DequantizeLinear", next("dq", i), {next("qv", i), "scale", "zp"}, next("dv", i));
        b.node("Relu", next("relu", i), {next("dv", i)}, next("r", i));
        x = next("r", i);
      }
      b.node("QuantizeLinear", "q_out", {x, "scale", "zp"}, "qv_out");
      b.node("DequantizeLinear", "dq_out", {"qv_out", "scale", "zp"}, "y");
      x = "y";
      break;
    case ChainKind::kMixed:
      for (int64_t i = 0; i < std::max<int64_t>(1, nodes / 6); ++i) {
        b.init_f32(next("w", i), {8, 8, 1, 1}, b.conv_weights());
        b.init_f32(next("bias", i), {1, 8, 1, 1}, b.small(8, 0.05f));
        std::vector<float> gamma = b.small(8, 0.1f), beta = b.small(8, 0.05f), mean = b.small(8, 0.05f);
        std::vector<float> var = b.small(8, 0.1f);
        for (float& v : gamma) v += 1.0f;
        for (float& v : var) v += 1.0f;
        b.init_f32(next("gamma", i), {8}, gamma);
        b.init_f32(next("beta", i), {8}, beta);
        b.init_f32(next("mean", i), {8}, mean);
        b.init_f32(next("var", i), {8}, var);
        b.node("Conv", next("conv", i), {x, next("w", i)}, next("c", i));
        b.node("Add", next("addb", i), {next("c", i), next("bias", i)}, next("cb", i));
        b.node("BatchNormalization", next("bn", i),
               {next("cb", i), next("gamma", i), next("beta", i), next("mean", i), next("var", i)}, next("n", i));
        b.node("Identity", next("id", i), {next("n", i)}, next("ni", i));
        b.node("Relu", next("relu", i), {next("ni", i)}, next("r", i));
        auto* pool = b.node("MaxPool", next("pool", i), {next("r", i)}, next("p", i));
        chain_detail::Builder::ints(pool, "kernel_shape", {1, 1});
        x = next("p", i);
      }
      break;
    case ChainKind::kQdqPool:
      b.init_scalar("scale", onnx::TensorProto_DataType_FLOAT, 0, 1.0f / 32.0f);
      b.init_scalar("zp", onnx::TensorProto_DataType_INT8, 3, 0.0f);
      b.node("QuantizeLinear", "q", {x, "scale", "zp"}, "q0");
      x = "q0";
      for (int64_t i = 0; i < std::max<int64_t>(1, nodes - 2); ++i) {
        auto* pool = b.node("MaxPool", next("pool", i), {x}, next("q", i + 1));
        chain_detail::Builder::ints(pool, "kernel_shape", {1, 1});
        x = next("q", i + 1);
      }
      b.node("DequantizeLinear", "dq", {x, "scale", "zp"}, "y");
      x = "y";
      break;
    case ChainKind::kWideGemm: {
      b.node("GlobalAveragePool", "gap", {x}, "m");
      b.node("Flatten", "flatten", {"m"}, "f");
      b.init_f32("w", {8, nodes}, b.small(static_cast<size_t>(8 * nodes), 1.0f));
      b.node("Gemm", "gemm", {"f", "w"}, "y");
      x = "y";
      break;
    }
  }
  b.g->add_output()->set_name(x);
  return b.model.SerializeAsString();
}

/// A deterministic calibration input for the chain models: float32 of chain_input_shape(),
/// uniform in [-2, 2) (splitmix64, fixed seed).
inline std::vector<float> chain_input() {
  uint64_t s = 7;
  std::vector<float> v(8 * 4 * 4);
  for (float& x : v) x = 2.0f * chain_detail::uniform(s);
  return v;
}

}  // namespace tessel::compiler::testing
