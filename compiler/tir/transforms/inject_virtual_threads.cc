#include "compiler/tir/transforms/inject_virtual_threads.h"

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "compiler/tir/functor.h"
#include "compiler/tir/intrinsics.h"
#include "compiler/tir/printer.h"
#include "compiler/tir/transforms/renew_defs.h"
#include "compiler/tir/transforms/transform_util.h"
#include "compiler/tir/transforms/simplify.h"
#include "compiler/tir/util.h"
#include "support/error.h"

namespace tessel::tir::transforms {

namespace {

using arith::Analyzer;

constexpr std::string_view kVirtualThreadAttr = "virtual_thread";
constexpr std::string_view kCthreadTag = "cthread";

// The set T of variables and buffer data variables that depend on the thread (the header's
// step 1).
class ThreadDeps {
 public:
  ThreadDeps(const Var& vt, bool share) : share_(share) { t_.insert(vt.get()); }

  void compute(const Stmt& body) {
    for (;;) {
      size_t before = t_.size();
      sites_.clear();
      walk(body, false);
      apply_rules();
      if (t_.size() == before) return;
    }
  }

  bool uses(const Expr& e) const {
    return e.defined() && uses_var_if(e, [&](const VarNode* v) { return t_.count(v) > 0; });
  }
  bool uses(const Stmt& s) const {
    return uses_var_if(s, [&](const VarNode* v) { return t_.count(v) > 0; });
  }
  bool contains(const VarNode* v) const { return t_.count(v) > 0; }

 private:
  struct Site {
    bool dependent;
    BufferAccess access;
  };

  void add(const VarNode* v) { t_.insert(v); }

  // Let expressions whose value uses T put their variable in T.
  void note_lets(const Expr& e) {
    if (!e.defined()) return;
    post_order_visit(e, [&](const Expr& x) {
      if (const auto* l = x.as<LetNode>(); l && uses(l->value)) add(l->var.get());
    });
  }

  void read_site(const std::vector<Expr>& exprs, bool dependent) {
    Site site{dependent, {}};
    for (const Expr& e : exprs) {
      if (!e.defined()) continue;
      BufferAccess a = buffer_access(evaluate(e));
      site.access.reads.insert(a.reads.begin(), a.reads.end());
      site.access.writes.insert(a.writes.begin(), a.writes.end());
    }
    sites_.push_back(std::move(site));
  }

  void walk(const Stmt& s, bool ctrl) {
    if (!s.defined()) return;
    switch (s.kind()) {
      case StmtKind::kFor: {
        const auto* op = s.as<ForNode>();
        note_lets(op->min), note_lets(op->extent);
        bool c = ctrl || uses(op->min) || uses(op->extent);
        if (c) add(op->loop_var.get());
        read_site({op->min, op->extent}, c);
        walk(op->body, c);
        return;
      }
      case StmtKind::kIfThenElse: {
        const auto* op = s.as<IfThenElseNode>();
        note_lets(op->cond);
        bool c = ctrl || uses(op->cond);
        read_site({op->cond}, c);
        walk(op->then_case, c);
        walk(op->else_case, c);
        return;
      }
      case StmtKind::kLetStmt: {
        const auto* op = s.as<LetStmtNode>();
        note_lets(op->value);
        bool d = uses(op->value);
        if (d) add(op->var.get());
        read_site({op->value}, ctrl || d);
        walk(op->body, ctrl);
        return;
      }
      case StmtKind::kAttrStmt: {
        const auto* op = s.as<AttrStmtNode>();
        bool c = ctrl || uses(op->value);
        read_site({op->value}, c);
        walk(op->body, c);
        return;
      }
      case StmtKind::kAssertStmt: {
        const auto* op = s.as<AssertStmtNode>();
        note_lets(op->cond);
        bool c = ctrl || uses(op->cond);
        read_site({op->cond}, c);
        walk(op->body, c);
        return;
      }
      case StmtKind::kAllocate:
        // a cthread: every allocation inside it is per thread
        if (!share_) add(s.as<AllocateNode>()->buffer->data.get());
        walk(s.as<AllocateNode>()->body, ctrl);
        return;
      case StmtKind::kSeqStmt:
        for (const Stmt& x : s.as<SeqStmtNode>()->seq) walk(x, ctrl);
        return;
      case StmtKind::kBufferStore: {
        const auto* op = s.as<BufferStoreNode>();
        note_lets(op->value);
        bool d = ctrl || uses(op->value);
        for (const Expr& i : op->indices) note_lets(i), d = d || uses(i);
        if (d) add(op->buffer->data.get());
        sites_.push_back({d || contains(op->buffer->data.get()), buffer_access(s)});
        return;
      }
      case StmtKind::kEvaluate: {
        const Expr& v = s.as<EvaluateNode>()->value;
        note_lets(v);
        bool d = ctrl || uses(v) || has_opaque_call(s);
        if (d) {
          post_order_visit(v, [&](const Expr& e) {
            if (!is_access_ptr(e)) return;
            const auto* c = e.as<CallNode>();
            const auto* data = c->args[0].as<VarNode>();
            const int64_t* mask = as_const_int(c->args[3]);
            if (data && mask && (*mask & 2)) add(data);
          });
        }
        sites_.push_back({d, buffer_access(s)});
        return;
      }
    }
  }

  // The "run once" rule of the header.
  void apply_rules() {
    std::set<const VarNode*> shared_writes, shared_reads;
    for (size_t i = 0; i < sites_.size(); ++i) {
      if (!sites_[i].dependent) {
        shared_writes.insert(sites_[i].access.writes.begin(), sites_[i].access.writes.end());
        shared_reads.insert(sites_[i].access.reads.begin(), sites_[i].access.reads.end());
      }
    }
    for (const VarNode* d : shared_writes) {
      if (shared_reads.count(d)) add(d);
    }
  }

  bool share_;
  std::set<const VarNode*> t_;
  std::vector<Site> sites_;
};

// Step 2 and 3 of the header for one virtual thread.
class Pusher {
 public:
  Pusher(const ThreadDeps& deps, const Var& vt, const Expr& mn, int n, const VirtualThreadOptions& opts)
      : deps_(deps), opts_(opts), n_(n), vars_(n) {
    for (int k = 0; k < n; ++k) vars_[k][vt] = mn + make_const(vt.dtype(), k);
  }

  Stmt push(const Stmt& s) {
    if (!s.defined() || !depends(s)) return s;
    switch (s.kind()) {
      case StmtKind::kSeqStmt: {
        // A run of consecutive statements that each become n copies becomes n groups, thread
        // by thread (each thread's statements in order): the threads are independent, and a
        // thread's whole run then follows the one before it (its loads, then its compute, ...),
        // rather than every statement waiting for all threads' copies of the one before.
        std::vector<Stmt> out, run;
        auto flush = [&] {
          for (int k = 0; k < n_; ++k) {
            for (const Stmt& x : run) out.push_back(instance(k == 0 ? x : renew_defs(x), k));
          }
          run.clear();
        };
        for (const Stmt& x : s.as<SeqStmtNode>()->seq) {
          if (copied_whole(x)) {
            run.push_back(x);
            continue;
          }
          flush();
          out.push_back(push(x));
        }
        flush();
        return seq(std::move(out));
      }
      case StmtKind::kFor: {
        const auto* op = s.as<ForNode>();
        if (deps_.uses(op->min) || deps_.uses(op->extent)) break;
        return for_loop(op->loop_var, op->min, op->extent, op->kind, push(op->body), op->thread_tag);
      }
      case StmtKind::kIfThenElse: {
        const auto* op = s.as<IfThenElseNode>();
        if (deps_.uses(op->cond)) break;
        return if_then_else(op->cond, push(op->then_case), push(op->else_case));
      }
      case StmtKind::kLetStmt: {
        const auto* op = s.as<LetStmtNode>();
        if (!deps_.uses(op->value)) return let_stmt(op->var, op->value, push(op->body));
        std::vector<Var> vs;
        std::vector<Expr> values;
        for (int k = 0; k < n_; ++k) {
          values.push_back(instance(op->value, k));
          vs.emplace_back(op->var.name(), op->var.dtype());
        }
        for (int k = 0; k < n_; ++k) vars_[k][op->var] = vs[k];
        Stmt body = push(op->body);
        for (int k = n_; k-- > 0;) body = let_stmt(vs[k], values[k], body);
        return body;
      }
      case StmtKind::kAttrStmt: {
        const auto* op = s.as<AttrStmtNode>();
        if (deps_.uses(op->value) || deps_.uses(op->node) || opts_.opaque_attrs.count(op->key)) break;
        return attr_stmt(op->node, op->key, op->value, push(op->body));
      }
      case StmtKind::kAssertStmt: {
        const auto* op = s.as<AssertStmtNode>();
        if (deps_.uses(op->cond)) break;
        return assert_stmt(op->cond, op->message, push(op->body));
      }
      case StmtKind::kAllocate: {
        const auto* op = s.as<AllocateNode>();
        const Buffer& b = op->buffer;
        if (!deps_.contains(b->data.get())) return allocate(b, push(op->body));
        Buffer nb = replicate(b);  // before the body: its accesses use the replicas
        return allocate(nb, push(op->body));
      }
      default: break;
    }
    std::vector<Stmt> copies;
    for (int k = 0; k < n_; ++k) copies.push_back(instance(k == 0 ? s : renew_defs(s), k));
    return seq(std::move(copies));
  }

 private:
  struct Replica {
    Buffer buffer;    // n replicas, the outer dimension selects one
    Buffer original;  // the allocated buffer
    Expr outer;       // elements per replica (the outer stride)
  };

  bool depends(const Stmt& s) const { return deps_.uses(s) || has_opaque_call(s); }

  /// push(s) would make n copies of the whole of `s` (the default case below).
  bool copied_whole(const Stmt& s) const {
    if (!s.defined() || !depends(s)) return false;
    switch (s.kind()) {
      case StmtKind::kSeqStmt: return false;
      case StmtKind::kFor: {
        const auto* op = s.as<ForNode>();
        return deps_.uses(op->min) || deps_.uses(op->extent);
      }
      case StmtKind::kIfThenElse: return deps_.uses(s.as<IfThenElseNode>()->cond);
      case StmtKind::kLetStmt: return false;
      case StmtKind::kAttrStmt: {
        const auto* op = s.as<AttrStmtNode>();
        return deps_.uses(op->value) || deps_.uses(op->node) || opts_.opaque_attrs.count(op->key) > 0;
      }
      case StmtKind::kAssertStmt: return deps_.uses(s.as<AssertStmtNode>()->cond);
      case StmtKind::kAllocate: return false;
      default: return true;
    }
  }

  Buffer replicate(const Buffer& b) {
    Expr outer;
    std::vector<Expr> strides;
    std::vector<Expr> shape{make_const(DataType::int32(), n_)};
    shape.insert(shape.end(), b->shape.begin(), b->shape.end());
    if (b->strides.empty() && is_const_int(b->elem_offset, 0)) {
      outer = b.num_elements();
    } else {
      std::vector<Expr> es = b.effective_strides();
      outer = b->elem_offset + 1;
      for (size_t j = 0; j < b.ndim(); ++j) outer = outer + (b->shape[j] - 1) * es[j];
      strides.push_back(outer);
      strides.insert(strides.end(), es.begin(), es.end());
    }
    Analyzer an;
    outer = an.simplify(outer);
    if (!strides.empty()) strides[0] = outer;
    Buffer nb(b->name, b->dtype, std::move(shape), b->scope, std::move(strides), b->elem_offset);
    replicas_[b->data.get()] = Replica{nb, b, outer};
    for (int k = 0; k < n_; ++k) vars_[k][b->data] = nb->data;
    return nb;
  }

  class Instance : public IRMutator {
   public:
    Instance(Pusher& p, int k) : p_(p), k_(k) {}

   protected:
    using IRMutator::mutate;
    Expr mutate(const VarNode*, const Expr& self) override {
      const auto& m = p_.vars_[k_];
      auto it = m.find(Var::from(self));
      return it == m.end() ? self : it->second;
    }
    Expr mutate(const BufferLoadNode* op, const Expr& self) override {
      auto it = p_.replicas_.find(op->buffer->data.get());
      if (it == p_.replicas_.end()) return IRMutator::mutate(op, self);
      std::vector<Expr> idx;
      mutate_exprs(op->indices, idx);
      return buffer_load(it->second.buffer, indices(it->second, op->buffer, idx));
    }
    Stmt mutate(const BufferStoreNode* op, const Stmt& self) override {
      auto it = p_.replicas_.find(op->buffer->data.get());
      if (it == p_.replicas_.end()) return IRMutator::mutate(op, self);
      Expr v = mutate_expr(op->value);
      std::vector<Expr> idx;
      mutate_exprs(op->indices, idx);
      return buffer_store(it->second.buffer, v, indices(it->second, op->buffer, idx));
    }
    Expr mutate(const CallNode* op, const Expr& self) override {
      if (!is_access_ptr(self)) return IRMutator::mutate(op, self);
      const auto* data = op->args[0].as<VarNode>();
      auto it = data ? p_.replicas_.find(data) : p_.replicas_.end();
      if (it == p_.replicas_.end()) return IRMutator::mutate(op, self);
      std::vector<Expr> args{it->second.buffer->data, thread_offset(it->second) + mutate_expr(op->args[1]),
                             mutate_expr(op->args[2]), op->args[3]};
      return call(op->dtype, op->op, std::move(args));
    }

   private:
    Expr thread_offset(const Replica& r) const { return make_const(r.outer.dtype(), k_) * r.outer; }
    std::vector<Expr> indices(const Replica& r, const Buffer& view, const std::vector<Expr>& idx) const {
      if (view.same_as(r.original) && idx.size() == view.ndim()) {
        std::vector<Expr> out{make_const(DataType::int32(), k_)};
        out.insert(out.end(), idx.begin(), idx.end());
        return out;
      }
      // Another view of the data, or a flat index: an offset from the start of the replicas.
      Expr flat = (idx.size() == 1 && view.ndim() != 1) ? idx[0] : view.flat_index(idx);
      Expr off = thread_offset(r);
      if (flat.dtype().is_vector()) off = broadcast(off, flat.dtype().lanes);
      return {off + flat};
    }
    Pusher& p_;
    int k_;
  };

  Stmt instance(const Stmt& s, int k) { return Instance(*this, k).mutate_stmt(s); }
  Expr instance(const Expr& e, int k) { return Instance(*this, k).mutate_expr(e); }

  const ThreadDeps& deps_;
  const VirtualThreadOptions& opts_;
  int n_;
  std::vector<std::map<Var, Expr, VarLess>> vars_;
  std::map<const VarNode*, Replica> replicas_;
};

class Injector : public IRMutator {
 public:
  Injector(Analyzer& a, const VirtualThreadOptions& opts) : an_(a), opts_(opts) {}

 protected:
  using IRMutator::mutate;

  Stmt mutate(const ForNode* op, const Stmt& self) override {
    Stmt inner = op->body;
    if (op->kind == ForKind::kVirtualThread) {
      const auto* attr = inner.as<AttrStmtNode>();
      if (attr && attr->key == kVirtualThreadAttr && attr->node.same_as(op->loop_var)) {
        auto a = arith::as_const(an_.simplify(attr->value)), e = arith::as_const(an_.simplify(op->extent));
        if (!a || !e || *a != *e) {
          throw_user_error("inject_virtual_threads: virtual thread '{}' has extent {} but its attribute says {}",
                           op->loop_var.name(), to_text(op->extent), to_text(attr->value));
        }
        inner = attr->body;
      }
    }
    Stmt body = with_fact(an_, op->loop_var, Range{op->min, op->extent}, [&] { return mutate_stmt(inner); });
    if (op->kind == ForKind::kVirtualThread) {
      return inject(op->loop_var, op->min, op->extent, body, op->thread_tag != kCthreadTag);
    }
    if (body.same_as(op->body)) return self;
    return for_loop(op->loop_var, op->min, op->extent, op->kind, body, op->thread_tag);
  }

  Stmt mutate(const AttrStmtNode* op, const Stmt& self) override {
    if (op->key != kVirtualThreadAttr || !op->node.as<VarNode>()) return IRMutator::mutate(op, self);
    Var vt = Var::from(op->node);
    Stmt body = with_fact(an_, vt, Range{make_const(vt.dtype(), 0), op->value}, [&] { return mutate_stmt(op->body); });
    return inject(vt, make_const(vt.dtype(), 0), op->value, body, true);
  }

 private:
  Stmt inject(const Var& vt, const Expr& mn, const Expr& extent, const Stmt& body, bool share) {
    Expr ext = an_.simplify(extent);
    const int64_t* n = as_const_int(ext);
    if (!n) throw_user_error("inject_virtual_threads: virtual thread '{}' has non-constant extent {}", vt.name(), to_text(ext));
    if (*n <= 0) return no_op();
    if (*n == 1) return simplify(substitute(body, vt, mn), an_);
    TESSEL_CHECK(*n <= (int64_t{1} << 20), "virtual thread {} extent {}", vt.name(), *n);
    ThreadDeps deps(vt, share);
    deps.compute(body);
    Pusher p(deps, vt, mn, static_cast<int>(*n), opts_);
    return simplify(p.push(body), an_);
  }

  Analyzer& an_;
  const VirtualThreadOptions& opts_;
};

}  // namespace

Stmt inject_virtual_threads(const Stmt& s, arith::Analyzer& analyzer, const VirtualThreadOptions& opts) {
  TESSEL_CHECK(s.defined(), "inject_virtual_threads of an undefined statement");
  return Injector(analyzer, opts).mutate_stmt(s);
}

Stmt inject_virtual_threads(const Stmt& s, arith::Analyzer& analyzer) {
  return inject_virtual_threads(s, analyzer, VirtualThreadOptions{});
}

Stmt inject_virtual_threads(const Stmt& s) {
  arith::Analyzer a;
  return inject_virtual_threads(s, a);
}

PrimFunc inject_virtual_threads(const PrimFunc& f, const VirtualThreadOptions& opts) {
  TESSEL_CHECK(f.defined(), "inject_virtual_threads of an undefined function");
  arith::Analyzer a;
  Stmt body = inject_virtual_threads(f->body, a, opts);
  return body.same_as(f->body) ? f : f.with_body(body);
}

PrimFunc inject_virtual_threads(const PrimFunc& f) { return inject_virtual_threads(f, VirtualThreadOptions{}); }

}  // namespace tessel::tir::transforms
