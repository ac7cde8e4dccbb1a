// emit_instructions (through build_accel_program): unrolling, DMA fields, micro-op kernels,
// computed and written dependency tokens, segments, errors; golden disassembly of the matmul
// Programs and golden IR dumps after every pass.
#include <gtest/gtest.h>

#include "compiler/backend/accel/tir/accel_tir.h"
#include "isa/asm.h"
#include "tests/accel_tir/accel_tir_test_util.h"

namespace tessel::compiler::accel_tir::testing {
namespace {

using isa::Instruction;
using isa::MemType;
using isa::Module;
using isa::Opcode;

/// a (8 INP elements) -> inp_buf -> reset GEMM on acc_buf -> c (8 OUT elements).
struct Small {
  Buffer a{"a", DataType::int8(), {8, 1, 16}};
  Buffer c{"c", DataType::int8(), {8, 1, 16}};
  Buffer inp{"inp_buf", DataType::int8(), {8, 1, 16}, MemScope::kInp};
  Buffer acc{"acc_buf", DataType::int32(), {8, 1, 16}, MemScope::kAcc};
  Var pa{"pa", DataType::handle()}, pc{"pc", DataType::handle()};
  std::vector<SegmentSpec> segs = {{"a", "inp", isa::SegmentKind::kInput, 0, MemType::kInp},
                                   {"c", "out", isa::SegmentKind::kOutput, 0, MemType::kOut}};
  tir::PrimFunc func(Stmt body, std::vector<Var> extra = {}) const {
    std::vector<Var> params = {pa, pc};
    for (const Var& v : extra) params.push_back(v);
    return tir::PrimFunc("small", params, {{pa, a}, {pc, c}}, tir::allocate(inp, tir::allocate(acc, body)));
  }
  Stmt load(Expr sram, Expr dram, Expr y, Expr x, Expr stride) const {
    return ta::coproc_scope(Module::kLoad, ta::dma_load(isa::HwConfig{}, MemType::kInp, inp, sram, a, dram, y, x, stride));
  }
  Stmt reset(Expr first, int n) const {
    Var i("i");
    Stmt k = tir::attr_stmt(
        Expr(), std::string(ta::kUopKernel), 0,
        tir::for_loop(i, 0, n, tir::ForKind::kSerial,
                      ta::gemm_uop(true, ta::sram_ptr(isa::HwConfig{}, acc, first + i, 1, 2), 0, 0)));
    return ta::coproc_scope(Module::kCompute, k);
  }
  Stmt store(Expr sram, Expr dram, Expr y, Expr x, Expr stride) const {
    return ta::coproc_scope(Module::kStore, ta::dma_store(isa::HwConfig{}, acc, sram, c, dram, y, x, stride));
  }
};

TEST(EmitInstructions, FieldsKernelsAndComputedTokens) {
  Small s;
  Var t("t");
  // two LOADs of 4 rows from an unrolled loop, a reset kernel over 8 rows, one STORE
  Stmt body = tir::seq({tir::for_loop(t, 0, 2, tir::ForKind::kSerial, s.load(t * 4, t * 4, 2, 2, 2)),
                        s.reset(0, 8), s.store(0, 0, 2, 4, 4)});
  BuildReport rep;
  const isa::Program p = build_accel_program(s.func(body), isa::HwConfig{}, s.segs, {}, &rep);
  EXPECT_FALSE(rep.explicit_tokens);
  ASSERT_EQ(p.insns.size(), 9u);  // uop load, 2 loads, gemm, store, the ending (3 no-ops, FINISH)
  EXPECT_EQ(p.segment("inp").offset_bytes, 0u);
  EXPECT_EQ(p.segment("out").offset_bytes, 4096u);
  EXPECT_EQ(p.segment("uop").offset_bytes, 8192u);
  const Instruction& u = p.insns[0];
  EXPECT_EQ(u.opcode, Opcode::kLoad);
  EXPECT_EQ(u.mem_type, MemType::kUop);
  EXPECT_EQ(u.dram_base, 8192u / 4);
  EXPECT_EQ(u.x_size, 1u);  // one micro-op: the loop became the instruction's loop
  for (uint32_t k = 0; k < 2; ++k) {
    const Instruction& l = p.insns[1 + k];
    EXPECT_EQ(l.opcode, Opcode::kLoad);
    EXPECT_EQ(l.mem_type, MemType::kInp);
    EXPECT_EQ(l.sram_base, 4 * k);
    EXPECT_EQ(l.dram_base, 4 * k);
    EXPECT_EQ(l.y_size, 2u);
    EXPECT_EQ(l.x_size, 2u);
    EXPECT_EQ(l.x_stride, 2u);
  }
  const Instruction& g = p.insns[3];
  EXPECT_EQ(g.opcode, Opcode::kGemm);
  EXPECT_TRUE(g.reset);
  EXPECT_EQ(g.iter_out, 1u);
  EXPECT_EQ(g.iter_in, 8u);
  EXPECT_EQ(g.dst_factor_in, 1u);
  EXPECT_EQ(g.uop_end - g.uop_bgn, 1u);
  const Instruction& st = p.insns[4];
  EXPECT_EQ(st.opcode, Opcode::kStore);
  EXPECT_EQ(st.mem_type, MemType::kOut);
  EXPECT_EQ(st.dram_base, 4096u / 16);  // the "out" segment in OUT elements (16 bytes)
  EXPECT_EQ(st.x_stride, 4u);
  // computed tokens: the reset overwrites no INP, so the GEMM needs nothing from load; the
  // STORE reads what the GEMM wrote
  EXPECT_FALSE(g.dep.pop_prev);
  EXPECT_TRUE(g.dep.push_next);
  EXPECT_TRUE(st.dep.pop_prev);
  EXPECT_EQ(p.insns.back().opcode, Opcode::kFinish);
  EXPECT_EQ(rep.instructions, 9);
  EXPECT_EQ(rep.loads, 5);  // uop, two INP, the ending's load no-op and compute no-op (LOAD UOP)
  EXPECT_EQ(rep.stores, 2);
  EXPECT_EQ(rep.gemms, 1);
  EXPECT_EQ(rep.uops, 1);
  ASSERT_EQ(rep.pass_ms.size(), pass_names().size());
  for (size_t i = 0; i < pass_names().size(); ++i) {
    EXPECT_EQ(rep.pass_ms[i].first, pass_names()[i]);
    EXPECT_GE(rep.pass_ms[i].second, 0.0);
  }
}

TEST(EmitInstructions, WrittenTokensBecomeFlagsAndNoOps) {
  Small s;
  const Module L = Module::kLoad, C = Module::kCompute, S = Module::kStore;
  // compute pushes to load before any compute instruction (a no-op carries it), load pops it on
  // its LOAD, pushes after it; compute pops on the GEMM and pushes to store after it; store pops
  // on the STORE; a pop at the very end (store -> compute, pushed by the STORE) gets a no-op
  Stmt body = tir::seq({ta::coproc_scope(C, ta::dep_push(C, L)), ta::coproc_scope(L, ta::dep_pop(C, L)),
                        s.load(0, 0, 1, 8, 8), ta::coproc_scope(L, ta::dep_push(L, C)),
                        ta::coproc_scope(C, ta::dep_pop(L, C)), s.reset(0, 8),
                        ta::coproc_scope(C, ta::dep_push(C, S)), ta::coproc_scope(S, ta::dep_pop(C, S)),
                        s.store(0, 0, 1, 8, 8), ta::coproc_scope(S, ta::dep_push(S, C)),
                        ta::coproc_scope(C, ta::dep_pop(S, C))});
  BuildReport rep;
  BuildOptions o;
  o.dump_ir_after = "emit_instructions";
  const isa::Program p = build_accel_program(s.func(body), isa::HwConfig{}, s.segs, o, &rep);
  EXPECT_TRUE(rep.explicit_tokens);
  ASSERT_EQ(rep.ir_after.size(), 1u);
  EXPECT_EQ(rep.ir_after[0].second,
            ".uop 0 0 0\n"
            "LOAD UOP sram=0 dram=2048 y=1 x=1 stride=1\n"              // the table, first (allocate_uops)
            "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=push_prev\n"  // compute no-op
            "LOAD INP sram=0 dram=0 y=1 x=8 stride=8 deps=pop_next|push_next\n"
            "GEMM uop=0:1 iter=1,8 dst=0,1 src=0,0 wgt=0,0 reset deps=pop_prev|push_next\n"
            "STORE OUT sram=0 dram=256 y=1 x=8 stride=8 deps=pop_prev|push_prev\n"
            "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_next\n"  // the last pop's no-op
            "FINISH\n");
  (void)p;
}

TEST(EmitInstructions, UopScopeBuffersMoveTheKernels) {
  Small s;
  Buffer reserved("reserved", DataType::uint32(), {100}, MemScope::kUop);
  Stmt body = tir::allocate(reserved, tir::seq({s.reset(0, 8), s.store(0, 0, 1, 8, 8)}));
  const isa::Program p = build_accel_program(s.func(body), isa::HwConfig{}, s.segs);
  ASSERT_GE(p.insns.size(), 2u);
  EXPECT_EQ(p.insns[0].mem_type, MemType::kUop);
  EXPECT_EQ(p.insns[0].sram_base, 100u);
  EXPECT_EQ(p.insns[1].opcode, Opcode::kGemm);
  EXPECT_EQ(p.insns[1].uop_bgn, 100u);
  EXPECT_EQ(p.insns[1].uop_end, 101u);
}

TEST(EmitInstructions, NonConstantLoopAroundDmaNamesTheLoop) {
  Small s;
  Var n("n"), t("t");
  Stmt body = tir::for_loop(t, 0, n, tir::ForKind::kSerial, s.load(0, t, 1, 1, 1));
  EXPECT_EQ(
      user_error([&] { build_accel_program(s.func(body, {n}), isa::HwConfig{}, s.segs); }),
      "loop 't' has a non-constant range [0, 0 + n): emit_instructions unrolls every loop around accelerator "
      "statements");
}

TEST(EmitInstructions, LetIfAndLoopKinds) {
  Small s;
  Var t("t"), off("off");
  // let off = t * 2; if (t < 1) load at off else load at off + 1, for t in [0, 2)
  Stmt body = tir::for_loop(
      t, 0, 2, tir::ForKind::kUnrolled,
      tir::let_stmt(off, t * 2,
                    tir::if_then_else(t < 1, s.load(off, off, 1, 1, 1), s.load(off + 1, off + 1, 1, 1, 1))));
  const isa::Program p = build_accel_program(s.func(body), isa::HwConfig{}, s.segs);
  ASSERT_GE(p.insns.size(), 2u);
  EXPECT_EQ(p.insns[0].sram_base, 0u);
  EXPECT_EQ(p.insns[1].sram_base, 3u);
  EXPECT_EQ(p.insns[1].dram_base, 3u);
  Var q("q");
  EXPECT_EQ(user_error([&] {
              build_accel_program(
                  s.func(tir::for_loop(q, 0, 2, tir::ForKind::kParallel, s.load(q, q, 1, 1, 1))),
                  isa::HwConfig{}, s.segs);
            }),
            "loop 'q' is parallel: emit_instructions unrolls serial and unrolled loops only");
  // a token between load and store: there is no such queue
  Stmt bad = tir::evaluate(tir::call(DataType::int32(), std::string(ta::kDepPush), {1, 3}));
  EXPECT_EQ(user_error([&] { build_accel_program(s.func(bad), isa::HwConfig{}, s.segs); }),
            "accel.dep_push(1, 3): there is no token queue from load to store");
}

TEST(EmitInstructions, StatementsTheAcceleratorCannotRun) {
  Small s;
  const isa::HwConfig cfg;
  // a DMA outside every coproc scope, and one in another module's scope
  EXPECT_EQ(user_error([&] {
              build_accel_program(s.func(ta::dma_load(cfg, MemType::kInp, s.inp, 0, s.a, 0, 1, 1, 1)), cfg,
                                  s.segs);
            }),
            "accel.dma_load of INP is outside every accel.coproc_scope");
  EXPECT_EQ(user_error([&] {
              build_accel_program(
                  s.func(ta::coproc_scope(Module::kCompute,
                                          ta::dma_load(cfg, MemType::kInp, s.inp, 0, s.a, 0, 1, 1, 1))),
                  cfg, s.segs);
            }),
            "accel.dma_load of INP runs on the load module but sits in accel.coproc_scope 2 (compute)");
  // a buffer store
  EXPECT_EQ(user_error([&] {
              build_accel_program(
                  s.func(tir::buffer_store(s.a, tir::make_const(DataType::int8(), 1), {0, 0, 0})), cfg,
                  s.segs);
            }),
            "the accelerator cannot run this statement: a[0, 0, 0] = int8(1)\n");
  // a micro-op outside a kernel
  EXPECT_EQ(user_error([&] { build_accel_program(s.func(ta::gemm_uop(true, 0, 0, 0)), cfg, s.segs); }),
            "accel.gemm_uop outside an accel.uop_kernel");
  // a DMA leaving its DRAM buffer (8 elements) and its scratchpad buffer (8 rows)
  EXPECT_EQ(user_error([&] { build_accel_program(s.func(s.load(0, 4, 2, 4, 4)), cfg, s.segs); }),
            "accel.dma_load: elements [4, 12) leave buffer 'a' of 8 INP elements");
  EXPECT_EQ(user_error([&] { build_accel_program(s.func(s.load(6, 0, 1, 4, 4)), cfg, s.segs); }),
            "accel.dma_load: rows [6, 10) leave buffer 'inp_buf' of 8 rows");
  // a LOAD of no columns with pads: a no-op on the accelerator, so its zeros would never land
  EXPECT_EQ(user_error([&] {
              build_accel_program(s.func(ta::coproc_scope(Module::kLoad, ta::dma_load(cfg, MemType::kInp, s.inp, 0,
                                                                                       s.a, 0, 1, 0, 1, 0, 0, 2, 0))),
                                  cfg, s.segs);
            }),
            "accel.dma_load: a load of no columns (x_size 0) with pads 0,0,2,0 writes no zeros: a rectangle wholly in "
            "the column padding cannot be one LOAD");
  // a written-token stream whose STORE reads ACC rows the GEMM writes without a token
  Stmt racy = tir::seq({s.reset(0, 8), s.store(0, 0, 1, 8, 8),
                        ta::coproc_scope(Module::kStore, ta::dep_push(Module::kStore, Module::kCompute)),
                        ta::coproc_scope(Module::kCompute, ta::dep_pop(Module::kStore, Module::kCompute))});
  const std::string msg = user_error([&] { build_accel_program(s.func(racy), cfg, s.segs); });
  EXPECT_EQ(
      msg.rfind(
          "function 'small': the emitted stream fails the verifier: insn 2 (store STORE OUT) reads out row 0",
          0),
      0u)
      << msg;
}

TEST(EmitInstructions, SegmentSpecsAndOptionsAreChecked) {
  Small s;
  const isa::HwConfig cfg;
  const tir::PrimFunc f = s.func(s.load(0, 0, 1, 1, 1));
  EXPECT_EQ(user_error([&] { build_accel_program(f, cfg, {s.segs[0]}); }),
            "buffer parameter 'c' of function 'small' has no segment spec");
  std::vector<SegmentSpec> extra = s.segs;
  extra.push_back({"z", "inp", isa::SegmentKind::kInput, 0, MemType::kInp});
  EXPECT_EQ(user_error([&] { build_accel_program(f, cfg, extra); }),
            "segment spec of buffer 'z': function 'small' has no such buffer parameter");
  std::vector<SegmentSpec> wrong = s.segs;
  wrong[0].mem_type = MemType::kWgt;
  wrong[0].offset_bytes = 0;
  EXPECT_EQ(user_error([&] { build_accel_program(f, cfg, wrong); }),
            "accel.dma_load of INP: buffer 'a' is placed as WGT elements (SegmentSpec), not INP");
  std::vector<SegmentSpec> odd = s.segs;
  odd[0].offset_bytes = 8;
  EXPECT_EQ(user_error([&] { build_accel_program(f, cfg, odd); }),
            "segment spec of buffer 'a': offset 8 bytes is not a multiple of the INP element (16 bytes)");
  BuildOptions o;
  o.dump_ir_after = "tensorize";
  EXPECT_EQ(
      user_error([&] { build_accel_program(f, cfg, s.segs, o); }),
      "unknown pass 'tensorize' for the ir dump (passes: input, inject_dma_copy, tensorize_gemm, inject_alu, "
      "inject_virtual_threads, allocate_scratchpads, fold_uop_loops, "
      "emit_instructions, all)");
}

TEST(EmitInstructions, GoldenMatmulStreams) {
  const isa::HwConfig cfg;
  for (bool pp : {false, true}) {
    MatmulSpec s;
    s.ping_pong = pp;
    const MatmulTir t = make_matmul_tir(cfg, s);
    BuildOptions o;
    o.dump_ir_after = "emit_instructions";
    BuildReport rep;
    const isa::Program p = build_accel_program(t.func, cfg, t.segments, o, &rep);
    ASSERT_EQ(rep.ir_after.size(), 1u);
    EXPECT_EQ(rep.ir_after[0].second, isa::disasm_listing(p.insns, p.uops));
    expect_golden(pp ? "matmul_pingpong_default.asm" : "matmul_single_default.asm", rep.ir_after[0].second);
  }
}

TEST(EmitInstructions, GoldenIrAfterEveryPass) {
  // a small ping-pong matmul: 4 tiles (2 pairs) of 1 x 1 blocks, K = 2 blocks
  const isa::HwConfig cfg;
  MatmulSpec s;
  s.m = 2;
  s.k = 32;
  s.n = 32;
  s.tm = 1;
  s.tn = 1;
  s.ping_pong = true;
  const MatmulTir t = make_matmul_tir(cfg, s);
  BuildOptions o;
  o.dump_ir_after = "all";
  o.verify_ir = true;
  BuildReport rep;
  build_accel_program(t.func, cfg, t.segments, o, &rep);
  ASSERT_EQ(rep.ir_after.size(), pass_names().size() + 1);  // input, every pass
  std::string text;
  for (const auto& [name, ir] : rep.ir_after) {
    // TIR written with the intrinsics (and without virtual-thread loops) passes the three
    // lowering passes and inject_virtual_threads unchanged
    if (name == "inject_dma_copy" || name == "tensorize_gemm" || name == "inject_alu" ||
        name == "inject_virtual_threads") {
      EXPECT_EQ(ir, rep.ir_after[0].second) << name;
      continue;
    }
    text += "// ---- IR after " + name + " ----\n" + ir;
  }
  expect_golden("matmul_pingpong_small.ir", text);
}

}  // namespace
}  // namespace tessel::compiler::accel_tir::testing
