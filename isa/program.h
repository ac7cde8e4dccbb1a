// The Program container: one accelerator kernel as the compiler emits it and the runtime loads it
// (instruction stream + micro-op table + DRAM image with named segments).
//
// Addressing: every LOAD/STORE dram_base in `insns` is relative to the start of the Program's DRAM
// image (byte 0 of `image`), in elements of its memory_type. The runtime places the image at a
// device address `base` aligned to kImageAlign bytes and relocates each dram_base by
// base / elem_bytes(memory_type) when it writes the stream to device DRAM (see relocate()).
// Micro-ops live in the image too (a segment of kind kConst, 4 bytes each, encoded by IsaSpec).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "isa/config.h"
#include "isa/instruction.h"

namespace tessel::isa {

/// Alignment (bytes) of a Program image and of every segment in it. A multiple of every element
/// size of the supported configurations up to a 4096-byte WGT element.
inline constexpr uint64_t kImageAlign = 4096;

/// What a segment of the DRAM image holds.
enum class SegmentKind : uint8_t {
  kConst = 0,    ///< initialised by the Program (weights, bias, micro-ops, requant constants)
  kInput = 1,    ///< written by the caller before submit (activations in)
  kOutput = 2,   ///< read by the caller after completion (activations out)
  kScratch = 3,  ///< device-only temporary
};
/// "const", "input", "output", "scratch" ("invalid" outside the enum).
std::string_view to_string(SegmentKind k);

/// A named byte range of the image. offset_bytes is a multiple of kImageAlign.
struct Segment {
  std::string name;
  SegmentKind kind = SegmentKind::kConst;
  uint64_t offset_bytes = 0;
  uint64_t size_bytes = 0;
  bool operator==(const Segment&) const = default;
};

/// One accelerator kernel. Deterministic: the compiler must produce byte-identical Programs for
/// the same input, so serialize() output is the identity used by tests.
struct Program {
  HwConfig config;
  std::string name;                 ///< e.g. the ONNX node name of the layer
  std::vector<Instruction> insns;   ///< in program order, ending with FINISH
  std::vector<Segment> segments;    ///< non-overlapping, sorted by offset
  std::vector<uint8_t> image;       ///< initial DRAM image; size = total image bytes
  /// Micro-op table (also encoded in the image at the "uop" segment); kept decoded for tools.
  std::vector<Uop> uops;

  /// Returns the segment with this name; throws UserError naming the present segments if absent.
  const Segment& segment(const std::string& name) const;
  /// Appends a segment of `size_bytes` rounded up to kImageAlign at the end of the image (itself
  /// first rounded up to kImageAlign), zero-filled; the Segment records the rounded size.
  /// Returns its index. Throws UserError if the name is already used or size_bytes > 1 TiB.
  size_t add_segment(const std::string& name, SegmentKind kind, uint64_t size_bytes);

  /// Binary serialisation (little-endian, versioned header "TSLPROG1"); config as JSON inside,
  /// instructions and uops encoded by IsaSpec (layout: isa/program.cc). Throws UserError if the
  /// config is invalid, an instruction or uop does not encode (message names its index), the
  /// segments are not aligned, sorted, non-overlapping, unique and inside the image, or the
  /// micro-op table disagrees with the image: with a segment named "uop", `uops` must be its
  /// first uops.size() little-endian words (what the simulators load) and every later byte of
  /// the segment zero; a non-empty table needs that segment.
  /// Instruction fields outside their format are not kept (decode leaves them zero).
  std::vector<uint8_t> serialize() const;
  /// Inverse of serialize(); throws UserError on a malformed or truncated buffer, an unknown
  /// version, a bad config, an undecodable instruction, bad segments, a micro-op table that
  /// differs from the image's "uop" segment (as for serialize()) or trailing bytes.
  static Program deserialize(const std::vector<uint8_t>& bytes);
};

/// Element size in bytes of a memory type under `cfg` (ACC_8BIT: 1 byte per lane in DRAM, so
/// BATCH*BLOCK_OUT bytes per element; UOP: 4). Throws UserError for a value outside MemType.
uint32_t dram_elem_bytes(const HwConfig& cfg, MemType type);

/// DRAM bytes [first, end) of one row of a LOAD/STORE.
struct DramRow {
  uint64_t first = 0;
  uint64_t end = 0;
};

/// The DRAM bytes of row r (0 <= r < y_size) of a LOAD/STORE: first = (dram_base + r * x_stride)
/// * E, end = first + x_size * E, with E = dram_elem_bytes(cfg, insn.mem_type) (isa.md: DRAM
/// addresses are in elements of the memory type). Image-relative when dram_base is. Pads touch no
/// DRAM. Throws UserError for a memory type outside MemType.
DramRow dram_row(const HwConfig& cfg, const Instruction& insn, uint32_t r);

/// Returns `insns` with every LOAD/STORE dram_base moved by base_bytes / dram_elem_bytes.
/// Throws UserError if base_bytes is not a multiple of kImageAlign or a relocated dram_base
/// would not fit 32 bits (the message names the instruction index).
std::vector<Instruction> relocate(const HwConfig& cfg, const std::vector<Instruction>& insns,
                                  uint64_t base_bytes);

}  // namespace tessel::isa
