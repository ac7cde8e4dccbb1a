// Lowering of the final graph (Tessel dialect, after the graph pipeline) to a runtime::Executable:
// one TensorDesc per value (in value order), one Step per node (op names and attributes of
// runtime/cpu/kernels.h), one accelerator Program per offloaded qconv2d (via
// accel::lower_conv2d, segments "inp"/"out"), and one LayerInfo per step except reshapes.
#pragma once

#include <string>
#include <vector>

#include "compiler/driver/compile.h"
#include "compiler/ir/graph.h"

namespace tessel::compiler::driver {

/// Static DRAM traffic of a Program in bytes: for every LOAD and STORE,
/// y_size * x_size * dram_elem_bytes(memory_type) (zero padding is generated on chip and
/// costs no DRAM bytes).
uint64_t program_dram_bytes(const isa::Program& p);

/// Names of the accelerator backend's loop-IR dumps: "schedule" (the initial loop IR) then the
/// passes of accel::pass_pipeline() in order.
std::vector<std::string> accel_pass_names();

/// Text listing of an Executable (the dump after "lower"): one line per tensor (index, name,
/// dtype, shape, layout, quantisation, "const" with its byte count) and per step (index, op,
/// inputs -> outputs, placement and program index, attrs as JSON). Deterministic.
std::string dump_executable(const runtime::Executable& exe);

/// Lowers `g` into `result.exe` and `result.layers`; loop-IR dumps requested through
/// opts.dump_ir_after are appended to `result.ir_dump`. Throws InternalError if a node is not a
/// Tessel kernel node or a value has a type the executable cannot hold, and what
/// accel::lower_conv2d throws (UserError naming the layer) for offloaded layers.
void lower_to_executable(const ir::Graph& g, const CompileOptions& opts, CompileResult& result);

}  // namespace tessel::compiler::driver
