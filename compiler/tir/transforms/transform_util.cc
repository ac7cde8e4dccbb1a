#include "compiler/tir/transforms/transform_util.h"

#include "compiler/tir/intrinsics.h"
#include "compiler/tir/util.h"

namespace tessel::tir::transforms {

bool is_access_ptr(const Expr& e) {
  const auto* c = e.as<CallNode>();
  return c && c->op == intrin::kAccessPtr && c->args.size() == 4;
}

bool has_opaque_call(const Stmt& s) {
  bool found = false;
  post_order_visit(s, [&](const Expr& e) {
    const auto* c = e.as<CallNode>();
    if (!c || intrin::is_pure(c->op)) return;
    bool regions = false;
    for (const Expr& a : c->args) regions |= is_access_ptr(a);
    found |= !regions;
  });
  return found;
}

}  // namespace tessel::tir::transforms
