#include "compiler/backend/accel/passes/insert_dep_tokens.h"

#include <fmt/format.h>

#include "compiler/backend/accel/dep_tokens.h"
#include "support/error.h"

namespace tessel::compiler::accel {

using isa::Instruction;

void insert_dep_tokens(Stmt& root, LoweringContext& ctx) {
  std::vector<Stmt*> leaves;
  for_each_insn(root, [&](Stmt& s) { leaves.push_back(&s); });
  std::vector<Instruction> insns;
  insns.reserve(leaves.size());
  for (Stmt* s : leaves) insns.push_back(s->insn);
  insert_dependency_tokens(insns, ctx.cfg, ctx.uop_table, ctx.uop_base);
  for (size_t i = 0; i < leaves.size(); ++i) leaves[i]->insn.dep = insns[i].dep;
  Stmt ending = make_seq("ending");
  for (size_t i = leaves.size(); i < insns.size(); ++i) {
    ending.body.push_back(make_insn(insns[i], "", 0));
  }
  root.body.push_back(std::move(ending));
}

}  // namespace tessel::compiler::accel
