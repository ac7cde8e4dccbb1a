#include "compiler/target/accel_intrin.h"

#include "compiler/tir/arith/analyzer.h"
#include "compiler/tir/intrinsics.h"
#include "isa/program.h"
#include "support/error.h"

namespace tessel::compiler::target::accel {

using tir::Expr;
using tir::MemScope;

isa::MemType mem_type_of(MemScope scope) {
  switch (scope) {
    case MemScope::kInp: return isa::MemType::kInp;
    case MemScope::kWgt: return isa::MemType::kWgt;
    case MemScope::kAcc: return isa::MemType::kAcc;
    case MemScope::kUop: return isa::MemType::kUop;
    default: break;
  }
  throw_user_error("scope '{}' is not an accelerator scratchpad", tir::to_string(scope));
}

ScopeInfo scope_info(const isa::HwConfig& cfg, MemScope scope) {
  ScopeInfo s;
  s.scope = scope;
  s.mem_type = mem_type_of(scope);
  switch (scope) {
    case MemScope::kInp:
      s.depth = cfg.inp_depth();
      s.rows = cfg.batch();
      s.cols = cfg.block_in();
      s.dtype = tir::DataType::int8();
      s.elem_bytes = cfg.inp_elem_bytes();
      break;
    case MemScope::kWgt:
      s.depth = cfg.wgt_depth();
      s.rows = cfg.block_out();
      s.cols = cfg.block_in();
      s.dtype = tir::DataType::int8();
      s.elem_bytes = cfg.wgt_elem_bytes();
      break;
    case MemScope::kAcc:
      s.depth = cfg.acc_depth();
      s.rows = cfg.batch();
      s.cols = cfg.block_out();
      s.dtype = tir::DataType::int32();
      s.elem_bytes = cfg.acc_elem_bytes();
      break;
    default:  // kUop (mem_type_of rejected the rest)
      s.depth = cfg.uop_depth();
      s.rows = 1;
      s.cols = 1;
      s.dtype = tir::DataType::uint32();
      s.elem_bytes = cfg.uop_elem_bytes();
      break;
  }
  return s;
}

namespace {

MemScope scope_filled_by(isa::MemType t) {
  switch (t) {
    case isa::MemType::kInp: return MemScope::kInp;
    case isa::MemType::kWgt: return MemScope::kWgt;
    case isa::MemType::kAcc:
    case isa::MemType::kAcc8: return MemScope::kAcc;
    case isa::MemType::kUop: return MemScope::kUop;
    case isa::MemType::kOut: break;
  }
  throw_internal_error("dma_load of memory type OUT (OUT is only stored)");
}

tir::Stmt call_stmt(std::string_view op, std::vector<Expr> args) {
  return tir::evaluate(tir::call(tir::DataType::int32(), std::string(op), std::move(args)));
}

bool adjacent(isa::Module a, isa::Module b) {
  auto d = static_cast<int>(a) - static_cast<int>(b);
  return d == 1 || d == -1;
}

Expr module_id(isa::Module m) { return static_cast<int>(m) + 1; }

}  // namespace

int64_t row_elems(const isa::HwConfig& cfg, const tir::Buffer& sram) {
  const ScopeInfo info = scope_info(cfg, sram->scope);
  const int64_t db = sram->dtype.bytes();
  if (db <= 0 || info.elem_bytes % db != 0) {
    throw_user_error("scratchpad buffer '{}' of {}: a {}-byte {} row is not a whole number of {} elements", sram->name,
                     sram->dtype.str(), info.elem_bytes, tir::to_string(sram->scope), sram->dtype.str());
  }
  return info.elem_bytes / db;
}

int64_t dram_unit_elems(const isa::HwConfig& cfg, isa::MemType type, const tir::Buffer& dram) {
  const int64_t eb = isa::dram_elem_bytes(cfg, type), db = dram->dtype.bytes();
  if (db <= 0 || eb % db != 0) {
    throw_user_error("dram buffer '{}' of {}: a {}-byte {} element is not a whole number of its elements", dram->name,
                     dram->dtype.str(), eb, isa::to_string(type));
  }
  return eb / db;
}

Expr sram_ptr(const isa::HwConfig& cfg, const tir::Buffer& sram, Expr row, Expr rows, int rw_mask) {
  const int per = static_cast<int>(row_elems(cfg, sram));
  tir::arith::Analyzer az;
  return tir::intrin::access_ptr(sram, az.simplify(row * per), az.simplify(rows * per), rw_mask);
}

tir::Stmt dma_load(const isa::HwConfig& cfg, isa::MemType type, const tir::Buffer& sram, Expr sram_row,
                   const tir::Buffer& dram, Expr dram_index, Expr y_size, Expr x_size, Expr x_stride, Expr y_pad_0,
                   Expr y_pad_1, Expr x_pad_0, Expr x_pad_1) {
  TESSEL_CHECK(sram->scope == scope_filled_by(type), "dma_load into buffer {} of scope {}", sram->name,
               tir::to_string(sram->scope));
  TESSEL_CHECK(dram->scope == MemScope::kGlobal, "dma_load from buffer {} of scope {}", dram->name,
               tir::to_string(dram->scope));
  Expr rows = y_size + y_pad_0 + y_pad_1;
  Expr cols = x_size + x_pad_0 + x_pad_1;
  const int per = static_cast<int>(dram_unit_elems(cfg, type, dram));
  Expr sp = sram_ptr(cfg, sram, sram_row, rows * cols, 2);
  tir::arith::Analyzer az;
  Expr dp = tir::intrin::access_ptr(dram, az.simplify(dram_index * per), az.simplify(y_size * x_stride * per), 1);
  return call_stmt(kDmaLoad, {static_cast<int>(type), sp, dp, y_size, x_size, x_stride, y_pad_0, y_pad_1, x_pad_0,
                              x_pad_1});
}

tir::Stmt dma_store(const isa::HwConfig& cfg, const tir::Buffer& sram, Expr sram_row, const tir::Buffer& dram,
                    Expr dram_index, Expr y_size, Expr x_size, Expr x_stride) {
  TESSEL_CHECK(sram->scope == MemScope::kAcc, "dma_store from buffer {} of scope {}", sram->name,
               tir::to_string(sram->scope));
  TESSEL_CHECK(dram->scope == MemScope::kGlobal, "dma_store into buffer {} of scope {}", dram->name,
               tir::to_string(dram->scope));
  const int per = static_cast<int>(dram_unit_elems(cfg, isa::MemType::kOut, dram));
  Expr sp = sram_ptr(cfg, sram, sram_row, y_size * x_size, 1);
  tir::arith::Analyzer az;
  Expr dp = tir::intrin::access_ptr(dram, az.simplify(dram_index * per), az.simplify(y_size * x_stride * per), 2);
  return call_stmt(kDmaStore, {sp, dp, y_size, x_size, x_stride});
}

tir::Stmt gemm_uop(bool reset, Expr dst_index, Expr src_index, Expr wgt_index) {
  return call_stmt(kGemmUop, {reset ? 1 : 0, dst_index, src_index, wgt_index});
}

tir::Stmt alu_uop(isa::AluOp op, bool use_imm, int32_t imm, Expr dst_index, Expr src_index) {
  TESSEL_CHECK(imm >= -32768 && imm <= 32767, "ALU immediate {} does not fit 16 bits", imm);
  return call_stmt(kAluUop, {static_cast<int>(op), use_imm ? 1 : 0, imm, dst_index, src_index});
}

tir::Stmt dep_push(isa::Module from, isa::Module to) {
  TESSEL_CHECK(adjacent(from, to), "no dependency queue from module {} to {}", static_cast<int>(from),
               static_cast<int>(to));
  return call_stmt(kDepPush, {module_id(from), module_id(to)});
}

tir::Stmt dep_pop(isa::Module from, isa::Module to) {
  TESSEL_CHECK(adjacent(from, to), "no dependency queue from module {} to {}", static_cast<int>(from),
               static_cast<int>(to));
  return call_stmt(kDepPop, {module_id(from), module_id(to)});
}

tir::Stmt coproc_scope(isa::Module m, tir::Stmt body) {
  return tir::attr_stmt(Expr(), std::string(kCoprocScope), module_id(m), std::move(body));
}

}  // namespace tessel::compiler::target::accel
