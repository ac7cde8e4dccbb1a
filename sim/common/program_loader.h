// Placing a Program in device DRAM: its image at an aligned base address and its instruction
// stream, relocated to that base (isa/program.h) and encoded by IsaSpec, at an instruction
// address. The runtime's device backends, the CLI and the tests all load Programs this way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "isa/program.h"
#include "sim/common/simulator.h"

namespace tessel::sim {

/// Where a Program was placed: what Simulator::run needs.
struct LoadedProgram {
  uint64_t image_base = 0;  ///< byte address of image byte 0
  uint64_t insn_addr = 0;   ///< byte address of the first 128-bit instruction
  uint32_t insn_count = 0;  ///< number of instructions written (FINISH included)
};

/// A DRAM layout for one Program: the image at `image_base`, the instruction stream right after
/// it at the next kImageAlign boundary, and the DRAM size (bytes) that holds both, rounded up to
/// kImageAlign (a fetch of the last instructions reads whole bus words).
struct ProgramLayout {
  uint64_t image_base = 0;
  uint64_t insn_addr = 0;
  uint64_t dram_bytes = 0;
};

/// Computes the layout above. Throws UserError if image_base is not a multiple of
/// isa::kImageAlign (4096).
ProgramLayout default_layout(const isa::Program& prog, uint64_t image_base = 0);

/// Writes prog.image to dram at `image_base` and the encoded instructions, with every LOAD/STORE
/// dram_base relocated by image_base (isa::relocate), at `insn_addr` (16 bytes each, little-endian,
/// in program order). Encoding uses IsaSpec(prog.config).
/// Throws UserError when image_base is not a multiple of isa::kImageAlign, insn_addr is not a
/// multiple of 16, the two byte ranges overlap, either does not fit in dram, a relocated field
/// overflows, or the program holds more than 2^32-1 instructions.
LoadedProgram load_program(Dram& dram, const isa::Program& prog, uint64_t image_base,
                           uint64_t insn_addr);

/// Convenience: load_program at default_layout(prog, image_base); dram must be at least
/// default_layout(...).dram_bytes long (UserError otherwise).
LoadedProgram load_program(Dram& dram, const isa::Program& prog, uint64_t image_base = 0);

/// Copies the bytes of segment `name` of a Program loaded at image_base out of dram.
/// Throws UserError if the Program has no such segment or it lies outside dram.
std::vector<uint8_t> read_segment(const Dram& dram, const isa::Program& prog,
                                  const std::string& name, uint64_t image_base);

}  // namespace tessel::sim
