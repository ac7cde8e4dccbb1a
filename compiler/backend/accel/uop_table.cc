#include "compiler/backend/accel/uop_table.h"

#include <fmt/format.h>

#include "support/error.h"

namespace tessel::compiler::accel {

using isa::Instruction;
using isa::MemType;
using isa::Opcode;

namespace {

uint32_t field(int64_t v, const char* what) {
  TESSEL_CHECK(v >= 0 && v <= int64_t{UINT32_MAX}, "{} = {} does not fit an instruction field", what, v);
  return static_cast<uint32_t>(v);
}

}  // namespace

int UopKernelTable::intern(const std::vector<isa::Uop>& k) {
  std::vector<uint32_t> key;
  key.reserve(k.size() * 3);
  for (const isa::Uop& u : k) {
    key.push_back(u.dst);
    key.push_back(u.src);
    key.push_back(u.wgt);
  }
  auto it = ids_.find(key);
  if (it != ids_.end()) return it->second;
  const int id = static_cast<int>(kernels_.size());
  kernels_.push_back(k);
  ids_.emplace(std::move(key), id);
  return id;
}

void UopKernelTable::clear() {
  kernels_.clear();
  ids_.clear();
}

UopPlacer::UopPlacer(const isa::HwConfig& cfg, const std::vector<std::vector<isa::Uop>>& kernels, uint64_t uop_base,
                     std::string what)
    : cfg_(cfg), kernels_(kernels), uop_base_(uop_base), what_(std::move(what)) {
  for (const auto& k : kernels_) {
    offset_.push_back(static_cast<int64_t>(table_.size()));
    table_.insert(table_.end(), k.begin(), k.end());
  }
  resident_.assign(kernels_.size(), -1);
  const int64_t total = static_cast<int64_t>(table_.size());
  if (total > 0 && total <= cfg_.uop_depth()) {
    initial_ = isa::make_mem(Opcode::kLoad, MemType::kUop, 0, field(static_cast<int64_t>(uop_base_), "dram_base"), 1,
                             field(total, "x_size"), field(total, "x_stride"));
    resident_ = offset_;
    cursor_ = total;
  }
}

std::optional<Instruction> UopPlacer::place(int kernel, Instruction& insn) {
  TESSEL_CHECK(kernel >= 0 && static_cast<size_t>(kernel) < kernels_.size(), "unknown micro-op kernel {}", kernel);
  const size_t k = static_cast<size_t>(kernel);
  const int64_t depth = cfg_.uop_depth();
  const int64_t len = static_cast<int64_t>(kernels_[k].size());
  if (len > depth) {
    throw_user_error("{}: a micro-op kernel of {} uops exceeds the uop buffer depth {}", what_, len, depth);
  }
  std::optional<Instruction> load;
  if (resident_[k] < 0) {
    if (cursor_ + len > depth) cursor_ = 0;
    for (size_t o = 0; o < resident_.size(); ++o) {  // evict kernels overlapping [cursor, cursor + len)
      const int64_t r = resident_[o];
      if (r >= 0 && r < cursor_ + len && cursor_ < r + static_cast<int64_t>(kernels_[o].size())) resident_[o] = -1;
    }
    load = isa::make_mem(Opcode::kLoad, MemType::kUop, field(cursor_, "sram"),
                         field(static_cast<int64_t>(uop_base_) + offset_[k], "dram_base"), 1, field(len, "x_size"),
                         field(len, "x_stride"));
    resident_[k] = cursor_;
    cursor_ += len;
  }
  insn.uop_bgn = field(resident_[k], "uop_bgn");
  insn.uop_end = field(resident_[k] + len, "uop_end");
  return load;
}

}  // namespace tessel::compiler::accel
