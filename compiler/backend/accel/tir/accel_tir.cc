#include "compiler/backend/accel/tir/accel_tir.h"

#include <fmt/format.h>

#include <chrono>

#include "compiler/backend/accel/tir/allocate_scratchpads.h"
#include "compiler/backend/accel/tir/emit_instructions.h"
#include "compiler/backend/accel/tir/fold_uop_loops.h"
#include "compiler/backend/accel/tir/inject_alu.h"
#include "compiler/backend/accel/tir/inject_dma_copy.h"
#include "compiler/backend/accel/tir/tensorize_gemm.h"
#include "compiler/tir/printer.h"
#include "compiler/tir/transforms/inject_virtual_threads.h"
#include "isa/asm.h"
#include "support/error.h"

namespace tessel::compiler::accel_tir {

const std::vector<std::string>& pass_names() {
  static const std::vector<std::string> kNames = {"inject_dma_copy",        "tensorize_gemm",       "inject_alu",
                                                  "inject_virtual_threads", "allocate_scratchpads", "fold_uop_loops",
                                                  "emit_instructions"};
  return kNames;
}

isa::Program build_accel_program(const tir::PrimFunc& f, const isa::HwConfig& cfg,
                                 const std::vector<SegmentSpec>& segments, const BuildOptions& opts,
                                 BuildReport* report) {
  cfg.validate();
  const std::string& want = opts.dump_ir_after;
  bool known = want.empty() || want == "all" || want == "input";
  for (const std::string& n : pass_names()) known = known || want == n;
  if (!known) {
    std::string names = "input";
    for (const std::string& n : pass_names()) names += ", " + n;
    throw_user_error("unknown pass '{}' for dump_ir_after (passes: {}, all)", want, names);
  }
  BuildReport local;
  BuildReport& r = report ? *report : local;
  r = BuildReport{};
  auto dump = [&](const std::string& name, const std::string& text) {
    if (want == "all" || want == name) r.ir_after.emplace_back(name, text);
  };
  dump("input", tir::to_text(f));
  // the ordered pass list
  using Clock = std::chrono::steady_clock;
  auto timed = [&](const char* name, auto&& run) {
    const Clock::time_point t0 = Clock::now();
    auto out = run();
    r.pass_ms.emplace_back(name, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    return out;
  };
  const tir::PrimFunc copied = timed("inject_dma_copy", [&] { return inject_dma_copy(f, cfg); });
  dump("inject_dma_copy", tir::to_text(copied));
  const tir::PrimFunc tensorized = timed("tensorize_gemm", [&] { return tensorize_gemm(copied, cfg); });
  dump("tensorize_gemm", tir::to_text(tensorized));
  const tir::PrimFunc alu = timed("inject_alu", [&] { return inject_alu(tensorized, cfg); });
  dump("inject_alu", tir::to_text(alu));
  const tir::PrimFunc threaded =
      timed("inject_virtual_threads", [&] { return tir::transforms::inject_virtual_threads(alu); });
  dump("inject_virtual_threads", tir::to_text(threaded));
  const tir::PrimFunc allocated = timed("allocate_scratchpads", [&] { return allocate_scratchpads(threaded, cfg); });
  dump("allocate_scratchpads", tir::to_text(allocated));
  const tir::PrimFunc folded = timed("fold_uop_loops", [&] { return fold_uop_loops(allocated, cfg); });
  dump("fold_uop_loops", tir::to_text(folded));
  isa::Program prog = timed("emit_instructions",
                            [&] { return emit_instructions(folded, cfg, segments, &r.explicit_tokens); });
  dump("emit_instructions", isa::disasm_listing(prog.insns, prog.uops));

  r.instructions = static_cast<int64_t>(prog.insns.size());
  r.uops = static_cast<int64_t>(prog.uops.size());
  std::vector<std::pair<uint32_t, uint32_t>> kernels;
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
