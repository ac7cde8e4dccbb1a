// The conformance harness: one Program run on all three accelerator models (fsim, the cycle-level
// model and the RTL simulator) and everything observable compared (docs/microarchitecture.md,
// ../shared/DESIGN.md section 3 "conformance"):
//   * fsim vs cycle and fsim vs rtl: the whole device DRAM bit-identical after the run (the image,
//     every output segment and the instruction stream), Counters equal;
//   * cycle vs rtl: RunStats::cycles equal and sim::compare_timelines() of the two per-instruction
//     timelines (dispatch, start and done cycle of every instruction) finds no divergence (its
//     message is the failure message); each timeline must hold one record per instruction, so
//     the comparison is never vacuous.
// A failed comparison is a GoogleTest failure (EXPECT semantics: the remaining Programs still run)
// whose message names the Program, the configuration and the leg. When the build has no RTL
// (CMake target tessel_sim_rtl absent or TESSEL_WITH_RTL off, or sim::rtl_configs() empty), the
// rtl legs are not run and Harness::rtl_skip_reason() says why; when RTL models exist but none for
// a configuration a Program uses, every Program of that configuration fails.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <optional>
#include <vector>

#include "isa/config.h"
#include "isa/program.h"
#include "sim/common/timeline.h"

namespace tessel::conformance {

/// One of the four configurations the conformance suite covers.
struct ConfigCase {
  std::string name;     ///< "default", "1x8x8", "batch2" or "bus128" (the hw/configs file stem)
  isa::HwConfig cfg;    ///< the configuration (validated)
  std::string source;   ///< where cfg came from: the JSON path, or "built-in fallback"
};

/// The configuration `name` ("default", "1x8x8", "batch2", "bus128"): read from
/// hw/configs/<name>.json under the source tree when that file exists (the RTL's build
/// configurations), otherwise the suite's built-in equivalent: default = HwConfig{}; 1x8x8 =
/// LOG_BLOCK 3 with LOG_UOP/INP/WGT/ACC_BUFF_SIZE 15/14/16/16; batch2 = LOG_BATCH 1; bus128 =
/// LOG_BUS_WIDTH 7. Throws UserError for another name, IoError/UserError for an unreadable or
/// invalid JSON file.
ConfigCase config_case(const std::string& name);

/// `base` with the run-time queue depths replaced (CMD_QUEUE_DEPTH, TOKEN_QUEUE_DEPTH; 0 keeps
/// the base value) and, when `dram_latency` >= 0, DRAM_LATENCY. Validated.
isa::HwConfig with_runtime_keys(const isa::HwConfig& base, int cmd_queue_depth,
                                int token_queue_depth, int dram_latency = -1);

/// The next value of a splitmix64 stream (Steele, Lea, Flood, "Fast splittable pseudorandom
/// number generators", OOPSLA 2014): advances `state` by 0x9e3779b97f4a7c15 and mixes it. The
/// suite's only random source, so its data is the same on every platform.
uint64_t splitmix64(uint64_t& state);

/// Fills every kInput segment of `prog`'s image with bytes from a splitmix64 stream seeded by
/// `seed` (deterministic on every platform). Other segments are left as they are.
void fill_inputs(isa::Program& prog, uint64_t seed);

/// Per-leg tallies of one test (Programs that passed each comparison).
struct LegTally {
  int programs = 0;          ///< Programs checked
  int fsim_cycle = 0;        ///< DRAM and counters of cycle equal fsim's
  int fsim_rtl = 0;          ///< DRAM and counters of rtl equal fsim's
  int cycles_equal = 0;      ///< RunStats::cycles of cycle and rtl equal
  int timelines_equal = 0;   ///< compare_timelines(cycle, rtl) found nothing
  int rtl_run = 0;           ///< Programs the rtl leg ran on
  uint64_t cycle_cycles = 0; ///< sum of the cycle model's RunStats::cycles
  double fsim_seconds = 0, cycle_seconds = 0, rtl_seconds = 0;  ///< wall time per model
};

/// What one Harness::check() saw (beyond the failures it recorded).
struct CheckResult {
  bool wrote_output = false;   ///< fsim left a non-zero byte in some kOutput segment
  std::optional<uint64_t> cycle_cycles;  ///< the cycle model's RunStats::cycles, if it ran
  std::optional<uint64_t> rtl_cycles;    ///< the RTL's RunStats::cycles, if it ran
  std::vector<sim::InsnTiming> cycle_trace;  ///< the cycle model's timeline, sorted by index
};

/// Runs Programs on fsim, cycle and rtl and compares them (see the file comment). Simulators are
/// created in the constructor, once per configuration label (HwConfig::label(), so queue-depth
/// and latency variants get their own), and reused by every check(); the SystemC models (cycle,
/// rtl) share the process's kernel through sim/common/systemc_models.h.
class Harness {
 public:
  /// `configs`: every configuration (run-time variants included) the Programs checked with this
  /// harness use. Throws UserError if one is invalid. A configuration without an RTL model (while
  /// others have one) is recorded, and every check() of a Program using it fails.
  explicit Harness(const std::vector<isa::HwConfig>& configs);
  ~Harness();

  /// Verifies `prog` (isa::verify; a failure is a test failure and the Program is not run), then
  /// runs it on the three models, each in a fresh DRAM of default_layout(prog, image_base)
  /// .dram_bytes with the image at byte `image_base` (a multiple of 4096; a base above 4 GiB
  /// exercises 64-bit DRAM addresses) and the stream right after it, and records failures with
  /// `what` (a name for messages; the Program's name and config label are appended). The DRAMs
  /// are compared whole when they hold at most kWholeDramCompareBytes, otherwise from image_base
  /// to the end (everything the Program was given; the zero pages below stay untouched by the
  /// comparison so a run costs no 4 GiB scan). The Program's config must be one of the
  /// constructor's. The result says whether fsim left a non-zero byte in some kOutput segment
  /// (so a test can tell the comparison saw real data; false also when the Program was rejected
  /// or fsim failed) and what the timed models reported.
  CheckResult check(const isa::Program& prog, const std::string& what = "",
                    uint64_t image_base = 0);

  /// DRAMs up to this size (bytes) are compared whole by check().
  static constexpr uint64_t kWholeDramCompareBytes = uint64_t{256} << 20;

  /// Why the rtl legs are not run (empty when they are).
  const std::string& rtl_skip_reason() const { return rtl_skip_reason_; }
  const LegTally& tally() const { return tally_; }
  /// One line: "[conformance] <test>: N programs; fsim==cycle a/N; rtl ran M/N: fsim==rtl b,
  /// cycles equal c, timelines equal d; cycle model X cycles; wall fsim f s, cycle g s, rtl h s"
  /// (or "rtl skipped (<reason>)"): what each leg passed, for logs and reports.
  std::string summary(const std::string& test) const;

 private:
  struct Sims;
  Sims& sims_for(const isa::HwConfig& cfg);
  std::map<std::string, std::unique_ptr<Sims>> sims_;  ///< by HwConfig::label()
  std::string rtl_skip_reason_;
  LegTally tally_;
};

/// Ends a test after its Programs ran: prints Harness::summary(test) and, when the rtl legs did
/// not run, marks the test skipped with the reason (GoogleTest keeps a test with a failure failed,
/// so a failing fsim/cycle leg is still reported). The last statement of a TEST:
/// `TESSEL_CONFORMANCE_FINISH(harness, "default/Directed");`.
#define TESSEL_CONFORMANCE_FINISH(harness, test)                                  \
  do {                                                                            \
    std::printf("%s\n", (harness).summary(test).c_str());                         \
    if (!(harness).rtl_skip_reason().empty()) {                                   \
      GTEST_SKIP() << "rtl leg skipped: " << (harness).rtl_skip_reason()          \
                   << " (the fsim and cycle legs ran)";                           \
    }                                                                             \
  } while (0)

}  // namespace tessel::conformance
