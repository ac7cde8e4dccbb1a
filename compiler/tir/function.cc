#include "compiler/tir/function.h"

#include <set>

#include "support/error.h"

namespace tessel::tir {

PrimFunc::PrimFunc(std::string name, std::vector<Var> params, std::vector<std::pair<Var, Buffer>> buffer_map,
                   Stmt body, std::map<std::string, std::string> attrs) {
  std::set<const VarNode*> seen;
  for (const Var& p : params) {
    TESSEL_CHECK(p.defined(), "function {}: undefined parameter", name);
    TESSEL_CHECK(seen.insert(p.get()).second, "function {}: parameter {} appears twice", name, p.name());
  }
  for (const auto& [p, b] : buffer_map) {
    TESSEL_CHECK(seen.count(p.get()), "function {}: buffer {} bound to {}, which is not a parameter", name,
                 b.defined() ? b->name : "?", p.name());
    TESSEL_CHECK(p.dtype().is_handle(), "function {}: buffer parameter {} is not a handle", name, p.name());
  }
  TESSEL_CHECK(body.defined(), "function {} has no body", name);
  auto n = std::make_shared<PrimFuncNode>();
  n->name = std::move(name);
  n->params = std::move(params);
  n->buffer_map = std::move(buffer_map);
  n->body = std::move(body);
  n->attrs = std::move(attrs);
  node_ = std::move(n);
}

PrimFunc PrimFunc::with_body(Stmt body) const {
  return PrimFunc(node_->name, node_->params, node_->buffer_map, std::move(body), node_->attrs);
}

PrimFunc PrimFunc::with_attr(const std::string& key, std::string value) const {
  auto attrs = node_->attrs;
  attrs[key] = std::move(value);
  return PrimFunc(node_->name, node_->params, node_->buffer_map, node_->body, std::move(attrs));
}

Buffer PrimFunc::buffer_of(const Var& param) const {
  for (const auto& [p, b] : node_->buffer_map) {
    if (p.same_as(param)) return b;
  }
  return Buffer();
}

void IRModule::add(PrimFunc f) {
  TESSEL_CHECK(f.defined(), "adding an undefined function to a module");
  for (PrimFunc& g : funcs_) {
    if (g->name == f->name) {
      g = std::move(f);
      return;
    }
  }
  funcs_.push_back(std::move(f));
}

const PrimFunc& IRModule::at(const std::string& name) const {
  for (const PrimFunc& g : funcs_) {
    if (g->name == name) return g;
  }
  throw_user_error("module has no function named '{}'", name);
}

bool IRModule::contains(const std::string& name) const {
  for (const PrimFunc& g : funcs_) {
    if (g->name == name) return true;
  }
  return false;
}

}  // namespace tessel::tir
