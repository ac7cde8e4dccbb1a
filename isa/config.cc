// HwConfig: VTA-style JSON parsing, validation and naming.
#include "isa/config.h"

#include <fmt/ranges.h>
#include <vector>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "isa/program.h"
#include "isa/spec.h"
#include "support/error.h"
#include "support/file_read.h"
#include "support/json_text.h"
#include "support/text.h"

namespace tessel::isa {

namespace {

// Integer keys in the order to_json() writes them. LOG_BLOCK is accepted on input and sets both
// LOG_BLOCK_IN and LOG_BLOCK_OUT; CLOCK_MHZ is the only non-integer key.
struct IntKey {
  const char* key;
  int HwConfig::*member;
};

constexpr IntKey kIntKeys[] = {
    {"LOG_INP_WIDTH", &HwConfig::log_inp_width},
    {"LOG_WGT_WIDTH", &HwConfig::log_wgt_width},
    {"LOG_ACC_WIDTH", &HwConfig::log_acc_width},
    {"LOG_BATCH", &HwConfig::log_batch},
    {"LOG_BLOCK_IN", &HwConfig::log_block_in},
    {"LOG_BLOCK_OUT", &HwConfig::log_block_out},
    {"LOG_UOP_BUFF_SIZE", &HwConfig::log_uop_buff_size},
    {"LOG_INP_BUFF_SIZE", &HwConfig::log_inp_buff_size},
    {"LOG_WGT_BUFF_SIZE", &HwConfig::log_wgt_buff_size},
    {"LOG_ACC_BUFF_SIZE", &HwConfig::log_acc_buff_size},
    {"LOG_BUS_WIDTH", &HwConfig::log_bus_width},
    {"DRAM_LATENCY", &HwConfig::dram_latency},
    {"CMD_QUEUE_DEPTH", &HwConfig::cmd_queue_depth},
    {"TOKEN_QUEUE_DEPTH", &HwConfig::token_queue_depth},
};

int json_int(const nlohmann::json& v, const std::string& key) {
  if (v.is_number_unsigned()) {
    // Read unsigned: a value above INT64_MAX must not wrap to a negative (in-range) int.
    const auto u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int>::max())) {
      throw_user_error("config key {}: {} is out of range (not a 32-bit integer)", key, u);
    }
    return static_cast<int>(u);
  }
  if (v.is_number_integer()) {
    const auto i = v.get<int64_t>();
    if (i < std::numeric_limits<int>::min() || i > std::numeric_limits<int>::max()) {
      throw_user_error("config key {}: {} is out of range (not a 32-bit integer)", key, i);
    }
    return static_cast<int>(i);
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e9) return static_cast<int>(d);
    throw_user_error("config key {}: expected an integer, got {}", key, v.dump());
  }
  throw_user_error("config key {}: expected an integer, got {}", key, v.dump());
}

// Range check of one log2 key before anything shifts by it.
void check_range(const char* key, int v, int lo, int hi, const char* why) {
  if (v < lo || v > hi) throw_user_error("config key {}: {} is outside {}..{} ({})", key, v, lo, hi, why);
}

void check_depth(const char* key, int log_size, int log_depth, int elem_bytes, const char* what) {
  if (log_depth < 1) {
    throw_user_error(
        "config key {}: a {}-byte buffer holds {} {} element(s) of {} bytes; at least 2 are "
        "needed",
        key, int64_t{1} << log_size, log_depth < 0 ? 0 : 1, what, elem_bytes);
  }
  if (log_depth > 16) {
    throw_user_error(
        "config key {}: {} gives {} {} elements, more than the 16-bit sram_base field addresses "
        "(65536)",
        key, log_size, int64_t{1} << log_depth, what);
  }
}

}  // namespace

std::string HwConfig::name() const {
  std::string block = block_in() == block_out()
                          ? std::to_string(block_in())
                          : std::to_string(block_in()) + "x" + std::to_string(block_out());
  return fmt::format("{}x{}_i{}w{}a{}_{}_{}_{}_{}", batch(), block, inp_width_bits(),
                     wgt_width_bits(), acc_width_bits(), log_uop_buff_size, log_inp_buff_size,
                     log_wgt_buff_size, log_acc_buff_size);
}

std::string HwConfig::label() const {
  const HwConfig d;
  std::vector<std::string> ext;
  if (log_bus_width != d.log_bus_width) ext.push_back(fmt::format("LOG_BUS_WIDTH={}", log_bus_width));
  if (clock_mhz != d.clock_mhz) ext.push_back(fmt::format("CLOCK_MHZ={}", clock_mhz));
  if (dram_latency != d.dram_latency) ext.push_back(fmt::format("DRAM_LATENCY={}", dram_latency));
  if (cmd_queue_depth != d.cmd_queue_depth) {
    ext.push_back(fmt::format("CMD_QUEUE_DEPTH={}", cmd_queue_depth));
  }
  if (token_queue_depth != d.token_queue_depth) {
    ext.push_back(fmt::format("TOKEN_QUEUE_DEPTH={}", token_queue_depth));
  }
  if (ext.empty()) return name();
  return fmt::format("{} ({})", name(), fmt::join(ext, ", "));
}

HwConfig HwConfig::with_run_settings(const HwConfig& run) const {
  HwConfig c = *this;
  c.dram_latency = run.dram_latency;
  c.clock_mhz = run.clock_mhz;
  c.cmd_queue_depth = run.cmd_queue_depth;
  c.token_queue_depth = run.token_queue_depth;
  return c;
}

bool HwConfig::same_hardware(const HwConfig& other) const { return with_run_settings(other) == other; }

void HwConfig::validate() const {
  // Tessel's datapath is int8 x int8 -> int32 (../shared/reference/isa.md section 1).
  if (log_inp_width != 3) {
    throw_user_error("config key LOG_INP_WIDTH: {} is not supported; only 3 (int8 inputs)", log_inp_width);
  }
  if (log_wgt_width != 3) {
    throw_user_error("config key LOG_WGT_WIDTH: {} is not supported; only 3 (int8 weights)", log_wgt_width);
  }
  if (log_acc_width != 5) {
    throw_user_error("config key LOG_ACC_WIDTH: {} is not supported; only 5 (int32 accumulators)",
                     log_acc_width);
  }
  check_range("LOG_BATCH", log_batch, 0, 6, "BATCH 1..64");
  check_range("LOG_BLOCK_IN", log_block_in, 0, 8, "BLOCK_IN 1..256");
  check_range("LOG_BLOCK_OUT", log_block_out, 0, 8, "BLOCK_OUT 1..256");
  check_range("LOG_UOP_BUFF_SIZE", log_uop_buff_size, 0, 30, "log2 bytes");
  check_range("LOG_INP_BUFF_SIZE", log_inp_buff_size, 0, 30, "log2 bytes");
  check_range("LOG_WGT_BUFF_SIZE", log_wgt_buff_size, 0, 30, "log2 bytes");
  check_range("LOG_ACC_BUFF_SIZE", log_acc_buff_size, 0, 30, "log2 bytes");
  check_range("LOG_BUS_WIDTH", log_bus_width, 3, 10, "an 8- to 1024-bit DRAM bus");
  // Every element size must divide the image alignment so relocation stays exact.
  for (auto [what, bytes] : {std::pair{"input", inp_elem_bytes()}, std::pair{"weight", wgt_elem_bytes()},
                             std::pair{"accumulator", acc_elem_bytes()}}) {
    if (static_cast<uint64_t>(bytes) > kImageAlign) {
      throw_user_error(
          "config: a {} element of {} bytes (BATCH {}, BLOCK_IN {}, BLOCK_OUT {}) exceeds the "
          "{}-byte image alignment",
          what, bytes, batch(), block_in(), block_out(), kImageAlign);
    }
  }
  check_depth("LOG_UOP_BUFF_SIZE", log_uop_buff_size, log_uop_depth(), uop_elem_bytes(), "micro-op");
  check_depth("LOG_INP_BUFF_SIZE", log_inp_buff_size, log_inp_depth(), inp_elem_bytes(), "input");
  check_depth("LOG_WGT_BUFF_SIZE", log_wgt_buff_size, log_wgt_depth(), wgt_elem_bytes(), "weight");
  check_depth("LOG_ACC_BUFF_SIZE", log_acc_buff_size, log_acc_depth(), acc_elem_bytes(), "accumulator");
  // 1 kHz to 1 THz: every time derived from it (cycles / CLOCK_MHZ) stays a finite, printable
  // number; a subnormal 1e-310 MHz made them infinite.
  if (!(clock_mhz >= kMinClockMhz) || !(clock_mhz <= kMaxClockMhz)) {
    throw_user_error("config key CLOCK_MHZ: {} is out of range (a clock of {} to {} MHz)", clock_mhz, kMinClockMhz,
                     kMaxClockMhz);
  }
  check_range("DRAM_LATENCY", dram_latency, 0, 1000000, "cycles");
  check_range("CMD_QUEUE_DEPTH", cmd_queue_depth, 1, kMaxQueueDepth, "entries");
  check_range("TOKEN_QUEUE_DEPTH", token_queue_depth, 1, kMaxQueueDepth, "tokens");
  // The instruction formats must still fit 128 bits (micro-ops 32 bits).
  for (Format f : {Format::kMem, Format::kGemm, Format::kAlu, Format::kFinish, Format::kUop}) {
    (void)layout_format(f, *this);
  }
}

HwConfig HwConfig::from_json(const std::string& json_text) {
  nlohmann::json j;
  // Duplicate keys: nlohmann keeps the last one silently; the parser callback sees every key.
  std::vector<std::string> keys_seen;
  const nlohmann::json::parser_callback_t reject_duplicates =
      [&keys_seen](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        if (event == nlohmann::json::parse_event_t::key && depth == 1) {
          const std::string key = parsed.get<std::string>();
          if (std::find(keys_seen.begin(), keys_seen.end(), key) != keys_seen.end()) {
            throw_user_error("config: key {} is given twice", support::quote(key));
          }
          keys_seen.push_back(key);
        }
        return true;
      };
  j = support::parse_json(json_text, "config", reject_duplicates);
  if (!j.is_object()) throw_user_error("config: expected a JSON object, got {}", j.type_name());
  HwConfig c;
  std::optional<int> log_block;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const auto& v = it.value();
    if (key == "TARGET" || key == "HW_VER") continue;  // VTA bookkeeping, not hardware
    if (key == "LOG_BLOCK") {
      log_block = json_int(v, key);
      continue;
    }
    if (key == "CLOCK_MHZ") {
      if (!v.is_number()) throw_user_error("config key CLOCK_MHZ: expected a number, got {}", v.dump());
      c.clock_mhz = v.get<double>();
      continue;
    }
    bool known = false;
    for (const auto& k : kIntKeys) {
      if (key == k.key) {
        c.*k.member = json_int(v, key);
        known = true;
        break;
      }
    }
    if (!known) throw_user_error("config: unknown key {}", support::quote(key));
  }
  if (log_block) {
    for (const char* k : {"LOG_BLOCK_IN", "LOG_BLOCK_OUT"}) {
      if (j.contains(k) && json_int(j[k], k) != *log_block) {
        throw_user_error("config: LOG_BLOCK {} conflicts with {} {}", *log_block, k, json_int(j[k], k));
      }
    }
    c.log_block_in = c.log_block_out = *log_block;
  }
  c.validate();
  return c;
}

HwConfig HwConfig::from_file(const std::string& path) {
  const std::string text = support::read_file_bounded_string(path, support::kMaxTextFileBytes, "a configuration file");
  try {
    return from_json(text);
  } catch (const UserError& e) {
    throw UserError(fmt::format("{}: {}", path, e.what()));
  }
}

std::string HwConfig::to_json() const {
  nlohmann::ordered_json j;
  for (const auto& k : kIntKeys) {
    if (std::string_view(k.key) == "DRAM_LATENCY") j["CLOCK_MHZ"] = clock_mhz;
    j[k.key] = this->*k.member;
  }
  return j.dump(2) + "\n";
}

}  // namespace tessel::isa
