// Lowering of the final graph (Tessel dialect, after the graph pipeline) to a runtime::Executable:
// one TensorDesc per value (in value order), one Step per node (op names and attributes of
// runtime/cpu/kernels.h), one accelerator Program per offloaded qconv2d (via
// accel::lower_conv2d, segments "inp"/"out") and per offloaded qadd (via lower_qadd_layer,
// driver/lower_qadd.h: segments "a", "b"/"out"), and one LayerInfo per step except reshapes.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "compiler/driver/compile.h"
#include "compiler/ir/graph.h"

namespace tessel::compiler::driver {

/// Static DRAM traffic of a Program in bytes: for every LOAD and STORE,
/// y_size * x_size * dram_elem_bytes(memory_type) (zero padding is generated on chip and
/// costs no DRAM bytes).
uint64_t program_dram_bytes(const isa::Program& p);

/// Names of the loop-IR backend's dumps: "schedule" (the initial loop IR) then the passes of
/// accel::pass_pipeline() in order.
std::vector<std::string> loop_ir_pass_names();

/// The per-kernel part of the pass registry (compile.h, pass_list()), in order: the TIR passes
/// of accel_tir::tir_pipeline() (level "tir"), emit_instructions (level "backend"), then the
/// loop-IR backend's "schedule" and accel::pass_pipeline() (level "loop-ir").
std::vector<PassInfo> kernel_pass_list();

/// The dump name to give a kernel's backend whose stage names are `stages`: `dump_ir_after`
/// when it is "all" or one of `stages`, otherwise "" (the pass is at another level).
std::string kernel_dump_after(const std::string& dump_ir_after, const std::vector<std::string>& stages);

/// Adds one kernel's (pass, milliseconds) list to result.kernel_pass_timings, summing per
/// (level, pass). `tir_path`: the kernel went through accel_tir::build_accel_program (its TIR
/// passes at level "tir", the rest at "backend"); otherwise through the loop-IR backend (level
/// "loop-ir", except the driver's "verify" at "backend").
void add_kernel_timings(const std::vector<std::pair<std::string, double>>& pass_ms, bool tir_path,
                        CompileResult& result);

/// One kernel's dumps as they appear in CompileResult::ir_dump: "; layer <layer>\n" then, per
/// (pass, text) of `ir_after` (BuildReport::ir_after of build_accel_program), "; after
/// <pass>\n<text>" with a newline added where the text lacks one. "" when ir_after is empty.
std::string kernel_dump(const std::string& layer, const std::vector<std::pair<std::string, std::string>>& ir_after);

/// Text listing of an Executable (the dump after "lower"): one line per tensor (index, name,
/// dtype, shape, layout, quantisation, "const" with its byte count) and per step (index, op,
/// inputs -> outputs, placement and program index, attrs as JSON). Deterministic.
std::string dump_executable(const runtime::Executable& exe);

/// The schedules lower_to_executable tries, in order, for an offloaded layer whose stream
/// deadlocks on the configured queue depths (CMD_QUEUE_DEPTH, TOKEN_QUEUE_DEPTH are user input):
/// `requested`; then virtual_threads = 1 (no double buffering: one tile's dependency tokens in
/// flight per queue); then, still with one virtual thread, oc_tile_blocks = 1, then also
/// ic_chunk = 1, then also oh_tile = 1 (each leaves fewer instructions between a token's push and
/// its pop). Knobs not overridden keep their requested values; duplicates are dropped, so the list
/// has 1 to 5 entries. On every layer of the bundled models and on a sweep of 400 random conv
/// layers, the first three entries always found a stream that runs with depths of 1.
std::vector<accel::ScheduleKnobs> queue_safe_schedules(const accel::ScheduleKnobs& requested);

/// Lowers one offloaded layer for `cfg` with the first of `schedules` (non-empty) whose
/// instruction stream passes the verifier with cfg's queue depths; when that is not the first,
/// LoweredLayer::schedule ends with a note naming the requested schedule and the depths.
/// `op` names the layer's operator in messages ("Conv+Relu"); `dump_ir_after` as
/// accel::LowerOptions::dump_ir_after (the dump is of the schedule used).
/// Throws UserError when every schedule's stream deadlocks under the configured depths (the
/// verifier's "deadlock" rule): "layer 'L' (Conv) cannot be scheduled with CMD_QUEUE_DEPTH=2,
/// TOKEN_QUEUE_DEPTH=2: <the first schedule's verifier message>; ...; the smallest depths this
/// layer needs are CMD_QUEUE_DEPTH=c (with TOKEN_QUEUE_DEPTH=2) or TOKEN_QUEUE_DEPTH=t (with
/// CMD_QUEUE_DEPTH=2)", where c and t are the smallest depths (found by bisection with
/// isa::check_program) at which one of the schedules runs; the CMD_QUEUE_DEPTH alternative is left
/// out when no command-queue depth alone is enough. Throws the UserError of
/// accel::lower_conv2d for the first schedule, except accel::NoTileFits: a schedule whose tiles
/// do not fit the scratchpads (or the uop fields' reach) is skipped, the next one tried (so a
/// layer that fits only without double buffering gets one virtual thread, the note "(the
/// requested schedule, ..., does not fit: <why>)" ending LoweredLayer::schedule), and when none
/// fits or deadlocks the requested schedule's NoTileFits is thrown. Each schedule is lowered once with LowerOptions::verify = false and
/// checked here with isa::check_program; a stream that fails any rule other than the deadlock
/// check is a bug: InternalError naming the layer and the first diagnostic. `candidates`: the
/// schedule candidates lower_conv2d lowers per schedule (LowerOptions::candidates); a candidate
/// whose stream deadlocks loses to any that runs, so a schedule deadlocks only when all of its
/// candidates do.
accel::LoweredLayer lower_offloaded_layer(const accel::AccelLayer& layer, const std::string& op,
                                          const isa::HwConfig& cfg,
                                          const std::vector<accel::ScheduleKnobs>& schedules,
                                          const std::string& dump_ir_after = "",
                                          const accel::CandidateFilter& candidates = {});

/// Lowers `g` into `result.exe` and `result.layers`; per-kernel dumps requested through
/// opts.dump_ir_after are appended to `result.ir_dump`, per-kernel pass times to
/// result.kernel_pass_timings. Offloaded layers are lowered by lower_offloaded_layer() with
/// queue_safe_schedules(opts.knobs). Throws InternalError if a node is not a Tessel kernel node
/// or a value has a type the executable cannot hold, and what lower_offloaded_layer throws
/// (UserError naming the layer) for offloaded layers.
void lower_to_executable(const ir::Graph& g, const CompileOptions& opts, CompileResult& result);

}  // namespace tessel::compiler::driver
