// Example: a matrix multiply written as a tensor expression, scheduled for the accelerator,
// built into a Program and run on both simulators (docs/writing-an-operator.md walks through it).
//
//   C (M x N, int8) = clip((A (M x K, int8) . B (K x N, int8) + 2^(s-1)) >> s, -128, 127)
//
// with int32 accumulation. The accelerator computes on blocks: an INP element holds BATCH rows
// of BLOCK_IN values, a WGT element BLOCK_OUT x BLOCK_IN weights, an ACC/OUT element BATCH x
// BLOCK_OUT results (docs/isa.md), so the tensors are declared packed in those blocks:
//   A [M/BATCH][K/BLOCK_IN][BATCH][BLOCK_IN],  W [N/BLOCK_OUT][K/BLOCK_IN][BLOCK_OUT][BLOCK_IN]
//   (W[j][q][o][i] = B[q*BLOCK_IN + i][j*BLOCK_OUT + o]),  C [M/BATCH][N/BLOCK_OUT][BATCH][BLOCK_OUT].
//
// The schedule (compiler/te/schedule.h): tile the output in blocks of rows and columns;
// kVirtualThreads virtual threads over the column tiles (with two, while one thread computes,
// the other's loads run); the
// accumulator in the acc scratchpad, computed per tile with the reduction split into chunks;
// cache_read of A and W into the inp and wgt scratchpads per chunk (DMA copies); the GEMM block
// tensorized with the configuration's GEMM intrinsic; the rounding shift and clip as ALU steps
// in acc; the int8 result stored by DMA. Lowering gives TIR (compiler/tir), the accelerator's
// TIR passes turn it into an instruction stream (compiler/backend/accel/tir/accel_tir.h), and
// the runtime's device API runs it on the functional simulator and on the cycle model.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <random>
#include <vector>

#include "compiler/backend/accel/tir/accel_tir.h"
#include "compiler/te/operation.h"
#include "compiler/te/schedule.h"
#include "compiler/tir/intrinsics.h"
#include "compiler/tir/printer.h"
#include "compiler/topi/accel/schedule.h"
#include "isa/config.h"
#include "runtime/device.h"
#include "support/error.h"

namespace {

using namespace tessel;
using tir::DataType;
using tir::Expr;
using tir::MemScope;
using tir::Var;

constexpr int64_t kM = 64, kK = 64, kN = 128;  // the matrix sizes
constexpr int64_t kTileRows = 2;               // output tile: INP/ACC element rows (x BATCH rows)
constexpr int64_t kTileCols = 2;               // output tile: BLOCK_OUT column blocks
constexpr int64_t kChunk = 2;                  // K blocks loaded per reduction chunk
constexpr int kShift = 8;                      // the rounding shift
// Virtual threads over the column tiles: 2 interleaves two tiles, so one computes while the
// other's loads run (tir's inject_virtual_threads replicates the scratchpads per thread).
constexpr int64_t kVirtualThreads = 2;

/// The operator and its schedule for `hw`, ready to lower.
topi::accel::ScheduledOp matmul_schedule(const isa::HwConfig& hw) {
  const int64_t b = hw.batch(), bi = hw.block_in(), bo = hw.block_out();
  const int64_t mb = kM / b, kb = kK / bi, nb = kN / bo;

  // ---- compute: what the operator is
  te::Tensor a = te::placeholder({Expr(mb), Expr(kb), Expr(b), Expr(bi)}, DataType::int8(), "A");
  te::Tensor w = te::placeholder({Expr(nb), Expr(kb), Expr(bo), Expr(bi)}, DataType::int8(), "W");
  te::IterVar ko = te::reduce_axis(kb, "ko"), ki = te::reduce_axis(bi, "ki");
  te::Tensor acc = te::compute(
      {Expr(mb), Expr(nb), Expr(b), Expr(bo)},
      [&](const std::vector<Var>& i) {
        Expr x = tir::cast(DataType::int32(), a({i[0], ko.var(), i[2], ki.var()}));
        Expr y = tir::cast(DataType::int32(), w({i[1], ko.var(), i[3], ki.var()}));
        return te::sum(x * y, {ko, ki});
      },
      "acc");
  // the epilogue, one stage per ALU instruction: round, shift, clip
  auto step = [&](const te::Tensor& in, const std::string& name, auto f) {
    return te::compute(
        {Expr(mb), Expr(nb), Expr(b), Expr(bo)}, [&, f](const std::vector<Var>& i) { return f(in(std::vector<Expr>(i.begin(), i.end()))); }, name);
  };
  te::Tensor rounded = step(acc, "rounded", [](Expr x) { return x + (1 << (kShift - 1)); });
  te::Tensor shifted = step(rounded, "shifted", [](Expr x) {
    return tir::call(DataType::int32(), std::string(tir::intrin::kShiftRight), {x, Expr(kShift)});
  });
  te::Tensor low = step(shifted, "low", [](Expr x) { return tir::max(x, Expr(-128)); });
  te::Tensor high = step(low, "high", [](Expr x) { return tir::min(x, Expr(127)); });
  te::Tensor c = te::compute(
      {Expr(mb), Expr(nb), Expr(b), Expr(bo)},
      [&](const std::vector<Var>& i) { return tir::cast(DataType::int8(), high(std::vector<Expr>(i.begin(), i.end()))); }, "C");

  // ---- schedule: how the accelerator computes it
  te::Schedule s = te::create_schedule({c});
  // the accumulator and every epilogue step live in the acc scratchpad
  te::Tensor acc_buf = s.cache_write(acc, MemScope::kAcc);
  s[acc].compute_inline();
  std::vector<te::Tensor> steps;
  for (const te::Tensor& t : {rounded, shifted, low, high}) {
    steps.push_back(s.cache_write(t, MemScope::kAcc));
    s[t].compute_inline();
  }
  // the inputs are copied into the inp and wgt scratchpads for the accumulator stage
  te::Tensor a_buf = s.cache_read(a, MemScope::kInp, {acc_buf});
  te::Tensor w_buf = s.cache_read(w, MemScope::kWgt, {acc_buf});

  // the output: tiles of kTileRows x kTileCols elements; the column tiles split over two
  // virtual threads
  te::Stage out = s[c];
  const std::vector<te::IterVar> ax = out->leaf_iter_vars;  // m, n, b, o
  const auto [m_o, n_o, m_i, n_i] = out.tile(ax[0], ax[1], kTileRows, kTileCols);
  const auto [vt, n_oo] = out.split_nparts(n_o, kVirtualThreads);
  out.reorder({vt, m_o, n_oo, m_i, n_i, ax[2], ax[3]});
  out.bind(vt, "vthread");
  out.pragma(m_i, "dma_copy");  // the tile's store: one 2-D DMA

  // the epilogue steps per tile, each one ALU instruction
  for (const te::Tensor& t : steps) {
    te::Stage st = s[t];
    st.compute_at(out, n_oo);
    st.pragma(st->leaf_iter_vars.front(), "alu");
  }
  // the accumulator per tile, the K blocks in chunks of kChunk; the GEMM block tensorized
  te::Stage sa = s[acc_buf];
  sa.compute_at(out, n_oo);
  const std::vector<te::IterVar> al = sa->leaf_iter_vars;  // m, n, b, o, ko, ki
  const auto [ko_o, ko_i] = sa.split(al[4], kChunk);
  sa.reorder({ko_o, al[0], al[1], ko_i, al[2], al[3], al[5]});
  sa.tensorize(al[2], topi::accel::gemm_intrin(hw));
  // the input copies per chunk, one 2-D DMA each
  for (const te::Tensor& t : {a_buf, w_buf}) {
    te::Stage st = s[t];
    st.compute_at(sa, ko_o);
    st.pragma(st->leaf_iter_vars.front(), "dma_copy");
  }
  return {s, {a, w, c}, c, {}};  // no per-channel constants
}

/// The plain loop: C from row-major A (M x K) and B (K x N).
std::vector<int8_t> reference(const std::vector<int8_t>& a, const std::vector<int8_t>& bm) {
  std::vector<int8_t> c(static_cast<size_t>(kM * kN));
  for (int64_t i = 0; i < kM; ++i) {
    for (int64_t j = 0; j < kN; ++j) {
      int32_t sum = 0;
      for (int64_t k = 0; k < kK; ++k) sum += int32_t{a[i * kK + k]} * int32_t{bm[k * kN + j]};
      const int32_t r = (sum + (1 << (kShift - 1))) >> kShift;
      c[static_cast<size_t>(i * kN + j)] = static_cast<int8_t>(std::min(127, std::max(-128, r)));
    }
  }
  return c;
}

}  // namespace

int main() {
  try {
    const isa::HwConfig hw;  // VTA's default: BATCH 1, BLOCK_IN = BLOCK_OUT = 16
    const int64_t b = hw.batch(), bi = hw.block_in(), bo = hw.block_out();

    // lower the schedule to TIR and build the Program; A, W and C are placed in DRAM segments
    const topi::accel::ScheduledOp op = matmul_schedule(hw);
    const tir::PrimFunc f = topi::accel::lower_template(op, "te_matmul");
    const std::vector<compiler::accel_tir::SegmentSpec> segments = {
        {"A", "a", isa::SegmentKind::kInput, 0, isa::MemType::kInp},
        {"W", "w", isa::SegmentKind::kInput, 0, isa::MemType::kWgt},
        {"C", "out", isa::SegmentKind::kOutput, 0, isa::MemType::kOut}};
    compiler::accel_tir::BuildReport report;
    const isa::Program prog = compiler::accel_tir::build_accel_program(f, hw, segments, {}, &report);
    fmt::print("te_matmul: {}x{}x{} int8 on {}: {} instructions ({} LOAD, {} GEMM, {} ALU, {} STORE), {} micro-ops\n",
               kM, kK, kN, hw.name(), report.instructions, report.loads, report.gemms, report.alus, report.stores,
               report.uops);

    // random operands, packed into the blocked layouts
    std::mt19937 rng(2024);
    std::vector<int8_t> a(static_cast<size_t>(kM * kK)), bm(static_cast<size_t>(kK * kN));
    for (int8_t& v : a) v = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
    for (int8_t& v : bm) v = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
    std::vector<int8_t> a_packed(a.size()), w_packed(bm.size());
    for (int64_t i = 0; i < kM; ++i)
      for (int64_t k = 0; k < kK; ++k)  // A[i/b][k/bi][i%b][k%bi]
        a_packed[static_cast<size_t>((((i / b) * (kK / bi) + k / bi) * b + i % b) * bi + k % bi)] = a[i * kK + k];
    for (int64_t k = 0; k < kK; ++k)
      for (int64_t j = 0; j < kN; ++j)  // W[j/bo][k/bi][j%bo][k%bi]
        w_packed[static_cast<size_t>((((j / bo) * (kK / bi) + k / bi) * bo + j % bo) * bi + k % bi)] = bm[k * kN + j];
    const std::vector<int8_t> want = reference(a, bm);

    bool ok = true;
    for (const char* kind : {"fsim", "cycle"}) {
      auto dev = runtime::Device::create(kind, prog.config, runtime::dram_bytes_for({prog}));
      const runtime::LoadedProgram lp = dev->load(prog);
      dev->copy_to_device(lp.segment_addr(prog, "a"), a_packed.data(), a_packed.size());
      dev->copy_to_device(lp.segment_addr(prog, "w"), w_packed.data(), w_packed.size());
      dev->submit(lp);
      const uint64_t cycles = dev->wait().cycles;
      std::vector<int8_t> c_packed(want.size());
      dev->copy_from_device(c_packed.data(), lp.segment_addr(prog, "out"), c_packed.size());
      dev->unload(lp);
      int64_t wrong = 0;
      for (int64_t i = 0; i < kM; ++i)
        for (int64_t j = 0; j < kN; ++j)  // C[i/b][j/bo][i%b][j%bo]
          wrong += c_packed[static_cast<size_t>((((i / b) * (kN / bo) + j / bo) * b + i % b) * bo + j % bo)] !=
                   want[static_cast<size_t>(i * kN + j)];
      // fsim is functional (no time); the cycle model counts accelerator clock cycles
      const std::string time = std::string(kind) == "cycle" ? fmt::format(", {} cycles", cycles) : "";
      fmt::print("{:<5} {} of {} outputs match the plain loop{}\n", kind, want.size() - wrong, want.size(), time);
      ok = ok && wrong == 0;
    }
    if (!ok) {
      fmt::print("FAILED: the accelerator's result differs from the plain loop\n");
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
