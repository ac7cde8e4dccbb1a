#include "compiler/tir/pass_manager.h"

#include <fmt/format.h>

#include "compiler/tir/printer.h"
#include "compiler/tir/verifier.h"
#include "support/error.h"

namespace tessel::tir {

namespace {

bool valid_name(const std::string& n) {
  if (n.empty()) return false;
  for (const char c : n) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

}  // namespace

PassManager::PassManager(std::vector<FuncPass> passes) : passes_(std::move(passes)) {
  for (size_t k = 0; k < passes_.size(); ++k) {
    const FuncPass& p = passes_[k];
    TESSEL_CHECK(valid_name(p.name), "pass {} has the name '{}' (lower case letters, digits and '_' only)", k, p.name);
    TESSEL_CHECK(p.name != "input" && p.name != "all" && p.name != "list", "pass name '{}' is reserved for dumps",
                 p.name);
    TESSEL_CHECK(static_cast<bool>(p.run), "pass '{}' has no run function", p.name);
    for (size_t j = 0; j < k; ++j) TESSEL_CHECK(passes_[j].name != p.name, "pass name '{}' is repeated", p.name);
  }
}

std::vector<std::string> PassManager::names() const {
  std::vector<std::string> v;
  v.reserve(passes_.size());
  for (const FuncPass& p : passes_) v.push_back(p.name);
  return v;
}

bool PassManager::contains(const std::string& name) const {
  for (const FuncPass& p : passes_) {
    if (p.name == name) return true;
  }
  return false;
}

void PassManager::check_dump_after(const std::string& dump_after, const std::vector<std::string>& later) const {
  if (dump_after.empty() || dump_after == "input" || dump_after == "all" || contains(dump_after)) return;
  for (const std::string& n : later) {
    if (n == dump_after) return;
  }
  std::vector<std::string> valid = {"input"};
  for (const FuncPass& p : passes_) valid.push_back(p.name);
  valid.insert(valid.end(), later.begin(), later.end());
  valid.push_back("all");
  throw_user_error("unknown pass '{}' for the ir dump (passes: {})", dump_after, fmt::join(valid, ", "));
}

PrimFunc PassManager::run(const PrimFunc& f, const PassRunOptions& options, PassTrace* trace) const {
  const std::string& want = options.dump_after;
  if (options.verify) check_well_formed(f, "input");
  if (trace && dump_selects(want, "input")) trace->ir_after.emplace_back("input", to_text(f));
  PrimFunc cur = f;
  for (const FuncPass& p : passes_) {
    cur = run_timed_stage(p.name, trace, [&] { return p.run(cur); });
    if (options.verify) check_well_formed(cur, p.name);
    if (trace && dump_selects(want, p.name)) trace->ir_after.emplace_back(p.name, to_text(cur));
  }
  return cur;
}

}  // namespace tessel::tir
