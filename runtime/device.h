// The runtime's device API: one interface over every accelerator model (fsim, cycle, rtl; FPGA
// later). Allocate device DRAM, copy to and from it, submit a Program, wait, read counters.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "isa/config.h"
#include "isa/program.h"
#include "sim/common/simulator.h"

namespace tessel::runtime {

/// A device DRAM address in bytes.
using DeviceAddr = uint64_t;

/// A Program placed in device DRAM: its image at `image_base`, its relocated, encoded instruction
/// stream at `insn_base` (`insn_count` instructions).
struct LoadedProgram {
  DeviceAddr image_base = 0;
  DeviceAddr insn_base = 0;
  uint32_t insn_count = 0;
  /// Device address of a named segment (throws UserError if the Program has no such segment).
  DeviceAddr segment_addr(const isa::Program& p, const std::string& segment) const;
};

/// One accelerator device. Not thread-safe; one submission runs at a time.
/// Device DRAM size (bytes) that Device::create gives when none is asked for: 1 GiB.
inline constexpr uint64_t kDefaultDeviceDramBytes = uint64_t{1} << 30;

/// Device DRAM (bytes) that holds every Program of `programs` loaded at once, as Device::load
/// places them: each image and each instruction stream (16 bytes per instruction) rounded up to
/// isa::kImageAlign, plus 64 KiB, rounded up to 1 MiB. For sizing a Device to its work.
uint64_t dram_bytes_for(const std::vector<isa::Program>& programs);

class Device {
 public:
  /// kind: "fsim", "cycle" or "rtl" (the Verilated RTL, sim/rtl/rtl_sim.h; only for the
  /// configurations it was built for). dram_bytes: size of the device DRAM. Throws UserError on
  /// an unknown kind, a kind this build lacks, an invalid config, or (rtl) a config without a
  /// built RTL model.
  /// The device DRAM is a sim::Dram of `dram_bytes` bytes, zeroed lazily (only touched pages
  /// cost resident memory).
  static std::unique_ptr<Device> create(const std::string& kind, const isa::HwConfig& cfg,
                                        uint64_t dram_bytes = kDefaultDeviceDramBytes);
  /// Throws the UserError create(kind, cfg) would throw for the kind and configuration (unknown
  /// kind, kind not in this build, invalid config, rtl without a model for `cfg`) without
  /// creating anything, so tools can check before long work (compiling a model).
  static void check_kind(const std::string& kind, const isa::HwConfig& cfg);
  /// A Device around a simulator the caller configured (e.g. sim::make_rtl_sim with a
  /// waveform, sim::make_cycle_sim with a Perfetto trace or a timeline); its kind is
  /// simulator->name(). `simulator` must model `cfg`. DRAM and errors as the create() above.
  static std::unique_ptr<Device> create(std::unique_ptr<sim::Simulator> simulator,
                                        const isa::HwConfig& cfg,
                                        uint64_t dram_bytes = kDefaultDeviceDramBytes);
  /// The kinds create() accepts in this build, sorted ("cycle" only when tessel_sim_cycle is
  /// built, "rtl" only when tessel_sim_rtl is).
  static std::vector<std::string> kinds();
  virtual ~Device() = default;
  virtual std::string kind() const = 0;
  virtual const isa::HwConfig& config() const = 0;

  /// Allocates `bytes` (>= 1) of device DRAM aligned to `align` bytes (a power of two).
  /// First-fit over free blocks in address order, so the same sequence of calls gives the same
  /// addresses. Throws UserError("device dram exhausted: ...") naming the request, the bytes in
  /// use and the largest free block when it does not fit, and UserError for 0 bytes or an
  /// alignment that is not a power of two.
  virtual DeviceAddr alloc(uint64_t bytes, uint64_t align = isa::kImageAlign) = 0;
  /// Frees an allocation made by alloc(); throws UserError for an unknown address.
  virtual void free(DeviceAddr addr) = 0;
  /// Host -> device and device -> host copies of `bytes` bytes; the device range must lie inside
  /// one live allocation (or a loaded Program's image/stream), else UserError naming the range.
  virtual void copy_to_device(DeviceAddr dst, const void* src, uint64_t bytes) = 0;
  virtual void copy_from_device(void* dst, DeviceAddr src, uint64_t bytes) = 0;

  /// Allocates the Program's image (aligned to isa::kImageAlign) and stream (16 bytes per
  /// instruction), writes the image (constants and zeroed inputs/outputs) and the relocated,
  /// encoded instructions (sim/common/program_loader.h). Free with unload(). The Program's config
  /// must describe the device's hardware (isa::HwConfig::same_hardware); its run-time settings
  /// may differ, and runs use the device's (DRAM_LATENCY, CLOCK_MHZ, queue depths). Throws
  /// UserError when a hardware key differs (the message names the keys, e.g. "LOG_BUS_WIDTH 6 vs
  /// 7"), the Program has no instructions or image, DRAM is exhausted, or a relocated field
  /// overflows (nothing stays allocated then).
  virtual LoadedProgram load(const isa::Program& program) = 0;
  /// Frees a loaded Program; UserError if it is not loaded on this device.
  virtual void unload(const LoadedProgram& loaded) = 0;

  /// Runs a loaded Program to FINISH (the simulators are synchronous: submit runs it, wait()
  /// returns its statistics). Throws sim::SimError on illegal streams or deadlocks; the device
  /// stays usable afterwards.
  /// UserError when `loaded` is not a Program loaded on this device.
  virtual void submit(const LoadedProgram& loaded) = 0;
  /// Statistics of the last submitted run (cycles = 0 on fsim). UserError when no submit has
  /// completed since the last failed one (or ever).
  virtual sim::RunStats wait() = 0;
  /// Counters accumulated over every run since creation.
  virtual sim::Counters total_counters() const = 0;
};

}  // namespace tessel::runtime
