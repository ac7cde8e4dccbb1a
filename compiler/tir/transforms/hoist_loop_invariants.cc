#include "compiler/tir/transforms/hoist_loop_invariants.h"

#include <map>
#include <utility>
#include <vector>

#include "compiler/tir/functor.h"
#include "compiler/tir/intrinsics.h"
#include "compiler/tir/transforms/transform_util.h"
#include "compiler/tir/util.h"
#include "support/error.h"

namespace tessel::tir::transforms {

namespace {

using arith::Analyzer;

// The scope of every buffer a statement names (by data variable).
class ScopeCollector : public IRVisitor {
 public:
  std::map<const VarNode*, MemScope> scopes;
  void visit_buffer(const Buffer& b) override { scopes.emplace(b->data.get(), b->scope); }
};

bool intersects(const std::set<const VarNode*>& a, const std::set<const VarNode*>& b) {
  for (const VarNode* v : a) {
    if (b.count(v)) return true;
  }
  return false;
}

class Hoister : public IRMutator {
 public:
  Hoister(Analyzer& a, const HoistOptions& o, std::map<const VarNode*, MemScope> scopes)
      : an_(a), opt_(o), scopes_(std::move(scopes)) {}

 protected:
  using IRMutator::mutate;

  Stmt mutate(const ForNode* op, const Stmt& self) override {
    Stmt body = with_fact(an_, op->loop_var, Range{op->min, op->extent}, [&] { return mutate_stmt(op->body); });
    auto rebuild = [&]() {
      return body.same_as(op->body) ? self : for_loop(op->loop_var, op->min, op->extent, op->kind, body, op->thread_tag);
    };
    if (op->kind != ForKind::kSerial) return rebuild();
    if (!an_.can_prove(ge(op->extent, make_const(op->extent.dtype(), 1)))) return rebuild();

    std::vector<Stmt> stmts;
    if (const auto* s = body.as<SeqStmtNode>()) stmts = s->seq;
    else stmts = {body};
    struct Info {
      bool fixed;  // uses the loop variable, calls something opaque or touches an opaque scope
      BufferAccess access;
    };
    bool loop_opaque = false;
    std::vector<Info> info;
    for (const Stmt& s : stmts) {
      bool opaque = has_opaque_call(s);
      loop_opaque |= opaque;
      info.push_back({uses_var(s, op->loop_var) || opaque, buffer_access(s)});
    }
    if (loop_opaque) {
      for (Info& in : info) {
        for (const auto* set : {&in.access.reads, &in.access.writes}) {
          for (const VarNode* d : *set) {
            auto it = scopes_.find(d);
            if (it == scopes_.end() || opt_.opaque_call_scopes.count(it->second)) in.fixed = true;
          }
        }
      }
    }
    std::vector<bool> hoisted(stmts.size(), false);
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t j = 0; j < stmts.size(); ++j) {
        if (hoisted[j] || info[j].fixed) continue;
        std::set<const VarNode*> writes_rest;
        bool early_reader = false;
        for (size_t k = 0; k < stmts.size(); ++k) {
          if (k == j || hoisted[k]) continue;
          writes_rest.insert(info[k].access.writes.begin(), info[k].access.writes.end());
          if (k < j && intersects(info[k].access.reads, info[j].access.writes)) early_reader = true;
        }
        if (early_reader || intersects(info[j].access.reads, info[j].access.writes) ||
            intersects(info[j].access.reads, writes_rest) || intersects(info[j].access.writes, writes_rest)) {
          continue;
        }
        hoisted[j] = true;
        changed = true;
      }
    }
    std::vector<Stmt> before, rest;
    for (size_t j = 0; j < stmts.size(); ++j) (hoisted[j] ? before : rest).push_back(stmts[j]);
    if (before.empty()) return rebuild();
    if (!rest.empty()) before.push_back(for_loop(op->loop_var, op->min, op->extent, op->kind, seq(std::move(rest)), op->thread_tag));
    return seq(std::move(before));
  }

 private:
  Analyzer& an_;
  const HoistOptions& opt_;
  std::map<const VarNode*, MemScope> scopes_;
};

std::map<const VarNode*, MemScope> scopes_of(const Stmt& s) {
  ScopeCollector c;
  c.visit_stmt(s);
  return std::move(c.scopes);
}

}  // namespace

Stmt hoist_loop_invariants(const Stmt& s, arith::Analyzer& analyzer, const HoistOptions& options) {
  TESSEL_CHECK(s.defined(), "hoist_loop_invariants of an undefined statement");
  return Hoister(analyzer, options, scopes_of(s)).mutate_stmt(s);
}

Stmt hoist_loop_invariants(const Stmt& s, const HoistOptions& options) {
  arith::Analyzer a;
  return hoist_loop_invariants(s, a, options);
}

PrimFunc hoist_loop_invariants(const PrimFunc& f, const HoistOptions& options) {
  TESSEL_CHECK(f.defined(), "hoist_loop_invariants of an undefined function");
  std::map<const VarNode*, MemScope> scopes = scopes_of(f->body);
  for (const auto& [param, buf] : f->buffer_map) scopes.emplace(buf->data.get(), buf->scope);
  arith::Analyzer a;
  Stmt body = Hoister(a, options, std::move(scopes)).mutate_stmt(f->body);
  return body.same_as(f->body) ? f : f.with_body(body);
}

}  // namespace tessel::tir::transforms
