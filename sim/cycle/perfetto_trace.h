// The cycle model's timeline as a Chrome trace-event JSON file (the "JSON trace format" read by
// ui.perfetto.dev and chrome://tracing), written when CycleSimOptions::perfetto_path is set.
// docs/cycle-model.md section "Perfetto trace" describes the tracks, names and arguments.
//
// Time unit: one trace microsecond ("ts"/"dur") is one accelerator cycle, so every timestamp is
// an exact integer cycle of the run (cycle 0 = fetch's first request); the clock (CLOCK_MHZ) is
// in "otherData" for converting to time. Output is deterministic: the same record gives the same
// bytes.
#pragma once

#include <string>

#include "isa/config.h"
#include "sim/cycle/run_record.h"

namespace tessel::sim::cycle {

/// The trace of one run: process 1 with the tracks (threads) fetch (tid 1), load (2), compute (3),
/// store (4) and "DRAM bus" (5). Complete events ("ph":"X") for every instruction (name = opcode
/// and memory type, e.g. "LOAD INP", "GEMM", "ALU ADD"), fetch burst, dispatch and bus burst;
/// stall intervals as "X" events of category "stall" named by cause (nested in the instruction
/// when inside it: the DRAM wait and a store's write response), a LOAD's pad writes as nested
/// "pads" events; one flow ("ph":"s" at the
/// producer's done cycle, "ph":"f" with "bp":"e" at the consumer's start cycle, same "id") per
/// dependency token. Returns the JSON text, one event per line.
std::string perfetto_trace_json(const RunRecord& record, const isa::HwConfig& cfg);

/// Writes perfetto_trace_json(record, cfg) to `path` (overwriting it). Throws IoError naming the
/// path when it cannot be written.
void write_perfetto_trace(const std::string& path, const RunRecord& record,
                          const isa::HwConfig& cfg);

}  // namespace tessel::sim::cycle
