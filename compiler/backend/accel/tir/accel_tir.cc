#include "compiler/backend/accel/tir/accel_tir.h"

#include <fmt/format.h>

#include "compiler/backend/accel/tir/allocate_scratchpads.h"
#include "compiler/backend/accel/tir/emit_instructions.h"
#include "compiler/backend/accel/tir/fold_uop_loops.h"
#include "compiler/backend/accel/tir/inject_alu.h"
#include "compiler/backend/accel/tir/inject_dma_copy.h"
#include "compiler/backend/accel/tir/tensorize_gemm.h"
#include "compiler/target/accel_intrin.h"
#include "compiler/tir/transforms/inject_virtual_threads.h"
#include "isa/asm.h"
#include "support/error.h"

namespace tessel::compiler::accel_tir {

namespace {
constexpr const char* kEmitStage = "emit_instructions";
}  // namespace


tir::PassManager tir_pipeline(const isa::HwConfig& cfg) {
  // the passes run with cfg validated by build_accel_program
  return tir::PassManager({
      {"inject_dma_copy", "copy loop nests under pragma_dma_copy -> accel.dma_load / dma_store (with zero pads)",
       [cfg](const tir::PrimFunc& f) { return inject_dma_copy(f, cfg); }},
      {"tensorize_gemm", "GEMM and acc-init loop nests -> accel.gemm_uop micro-op kernels",
       [cfg](const tir::PrimFunc& f) { return tensorize_gemm(f, cfg); }},
      {"inject_alu", "element-wise acc loop nests under pragma_alu -> accel.alu_uop kernels",
       [cfg](const tir::PrimFunc& f) { return inject_alu(f, cfg); }},
      {"inject_virtual_threads", "virtual-thread loops -> the threads' statements interleaved, allocations replicated",
       [](const tir::PrimFunc& f) {
         // a micro-op kernel (and every coprocessor statement) is one instruction: each thread
         // keeps its own, so the threads' instructions interleave
         tir::transforms::VirtualThreadOptions o;
         o.opaque_attrs = {std::string(target::accel::kCoprocScope), std::string(target::accel::kUopKernel)};
         return tir::transforms::inject_virtual_threads(f, o);
       }},
      {"allocate_scratchpads", "inp/wgt/acc/uop allocations -> scratchpad row offsets",
       [cfg](const tir::PrimFunc& f) { return allocate_scratchpads(f, cfg); }},
      {"fold_uop_loops", "the loops inside each micro-op kernel -> the GEMM/ALU instruction's loop nest",
       [cfg](const tir::PrimFunc& f) { return fold_uop_loops(f, cfg); }},
  });
}

const std::vector<std::string>& pass_names() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> v = tir_pipeline(isa::HwConfig{}).names();
    v.emplace_back(kEmitStage);
    return v;
  }();
  return kNames;
}

void check_dump_ir_after(const std::string& dump_ir_after) {
  tir_pipeline(isa::HwConfig{}).check_dump_after(dump_ir_after, {kEmitStage});
}

isa::Program build_accel_program(const tir::PrimFunc& f, const isa::HwConfig& cfg,
                                 const std::vector<SegmentSpec>& segments, const BuildOptions& opts,
                                 BuildReport* report) {
  cfg.validate();
  const tir::PassManager pipeline = tir_pipeline(cfg);
  pipeline.check_dump_after(opts.dump_ir_after, {kEmitStage});
  BuildReport local;
  BuildReport& r = report ? *report : local;
  r = BuildReport{};
  tir::PassTrace trace;
  tir::PassRunOptions ro;
  ro.dump_after = opts.dump_ir_after;
  ro.verify = opts.verify_ir;
  const tir::PrimFunc lowered = pipeline.run(f, ro, &trace);
  isa::Program prog = tir::run_timed_stage(
      kEmitStage, &trace, [&] { return emit_instructions(lowered, cfg, segments, &r.explicit_tokens); });
  if (tir::dump_selects(opts.dump_ir_after, kEmitStage))
    trace.ir_after.emplace_back(kEmitStage, isa::disasm_listing(prog.insns, prog.uops));
  r.ir_after = std::move(trace.ir_after);
  r.pass_ms = std::move(trace.pass_ms);

  r.instructions = static_cast<int64_t>(prog.insns.size());
  r.uops = static_cast<int64_t>(prog.uops.size());
  for (const isa::Instruction& in : prog.insns) {
    switch (in.opcode) {
      case isa::Opcode::kLoad:
        ++r.loads;
        break;
      case isa::Opcode::kStore:
        ++r.stores;
        break;
      case isa::Opcode::kGemm:
        ++r.gemms;
        if (!in.reset) {
          r.gemm_uop_executions += int64_t{in.iter_out} * in.iter_in * (int64_t{in.uop_end} - in.uop_bgn);
        }
        break;
      case isa::Opcode::kAlu:
        ++r.alus;
        break;
      case isa::Opcode::kFinish:
        break;
    }
  }
  return prog;
}

}  // namespace tessel::compiler::accel_tir
