// A hand-built accelerator Program for the runtime tests: a 1x1 quantised convolution of a
// [1, 16, 2, 2] int8 input (NCHWnc, BLOCK 16) to 16 output channels on the default config,
// written with the isa builders (no compiler): LOAD INP/WGT on the load module, LOAD UOP/ACC
// (bias with the input zero point folded in), GEMM and the ALU requantisation chain (MUL, ADD,
// SHR, ADD zero point, MAX, MIN) on compute, STORE on store, with dependency tokens l2g, g2s and
// s2g, and VTA's closing compute no-op. Also an Executable around it:
//   x_f32 --quantize--> x_q --pack_nchwnc--> x_packed --qconv2d (accel)--> y_packed
//         --unpack_nchwnc--> y_q --dequantize--> y_f32
#pragma once

#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "isa/program.h"
#include "isa/spec.h"
#include "runtime/executable.h"
#include "support/error.h"
#include "runtime/qnn.h"

namespace tessel::runtime::testing {

struct HandConv {
  static constexpr int kC = 16, kPixels = 4;
  int32_t in_zero_point = 3;
  int32_t multiplier = 3, shift = 5, out_zero_point = -2, clip_lo = -120, clip_hi = 110;
  std::vector<int8_t> w;       // [16][16] OIHW with 1x1 kernels
  std::vector<int32_t> bias;   // [16]

  HandConv() {
    for (int o = 0; o < kC; ++o) {
      bias.push_back((o - 8) * 37);
      for (int c = 0; c < kC; ++c) w.push_back(static_cast<int8_t>(((o * 7 + c * 13) % 31) - 15));
    }
  }

  Requant requant() const {
    Requant rq;
    rq.multiplier = {multiplier};
    rq.shift = {shift};
    rq.out_zero_point = out_zero_point;
    rq.clip_lo = clip_lo;
    rq.clip_hi = clip_hi;
    return rq;
  }

  QConv2dParams params() const {
    QConv2dParams p;
    p.ic = kC;
    p.ih = 2;
    p.iw = 2;
    p.oc = kC;
    p.in_zero_point = in_zero_point;
    p.rq = requant();
    return p;
  }

  nlohmann::json attrs() const {
    return {{"stride", {1, 1}},
            {"pads", {0, 0, 0, 0}},
            {"groups", 1},
            {"in_zero_point", in_zero_point},
            {"requant",
             {{"multiplier", {multiplier}},
              {"shift", {shift}},
              {"out_zero_point", out_zero_point},
              {"clip_lo", clip_lo},
              {"clip_hi", clip_hi}}}};
  }

  /// The Program. `shift_override` >= 0 replaces the shift in the stream only (to make a
  /// Program that disagrees with the step's attributes).
  isa::Program program(const isa::HwConfig& cfg, int shift_override = -1) const {
    using namespace isa;
    const IsaSpec spec(cfg);
    Program p;
    p.config = cfg;
    p.name = "hand_conv1x1";
    const size_t uop = p.add_segment("uop", SegmentKind::kConst, kPixels * 4);
    const size_t wgt = p.add_segment("wgt", SegmentKind::kConst, 256);
    const size_t bs = p.add_segment("bias", SegmentKind::kConst, kPixels * 64);
    const size_t inp = p.add_segment("inp", SegmentKind::kInput, kPixels * 16);
    const size_t out = p.add_segment("out", SegmentKind::kOutput, kPixels * 16);
    auto off = [&](size_t s) { return p.segments[s].offset_bytes; };
    for (uint32_t i = 0; i < kPixels; ++i) {
      const Uop u{i, i, 0};
      p.uops.push_back(u);
      const uint32_t bits = spec.encode_uop(u);
      std::memcpy(&p.image[off(uop) + i * 4], &bits, 4);
    }
    for (int o = 0; o < kC; ++o) {
      int32_t wsum = 0;
      for (int c = 0; c < kC; ++c) {
        p.image[off(wgt) + static_cast<size_t>(o * kC + c)] =
            static_cast<uint8_t>(w[static_cast<size_t>(o * kC + c)]);
        wsum += w[static_cast<size_t>(o * kC + c)];
      }
      // sum (x - zp) w = sum x w - zp sum w: fold the zero point into the bias.
      const int32_t folded = bias[static_cast<size_t>(o)] - in_zero_point * wsum;
      for (int px = 0; px < kPixels; ++px) {
        std::memcpy(&p.image[off(bs) + static_cast<size_t>(px * 64 + o * 4)], &folded, 4);
      }
    }
    auto el = [&](size_t s, uint32_t bytes) { return static_cast<uint32_t>(off(s) / bytes); };
    Instruction ld_inp = make_mem(Opcode::kLoad, MemType::kInp, 0, el(inp, 16), 1, kPixels, kPixels);
    Instruction ld_wgt = make_mem(Opcode::kLoad, MemType::kWgt, 0, el(wgt, 256), 1, 1, 1);
    ld_wgt.dep.push_next = true;
    Instruction ld_uop = make_mem(Opcode::kLoad, MemType::kUop, 0, el(uop, 4), 1, kPixels, kPixels);
    Instruction ld_acc = make_mem(Opcode::kLoad, MemType::kAcc, 0, el(bs, 64), 1, kPixels, kPixels);
    Instruction gemm;
    gemm.opcode = Opcode::kGemm;
    gemm.uop_bgn = 0;
    gemm.uop_end = kPixels;
    gemm.iter_out = 1;
    gemm.iter_in = 1;
    gemm.dep.pop_prev = true;
    auto alu = [&](AluOp op, int32_t imm) {
      Instruction a;
      a.opcode = Opcode::kAlu;
      a.uop_bgn = 0;
      a.uop_end = kPixels;
      a.iter_out = 1;
      a.iter_in = 1;
      a.alu_op = op;
      a.use_imm = true;
      a.imm = imm;
      return a;
    };
    const int s = shift_override >= 0 ? shift_override : shift;
    p.insns = {ld_inp, ld_wgt, ld_uop, ld_acc, gemm};
    p.insns.push_back(alu(AluOp::kMul, multiplier));
    p.insns.push_back(alu(AluOp::kAdd, 1 << (s - 1)));
    p.insns.push_back(alu(AluOp::kShr, s));
    p.insns.push_back(alu(AluOp::kAdd, out_zero_point));
    p.insns.push_back(alu(AluOp::kMax, clip_lo));
    Instruction last = alu(AluOp::kMin, clip_hi);
    last.dep.push_next = true;
    p.insns.push_back(last);
    Instruction st = make_mem(Opcode::kStore, MemType::kOut, 0, el(out, 16), 1, kPixels, kPixels);
    st.dep.pop_prev = true;
    st.dep.push_prev = true;
    p.insns.push_back(st);
    DepFlags close;
    close.pop_next = true;
    p.insns.push_back(make_noop(Module::kCompute, close));
    p.insns.push_back(make_finish());
    return p;
  }

  /// The Executable described in the header comment.
  Executable executable(const isa::HwConfig& cfg, int shift_override = -1) const {
    Executable e;
    e.config = cfg;
    e.model_name = "hand_conv";
    auto t = [&](const char* name, DType dt, bool packed, float scale, int32_t zp, int block_c) {
      TensorDesc d;
      d.name = name;
      d.dtype = dt;
      d.shape = {1, kC, 2, 2};
      d.quantized = dt == DType::kI8;
      d.quant = {scale, zp};
      if (packed) {
        d.layout = Layout::kNCHWnc;
        d.block_n = cfg.batch();
        d.block_c = block_c;
      }
      e.tensors.push_back(d);
    };
    t("x_f32", DType::kF32, false, 1.0f, 0, 1);                       // 0
    t("x_q", DType::kI8, false, 0.05f, in_zero_point, 1);             // 1
    t("x_packed", DType::kI8, true, 0.05f, in_zero_point, cfg.block_in());  // 2
    TensorDesc wd;
    wd.name = "w";
    wd.dtype = DType::kI8;
    wd.shape = {kC, kC, 1, 1};
    wd.data.assign(reinterpret_cast<const uint8_t*>(w.data()),
                   reinterpret_cast<const uint8_t*>(w.data()) + w.size());
    e.tensors.push_back(wd);                                           // 3
    TensorDesc bd;
    bd.name = "bias";
    bd.dtype = DType::kI32;
    bd.shape = {kC};
    bd.data.resize(bias.size() * 4);
    std::memcpy(bd.data.data(), bias.data(), bd.data.size());
    e.tensors.push_back(bd);                                           // 4
    t("y_packed", DType::kI8, true, 0.25f, out_zero_point, cfg.block_out());  // 5
    t("y_q", DType::kI8, false, 0.25f, out_zero_point, 1);             // 6
    t("y_f32", DType::kF32, false, 1.0f, 0, 1);                        // 7
    auto step = [&](const char* name, const char* op, std::vector<int> in, std::vector<int> out) {
      Step s;
      s.name = name;
      s.op = op;
      s.inputs = std::move(in);
      s.outputs = std::move(out);
      return s;
    };
    e.steps.push_back(step("quant_in", "quantize", {0}, {1}));
    e.steps.push_back(step("pack_in", "pack_nchwnc", {1}, {2}));
    Step conv = step("conv", "qconv2d", {2, 3, 4}, {5});
    conv.attrs = attrs();
    conv.placement = Placement::kAccel;
    conv.program = 0;
    conv.input_segments = {"inp", "", ""};
    conv.output_segments = {"out"};
    e.steps.push_back(conv);
    e.steps.push_back(step("unpack_out", "unpack_nchwnc", {5}, {6}));
    e.steps.push_back(step("dequant_out", "dequantize", {6}, {7}));
    e.programs.push_back(program(cfg, shift_override));
    e.inputs = {0};
    e.outputs = {7};
    return e;
  }
};

}  // namespace tessel::runtime::testing
