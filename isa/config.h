// Hardware configuration of the accelerator: VTA's vta_config.json keys and defaults plus Tessel's
// extension keys (reference: ../shared/reference/isa.md section 1; VTA's include/vta/hw_spec.h for
// the derived depths). Every other width in Tessel is derived from this struct, in one place.
#pragma once

#include <cstdint>
#include <string>

namespace tessel::isa {

/// The range of CLOCK_MHZ: 1 kHz to 1 THz (validate()).
inline constexpr double kMinClockMhz = 0.001;
inline constexpr double kMaxClockMhz = 1e6;

/// The accelerator's parameters. Field names follow VTA's JSON keys (lower-case).
/// Sizes are log2 of bytes unless noted. Call validate() after changing fields.
/// Largest CMD_QUEUE_DEPTH and TOKEN_QUEUE_DEPTH HwConfig::validate accepts (a Tessel limit):
/// deep enough that no stream of a layer waits for queue room.
inline constexpr int kMaxQueueDepth = 1 << 24;

struct HwConfig {
  // ---- VTA keys (defaults: VTA's 1x16_i8w8a32_15_15_18_17) ----
  int log_inp_width = 3;   ///< log2 bits of an input element (3 = int8)
  int log_wgt_width = 3;   ///< log2 bits of a weight element (3 = int8)
  int log_acc_width = 5;   ///< log2 bits of an accumulator element (5 = int32)
  int log_batch = 0;       ///< log2 BATCH
  int log_block_in = 4;    ///< log2 BLOCK_IN (LOG_BLOCK sets both)
  int log_block_out = 4;   ///< log2 BLOCK_OUT
  int log_uop_buff_size = 15;  ///< log2 bytes of the micro-op buffer
  int log_inp_buff_size = 15;  ///< log2 bytes of the input scratchpad
  int log_wgt_buff_size = 18;  ///< log2 bytes of the weight scratchpad
  int log_acc_buff_size = 17;  ///< log2 bytes of the accumulator scratchpad
  // ---- Tessel extension keys ----
  int log_bus_width = 6;          ///< LOG_BUS_WIDTH: log2 bits of the DRAM bus (6 = 64-bit, Pynq)
  double clock_mhz = 100.0;       ///< CLOCK_MHZ: accelerator clock, for time and speedup figures
  int dram_latency = 32;          ///< DRAM_LATENCY: cycles from a read request to its first beat
  int cmd_queue_depth = 512;      ///< CMD_QUEUE_DEPTH: entries per command queue (VTA HLS: 512)
  int token_queue_depth = 1024;   ///< TOKEN_QUEUE_DEPTH: tokens per dependency queue (VTA: 1024)

  // ---- derived quantities (all in elements/entries unless the name says bytes/bits) ----
  int batch() const { return 1 << log_batch; }
  int block_in() const { return 1 << log_block_in; }
  int block_out() const { return 1 << log_block_out; }
  int inp_width_bits() const { return 1 << log_inp_width; }
  int wgt_width_bits() const { return 1 << log_wgt_width; }
  int acc_width_bits() const { return 1 << log_acc_width; }
  int out_width_bits() const { return inp_width_bits(); }  ///< OUT width = INP width
  int bus_width_bits() const { return 1 << log_bus_width; }
  int bus_bytes() const { return bus_width_bits() / 8; }
  /// Bytes of one SRAM element (one row of a scratchpad): INP = BATCH*BLOCK_IN*inp bits/8, etc.
  int inp_elem_bytes() const { return batch() * block_in() * inp_width_bits() / 8; }
  int wgt_elem_bytes() const { return block_out() * block_in() * wgt_width_bits() / 8; }
  int acc_elem_bytes() const { return batch() * block_out() * acc_width_bits() / 8; }
  int out_elem_bytes() const { return batch() * block_out() * out_width_bits() / 8; }
  int uop_elem_bytes() const { return 4; }  ///< a micro-op is 32 bits (VTA_UOP_WIDTH)
  /// log2 of the depths (entries): VTA hw_spec.h, e.g. LOG_INP_BUFF_DEPTH =
  /// LOG_INP_BUFF_SIZE - LOG_BATCH - LOG_BLOCK_IN - LOG_INP_WIDTH + 3.
  int log_uop_depth() const { return log_uop_buff_size - 5 + 3; }
  int log_inp_depth() const { return log_inp_buff_size - log_batch - log_block_in - log_inp_width + 3; }
  int log_wgt_depth() const {
    return log_wgt_buff_size - log_block_out - log_block_in - log_wgt_width + 3;
  }
  int log_acc_depth() const { return log_acc_buff_size - log_batch - log_block_out - log_acc_width + 3; }
  int uop_depth() const { return 1 << log_uop_depth(); }
  int inp_depth() const { return 1 << log_inp_depth(); }
  int wgt_depth() const { return 1 << log_wgt_depth(); }
  int acc_depth() const { return 1 << log_acc_depth(); }
  int out_depth() const { return acc_depth(); }  ///< OUT shares the ACC index space
  /// MACs per GEMM micro-op: BATCH * BLOCK_IN * BLOCK_OUT (256 for the default).
  int macs_per_uop() const { return batch() * block_in() * block_out(); }

  /// VTA's config name, e.g. "1x16_i8w8a32_15_15_18_17".
  std::string name() const;
  /// name() followed by the Tessel extension keys that differ from their defaults, e.g.
  /// "1x16_i8w8a32_15_15_18_17 (CMD_QUEUE_DEPTH=8, TOKEN_QUEUE_DEPTH=1)"; equals name() for
  /// the default extension values. Two configs with equal labels have equal keys.
  std::string label() const;

  /// Throws tessel::UserError naming the key and value when the configuration is impossible
  /// (non-positive sizes, widths other than int8/int8/int32, buffers too small for one element,
  /// instruction fields that no longer fit in 128 bits, ...). Every numeric key has a range,
  /// listed in docs/usage.md (--config): LOG_BATCH 0..6, LOG_BLOCK_IN/OUT 0..8, LOG_*_BUFF_SIZE
  /// 0..30, LOG_BUS_WIDTH 3..10, CLOCK_MHZ kMinClockMhz..kMaxClockMhz, DRAM_LATENCY 0..10^6,
  /// CMD_QUEUE_DEPTH and TOKEN_QUEUE_DEPTH 1..2^24.
  void validate() const;

  /// Parses VTA-style JSON (keys upper-case as in vta_config.json: LOG_INP_WIDTH, LOG_BLOCK,
  /// LOG_BLOCK_IN, ..., plus the extension keys above). Unknown keys are an error; missing keys
  /// keep the defaults. VTA's non-numeric keys TARGET and HW_VER are accepted and ignored.
  /// Throws UserError on malformed JSON or bad values (validate() is called).
  static HwConfig from_json(const std::string& json_text);
  /// Reads and parses a JSON file; throws IoError if it cannot be read.
  static HwConfig from_file(const std::string& path);
  /// Serialises every key (upper-case names) to JSON text, stable key order.
  std::string to_json() const;

  /// True when `other` describes the same hardware: every key equal except the run-time settings
  /// DRAM_LATENCY, CLOCK_MHZ, CMD_QUEUE_DEPTH and TOKEN_QUEUE_DEPTH, which the host sets per run
  /// (docs/microarchitecture.md section 1, hw/README.md "Build"). The VTA keys fix the instruction
  /// fields, scratchpads and DRAM element sizes and LOG_BUS_WIDTH the DRAM port, so they must
  /// match: a Program (or Executable) built for one configuration runs on a device of another
  /// exactly when the two are same_hardware(). The run then takes the device's run-time values;
  /// with other queue depths a stream that fits the built ones may deadlock, which the verifier
  /// (isa/verifier.h, at the run's depths) and the simulators report.
  bool same_hardware(const HwConfig& other) const;
  /// This configuration with the run-time settings (DRAM_LATENCY, CLOCK_MHZ, CMD_QUEUE_DEPTH,
  /// TOKEN_QUEUE_DEPTH) of `run` and every other key of *this: the configuration a Program built
  /// for *this runs under on a device configured as `run`. Does not validate.
  HwConfig with_run_settings(const HwConfig& run) const;

  bool operator==(const HwConfig&) const = default;
};

}  // namespace tessel::isa
