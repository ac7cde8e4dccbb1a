// Generators of the artefacts derived from the ISA field tables (isa/spec.h): the SystemVerilog
// package under hw/generated/ and the reference page docs/isa.md. Both are committed; a golden
// test regenerates them and compares byte for byte, so they cannot drift from the C++ tables.
#pragma once

#include <string>
#include <vector>

#include "isa/config.h"
#include "isa/spec.h"

namespace tessel::isa::gen {

/// A generated text file; `path` is relative to the repository root.
struct GeneratedFile {
  std::string path;
  std::string text;
};

/// "hw/generated/tessel_isa_pkg_<config name>.sv".
std::string sv_package_path(const HwConfig& cfg);

/// The SystemVerilog package `tessel_isa_pkg` for `spec`'s config: every config key and derived
/// size (element widths in bits, buffer depths in entries), the opcode, memory-type and ALU-op
/// codes, and for every field of every format <FORMAT>_<FIELD>_LSB / _MSB / _WIDTH localparams
/// plus a packed struct per format (unused bits as pad_<lsb>). Deterministic text.
std::string generate_sv_package(const IsaSpec& spec);

/// docs/isa.md for `spec`'s config: configuration, derived sizes, codes, one field table per
/// format with bit ranges (unused ranges shown), dispatch and dependency-token queues.
std::string generate_isa_doc(const IsaSpec& spec);

/// Both files for `cfg` (throws UserError if the config is invalid).
std::vector<GeneratedFile> generate_all(const HwConfig& cfg);

/// Writes every file of generate_all(cfg) under `root`, creating folders. Throws IoError if a
/// file cannot be written.
void write_all(const HwConfig& cfg, const std::string& root);

/// Compares generate_all(cfg) with the files under `root`; returns one line per file that is
/// missing or differs (empty = up to date). Throws nothing for missing files.
std::vector<std::string> check_all(const HwConfig& cfg, const std::string& root);

}  // namespace tessel::isa::gen
