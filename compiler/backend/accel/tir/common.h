// Shared helpers of the accelerator's TIR emission passes (accel_tir.h): what the TIR contract
// names (the attribute allocate_scratchpads leaves, the buffers behind tir.access_ptr calls) and
// small evaluation helpers. Internal to tessel_accel_tir.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/tir/function.h"
#include "compiler/tir/stmt.h"
#include "compiler/tir/util.h"

namespace tessel::compiler::accel_tir {

/// AttrStmt key that allocate_scratchpads puts directly inside every scratchpad Allocate:
/// node = the buffer's data variable, value = its first SRAM row (element) in the scratchpad.
inline constexpr std::string_view kSramBase = "accel.sram_base";

/// A scratchpad buffer and where it lives.
struct SramPlacement {
  tir::Buffer buffer;
  int64_t row = 0;   ///< first row (SRAM element) of the buffer
  int64_t rows = 0;  ///< rows it occupies
};

/// Every buffer a statement or function can name through its data variable: the function's
/// buffer_map and every Allocate of the body, keyed by the data variable's node.
std::map<const tir::VarNode*, tir::Buffer> buffers_by_data(const tir::PrimFunc& f);

/// `f` with every `AttrStmt key` (a pragma, e.g. pragma_dma_copy) replaced by `lower(its body)`;
/// pragmas nested in a replaced body are left to `lower`. Throws what `lower` throws.
tir::PrimFunc rewrite_pragma(const tir::PrimFunc& f, std::string_view key,
                             const std::function<tir::Stmt(const tir::Stmt& body)>& lower);

/// The kSramBase attributes of `s`, keyed by the buffer's data variable node. InternalError when
/// an attribute is not directly inside the Allocate of its buffer.
std::map<const tir::VarNode*, SramPlacement> sram_placements(const tir::Stmt& s);

/// A decoded tir.access_ptr(data, offset, extent, rw_mask) call.
struct AccessPtr {
  const tir::VarNode* data = nullptr;
  tir::Expr offset, extent;
  int rw_mask = 0;
};
/// `e` as an access_ptr call, or nullopt when it is not one.
std::optional<AccessPtr> as_access_ptr(const tir::Expr& e);

/// The call of an Evaluate statement, or nullptr.
const tir::CallNode* evaluated_call(const tir::Stmt& s);

/// Rows (SRAM elements) a scratchpad buffer of `buf`'s shape and dtype needs under `cfg`:
/// ceil(elements * dtype bytes / element bytes of the scope). UserError naming the buffer when
/// its shape is not constant.
int64_t scratchpad_rows(const tir::Buffer& buf, int64_t elem_bytes);

/// Bytes of a buffer with a constant shape; UserError naming the buffer otherwise.
int64_t buffer_bytes(const tir::Buffer& buf);

// ---- helpers of the lowering passes (inject_dma_copy, tensorize_gemm, inject_alu) ----

/// The perfect loop nest (compiler/tir/util.h).
using tir::PerfectNest;
using tir::perfect_nest;
using tir::wrap_loops;

/// The constant extents of the nest's loops. UserError naming the loop and `what` (the nest's
/// description, e.g. "the copy under pragma_dma_copy") when a loop's min is not the constant 0
/// or its extent is not a positive constant.
std::vector<int64_t> nest_extents(const PerfectNest& nest, const std::string& what);


/// The constant coefficients of `e` in the nest's loop variables followed by its (symbolic,
/// simplified) base, from arith::detect_linear_equation. UserError naming `what` and `role` (the
/// access, e.g. "the dram index") when `e` is not linear in them or a coefficient is not constant.
struct LinearIndex {
  std::vector<int64_t> coef;  ///< per loop, outermost first
  tir::Expr base;
};
LinearIndex linear_index(const tir::Expr& e, const PerfectNest& nest, const std::string& what,
                         const std::string& role);

/// How many outer loops of the nest lie outside one scratchpad element: walking from the
/// innermost loop, the loops must step every access in `accesses` by 1, then by the product of
/// the extents inside them, until the product is `elem` (values of one element, rows x cols).
/// Extent-1 loops are skipped. UserError naming the loop, `what` and the access when a step
/// differs, or when the innermost loops cover a number of values that is not `elem`.
size_t element_loops_start(const PerfectNest& nest, const std::vector<int64_t>& extents,
                           const std::vector<std::pair<std::string, const LinearIndex*>>& accesses,
                           int64_t elem, const std::string& elem_text, const std::string& what);

/// floordiv(e, d) when `e` is provably a multiple of `d` (simplified); UserError naming `what`
/// otherwise.
tir::Expr exact_div(const tir::Expr& e, int64_t d, const std::string& what);

/// "loop 'x'" for the outermost loop of a nest, else `fallback`.
std::string nest_name(const PerfectNest& nest, const std::string& fallback);

}  // namespace tessel::compiler::accel_tir
