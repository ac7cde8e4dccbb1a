// Conformance with the ONNX specification's own operator test cases and Tessel's edge cases,
// whose expected outputs are computed independently with numpy (tests/compiler/
// onnx_spec_cases.py exports them at test time into TESSEL_SPEC_CASES_DIR; CTest fixture
// compiler_onnx_spec_export). Every case runs
//  - on the float reference interpreter (ReferenceModel: import, shape inference, evaluation),
//    compared with ONNX's tolerance (|got - want| <= 1e-7 + 1e-3 |want|; integers exactly), and
//  - compiled (compile_onnx, then the GraphExecutor) on the CPU and with convolutions and dense
//    layers offloaded to the accelerator (fsim), where it applies: a float model is quantised by
//    Tessel with the case's input as calibration, so it is compared within its quantisation
//    error (kCompiledTolerance of the output range).
// A case Tessel does not run must be rejected with a UserError (never a crash, an internal
// error or a wrong value), and the rejection must be one listed in kRejected below (or, for
// Tessel's cases, the case's expect_error) with the message it is listed with, so a new
// rejection or a changed message fails the test as a wrong value would.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compiler/driver/compile.h"
#include "runtime/device.h"
#include "runtime/graph_executor.h"
#include "support/error.h"

namespace tessel::compiler {
namespace {

using nlohmann::json;

/// Compiled float models are quantised to int8 with power-of-two scales: outputs may differ from
/// the float values by a few steps of the output scale (2^ceil(log2(max/127)), up to 1/64 of the
/// range) accumulated over the layer; the largest seen is 0.025 of the range (printed by the
/// test). Wrong attribute semantics (axes, pads, strides, windows) give errors of the order of
/// the range itself.
constexpr double kCompiledTolerance = 0.05;

/// Expected rejections: case -> a substring of the UserError, for the reference path ("ref") and
/// the compiled path ("compiled"; absent: the compiled path must pass or not apply). Every
/// entry must be hit; a listed case that runs fails the test.
struct Rejection {
  const char* ref;
  const char* compiled;
};
const std::map<std::string, Rejection>& rejected() {
  static const std::map<std::string, Rejection> r = {
      // Pools and convolutions: 1-D and 3-D are not supported (only 2-D NCHW).
      {"test_averagepool_1d_default", {"only 2-D", nullptr}},
      {"test_averagepool_3d_default", {"only 2-D", nullptr}},
      {"test_maxpool_1d_default", {"only 2-D", nullptr}},
      {"test_maxpool_3d_default", {"only 2-D", nullptr}},
      {"test_maxpool_2d_dilations", {"dilations [2,2] not supported", nullptr}},
      {"test_maxpool_with_argmax_2d_precomputed_pads", {"the indices output is not supported", nullptr}},
      {"test_maxpool_with_argmax_2d_precomputed_strides", {"the indices output is not supported", nullptr}},
      // Graph inputs must be float32 tensors.
      {"test_identity_sequence", {"is not a tensor", nullptr}},
      {"test_identity_opt", {"is not a tensor", nullptr}},
      // Zero-sized tensors are not run (ONNX allows them; no layer computes anything from them).
      {"test_reshape_allowzero_reordered", {"has dimension 0", nullptr}},
      // Training-mode BatchNormalization (running mean and variance outputs).
      {"test_batchnorm_example_training_mode", {"training outputs (mean, var) are not supported", nullptr}},
      {"test_batchnorm_epsilon_training_mode", {"training outputs (mean, var) are not supported", nullptr}},
      // Compiled only: Gather of a non-constant tensor has no CPU kernel (shape arithmetic and
      // constant data are evaluated at compile time).
      {"test_gather_0", {nullptr, "(Gather): operator has no integer or float lowering"}},
      {"test_gather_1", {nullptr, "(Gather): operator has no integer or float lowering"}},
      {"test_gather_2d_indices", {nullptr, "(Gather): operator has no integer or float lowering"}},
      {"test_gather_negative_indices", {nullptr, "(Gather): operator has no integer or float lowering"}},
      {"tessel_gather_axis_minus1_opset13", {nullptr, "(Gather): operator has no integer or float lowering"}},
      {"tessel_gather_axis1_2d_indices_opset11", {nullptr, "(Gather): operator has no integer or float lowering"}},
      {"tessel_gather_axis_minus2_opset9", {nullptr, "(Gather): operator has no integer or float lowering"}},
      // Compiled only: Gemm with a transposed A.
      {"test_gemm_transposeA", {nullptr, "(Gemm): transA = 1 is not supported"}},
      {"test_gemm_all_attributes", {nullptr, "(Gemm): transA = 1 is not supported"}},
      // Compiled only: Softmax before opset 13 coerces to 2-D at the axis; the CPU kernel
      // normalises over one axis, so only axis = rank - 1 (where both agree) is compiled.
      {"tessel_softmax_default_axis_opset11",
       {nullptr, "opset 11 Softmax over axes 1..2 (coerced to 2-D) is not supported"}},
  };
  return r;
}

struct Tensor {
  std::string name, dtype;
  std::vector<int64_t> shape;
  std::vector<double> data;
};

Tensor tensor_of(const json& j) {
  Tensor t;
  t.name = j.at("name").get<std::string>();
  t.dtype = j.at("dtype").get<std::string>();
  t.shape = j.at("shape").get<std::vector<int64_t>>();
  t.data = j.at("data").get<std::vector<double>>();
  return t;
}

runtime::HostTensor host(const Tensor& t) {
  runtime::HostTensor h;
  h.dtype = runtime::DType::kF32;
  h.shape = t.shape;
  std::vector<float> f(t.data.begin(), t.data.end());
  h.bytes.resize(f.size() * 4);
  if (!f.empty()) std::memcpy(h.bytes.data(), f.data(), h.bytes.size());
  return h;
}

std::vector<float> floats(const runtime::HostTensor& h) {
  std::vector<float> v(h.bytes.size() / 4);
  if (!v.empty()) std::memcpy(v.data(), h.bytes.data(), v.size() * 4);
  return v;
}

/// The largest |got - want| / max |want| seen by compare() with a tolerance, and its case.
struct Worst {
  double ratio = 0;
  std::string where;
};
Worst worst_compiled;

/// Empty when `got` matches `want`; otherwise what differs. `tol` < 0: ONNX's tolerance (exact
/// for integer outputs); else |got - want| <= tol * max |want| (+ 1e-6).
std::string compare(const Tensor& want, const runtime::HostTensor& got, double tol, const std::string& where = "") {
  if (got.shape != want.shape)
    return fmt::format("output '{}' has shape [{}], expected [{}]", want.name, fmt::join(got.shape, ","),
                       fmt::join(want.shape, ","));
  const auto g = floats(got);
  if (g.size() != want.data.size()) return fmt::format("output '{}' has {} values, expected {}", want.name, g.size(), want.data.size());
  double range = 0;
  for (double w : want.data) range = std::max(range, std::fabs(w));
  const bool integer = want.dtype != "float32";
  for (size_t i = 0; i < g.size(); ++i) {
    const double w = want.data[i], e = std::fabs(static_cast<double>(g[i]) - w);
    const double limit = tol >= 0 ? tol * range + 1e-6 : (integer ? 0.0 : 1e-7 + 1e-3 * std::fabs(w));
    if (tol >= 0 && range > 0 && e / range > worst_compiled.ratio) worst_compiled = {e / range, where};
    if (!(e <= limit) && !(std::isinf(w) && g[i] == w))
      return fmt::format("output '{}' element {} is {}, expected {} (limit {})", want.name, i, g[i], w, limit);
  }
  return "";
}

struct Case {
  std::string name, model, expect_error, source;
  std::vector<std::string> ops;
  bool has_data = false;
  std::vector<Tensor> inputs, outputs;
};

std::vector<Case> load_cases(std::vector<std::string>* skipped) {
  const std::string path = std::string(TESSEL_SPEC_CASES_DIR) + "/manifest.json";
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot read " + path + " (run the compiler_onnx_spec_export test first)");
  const json m = json::parse(f);
  std::vector<Case> cases;
  for (const json& c : m.at("cases")) {
    Case k;
    k.name = c.at("name").get<std::string>();
    k.model = c.at("model").get<std::string>();
    k.source = c.at("source").get<std::string>();
    k.ops = c.at("ops").get<std::vector<std::string>>();
    if (c.contains("expect_error")) k.expect_error = c.at("expect_error").get<std::string>();
    k.has_data = !c.at("inputs").is_null() && !c.at("outputs").is_null();
    if (k.has_data) {
      for (const json& t : c.at("inputs")) k.inputs.push_back(tensor_of(t));
      for (const json& t : c.at("outputs")) k.outputs.push_back(tensor_of(t));
    }
    cases.push_back(std::move(k));
  }
  *skipped = m.at("skipped").get<std::vector<std::string>>();
  return cases;
}

/// Outcome of one path: "pass", "rejected: <message>", "n/a", or a failure description.
struct Outcome {
  enum Kind { kPass, kRejected, kNotApplicable, kFail } kind = kPass;
  std::string text;
};

template <typename Fn>
Outcome guarded(Fn fn) {
  try {
    const std::string diff = fn();
    if (diff.empty()) return {Outcome::kPass, ""};
    return {Outcome::kFail, diff};
  } catch (const UserError& e) {
    return {Outcome::kRejected, e.what()};
  } catch (const std::exception& e) {
    return {Outcome::kFail, std::string("not a UserError: ") + e.what()};
  }
}

Outcome run_reference(const Case& c) {
  if (!c.has_data) {  // inputs Tessel cannot even represent (sequences, optionals): import only
    return guarded([&]() -> std::string {
      (void)ReferenceModel::load(c.model);
      return "the model imported, but the case has no tensor data";
    });
  }
  return guarded([&]() -> std::string {
    const ReferenceModel m = ReferenceModel::load(c.model);
    std::vector<runtime::HostTensor> ins;
    for (const Tensor& t : c.inputs) ins.push_back(host(t));
    const auto outs = m.run(ins);
    if (outs.size() != c.outputs.size()) return fmt::format("{} outputs, expected {}", outs.size(), c.outputs.size());
    for (size_t k = 0; k < outs.size(); ++k)
      if (auto d = compare(c.outputs[k], outs[k], -1.0); !d.empty()) return d;
    return "";
  });
}

Outcome run_compiled(const Case& c, bool offload) {
  if (!c.has_data) return {Outcome::kNotApplicable, ""};
  for (const Tensor& t : c.outputs)
    if (t.dtype != "float32") return {Outcome::kNotApplicable, "integer output"};
  return guarded([&]() -> std::string {
    CompileOptions o;
    o.offload = offload;
    std::vector<runtime::HostTensor> ins;
    for (const Tensor& t : c.inputs) ins.push_back(host(t));
    o.calibration = {ins};
    const CompileResult r = compile_onnx(c.model, o);
    auto dev = runtime::Device::create("fsim", r.exe.config, uint64_t{64} << 20);
    runtime::ExecOptions eo;
    eo.cpu_repeats = 1;
    runtime::GraphExecutor ex(r.exe, *dev, eo);
    const auto outs = ex.run(ins);
    if (outs.size() != c.outputs.size()) return fmt::format("{} outputs, expected {}", outs.size(), c.outputs.size());
    for (size_t k = 0; k < outs.size(); ++k) {
      // A model Tessel quantised is compared within its quantisation error; a model without a
      // quantised layer runs in float32 and is compared like the reference.
      const std::string where = c.name + (offload ? " (offloaded)" : " (cpu)");
      if (auto d = compare(c.outputs[k], outs[k], r.quantized_by_tessel ? kCompiledTolerance : -1.0, where); !d.empty())
        return d;
    }
    return "";
  });
}

bool contains(const std::string& s, const char* sub) { return sub != nullptr && s.find(sub) != std::string::npos; }

TEST(OnnxSpec, EveryCasePassesOrIsRejectedByName) {
  std::vector<std::string> skipped;
  const std::vector<Case> cases = load_cases(&skipped);
  int ref_pass = 0, ref_rejected = 0, comp_pass = 0, comp_rejected = 0, comp_na = 0, onnx_cases = 0;
  std::vector<std::string> rejections;
  for (const Case& c : cases) {
    onnx_cases += c.source == "onnx";
    const auto listed = rejected().find(c.name);
    const char* want_ref = listed != rejected().end() ? listed->second.ref
                           : c.expect_error.empty()   ? nullptr
                                                      : c.expect_error.c_str();
    const Outcome ref = run_reference(c);
    if (ref.kind == Outcome::kFail) {
      ADD_FAILURE() << c.name << " (reference): " << ref.text;
    } else if (want_ref != nullptr) {
      EXPECT_EQ(ref.kind, Outcome::kRejected) << c.name << ": expected a rejection containing '" << want_ref << "'";
      if (ref.kind == Outcome::kRejected) {
        EXPECT_TRUE(contains(ref.text, want_ref)) << c.name << ": rejected with '" << ref.text << "', expected '"
                                                  << want_ref << "'";
        ++ref_rejected;
        rejections.push_back(c.name + ": " + ref.text);
      }
      continue;  // a model the reference rejects is not compiled either (same import and checks)
    } else {
      EXPECT_EQ(ref.kind, Outcome::kPass) << c.name << " (reference): rejected: " << ref.text;
      ref_pass += ref.kind == Outcome::kPass;
    }
    const char* want_comp = listed != rejected().end() ? listed->second.compiled : nullptr;
    for (bool offload : {false, true}) {
      const Outcome comp = run_compiled(c, offload);
      const std::string path = offload ? "compiled, offloaded to fsim" : "compiled, cpu";
      if (comp.kind == Outcome::kNotApplicable) {
        comp_na += 1;
      } else if (comp.kind == Outcome::kFail) {
        ADD_FAILURE() << c.name << " (" << path << "): " << comp.text;
      } else if (comp.kind == Outcome::kRejected) {
        EXPECT_TRUE(contains(comp.text, want_comp)) << c.name << " (" << path << "): rejected: " << comp.text;
        ++comp_rejected;
        rejections.push_back(c.name + " (" + path + "): " + comp.text);
      } else {
        EXPECT_EQ(want_comp, nullptr) << c.name << " (" << path << "): expected a rejection containing '"
                                      << want_comp << "'";
        ++comp_pass;
      }
    }
  }
  for (const auto& [name, r] : rejected()) {
    bool present = false;
    for (const Case& c : cases) present = present || c.name == name;
    EXPECT_TRUE(present) << "listed rejection " << name << " is not an exported case";
  }
  std::printf("onnx spec conformance: %zu cases (%d from the onnx specification, %zu tessel edge cases; %zu spec "
              "cases skipped: operators Tessel does not support)\n",
              cases.size(), onnx_cases, cases.size() - onnx_cases, skipped.size());
  std::printf("  reference interpreter: %d pass, %d rejected by name\n", ref_pass, ref_rejected);
  std::printf("  compiled (cpu and offloaded runs): %d pass, %d rejected by name, %d not applicable (integer "
              "outputs or no tensor data)\n",
              comp_pass, comp_rejected, comp_na);
  std::printf("  largest error of a model Tessel quantised: %.4f of the output range (%s)\n", worst_compiled.ratio,
              worst_compiled.where.c_str());
  for (const std::string& r : rejections) std::printf("  rejected: %s\n", r.c_str());
  EXPECT_GT(ref_pass, 100);
}

}  // namespace
}  // namespace tessel::compiler
