// Directed conformance Programs: small, named instruction streams, one per instruction and edge
// case of docs/isa.md and docs/microarchitecture.md, for any valid HwConfig. Every Program
//  - passes the stream verifier (isa/verifier.h) under the configuration it carries;
//  - is self-contained (it reads only scratchpad rows it wrote itself: ACC rows are reset or
//    loaded before use), race-free (every cross-module read-after-write and write-after-read is
//    ordered by a dependency token), so every correct model gives the same DRAM bytes;
//  - makes what it tests observable in DRAM: INP/WGT/UOP loads through a GEMM over the loaded
//    rows, ACC results through STOREs of the OUT buffer, and the upper bytes of the 32-bit ACC
//    lanes through ALU SHR-by-8 steps each followed by another STORE ("byte planes");
//  - takes its DRAM inputs from seeded random data (splitmix64; the seed is fixed per Program
//    name, so the Programs are byte-identical on every run and platform).
//
// The list (names are "<group>/<case>"; the configuration variant, when not the base, is in the
// Program's config: see HwConfig::label()):
//   load_inp/  plain, pad_y0, pad_y1, pad_x0, pad_x1, pad_all, pad_max (15 on every side),
//              pads_only (y_size 0 over earlier data), pads_only_empty (y_size 0, no pads),
//              x0_noop (x_size 0 with pads and tokens), stride_gap, stride_dense,
//              stride_overlap, stride_zero, long_rows (rows of more than 256 bus beats, so a row
//              is several bursts), top_rows (the last rows of INP, WGT and ACC and the last uop
//              slots)
//   load_wgt/  plain, long_rows, y0_zero_size, x0_noop
//   load_uop/  unaligned (SRAM and DRAM index at offsets 1, 2, 3 of a bus word; 1-D and 2-D),
//              long_row, y0_zero_size, x0_noop
//   load_acc/, load_acc8/  plain, pad_y0, pad_y1, pad_x0, pad_x1, pad_all, pads_only,
//              long_rows, x0_noop (ACC_8BIT: sign extension seen in the upper byte planes)
//   store/     strided, single, overlap (stride < x_size), long_row, zero_size, reload (a STORE
//              read back by a later LOAD ACC_8BIT, ordered by tokens)
//   gemm/      loops_factors (both loop levels, every factor), accumulate (no reset, onto loaded
//              ACC), reset_loops, chain_1 .. chain_5 (back-to-back uops on one ACC row, across
//              instructions too), empty (uop_end == uop_bgn, iter_out 0, iter_in 0, with
//              tokens), full_uop_buffer (uop_end = the uop buffer depth), long_loops (90000
//              uops on one row; iter_out 16383, the field maximum)
//   alu/       <op>_imm for MIN MAX ADD SHR MUL (positive, negative, 0, largest and smallest
//              16-bit immediates; SHR also 31, 32, 40 and negative amounts), <op>_vector (src !=
//              dst, src == dst, src and dst rows written by the previous uop, loop factors; SHR
//              amounts from a small-valued ACC region), long_loop (65532 ADDs on one row)
//   finish/    alone (a stream of one FINISH)
//   queues/    long_stream under CMD_QUEUE_DEPTH 1, 2, 4, the base and DRAM_LATENCY 0;
//              cmd_queue_full (the compute command queue filled to the base depth);
//              token_flood (l2g, g2s and s2g each filled to TOKEN_QUEUE_DEPTH, at most 1024
//              tokens outstanding); token_flood_backpressure under TOKEN_QUEUE_DEPTH 1 and 2;
//              ping_pong_<regions> (virtual-thread double buffering between load, compute and
//              store) with 2 regions under the base, TOKEN_QUEUE_DEPTH 2, CMD_QUEUE_DEPTH 2,
//              DRAM_LATENCY 0 and 100, 1 region under TOKEN_QUEUE_DEPTH 1 and CMD_QUEUE_DEPTH 1 +
//              TOKEN_QUEUE_DEPTH 1, and 1 and 8 regions under the base; bus_contention (long
//              loads of the load and compute modules overlapping a long STORE) under the base,
//              DRAM_LATENCY 0 and 100
#pragma once

#include <vector>

#include "isa/config.h"
#include "isa/program.h"

namespace tessel::conformance {

/// Every directed Program for `base` (and its run-time variants), in the order listed above.
/// Throws UserError if `base` is invalid.
std::vector<isa::Program> directed_programs(const isa::HwConfig& base);

/// The distinct configurations of `programs` (by HwConfig::label()), in first-use order: what a
/// Harness running them must be made with.
std::vector<isa::HwConfig> configs_of(const std::vector<isa::Program>& programs);

}  // namespace tessel::conformance
