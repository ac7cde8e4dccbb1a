// A legal VTA-style kernel shared by the verifier tests: load a uop table, INP and WGT, GEMM with
// reset, ALU shift, store, then VTA's end-of-run synchronisation and FINISH; and all(), which
// prints a verifier's diagnostics for failure messages.
#pragma once

#include <string>
#include <vector>

#include "isa/asm.h"
#include "isa/program.h"
#include "isa/verifier.h"

namespace tessel::isa {

/// Every diagnostic's message, one per line (for test failure output).
inline std::string all(const std::vector<Diagnostic>& d) {
  std::string s;
  for (const auto& x : d) s += x.message + "\n";
  return s;
}

inline std::string legal_kernel_text() {
  // Image: uop segment at byte 0, INP at 4096 (element 256 of 16 B), WGT at 8192 (element 32 of
  // 256 B), OUT at 12288 (element 768 of 16 B).
  return R"(.uop 0 0 0
.uop 1 1 0
LOAD UOP sram=0 dram=0 y=1 x=2 stride=2
LOAD INP sram=0 dram=256 y=2 x=1 stride=1
LOAD WGT sram=0 dram=32 y=1 x=1 stride=1 deps=push_next
GEMM uop=0:2 iter=1,1 dst=0,0 src=0,0 wgt=0,0 reset
GEMM uop=0:2 iter=1,1 dst=0,0 src=0,0 wgt=0,0 deps=pop_prev|push_prev
ALU SHR uop=0:2 iter=1,1 dst=0,0 src=0,0 imm=4 deps=push_next
STORE OUT sram=0 dram=768 y=1 x=2 stride=2 deps=pop_prev|push_prev
LOAD INP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_next|push_next
LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev|pop_next
FINISH
)";
}

inline Program legal_kernel(const HwConfig& cfg = HwConfig{}) {
  Program p = assemble(legal_kernel_text(), cfg, "legal");
  p.add_segment("inp", SegmentKind::kInput, 32);
  p.add_segment("wgt", SegmentKind::kConst, 256);
  p.add_segment("out", SegmentKind::kOutput, 32);
  return p;
}

}  // namespace tessel::isa
