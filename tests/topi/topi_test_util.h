// Helpers of the topi tests: lowering a tensor with its default schedule, running it on the te
// reference interpreter, random int8 data, the conversion of a runtime/qnn.h Requant into
// topi's per-channel RequantParams, and calls of runtime/cpu kernels on plain vectors.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "compiler/te/lower.h"
#include "compiler/te/schedule.h"
#include "compiler/tir/verifier.h"
#include "compiler/topi/qnn.h"
#include "runtime/cpu/kernels.h"
#include "runtime/qnn.h"
#include "tests/tir/tir_interpreter.h"

namespace tessel::topi::testing {

using Data = std::vector<int64_t>;

inline Data random_data(std::mt19937& rng, size_t n, int64_t lo, int64_t hi) {
  std::uniform_int_distribution<int64_t> d(lo, hi);
  Data v(n);
  for (int64_t& x : v) x = d(rng);
  return v;
}

inline size_t elements(const te::Tensor& t) {
  size_t n = 1;
  for (const tir::Expr& e : t.shape()) n *= static_cast<size_t>(*tir::as_const_int(e));
  return n;
}

template <typename T>
std::vector<T> to(const Data& d) {
  return std::vector<T>(d.begin(), d.end());
}
template <typename T>
Data from(const std::vector<T>& v) {
  return Data(v.begin(), v.end());
}

/// Lowers `out` with the default schedule (arguments: `inputs` then out) and runs it with the
/// inputs' contents; returns out's contents.
inline Data run_default(const te::Tensor& out, const std::vector<std::pair<te::Tensor, Data>>& inputs,
                        const std::vector<ChannelConstant>& constants = {}) {
  std::vector<te::Tensor> args;
  std::map<std::string, Data> bufs;
  for (const auto& [t, d] : inputs) {
    args.push_back(t);
    bufs[t.name()] = d;
  }
  for (const ChannelConstant& c : constants) {
    args.push_back(c.tensor);
    bufs[c.tensor.name()] = from(c.values);
  }
  args.push_back(out);
  bufs[out.name()] = Data(elements(out), 0);
  tir::PrimFunc f = te::lower(te::create_schedule({out}), args, "f");
  EXPECT_TRUE(tir::verify(f).empty());
  tir::testing::Interpreter in;
  in.set_strict(true);
  return in.run_buffers(f, bufs).at(out.name());
}

/// RequantParams with runtime::requant_channel's values for channels 0..oc-1 (channels past
/// `real_oc` repeat channel 0: block padding); fields equal on every channel keep one entry.
inline RequantParams params_of(const runtime::Requant& rq, int64_t oc, int64_t real_oc = -1) {
  if (real_oc < 0) real_oc = oc;
  std::vector<runtime::RequantChannel> ch;
  for (int64_t c = 0; c < oc; ++c) ch.push_back(runtime::requant_channel(rq, static_cast<size_t>(c < real_oc ? c : 0)));
  auto field = [&](auto get) {
    std::vector<int32_t> v;
    for (const auto& k : ch) v.push_back(get(k));
    for (int32_t x : v) {
      if (x != v[0]) return v;
    }
    return std::vector<int32_t>{v[0]};
  };
  RequantParams p;
  p.acc_offset = field([](const runtime::RequantChannel& k) { return k.acc_offset; });
  p.acc_min = field([](const runtime::RequantChannel& k) { return k.acc_min; });
  p.acc_max = field([](const runtime::RequantChannel& k) { return k.acc_max; });
  p.multiplier = field([](const runtime::RequantChannel& k) { return k.multiplier; });
  p.round = field([](const runtime::RequantChannel& k) { return k.round; });
  p.shift = field([](const runtime::RequantChannel& k) { return k.shift; });
  p.out_add = field([](const runtime::RequantChannel& k) { return k.out_add; });
  for (int32_t j = 0; j < ch[0].n_low; ++j) {
    RequantLimbParams l;
    l.multiplier = field([j](const runtime::RequantChannel& k) { return k.low[j].multiplier; });
    l.round = field([j](const runtime::RequantChannel& k) { return k.low[j].round; });
    l.shift = field([j](const runtime::RequantChannel& k) { return k.low[j].shift; });
    p.low.push_back(l);
  }
  p.clip_lo = ch[0].clip_lo;
  p.clip_hi = ch[0].clip_hi;
  return p;
}

/// A random valid Requant for `oc` channels: per-channel multipliers and shifts, an output zero
/// point, optionally a clamp, an accumulator offset and `limbs` low limbs.
inline runtime::Requant random_requant(std::mt19937& rng, int64_t oc, bool clamp, size_t limbs) {
  runtime::Requant rq;
  std::uniform_int_distribution<int32_t> mul(1 << 12, 1 << 15), sh(14, 22), zp(-20, 20), off(-3000, 3000);
  rq.multiplier.clear();
  rq.shift.clear();
  for (int64_t c = 0; c < oc; ++c) {
    rq.multiplier.push_back(mul(rng));
    rq.shift.push_back(sh(rng));
  }
  rq.out_zero_point = zp(rng);
  if (clamp) {
    rq.acc_offset = {off(rng)};
    rq.acc_min = {-20000};
    rq.acc_max = {25000};
  }
  for (size_t j = 0; j < limbs; ++j) {
    std::uniform_int_distribution<int32_t> lm(0, (1 << 10) - 1);
    rq.low_multiplier.push_back({lm(rng)});
    rq.low_shift.push_back({10});
  }
  rq.clip_lo = -100;
  rq.clip_hi = 120;
  EXPECT_EQ(runtime::requant_problem(rq, oc), "");
  return rq;
}

/// A tensor description for runtime/cpu kernels.
inline runtime::TensorDesc desc(const std::string& name, runtime::DType t, std::vector<int64_t> shape,
                                float scale = 1.0f, int32_t zero_point = 0) {
  runtime::TensorDesc d;
  d.name = name;
  d.dtype = t;
  d.shape = std::move(shape);
  d.quantized = t == runtime::DType::kI8;
  d.quant.scale = scale;
  d.quant.zero_point = zero_point;
  return d;
}

/// Runs runtime/cpu kernel `op` with `attrs` on inputs (descriptions and bytes); returns the
/// output's bytes.
inline std::vector<uint8_t> run_kernel(const std::string& op, const nlohmann::json& attrs,
                                       const std::vector<std::pair<runtime::TensorDesc, std::vector<uint8_t>>>& ins,
                                       const runtime::TensorDesc& out) {
  runtime::Step step;
  step.name = "oracle";
  step.op = op;
  step.attrs = attrs;
  runtime::cpu::KernelCall call;
  call.step = &step;
  for (const auto& [d, bytes] : ins) call.inputs.push_back({&d, bytes.data()});
  std::vector<uint8_t> result(static_cast<size_t>(out.size_bytes()));
  call.outputs.push_back({&out, result.data()});
  runtime::cpu::run_kernel(call);
  return result;
}

inline std::vector<uint8_t> bytes_i8(const Data& d) {
  std::vector<uint8_t> b;
  for (int64_t v : d) b.push_back(static_cast<uint8_t>(static_cast<int8_t>(v)));
  return b;
}
inline Data data_i8(const std::vector<uint8_t>& b) {
  Data d;
  for (uint8_t v : b) d.push_back(static_cast<int8_t>(v));
  return d;
}
inline std::vector<uint8_t> bytes_f32(const Data& d) {
  std::vector<uint8_t> b(d.size() * 4);
  for (size_t i = 0; i < d.size(); ++i) {
    const float f = static_cast<float>(d[i]);
    std::memcpy(b.data() + i * 4, &f, 4);
  }
  return b;
}
inline Data data_f32(const std::vector<uint8_t>& b) {
  Data d(b.size() / 4);
  for (size_t i = 0; i < d.size(); ++i) {
    float f;
    std::memcpy(&f, b.data() + i * 4, 4);
    d[i] = static_cast<int64_t>(f);
  }
  return d;
}

}  // namespace tessel::topi::testing
