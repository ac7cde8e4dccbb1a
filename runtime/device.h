// The runtime's device API: one interface over every accelerator model (fsim, cycle; rtl and FPGA
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
class Device {
 public:
  /// kind: "fsim" or "cycle". dram_bytes: size of the device DRAM. Throws UserError on an
  /// unknown kind or an invalid config.
  static std::unique_ptr<Device> create(const std::string& kind, const isa::HwConfig& cfg,
                                        uint64_t dram_bytes = uint64_t{1} << 30);
  virtual ~Device() = default;
  virtual std::string kind() const = 0;
  virtual const isa::HwConfig& config() const = 0;

  /// Allocates `bytes` of device DRAM aligned to `align` bytes (a power of two). First-fit,
  /// deterministic. Throws UserError("device dram exhausted: ...") when it does not fit.
  virtual DeviceAddr alloc(uint64_t bytes, uint64_t align = isa::kImageAlign) = 0;
  /// Frees an allocation made by alloc(); throws UserError for an unknown address.
  virtual void free(DeviceAddr addr) = 0;
  /// Host -> device and device -> host copies; throw UserError when out of range.
  virtual void copy_to_device(DeviceAddr dst, const void* src, uint64_t bytes) = 0;
  virtual void copy_from_device(void* dst, DeviceAddr src, uint64_t bytes) = 0;

  /// Allocates the Program's image and stream, writes the image (constants and zeroed inputs/
  /// outputs) and the relocated, encoded instructions. Free with unload().
  virtual LoadedProgram load(const isa::Program& program) = 0;
  virtual void unload(const LoadedProgram& loaded) = 0;

  /// Runs a loaded Program to FINISH (the simulators are synchronous: submit runs it, wait()
  /// returns its statistics). Throws sim::SimError on illegal streams or deadlocks; the device
  /// stays usable afterwards.
  virtual void submit(const LoadedProgram& loaded) = 0;
  /// Statistics of the last submitted run (cycles = 0 on fsim).
  virtual sim::RunStats wait() = 0;
  /// Counters accumulated over every run since creation.
  virtual sim::Counters total_counters() const = 0;
};

}  // namespace tessel::runtime
