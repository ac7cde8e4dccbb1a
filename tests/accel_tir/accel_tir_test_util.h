// Helpers of the accel_tir tests: golden files under tests/golden/accel_tir (regenerate with
// TESSEL_UPDATE_GOLDEN=1 and review the diff), the hand-written int8 matmul TIR (single-buffered
// with computed tokens, or two virtual threads in ping-pong with written tokens), its packing,
// a plain C++ reference and a run through the runtime's device API.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/backend/accel/tir/accel_tir.h"
#include "compiler/target/accel_intrin.h"
#include "compiler/tir/function.h"
#include "compiler/tir/intrinsics.h"
#include "compiler/tir/transforms/renew_defs.h"
#include "isa/config.h"
#include "runtime/device.h"
#include "support/error.h"
#include "tests/tir/tir_test_util.h"

namespace tessel::compiler::accel_tir::testing {

namespace ta = target::accel;
using tir::Buffer;
using tir::DataType;
using tir::Expr;
using tir::MemScope;
using tir::Stmt;
using tir::Var;

/// Compares `text` with tests/golden/accel_tir/<name> (TESSEL_UPDATE_GOLDEN=1 rewrites it).
inline void expect_golden(const std::string& name, const std::string& text) {
  tir::testing::expect_golden_in("accel_tir", name, text);
}

/// The message of the UserError `fn` throws ("" and a test failure if it throws none).
template <typename Fn>
std::string user_error(Fn&& fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no UserError thrown";
  return "";
}

/// The configurations the tests run: VTA's default, LOG_BLOCK=3 and LOG_BATCH=1.
inline std::vector<std::pair<std::string, isa::HwConfig>> test_configs() {
  isa::HwConfig def;
  isa::HwConfig block8;
  block8.log_block_in = block8.log_block_out = 3;  // buffers scaled so the fields fit 128 bits
  block8.log_inp_buff_size = 14;
  block8.log_wgt_buff_size = 16;
  block8.log_acc_buff_size = 16;
  isa::HwConfig batch2;
  batch2.log_batch = 1;
  def.validate();
  block8.validate();
  batch2.validate();
  return {{"default", def}, {"log_block3", block8}, {"log_batch1", batch2}};
}

/// C (m x n, int8) = clip((A (m x k, int8) x W (k x n, int8) + 2^(shift-1)) >> shift, -128, 127)
/// with int32 accumulation. Tiles: tm rows of INP elements (batch rows each) by tn output blocks.
struct MatmulSpec {
  int64_t m = 32, k = 64, n = 64;
  int64_t tm = 8, tn = 2;
  int shift = 9;
  bool ping_pong = false;  ///< two virtual threads, explicit tokens
};

/// Block counts of a spec under a config.
struct MatmulDims {
  int64_t b, bi, bo, mb, kb, nb, tiles_m, tiles_n;
};
inline MatmulDims dims(const isa::HwConfig& cfg, const MatmulSpec& s) {
  MatmulDims d{cfg.batch(), cfg.block_in(), cfg.block_out(), 0, 0, 0, 0, 0};
  d.mb = s.m / d.b;
  d.kb = s.k / d.bi;
  d.nb = s.n / d.bo;
  d.tiles_m = d.mb / s.tm;
  d.tiles_n = d.nb / s.tn;
  return d;
}

struct MatmulTir {
  tir::PrimFunc func;
  std::vector<SegmentSpec> segments;
};

/// The matmul as accelerator TIR (see MatmulSpec). DRAM: a [mb][kb] INP elements, w [nb][kb] WGT
/// elements (element (j, q) holds W[q*bi + i][j*bo + o] at [o][i]), c [mb][nb] OUT elements.
inline MatmulTir make_matmul_tir(const isa::HwConfig& cfg, const MatmulSpec& s) {
  const MatmulDims d = dims(cfg, s);
  const int ts = s.ping_pong ? 2 : 1;  // SRAM copies (virtual threads)
  Buffer a("a", DataType::int8(), {int(d.mb), int(d.kb), int(d.b), int(d.bi)});
  Buffer w("w", DataType::int8(), {int(d.nb), int(d.kb), int(d.bo), int(d.bi)});
  Buffer c("c", DataType::int8(), {int(d.mb), int(d.nb), int(d.b), int(d.bo)});
  const int64_t a_rows = s.tm * d.kb, w_rows = s.tn * d.kb, c_rows = s.tm * s.tn;
  Buffer a_buf("a_buf", DataType::int8(), {int(ts * a_rows), int(d.b), int(d.bi)}, MemScope::kInp);
  Buffer w_buf("w_buf", DataType::int8(), {int(ts * w_rows), int(d.bo), int(d.bi)}, MemScope::kWgt);
  Buffer c_buf("c_buf", DataType::int32(), {int(ts * c_rows), int(d.b), int(d.bo)}, MemScope::kAcc);
  const int tm = int(s.tm), tn = int(s.tn), kb = int(d.kb), nb = int(d.nb);

  // one tile's stages; `v` the thread (SRAM copy), mo/no the tile
  auto load = [&](Expr v, Expr mo, Expr no) {
    return tir::seq(
        {// a tile's rows of the operands are whole rows of blocks, consecutive in DRAM: one run each
         ta::dma_load(cfg, isa::MemType::kInp, a_buf, v * int(a_rows), a, mo * (tm * kb), 1, tm * kb, tm * kb),
         ta::dma_load(cfg, isa::MemType::kWgt, w_buf, v * int(w_rows), w, no * (tn * kb), 1, tn * kb, tn * kb)});
  };
  auto compute = [&](Expr v) {
    Var i("i"), j("j"), q("q");
    auto acc = [&]() { return ta::sram_ptr(cfg, c_buf, v * int(c_rows) + i * tn + j, 1, 3); };
    // every kernel binds its own loop variables (single assignment: tir's verifier)
    auto nest = [&](Stmt body) {
      return tir::transforms::renew_defs(tir::for_loop(i, 0, tm, tir::ForKind::kSerial,
                                                       tir::for_loop(j, 0, tn, tir::ForKind::kSerial, body)));
    };
    auto kernel = [&](int kind, Stmt body) {
      return tir::attr_stmt(Expr(), std::string(ta::kUopKernel), kind, body);
    };
    std::vector<Stmt> st;
    st.push_back(kernel(0, nest(ta::gemm_uop(true, acc(), 0, 0))));
    Stmt gemm = ta::gemm_uop(false, acc(), ta::sram_ptr(cfg, a_buf, v * int(a_rows) + i * kb + q, 1, 1),
                             ta::sram_ptr(cfg, w_buf, v * int(w_rows) + j * kb + q, 1, 1));
    st.push_back(kernel(0, nest(tir::for_loop(q, 0, kb, tir::ForKind::kSerial, gemm))));
    const std::pair<isa::AluOp, int32_t> alu[4] = {{isa::AluOp::kAdd, 1 << (s.shift - 1)},
                                                   {isa::AluOp::kShr, s.shift},
                                                   {isa::AluOp::kMax, -128},
                                                   {isa::AluOp::kMin, 127}};
    for (const auto& [op, imm] : alu) st.push_back(kernel(1, nest(ta::alu_uop(op, true, imm, acc(), acc()))));
    return st;
  };
  auto store = [&](Expr v, Expr mo, Expr no) {
    return ta::dma_store(cfg, c_buf, v * int(c_rows), c, mo * (tm * nb) + no * tn, tm, tn, nb);
  };
  const isa::Module L = isa::Module::kLoad, C = isa::Module::kCompute, S = isa::Module::kStore;
  Stmt body;
  if (!s.ping_pong) {
    Var mo("mo"), no("no");
    Stmt tile = tir::seq({ta::coproc_scope(L, load(0, mo, no)), ta::coproc_scope(C, tir::seq(compute(0))),
                          ta::coproc_scope(S, store(0, mo, no))});
    body = tir::for_loop(mo, 0, int(d.tiles_m), tir::ForKind::kSerial,
                         tir::for_loop(no, 0, int(d.tiles_n), tir::ForKind::kSerial, tile));
  } else {
    // tiles t = 2*tp + v in pairs; the load, compute and store stages of the two threads are
    // interleaved, ordered by written tokens (VTA's virtual-thread protocol)
    const int pairs = int(d.tiles_m * d.tiles_n / 2);
    Var tp("tp"), v1("v"), v2("v"), v3("v");
    auto mo_of = [&](const Var& v) { return tir::floordiv(tp * 2 + v, int(d.tiles_n)); };
    auto no_of = [&](const Var& v) { return tir::floormod(tp * 2 + v, int(d.tiles_n)); };
    Stmt lstage = ta::coproc_scope(L, tir::seq({tir::if_then_else(tp >= 1, ta::dep_pop(C, L)),
                                                load(v1, mo_of(v1), no_of(v1)), ta::dep_push(L, C)}));
    std::vector<Stmt> cs = {ta::dep_pop(L, C), tir::if_then_else(tp >= 1, ta::dep_pop(S, C))};
    for (Stmt& x : compute(v2)) cs.push_back(x);
    cs.push_back(tir::if_then_else(tp + 1 < pairs, ta::dep_push(C, L)));
    cs.push_back(ta::dep_push(C, S));
    Stmt cstage = ta::coproc_scope(C, tir::seq(cs));
    Stmt sstage = ta::coproc_scope(S, tir::seq({ta::dep_pop(C, S), store(v3, mo_of(v3), no_of(v3)),
                                                tir::if_then_else(tp + 1 < pairs, ta::dep_push(S, C))}));
    auto each = [&](const Var& v, Stmt st) { return tir::for_loop(v, 0, 2, tir::ForKind::kSerial, st); };
    body = tir::for_loop(tp, 0, pairs, tir::ForKind::kSerial,
                         tir::seq({each(v1, lstage), each(v2, cstage), each(v3, sstage)}));
  }
  body = tir::allocate(a_buf, tir::allocate(w_buf, tir::allocate(c_buf, body)));
  Var pa("a_param", DataType::handle()), pw("w_param", DataType::handle()), pc("c_param", DataType::handle());
  MatmulTir out;
  out.func = tir::PrimFunc(s.ping_pong ? "matmul_pingpong" : "matmul_single", {pa, pw, pc},
                           {{pa, a}, {pw, w}, {pc, c}}, body);
  out.segments = {{"a", "inp", isa::SegmentKind::kInput, 0, isa::MemType::kInp},
                  {"w", "wgt", isa::SegmentKind::kConst, 0, isa::MemType::kWgt},
                  {"c", "out", isa::SegmentKind::kOutput, 0, isa::MemType::kOut}};
  return out;
}

/// Random operands: a (m x k) and w (k x n), row-major.
struct MatmulData {
  std::vector<int8_t> a, w;
};
inline MatmulData make_data(const MatmulSpec& s, uint32_t seed) {
  std::mt19937 rng(seed);
  MatmulData d;
  d.a.resize(static_cast<size_t>(s.m * s.k));
  d.w.resize(static_cast<size_t>(s.k * s.n));
  for (int8_t& x : d.a) x = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
  for (int8_t& x : d.w) x = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
  return d;
}

/// The plain C++ reference (row-major m x n).
inline std::vector<int8_t> reference(const MatmulSpec& s, const MatmulData& d) {
  std::vector<int8_t> c(static_cast<size_t>(s.m * s.n));
  for (int64_t r = 0; r < s.m; ++r) {
    for (int64_t col = 0; col < s.n; ++col) {
      int32_t acc = 0;
      for (int64_t q = 0; q < s.k; ++q) {
        acc +=
            int32_t{d.a[static_cast<size_t>(r * s.k + q)]} * int32_t{d.w[static_cast<size_t>(q * s.n + col)]};
      }
      acc = (acc + (1 << (s.shift - 1))) >> s.shift;
      c[static_cast<size_t>(r * s.n + col)] = static_cast<int8_t>(std::min(127, std::max(-128, acc)));
    }
  }
  return c;
}

/// Output and cycles of one run.
struct RunResult {
  std::vector<int8_t> c;
  uint64_t cycles = 0;
};

/// Runs the matmul Program on a device of `kind` ("fsim", "cycle"): packs a into "inp" and w
/// into "wgt", submits, unpacks "out".
inline RunResult run_matmul(const std::string& kind, const isa::Program& prog, const MatmulSpec& s,
                            const MatmulData& data) {
  const MatmulDims d = dims(prog.config, s);
  auto dev = runtime::Device::create(kind, prog.config, runtime::dram_bytes_for({prog}));
  const runtime::LoadedProgram lp = dev->load(prog);
  std::vector<uint8_t> a(static_cast<size_t>(s.m * s.k)), w(static_cast<size_t>(s.k * s.n));
  for (int64_t r = 0; r < s.m; ++r) {
    for (int64_t q = 0; q < s.k; ++q) {  // a[mb][kb][b][i]
      const int64_t at = ((r / d.b * d.kb + q / d.bi) * d.b + r % d.b) * d.bi + q % d.bi;
      a[static_cast<size_t>(at)] = static_cast<uint8_t>(data.a[static_cast<size_t>(r * s.k + q)]);
    }
  }
  for (int64_t q = 0; q < s.k; ++q) {
    for (int64_t col = 0; col < s.n; ++col) {  // w[nb][kb][o][i]
      const int64_t at = ((col / d.bo * d.kb + q / d.bi) * d.bo + col % d.bo) * d.bi + q % d.bi;
      w[static_cast<size_t>(at)] = static_cast<uint8_t>(data.w[static_cast<size_t>(q * s.n + col)]);
    }
  }
  dev->copy_to_device(lp.segment_addr(prog, "inp"), a.data(), a.size());
  dev->copy_to_device(lp.segment_addr(prog, "wgt"), w.data(), w.size());
  dev->submit(lp);
  RunResult out;
  out.cycles = dev->wait().cycles;
  std::vector<uint8_t> raw(static_cast<size_t>(s.m * s.n));
  dev->copy_from_device(raw.data(), lp.segment_addr(prog, "out"), raw.size());
  out.c.resize(raw.size());
  for (int64_t r = 0; r < s.m; ++r) {
    for (int64_t col = 0; col < s.n; ++col) {  // c[mb][nb][b][o]
      const int64_t at = ((r / d.b * d.nb + col / d.bo) * d.b + r % d.b) * d.bo + col % d.bo;
      out.c[static_cast<size_t>(r * s.n + col)] = static_cast<int8_t>(raw[static_cast<size_t>(at)]);
    }
  }
  dev->unload(lp);
  return out;
}

}  // namespace tessel::compiler::accel_tir::testing
