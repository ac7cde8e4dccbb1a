// Streams for the verifier's race rule (isa/verifier.h): each comes in a racy form (one
// dependency token missing, so two modules access a shared scratchpad row, or a STORE and a LOAD
// the same DRAM bytes, unordered) and an
// ordered form (the same stream with the token in place), which is legal. Both forms have the
// same number of instructions, balanced tokens, no deadlock and a FINISH that waits for the load
// and store modules, so the race is the only problem of the racy form.
#pragma once

#include <string>

#include "isa/asm.h"
#include "isa/program.h"

namespace tessel::isa {

/// Assembles `insns` after two micro-ops (uop 0 = dst 0, src 0, wgt 0; uop 1 = dst 1, src 1,
/// wgt 0) with the image layout of legal_kernel(): uop segment at byte 0, INP at 4096 (INP
/// element 256), WGT at 8192 (WGT element 32), OUT at 12288 (OUT element 768).
inline Program race_program(const std::string& insns, const std::string& name) {
  Program p = assemble(".uop 0 0 0\n.uop 1 1 0\n" + insns, HwConfig{}, name);
  p.add_segment("inp", SegmentKind::kInput, 32);
  p.add_segment("wgt", SegmentKind::kConst, 256);
  p.add_segment("out", SegmentKind::kOutput, 32);
  return p;
}

/// Read-after-write on INP/WGT: GEMM (insn 4) reads INP rows 0,1 and WGT row 0 that LOAD INP
/// (insn 2) and LOAD WGT (insn 3) write. Racy: the GEMM pops only a token from the store module
/// (which the load module never reaches), not load's l2g token.
inline Program race_inp_raw(bool ordered) {
  return race_program(std::string(R"(LOAD UOP sram=0 dram=0 y=1 x=2 stride=2
STORE OUT sram=0 dram=768 y=0 x=0 stride=0 deps=push_prev
LOAD INP sram=0 dram=256 y=2 x=1 stride=1
LOAD WGT sram=0 dram=32 y=1 x=1 stride=1 deps=push_next
)") + (ordered ? "GEMM uop=0:2 iter=1,1 dst=0,0 src=0,0 wgt=0,0 deps=pop_prev|pop_next|push_next\n"
               : "GEMM uop=0:2 iter=1,1 dst=0,0 src=0,0 wgt=0,0 deps=pop_next|push_next\n") +
                          R"(STORE OUT sram=0 dram=768 y=1 x=2 stride=2 deps=pop_prev|push_prev
)" + (ordered ? "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_next\n"
              : "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev|pop_next\n") +
                          "FINISH\n",
                      "inp_raw");
}

/// Write-after-read on INP: a second LOAD INP (insn 4) overwrites INP rows 0,1 that the GEMM
/// (insn 3) reads. Racy: the load does not wait for a g2l token from the GEMM.
inline Program race_inp_war(bool ordered) {
  return race_program(std::string(R"(LOAD UOP sram=0 dram=0 y=1 x=2 stride=2
LOAD INP sram=0 dram=256 y=2 x=1 stride=1
LOAD WGT sram=0 dram=32 y=1 x=1 stride=1 deps=push_next
)") + (ordered ? "GEMM uop=0:2 iter=1,1 dst=0,0 src=0,0 wgt=0,0 deps=pop_prev|push_prev|push_next\n"
                 "LOAD INP sram=0 dram=256 y=2 x=1 stride=1 deps=pop_next|push_next\n"
               : "GEMM uop=0:2 iter=1,1 dst=0,0 src=0,0 wgt=0,0 deps=pop_prev|push_next\n"
                 "LOAD INP sram=0 dram=256 y=2 x=1 stride=1 deps=push_next\n") +
                          R"(STORE OUT sram=0 dram=768 y=1 x=2 stride=2 deps=pop_prev|push_prev
LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev|pop_next
FINISH
)",
                      "inp_war");
}

/// Read-after-write on OUT: STORE (insn 2) reads OUT rows 0,1 that a reset GEMM (insn 1)
/// writes. Racy: no g2s token from the GEMM to the STORE.
inline Program race_out_raw(bool ordered) {
  return race_program(std::string("LOAD UOP sram=0 dram=0 y=1 x=2 stride=2\n") +
                          (ordered ? "GEMM uop=0:2 iter=1,1 dst=0,0 src=0,0 wgt=0,0 reset deps=push_next\n"
                                     "STORE OUT sram=0 dram=768 y=1 x=2 stride=2 deps=pop_prev|push_prev\n"
                                   : "GEMM uop=0:2 iter=1,1 dst=0,0 src=0,0 wgt=0,0 reset\n"
                                     "STORE OUT sram=0 dram=768 y=1 x=2 stride=2 deps=push_prev\n") +
                          R"(LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_next
FINISH
)",
                      "out_raw");
}

/// Write-after-read on OUT: a reset GEMM (insn 3) overwrites OUT rows 0,1 that the STORE (insn
/// 2) reads. Racy: the GEMM does not wait for the store's s2g token (a later no-op pops it).
inline Program race_out_war(bool ordered) {
  return race_program(std::string(R"(LOAD UOP sram=0 dram=0 y=1 x=2 stride=2
GEMM uop=0:2 iter=1,1 dst=0,0 src=0,0 wgt=0,0 reset deps=push_next
STORE OUT sram=0 dram=768 y=1 x=2 stride=2 deps=pop_prev|push_prev
)") + (ordered ? "GEMM uop=0:2 iter=1,1 dst=0,0 src=0,0 wgt=0,0 reset deps=pop_next\n"
                 "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0\n"
               : "GEMM uop=0:2 iter=1,1 dst=0,0 src=0,0 wgt=0,0 reset\n"
                 "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_next\n") +
                          "FINISH\n",
                      "out_war");
}

/// Pad rows are writes: LOAD INP (insn 2) writes INP row 0 only as its y_pad_0 row (its data row
/// is row 1), and the GEMM (insn 3) reads only INP row 0 (uop 0); LOAD ACC (insn 4) writes OUT
/// row 0 with data and OUT row 1 only as its y_pad_1 row, and the STORE (insn 5) reads only OUT
/// row 1. Racy: the GEMM's l2g token comes from LOAD WGT (insn 1), before LOAD INP (whose token a
/// no-op before FINISH pops), and the STORE does not wait for a g2s token.
inline Program race_pads(bool ordered) {
  return race_program(std::string("LOAD UOP sram=0 dram=0 y=1 x=2 stride=2\n") +
                          (ordered ? "LOAD WGT sram=0 dram=32 y=1 x=1 stride=1\n"
                                     "LOAD INP sram=0 dram=256 y=1 x=1 stride=1 pad=1,0,0,0 deps=push_next\n"
                                     "GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0 deps=pop_prev\n"
                                     "LOAD ACC sram=0 dram=64 y=1 x=1 stride=1 pad=0,1,0,0 deps=push_next\n"
                                     "STORE OUT sram=1 dram=768 y=1 x=1 stride=1 deps=pop_prev|push_prev\n"
                                   : "LOAD WGT sram=0 dram=32 y=1 x=1 stride=1 deps=push_next\n"
                                     "LOAD INP sram=0 dram=256 y=1 x=1 stride=1 pad=1,0,0,0 deps=push_next\n"
                                     "GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0 deps=pop_prev\n"
                                     "LOAD ACC sram=0 dram=64 y=1 x=1 stride=1 pad=0,1,0,0\n"
                                     "STORE OUT sram=1 dram=768 y=1 x=1 stride=1 deps=push_prev\n") +
                          (ordered ? "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_next\n"
                                   : "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev|pop_next\n") +
                          "FINISH\n",
                      "pads");
}

/// Ordering through a chain that passes the third module: LOAD INP/WGT (insns 1, 2) -> l2g ->
/// compute no-op (insn 3) -> g2s -> store no-op (insn 4) -> s2g -> GEMM (insn 5), whose only pop
/// is the store's token. Racy: the compute no-op does not pop the l2g token (a no-op before
/// FINISH pops it instead), so the store's token orders nothing the load module did.
inline Program race_transitive(bool ordered) {
  return race_program(std::string(R"(LOAD UOP sram=0 dram=0 y=1 x=2 stride=2
LOAD INP sram=0 dram=256 y=2 x=1 stride=1
LOAD WGT sram=0 dram=32 y=1 x=1 stride=1 deps=push_next
)") + (ordered ? "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev|push_next\n"
               : "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=push_next\n") +
                          R"(STORE OUT sram=0 dram=768 y=0 x=0 stride=0 deps=pop_prev|push_prev
GEMM uop=0:2 iter=1,1 dst=0,0 src=0,0 wgt=0,0 deps=pop_next|push_next
STORE OUT sram=0 dram=768 y=1 x=2 stride=2 deps=pop_prev|push_prev
)" + (ordered ? "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_next\n"
              : "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev|pop_next\n") +
                          "FINISH\n",
                      "transitive");
}

/// DRAM read-after-write, ordered through compute: STORE OUT (insn 0) writes OUT elements
/// 768..769 = image bytes [12288, 12320); LOAD INP (insn 2) reads INP elements 769..770 = bytes
/// [12304, 12336). Ordered: store -> s2g -> compute no-op (insn 1) -> g2l -> LOAD INP. Racy: the
/// compute no-op pushes its g2l token without popping the store's s2g token (a later no-op pops
/// it), so nothing orders the STORE before the LOAD.
inline Program race_dram_raw(bool ordered) {
  return race_program(std::string("STORE OUT sram=0 dram=768 y=1 x=2 stride=2 deps=push_prev\n") +
                          (ordered ? "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_next|push_prev\n"
                                   : "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=push_prev\n") +
                          "LOAD INP sram=0 dram=769 y=1 x=2 stride=2 deps=pop_next\n" +
                          (ordered ? "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0\n"
                                   : "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_next\n") +
                          "FINISH\n",
                      "dram_raw");
}

/// DRAM write-after-read, ordered through compute: LOAD INP (insn 0) reads two strided rows, INP
/// elements 768 and 772 = image bytes [12288, 12304) and [12352, 12368); STORE OUT (insn 2)
/// then writes OUT elements 772..773 = bytes [12352, 12384), overlapping the second row only.
/// Ordered: load -> l2g -> compute no-op (insn 1) -> g2s -> STORE. Racy: the compute no-op pushes
/// g2s without popping the load's l2g token (a later no-op pops it).
inline Program race_dram_war(bool ordered) {
  return race_program(std::string("LOAD INP sram=0 dram=768 y=2 x=1 stride=4 deps=push_next\n") +
                          (ordered ? "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev|push_next\n"
                                   : "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=push_next\n") +
                          "STORE OUT sram=0 dram=772 y=1 x=2 stride=2 deps=pop_prev\n" +
                          (ordered ? "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0\n"
                                   : "LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev\n") +
                          "FINISH\n",
                      "dram_war");
}

/// DRAM read-after-write into the compute module: LOAD ACC_8BIT (insn 1, OUT rows 2..3) reads
/// ACC_8BIT elements 768..769 = image bytes [12288, 12320), which STORE OUT (insn 0, OUT rows
/// 0..1) writes. Ordered: the STORE pushes s2g, the LOAD ACC_8BIT pops it. Racy: no token.
inline Program race_dram_acc8(bool ordered) {
  return race_program(std::string(ordered ? "STORE OUT sram=0 dram=768 y=1 x=2 stride=2 deps=push_prev\n"
                                           "LOAD ACC_8BIT sram=2 dram=768 y=1 x=2 stride=2 deps=pop_next\n"
                                         : "STORE OUT sram=0 dram=768 y=1 x=2 stride=2\n"
                                           "LOAD ACC_8BIT sram=2 dram=768 y=1 x=2 stride=2\n") +
                          "FINISH\n",
                      "dram_acc8");
}

}  // namespace tessel::isa
