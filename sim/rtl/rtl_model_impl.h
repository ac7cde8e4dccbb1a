// Internal to sim/rtl: the clock loop of one Verilated tessel_top, as a template over the
// Verilator model class (one instantiation per configuration, in the generated
// model_<config>.cc). Port names follow docs/microarchitecture.md section 8.4. Not a public
// header: it includes Verilator's.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

#include <fmt/format.h>

#include "support/error.h"
#include "sim/rtl/rtl_model.h"
#include "verilated.h"
#if VM_TRACE
#include "verilated_fst_c.h"
#endif

namespace tessel::sim::rtl {

/// Copies `bytes` little-endian bytes into a Verilated signal of any width (CData..QData or
/// VlWide).
template <class T>
inline void put_bus(T& dst, const uint8_t* src, size_t bytes) {
  if constexpr (std::is_integral_v<T>) {
    T v = 0;
    std::memcpy(&v, src, bytes < sizeof(T) ? bytes : sizeof(T));
    dst = v;
  } else {
    std::memcpy(dst.data(), src, bytes);
  }
}

/// Copies a Verilated signal of any width into `bytes` little-endian bytes.
template <class T>
inline void get_bus(const T& src, uint8_t* dst, size_t bytes) {
  if constexpr (std::is_integral_v<T>) {
    std::memcpy(dst, &src, bytes < sizeof(T) ? bytes : sizeof(T));
  } else {
    std::memcpy(dst, src.data(), bytes);
  }
}

/// A Verilated tessel_top (class V) with its own VerilatedContext. `kBusBytes` is the
/// configuration's bus width in bytes.
template <class V, int kBusBytes>
class VerilatedTop final : public RtlModel {
 public:
  VerilatedTop() : ctx_(std::make_unique<VerilatedContext>()) {
#if VM_TRACE
    ctx_->traceEverOn(true);  // allows open_wave() later; no cost until a trace is attached
#endif
    ctx_->fatalOnError(false);
    top_ = std::make_unique<V>(ctx_.get(), "tessel_top");
    idle_inputs();
  }
  ~VerilatedTop() override {
    close_wave();
    top_->final();
  }

  void reset_and_launch(const LaunchArgs& a) override {
    V& m = *top_;
    idle_inputs();
    m.rst_n = 0;
    m.launch = 0;
    for (int i = 0; i < kResetCycles; ++i) clock();
    m.rst_n = 1;
    m.insn_base = a.insn_base;
    m.insn_count = a.insn_count;
    m.cmd_queue_limit = a.cmd_queue_limit;
    m.token_queue_limit = a.token_queue_limit;
    m.launch = 1;  // cycle -1
    clock();
    m.launch = 0;
  }

  bool run(Bench& b, uint64_t max_cycles) override {
    V& m = *top_;
    TopSignals o;
    o.axi.wdata = wbuf_;
    for (uint64_t n = 0; n < max_cycles; ++n) {
      const SlaveDrive& d = b.drive();
      m.rvalid = d.rvalid;
      if (d.rvalid) {
        m.rid = d.rid;
        m.rlast = d.rlast;
        put_bus(m.rdata, d.rdata, kBusBytes);
      }
      m.wready = d.wready;
      m.bvalid = d.bvalid;
      m.bid = d.bid;
      m.clk = 0;
      m.eval();
#if VM_TRACE
      // Waveform time 2t is cycle t with clk low, 2t + 1 after its rising edge.
      const uint64_t wave_time = 2 * b.cycle();
      const bool dump = fst_ && b.wave_now();
      if (dump) fst_->dump(wave_time);
#endif
      o.axi.arvalid = m.arvalid;
      if (m.arvalid) {
        o.axi.arid = m.arid;
        o.axi.araddr = m.araddr;
        o.axi.arlen = m.arlen;
        o.axi.arsize = m.arsize;
        o.axi.arburst = m.arburst;
      }
      o.axi.awvalid = m.awvalid;
      if (m.awvalid) {
        o.axi.awid = m.awid;
        o.axi.awaddr = m.awaddr;
        o.axi.awlen = m.awlen;
        o.axi.awsize = m.awsize;
        o.axi.awburst = m.awburst;
      }
      o.axi.wvalid = m.wvalid;
      if (m.wvalid) {
        o.axi.wlast = m.wlast;
        get_bus(m.wdata, wbuf_, kBusBytes);
        o.axi.wstrb = uint64_t(m.wstrb);
      }
      o.axi.rready = m.rready;
      o.axi.bready = m.bready;
      o.done = m.done;
      o.dbg = uint8_t((m.dbg_fetch_dispatch ? kDbgDispatch : 0) |
                      (m.dbg_load_start ? kDbgLoadStart : 0) |
                      (m.dbg_load_done ? kDbgLoadDone : 0) |
                      (m.dbg_compute_start ? kDbgComputeStart : 0) |
                      (m.dbg_compute_done ? kDbgComputeDone : 0) |
                      (m.dbg_store_start ? kDbgStoreStart : 0) |
                      (m.dbg_store_done ? kDbgStoreDone : 0));
      if (b.sample(o)) {
#if VM_TRACE
        if (dump) fst_->flush();
#endif
        return true;
      }
      m.clk = 1;
      m.eval();
#if VM_TRACE
      if (dump) fst_->dump(wave_time + 1);
#endif
    }
    return false;
  }

  void open_wave(const std::string& path) override {
#if VM_TRACE
    close_wave();
    fst_ = std::make_unique<VerilatedFstC>();
    top_->trace(fst_.get(), 99);
    fst_->open(path.c_str());
    if (!fst_->isOpen()) {
      fst_.reset();
      throw IoError(fmt::format("rtl: cannot open waveform file '{}' for writing", path));
    }
#else
    throw UserError(fmt::format(
        "rtl: cannot write waveform '{}': this build has no waveform support (configure with "
        "TESSEL_RTL_WAVES=ON)",
        path));
#endif
  }
  void close_wave() override {
#if VM_TRACE
    if (fst_) {
      fst_->close();
      fst_.reset();
    }
#endif
  }

 private:
  void idle_inputs() {
    V& m = *top_;
    m.arready = 1;
    m.awready = 1;
    m.rvalid = 0;
    m.rid = 0;
    m.rlast = 0;
    m.rresp = 0;
    m.wready = 0;
    m.bvalid = 0;
    m.bid = 0;
    m.bresp = 0;
  }
  /// One cycle outside a run (reset, launch): falling then rising edge.
  void clock() {
    V& m = *top_;
    m.clk = 0;
    m.eval();
    m.clk = 1;
    m.eval();
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<V> top_;
#if VM_TRACE
  std::unique_ptr<VerilatedFstC> fst_;
#endif
  uint8_t wbuf_[kBusBytes] = {};  ///< the W beat of the current cycle
  static_assert(kBusBytes >= 1 && kBusBytes <= 64, "bus width 8..512 bits");
};

}  // namespace tessel::sim::rtl
