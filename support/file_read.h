// The one reader of input files. Every file Tessel reads (ONNX models, executables, Program
// binaries, assembler text, configurations, tensor files, label files, segment data) goes
// through read_file_bounded() with a limit stated for its kind, so that an endless or special
// file (/dev/zero, /dev/urandom, a FIFO) is a named error instead of a read until memory runs
// out, and a character device's st_size (0) is never taken for its length.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessel::support {

/// Limits per kind of input file, in bytes.
/// ONNX models and executables (.tsx): 2 GiB, protobuf's own limit for one message.
inline constexpr uint64_t kMaxModelFileBytes = uint64_t{2} << 30;
/// Program binaries (`tessel asm` output): 2 GiB (a Program's image is at most the 1 GiB device
/// DRAM; its instructions and micro-ops come on top).
inline constexpr uint64_t kMaxProgramFileBytes = uint64_t{2} << 30;
/// Text inputs: hardware configuration JSON, assembler text, label files: 64 MiB.
inline constexpr uint64_t kMaxTextFileBytes = uint64_t{64} << 20;
/// Tensor files (.npy, raw .bin, calibration data) and --segment data: 1 GiB of data (the
/// largest tensor, kMaxTensorBytes of compiler/ir) plus 1 MiB for a .npy header.
inline constexpr uint64_t kMaxTensorFileBytes = (uint64_t{1} << 30) + (uint64_t{1} << 20);

/// Reads the whole of `path`, at most `max_bytes` bytes. Regular files larger than the limit are
/// rejected by their size before anything is read; every other file (a pipe, a character device)
/// is read in chunks until its end, and reading stops as soon as it holds more than `max_bytes`.
/// A file that grows while it is read is held to the same limit.
/// Throws IoError "cannot read <path>: <reason>" when it cannot be opened or read (a directory
/// included), and UserError "<path> holds more than <max_bytes> bytes, the limit for <kind>" when
/// it is longer than the limit (`kind` says what the file is for: "an ONNX model", "a
/// configuration file", ...). `path` is quoted in messages (support/text.h quote()).
/// A FIFO is opened without blocking and then waited on for at most kFifoWaitMs (poll(2)) for a
/// process to write to it: a FIFO nobody writes to is IoError "cannot read <path>: no process
/// wrote to this FIFO within 30 s", never a hang.
std::vector<uint8_t> read_file_bounded(const std::string& path, uint64_t max_bytes, std::string_view kind);

/// How long a reader (read_file_bounded) waits for a FIFO's writer, and write_file_atomic() for a
/// FIFO's reader, in milliseconds.
inline constexpr int kFifoWaitMs = 30000;
/// Test hook: sets that wait for this process (ms; a negative value restores kFifoWaitMs).
void set_fifo_wait_for_testing(int ms);
/// The wait in force now (kFifoWaitMs unless set_fifo_wait_for_testing() changed it), in ms.
int fifo_wait_ms();

/// read_file_bounded() into a std::string (for text and protobuf parsers).
std::string read_file_bounded_string(const std::string& path, uint64_t max_bytes, std::string_view kind);

}  // namespace tessel::support
