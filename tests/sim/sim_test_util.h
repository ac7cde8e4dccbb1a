// Small helpers for the simulator tests: build a Program from data segments and instructions,
// load it at image base 0 and run it on an fsim.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "isa/program.h"
#include "isa/spec.h"
#include "sim/common/program_loader.h"
#include "sim/fsim/fsim.h"

namespace tessel::sim::test {

/// Builds a Program piece by piece. Segment element offsets are relative to image byte 0, which
/// is where run() places the image, so they are also absolute DRAM element addresses.
class ProgramBuilder {
 public:
  explicit ProgramBuilder(const isa::HwConfig& cfg = {}) : spec_(cfg) {
    prog_.config = cfg;
    prog_.name = "test";
  }
  /// Adds a segment holding `bytes`; returns its offset in elements of `type`.
  uint32_t add_bytes(const std::string& name, isa::MemType type, const std::vector<uint8_t>& bytes,
                     isa::SegmentKind kind = isa::SegmentKind::kConst) {
    const size_t i = prog_.add_segment(name, kind, bytes.size());
    const isa::Segment& s = prog_.segments[i];
    if (!bytes.empty()) std::memcpy(&prog_.image[s.offset_bytes], bytes.data(), bytes.size());
    return uint32_t(s.offset_bytes / isa::dram_elem_bytes(prog_.config, type));
  }
  /// Adds a segment of int8 values (INP, WGT, ACC_8BIT, OUT data).
  uint32_t add_i8(const std::string& name, isa::MemType type, const std::vector<int8_t>& v,
                  isa::SegmentKind kind = isa::SegmentKind::kConst) {
    std::vector<uint8_t> b(v.size());
    std::memcpy(b.data(), v.data(), v.size());
    return add_bytes(name, type, b, kind);
  }
  /// Adds a segment of int32 values (ACC data), little-endian.
  uint32_t add_i32(const std::string& name, const std::vector<int32_t>& v) {
    std::vector<uint8_t> b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return add_bytes(name, isa::MemType::kAcc, b);
  }
  /// Adds encoded micro-ops; returns their offset in UOP elements (4 bytes).
  uint32_t add_uops(const std::string& name, const std::vector<isa::Uop>& uops) {
    std::vector<uint8_t> b(uops.size() * 4);
    for (size_t k = 0; k < uops.size(); ++k) {
      const uint32_t bits = spec_.encode_uop(uops[k]);
      std::memcpy(&b[k * 4], &bits, 4);
    }
    prog_.uops.insert(prog_.uops.end(), uops.begin(), uops.end());
    return add_bytes(name, isa::MemType::kUop, b);
  }
  /// Adds a zeroed output segment of `elems` elements of `type`; returns its element offset.
  uint32_t add_output(const std::string& name, isa::MemType type, size_t elems) {
    return add_bytes(name, type,
                     std::vector<uint8_t>(elems * isa::dram_elem_bytes(prog_.config, type)),
                     isa::SegmentKind::kOutput);
  }
  void emit(const isa::Instruction& in) { prog_.insns.push_back(in); }
  isa::Program& program() { return prog_; }

 private:
  isa::IsaSpec spec_;
  isa::Program prog_;
};

/// A Dram big enough for `p` (plus `extra` bytes), with p loaded at image base 0.
inline Dram loaded_dram(const isa::Program& p, LoadedProgram* where, uint64_t extra = 0) {
  Dram d(default_layout(p).dram_bytes + extra);
  *where = load_program(d, p);
  return d;
}

/// Runs `p` on `sim` in a fresh DRAM; returns the DRAM afterwards and the stats through `stats`.
inline Dram run_program(FunctionalSimulator& sim, const isa::Program& p, RunStats* stats = nullptr) {
  LoadedProgram at;
  Dram d = loaded_dram(p, &at);
  RunStats s = sim.run(d, at.insn_addr, at.insn_count);
  if (stats) *stats = s;
  return d;
}

/// Int8 values of segment `name` after a run.
inline std::vector<int8_t> segment_i8(const Dram& d, const isa::Program& p,
                                      const std::string& name) {
  std::vector<uint8_t> b = read_segment(d, p, name, 0);
  std::vector<int8_t> v(b.size());
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

}  // namespace tessel::sim::test
