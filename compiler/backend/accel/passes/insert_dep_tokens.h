// Loop-IR pass insert_dep_tokens: dependency tokens (dep_tokens.h) on the instruction leaves.
#pragma once

#include "compiler/backend/accel/context.h"
#include "compiler/backend/accel/loop_ir.h"

namespace tessel::compiler::accel {

/// Runs insert_dependency_tokens() over the kInsn leaves in program order (micro-ops from
/// ctx.uop_table at ctx.uop_base), writes the flags back, and appends the ending as a kSeq
/// "ending". Throws what insert_dependency_tokens() throws.
void insert_dep_tokens(Stmt& root, LoweringContext& ctx);

}  // namespace tessel::compiler::accel
