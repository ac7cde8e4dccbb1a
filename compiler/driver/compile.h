// The compiler driver: ONNX model -> Executable (graph passes, placement, per-layer lowering),
// plus the float reference used to measure the compiled model's error.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/backend/accel/lower_conv2d.h"
#include "isa/config.h"
#include "runtime/executable.h"
#include "runtime/host_tensor.h"

namespace tessel::compiler {

struct CompileOptions {
  isa::HwConfig config;
  /// Place conv2d/dense on the accelerator (false: everything on the CPU).
  bool offload = true;
  /// Requantise every output to round(acc * M) exactly (compiler/passes/requant.h), with low
  /// multiplier limbs where one 32-bit multiplier cannot give that; false: one 32-bit multiplier
  /// per channel, the most accurate that fits (fewer ALU instructions; an output may be 1 LSB
  /// off round(acc * M) within the stated worst-case error).
  bool exact_requant = true;
  /// Value for symbolic (named) dimensions of the graph inputs, e.g. "batch_size". Values other
  /// than 1 are a UserError for a model whose graph inputs have no symbolic dimension.
  int64_t batch = 1;
  /// Float models only: inputs used to calibrate post-training quantisation (power-of-two
  /// scales). Each entry is one set of graph inputs (float32, the model's input shapes). Empty:
  /// compile_onnx throws UserError for a float model.
  std::vector<std::vector<runtime::HostTensor>> calibration;
  /// Schedule knobs for every offloaded layer (0 = cost model).
  accel::ScheduleKnobs knobs;
  /// Dump the IR after this pass ("all" for every pass) into CompileResult::ir_dump.
  std::string dump_ir_after;
  /// Threads lowering the offloaded layers (each layer is lowered on one thread; the result does
  /// not depend on the count). 0: std::thread::hardware_concurrency().
  int jobs = 0;
};

/// Per-layer facts for reports (one per Executable step that computes something).
struct LayerInfo {
  int step = -1;                    ///< index into Executable::steps
  std::string name, op;             ///< ONNX node name, operator (ONNX op_type of the source)
  std::vector<int64_t> in_shape, out_shape;
  runtime::Placement placement = runtime::Placement::kCpu;
  /// Why the layer stays on the CPU (ir::Node::placement_reason: a residual qadd's obstacle, or
  /// no accelerator kernel for the op), or "" (on the accelerator, or offload off).
  std::string placement_reason;
  int64_t macs = 0;                 ///< useful multiply-accumulates (0 for non-MAC ops)
  int64_t ideal_gemm_uops = 0;      ///< accelerator compute roofline in uops (offloaded layers)
  uint64_t dram_bytes = 0;          ///< static DRAM traffic estimate of the Program (bytes)
  std::string schedule;             ///< chosen schedule (offloaded layers)
  int64_t est_cycles = 0;           ///< the stream cost model's cycles of the layer's Program (offloaded layers; accel::estimate_cycles)
};

/// Wall time of one compiler stage (milliseconds), in order: "import" (ONNX to graph IR), the
/// graph passes of passes::graph_pipeline(), "lower". For the per-kernel passes `level` is the
/// pass's PassInfo::level (several levels have passes of one name); empty for the model stages.
struct PassTiming {
  std::string pass;
  double ms = 0;
  std::string level;
};

struct CompileResult {
  runtime::Executable exe;
  std::vector<LayerInfo> layers;
  std::vector<PassTiming> pass_timings;
  /// Per-kernel passes (the "tir", "backend" and "loop-ir" levels of pass_list(), then
  /// "verify" at level "backend"): milliseconds summed over the offloaded layers, one entry per
  /// (level, pass) in order of first appearance. Layers are lowered on CompileOptions::jobs
  /// threads, so the sum is thread time and can exceed "lower"'s wall time.
  std::vector<PassTiming> kernel_pass_timings;
  std::string ir_dump;
  bool quantized_by_tessel = false;  ///< the model was float and Tessel quantised it
};

/// Compiles an ONNX file. Throws UserError for malformed ONNX, unsupported operators or
/// attributes (naming the node, its op_type and the reason), impossible configurations
/// (including queue depths no schedule of a layer runs with, see driver/lower.h), or
/// CompileOptions::batch != 1 for a model without a symbolic input dimension (naming the inputs
/// and their fixed shapes);
/// IoError if the file cannot be read. Deterministic: the same inputs give a byte-identical
/// Executable::serialize().
CompileResult compile_onnx(const std::string& onnx_path, const CompileOptions& opts);

/// Same as compile_onnx for the serialised bytes of a ModelProto held in memory; `what` names the
/// model in messages (and, as for a file's path, in the batch error). Throws as compile_onnx
/// (no IoError: nothing is read).
CompileResult compile_onnx_bytes(const std::string& bytes, const std::string& what, const CompileOptions& opts);

/// One entry of the compiler's pass registry. `level` is one of
///  - "graph": passes::graph_pipeline(), once per model;
///  - "driver": lower, the graph to the executable (it runs the per-kernel levels below);
///  - "tir": per kernel on the TIR path, the PrimFunc -> PrimFunc passes of the accelerator's
///    tir::PassManager (accel_tir::tir_pipeline(), compiler/backend/accel/tir/accel_tir.h);
///  - "backend": per kernel on the TIR path, the code generator after them (emit_instructions);
///  - "loop-ir": per offloaded layer on the loop-IR path (compiler/backend/accel, the layers not
///    yet lowered through TIR): the schedule search, then accel::pass_pipeline().
/// `summary` says what the pass does in one line.
struct PassInfo {
  std::string name, level, summary;
};

/// The pass registry: every pass in pipeline order (graph, driver, tir, backend, loop-ir), with
/// level and summary (tessel compile --dump-ir list). A name is unique within its level; one
/// name at two levels (the TIR and loop-IR backends both have inject_dma_copy, tensorize_gemm,
/// inject_virtual_threads and fold_uop_loops) names the pass of each: a dump after it shows
/// every kernel's IR after the pass of that name on the path the kernel took; "level:name"
/// (e.g. "tir:fold_uop_loops", "loop-ir:fold_uop_loops") names the pass of one level only.
std::vector<PassInfo> pass_list();

/// The valid --dump-ir names besides "all": the distinct names of pass_list() in order, then
/// every pass as "level:name" in order.
std::vector<std::string> pass_names();

/// The part of a --dump-ir value for the passes of `level`: "all" stays "all"; "name" is kept
/// (every level with a pass of that name dumps it); "level:name" gives "name" for that level
/// and "" for every other; "" stays "".
std::string dump_for_level(const std::string& dump_ir_after, const std::string& level);

/// The float reference: the ONNX model evaluated as written, on the CPU, in float32 (QDQ and
/// QLinear operators with ONNX Runtime's semantics: round half to even, saturation).
class ReferenceModel {
 public:
  /// Throws like compile_onnx.
  static ReferenceModel load(const std::string& onnx_path, int64_t batch = 1);
  /// Runs the model; inputs/outputs in graph order, float32 NCHW.
  std::vector<runtime::HostTensor> run(const std::vector<runtime::HostTensor>& inputs) const;
  /// Input names and shapes (symbolic dimensions bound to `batch`).
  std::vector<std::string> input_names() const;
  std::vector<std::vector<int64_t>> input_shapes() const;
  ~ReferenceModel();
  ReferenceModel(ReferenceModel&&) noexcept;
  ReferenceModel& operator=(ReferenceModel&&) noexcept;

 private:
  ReferenceModel();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessel::compiler
