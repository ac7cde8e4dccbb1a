#include "compiler/target/target.h"

#include <fmt/format.h>

#include <charconv>
#include <optional>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "support/error.h"

namespace tessel::compiler::target {

namespace {

struct FeatureName {
  const char* name;
  bool CpuFeatures::*field;
};
constexpr FeatureName kFeatures[] = {
    {"sse4_2", &CpuFeatures::sse4_2},     {"avx2", &CpuFeatures::avx2},
    {"fma", &CpuFeatures::fma},           {"avx512f", &CpuFeatures::avx512f},
    {"avx512bw", &CpuFeatures::avx512bw}, {"avx512vl", &CpuFeatures::avx512vl},
    {"avx512_vnni", &CpuFeatures::avx512_vnni}, {"avx_vnni", &CpuFeatures::avx_vnni},
    {"amx_tile", &CpuFeatures::amx_tile}, {"amx_int8", &CpuFeatures::amx_int8},
};

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (!s.empty()) {
    size_t p = s.find(sep);
    std::string_view part = s.substr(0, p);
    if (!part.empty()) out.push_back(part);
    if (p == std::string_view::npos) break;
    s.remove_prefix(p + 1);
  }
  return out;
}

#if defined(__x86_64__) || defined(__i386__)
uint64_t read_xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}
#endif

}  // namespace

CpuFeatures CpuFeatures::detect() {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  f.sse4_2 = (c >> 20) & 1;
  const bool osxsave = (c >> 27) & 1;
  const bool has_fma = (c >> 12) & 1;
  const uint64_t xcr0 = osxsave ? read_xcr0() : 0;
  const bool avx_state = (xcr0 & 0x6) == 0x6;          // XMM and YMM
  const bool avx512_state = avx_state && (xcr0 & 0xe0) == 0xe0;  // opmask, ZMM_Hi256, Hi16_ZMM
  const bool amx_state = (xcr0 & 0x60000) == 0x60000;  // XTILECFG, XTILEDATA
  unsigned max_leaf = __get_cpuid_max(0, nullptr);
  if (max_leaf < 7) return f;
  __cpuid_count(7, 0, a, b, c, d);
  f.avx2 = avx_state && ((b >> 5) & 1);
  f.fma = avx_state && has_fma;
  f.avx512f = avx512_state && ((b >> 16) & 1);
  f.avx512bw = avx512_state && ((b >> 30) & 1);
  f.avx512vl = avx512_state && ((b >> 31) & 1);
  f.avx512_vnni = avx512_state && ((c >> 11) & 1);
  f.amx_tile = amx_state && ((d >> 24) & 1);
  f.amx_int8 = amx_state && ((d >> 25) & 1);
  const unsigned subleaves = a;
  if (subleaves >= 1) {
    __cpuid_count(7, 1, a, b, c, d);
    f.avx_vnni = avx_state && ((a >> 4) & 1);
  }
#endif
  return f;
}

CpuFeatures CpuFeatures::parse(std::string_view list) {
  CpuFeatures f;
  for (std::string_view name : split(list, ',')) {
    bool found = false;
    for (const FeatureName& fn : kFeatures) {
      if (name == fn.name) {
        f.*(fn.field) = true;
        found = true;
      }
    }
    if (!found) {
      std::vector<std::string> names;
      for (const FeatureName& fn : kFeatures) names.emplace_back(fn.name);
      throw_user_error("unknown cpu feature '{}' (known: {})", name, fmt::join(names, ", "));
    }
  }
  return f;
}

std::string CpuFeatures::str() const {
  std::string s;
  for (const FeatureName& fn : kFeatures) {
    if (this->*(fn.field)) s += (s.empty() ? "" : ",") + std::string(fn.name);
  }
  return s;
}

int CpuFeatures::vector_bits() const {
  if (avx512f && avx512bw) return 512;
  if (avx2) return 256;
  return 128;
}

std::string_view to_string(TargetKind k) {
  switch (k) {
    case TargetKind::kAccel: return "accel";
    case TargetKind::kCpu: return "cpu";
    case TargetKind::kGpu: return "gpu";
  }
  return "?";
}

Target Target::make_accel(const isa::HwConfig& cfg) {
  cfg.validate();
  Target t;
  t.kind = TargetKind::kAccel;
  t.accel = cfg;
  return t;
}

Target Target::host_cpu() {
  Target t;
  t.kind = TargetKind::kCpu;
  t.cpu = CpuFeatures::detect();
  return t;
}

Target Target::parse(std::string_view text) {
  std::vector<std::string_view> words = split(text, ' ');
  if (words.empty()) throw_user_error("empty target; expected accel, cpu or gpu");
  auto option = [&](std::string_view w, std::string_view key) -> std::optional<std::string_view> {
    if (w.substr(0, key.size()) == key && w.size() > key.size() && w[key.size()] == '=') return w.substr(key.size() + 1);
    return std::nullopt;
  };
  auto bad = [&](std::string_view w) -> Target {
    throw_user_error("target '{}': unknown option '{}'", text, w);
  };
  Target t;
  if (words[0] == "accel") {
    if (words.size() > 1) return bad(words[1]);
    return make_accel(isa::HwConfig{});
  }
  if (words[0] == "cpu") {
    t.kind = TargetKind::kCpu;
    t.cpu = CpuFeatures::detect();
    for (size_t i = 1; i < words.size(); ++i) {
      if (auto v = option(words[i], "-mattr")) t.cpu = CpuFeatures::parse(*v);
      else return bad(words[i]);
    }
    return t;
  }
  if (words[0] == "gpu") {
    t.kind = TargetKind::kGpu;
    for (size_t i = 1; i < words.size(); ++i) {
      if (auto v = option(words[i], "-api")) {
        if (*v == "opencl") t.gpu.api = GpuArch::Api::kOpenCl;
        else if (*v == "cuda") t.gpu.api = GpuArch::Api::kCuda;
        else throw_user_error("target '{}': -api must be opencl or cuda, not '{}'", text, *v);
      } else if (auto s = option(words[i], "-sm")) {
        int sm = 0;
        auto [p, ec] = std::from_chars(s->data(), s->data() + s->size(), sm);
        if (ec != std::errc() || p != s->data() + s->size() || sm < 30 || sm > 200) {
          throw_user_error("target '{}': -sm must be a compute capability from 30 to 200, not '{}'", text, *s);
        }
        t.gpu.sm = sm;
      } else {
        return bad(words[i]);
      }
    }
    if (t.gpu.api == GpuArch::Api::kCuda && t.gpu.sm == 0) t.gpu.sm = 70;
    if (t.gpu.api == GpuArch::Api::kOpenCl && t.gpu.sm != 0) {
      throw_user_error("target '{}': -sm applies to -api=cuda only", text);
    }
    return t;
  }
  throw_user_error("unknown target kind '{}' in '{}'; expected accel, cpu or gpu", words[0], text);
}

std::string Target::str() const {
  switch (kind) {
    case TargetKind::kAccel: return "accel " + accel.label();
    case TargetKind::kCpu: return "cpu -mattr=" + cpu.str();
    case TargetKind::kGpu:
      return gpu.api == GpuArch::Api::kCuda ? fmt::format("gpu -api=cuda -sm={}", gpu.sm) : "gpu -api=opencl";
  }
  return "?";
}

}  // namespace tessel::compiler::target
