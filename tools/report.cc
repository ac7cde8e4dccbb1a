#include "tools/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "support/error.h"
#include "support/text.h"

namespace tessel::tools {
namespace {

using nlohmann::ordered_json;

ordered_json opt(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? ordered_json(*v) : ordered_json(nullptr);
}

// Ranks NaN below every number so that sorting with NaN present stays a strict weak order.
bool ranks_above(float a, float b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return a > b;
}

}  // namespace

std::string report_number(double v, int places) {
  if (!std::isfinite(v)) return "-";
  // Fixed notation up to 10^12 ("12.3"); beyond it, six significant digits ("1.23457e+15"), never
  // a 300-digit expansion.
  if (std::fabs(v) < 1e12) return fmt::format("{:.{}f}", v, places);
  return fmt::format("{:.6g}", v);
}

namespace {

std::string fmt_opt(const std::optional<double>& v, const char* spec_suffix) {
  if (!v) return "-";
  const int places = spec_suffix[0] == '.' ? spec_suffix[1] - '0' : 1;
  return report_number(*v, places);
}

// Groups digits in threes: 1234567 -> "1,234,567".
std::string grouped(uint64_t v) {
  const std::string digits = std::to_string(v);
  std::string s;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) s.push_back(',');
    s.push_back(digits[i]);
  }
  return s;
}

// A user-given string (a file name, an ONNX output or layer name, a label) as the text report
// shows it: control bytes, NULs and broken UTF-8 escaped (support::escape_bytes), so that no name
// can break a line, fake a report line or send a terminal escape sequence.
std::string shown(std::string_view s) { return support::escape_bytes(s); }

std::string clip_name(const std::string& s, size_t width) {
  if (s.size() <= width) return s;
  return s.substr(0, width - 2) + "..";
}

// A plain text table: the first column is left-aligned, the others right-aligned.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void separator() { seps_.push_back(rows_.size()); }
  std::string render() const {
    std::vector<size_t> w(rows_[0].size(), 0);
    for (const auto& r : rows_)
      for (size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
    size_t total = 0;
    for (size_t x : w) total += x + 2;
    std::string rule(total > 2 ? total - 2 : 0, '-');
    std::string out;
    for (size_t r = 0; r < rows_.size(); ++r) {
      if (std::find(seps_.begin(), seps_.end(), r) != seps_.end()) out += rule + "\n";
      std::string line;
      for (size_t i = 0; i < rows_[r].size(); ++i) {
        if (i) line += "  ";
        line += (i <= 2) ? fmt::format("{:<{}}", rows_[r][i], w[i]) : fmt::format("{:>{}}", rows_[r][i], w[i]);
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
      if (r == 0) out += rule + "\n";
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
  std::vector<size_t> seps_;
};

}  // namespace

std::string compact_shape(const std::vector<int64_t>& shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s.push_back('x');
    s.append(std::to_string(shape[i]));
  }
  return s.empty() ? "scalar" : s;
}

std::vector<int64_t> top_k(const float* values, int64_t n, int64_t k) {
  std::vector<int64_t> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  k = std::min(k, n);
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int64_t a, int64_t b) {
    if (ranks_above(values[a], values[b])) return true;
    if (ranks_above(values[b], values[a])) return false;
    return a < b;
  });
  idx.resize(static_cast<size_t>(k));
  return idx;
}

ErrorStats compute_error(const std::vector<float>& out, const std::vector<float>& ref, int64_t classes) {
  TESSEL_CHECK(out.size() == ref.size() && !out.empty(), "output has {} values, reference {}",
               out.size(), ref.size());
  ErrorStats e;
  for (size_t i = 0; i < out.size(); ++i) {
    e.non_finite += !std::isfinite(out[i]);
    e.non_finite += !std::isfinite(ref[i]);
  }
  double signal = 0, noise = 0;
  for (size_t i = 0; i < out.size() && e.non_finite == 0; ++i) {
    const double d = static_cast<double>(out[i]) - static_cast<double>(ref[i]);
    e.max_abs_error = std::max(e.max_abs_error, std::abs(d));
    signal += static_cast<double>(ref[i]) * ref[i];
    noise += d * d;
  }
  if (e.non_finite > 0) {
    e.max_abs_error = std::numeric_limits<double>::quiet_NaN();
    e.snr_db = std::numeric_limits<double>::quiet_NaN();
  } else if (noise > 0) {
    e.snr_db = 10.0 * std::log10(signal / noise);
  }
  if (classes > 0 && out.size() % static_cast<size_t>(classes) == 0) {
    e.top1_agree = true;
    for (size_t row = 0; row < out.size() / classes; ++row) {
      const int64_t a = top_k(out.data() + row * classes, classes, 1)[0];
      const int64_t b = top_k(ref.data() + row * classes, classes, 1)[0];
      if (row == 0) e.reference_top1 = b;
      if (a != b) e.top1_agree = false;
    }
  }
  return e;
}

std::optional<double> gemm_utilisation(int64_t macs, uint64_t cycles, int macs_per_uop) {
  if (macs <= 0 || cycles == 0 || macs_per_uop <= 0) return std::nullopt;
  return static_cast<double>(macs) / (static_cast<double>(cycles) * macs_per_uop);
}

std::optional<double> speedup(double cpu_seconds, uint64_t cycles, double clock_mhz) {
  if (cycles == 0 || clock_mhz <= 0) return std::nullopt;
  return cpu_seconds / (static_cast<double>(cycles) / (clock_mhz * 1e6));
}

void compute_totals(RunReport& r) {
  Totals& t = r.totals;
  const double other = t.other_steps_us;
  t = Totals{};
  t.other_steps_us = other;
  for (const LayerRow& l : r.layers) {
    t.macs += l.macs;
    t.dram_bytes += l.dram_bytes;
    t.cpu_cycles += l.cpu_cycles;
    if (l.placement == "accel") {
      ++t.accel_layers;
      t.cycles += l.cycles;
      t.accel_macs += l.macs;
      t.accel_cpu_us += l.cpu_us;
    } else {
      ++t.cpu_layers;
      t.cpu_layers_us += l.cpu_us;
    }
  }
  t.gemm_utilisation = gemm_utilisation(t.accel_macs, t.cycles, r.macs_per_uop);
  t.speedup = speedup(t.accel_cpu_us * 1e-6, t.cycles, r.clock_mhz);
  t.accel_us = r.clock_mhz > 0 ? static_cast<double>(t.cycles) / r.clock_mhz : 0;
}

ordered_json to_json(const RunReport& r) {
  ordered_json j;
  j["tessel_report_version"] = 1;
  j["model"] = r.model;
  j["inputs"] = r.inputs;
  j["simulator"] = r.simulator;
  j["config"] = r.config_name;
  j["clock_mhz"] = r.clock_mhz;
  j["macs_per_uop"] = r.macs_per_uop;
  j["offload"] = r.offload;
  j["quantized_by_tessel"] = r.quantized_by_tessel;
  j["requant_mode"] = r.requant_mode.empty() ? ordered_json(nullptr) : ordered_json(r.requant_mode);
  j["calibration"] = r.calibration.empty() ? ordered_json(nullptr) : ordered_json(r.calibration);
  j["executable"] = r.executable;
  j["reference_model"] = r.has_reference() ? ordered_json(r.executable ? r.reference_model : r.model)
                                           : ordered_json(nullptr);
  j["compile_ms"] = r.executable ? ordered_json(nullptr) : ordered_json(r.compile_ms);
  const bool timed = r.simulator != "fsim";
  j["outputs_match_fsim"] = timed ? ordered_json(r.outputs_match_fsim) : ordered_json(nullptr);
  j["cpu_cycles_source"] = r.cpu_cycles_source;
  ordered_json outs = ordered_json::array();
  for (const OutputReport& o : r.outputs) {
    ordered_json jo;
    jo["name"] = o.name;
    jo["shape"] = o.shape;
    jo["classifier"] = o.classifier;
    ordered_json top = ordered_json::array();
    for (const TopEntry& e : o.top) {
      ordered_json je;
      je["index"] = e.index;
      je["value"] = e.value;
      je["label"] = e.label.empty() ? ordered_json(nullptr) : ordered_json(e.label);
      top.push_back(je);
    }
    jo["top"] = top;
    if (r.has_reference()) {
      ordered_json err;
      err["max_abs_error"] = opt(o.error.max_abs_error);
      err["snr_db"] = opt(o.error.snr_db);
      err["non_finite"] = o.error.non_finite;
      err["top1_agree"] = o.classifier ? ordered_json(o.error.top1_agree) : ordered_json(nullptr);
      err["reference_top1"] = o.classifier ? ordered_json(o.error.reference_top1) : ordered_json(nullptr);
      jo["error_vs_reference"] = err;
    } else {
      jo["error_vs_reference"] = nullptr;
    }
    outs.push_back(jo);
  }
  j["outputs"] = outs;
  ordered_json layers = ordered_json::array();
  for (const LayerRow& l : r.layers) {
    ordered_json jl;
    jl["step"] = l.step;
    jl["name"] = l.name;
    jl["op"] = l.op;
    jl["in_shape"] = l.in_shape;
    jl["out_shape"] = l.out_shape;
    jl["placement"] = l.placement;
    jl["placement_reason"] = l.placement_reason.empty() ? ordered_json(nullptr) : ordered_json(l.placement_reason);
    jl["cycles"] = timed && l.placement == "accel" ? ordered_json(l.cycles) : ordered_json(nullptr);
    jl["macs"] = l.macs;
    jl["gemm_uops"] = l.gemm_uops;
    jl["gemm_utilisation"] = opt(l.gemm_utilisation);
    jl["dram_bytes"] = l.dram_bytes;
    jl["cpu_us"] = l.cpu_us;
    jl["cpu_cycles"] = l.cpu_cycles;
    jl["speedup"] = opt(l.speedup);
    layers.push_back(jl);
  }
  j["layers"] = layers;
  const Totals& t = r.totals;
  ordered_json jt;
  jt["accel_layers"] = t.accel_layers;
  jt["cpu_layers"] = t.cpu_layers;
  jt["cycles"] = timed ? ordered_json(t.cycles) : ordered_json(nullptr);
  jt["accel_us"] = timed ? ordered_json(t.accel_us) : ordered_json(nullptr);
  jt["macs"] = t.macs;
  jt["accel_macs"] = t.accel_macs;
  jt["gemm_utilisation"] = opt(t.gemm_utilisation);
  jt["dram_bytes"] = t.dram_bytes;
  jt["accel_cpu_us"] = t.accel_cpu_us;
  jt["cpu_layers_us"] = t.cpu_layers_us;
  jt["other_steps_us"] = t.other_steps_us;
  jt["cpu_cycles"] = t.cpu_cycles;
  jt["speedup"] = opt(t.speedup);
  j["totals"] = jt;
  ordered_json js;
  js["wall_seconds"] = r.sim.wall_seconds;
  js["cycles"] = timed ? ordered_json(r.sim.cycles) : ordered_json(nullptr);
  js["insns"] = r.sim.insns;
  js["cycles_per_second"] = opt(r.sim.cycles_per_second);
  js["insns_per_second"] = opt(r.sim.insns_per_second);
  j["sim_speed"] = js;
  return j;
}

std::string render_text(const RunReport& r) {
  std::string s;
  s += fmt::format("model      {}\n", shown(r.model));
  for (const std::string& in : r.inputs) s += fmt::format("input      {}\n", shown(in));
  s += fmt::format("simulator  {}  (config {}, {} MHz, {} MACs/uop{})\n", shown(r.simulator), shown(r.config_name),
                   r.clock_mhz, r.macs_per_uop, r.offload ? "" : ", offload disabled");
  if (r.quantized_by_tessel) s += fmt::format("quantised  by tessel, calibrated on {}\n", shown(r.calibration));
  s += fmt::format("requant    {}\n", r.requant_mode == "exact"         ? "exact (every output round(acc * M))"
                                     : r.requant_mode == "approximate" ? "approximate (one 32-bit multiplier per channel)"
                                                                       : "not recorded (an executable of an older tessel)");
  if (r.executable) {
    s += r.reference_model.empty()
             ? std::string("compiled   ahead of time (executable); no float reference comparison (give "
                           "--reference MODEL.onnx for one)\n")
             : fmt::format("compiled   ahead of time (executable); float reference {}\n", shown(r.reference_model));
  } else {
    s += fmt::format("compiled   in {} ms\n", report_number(r.compile_ms, 1));
  }
  for (const OutputReport& o : r.outputs) {
    s += fmt::format("\noutput {} {}\n", support::quote(o.name), compact_shape(o.shape));
    if (o.classifier) {
      s += fmt::format("  top-{}:\n", o.top.size());
      for (size_t i = 0; i < o.top.size(); ++i) {
        const TopEntry& e = o.top[i];
        s += fmt::format("    {}. class {:>4}  {:>12.6g}{}{}\n", i + 1, e.index, e.value, e.label.empty() ? "" : "  ",
                         shown(e.label));
      }
    }
    if (!r.has_reference()) continue;
    if (o.error.non_finite > 0) {
      s += fmt::format("  vs float reference (CPU): max abs error nan, SNR nan ({} NaN/Inf values in the "
                       "output and reference)\n",
                       o.error.non_finite);
      continue;
    }
    s += fmt::format("  vs float reference (CPU): max abs error {:.6g}, SNR {}, top-1 {}\n",
                     o.error.max_abs_error, o.error.snr_db ? fmt::format("{:.2f} dB", *o.error.snr_db)
                                                           : std::string("inf (identical)"),
                     o.classifier ? (o.error.top1_agree ? fmt::format("agrees (class {})",
                                                                      o.error.reference_top1)
                                                        : fmt::format("DIFFERS (reference class {})",
                                                                      o.error.reference_top1))
                                  : std::string("n/a"));
  }
  if (r.simulator != "fsim") {
    s += fmt::format("  outputs identical to the fsim run: {}\n", r.outputs_match_fsim ? "yes" : "NO");
  }

  s += fmt::format("\nper-layer ({}: accelerator at {} MHz; CPU: the same layer's kernel on this machine, "
                   "cycles = {})\n",
                   r.simulator, r.clock_mhz, r.cpu_cycles_source.empty() ? "none" : r.cpu_cycles_source);
  Table t({"#", "layer", "op", "in -> out", "place", "cycles", "MACs", "GEMM util", "DRAM bytes",
           "CPU us", "CPU cycles", "speedup"});
  for (const LayerRow& l : r.layers) {
    const bool acc = l.placement == "accel";
    t.add({std::to_string(l.step), clip_name(shown(l.name), 32), shown(l.op),
           compact_shape(l.in_shape) + " -> " + compact_shape(l.out_shape), l.placement,
           acc && l.cycles ? grouped(l.cycles) : "-", grouped(static_cast<uint64_t>(l.macs)),
           l.gemm_utilisation ? fmt::format("{:.1f}%", *l.gemm_utilisation * 100) : "-",
           acc ? grouped(l.dram_bytes) : "-", report_number(l.cpu_us, 1), grouped(l.cpu_cycles),
           fmt_opt(l.speedup, ".2f")});
  }
  const Totals& tt = r.totals;
  t.separator();
  t.add({"", fmt::format("total ({} accel, {} cpu)", tt.accel_layers, tt.cpu_layers), "", "", "",
         tt.cycles ? grouped(tt.cycles) : "-", grouped(static_cast<uint64_t>(tt.macs)),
         tt.gemm_utilisation ? fmt::format("{:.1f}%", *tt.gemm_utilisation * 100) : "-",
         grouped(tt.dram_bytes), report_number(tt.accel_cpu_us + tt.cpu_layers_us, 1),
         grouped(tt.cpu_cycles), fmt_opt(tt.speedup, ".2f")});
  s += t.render();
  for (const LayerRow& l : r.layers) {
    if (!l.placement_reason.empty()) {
      s += fmt::format("on the CPU: #{} {} ({}): {}\n", l.step, shown(l.name), shown(l.op), l.placement_reason);
    }
  }
  s += fmt::format("other CPU steps (quantize, pack, reshape, ...): {} us\n", report_number(tt.other_steps_us, 1));
  if (tt.cycles) {
    s += fmt::format("offloaded layers: {} cycles = {} us at {} MHz vs {} us on the CPU "
                     "(speedup {})\n",
                     grouped(tt.cycles), report_number(tt.accel_us, 1), r.clock_mhz,
                     report_number(tt.accel_cpu_us, 1), report_number(tt.speedup.value_or(0), 2));
  }
  if (r.sim.insns == 0) {
    s += "simulator: no accelerator work in this run\n";
    return s;
  }
  s += fmt::format("simulator: {} instructions in {} ms", grouped(r.sim.insns), report_number(r.sim.wall_seconds * 1e3, 3));
  if (r.sim.cycles_per_second) {
    s += fmt::format(", {} simulated cycles/s", grouped(static_cast<uint64_t>(*r.sim.cycles_per_second)));
  }
  if (r.sim.insns_per_second) {
    s += fmt::format(", {} instructions/s", grouped(static_cast<uint64_t>(*r.sim.insns_per_second)));
  }
  s += "\n";
  return s;
}

std::string module_stats_table(const std::string& sim, const sim::RunStats& st) {
  const bool rtl = sim == "rtl";
  const auto cell = [&](bool derived, uint64_t v) { return derived ? std::to_string(v) : std::string("-"); };
  std::string s = fmt::format("{:<8} {:>8} {:>12} {:>12} {:>12} {:>12}\n", "module", "insns", "busy", "stall_token",
                              "stall_queue", "stall_dram");
  const std::pair<const char*, const sim::ModuleStats*> mods[] = {
      {"fetch", &st.fetch}, {"load", &st.load}, {"compute", &st.compute}, {"store", &st.store}};
  for (const auto& [name, m] : mods) {
    s += fmt::format("{:<8} {:>8} {:>12} {:>12} {:>12} {:>12}\n", name, m->insns, cell(!rtl, m->busy_cycles),
                     cell(!rtl, m->stall_token_cycles), cell(!rtl, m->stall_queue_cycles),
                     cell(!rtl, m->stall_dram_cycles));
  }
  if (rtl) {
    s += "(rtl derives the instructions per module (fetch: dispatches) only; busy and stall cycles ('-') "
         "are the cycle model's: use --sim cycle)\n";
  }
  return s;
}

}  // namespace tessel::tools
