// The simulator-backed devices: one Dram and one sim::Simulator per device, a first-fit DRAM
// allocator, and Program loading through sim/common/program_loader.
#include "runtime/device.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "isa/asm.h"
#include "sim/common/program_loader.h"
#ifdef TESSEL_HAVE_RTL_SIM
#include "sim/rtl/rtl_sim.h"
#endif
#include "support/error.h"
#include "support/text.h"

namespace tessel::runtime {

uint64_t dram_bytes_for(const std::vector<isa::Program>& programs) {
  const auto align_up = [](uint64_t v, uint64_t a) { return (v + a - 1) / a * a; };
  uint64_t total = 64 * 1024;
  for (const isa::Program& p : programs) {
    total += align_up(p.image.size(), isa::kImageAlign) +
             align_up(p.insns.size() * 16, isa::kImageAlign);
  }
  return align_up(total, uint64_t{1} << 20);
}

DeviceAddr LoadedProgram::segment_addr(const isa::Program& p, const std::string& segment) const {
  return image_base + p.segment(segment).offset_bytes;
}

namespace {

constexpr uint64_t kInsnAlign = 64;  // instruction streams: 16-byte aligned at least

/// First-fit allocator over [0, size): free blocks keyed by start address (ordered, so the
/// search is deterministic), live allocations keyed by the address returned to the caller.
class FirstFitAllocator {
 public:
  explicit FirstFitAllocator(uint64_t size) : size_(size) {
    if (size > 0) free_[0] = size;
  }

  DeviceAddr alloc(uint64_t bytes, uint64_t align) {
    if (bytes == 0) throw_user_error("device alloc of 0 bytes; allocations must be at least 1 byte");
    if (align == 0 || (align & (align - 1)) != 0) {
      throw_user_error("device alloc alignment {} is not a power of two", align);
    }
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      const uint64_t start = it->first, len = it->second;
      const uint64_t aligned = (start + align - 1) / align * align;
      if (aligned < start || aligned - start > len || len - (aligned - start) < bytes) continue;
      const uint64_t end = aligned + bytes, block_end = start + len;
      free_.erase(it);
      if (aligned > start) free_[start] = aligned - start;
      if (block_end > end) free_[end] = block_end - end;
      live_[aligned] = bytes;
      used_ += bytes;
      return aligned;
    }
    uint64_t largest = 0;
    for (const auto& [s, l] : free_) largest = std::max(largest, l);
    throw_user_error(
        "device dram exhausted: cannot allocate {} bytes aligned to {} ({} of {} bytes in use, "
        "largest free block {} bytes)",
        bytes, align, used_, size_, largest);
  }

  void free(DeviceAddr addr) {
    auto it = live_.find(addr);
    if (it == live_.end()) {
      throw_user_error("device free of address {:#x}, which is not a live allocation", addr);
    }
    uint64_t start = addr, len = it->second;
    used_ -= len;
    live_.erase(it);
    // Coalesce with the following and the preceding free block.
    auto next = free_.lower_bound(start);
    if (next != free_.end() && next->first == start + len) {
      len += next->second;
      next = free_.erase(next);
    }
    if (next != free_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == start) {
        start = prev->first;
        len += prev->second;
        free_.erase(prev);
      }
    }
    free_[start] = len;
  }

  /// Throws unless [addr, addr+bytes) lies inside one live allocation.
  void check_inside(DeviceAddr addr, uint64_t bytes, const char* what) const {
    auto it = live_.upper_bound(addr);
    if (it != live_.begin()) {
      --it;
      const uint64_t s = it->first, e = it->first + it->second;
      if (addr >= s && addr <= e && bytes <= e - addr) return;
      throw_user_error("{} of bytes [{:#x}, {:#x}) runs outside the allocation [{:#x}, {:#x})",
                       what, addr, addr + bytes, s, e);
    }
    throw_user_error("{} of bytes [{:#x}, {:#x}) is not inside any allocation", what, addr,
                     addr + bytes);
  }

 private:
  uint64_t size_ = 0, used_ = 0;
  std::map<uint64_t, uint64_t> free_;  // start -> length
  std::map<uint64_t, uint64_t> live_;  // start -> length
};

class SimDevice final : public Device {
 public:
  SimDevice(std::string kind, const isa::HwConfig& cfg, uint64_t dram_bytes,
            std::unique_ptr<sim::Simulator> sim)
      : kind_(std::move(kind)), cfg_(cfg), dram_(dram_bytes), alloc_(dram_bytes),
        sim_(std::move(sim)) {}

  std::string kind() const override { return kind_; }
  const isa::HwConfig& config() const override { return cfg_; }

  DeviceAddr alloc(uint64_t bytes, uint64_t align) override { return alloc_.alloc(bytes, align); }
  void free(DeviceAddr addr) override {
    for (const auto& [insn, img] : loaded_) {
      if (addr == insn || addr == img) {
        throw_user_error("device free of address {:#x}, which belongs to a loaded program; use "
                         "unload()",
                         addr);
      }
    }
    alloc_.free(addr);
  }

  void copy_to_device(DeviceAddr dst, const void* src, uint64_t bytes) override {
    if (bytes == 0) return;
    alloc_.check_inside(dst, bytes, "copy to device");
    dram_.write(dst, src, bytes);
  }
  void copy_from_device(void* dst, DeviceAddr src, uint64_t bytes) override {
    if (bytes == 0) return;
    alloc_.check_inside(src, bytes, "copy from device");
    dram_.read(src, dst, bytes);
  }

  LoadedProgram load(const isa::Program& program) override {
    // Run-time settings (DRAM latency, clock, queue depths) are the device's; the hardware
    // keys must match (isa::HwConfig::same_hardware).
    if (!program.config.same_hardware(cfg_)) {
      throw_user_error("program {} was built for config {}, but the {} device has config {} ({})",
                       support::quote(program.name), program.config.label(), kind_, cfg_.label(),
                       isa::config_differences(program.config, cfg_.with_run_settings(program.config)));
    }
    if (program.insns.empty()) {
      throw_user_error("program {} has no instructions (it must end with FINISH)", support::quote(program.name));
    }
    if (program.image.empty()) {
      throw_user_error("program {} has an empty DRAM image", support::quote(program.name));
    }
    const DeviceAddr image = alloc_.alloc(program.image.size(), isa::kImageAlign);
    DeviceAddr insn = 0;
    bool have_insn = false;
    sim::LoadedProgram lp;
    try {
      insn = alloc_.alloc(uint64_t(program.insns.size()) * 16, kInsnAlign);
      have_insn = true;
      lp = sim::load_program(dram_, program, image, insn);
    } catch (...) {
      if (have_insn) alloc_.free(insn);
      alloc_.free(image);
      throw;
    }
    loaded_[insn] = image;
    return LoadedProgram{image, insn, lp.insn_count};
  }

  void unload(const LoadedProgram& loaded) override {
    auto it = loaded_.find(loaded.insn_base);
    if (it == loaded_.end() || it->second != loaded.image_base) {
      throw_user_error("unload of a program at image {:#x} / stream {:#x} that is not loaded",
                       loaded.image_base, loaded.insn_base);
    }
    loaded_.erase(it);
    alloc_.free(loaded.insn_base);
    alloc_.free(loaded.image_base);
  }

  void submit(const LoadedProgram& loaded) override {
    auto it = loaded_.find(loaded.insn_base);
    if (it == loaded_.end() || it->second != loaded.image_base) {
      throw_user_error("submit of a program at image {:#x} / stream {:#x} that is not loaded",
                       loaded.image_base, loaded.insn_base);
    }
    has_result_ = false;
    last_ = sim_->run(dram_, loaded.insn_base, loaded.insn_count);
    add(total_, last_.counters);
    has_result_ = true;
  }

  sim::RunStats wait() override {
    if (!has_result_) throw_user_error("device wait() without a completed submit()");
    return last_;
  }

  sim::Counters total_counters() const override { return total_; }

 private:
  static void add(sim::Counters& t, const sim::Counters& c) {
    t.inp_load_nbytes += c.inp_load_nbytes;
    t.wgt_load_nbytes += c.wgt_load_nbytes;
    t.acc_load_nbytes += c.acc_load_nbytes;
    t.uop_load_nbytes += c.uop_load_nbytes;
    t.out_store_nbytes += c.out_store_nbytes;
    t.gemm_counter += c.gemm_counter;
    t.alu_counter += c.alu_counter;
    t.insn_count += c.insn_count;
  }

  std::string kind_;
  isa::HwConfig cfg_;
  sim::Dram dram_;
  FirstFitAllocator alloc_;
  std::unique_ptr<sim::Simulator> sim_;
  std::map<DeviceAddr, DeviceAddr> loaded_;  // insn_base -> image_base
  sim::RunStats last_;
  bool has_result_ = false;
  sim::Counters total_;
};

}  // namespace

std::unique_ptr<Device> Device::create(const std::string& kind, const isa::HwConfig& cfg,
                                       uint64_t dram_bytes) {
  cfg.validate();
  if (dram_bytes < isa::kImageAlign) {
    throw_user_error("device dram size {} bytes is below the minimum of {} bytes", dram_bytes,
                     isa::kImageAlign);
  }
  std::unique_ptr<sim::Simulator> sim;
  if (kind == "fsim") {
    sim = sim::make_fsim(cfg);
  } else if (kind == "cycle") {
#ifdef TESSEL_HAVE_CYCLE_SIM
    sim = sim::make_cycle_sim(cfg);
#else
    throw_user_error("device kind 'cycle' is not available: this build has no cycle simulator "
                     "(tessel_sim_cycle)");
#endif
  } else if (kind == "rtl") {
#ifdef TESSEL_HAVE_RTL_SIM
    sim = sim::make_rtl_sim(cfg);
#else
    throw_user_error("device kind 'rtl' is not available: this build has no RTL simulator "
                     "(tessel_sim_rtl needs Verilator; configure with TESSEL_WITH_RTL=ON)");
#endif
  } else {
    throw_user_error("unknown device kind {}; valid kinds: {}", support::quote(kind), fmt::join(kinds(), ", "));
  }
  return std::make_unique<SimDevice>(kind, cfg, dram_bytes, std::move(sim));
}

std::unique_ptr<Device> Device::create(std::unique_ptr<sim::Simulator> simulator,
                                       const isa::HwConfig& cfg, uint64_t dram_bytes) {
  cfg.validate();
  if (!simulator) throw_internal_error("Device::create: no simulator given");
  if (dram_bytes < isa::kImageAlign) {
    throw_user_error("device dram size {} bytes is below the minimum of {} bytes", dram_bytes,
                     isa::kImageAlign);
  }
  const std::string kind = simulator->name();
  return std::make_unique<SimDevice>(kind, cfg, dram_bytes, std::move(simulator));
}

void Device::check_kind(const std::string& kind, const isa::HwConfig& cfg) {
  cfg.validate();
  const std::vector<std::string> k = kinds();
  if (std::find(k.begin(), k.end(), kind) == k.end()) {
    if (kind == "cycle" || kind == "rtl") {
      throw_user_error("device kind {} is not available in this build; valid kinds: {}", support::quote(kind),
                       fmt::join(k, ", "));
    }
    throw_user_error("unknown device kind {}; valid kinds: {}", support::quote(kind), fmt::join(k, ", "));
  }
#ifdef TESSEL_HAVE_RTL_SIM
  if (kind == "rtl" && !sim::rtl_supports(cfg)) sim::make_rtl_sim(cfg);  // throws the reason
#endif
}

std::vector<std::string> Device::kinds() {
  std::vector<std::string> k;
#ifdef TESSEL_HAVE_CYCLE_SIM
  k.push_back("cycle");
#endif
  k.push_back("fsim");
#ifdef TESSEL_HAVE_RTL_SIM
  k.push_back("rtl");
#endif
  return k;
}

}  // namespace tessel::runtime
