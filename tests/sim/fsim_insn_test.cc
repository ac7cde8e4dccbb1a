// fsim: each instruction kind against hand-computed expectations (default config: BATCH 1,
// BLOCK_IN = BLOCK_OUT = 16; INP element 16 B, WGT 256 B, ACC 64 B, OUT and ACC_8BIT 16 B).
#include <gtest/gtest.h>

#include <climits>
#include <cstring>
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
using test::ProgramBuilder;

constexpr DepFlags kPushNext{false, false, false, true};
constexpr DepFlags kPopPrev{true, false, false, false};
constexpr DepFlags kPopPrevPushPrev{true, false, true, false};
constexpr DepFlags kPopNext{false, true, false, false};

/// INP element k has lanes k*8 + c (c < 16), so every (element, lane) byte is distinct.
std::vector<int8_t> inp_elements(int n) {
  std::vector<int8_t> v(size_t(n) * 16);
  for (int k = 0; k < n; ++k)
    for (int c = 0; c < 16; ++c) v[size_t(k) * 16 + c] = int8_t(k * 8 + c);
  return v;
}

TEST(FsimLoad, InpWithPaddingOnEverySideOverwritesOldRows) {
  ProgramBuilder b;
  const uint32_t inp = b.add_i8("inp", MemType::kInp, inp_elements(8));
  // First fill SRAM rows 10..29 with data (x_stride 1: row y holds elements y..y+4), then load 2x2 elements
  // (DRAM elements {0,1} and {3,4}, x_stride 3) with pads y 1/2, x 1/1 at sram 10: a 5x4
  // rectangle, i.e. rows 10..29.
  b.emit(isa::make_mem(Opcode::kLoad, MemType::kInp, 10, inp, 4, 5, 1));
  b.emit(isa::make_mem(Opcode::kLoad, MemType::kInp, 10, inp, 2, 2, 3, 1, 2, 1, 1));
  b.emit(isa::make_finish());
  FunctionalSimulator sim({});
  RunStats st;
  test::run_program(sim, b.program(), &st);
  const Datapath& dp = sim.datapath();
  auto expect_row = [&](uint32_t row, int elem) {
    for (int c = 0; c < 16; ++c) {
      const int want = elem < 0 ? 0 : elem * 8 + c;
      EXPECT_EQ(dp.inp_row(row)[c], want) << "row " << row << " lane " << c;
    }
  };
  for (uint32_t x = 0; x < 4; ++x) expect_row(10 + x, -1);  // y pad 0
  expect_row(14, -1);                                        // x pad 0
  expect_row(15, 0);
  expect_row(16, 1);
  expect_row(17, -1);                                        // x pad 1
  expect_row(18, -1);
  expect_row(19, 3);
  expect_row(20, 4);
  expect_row(21, -1);
  for (uint32_t r = 22; r < 30; ++r) expect_row(r, -1);      // two rows of y pad 1
  // 4x5 + 2x2 elements of 16 bytes read from DRAM; pads are not DRAM traffic.
  EXPECT_EQ(st.counters.inp_load_nbytes, uint64_t(20 + 4) * 16);
  EXPECT_EQ(st.counters.insn_count, 3u);
}

TEST(FsimLoad, WgtRowsKeepTheirLayout) {
  ProgramBuilder b;
  std::vector<int8_t> w(2 * 256);
  for (int k = 0; k < 2; ++k)
    for (int o = 0; o < 16; ++o)
      for (int c = 0; c < 16; ++c) w[size_t(k) * 256 + o * 16 + c] = int8_t(k * 64 + o * 3 - c);
  const uint32_t wgt = b.add_i8("wgt", MemType::kWgt, w);
  b.emit(isa::make_mem(Opcode::kLoad, MemType::kWgt, 5, wgt, 1, 2, 2));
  b.emit(isa::make_finish());
  FunctionalSimulator sim({});
  RunStats st;
  test::run_program(sim, b.program(), &st);
  EXPECT_EQ(sim.datapath().wgt_row(5)[0], 0);
  EXPECT_EQ(sim.datapath().wgt_row(5)[1 * 16 + 2], 1);     // o 1, c 2: 3 - 2
  EXPECT_EQ(sim.datapath().wgt_row(6)[15 * 16 + 15], 94);  // 64 + 45 - 15
  EXPECT_EQ(st.counters.wgt_load_nbytes, 512u);
}

TEST(FsimLoad, UopsAreDecoded) {
  ProgramBuilder b;
  const uint32_t u = b.add_uops("uop", {Uop{1, 2, 3}, Uop{2047, 2047, 1023}, Uop{7, 0, 9}});
  // Two rows of 1 uop with x_stride 2: DRAM uops 0 and 2 land at SRAM 100, 101.
  b.emit(isa::make_mem(Opcode::kLoad, MemType::kUop, 100, u, 2, 1, 2));
  b.emit(isa::make_mem(Opcode::kLoad, MemType::kUop, 102, u + 1, 1, 1, 1));
  b.emit(isa::make_finish());
  FunctionalSimulator sim({});
  RunStats st;
  test::run_program(sim, b.program(), &st);
  EXPECT_EQ(sim.datapath().uop(100), (Uop{1, 2, 3}));
  EXPECT_EQ(sim.datapath().uop(101), (Uop{7, 0, 9}));
  EXPECT_EQ(sim.datapath().uop(102), (Uop{2047, 2047, 1023}));
  EXPECT_EQ(st.counters.uop_load_nbytes, 12u);
}

TEST(FsimLoad, AccWithPadsMirrorsLowByteIntoOut) {
  ProgramBuilder b;
  std::vector<int32_t> a(2 * 16);
  for (int c = 0; c < 16; ++c) {
    a[c] = 0x12345600 + 0x7F + c;  // low byte 0x7F + c: 127, then -128, -127, ...
    a[16 + c] = -1000 * c;
  }
  const uint32_t acc = b.add_i32("acc", a);
  // Pre-fill rows 0..5 with data so the pads visibly overwrite them.
  b.emit(isa::make_mem(Opcode::kLoad, MemType::kAcc, 0, acc, 3, 2, 0));
  // One row of two elements with x pads 1/1 and y pads 1/0: rows 0..3 zero, 4 row... layout:
  // width 4, height 2: rows 0-3 pad, 4 pad, 5 = a0, 6 = a1, 7 pad.
  b.emit(isa::make_mem(Opcode::kLoad, MemType::kAcc, 0, acc, 1, 2, 2, 1, 0, 1, 1));
  b.emit(isa::make_finish());
  FunctionalSimulator sim({});
  RunStats st;
  test::run_program(sim, b.program(), &st);
  const Datapath& dp = sim.datapath();
  for (uint32_t r : {0u, 1u, 2u, 3u, 4u, 7u}) {
    for (int c = 0; c < 16; ++c) {
      EXPECT_EQ(dp.acc_row(r)[c], 0) << "row " << r;
      EXPECT_EQ(dp.out_row(r)[c], 0) << "row " << r;
    }
  }
  EXPECT_EQ(dp.acc_row(5)[0], 0x1234567F);
  EXPECT_EQ(dp.out_row(5)[0], 127);
  EXPECT_EQ(dp.acc_row(5)[1], 0x12345680);
  EXPECT_EQ(dp.out_row(5)[1], -128);
  EXPECT_EQ(dp.out_row(5)[15], int8_t(0x8E));
  EXPECT_EQ(dp.acc_row(6)[3], -3000);
  EXPECT_EQ(dp.out_row(6)[3], int8_t(0x48));  // -3000 = 0xFFFFF448
  EXPECT_EQ(st.counters.acc_load_nbytes, uint64_t(6 + 2) * 64);
}

TEST(FsimLoad, Acc8SignExtends) {
  ProgramBuilder b;
  std::vector<int8_t> v(16);
  for (int c = 0; c < 16; ++c) v[c] = int8_t(c * 17 - 128);  // -128, -111, ..., 127
  const uint32_t a8 = b.add_i8("acc8", MemType::kAcc8, v);
  b.emit(isa::make_mem(Opcode::kLoad, MemType::kAcc8, 9, a8, 1, 1, 1, 0, 0, 1, 0));
  b.emit(isa::make_finish());
  FunctionalSimulator sim({});
  RunStats st;
  test::run_program(sim, b.program(), &st);
  const Datapath& dp = sim.datapath();
  EXPECT_EQ(dp.acc_row(9)[0], 0);  // x pad
  EXPECT_EQ(dp.acc_row(10)[0], -128);
  EXPECT_EQ(dp.acc_row(10)[1], -111);
  EXPECT_EQ(dp.acc_row(10)[15], 127);
  EXPECT_EQ(dp.out_row(10)[1], -111);
  EXPECT_EQ(st.counters.acc_load_nbytes, 16u);
}

TEST(FsimStore, NarrowsByTruncationWithStride) {
  ProgramBuilder b;
  std::vector<int32_t> a(4 * 16);
  for (int k = 0; k < 4; ++k)
    for (int c = 0; c < 16; ++c) a[size_t(k) * 16 + c] = 0x100 * (c + 1) + k * 16 + c - 32;
  const uint32_t acc = b.add_i32("acc", a);
  const uint32_t out = b.add_output("out", MemType::kOut, 8);
  isa::Instruction ld = isa::make_mem(Opcode::kLoad, MemType::kAcc, 20, acc, 1, 4, 4);
  ld.dep = kPushNext;  // results ready for store (g2s)
  b.emit(ld);
  isa::Instruction st = isa::make_mem(Opcode::kStore, MemType::kOut, 20, out, 2, 2, 3);
  st.dep = kPopPrevPushPrev;
  b.emit(st);
  b.emit(isa::make_noop(Module::kCompute, kPopNext));  // OUT drained (s2g)
  b.emit(isa::make_finish());
  FunctionalSimulator sim({});
  RunStats stats;
  Dram d = test::run_program(sim, b.program(), &stats);
  const std::vector<int8_t> o = test::segment_i8(d, b.program(), "out");
  const int dram_elem_of_row[4] = {0, 1, 3, 4};
  for (int k = 0; k < 4; ++k)
    for (int c = 0; c < 16; ++c)
      EXPECT_EQ(o[size_t(dram_elem_of_row[k]) * 16 + c], int8_t(k * 16 + c - 32)) << k << " " << c;
  for (int c = 0; c < 16; ++c) {
    EXPECT_EQ(o[2 * 16 + c], 0);  // the stride gap is not written
    EXPECT_EQ(o[5 * 16 + c], 0);
  }
  EXPECT_EQ(o[0], -32);
  EXPECT_EQ(o[4 * 16 + 15], 31);
  EXPECT_EQ(stats.counters.out_store_nbytes, 64u);
  EXPECT_EQ(stats.counters.insn_count, 4u);
}

/// Loads INP rows 0..9 (inp[r][c] = r + c) and WGT rows 0..3 (wgt[w][o][c] = w + 1 on the
/// diagonal c == o, 1 at c == (o + 1) % 16, else 0), so one GEMM uop adds
/// (w + 1) * (r + o) + (r + (o + 1) % 16) to ACC lane o.
void emit_gemm_operands(ProgramBuilder& b) {
  std::vector<int8_t> inp(10 * 16), wgt(4 * 256);
  for (int r = 0; r < 10; ++r)
    for (int c = 0; c < 16; ++c) inp[size_t(r) * 16 + c] = int8_t(r + c);
  for (int w = 0; w < 4; ++w)
    for (int o = 0; o < 16; ++o) {
      wgt[size_t(w) * 256 + o * 16 + o] = int8_t(w + 1);
      wgt[size_t(w) * 256 + o * 16 + (o + 1) % 16] = 1;
    }
  const uint32_t i = b.add_i8("inp", MemType::kInp, inp);
  const uint32_t w = b.add_i8("wgt", MemType::kWgt, wgt);
  b.emit(isa::make_mem(Opcode::kLoad, MemType::kInp, 0, i, 1, 10, 10));
  isa::Instruction lw = isa::make_mem(Opcode::kLoad, MemType::kWgt, 0, w, 1, 4, 4);
  lw.dep = kPushNext;  // l2g
  b.emit(lw);
}

int32_t product(int r, int w, int o) { return (w + 1) * (r + o) + (r + (o + 1) % 16); }

TEST(FsimGemm, LoopFactorsAccumulateAndReset) {
  ProgramBuilder b;
  emit_gemm_operands(b);
  const uint32_t u = b.add_uops("uop", {Uop{0, 0, 0}, Uop{1, 2, 1}, Uop{0, 0, 0}});
  isa::Instruction lu = isa::make_mem(Opcode::kLoad, MemType::kUop, 0, u, 1, 3, 3);
  lu.dep = kPopPrev;
  b.emit(lu);
  // dst = u.dst + 10 i + 2 j, src = u.src + i + 3 j, wgt = u.wgt + 2 i; i < 2, j < 3.
  const isa::Instruction g = isa::make_gemm(0, 2, 2, 3, 10, 2, 1, 3, 2, 0);
  b.emit(g);
  b.emit(g);  // accumulates a second time: every written row doubles
  // Reset rows 0, 2, 4 (uop 2 = dst 0, j < 3, dst_factor_in 2).
  b.emit(isa::make_gemm(2, 3, 1, 3, 0, 2, 0, 0, 0, 0, true));
  b.emit(isa::make_finish());
  FunctionalSimulator sim({});
  RunStats st;
  test::run_program(sim, b.program(), &st);
  const Datapath& dp = sim.datapath();
  // (acc row, inp row, wgt row) of every uop iteration, worked out by hand from the nest.
  struct Hit { uint32_t row; int src; int wgt; };
  const Hit hits[] = {
      {0, 0, 0},  {2, 3, 0},  {4, 6, 0},  {10, 1, 2}, {12, 4, 2}, {14, 7, 2},   // uop 0
      {1, 2, 1},  {3, 5, 1},  {5, 8, 1},  {11, 3, 3}, {13, 6, 3}, {15, 9, 3}};  // uop 1
  for (const Hit& h : hits) {
    const bool reset = h.row == 0 || h.row == 2 || h.row == 4;
    for (int o = 0; o < 16; ++o) {
      const int32_t want = reset ? 0 : 2 * product(h.src, h.wgt, o);
      EXPECT_EQ(dp.acc_row(h.row)[o], want) << "row " << h.row << " lane " << o;
      EXPECT_EQ(dp.out_row(h.row)[o], int8_t(want)) << "row " << h.row << " lane " << o;
    }
  }
  EXPECT_EQ(dp.acc_row(13)[0], 62);       // 2 * (4 * (6 + 0) + (6 + 1))
  EXPECT_EQ(dp.acc_row(15)[15], 210);     // 2 * (4 * (9 + 15) + (9 + 0))
  EXPECT_EQ(dp.acc_row(6)[0], 0);         // untouched rows stay zero
  // gemm_counter counts the two non-reset GEMMs: 2 * (2 * 3 * 2).
  EXPECT_EQ(st.counters.gemm_counter, 24u);
}

TEST(FsimGemm, WrapsAt32BitsAndOutKeepsLowByte) {
  ProgramBuilder b;
  std::vector<int8_t> inp(16, int8_t(-128)), wgt(256, int8_t(-128));
  const uint32_t i = b.add_i8("inp", MemType::kInp, inp);
  const uint32_t w = b.add_i8("wgt", MemType::kWgt, wgt);
  std::vector<int32_t> start(16, INT_MAX - 100);
  const uint32_t a = b.add_i32("acc", start);
  const uint32_t u = b.add_uops("uop", {Uop{0, 0, 0}});
  b.emit(isa::make_mem(Opcode::kLoad, MemType::kInp, 0, i, 1, 1, 1));
  isa::Instruction lw = isa::make_mem(Opcode::kLoad, MemType::kWgt, 0, w, 1, 1, 1);
  lw.dep = kPushNext;
  b.emit(lw);
  isa::Instruction lu = isa::make_mem(Opcode::kLoad, MemType::kUop, 0, u, 1, 1, 1);
  lu.dep = kPopPrev;
  b.emit(lu);
  b.emit(isa::make_mem(Opcode::kLoad, MemType::kAcc, 0, a, 1, 1, 1));
  b.emit(isa::make_gemm(0, 1, 1, 1, 0, 0, 0, 0));
  b.emit(isa::make_finish());
  FunctionalSimulator sim({});
  test::run_program(sim, b.program());
  // 16 * (-128 * -128) = 262144; INT_MAX - 100 + 262144 wraps to INT_MIN + 262043.
  EXPECT_EQ(sim.datapath().acc_row(0)[7], INT_MIN + 262043);
  EXPECT_EQ(sim.datapath().out_row(0)[7], int8_t((INT_MIN + 262043) & 0xFF));
}

/// GEMM on several shapes (BATCH x BLOCK_IN x BLOCK_OUT; the specialised kernels and the generic
/// one) against a direct dot product over the loaded INP/WGT data.
TEST(FsimGemm, ShapesMatchDotProductReference) {
  struct Shape { int log_batch, log_in, log_out, log_inp_buf, log_wgt_buf, log_acc_buf; };
  const Shape shapes[] = {{0, 4, 4, 15, 18, 17}, {1, 4, 4, 15, 18, 17}, {0, 3, 3, 14, 16, 16},
                          {0, 5, 5, 15, 18, 17}, {0, 4, 3, 15, 17, 16}, {1, 3, 4, 15, 18, 17}};
  for (const Shape& sh : shapes) {
    isa::HwConfig cfg;
    cfg.log_batch = sh.log_batch;
    cfg.log_block_in = sh.log_in;
    cfg.log_block_out = sh.log_out;
    cfg.log_inp_buff_size = sh.log_inp_buf;
    cfg.log_wgt_buff_size = sh.log_wgt_buf;
    cfg.log_acc_buff_size = sh.log_acc_buf;
    const int B = cfg.batch(), BI = cfg.block_in(), BO = cfg.block_out();
    const std::string name = cfg.name();
    ProgramBuilder b(cfg);
    // 6 INP rows, 4 WGT rows of pseudo-random int8 (full range).
    std::vector<int8_t> inp(size_t(6) * B * BI), wgt(size_t(4) * BO * BI);
    uint32_t x = 99;
    for (auto* v : {&inp, &wgt})
      for (auto& e : *v) {
        x = x * 1664525u + 1013904223u;
        e = int8_t(x >> 24);
      }
    const uint32_t ia = b.add_i8("inp", MemType::kInp, inp);
    const uint32_t wa = b.add_i8("wgt", MemType::kWgt, wgt);
    const uint32_t ua = b.add_uops("uop", {Uop{0, 1, 2}, Uop{1, 0, 0}});
    b.emit(isa::make_mem(Opcode::kLoad, MemType::kInp, 0, ia, 1, 6, 6));
    isa::Instruction lw = isa::make_mem(Opcode::kLoad, MemType::kWgt, 0, wa, 1, 4, 4);
    lw.dep = kPushNext;
    b.emit(lw);
    isa::Instruction lu = isa::make_mem(Opcode::kLoad, MemType::kUop, 0, ua, 1, 2, 2);
    lu.dep = kPopPrev;
    b.emit(lu);
    b.emit(isa::make_gemm(0, 2, 1, 2, 0, 1, 0, 1, 0, 1, true));  // reset rows 0..2
    // i < 2, j < 2: dst = u.dst + j (rows overlap: row 1 gets two uops), src = u.src + 2 i + j,
    // wgt = u.wgt + i.
    b.emit(isa::make_gemm(0, 2, 2, 2, 0, 1, 2, 1, 1, 0));
    b.emit(isa::make_finish());
    FunctionalSimulator sim(cfg);
    test::run_program(sim, b.program());
    std::vector<int32_t> want(size_t(3) * B * BO, 0);
    const Uop us[2] = {Uop{0, 1, 2}, Uop{1, 0, 0}};
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j)
        for (const Uop& u : us) {
          const size_t d = u.dst + j, sr = u.src + 2 * i + j, w = u.wgt + i;
          for (int bb = 0; bb < B; ++bb)
            for (int o = 0; o < BO; ++o) {
              int32_t sum = 0;
              for (int c = 0; c < BI; ++c)
                sum += int32_t(inp[(sr * B + bb) * BI + c]) * int32_t(wgt[(w * BO + o) * BI + c]);
              want[(d * B + bb) * BO + o] += sum;
            }
        }
    for (uint32_t d = 0; d < 3; ++d)
      for (int l = 0; l < B * BO; ++l) {
        ASSERT_EQ(sim.datapath().acc_row(d)[l], want[size_t(d) * B * BO + l])
            << name << " row " << d << " lane " << l;
        ASSERT_EQ(sim.datapath().out_row(d)[l], int8_t(want[size_t(d) * B * BO + l])) << name;
      }
  }
}

/// One lane: ACC dst value a, ACC src value b, expected result.
struct AluCase {
  int32_t a, b, want;
};

/// Runs one vector ALU op with ACC row 40 = a (dst) and row 41 = b (src), one case per lane.
void check_alu_vector(AluOp op, const std::vector<AluCase>& cases) {
  ProgramBuilder b;
  std::vector<int32_t> rows(2 * 16, 0);
  for (size_t l = 0; l < cases.size(); ++l) {
    rows[l] = cases[l].a;
    rows[16 + l] = cases[l].b;
  }
  const uint32_t a = b.add_i32("acc", rows);
  const uint32_t u = b.add_uops("uop", {Uop{40, 41, 0}});
  b.emit(isa::make_mem(Opcode::kLoad, MemType::kUop, 0, u, 1, 1, 1));
  b.emit(isa::make_mem(Opcode::kLoad, MemType::kAcc, 40, a, 1, 2, 2));
  b.emit(isa::make_alu(op, 0, 1, 1, 1, 0, 0, 0, 0));
  b.emit(isa::make_finish());
  FunctionalSimulator sim({});
  RunStats st;
  test::run_program(sim, b.program(), &st);
  for (size_t l = 0; l < cases.size(); ++l) {
    EXPECT_EQ(sim.datapath().acc_row(40)[l], cases[l].want)
        << "alu op " << int(op) << " lane " << l << ": " << cases[l].a << ", " << cases[l].b;
    EXPECT_EQ(sim.datapath().out_row(40)[l], int8_t(cases[l].want)) << "lane " << l;
    EXPECT_EQ(sim.datapath().acc_row(41)[l], cases[l].b) << "the source row is unchanged";
  }
  EXPECT_EQ(st.counters.alu_counter, 1u);
}

TEST(FsimAlu, MinMaxVector) {
  check_alu_vector(AluOp::kMin, {{5, 3, 3}, {-5, 3, -5}, {INT_MIN, INT_MAX, INT_MIN}, {7, 7, 7}});
  check_alu_vector(AluOp::kMax, {{5, 3, 5}, {-5, 3, 3}, {INT_MIN, INT_MAX, INT_MAX}, {-1, -2, -1}});
}

TEST(FsimAlu, AddWraps) {
  check_alu_vector(AluOp::kAdd,
                   {{5, 3, 8}, {-5, 3, -2}, {INT_MAX, 1, INT_MIN}, {INT_MIN, -1, INT_MAX}});
}

TEST(FsimAlu, ShrNegativeAndLargeAmounts) {
  check_alu_vector(AluOp::kShr, {
                                    {-100, 2, -25},           // arithmetic right shift
                                    {100, 2, 25},
                                    {-100, 40, -1},           // amount clamps to 31
                                    {100, 40, 0},
                                    {INT_MIN, 31, -1},
                                    {1, -4, 16},              // negative: shift left
                                    {1, -31, INT_MIN},
                                    {3, -40, INT_MIN},        // left by min(40, 31), wrapping
                                    {0x40000001, -2, 4},      // bits shifted out are lost
                                    {-3, -1, -6},
                                    {7, 0, 7},
                                    {5, INT_MIN, INT_MIN},    // -INT_MIN left: clamp to 31
                                });
}

TEST(FsimAlu, MulKeepsLow32Bits) {
  check_alu_vector(AluOp::kMul, {{65536, 65536, 0},
                                 {65537, 65537, 131073},  // 0x1_0002_0001
                                 {-3, 7, -21},
                                 {INT_MIN, -1, INT_MIN},
                                 {123456, 0, 0}});
}

TEST(FsimAlu, ImmediatesOverALoopNest) {
  ProgramBuilder b;
  std::vector<int32_t> rows(8 * 16);
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 16; ++c) rows[size_t(r) * 16 + c] = (r + 1) * 1000 - c * 300;
  const uint32_t a = b.add_i32("acc", rows);
  const uint32_t u = b.add_uops("uop", {Uop{0, 0, 0}, Uop{1, 0, 0}});
  b.emit(isa::make_mem(Opcode::kLoad, MemType::kUop, 0, u, 1, 2, 2));
  b.emit(isa::make_mem(Opcode::kLoad, MemType::kAcc, 0, a, 1, 8, 8));
  // Rows {0,1} + 4i + 2j for i < 2, j < 1 -> rows 0, 1, 4, 5: ADD -32768 (sign-extended).
  b.emit(isa::make_alu(AluOp::kAdd, 0, 2, 2, 1, 4, 2, 0, 0, true, -32768));
  // Then rows 0, 1 (uops 0, 1, one iteration): SHR by 0 (no change), SHR by -2 (left by 2).
  b.emit(isa::make_alu(AluOp::kShr, 0, 2, 1, 1, 0, 0, 0, 0, true, 0));  // shift by 0: no change
  b.emit(isa::make_alu(AluOp::kShr, 0, 2, 1, 1, 0, 0, 0, 0, true, -2));
  b.emit(isa::make_finish());
  FunctionalSimulator sim({});
  RunStats st;
  test::run_program(sim, b.program(), &st);
  const Datapath& dp = sim.datapath();
  // Rows 0 and 1 got ADD then SHR 0 then SHR -2 (the last two over the same uops, i = j = 0).
  for (int c = 0; c < 16; ++c) {
    const int32_t r0 = 1000 - c * 300 - 32768;
    const int32_t r1 = 2000 - c * 300 - 32768;
    EXPECT_EQ(dp.acc_row(0)[c], r0 * 4) << c;
    EXPECT_EQ(dp.acc_row(1)[c], r1 * 4) << c;
    EXPECT_EQ(dp.acc_row(4)[c], 5000 - c * 300 - 32768) << c;
    EXPECT_EQ(dp.acc_row(5)[c], 6000 - c * 300 - 32768) << c;
    EXPECT_EQ(dp.acc_row(2)[c], 3000 - c * 300) << c;  // untouched
    EXPECT_EQ(dp.out_row(0)[c], int8_t(r0 * 4)) << c;
  }
  EXPECT_EQ(dp.acc_row(0)[0], (1000 - 32768) * 4);
  // alu_counter: 2*1*2 + 1*1*2 + 1*1*2.
  EXPECT_EQ(st.counters.alu_counter, 8u);
}

TEST(FsimAlu, VectorSourceWithFactorsAndMinMaxImmediates) {
  ProgramBuilder b;
  std::vector<int32_t> rows(4 * 16);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 16; ++c) rows[size_t(r) * 16 + c] = (r - 2) * 100 + c;
  const uint32_t a = b.add_i32("acc", rows);
  const uint32_t u = b.add_uops("uop", {Uop{10, 0, 0}});
  b.emit(isa::make_mem(Opcode::kLoad, MemType::kUop, 0, u, 1, 1, 1));
  b.emit(isa::make_mem(Opcode::kLoad, MemType::kAcc, 0, a, 1, 4, 4));   // rows 0..3
  b.emit(isa::make_mem(Opcode::kLoad, MemType::kAcc, 10, a, 1, 4, 4));  // rows 10..13 = same
  // dst 10 + j, src 0 + j, j < 4: rows 10..13 += rows 0..3 (which hold the same values).
  b.emit(isa::make_alu(AluOp::kAdd, 0, 1, 1, 4, 0, 1, 0, 1));
  b.emit(isa::make_alu(AluOp::kMax, 0, 1, 1, 4, 0, 1, 0, 0, true, 0));     // ReLU
  b.emit(isa::make_alu(AluOp::kMin, 0, 1, 1, 4, 0, 1, 0, 0, true, 127));   // clip
  b.emit(isa::make_finish());
  FunctionalSimulator sim({});
  test::run_program(sim, b.program());
  const Datapath& dp = sim.datapath();
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 16; ++c) {
      const int32_t v = 2 * ((r - 2) * 100 + c);
      const int32_t want = v < 0 ? 0 : (v > 127 ? 127 : v);
      EXPECT_EQ(dp.acc_row(10 + r)[c], want) << r << " " << c;
      EXPECT_EQ(dp.out_row(10 + r)[c], int8_t(want)) << r << " " << c;
    }
  EXPECT_EQ(dp.acc_row(12)[5], 10);   // 2 * 5
  EXPECT_EQ(dp.acc_row(13)[15], 127); // 2 * 115 clipped
  EXPECT_EQ(dp.acc_row(11)[15], 0);   // 2 * -85 -> ReLU
}

TEST(FsimTokens, ZeroSizeInstructionsOnlyMoveTokens) {
  ProgramBuilder b;
  const uint32_t i = b.add_i8("inp", MemType::kInp, inp_elements(4));
  b.emit(isa::make_mem(Opcode::kLoad, MemType::kInp, 0, i, 1, 4, 4));
  // x_size 0 with y_size and pads set: still touches nothing.
  isa::Instruction z = isa::make_mem(Opcode::kLoad, MemType::kInp, 0, i, 3, 0, 0, 2, 2, 2, 2);
  z.dep = kPushNext;
  b.emit(z);
  b.emit(isa::make_noop(Module::kCompute, DepFlags{true, false, false, true}));  // l2g -> g2s
  b.emit(isa::make_noop(Module::kStore, kPopPrevPushPrev));                       // g2s -> s2g
  b.emit(isa::make_noop(Module::kCompute, kPopNext));                             // s2g
  b.emit(isa::make_finish());
  FunctionalSimulator sim({});
  RunStats st;
  test::run_program(sim, b.program(), &st);
  for (uint32_t r = 0; r < 4; ++r)
    for (int c = 0; c < 16; ++c) EXPECT_EQ(sim.datapath().inp_row(r)[c], int8_t(r * 8 + c));
  EXPECT_EQ(st.counters.inp_load_nbytes, 64u);
  EXPECT_EQ(st.counters.out_store_nbytes, 0u);
  EXPECT_EQ(st.counters.insn_count, 6u);
  EXPECT_EQ(st.cycles, 0u);
}

}  // namespace
}  // namespace tessel::sim
