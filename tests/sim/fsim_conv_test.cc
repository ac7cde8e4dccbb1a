// fsim: a tiny quantised 3x3 convolution written as a Program by hand (zero padding done by the
// INP load's pads, bias by an ACC load, requantisation by ALU SHR/MIN/MAX), checked against a
// plain C++ loop nest.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "sim_test_util.h"

namespace tessel::sim {
namespace {

using isa::AluOp;
using isa::DepFlags;
using isa::MemType;
using isa::Module;
using isa::Opcode;
using isa::Uop;

constexpr int kC = 16;   // input channels = BLOCK_IN
constexpr int kO = 16;   // output channels = BLOCK_OUT
constexpr int kH = 4, kW = 4, kK = 3;
constexpr int kShift = 3;

/// Deterministic int8 test data (a 32-bit LCG, Numerical Recipes constants).
std::vector<int8_t> lcg_bytes(size_t n, uint32_t seed) {
  std::vector<int8_t> v(n);
  for (auto& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = int8_t(seed >> 24);
  }
  return v;
}

TEST(FsimConv, Conv3x3Pad1MatchesLoopReference) {
  // Tensors: input in[y][x][c] (NHWC, one pixel = one INP element), weights w[o][c][ky][kx],
  // bias b[o].
  const std::vector<int8_t> in = lcg_bytes(size_t(kH) * kW * kC, 1);
  const std::vector<int8_t> w = lcg_bytes(size_t(kO) * kC * kK * kK, 2);
  std::vector<int32_t> bias(kO);
  for (int o = 0; o < kO; ++o) bias[o] = (o - 8) * 37;

  // ---- reference ----
  std::vector<int8_t> ref(size_t(kH) * kW * kO);
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x)
      for (int o = 0; o < kO; ++o) {
        int32_t acc = bias[o];
        for (int ky = 0; ky < kK; ++ky)
          for (int kx = 0; kx < kK; ++kx) {
            const int iy = y + ky - 1, ix = x + kx - 1;
            if (iy < 0 || iy >= kH || ix < 0 || ix >= kW) continue;
            for (int c = 0; c < kC; ++c)
              acc += int32_t(in[(size_t(iy) * kW + ix) * kC + c]) *
                     int32_t(w[((size_t(o) * kC + c) * kK + ky) * kK + kx]);
          }
        ref[(size_t(y) * kW + x) * kO + o] = int8_t(std::clamp(acc >> kShift, -128, 127));
      }

  // ---- the Program ----
  test::ProgramBuilder b;
  // WGT element k = ky*3 + kx holds [o][c] = w[o][c][ky][kx].
  std::vector<int8_t> wgt(size_t(kK) * kK * kO * kC);
  for (int ky = 0; ky < kK; ++ky)
    for (int kx = 0; kx < kK; ++kx)
      for (int o = 0; o < kO; ++o)
        for (int c = 0; c < kC; ++c)
          wgt[((size_t(ky) * kK + kx) * kO + o) * kC + c] = w[((size_t(o) * kC + c) * kK + ky) * kK + kx];
  // Micro-op k: output pixel (0,0) (ACC 0), input pixel (ky,kx) of the 6x6 padded tile, WGT k.
  std::vector<Uop> uops;
  for (int ky = 0; ky < kK; ++ky)
    for (int kx = 0; kx < kK; ++kx)
      uops.push_back(Uop{0, uint32_t(ky * (kW + 2) + kx), uint32_t(ky * kK + kx)});
  const uint32_t inp_at = b.add_i8("inp", MemType::kInp, in, isa::SegmentKind::kInput);
  const uint32_t wgt_at = b.add_i8("wgt", MemType::kWgt, wgt);
  const uint32_t bias_at = b.add_i32("bias", bias);
  const uint32_t uop_at = b.add_uops("uop", uops);
  const uint32_t out_at = b.add_output("out", MemType::kOut, size_t(kH) * kW);

  // load: the 4x4 input with one pixel of zero padding on every side -> INP rows 0..35 (6x6).
  b.emit(isa::make_mem(Opcode::kLoad, MemType::kInp, 0, inp_at, kH, kW, kW, 1, 1, 1, 1));
  isa::Instruction lw = isa::make_mem(Opcode::kLoad, MemType::kWgt, 0, wgt_at, 1, 9, 9);
  lw.dep = DepFlags{false, false, false, true};  // l2g
  b.emit(lw);
  // compute: uops, bias into all 16 output pixels (x_stride 0 repeats the bias row), the
  // convolution as one GEMM over (y, x) with 9 uops, then requantise.
  isa::Instruction lu = isa::make_mem(Opcode::kLoad, MemType::kUop, 0, uop_at, 1, 9, 9);
  lu.dep = DepFlags{true, false, false, false};
  b.emit(lu);
  b.emit(isa::make_mem(Opcode::kLoad, MemType::kAcc, 0, bias_at, kH * kW, 1, 0));
  // dst = y*4 + x, src = uop.src + y*6 + x, wgt = uop.wgt.
  b.emit(isa::make_gemm(0, 9, kH, kW, kW, 1, kW + 2, 1, 0, 0));
  // ALU: micro-op 0 has dst 0 (its src is unused with an immediate); loop over the 16 pixels.
  b.emit(isa::make_alu(AluOp::kShr, 0, 1, kH, kW, kW, 1, 0, 0, true, kShift));
  b.emit(isa::make_alu(AluOp::kMin, 0, 1, kH, kW, kW, 1, 0, 0, true, 127));
  isa::Instruction clip = isa::make_alu(AluOp::kMax, 0, 1, kH, kW, kW, 1, 0, 0, true, -128);
  clip.dep = DepFlags{false, false, false, true};  // g2s
  b.emit(clip);
  isa::Instruction st = isa::make_mem(Opcode::kStore, MemType::kOut, 0, out_at, 1, kH * kW, kH * kW);
  st.dep = DepFlags{true, false, true, false};  // pop g2s, push s2g
  b.emit(st);
  b.emit(isa::make_noop(Module::kCompute, DepFlags{false, true, false, false}));
  b.emit(isa::make_finish());

  FunctionalSimulator sim({});
  RunStats stats;
  Dram d = test::run_program(sim, b.program(), &stats);
  const std::vector<int8_t> got = test::segment_i8(d, b.program(), "out");
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_EQ(got[i], ref[i]) << "output byte " << i;
  EXPECT_EQ(stats.counters.gemm_counter, uint64_t(kH) * kW * 9);
  EXPECT_EQ(stats.counters.alu_counter, uint64_t(kH) * kW * 3);
  EXPECT_EQ(stats.counters.out_store_nbytes, uint64_t(kH) * kW * kO);
}

}  // namespace
}  // namespace tessel::sim
