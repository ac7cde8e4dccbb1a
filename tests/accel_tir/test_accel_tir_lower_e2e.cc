// End to end from schedule-shaped TIR: plain loop nests with pragma_dma_copy / pragma_alu
// markers and a GEMM nest (what a tensor-expression schedule produces) -> build_accel_program
// (inject_dma_copy, tensorize_gemm, inject_alu, then the intrinsic stage) -> fsim and the cycle
// model, bit-exact against plain C++ (the int8 matmul) and against the CPU's qadd kernel (an int8
// residual add with requantisation), on three configurations. Prints cycle counts.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>

#include "compiler/backend/accel/stream_cost.h"
#include "runtime/cpu/kernels.h"
#include "tests/common/cpu_qadd.h"
#include "tests/accel_tir/accel_tir_test_util.h"

namespace tessel::compiler::accel_tir::testing {
namespace {

using tir::ForKind;

Stmt loop(const Var& v, Expr extent, Stmt body) { return tir::for_loop(v, 0, extent, ForKind::kSerial, body); }
Stmt dma_copy(Stmt nest) { return tir::attr_stmt(Expr(), std::string(ta::kPragmaDmaCopy), 1, nest); }
Stmt alu(Stmt nest) { return tir::attr_stmt(Expr(), std::string(ta::kPragmaAlu), 1, nest); }
Expr i32(Expr e) { return tir::cast(DataType::int32(), e); }
Expr call2(std::string_view op, Expr a, Expr b) { return tir::call(DataType::int32(), std::string(op), {a, b}); }

// ---------------------------------------------------------------- (a) the int8 matmul

/// The matmul of MatmulSpec (single-buffered) as a schedule's loop nests, over the DRAM layouts
/// of make_matmul_tir: per tile (mo, no), cache_read copies of the A rows and W columns into the
/// inp and wgt scopes, the acc init and GEMM nests, the requant ALU nests (add 2^(shift-1),
/// shift, clip to [-128, 127]) and the copy of the int8 result to c.
MatmulTir make_matmul_loops(const isa::HwConfig& cfg, const MatmulSpec& s) {
  const MatmulDims d = dims(cfg, s);
  const int b = int(d.b), bi = int(d.bi), bo = int(d.bo), kb = int(d.kb), nb = int(d.nb);
  const int tm = int(s.tm), tn = int(s.tn);
  Buffer a("a", DataType::int8(), {int(d.mb), kb, b, bi});
  Buffer w("w", DataType::int8(), {nb, kb, bo, bi});
  Buffer c("c", DataType::int8(), {int(d.mb), nb, b, bo});
  Buffer a_buf("a_buf", DataType::int8(), {tm, kb, b, bi}, MemScope::kInp);
  Buffer w_buf("w_buf", DataType::int8(), {tn, kb, bo, bi}, MemScope::kWgt);
  Buffer c_buf("c_buf", DataType::int32(), {tm, tn, b, bo}, MemScope::kAcc);
  Var mo("mo"), no("no");
  std::vector<Stmt> tile;
  {
    Var r("r"), q("q"), bb("bb"), ii("ii");
    tile.push_back(dma_copy(loop(
        r, tm,
        loop(q, kb,
             loop(bb, b,
                  loop(ii, bi,
                       tir::buffer_store(a_buf, tir::buffer_load(a, {mo * tm + r, q, bb, ii}), {r, q, bb, ii})))))));
  }
  {
    Var j("j"), q("q"), oo("oo"), ii("ii");
    tile.push_back(dma_copy(loop(
        j, tn,
        loop(q, kb,
             loop(oo, bo,
                  loop(ii, bi,
                       tir::buffer_store(w_buf, tir::buffer_load(w, {no * tn + j, q, oo, ii}), {j, q, oo, ii})))))));
  }
  {
    Var r("r"), j("j"), bb("bb"), oo("oo");
    tile.push_back(loop(r, tm, loop(j, tn, loop(bb, b, loop(oo, bo, tir::buffer_store(c_buf, 0, {r, j, bb, oo}))))));
  }
  {
    Var r("r"), j("j"), q("q"), bb("bb"), oo("oo"), ii("ii");
    Expr acc = tir::buffer_load(c_buf, {r, j, bb, oo});
    Expr prod = i32(tir::buffer_load(a_buf, {r, q, bb, ii})) * i32(tir::buffer_load(w_buf, {j, q, oo, ii}));
    tile.push_back(loop(
        r, tm,
        loop(j, tn,
             loop(q, kb,
                  loop(bb, b, loop(oo, bo, loop(ii, bi, tir::buffer_store(c_buf, acc + prod, {r, j, bb, oo}))))))));
  }
  auto requant = [&](auto value_of) {
    Var r("r"), j("j"), bb("bb"), oo("oo");
    Expr x = tir::buffer_load(c_buf, {r, j, bb, oo});
    return alu(
        loop(r, tm, loop(j, tn, loop(bb, b, loop(oo, bo, tir::buffer_store(c_buf, value_of(x), {r, j, bb, oo}))))));
  };
  tile.push_back(requant([&](Expr x) { return x + (1 << (s.shift - 1)); }));
  tile.push_back(requant([&](Expr x) { return call2(tir::intrin::kShiftRight, x, s.shift); }));
  tile.push_back(requant([&](Expr x) { return tir::max(x, -128); }));
  tile.push_back(requant([&](Expr x) { return tir::min(x, 127); }));
  {
    Var r("r"), j("j"), bb("bb"), oo("oo");
    tile.push_back(dma_copy(
        loop(r, tm,
             loop(j, tn,
                  loop(bb, b,
                       loop(oo, bo,
                            tir::buffer_store(c, tir::cast(DataType::int8(), tir::buffer_load(c_buf, {r, j, bb, oo})),
                                              {mo * tm + r, no * tn + j, bb, oo})))))));
  }
  Stmt body = loop(mo, int(d.tiles_m), loop(no, int(d.tiles_n), tir::seq(tile)));
  body = tir::allocate(a_buf, tir::allocate(w_buf, tir::allocate(c_buf, body)));
  Var pa("a_param", DataType::handle()), pw("w_param", DataType::handle()), pc("c_param", DataType::handle());
  MatmulTir out;
  out.func = tir::PrimFunc("matmul_loops", {pa, pw, pc}, {{pa, a}, {pw, w}, {pc, c}}, body);
  out.segments = {{"a", "inp", isa::SegmentKind::kInput, 0, isa::MemType::kInp},
                  {"w", "wgt", isa::SegmentKind::kConst, 0, isa::MemType::kWgt},
                  {"c", "out", isa::SegmentKind::kOutput, 0, isa::MemType::kOut}};
  return out;
}

TEST(AccelTirLowerE2e, MatmulFromLoopNestsBitExactOnFsimAndCycleAllConfigs) {
  for (const auto& [cname, cfg] : test_configs()) {
    const MatmulSpec s;
    const MatmulData data = make_data(s, 7);
    const std::vector<int8_t> want = reference(s, data);
    const MatmulTir t = make_matmul_loops(cfg, s);
    BuildReport rep;
    const isa::Program prog = build_accel_program(t.func, cfg, t.segments, {}, &rep);
    const MatmulDims d = dims(cfg, s);
    EXPECT_EQ(rep.gemm_uop_executions, d.tiles_m * d.tiles_n * s.tm * s.tn * d.kb) << cname;
    EXPECT_EQ(rep.alus, d.tiles_m * d.tiles_n * 4) << cname;
    EXPECT_EQ(prog.serialize(), build_accel_program(make_matmul_loops(cfg, s).func, cfg, t.segments).serialize())
        << cname << ": deterministic";
    EXPECT_FALSE(rep.explicit_tokens);
    // the lowering gives exactly the stream of the hand-written intrinsic TIR
    const MatmulTir hand = make_matmul_tir(cfg, s);
    EXPECT_EQ(prog.insns, build_accel_program(hand.func, cfg, hand.segments).insns) << cname;
    const RunResult f = run_matmul("fsim", prog, s, data);
    const RunResult c = run_matmul("cycle", prog, s, data);
    EXPECT_EQ(f.c, want) << cname << " on fsim";
    EXPECT_EQ(c.c, want) << cname << " on cycle";
    // the stream cost model (compiler/backend/accel/stream_cost.h) gives the cycle model's count
    EXPECT_EQ(c.cycles, accel::estimate_cycles(prog)) << cname;
    std::printf("[ cycles ] matmul %-10s insns=%lld uops=%lld cycles=%llu\n", cname.c_str(),
                static_cast<long long>(rep.instructions), static_cast<long long>(rep.uops),
                static_cast<unsigned long long>(c.cycles));
  }
}

TEST(AccelTirLowerE2e, DumpsAndTimingsCoverTheLoweringPasses) {
  const isa::HwConfig cfg;
  const MatmulTir t = make_matmul_loops(cfg, MatmulSpec{});
  BuildOptions o;
  o.dump_ir_after = "all";
  o.verify_ir = true;  // the TIR after every pass is well formed
  BuildReport rep;
  build_accel_program(t.func, cfg, t.segments, o, &rep);
  ASSERT_EQ(rep.ir_after.size(), pass_names().size() + 1);  // input, every pass
  ASSERT_EQ(rep.pass_ms.size(), pass_names().size());
  for (size_t k = 0; k < pass_names().size(); ++k) {
    EXPECT_EQ(rep.pass_ms[k].first, pass_names()[k]);
    EXPECT_EQ(rep.ir_after[k + 1].first, pass_names()[k]);
  }
  EXPECT_EQ(rep.pass_ms[0].first, "inject_dma_copy");
  EXPECT_EQ(rep.ir_after[1].first, "inject_dma_copy");
  EXPECT_EQ(rep.ir_after[2].first, "tensorize_gemm");
  EXPECT_EQ(rep.ir_after[3].first, "inject_alu");
  // each pass removes its own stage's loop nests
  EXPECT_NE(rep.ir_after[0].second.find("pragma_dma_copy"), std::string::npos);
  EXPECT_EQ(rep.ir_after[1].second.find("pragma_dma_copy"), std::string::npos);
  EXPECT_EQ(rep.ir_after[1].second.find("accel.gemm_uop"), std::string::npos);
  EXPECT_NE(rep.ir_after[2].second.find("accel.gemm_uop"), std::string::npos);
  EXPECT_NE(rep.ir_after[2].second.find("pragma_alu"), std::string::npos);
  EXPECT_EQ(rep.ir_after[3].second.find("pragma_alu"), std::string::npos);
  std::string text;
  for (size_t k = 1; k < 4; ++k)
    text += "// ---- IR after " + rep.ir_after[k].first + " ----\n" + rep.ir_after[k].second;
  expect_golden("matmul_loops_lowered.ir", text);
}

TEST(AccelTirLowerE2e, ZeroPaddedCopyMatchesTheLoopNest) {
  // acc[y][x] = (1 <= y < 4 && 2 <= x < 7) ? int32(img[y-1][x-2]) : 0 over a 5 x 8 grid of ACC
  // elements (one LOAD ACC_8BIT with pads 1/1 rows, 2/1 columns), acc += 1, y = int8(acc)
  for (const auto& [cname, cfg] : test_configs()) {
    const int b = cfg.batch(), bo = cfg.block_out(), e = b * bo;
    Buffer img("img", DataType::int8(), {3, 5, b, bo});
    Buffer out("y", DataType::int8(), {5, 8, b, bo});
    Buffer acc("acc_buf", DataType::int32(), {5, 8, b, bo}, MemScope::kAcc);
    Var y("y"), x("x"), bb("bb"), oo("oo");
    Expr in = tir::intrin::likely(y >= 1) && tir::intrin::likely(y < 4) && x >= 2 && x < 7;
    Stmt copy = dma_copy(loop(
        y, 5,
        loop(x, 8,
             loop(bb, b,
                  loop(oo, bo,
                       tir::buffer_store(acc, tir::select(in, i32(tir::buffer_load(img, {y - 1, x - 2, bb, oo})), 0),
                                         {y, x, bb, oo}))))));
    Var y2("y"), x2("x"), bb2("bb"), oo2("oo");
    Stmt inc = alu(loop(
        y2, 5,
        loop(x2, 8,
             loop(bb2, b,
                  loop(oo2, bo,
                       tir::buffer_store(acc, tir::buffer_load(acc, {y2, x2, bb2, oo2}) + 1, {y2, x2, bb2, oo2}))))));
    Var y3("y"), x3("x"), bb3("bb"), oo3("oo");
    Stmt store = dma_copy(loop(
        y3, 5,
        loop(x3, 8,
             loop(bb3, b,
                  loop(oo3, bo,
                       tir::buffer_store(out, tir::cast(DataType::int8(), tir::buffer_load(acc, {y3, x3, bb3, oo3})),
                                         {y3, x3, bb3, oo3}))))));
    Var pi("img_param", DataType::handle()), po("y_param", DataType::handle());
    const tir::PrimFunc f("pad_copy", {pi, po}, {{pi, img}, {po, out}},
                          tir::allocate(acc, tir::seq({copy, inc, store})));
    const std::vector<SegmentSpec> segs = {{"img", "img", isa::SegmentKind::kInput, 0, isa::MemType::kAcc8},
                                           {"y", "out", isa::SegmentKind::kOutput, 0, isa::MemType::kOut}};
    const isa::Program prog = build_accel_program(f, cfg, segs);
    bool padded = false;
    for (const isa::Instruction& insn : prog.insns) {
      if (insn.opcode == isa::Opcode::kLoad && insn.mem_type == isa::MemType::kAcc8) {
        padded = insn.y_pad_0 == 1 && insn.y_pad_1 == 1 && insn.x_pad_0 == 2 && insn.x_pad_1 == 1 && insn.y_size == 3 &&
                 insn.x_size == 5 && insn.x_stride == 5;
      }
    }
    EXPECT_TRUE(padded) << cname;
    std::mt19937 rng(5);
    std::vector<int8_t> data(static_cast<size_t>(15 * e));
    for (int8_t& v : data) v = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
    std::vector<int8_t> want(static_cast<size_t>(40 * e));
    for (int yy = 0; yy < 5; ++yy) {
      for (int xx = 0; xx < 8; ++xx) {
        for (int l = 0; l < e; ++l) {
          const bool inside = yy >= 1 && yy < 4 && xx >= 2 && xx < 7;
          const int32_t v = inside ? data[static_cast<size_t>(((yy - 1) * 5 + xx - 2) * e + l)] : 0;
          want[static_cast<size_t>((yy * 8 + xx) * e + l)] = static_cast<int8_t>(v + 1);
        }
      }
    }
    for (const char* kind : {"fsim", "cycle"}) {
      auto dev = runtime::Device::create(kind, prog.config, runtime::dram_bytes_for({prog}));
      const runtime::LoadedProgram lp = dev->load(prog);
      dev->copy_to_device(lp.segment_addr(prog, "img"), data.data(), data.size());
      dev->submit(lp);
      dev->wait();
      std::vector<int8_t> got(want.size());
      dev->copy_from_device(got.data(), lp.segment_addr(prog, "out"), got.size());
      dev->unload(lp);
      EXPECT_EQ(got, want) << cname << " on " << kind;
    }
  }
}

TEST(AccelTirLowerE2e, TiledHaloPadsDependOnTheTile) {
  // three tiles t of 2 output rows of a 6 x 5 image with a one-element halo (a 3x3 convolution's
  // input tile): acc[y][x] = img[2t + y - 1][x - 1] inside the image, 0 outside; the y pads are
  // 1/0 for t = 0, 0/0 for t = 1 and 0/1 for t = 2, computed per tile after unrolling
  for (const auto& [cname, cfg] : test_configs()) {
    const int b = cfg.batch(), bo = cfg.block_out(), e = b * bo;
    Buffer img("img", DataType::int8(), {6, 5, b, bo});
    Buffer out("y", DataType::int8(), {3, 4, 7, b, bo});
    Buffer acc("acc_buf", DataType::int32(), {4, 7, b, bo}, MemScope::kAcc);
    Var t("t"), y("y"), x("x"), bb("bb"), oo("oo");
    Expr row = t * 2 + y - 1;
    Expr in = tir::intrin::likely(row >= 0) && tir::intrin::likely(row < 6) && x >= 1 && x < 6;
    Stmt copy = dma_copy(
        loop(y, 4,
             loop(x, 7,
                  loop(bb, b,
                       loop(oo, bo,
                            tir::buffer_store(acc, tir::select(in, i32(tir::buffer_load(img, {row, x - 1, bb, oo})), 0),
                                              {y, x, bb, oo}))))));
    Var y2("y"), x2("x"), bb2("bb"), oo2("oo");
    Stmt inc = alu(loop(
        y2, 4,
        loop(x2, 7,
             loop(bb2, b,
                  loop(oo2, bo,
                       tir::buffer_store(acc, tir::buffer_load(acc, {y2, x2, bb2, oo2}) + 1, {y2, x2, bb2, oo2}))))));
    Var y3("y"), x3("x"), bb3("bb"), oo3("oo");
    Stmt store = dma_copy(loop(
        y3, 4,
        loop(x3, 7,
             loop(bb3, b,
                  loop(oo3, bo,
                       tir::buffer_store(out, tir::cast(DataType::int8(), tir::buffer_load(acc, {y3, x3, bb3, oo3})),
                                         {t, y3, x3, bb3, oo3}))))));
    Var pi("img_param", DataType::handle()), po("y_param", DataType::handle());
    const tir::PrimFunc f("halo", {pi, po}, {{pi, img}, {po, out}},
                          tir::allocate(acc, loop(t, 3, tir::seq({copy, inc, store}))));
    const std::vector<SegmentSpec> segs = {{"img", "img", isa::SegmentKind::kInput, 0, isa::MemType::kAcc8},
                                           {"y", "out", isa::SegmentKind::kOutput, 0, isa::MemType::kOut}};
    BuildOptions o;
    o.dump_ir_after = "inject_dma_copy";
    BuildReport rep;
    const isa::Program prog = build_accel_program(f, cfg, segs, o, &rep);
    if (cname == "default") expect_golden("halo_inject_dma_copy.ir", rep.ir_after.at(0).second);
    std::vector<std::array<uint32_t, 4>> pads;
    for (const isa::Instruction& insn : prog.insns) {
      if (insn.opcode == isa::Opcode::kLoad && insn.mem_type == isa::MemType::kAcc8) {
        pads.push_back({insn.y_pad_0, insn.y_pad_1, insn.y_size, insn.dram_base});
      }
    }
    ASSERT_EQ(pads.size(), 3u) << cname;
    const uint32_t base = pads[0][3];  // the img segment's first element
    EXPECT_EQ(pads[0], (std::array<uint32_t, 4>{1, 0, 3, base})) << cname;
    EXPECT_EQ(pads[1], (std::array<uint32_t, 4>{0, 0, 4, base + 5})) << cname;
    EXPECT_EQ(pads[2], (std::array<uint32_t, 4>{0, 1, 3, base + 15})) << cname;
    std::mt19937 rng(9);
    std::vector<int8_t> data(static_cast<size_t>(30 * e));
    for (int8_t& v : data) v = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
    std::vector<int8_t> want(static_cast<size_t>(3 * 28 * e));
    for (int tt = 0; tt < 3; ++tt) {
      for (int yy = 0; yy < 4; ++yy) {
        for (int xx = 0; xx < 7; ++xx) {
          for (int l = 0; l < e; ++l) {
            const int r = tt * 2 + yy - 1, c = xx - 1;
            const bool inside = r >= 0 && r < 6 && c >= 0 && c < 5;
            const int32_t v = inside ? data[static_cast<size_t>((r * 5 + c) * e + l)] : 0;
            want[static_cast<size_t>(((tt * 4 + yy) * 7 + xx) * e + l)] = static_cast<int8_t>(v + 1);
          }
        }
      }
    }
    for (const char* kind : {"fsim", "cycle"}) {
      auto dev = runtime::Device::create(kind, prog.config, runtime::dram_bytes_for({prog}));
      const runtime::LoadedProgram lp = dev->load(prog);
      dev->copy_to_device(lp.segment_addr(prog, "img"), data.data(), data.size());
      dev->submit(lp);
      dev->wait();
      std::vector<int8_t> got(want.size());
      dev->copy_from_device(got.data(), lp.segment_addr(prog, "out"), got.size());
      dev->unload(lp);
      EXPECT_EQ(got, want) << cname << " on " << kind;
    }
  }
}

// ---------------------------------------------------------------- (b) the residual add

/// qadd as the CPU runs it (runtime/cpu/kernels.cc k_qadd): y = rhe_sat((sa (qa - za) +
/// sb (qb - zb)) / sy, zy), nearbyint rounding (half to even). With sa = ma sy / 2^s and
/// sb = mb sy / 2^s (dyadic scales, so the double arithmetic is exact) this is
///   y = clip(rhe((ma (qa - za) + mb (qb - zb)) / 2^s) + zy, -128, 127),
/// which the accelerator computes in int32 with the ALU: x = ma (qa - za) + mb (qb - zb);
/// t = x >> s; p = t - ((t >> 1) << 1) (the parity of t); y = (x + p + 2^(s-1) - 1) >> s + zy
/// (round half to even: ties go up exactly when t is odd), clipped.
struct QaddSpec {
  int64_t n = 4096;  ///< elements (a multiple of the ACC element times `tile_rows`)
  int64_t tile_rows = 16;
  int32_t za = 3, zb = -7, zy = 5;
  int32_t ma = 61, mb = 97, shift = 7;
  float sy = 0.25f;
  float sa() const { return static_cast<float>(double(ma) * sy / double(1 << shift)); }
  float sb() const { return static_cast<float>(double(mb) * sy / double(1 << shift)); }
};

/// The residual add as loop nests: per tile, copies of both operands into ACC (int8 widened:
/// LOAD ACC_8BIT), the ALU chain above on xa, xb and a scratch t, and the copy of the int8
/// result to y. DRAM a, b, y: [rows][BATCH][BLOCK_OUT] int8.
MatmulTir make_qadd_loops(const isa::HwConfig& cfg, const QaddSpec& q) {
  const int b = cfg.batch(), bo = cfg.block_out();
  const int rows = int(q.n / (b * bo)), tr = int(q.tile_rows);
  Buffer a("a", DataType::int8(), {rows, b, bo});
  Buffer bb_("b", DataType::int8(), {rows, b, bo});
  Buffer y("y", DataType::int8(), {rows, b, bo});
  Buffer xa("xa", DataType::int32(), {tr, b, bo}, MemScope::kAcc);
  Buffer xb("xb", DataType::int32(), {tr, b, bo}, MemScope::kAcc);
  Buffer t("t", DataType::int32(), {tr, b, bo}, MemScope::kAcc);
  Var to("to");
  std::vector<Stmt> tile;
  auto load = [&](const Buffer& dram, const Buffer& acc) {
    Var r("r"), bb("bb"), oo("oo");
    return dma_copy(loop(
        r, tr,
        loop(bb, b,
             loop(oo, bo, tir::buffer_store(acc, i32(tir::buffer_load(dram, {to * tr + r, bb, oo})), {r, bb, oo})))));
  };
  // dst = f(dst[, src]) element-wise
  auto op = [&](const Buffer& dst, auto value_of, const Buffer* src = nullptr) {
    Var r("r"), bb("bb"), oo("oo");
    Expr x = tir::buffer_load(dst, {r, bb, oo});
    Expr s = src ? tir::buffer_load(*src, {r, bb, oo}) : Expr();
    return alu(loop(r, tr, loop(bb, b, loop(oo, bo, tir::buffer_store(dst, value_of(x, s), {r, bb, oo})))));
  };
  auto shr = [](int n) { return [n](Expr x, Expr) { return call2(tir::intrin::kShiftRight, x, n); }; };
  auto add = [](int n) { return [n](Expr x, Expr) { return x + n; }; };
  auto mul = [](int n) { return [n](Expr x, Expr) { return x * n; }; };
  auto vadd = [](Expr x, Expr s) { return x + s; };
  tile.push_back(load(a, xa));
  tile.push_back(load(bb_, xb));
  tile.push_back(op(xa, add(-q.za)));
  tile.push_back(op(xa, mul(q.ma)));
  tile.push_back(op(xb, add(-q.zb)));
  tile.push_back(op(xb, mul(q.mb)));
  tile.push_back(op(xa, vadd, &xb));  // x
  tile.push_back(op(t, mul(0)));
  tile.push_back(op(t, vadd, &xa));
  tile.push_back(op(t, shr(q.shift)));  // t = x >> s
  tile.push_back(op(xb, mul(0)));
  tile.push_back(op(xb, vadd, &t));
  tile.push_back(op(xb, shr(1)));
  tile.push_back(op(xb, [](Expr x, Expr) { return call2(tir::intrin::kShiftLeft, x, 1); }));
  tile.push_back(op(xb, mul(-1)));
  tile.push_back(op(t, vadd, &xb));  // t = parity
  tile.push_back(op(xa, vadd, &t));
  tile.push_back(op(xa, add((1 << (q.shift - 1)) - 1)));
  tile.push_back(op(xa, shr(q.shift)));
  tile.push_back(op(xa, add(q.zy)));
  tile.push_back(op(xa, [](Expr x, Expr) { return tir::max(x, -128); }));
  tile.push_back(op(xa, [](Expr x, Expr) { return tir::min(x, 127); }));
  {
    Var r("r"), bb("bb"), oo("oo");
    tile.push_back(
        dma_copy(loop(r, tr,
                      loop(bb, b,
                           loop(oo, bo,
                                tir::buffer_store(y, tir::cast(DataType::int8(), tir::buffer_load(xa, {r, bb, oo})),
                                                  {to * tr + r, bb, oo}))))));
  }
  Stmt body = loop(to, rows / tr, tir::seq(tile));
  body = tir::allocate(xa, tir::allocate(xb, tir::allocate(t, body)));
  Var pa("a_param", DataType::handle()), pb("b_param", DataType::handle()), py("y_param", DataType::handle());
  MatmulTir out;
  out.func = tir::PrimFunc("qadd_loops", {pa, pb, py}, {{pa, a}, {pb, bb_}, {py, y}}, body);
  out.segments = {{"a", "a", isa::SegmentKind::kInput, 0, isa::MemType::kAcc8},
                  {"b", "b", isa::SegmentKind::kInput, 0, isa::MemType::kAcc8},
                  {"y", "out", isa::SegmentKind::kOutput, 0, isa::MemType::kOut}};
  return out;
}

/// The CPU's qadd kernel on a and b (same shape [n]).
std::vector<int8_t> cpu_qadd(const QaddSpec& q, const std::vector<int8_t>& a, const std::vector<int8_t>& b) {
  return ::tessel::testing::cpu_qadd({q.n}, {q.sa(), q.za}, {q.sb(), q.zb}, {q.sy, q.zy}, false, a, b);
}

/// Runs the residual-add Program on a device of `kind`.
RunResult run_qadd(const std::string& kind, const isa::Program& prog, const std::vector<int8_t>& a,
                   const std::vector<int8_t>& b) {
  auto dev = runtime::Device::create(kind, prog.config, runtime::dram_bytes_for({prog}));
  const runtime::LoadedProgram lp = dev->load(prog);
  dev->copy_to_device(lp.segment_addr(prog, "a"), a.data(), a.size());
  dev->copy_to_device(lp.segment_addr(prog, "b"), b.data(), b.size());
  dev->submit(lp);
  RunResult out;
  out.cycles = dev->wait().cycles;
  out.c.resize(a.size());
  dev->copy_from_device(out.c.data(), lp.segment_addr(prog, "out"), out.c.size());
  dev->unload(lp);
  return out;
}

TEST(AccelTirLowerE2e, ResidualAddBitExactWithTheCpuQaddKernel) {
  const QaddSpec q;
  std::mt19937 rng(23);
  std::vector<int8_t> a(static_cast<size_t>(q.n)), b(a.size());
  for (int8_t& x : a) x = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
  for (int8_t& x : b) x = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
  const std::vector<int8_t> want = cpu_qadd(q, a, b);
  // the data exercise the rounding ties and both clip bounds
  int ties = 0, lo = 0, hi = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const int32_t x = q.ma * (a[i] - q.za) + q.mb * (b[i] - q.zb);
    ties += (x & ((1 << q.shift) - 1)) == (1 << (q.shift - 1));
    lo += want[i] == -128;
    hi += want[i] == 127;
  }
  EXPECT_GT(ties, 10);
  EXPECT_GT(lo, 10);
  EXPECT_GT(hi, 10);
  for (const auto& [cname, cfg] : test_configs()) {
    const MatmulTir t = make_qadd_loops(cfg, q);
    BuildReport rep;
    const isa::Program prog = build_accel_program(t.func, cfg, t.segments, {}, &rep);
    const int64_t tiles = q.n / (cfg.batch() * cfg.block_out()) / q.tile_rows;
    EXPECT_EQ(rep.alus, tiles * 20) << cname;
    EXPECT_EQ(rep.gemms, 0) << cname;
    const RunResult f = run_qadd("fsim", prog, a, b);
    const RunResult c = run_qadd("cycle", prog, a, b);
    EXPECT_EQ(f.c, want) << cname << " on fsim";
    EXPECT_EQ(c.c, want) << cname << " on cycle";
    // the stream cost model (compiler/backend/accel/stream_cost.h) gives the cycle model's count
    EXPECT_EQ(c.cycles, accel::estimate_cycles(prog)) << cname;
    std::printf("[ cycles ] qadd   %-10s insns=%lld uops=%lld cycles=%llu\n", cname.c_str(),
                static_cast<long long>(rep.instructions), static_cast<long long>(rep.uops),
                static_cast<unsigned long long>(c.cycles));
  }
}

}  // namespace
}  // namespace tessel::compiler::accel_tir::testing
