// Example: an accelerator Program written by hand with the ISA builders of isa/instruction.h,
// run through the runtime's device API on both simulators.
//
// The Program multiplies one 16-element int8 input vector by a 16x16 int8 weight block (one GEMM
// micro-op = 16*16 = 256 MACs on the default 1x16 configuration) and stores the low 8 bits of
// the int32 accumulators. Dependency tokens: the load module tells compute the data is in
// (push_next / pop_prev), compute tells store the result is ready, store tells compute it is
// drained before FINISH.
#include <fmt/format.h>

#include <memory>

#include "isa/program.h"
#include "isa/spec.h"
#include "isa/verifier.h"
#include "runtime/device.h"
#include "support/error.h"

namespace {

using namespace tessel;

isa::Program build_program() {
  isa::Program p;  // default HwConfig
  p.name = "gemm_by_hand";
  const isa::HwConfig& cfg = p.config;
  const isa::IsaSpec spec(cfg);

  // DRAM image: micro-ops, the input vector, the weight block, the output vector.
  p.uops = {isa::Uop{0, 0, 0}};  // ACC[0] += WGT[0] x INP[0]
  const size_t uop_seg = p.add_segment("uop", isa::SegmentKind::kConst, 4 * p.uops.size());
  const size_t inp_seg = p.add_segment("inp", isa::SegmentKind::kInput, cfg.inp_elem_bytes());
  const size_t wgt_seg = p.add_segment("wgt", isa::SegmentKind::kConst, cfg.wgt_elem_bytes());
  const size_t out_seg = p.add_segment("out", isa::SegmentKind::kOutput, cfg.out_elem_bytes());
  const uint32_t uop_bits = spec.encode_uop(p.uops[0]);
  for (int b = 0; b < 4; ++b) p.image[p.segments[uop_seg].offset_bytes + b] = static_cast<uint8_t>(uop_bits >> (8 * b));
  // Weights [BLOCK_OUT][BLOCK_IN]: 2 on the diagonal plus 1 in column 0 -> out[o] = 2*in[o] + in[0].
  for (int o = 0; o < 16; ++o) {
    for (int k = 0; k < 16; ++k) {
      p.image[p.segments[wgt_seg].offset_bytes + o * 16 + k] = static_cast<uint8_t>((o == k ? 2 : 0) + (k == 0 ? 1 : 0));
    }
  }

  // DRAM addresses are image-relative, in elements of the memory type.
  auto elem = [&](size_t seg, isa::MemType t) {
    return static_cast<uint32_t>(p.segments[seg].offset_bytes / isa::dram_elem_bytes(cfg, t));
  };
  using isa::MemType;
  using isa::Opcode;
  isa::Instruction load_inp = isa::make_mem(Opcode::kLoad, MemType::kInp, 0, elem(inp_seg, MemType::kInp), 1, 1, 1);
  isa::Instruction load_wgt = isa::make_mem(Opcode::kLoad, MemType::kWgt, 0, elem(wgt_seg, MemType::kWgt), 1, 1, 1);
  load_wgt.dep.push_next = true;  // load -> compute: data loaded
  isa::Instruction load_uop = isa::make_mem(Opcode::kLoad, MemType::kUop, 0, elem(uop_seg, MemType::kUop), 1, 1, 1);
  isa::Instruction gemm_reset;
  gemm_reset.opcode = Opcode::kGemm;
  gemm_reset.reset = true;
  gemm_reset.uop_bgn = 0;
  gemm_reset.uop_end = 1;
  gemm_reset.iter_out = gemm_reset.iter_in = 1;
  isa::Instruction gemm = gemm_reset;
  gemm.reset = false;
  gemm.dep.pop_prev = true;   // wait for the loads
  gemm.dep.push_next = true;  // compute -> store: results ready
  isa::Instruction store = isa::make_mem(Opcode::kStore, MemType::kOut, 0, elem(out_seg, MemType::kOut), 1, 1, 1);
  store.dep.pop_prev = true;
  store.dep.push_prev = true;  // store -> compute: OUT drained
  isa::DepFlags fin;
  fin.pop_next = true;
  p.insns = {load_inp, load_wgt, load_uop, gemm_reset, gemm, store, isa::make_finish(fin)};
  isa::verify(p);  // throws UserError naming the instruction if the stream is illegal
  return p;
}

}  // namespace

int main() {
  try {
    const isa::Program p = build_program();
    int8_t in[16];
    for (int k = 0; k < 16; ++k) in[k] = static_cast<int8_t>(k - 8);
    bool ok = true;
    for (const std::string sim : {"fsim", "cycle"}) {
      std::unique_ptr<runtime::Device> dev = runtime::Device::create(sim, p.config, uint64_t{1} << 20);
      const runtime::LoadedProgram lp = dev->load(p);
      dev->copy_to_device(lp.segment_addr(p, "inp"), in, sizeof in);
      dev->submit(lp);
      const sim::RunStats st = dev->wait();
      int8_t out[16];
      dev->copy_from_device(out, lp.segment_addr(p, "out"), sizeof out);
      dev->unload(lp);
      fmt::print("{:<5}: {} instructions, {} GEMM uops, {} cycles; out =", sim, st.counters.insn_count,
                 st.counters.gemm_counter, st.cycles);
      for (int o = 0; o < 16; ++o) {
        const int want = 2 * in[o] + in[0];
        fmt::print(" {}", out[o]);
        ok = ok && out[o] == want;
      }
      fmt::print("\n");
    }
    fmt::print("{}\n", ok ? "both simulators computed out[o] = 2*in[o] + in[0]" : "MISMATCH");
    return ok ? 0 : 1;
  } catch (const Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
