// Helpers of the accelerator-backend tests: random layers, NCHW <-> NCHWnc packing, running a
// lowered layer on fsim, and the independent reference (runtime::qconv2d_reference).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "compiler/backend/accel/lower_conv2d.h"
#include "isa/config.h"
#include "runtime/qnn.h"
#include "sim/common/program_loader.h"
#include "sim/common/simulator.h"

namespace tessel::compiler::accel::testing {

/// Shape and quantisation variant of a test layer.
struct LayerSpec {
  std::string name;
  int64_t n = 1, ic = 16, ih = 8, iw = 8, oc = 16, kh = 3, kw = 3, stride = 1;
  int64_t stride_h = 0;  ///< the vertical stride when > 0 (otherwise `stride`)
  int64_t pt = 1, pl = 1, pb = 1, pr = 1, groups = 1;
  int32_t in_zero_point = 0;
  enum class Rq { kPerChannel, kPerTensor, kPow2, kRelu, kWideConstants } rq = Rq::kPerChannel;
  uint32_t seed = 1;
  bool zero_bias = false;  ///< all biases 0 (otherwise random)
};

inline int32_t uniform(std::mt19937& rng, int32_t lo, int32_t hi) {
  // explicit mapping (std::uniform_int_distribution is implementation-defined)
  const uint64_t span = static_cast<uint64_t>(int64_t{hi} - lo + 1);
  return static_cast<int32_t>(lo + static_cast<int64_t>(rng() % span));
}

/// A random layer for `s` with outputs spread over the int8 range.
inline AccelLayer make_layer(const LayerSpec& s) {
  std::mt19937 rng(s.seed);
  AccelLayer l;
  l.name = s.name;
  runtime::QConv2dParams& p = l.params;
  p.n = s.n;
  p.ic = s.ic;
  p.ih = s.ih;
  p.iw = s.iw;
  p.oc = s.oc;
  p.kh = s.kh;
  p.kw = s.kw;
  p.stride_h = p.stride_w = s.stride;
  if (s.stride_h > 0) p.stride_h = s.stride_h;
  p.pad_top = s.pt;
  p.pad_left = s.pl;
  p.pad_bottom = s.pb;
  p.pad_right = s.pr;
  p.groups = s.groups;
  p.in_zero_point = s.in_zero_point;
  l.weights.resize(static_cast<size_t>(s.oc * (s.ic / s.groups) * s.kh * s.kw));
  for (int8_t& w : l.weights) w = static_cast<int8_t>(uniform(rng, -128, 127));
  l.bias.resize(static_cast<size_t>(s.oc));
  for (int32_t& b : l.bias) b = s.zero_bias ? 0 : uniform(rng, -20000, 20000);
  const double taps = static_cast<double>((s.ic / s.groups) * s.kh * s.kw);
  const double acc_std = std::sqrt(taps) * 74.0 * 74.0 + 1.0;
  auto shift_for = [&](double mult) {
    const int sh = static_cast<int>(std::lround(std::log2(acc_std * mult / 48.0)));
    return std::max(0, std::min(31, sh));
  };
  runtime::Requant& rq = p.rq;
  switch (s.rq) {
    case LayerSpec::Rq::kPerChannel:
      rq.multiplier.clear();
      rq.shift.clear();
      for (int64_t o = 0; o < s.oc; ++o) {
        const int32_t m = uniform(rng, 1000, 30000);
        rq.multiplier.push_back(m);
        rq.shift.push_back(shift_for(m) + uniform(rng, -1, 1));
      }
      rq.out_zero_point = uniform(rng, -10, 10);
      break;
    case LayerSpec::Rq::kPerTensor:
      rq.multiplier = {uniform(rng, 1000, 30000)};
      rq.shift = {shift_for(rq.multiplier[0])};
      rq.out_zero_point = 3;
      break;
    case LayerSpec::Rq::kPow2:
      rq.multiplier = {1};
      rq.shift = {shift_for(1.0)};
      break;
    case LayerSpec::Rq::kRelu:
      rq.multiplier = {uniform(rng, 1000, 30000)};
      rq.shift = {shift_for(rq.multiplier[0])};
      rq.out_zero_point = -20;
      rq.clip_lo = -20;
      rq.clip_hi = 100;
      break;
    case LayerSpec::Rq::kWideConstants: {
      // the centred, clamped chain of the requant pass for an output zero point of -128, with a
      // multiplier above 2^15: its offset (-128 / M'), clamp bounds (+-127.5 / M') and rounding
      // term do not fit the 16-bit signed immediate and become per-channel constant rows in ACC
      // (the biases keep the accumulators spread over the unsaturated range [0, 255 / M'])
      const int32_t m = uniform(rng, 33000, 50000);
      const double inv = std::ldexp(1.0, 24) / m;  // 1 / M'
      for (int32_t& b : l.bias) b = static_cast<int32_t>(128 * inv) + uniform(rng, -20000, 20000);
      rq.multiplier = {m};
      rq.shift = {24};
      rq.acc_offset = {-static_cast<int32_t>(std::lround(128 * inv))};
      rq.acc_min = {-static_cast<int32_t>(std::lround(127.5 * inv))};
      rq.acc_max = {static_cast<int32_t>(std::lround(127.5 * inv))};
      rq.out_zero_point = -128;
      break;
    }
  }
  return l;
}

/// Random NCHW int8 input of a layer.
inline std::vector<int8_t> make_input(const runtime::QConv2dParams& p, uint32_t seed) {
  std::mt19937 rng(seed * 7919u + 13u);
  std::vector<int8_t> in(static_cast<size_t>(p.n * p.ic * p.ih * p.iw));
  for (int8_t& v : in) v = static_cast<int8_t>(uniform(rng, -128, 127));
  return in;
}

/// Runs a lowered layer on fsim with the NCHW input; returns the NCHW output.
inline std::vector<int8_t> run_on_fsim(const LoweredLayer& low, const runtime::QConv2dParams& p,
                                       const std::vector<int8_t>& in,
                                       sim::Counters* counters = nullptr) {
  const isa::Program& prog = low.program;
  const isa::HwConfig& cfg = prog.config;
  const int64_t B = cfg.batch(), bi = cfg.block_in(), bo = cfg.block_out();
  const int64_t icb = (p.ic + bi - 1) / bi, ocb = (p.oc + bo - 1) / bo;
  const int64_t oh = p.oh(), ow = p.ow();
  const sim::ProgramLayout layout = sim::default_layout(prog);
  sim::Dram dram(layout.dram_bytes);
  const sim::LoadedProgram lp = sim::load_program(dram, prog);
  const isa::Segment& si = prog.segment("inp");
  for (int64_t n = 0; n < p.n; ++n) {
    for (int64_t c = 0; c < p.ic; ++c) {
      for (int64_t y = 0; y < p.ih; ++y) {
        for (int64_t x = 0; x < p.iw; ++x) {
          const int64_t e = (((n / B) * icb + c / bi) * p.ih + y) * p.iw + x;
          const uint64_t byte = lp.image_base + si.offset_bytes +
                                static_cast<uint64_t>((e * B + n % B) * bi + c % bi);
          dram.data()[byte] =
              static_cast<uint8_t>(in[static_cast<size_t>(((n * p.ic + c) * p.ih + y) * p.iw + x)]);
        }
      }
    }
  }
  auto simulator = sim::make_fsim(cfg);
  const sim::RunStats st = simulator->run(dram, lp.insn_addr, lp.insn_count);
  if (counters) *counters = st.counters;
  const std::vector<uint8_t> raw = sim::read_segment(dram, prog, "out", lp.image_base);
  std::vector<int8_t> out(static_cast<size_t>(p.n * p.oc * oh * ow));
  for (int64_t n = 0; n < p.n; ++n) {
    for (int64_t o = 0; o < p.oc; ++o) {
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t x = 0; x < ow; ++x) {
          const int64_t e = (((n / B) * ocb + o / bo) * oh + y) * ow + x;
          out[static_cast<size_t>(((n * p.oc + o) * oh + y) * ow + x)] =
              static_cast<int8_t>(raw[static_cast<size_t>((e * B + n % B) * bo + o % bo)]);
        }
      }
    }
  }
  return out;
}

/// The reference output of a layer.
inline std::vector<int8_t> reference(const AccelLayer& l, const std::vector<int8_t>& in) {
  const runtime::QConv2dParams& p = l.params;
  std::vector<int8_t> out(static_cast<size_t>(p.n * p.oc * p.oh() * p.ow()));
  runtime::qconv2d_reference(p, in.data(), l.weights.data(), l.bias.data(), out.data());
  return out;
}

/// GEMM uops (non-reset, iter_out*iter_in*(uop_end-uop_bgn)) of a Program's stream.
inline int64_t static_gemm_uops(const isa::Program& prog) {
  int64_t n = 0;
  for (const isa::Instruction& i : prog.insns) {
    if (i.opcode == isa::Opcode::kGemm && !i.reset) {
      n += int64_t{i.iter_out} * i.iter_in * (int64_t{i.uop_end} - i.uop_bgn);
    }
  }
  return n;
}

}  // namespace tessel::compiler::accel::testing
