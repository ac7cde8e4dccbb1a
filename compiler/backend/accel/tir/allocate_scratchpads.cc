#include "compiler/backend/accel/tir/allocate_scratchpads.h"

#include <array>

#include "compiler/backend/accel/tir/common.h"
#include "compiler/target/accel_intrin.h"
#include "compiler/tir/functor.h"
#include "support/error.h"

namespace tessel::compiler::accel_tir {

namespace {

bool is_scratchpad(tir::MemScope s) {
  return s == tir::MemScope::kInp || s == tir::MemScope::kWgt || s == tir::MemScope::kAcc ||
         s == tir::MemScope::kUop;
}

class Allocator : public tir::IRMutator {
 public:
  explicit Allocator(const isa::HwConfig& cfg) : cfg_(cfg) {}

 protected:
  using tir::IRMutator::mutate;
  tir::Stmt mutate(const tir::AllocateNode* op, const tir::Stmt& self) override {
    const tir::MemScope scope = op->buffer->scope;
    if (!is_scratchpad(scope)) return tir::IRMutator::mutate(op, self);
    const target::accel::ScopeInfo info = target::accel::scope_info(cfg_, scope);
    const int64_t rows = scratchpad_rows(op->buffer, info.elem_bytes);
    int64_t& top = top_[static_cast<size_t>(scope)];
    if (top + rows > info.depth) {
      throw_user_error(
          "scratchpad {} over capacity: buffer '{}' needs {} rows at row {}, {} of {} rows available",
          tir::to_string(scope), op->buffer->name, rows, top, info.depth - top, info.depth);
    }
    const int64_t row = top;
    top += rows;
    tir::Stmt body = mutate_stmt(op->body);
    top = row;
    return tir::allocate(op->buffer,
                         tir::attr_stmt(op->buffer->data, std::string(kSramBase), tir::int_imm(row), body));
  }

 private:
  const isa::HwConfig& cfg_;
  std::array<int64_t, 8> top_{};
};

}  // namespace

tir::PrimFunc allocate_scratchpads(const tir::PrimFunc& f, const isa::HwConfig& cfg) {
  Allocator a(cfg);
  return f.with_body(a.mutate_stmt(f->body));
}

}  // namespace tessel::compiler::accel_tir
