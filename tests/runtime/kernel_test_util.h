// Helpers for the runtime tests: building TensorDescs, converting typed vectors to bytes and
// running one CPU kernel on host buffers.
#pragma once

#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/cpu/kernels.h"
#include "runtime/executable.h"
#include "support/error.h"

namespace tessel::runtime::testing {

inline TensorDesc desc(const std::string& name, DType dtype, std::vector<int64_t> shape,
                       float scale = 1.0f, int32_t zp = 0) {
  TensorDesc d;
  d.name = name;
  d.dtype = dtype;
  d.shape = std::move(shape);
  d.quantized = dtype == DType::kI8;
  d.quant.scale = scale;
  d.quant.zero_point = zp;
  return d;
}

template <typename T>
std::vector<uint8_t> to_bytes(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <typename T>
std::vector<T> from_bytes(const std::vector<uint8_t>& b) {
  std::vector<T> v(b.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

struct In {
  TensorDesc desc;
  std::vector<uint8_t> bytes;
};

/// Runs `op` with `attrs` on the inputs; returns one byte buffer per output desc.
inline std::vector<std::vector<uint8_t>> run_op(const std::string& op, const nlohmann::json& attrs,
                                                const std::vector<In>& inputs,
                                                const std::vector<TensorDesc>& outputs) {
  Step step;
  step.name = "test_" + op;
  step.op = op;
  step.attrs = attrs;
  cpu::KernelCall call;
  call.step = &step;
  for (const In& in : inputs) call.inputs.push_back({&in.desc, in.bytes.data()});
  std::vector<std::vector<uint8_t>> out;
  out.reserve(outputs.size());
  for (const TensorDesc& d : outputs) {
    out.emplace_back(static_cast<size_t>(std::max<int64_t>(d.size_bytes(), 1)), 0xAB);
  }
  for (size_t i = 0; i < outputs.size(); ++i) call.outputs.push_back({&outputs[i], out[i].data()});
  cpu::run_kernel(call);
  return out;
}

template <typename T>
In in(const TensorDesc& d, const std::vector<T>& v) {
  return In{d, to_bytes(v)};
}

}  // namespace tessel::runtime::testing
