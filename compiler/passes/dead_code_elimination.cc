#include "compiler/passes/dead_code_elimination.h"

namespace tessel::compiler::passes {

void dead_code_elimination(ir::Graph& g, PassContext&) { g.remove_dead(); }

}  // namespace tessel::compiler::passes
