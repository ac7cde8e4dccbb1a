// The report of `tessel run`: what was run, the classifier's top-5, the error against the float
// reference, and one row per layer (accelerator cycles, MACs, GEMM utilisation, DRAM bytes, CPU
// time of the same layer, speedup), plus totals and the simulator's speed. Rendered as a table for
// people (fmt) and as JSON with a stable key order for tools (schema: docs/usage.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/common/simulator.h"

namespace tessel::tools {

/// One entry of a top-k listing.
struct TopEntry {
  int64_t index = 0;
  float value = 0;
  std::string label;  ///< empty when no labels are known
};

/// The compiled model's output against the float reference (compiler::ReferenceModel).
struct ErrorStats {
  /// max |out - ref| over all elements; NaN when either side holds a NaN or an infinity.
  double max_abs_error = 0;
  /// 10*log10(sum ref^2 / sum (out-ref)^2) in dB; nullopt when the error is exactly zero (infinite);
  /// NaN when either side holds a NaN or an infinity.
  std::optional<double> snr_db;
  /// Elements of out and ref together that are NaN or infinite (0 for finite data).
  int64_t non_finite = 0;
  bool top1_agree = false;      ///< argmax(out) == argmax(ref) for every batch row
  int64_t reference_top1 = -1;  ///< argmax of the reference (first batch row)
};

/// One graph output.
struct OutputReport {
  std::string name;
  std::vector<int64_t> shape;
  bool classifier = false;        ///< 2-D [N,K] (or [N,K,1,1]) with K >= 2
  std::vector<TopEntry> top;      ///< top-5 (or top-K if K < 5) of batch row 0, classifiers only
  ErrorStats error;               ///< meaningful only when RunReport::has_reference()
};

/// One computing layer (compiler::LayerInfo joined with the run's StepMeasurement).
struct LayerRow {
  int step = -1;
  std::string name, op;
  std::vector<int64_t> in_shape, out_shape;
  std::string placement;          ///< "accel" or "cpu"
  /// Why the layer stays on the CPU (compiler::LayerInfo::placement_reason), or "" (JSON null:
  /// on the accelerator, or offload off).
  std::string placement_reason;
  uint64_t cycles = 0;            ///< accelerator cycles (0 on fsim and for CPU layers)
  int64_t macs = 0;
  uint64_t gemm_uops = 0;         ///< GEMM micro-ops executed (counter gemm_counter)
  /// macs / (cycles * macs_per_uop); nullopt when cycles == 0 or macs == 0.
  std::optional<double> gemm_utilisation;
  /// inp + wgt + acc + uop load bytes + out store bytes of the run's counters (accel layers).
  uint64_t dram_bytes = 0;
  double cpu_us = 0;              ///< the same layer's CPU kernel time on this machine (us)
  uint64_t cpu_cycles = 0;        ///< and its CPU cycles
  /// cpu_seconds / (cycles / (clock_mhz * 1e6)); nullopt when cycles == 0.
  std::optional<double> speedup;
};

/// Sums over the layers and the run as a whole.
struct Totals {
  int accel_layers = 0, cpu_layers = 0;
  uint64_t cycles = 0;            ///< sum of the accelerator layers' cycles
  int64_t macs = 0, accel_macs = 0;
  uint64_t dram_bytes = 0;
  std::optional<double> gemm_utilisation;  ///< accel_macs / (cycles * macs_per_uop)
  double accel_cpu_us = 0;        ///< CPU time of the offloaded layers when run on the CPU
  double cpu_layers_us = 0;       ///< CPU time of the layers placed on the CPU
  double other_steps_us = 0;      ///< CPU time of the remaining steps (quantize, pack, reshape...)
  uint64_t cpu_cycles = 0;        ///< CPU cycles of every layer row
  std::optional<double> speedup;  ///< accel_cpu_us / accelerator time of the offloaded layers
  double accel_us = 0;            ///< cycles / clock_mhz (simulated accelerator time, us)
};

/// Speed of the simulator on this run.
struct SimSpeed {
  double wall_seconds = 0;        ///< host time of the run minus the CPU-placed steps' kernel time
  uint64_t cycles = 0;            ///< simulated cycles (0 on fsim)
  uint64_t insns = 0;             ///< accelerator instructions executed
  std::optional<double> cycles_per_second;  ///< cycles / wall_seconds (cycle simulator only)
  std::optional<double> insns_per_second;   ///< insns / wall_seconds
};

/// Everything `tessel run` reports.
struct RunReport {
  std::string model, simulator, config_name;
  std::vector<std::string> inputs;
  double clock_mhz = 0;
  int macs_per_uop = 0;
  bool offload = true;
  bool quantized_by_tessel = false;
  /// Executable::requant_mode: "exact", "approximate" or "" (not recorded in an older file).
  std::string requant_mode;
  std::string calibration;        ///< what calibrated a float model ("" for quantised models)
  double compile_ms = 0;          ///< 0 (JSON null) when a compiled executable was run
  bool outputs_match_fsim = true; ///< the run's outputs equal an fsim run's, byte for byte
  /// The model is an Executable (.tsx, `tessel compile`) rather than ONNX.
  bool executable = false;
  /// For an executable: the ONNX model given with --reference ("" = no float comparison).
  std::string reference_model;
  /// Whether outputs[].error compares against a float reference (always for ONNX models).
  bool has_reference() const { return !executable || !reference_model.empty(); }
  /// What the CPU cycle figures count: "perf_cycles", "tsc_ticks" or "none"
  /// (runtime::StepMeasurement::cpu_cycles_source).
  std::string cpu_cycles_source;
  std::vector<OutputReport> outputs;
  std::vector<LayerRow> layers;
  Totals totals;
  SimSpeed sim;
};

/// Error statistics of `out` against `ref` (same element count, > 0; InternalError otherwise);
/// `classes` is the size of the last logical class axis for the top-1 check (0: no check).
ErrorStats compute_error(const std::vector<float>& out, const std::vector<float>& ref, int64_t classes);
/// Indices of the k largest values of values[0..n) in descending order (ties: lower index first;
/// NaN ranks below every number).
std::vector<int64_t> top_k(const float* values, int64_t n, int64_t k);
/// GEMM utilisation macs / (cycles * macs_per_uop), nullopt when a factor is zero.
std::optional<double> gemm_utilisation(int64_t macs, uint64_t cycles, int macs_per_uop);
/// Speedup cpu_seconds / (cycles / (clock_mhz * 1e6)), nullopt when cycles is zero.
std::optional<double> speedup(double cpu_seconds, uint64_t cycles, double clock_mhz);
/// Fills report.totals from report.layers (other_steps_us must already be set).
void compute_totals(RunReport& report);

/// The JSON form (nlohmann::ordered_json, keys in the documented order; optional values are
/// null when absent, and so are figures that do not apply: cycles and accel_us on fsim,
/// outputs_match_fsim on fsim, error_vs_reference without a reference, NaN errors). Schema:
/// docs/usage.md "Report JSON".
nlohmann::ordered_json to_json(const RunReport& report);
/// The human-readable form: header, top-5, error, the per-layer table, totals and simulator speed.
std::string render_text(const RunReport& report);

/// "1x3x224x224".
std::string compact_shape(const std::vector<int64_t>& shape);

/// A number of the text report with `places` decimals ("12.3"); beyond 10^12 in six significant
/// digits ("1.23457e+15"), and "-" for an infinity or NaN: the report never prints inf, nan or a
/// hundreds-of-digits expansion.
std::string report_number(double v, int places);

/// The per-module statistics of a timed run as a table (module, insns, busy, stall_token,
/// stall_queue, stall_dram; cycles). `sim` "rtl": the RTL derives only the instructions per
/// module (fetch: its dispatches), so its other columns print "-" (docs/rtl-sim.md, "Statistics
/// and timeline"); any other simulator: every column.
std::string module_stats_table(const std::string& sim, const sim::RunStats& st);

}  // namespace tessel::tools
