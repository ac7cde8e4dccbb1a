// TIR functions and modules. A PrimFunc is one kernel: parameters (handle variables for buffers,
// scalar variables for sizes), the buffers behind its handle parameters, a body and string
// attributes ("target", "global_symbol", ...). An IRModule holds PrimFuncs by name in insertion
// order (printing and code emission follow that order).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "compiler/tir/stmt.h"

namespace tessel::tir {

struct PrimFuncNode {
  std::string name;
  std::vector<Var> params;
  /// (parameter, buffer) for every handle parameter that is a buffer, in parameter order.
  std::vector<std::pair<Var, Buffer>> buffer_map;
  Stmt body;
  std::map<std::string, std::string> attrs;
};

/// A handle to an immutable PrimFuncNode.
class PrimFunc {
 public:
  PrimFunc() = default;
  /// InternalError when a buffer_map key is not a parameter or a parameter appears twice.
  PrimFunc(std::string name, std::vector<Var> params, std::vector<std::pair<Var, Buffer>> buffer_map,
           Stmt body, std::map<std::string, std::string> attrs = {});
  bool defined() const { return node_ != nullptr; }
  const PrimFuncNode* get() const { return node_.get(); }
  const PrimFuncNode* operator->() const { return node_.get(); }
  /// The same function with another body (parameters, buffers and attributes kept).
  PrimFunc with_body(Stmt body) const;
  /// The same function with attribute `key` set to `value`.
  PrimFunc with_attr(const std::string& key, std::string value) const;
  /// The buffer bound to parameter `param`, or a null Buffer.
  Buffer buffer_of(const Var& param) const;

 private:
  std::shared_ptr<const PrimFuncNode> node_;
};

/// PrimFuncs by name, in insertion order.
class IRModule {
 public:
  /// Adds or replaces (keeping its position) the function named f->name.
  void add(PrimFunc f);
  /// The function named `name`; UserError when absent.
  const PrimFunc& at(const std::string& name) const;
  bool contains(const std::string& name) const;
  const std::vector<PrimFunc>& functions() const { return funcs_; }

 private:
  std::vector<PrimFunc> funcs_;
};

}  // namespace tessel::tir
