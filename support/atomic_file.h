// Writing files so that nothing already written is lost: every file Tessel writes (executables,
// .npy outputs, reports, traces, Programs, benchmark JSON) goes through write_file_atomic(), and
// every command that prints results checks standard output with check_stdout() before it exits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessel::support {

/// Replaces the contents of `path` with `bytes`, all or nothing.
///
/// For a regular file (or a name that does not exist yet) the bytes go to a new temporary file in
/// the same directory (".<name>.tmp<random>"), which is written in full (write(2) retried on short
/// writes and EINTR), fsync'ed and closed, each step checked, and then renamed over `path`. The
/// new file gets the mode of the file it replaces (0666 minus the umask for a new file). On any
/// failure the temporary file is removed and `path` is left exactly as it was (absent, or its
/// previous bytes). A symbolic link is followed: the file it points to is replaced.
///
/// For an existing target that is not a regular file (a character device such as /dev/full or
/// /dev/null, a FIFO, /dev/stdout) renaming cannot apply; the bytes are written to it directly with
/// the same checked writes, then fsync (where the device supports it) and a checked close.
///
/// Throws IoError "cannot write <quoted path>: <reason>" naming the step that failed (creating the
/// temporary file, writing N bytes, fsync, close, rename), e.g. "cannot write '/dev/full': writing
/// 1200 bytes: no space left on device"; and for a directory, "cannot write 'x': is a directory".
void write_file_atomic(const std::string& path, std::string_view bytes);

/// How many bytes the temporary file's name adds to the target's file name: "." before it and
/// ".tmp" plus 12 hex digits after it. A target whose name plus this exceeds the directory's
/// NAME_MAX cannot be written; callers check it before long work (tools::check_output_path).
inline constexpr size_t kAtomicTempSuffixBytes = 1 + 4 + 12;
/// As above, for a byte vector.
void write_file_atomic(const std::string& path, const std::vector<uint8_t>& bytes);

/// For files another library writes by name (Verilator's FST waveforms): reserves and returns a
/// fresh temporary file name next to `target` (".<name>.tmp<random>", created empty with O_EXCL)
/// for the library to write. Throws IoError as write_file_atomic() when the directory does not
/// take it.
std::string reserve_temp_file(const std::string& target);
/// Finishes a file written under a reserve_temp_file() name: fsyncs it and renames it over
/// `target` (the previous file stays intact until then); for a non-regular target (/dev/full)
/// copies its bytes there with checked writes. The temporary file is gone afterwards in every
/// case. Throws IoError "cannot write <quoted target>: <step>: <reason>".
void commit_temp_file(const std::string& temp, const std::string& target);
/// Removes a reserve_temp_file() file that will not be committed (an error path); never throws.
void discard_temp_file(const std::string& temp) noexcept;

/// Test hook for the failure paths that are hard to reach on purpose (a full filesystem): from
/// now on, the `n`-th write(2) call made by write_file_atomic() (1-based, counted over all calls
/// in this process) fails as if the disk were full (ENOSPC); n = 0 turns the fault off. The
/// environment variable TESSEL_TEST_WRITE_FAULT=<n>, read at the first write_file_atomic() call,
/// sets the same fault for a whole process (used by the command-line tests).
void set_write_fault_for_testing(uint64_t n);

/// Flushes the C++ and C standard output streams and checks that nothing written to them was
/// lost (std::cout's state, fflush(stdout), ferror(stdout)). Returns "" when all is well, else a
/// message like "cannot write standard output: no space left on device" (or "...: an earlier
/// write to it failed" when stdio flushed and failed before, the reason no longer known). Commands
/// call it last;
/// tools/main.cc turns a message into exit code 1.
std::string check_stdout();

}  // namespace tessel::support
