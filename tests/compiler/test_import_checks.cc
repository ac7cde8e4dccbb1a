// Regression tests of issue 7's importer and shape-rule defects, each a tiny ONNX model built
// here: zero-sized weights, out-of-range strides and pads, unbounded tensor sizes (each a crash
// or a bare "out of memory" before), attributes / inputs / outputs the operator does not define
// at the model's opset (Clip's min/max attributes at opset 13 were silently ignored), non-finite
// constants, Flatten's negative axis and ceil_mode pools (wrong shapes before). Every bad model
// must give a UserError naming the node (or tensor), the attribute or input and the value, from
// the importer or shape inference, on both the compile and the reference path.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "compiler/driver/compile.h"
#include "compiler/frontend/onnx_import.h"
#include "compiler/ir/op_util.h"
#include "compiler/passes/shape_inference.h"
#include "runtime/device.h"
#include "support/error.h"
#include "tests/compiler/test_util.h"

namespace tessel::compiler {
namespace {

using testing::OnnxBuilder;

/// The UserError message of compiling the model (CPU only, no calibration: every check here
/// happens before quantisation), checked to be the same for the float reference; "" when none.
std::string compile_error(const OnnxBuilder& b, const std::string& file) {
  const std::string path = b.save(file);
  std::string compile_msg, ref_msg;
  try {
    CompileOptions o;
    o.offload = false;
    (void)compile_onnx(path, o);
  } catch (const UserError& e) {
    compile_msg = e.what();
  }
  try {
    (void)ReferenceModel::load(path);
  } catch (const UserError& e) {
    ref_msg = e.what();
  }
  EXPECT_EQ(compile_msg, ref_msg) << "compile and reference disagree";
  return compile_msg;
}

std::string import_error(const OnnxBuilder& b) {
  try {
    (void)frontend::import_onnx_bytes(b.bytes(), "m");
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

void floats_attr(onnx::NodeProto* n, const std::string& key, float v) {
  auto* a = n->add_attribute();
  a->set_name(key);
  a->set_type(onnx::AttributeProto_AttributeType_FLOAT);
  a->set_f(v);
}

/// Conv over x [1,3,8,8] with weights `wshape` (filled with 0.5) and `attrs` (ints).
OnnxBuilder conv_model(std::vector<int64_t> wshape, const std::vector<std::pair<std::string, std::vector<int64_t>>>& attrs,
                       int64_t opset = 13) {
  OnnxBuilder b({1, 3, 8, 8}, opset);
  const int64_t n = ir::shape_elements(wshape);
  b.init(testing::f32_tensor("w", wshape, std::vector<float>(static_cast<size_t>(n), 0.5f)));
  auto* c = b.node("Conv", "conv1", {"x", "w"}, {"y"});
  for (const auto& [k, v] : attrs) OnnxBuilder::ints(c, k, v);
  b.output("y");
  return b;
}

// ---------------------------------------------------------------- defect 1: crashes

TEST(ImportChecks, ZeroSizedConvWeightsAreNamed) {
  // Was a SIGSEGV in the integerize pass (compile and run).
  EXPECT_EQ(compile_error(conv_model({0, 3, 3, 3}, {}), "zero_w.onnx"),
            "node 'conv1' (Conv): input 'w' has shape [0,3,3,3]; tensors with a zero-sized dimension are not supported");
  EXPECT_EQ(compile_error(conv_model({0, 3, 1, 1}, {}), "zero_w1.onnx"),
            "node 'conv1' (Conv): input 'w' has shape [0,3,1,1]; tensors with a zero-sized dimension are not supported");
}

/// The output shape after shape inference of the model `b` (which must import and infer).
std::vector<int64_t> inferred_output_shape(const OnnxBuilder& b) {
  ir::Graph g = frontend::import_onnx_bytes(b.bytes(), "m");
  passes::PassContext ctx;
  passes::shape_inference(g, ctx);
  return g.values[g.outputs[0]].shape;
}

TEST(ImportChecks, StridesLargerThanThePaddedInputGiveOneOutput) {
  // A stride larger than the padded input is legal ONNX when the kernel fits: exactly one window
  // along that dimension. Expected shapes from ONNX's formula floor((in + pads - k) / s) + 1:
  // H: (8 - 3) / s + 1 = 1 for every s > 5; W: (8 - 3) / 1 + 1 = 6. These were rejected ("stride
  // s is larger than the padded input 8"); before that, 2^32 and more crashed the CPU conv, 2^31
  // was an internal error, 65536 a bare "out of memory", 32768 ran in 6.3 GB: the strides are
  // clamped to the padded extent (the same single window) for every consumer. (Compiled and run
  // end to end, CPU and offloaded, against numpy: tests/compiler/onnx_spec_cases.py,
  // tessel_conv_huge_stride, tessel_*_k1_stride2_height1, tessel_*_stride_beyond_padded_input.)
  for (int64_t s : {int64_t{1} << 40, int64_t{1} << 32, int64_t{1} << 31, int64_t{65536}, int64_t{32768}, int64_t{9},
                    int64_t{8}}) {
    SCOPED_TRACE(s);
    const OnnxBuilder b = conv_model({4, 3, 3, 3}, {{"strides", {s, 1}}});
    EXPECT_EQ(inferred_output_shape(b), (std::vector<int64_t>{1, 4, 1, 6}));
  }
  EXPECT_EQ(compile_error(conv_model({4, 3, 3, 3}, {{"strides", {1, 0}}}), "stride0.onnx"),
            "node 'conv1' (Conv): strides [1,0] must be positive");
  // The finding's layers: kernel 1, stride 2 on a height of 1 (x [1,3,1,8]): H floor((1 - 1) / 2)
  // + 1 = 1, W floor((8 - 1) / 2) + 1 = 4; Conv, MaxPool, AveragePool.
  {
    OnnxBuilder b({1, 3, 1, 8});
    b.init(testing::f32_tensor("w", {2, 3, 1, 1}, std::vector<float>(6, 0.5f)));
    OnnxBuilder::ints(b.node("Conv", "conv1", {"x", "w"}, {"y"}), "strides", {2, 2});
    b.output("y");
    EXPECT_EQ(inferred_output_shape(b), (std::vector<int64_t>{1, 2, 1, 4}));
  }
  for (const char* op : {"MaxPool", "AveragePool"}) {
    SCOPED_TRACE(op);
    OnnxBuilder b({1, 3, 1, 8});
    auto* n = b.node(op, "pool1", {"x"}, {"y"});
    OnnxBuilder::ints(n, "kernel_shape", {1, 1});
    OnnxBuilder::ints(n, "strides", {2, 2});
    b.output("y");
    EXPECT_EQ(inferred_output_shape(b), (std::vector<int64_t>{1, 3, 1, 4}));
    // ceil_mode, kernel 2, stride 5, pads [1,0,0,0] on H = 1: span 2 - 2 = 0, ceil(0 / 5) + 1 = 1;
    // W: kernel 1, stride 9 on 8: ceil(7 / 9) + 1 = 2, less the window starting at 9 >= 8: 1.
    OnnxBuilder c({1, 3, 1, 8});
    auto* m = c.node(op, "pool1", {"x"}, {"y"});
    OnnxBuilder::ints(m, "kernel_shape", {2, 1});
    OnnxBuilder::ints(m, "strides", {5, 9});
    OnnxBuilder::ints(m, "pads", {1, 0, 0, 0});
    OnnxBuilder::integer(m, "ceil_mode", 1);
    c.output("y");
    EXPECT_EQ(inferred_output_shape(c), (std::vector<int64_t>{1, 3, 1, 1}));
  }
  // The kernel must still fit the padded input.
  EXPECT_EQ(compile_error(conv_model({4, 3, 9, 3}, {{"strides", {16, 1}}}), "kernel9.onnx"),
            "node 'conv1' (Conv): kernel 9x3 is larger than the padded input 8x8 (input 8x8, pads [0,0,0,0])");
}

TEST(ImportChecks, HugePadsAreBoundedBeforeAllocation) {
  // Pads of 100000 or 2^40 were a bare "out of memory".
  EXPECT_EQ(compile_error(conv_model({4, 3, 3, 3}, {{"pads", {100000, 100000, 100000, 100000}}}), "pads1e5.onnx"),
            "node 'conv1' (Conv): output 'y' has shape [1,4,200006,200006], 640038400576 bytes as f32, more than the "
            "1073741824-byte (1 GiB) limit on one tensor");
  const int64_t p = int64_t{1} << 40;
  EXPECT_EQ(compile_error(conv_model({4, 3, 3, 3}, {{"pads", {p, p, p, p}}}), "pads2e40.onnx"),
            fmt::format("node 'conv1' (Conv): output 'y': size overflows 64 bits ({} x {})", 4 * (2 * p + 6), 2 * p + 6));
  const int64_t big = std::numeric_limits<int64_t>::max() - 2;
  EXPECT_EQ(compile_error(conv_model({4, 3, 3, 3}, {{"pads", {big, 0, 0, 0}}}), "padsmax.onnx"),
            fmt::format("node 'conv1' (Conv): padded input: size overflows 64 bits (8 + {})", big));
  // Pools: a pad must be smaller than the kernel (a window would lie entirely in the padding).
  OnnxBuilder b({1, 1, 8, 8});
  auto* n = b.node("MaxPool", "pool1", {"x"}, {"y"});
  OnnxBuilder::ints(n, "kernel_shape", {3, 3});
  OnnxBuilder::ints(n, "pads", {3, 0, 0, 0});
  b.output("y");
  EXPECT_EQ(compile_error(b, "poolpad.onnx"),
            "node 'pool1' (MaxPool): pads [3,0,0,0] must be smaller than the kernel 3x3 (a window would lie entirely in "
            "the padding)");
}

TEST(ImportChecks, TensorAndTotalSizesAreBounded) {
  // A broadcast Add whose output would be 16 GiB.
  OnnxBuilder b({1, 65536, 1});
  b.init(testing::f32_tensor("c", {1, 1, 65536}, std::vector<float>(65536, 1.0f)));
  b.node("Add", "add1", {"x", "c"}, {"y"});
  b.output("y");
  EXPECT_EQ(compile_error(b, "bcast.onnx"),
            "node 'add1' (Add): output 'y' has shape [1,65536,65536], 17179869184 bytes as f32, more than the "
            "1073741824-byte (1 GiB) limit on one tensor");
  // A 1 GiB input through nine Relus: every tensor fits, together they exceed 8 GiB.
  OnnxBuilder r({1, int64_t{1} << 28});
  std::string prev = "x";
  for (int k = 0; k < 9; ++k) {
    const std::string out = k == 8 ? "y" : fmt::format("r{}", k);
    r.node("Relu", fmt::format("relu{}", k), {prev}, {out});
    prev = out;
  }
  r.output("y");
  EXPECT_EQ(compile_error(r, "total.onnx"),
            "node 'relu7' (Relu): output 'r7': the model's tensors need more than the 8589934592-byte (8 GiB) limit in "
            "all (9663676416 bytes so far)");
  // An initializer that claims a huge shape is rejected before its data is allocated.
  OnnxBuilder i({1, 4});
  onnx::TensorProto t;
  t.set_name("huge");
  t.set_data_type(onnx::TensorProto_DataType_FLOAT);
  t.add_dims(int64_t{1} << 40);
  t.set_raw_data(std::string(4, '\0'));
  i.init(t);
  i.node("Relu", "relu", {"x"}, {"y"});
  i.output("y");
  EXPECT_EQ(import_error(i),
            "initializer 'huge' has shape [1099511627776], 4398046511104 bytes as f32, more than the 1073741824-byte "
            "(1 GiB) limit on one tensor");
  t.add_dims(int64_t{1} << 40);
  *i.model.mutable_graph()->mutable_initializer(0) = t;
  EXPECT_EQ(import_error(i), "initializer 'huge': size overflows 64 bits (1099511627776 x 1099511627776)");
}

// ---------------------------------------------------------------- defect 2: opset definitions

TEST(ImportChecks, ClipAttributesAtOpset13AreAnError) {
  // Ran and ignored the bounds before.
  OnnxBuilder b({1, 4}, 13);
  auto* n = b.node("Clip", "clip1", {"x"}, {"y"});
  floats_attr(n, "min", 0.0f);
  floats_attr(n, "max", 6.0f);
  b.output("y");
  EXPECT_EQ(import_error(b),
            "node 'clip1' (Clip): attribute 'min' is not defined by Clip at opset 13 (at this opset 'min' is an input)");
  // At opset 10 they are Clip's attributes, and honoured.
  OnnxBuilder c({1, 4}, 10);
  auto* m = c.node("Clip", "clip1", {"x"}, {"y"});
  floats_attr(m, "min", 0.0f);
  floats_attr(m, "max", 6.0f);
  c.output("y");
  const auto ref = ReferenceModel::load(c.save("clip10.onnx"));
  const auto out = ref.run({testing::host_f32({1, 4}, {-1.0f, 2.0f, 7.0f, 6.5f})});
  EXPECT_EQ(testing::floats(out[0]), (std::vector<float>{0.0f, 2.0f, 6.0f, 6.0f}));
}

TEST(ImportChecks, EveryNodeIsCheckedAgainstItsOpsetDefinition) {
  auto one = [](const std::string& op, int64_t opset, std::vector<std::string> ins, std::vector<std::string> outs,
                const std::function<void(OnnxBuilder&, onnx::NodeProto*)>& edit) {
    OnnxBuilder b({1, 2, 4, 4}, opset);
    auto* n = b.node(op, "n1", std::move(ins), std::move(outs));
    edit(b, n);
    b.output("y");
    return import_error(b);
  };
  auto nothing = [](OnnxBuilder&, onnx::NodeProto*) {};
  EXPECT_EQ(one("Relu", 13, {"x", "x"}, {"y"}, nothing), "node 'n1' (Relu): has 2 inputs; Relu at opset 13 takes at most 1");
  EXPECT_EQ(one("Relu", 13, {"x"}, {"y", "z"}, nothing), "node 'n1' (Relu): has 2 outputs; Relu at opset 13 takes at most 1");
  EXPECT_EQ(one("MaxPool", 12, {"x"}, {"y"}, nothing),
            "node 'n1' (MaxPool): attribute 'kernel_shape' is required by MaxPool at opset 12");
  EXPECT_EQ(one("MaxPool", 9, {"x"}, {"y"},
                [](OnnxBuilder&, onnx::NodeProto* n) {
                  OnnxBuilder::ints(n, "kernel_shape", {2, 2});
                  OnnxBuilder::integer(n, "ceil_mode", 1);
                }),
            "node 'n1' (MaxPool): attribute 'ceil_mode' is not defined by MaxPool at opset 9");
  EXPECT_EQ(one("MaxPool", 12, {"x"}, {"y", "idx"},
                [](OnnxBuilder&, onnx::NodeProto* n) { OnnxBuilder::ints(n, "kernel_shape", {2, 2}); }),
            "node 'n1' (MaxPool): the indices output is not supported");
  EXPECT_EQ(one("Flatten", 13, {"x"}, {"y"}, [](OnnxBuilder&, onnx::NodeProto* n) { floats_attr(n, "axis", 1.0f); }),
            "node 'n1' (Flatten): attribute 'axis' has type FLOAT; Flatten at opset 13 defines it as INT");
  EXPECT_EQ(one("Conv", 13, {"x", ""}, {"y"}, nothing),
            "node 'n1' (Conv): input 1 ('W') has an empty name, but Conv at opset 13 requires it");
  EXPECT_EQ(one("QuantizeLinear", 9, {"x", "s"}, {"y"}, nothing),
            "node 'n1' (QuantizeLinear): operator ai.onnx::QuantizeLinear is not defined at opset 9 (the model's opset)");
  EXPECT_EQ(one("Gemm", 9, {"x", "x"}, {"y"}, nothing), "node 'n1' (Gemm): has 2 inputs; Gemm at opset 9 needs at least 3");
  EXPECT_EQ(one("Relu", 13, {"x"}, {"y"}, [](OnnxBuilder&, onnx::NodeProto* n) { OnnxBuilder::integer(n, "alpha", 1); }),
            "node 'n1' (Relu): attribute 'alpha' is not defined by Relu at opset 13");
  // An attribute ONNX defines that Tessel does not implement.
  EXPECT_EQ(one("Constant", 13, {}, {"y"},
                [](OnnxBuilder&, onnx::NodeProto* n) {
                  auto* a = n->add_attribute();
                  a->set_name("value_string");
                  a->set_type(onnx::AttributeProto_AttributeType_STRING);
                  a->set_s("s");
                }),
            "node 'n1' (Constant): attribute 'value_string' not supported");
  // value_float appeared in Constant-12.
  EXPECT_EQ(one("Constant", 11, {}, {"y"}, [](OnnxBuilder&, onnx::NodeProto* n) { floats_attr(n, "value_float", 1.0f); }),
            "node 'n1' (Constant): attribute 'value_float' is not defined by Constant at opset 11");
  // com.microsoft operators: the explicit table, and the model must import the domain.
  EXPECT_EQ(one("QLinearAdd", 13, {"x", "s", "z", "x", "s", "z"}, {"y"},
                [](OnnxBuilder& b, onnx::NodeProto* n) {
                  n->set_domain("com.microsoft");
                  auto* os = b.model.add_opset_import();
                  os->set_domain("com.microsoft");
                  os->set_version(1);
                }),
            "node 'n1' (QLinearAdd): has 6 inputs; com.microsoft QLinearAdd (version 1) needs at least 7");
  EXPECT_EQ(one("QLinearAdd", 13, {"x", "s", "z", "x", "s", "z", "s"}, {"y"},
                [](OnnxBuilder&, onnx::NodeProto* n) { n->set_domain("com.microsoft"); }),
            "node 'n1' (QLinearAdd): the model does not import the 'com.microsoft' domain of its operator");
}

// ---------------------------------------------------------------- defect 3: non-finite constants

TEST(ImportChecks, NonFiniteInitializersAreNamed) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (float bad : {nan, inf, -inf}) {
    OnnxBuilder b({1, 3, 8, 8});
    std::vector<float> w(4 * 27, 0.5f);
    w[5] = bad;
    b.init(testing::f32_tensor("w", {4, 3, 3, 3}, w));
    b.node("Conv", "conv1", {"x", "w"}, {"y"});
    b.output("y");
    EXPECT_EQ(compile_error(b, "nan_w.onnx"),
              fmt::format("initializer 'w' has the non-finite value {} at element 5 (of 108); only a Clip bound may be "
                          "+-inf",
                          bad));
  }
  // Constant nodes too.
  OnnxBuilder c({1, 4});
  auto* k = c.node("Constant", "c1", {}, {"b"});
  auto* a = k->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
  *a->mutable_t() = testing::f32_tensor("", {4}, {1.0f, inf, 0.0f, 0.0f});
  c.node("Add", "add1", {"x", "b"}, {"y"});
  c.output("y");
  EXPECT_EQ(import_error(c),
            "node 'c1' (Constant): value 'b' has the non-finite value inf at element 1 (of 4); only a Clip bound may be "
            "+-inf");
  // +-inf as a Clip bound means "no bound" and stays legal; the same constant read by anything
  // else is an error.
  OnnxBuilder d({1, 4});
  d.init(testing::f32_tensor("lo", {}, {0.0f}));
  d.init(testing::f32_tensor("hi", {}, {inf}));
  d.node("Clip", "clip1", {"x", "lo", "hi"}, {"y"});
  d.output("y");
  const auto ref = ReferenceModel::load(d.save("clip_inf.onnx"));
  EXPECT_EQ(testing::floats(ref.run({testing::host_f32({1, 4}, {-1.0f, 2.0f, 1e30f, 0.0f})})[0]),
            (std::vector<float>{0.0f, 2.0f, 1e30f, 0.0f}));
  d.node("Add", "add1", {"y", "hi"}, {"z"});
  d.model.mutable_graph()->mutable_output(0)->set_name("z");
  EXPECT_EQ(import_error(d),
            "initializer 'hi' has the non-finite value inf at element 0 (of 1); only a Clip bound may be +-inf");
  // A NaN bound is never legal.
  OnnxBuilder e({1, 4});
  e.init(testing::f32_tensor("lo", {}, {nan}));
  e.node("Clip", "clip1", {"x", "lo"}, {"y"});
  e.output("y");
  EXPECT_EQ(import_error(e),
            "initializer 'lo' has the non-finite value nan at element 0 (of 1); only a Clip bound may be +-inf");
  // Float attributes.
  OnnxBuilder f({2, 3});
  f.init(testing::f32_tensor("b", {3, 3}, std::vector<float>(9, 1.0f)));
  auto* gemm = f.node("Gemm", "fc", {"x", "b"}, {"y"});
  floats_attr(gemm, "alpha", nan);
  f.output("y");
  EXPECT_EQ(import_error(f), "node 'fc' (Gemm): attribute 'alpha' has the non-finite value nan");
}

TEST(ImportChecks, FoldingThatOverflowsIsNamed) {
  // Constant folding of 1e30 * 1e30 would give +inf weights.
  OnnxBuilder b({1, 3, 4, 4});
  b.init(testing::f32_tensor("w", {2, 3, 1, 1}, std::vector<float>(6, 1e30f)));
  b.init(testing::f32_tensor("k", {}, {1e30f}));
  b.node("Mul", "scale_w", {"w", "k"}, {"w2"});
  b.node("Conv", "conv1", {"x", "w2"}, {"y"});
  b.output("y");
  CompileOptions o;
  o.offload = false;
  o.calibration = {{testing::host_f32({1, 3, 4, 4}, std::vector<float>(48, 1.0f))}};
  try {
    (void)compile_onnx(b.save("fold_inf.onnx"), o);
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "node 'scale_w' (Mul): folding its constant inputs gives the non-finite value inf at element 0 (of 6) of "
              "output 'w2'");
  }
  // BatchNormalization with var + eps = 0 divides by zero.
  OnnxBuilder c({1, 2, 4, 4});
  c.init(testing::f32_tensor("w", {2, 2, 1, 1}, std::vector<float>(4, 1.0f)));
  for (const char* p : {"s", "bias", "mean"}) c.init(testing::f32_tensor(p, {2}, {1.0f, 1.0f}));
  c.init(testing::f32_tensor("var", {2}, {1.0f, -1e-5f}));
  c.node("Conv", "conv1", {"x", "w"}, {"t"});
  c.node("BatchNormalization", "bn1", {"t", "s", "bias", "mean", "var"}, {"y"});
  c.output("y");
  try {
    (void)compile_onnx(c.save("bn_zero.onnx"), o);
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "node 'bn1' (BatchNormalization): variance + epsilon of channel 1 is -1e-05 + 1e-05, not positive");
  }
}

// ---------------------------------------------------------------- defect 4: negative axes

TEST(ImportChecks, FlattenNegativeAxisGivesTheOnnxShapeAndValues) {
  // axis -1 on [2,3,4,5] is 24x5 (it was 120x1, and the reference shared the bug).
  for (const auto& [axis, shape] : std::vector<std::pair<int64_t, std::vector<int64_t>>>{
           {-1, {24, 5}}, {-2, {6, 20}}, {-3, {2, 60}}, {-4, {1, 120}}, {4, {120, 1}}, {0, {1, 120}}}) {
    OnnxBuilder b({2, 3, 4, 5});
    auto* n = b.node("Flatten", "flat", {"x"}, {"y"});
    OnnxBuilder::integer(n, "axis", axis);
    b.output("y");
    ir::Graph g = frontend::import_onnx_bytes(b.bytes(), "m");
    passes::PassContext ctx;
    passes::shape_inference(g, ctx);
    EXPECT_EQ(g.values[g.outputs[0]].shape, shape) << "axis " << axis;
    const auto ref = ReferenceModel::load(b.save("flatten.onnx"));
    std::vector<float> x(120);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
    const auto out = ref.run({testing::host_f32({2, 3, 4, 5}, x)});
    EXPECT_EQ(out[0].shape, shape) << "axis " << axis;
    EXPECT_EQ(testing::floats(out[0]), x);  // Flatten keeps the row-major order
  }
  OnnxBuilder bad({2, 3, 4, 5});
  OnnxBuilder::integer(bad.node("Flatten", "flat", {"x"}, {"y"}), "axis", -5);
  bad.output("y");
  EXPECT_EQ(compile_error(bad, "flatten_bad.onnx"), "node 'flat' (Flatten): axis -5 out of range for rank 4 (valid: -4..4)");
}

// ---------------------------------------------------------------- defect 5: ceil_mode pools

TEST(ImportChecks, CeilModePoolDropsTheWindowThatStartsInTheEndPadding) {
  // [1,1,5,5], kernel 2, stride 2, pads 1, ceil_mode: ceil((5+2-2)/2)+1 = 4 windows, the last
  // would start at padded row 6 = in + pad_begin, in the end padding: ONNX drops it (3x3). It was
  // a shape mismatch between shape inference (4x4) and the CPU kernel ("the pool gives
  // [1,1,3,3]").
  for (const char* op : {"MaxPool", "AveragePool"}) {
    OnnxBuilder b({1, 1, 5, 5});
    auto* n = b.node(op, "pool1", {"x"}, {"y"});
    OnnxBuilder::ints(n, "kernel_shape", {2, 2});
    OnnxBuilder::ints(n, "strides", {2, 2});
    OnnxBuilder::ints(n, "pads", {1, 1, 1, 1});
    OnnxBuilder::integer(n, "ceil_mode", 1);
    b.output("y");
    const std::string path = b.save("ceil_pool.onnx");
    std::vector<float> x(25);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
    const auto ref = ReferenceModel::load(path).run({testing::host_f32({1, 1, 5, 5}, x)});
    ASSERT_EQ(ref[0].shape, (std::vector<int64_t>{1, 1, 3, 3})) << op;
    // Windows start at -1, 1, 3 (rows and columns): [-1,1) [1,3) [3,5), inside the input.
    const std::vector<float> want_max = {0, 2, 4, 10, 12, 14, 20, 22, 24};
    const std::vector<float> want_avg = {0, 1.5f, 3.5f, 7.5f, 9, 11, 17.5f, 19, 21};
    EXPECT_EQ(testing::floats(ref[0]), std::string(op) == "MaxPool" ? want_max : want_avg) << op;
    // The compiled model (the float pool on the CPU) gives the same shape and values.
    CompileOptions o;
    o.offload = false;
    o.calibration = {{testing::host_f32({1, 1, 5, 5}, x)}};
    const CompileResult r = compile_onnx(path, o);
    auto dev = runtime::Device::create("fsim", r.exe.config, uint64_t{16} << 20);
    runtime::ExecOptions eo;
    eo.cpu_repeats = 1;
    runtime::GraphExecutor ex(r.exe, *dev, eo);
    const auto got = ex.run({testing::host_f32({1, 1, 5, 5}, x)});
    ASSERT_EQ(got[0].shape, (std::vector<int64_t>{1, 1, 3, 3})) << op;
  }
}

// QLinearConv lets w_scale be per channel while w_zero_point is one value (and the other way
// round), as ONNX Runtime accepts; DequantizeLinear would not (hostile review 4: the error named
// a node Tessel made up). With x = [0, 1, 2, 3] and x_scale 0.05 the accumulator of channel c is
// x / 0.05, so y[c] = x * w_scale[c], every value on the output grid (y_scale 0.05).
TEST(ImportChecks, QLinearConvPerChannelScaleWithOneZeroPoint) {
  auto scalar = [](const std::string& name, onnx::TensorProto_DataType t, int32_t v) {
    onnx::TensorProto p;
    p.set_name(name);
    p.set_data_type(t);
    p.add_int32_data(v);
    return p;
  };
  const std::vector<float> ws = {0.1f, 0.2f, 0.3f, 0.4f};
  for (const bool zp_per_channel : {false, true}) {
    testing::OnnxBuilder b({1, 1, 2, 2});
    b.init(testing::f32_tensor("xs", {}, {0.05f}));
    b.init(scalar("xz", onnx::TensorProto_DataType_UINT8, 128));
    onnx::TensorProto w;
    w.set_name("w");
    w.set_data_type(onnx::TensorProto_DataType_INT8);
    for (int64_t d : {4, 1, 1, 1}) w.add_dims(d);
    for (int i = 0; i < 4; ++i) w.add_int32_data(1);
    b.init(w);
    b.init(testing::f32_tensor("ws", {4}, ws));
    if (zp_per_channel) {
      onnx::TensorProto wz;
      wz.set_name("wz");
      wz.set_data_type(onnx::TensorProto_DataType_INT8);
      wz.add_dims(4);
      for (int i = 0; i < 4; ++i) wz.add_int32_data(0);
      b.init(wz);
      b.model.mutable_graph()->mutable_initializer(3)->clear_float_data();  // ws: one value
      b.model.mutable_graph()->mutable_initializer(3)->clear_dims();
      b.model.mutable_graph()->mutable_initializer(3)->add_float_data(0.1f);
    } else {
      b.init(scalar("wz", onnx::TensorProto_DataType_INT8, 0));
    }
    b.init(testing::f32_tensor("ys", {}, {0.05f}));
    b.init(scalar("yz", onnx::TensorProto_DataType_UINT8, 128));
    b.node("QuantizeLinear", "quant", {"x", "xs", "xz"}, {"xq"});
    testing::OnnxBuilder::ints(b.node("QLinearConv", "myconv", {"xq", "xs", "xz", "w", "ws", "wz", "ys", "yz"}, {"yq"}),
                               "kernel_shape", {1, 1});
    b.node("DequantizeLinear", "dequant", {"yq", "ys", "yz"}, {"y"});
    b.output("y");
    const std::string path = b.save(zp_per_channel ? "qlinearconv_mixed_ws.onnx" : "qlinearconv_mixed_zp.onnx");
    const std::vector<float> x = {0, 1, 2, 3};
    std::vector<float> want;
    for (int c = 0; c < 4; ++c)
      for (float v : x) want.push_back(v * (zp_per_channel ? 0.1f : ws[static_cast<size_t>(c)]));
    for (const bool offload : {false, true}) {
      CompileOptions o;
      o.offload = offload;
      const CompileResult r = compile_onnx(path, o);
      auto dev = runtime::Device::create("fsim", r.exe.config, uint64_t{16} << 20);
      runtime::ExecOptions eo;
      eo.cpu_repeats = 1;
      runtime::GraphExecutor ex(r.exe, *dev, eo);
      const std::vector<float> got = testing::floats(ex.run({testing::host_f32({1, 1, 2, 2}, x)})[0]);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i << " offload " << offload;
    }
  }
}

// Inputs ONNX defines as scalars (Clip's min/max, QLinearConv's x_scale, a zero point) are read
// through ir::const_scalar_*: a constant without exactly one element is a UserError naming the
// node and the input, never a read past its end (vector::at's std::out_of_range before).
TEST(ImportChecks, ScalarInputsMustHoldOneValue) {
  ir::Graph g;
  const int empty = g.add_const_f32("lo", {0}, {});
  const int two = g.add_const_f32("lo2", {2}, {1.0f, 2.0f});
  const int one = g.add_const_f32("one", {}, {0.25f});
  ir::Node n;
  n.op = "Clip";
  n.name = "c\x01";
  std::string msg;
  try {
    (void)ir::const_scalar_f32(g, empty, n, "min (input 1)");
  } catch (const UserError& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("min (input 1) has shape [0] (0 elements); it must hold exactly one value"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("'c\\x01'"), std::string::npos) << msg;
  EXPECT_THROW((void)ir::const_scalar_f32(g, two, n, "max (input 2)"), UserError);
  EXPECT_EQ(ir::const_scalar_f32(g, one, n, "min (input 1)"), 0.25f);
  EXPECT_EQ(ir::const_scalar_i64(g, g.add_const_i64("z", {1}, {-3}), n, "zero point"), -3);
}

// ---------------------------------------------------------------- issue 7 F2: element types

TEST(ImportChecks, InputTypesAreCheckedAgainstTheOperatorsTypeConstraints) {
  // An INT64 Conv weight was "internal error: value 'w' has no float or int8 form".
  {
    OnnxBuilder b({1, 3, 8, 8});
    b.init(testing::i64_tensor("w", {4, 3, 3, 3}, std::vector<int64_t>(108, 1)));
    b.node("Conv", "conv1", {"x", "w"}, {"y"});
    b.output("y");
    EXPECT_EQ(compile_error(b, "i64_w.onnx"),
              "node 'conv1' (Conv): input 1 ('W', value 'w') has type tensor(int64); Conv at opset 13 accepts "
              "tensor(float) there (of the types Tessel reads)");
  }
  // An INT64 Relu input from a Constant.
  {
    OnnxBuilder b({1, 3, 8, 8});
    b.init(testing::i64_tensor("c", {1}, {2}));
    b.node("Add", "add1", {"x", "c"}, {"y"});
    b.output("y");
    // Add's T allows int64, but X is float: both inputs of T must have one type.
    EXPECT_EQ(import_error(b),
              "node 'add1' (Add): input 1 ('B', value 'c') has type tensor(int64) but input 0 ('x') has type "
              "tensor(float); Add at opset 13 gives both type parameter 'T', one type");
  }
  // Reshape's shape must be int64 (a fixed type, not a parameter).
  {
    OnnxBuilder b({1, 3, 8, 8});
    b.init(testing::f32_tensor("s", {2}, {1, 192}));
    b.node("Reshape", "r", {"x", "s"}, {"y"});
    b.output("y");
    EXPECT_EQ(import_error(b), "node 'r' (Reshape): input 1 ('shape', value 's') has type tensor(float); Reshape at "
                               "opset 13 accepts tensor(int64) there (of the types Tessel reads)");
  }
  // The well-typed versions import.
  {
    OnnxBuilder b({1, 3, 8, 8});
    b.init(testing::i64_tensor("s", {2}, {1, 192}));
    b.node("Reshape", "r", {"x", "s"}, {"y"});
    b.output("y");
    EXPECT_EQ(import_error(b), "");
  }
}

// ---------------------------------------------------------------- issue 7 F10: one definition per name

TEST(ImportChecks, EveryNameIsDefinedOnce) {
  // A graph input listed twice was accepted.
  {
    OnnxBuilder b({1, 3, 8, 8});
    *b.model.mutable_graph()->add_input() = b.model.graph().input(0);
    b.node("Relu", "relu", {"x"}, {"y"});
    b.output("y");
    EXPECT_EQ(import_error(b), "'m': value 'x' is defined twice: by graph input 0 and by graph input 1");
  }
  // Two initializers of one name.
  {
    OnnxBuilder b({1, 3, 8, 8});
    b.init(testing::f32_tensor("c", {1}, {1}));
    b.init(testing::f32_tensor("c", {1}, {2}));
    b.node("Add", "add1", {"x", "c"}, {"y"});
    b.output("y");
    EXPECT_EQ(import_error(b), "'m': value 'c' is defined twice: by initializer 0 ('c') and by initializer 1 ('c')");
  }
  // A node output that redefines a graph input, and two nodes with one output name (SSA).
  {
    OnnxBuilder b({1, 3, 8, 8});
    b.node("Relu", "relu", {"x"}, {"x"});
    b.output("x");
    EXPECT_EQ(import_error(b), "'m': value 'x' is defined twice: by graph input 0 ('x') and by output 0 of node 'relu' (Relu)");
  }
  {
    OnnxBuilder b({1, 3, 8, 8});
    b.node("Relu", "r1", {"x"}, {"y"});
    b.node("Relu", "r2", {"x"}, {"y"});
    b.output("y");
    EXPECT_EQ(import_error(b), "'m': value 'y' is defined twice: by output 0 of node 'r1' (Relu) and by output 0 of node "
                               "'r2' (Relu)");
  }
  // The overlap ONNX allows: an initializer that is also a graph input (its default value).
  {
    OnnxBuilder b({1, 3, 8, 8});
    b.init(testing::f32_tensor("c", {1}, {1}));
    auto* in = b.model.mutable_graph()->add_input();
    in->set_name("c");
    in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(1);
    b.node("Add", "add1", {"x", "c"}, {"y"});
    b.output("y");
    EXPECT_EQ(import_error(b), "");
    // ... but listed twice as a graph input it is an error too.
    *b.model.mutable_graph()->add_input() = b.model.graph().input(1);
    EXPECT_EQ(import_error(b), "'m': value 'c' is defined twice: by graph input 1 and by graph input 2");
  }
}

}  // namespace
}  // namespace tessel::compiler
