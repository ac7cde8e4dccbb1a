#include "sim/common/program_loader.h"

#include "isa/spec.h"
#include "support/text.h"

namespace tessel::sim {

namespace {

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

void check_image_base(uint64_t image_base) {
  if (image_base % isa::kImageAlign != 0) {
    throw_user_error("program image base {} is not a multiple of {} bytes", image_base,
                     isa::kImageAlign);
  }
}

}  // namespace

ProgramLayout default_layout(const isa::Program& prog, uint64_t image_base) {
  check_image_base(image_base);
  ProgramLayout l;
  l.image_base = image_base;
  l.insn_addr = round_up(image_base + prog.image.size(), isa::kImageAlign);
  // Whole 4096-byte pages: fetch reads the bus words the stream touches, and a bus word may
  // extend past the last instruction (buses wider than 16 bytes).
  l.dram_bytes = round_up(l.insn_addr + uint64_t(prog.insns.size()) * 16, isa::kImageAlign);
  return l;
}

LoadedProgram load_program(Dram& dram, const isa::Program& prog, uint64_t image_base,
                           uint64_t insn_addr) {
  check_image_base(image_base);
  if (insn_addr % 16 != 0) {
    throw_user_error("instruction address {} is not a multiple of 16 bytes", insn_addr);
  }
  if (prog.insns.size() > UINT32_MAX) {
    throw_user_error("program {} holds {} instructions, more than {}", support::quote(prog.name),
                     prog.insns.size(), UINT32_MAX);
  }
  const uint64_t image_end = image_base + prog.image.size();
  const uint64_t insn_bytes = uint64_t(prog.insns.size()) * 16;
  const uint64_t insn_end = insn_addr + insn_bytes;
  if (insn_bytes > 0 && !prog.image.empty() && insn_addr < image_end && image_base < insn_end) {
    throw_user_error(
        "instruction stream bytes [{}, {}) overlap the program image bytes [{}, {})", insn_addr,
        insn_end, image_base, image_end);
  }
  dram.check_range(image_base, prog.image.size(), "program image");
  dram.check_range(insn_addr, insn_bytes, "instruction stream");

  const isa::IsaSpec spec(prog.config);
  const std::vector<isa::Instruction> insns = isa::relocate(prog.config, prog.insns, image_base);
  std::vector<uint8_t> bytes(static_cast<size_t>(insn_bytes));
  for (size_t i = 0; i < insns.size(); ++i) {
    isa::IsaSpec::to_bytes(spec.encode(insns[i]), &bytes[i * 16]);
  }
  dram.write(image_base, prog.image.data(), prog.image.size());
  dram.write(insn_addr, bytes.data(), bytes.size());
  return LoadedProgram{image_base, insn_addr, uint32_t(insns.size())};
}

LoadedProgram load_program(Dram& dram, const isa::Program& prog, uint64_t image_base) {
  const ProgramLayout l = default_layout(prog, image_base);
  if (dram.size() < l.dram_bytes) {
    throw_user_error("dram of {} bytes cannot hold program {} ({} bytes needed)", dram.size(),
                     support::quote(prog.name), l.dram_bytes);
  }
  return load_program(dram, prog, l.image_base, l.insn_addr);
}

std::vector<uint8_t> read_segment(const Dram& dram, const isa::Program& prog,
                                  const std::string& name, uint64_t image_base) {
  const isa::Segment& seg = prog.segment(name);
  std::vector<uint8_t> out(size_t(seg.size_bytes));
  dram.read(image_base + seg.offset_bytes, out.data(), seg.size_bytes);
  return out;
}

}  // namespace tessel::sim
