// What a backend is (../shared/DESIGN.md, "Inside compiler/": target/). A Target names the kind
// of device code is generated for and carries what the schedules and passes need to know about
// it: the accelerator's hardware configuration (isa::HwConfig), the CPU's instruction-set
// features (detected on the host at run time, or given), or the GPU's programming model and
// limits. Text forms, as on the command line: "accel", "cpu", "cpu -mattr=avx2,fma",
// "gpu -api=opencl", "gpu -api=cuda -sm=80".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "isa/config.h"

namespace tessel::compiler::target {

/// x86 features that change code generation. detect() reads CPUID and XGETBV (Intel SDM vol. 2A,
/// CPUID leaf 1 ECX, leaf 7 subleaf 0 EBX/ECX/EDX, leaf 7 subleaf 1 EAX; XCR0 bits 1-2 for
/// AVX state, 5-7 for AVX-512 state, 17-18 for AMX tile state): a feature counts only when the
/// CPU has it and the OS saves its register state.
struct CpuFeatures {
  bool sse4_2 = false;
  bool avx2 = false;
  bool fma = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512_vnni = false;  ///< VPDPBUSD on 512/256/128-bit vectors (EVEX)
  bool avx_vnni = false;     ///< VPDPBUSD on 256/128-bit vectors (VEX)
  bool amx_tile = false;
  bool amx_int8 = false;

  /// The host's features.
  static CpuFeatures detect();
  /// Features from a comma-separated list of the names str() prints ("avx2,fma,avx512_vnni");
  /// "" gives none. UserError naming an unknown feature.
  static CpuFeatures parse(std::string_view list);
  /// Comma-separated names of the features present, in declaration order ("" when none).
  std::string str() const;
  /// The widest integer vector the features allow, in bits: 512 (AVX-512 F+BW), 256 (AVX2), 128.
  int vector_bits() const;
  bool operator==(const CpuFeatures&) const = default;
};

/// A GPU programming model and the limits its schedules must respect.
struct GpuArch {
  enum class Api : uint8_t { kOpenCl, kCuda };
  Api api = Api::kOpenCl;
  int sm = 0;                          ///< CUDA compute capability * 10 (80 = sm_80); 0 for OpenCL
  int max_threads_per_block = 1024;    ///< threads (work-items) per block (work-group)
  int64_t shared_memory_bytes = 49152; ///< shared (local) memory per block
  int warp_size = 32;                  ///< threads per warp (sub-group)
  bool operator==(const GpuArch&) const = default;
};

enum class TargetKind : uint8_t { kAccel, kCpu, kGpu };
std::string_view to_string(TargetKind k);

/// A code-generation target.
struct Target {
  TargetKind kind = TargetKind::kAccel;
  isa::HwConfig accel;  ///< kAccel: the accelerator's configuration
  CpuFeatures cpu;      ///< kCpu: the features code may use
  GpuArch gpu;          ///< kGpu

  /// The accelerator with configuration `cfg` (validated: UserError when impossible).
  static Target make_accel(const isa::HwConfig& cfg);
  /// The CPU with the host's features.
  static Target host_cpu();
  /// Parses the text forms of the file comment. "cpu" alone means the host's features;
  /// "accel" the default configuration. UserError naming the text and the bad option otherwise.
  static Target parse(std::string_view text);
  /// The text form: "accel <config label>", "cpu -mattr=<features>", "gpu -api=cuda -sm=80".
  std::string str() const;
};

}  // namespace tessel::compiler::target
