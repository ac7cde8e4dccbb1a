#include "compiler/tir/printer.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "support/error.h"

namespace tessel::tir {

namespace {

class Printer {
 public:
  std::string out;

  const std::string& name_of(const VarNode* v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    std::string base = v->name.empty() ? "v" : v->name;
    std::string n = base;
    for (int k = 1; used_.count(n); ++k) n = base + "_" + std::to_string(k);
    used_.insert(n);
    return names_.emplace(v, n).first->second;
  }
  const std::string& name_of(const Buffer& b) {
    auto it = buf_names_.find(b.get());
    if (it != buf_names_.end()) return it->second;
    std::string base = b->name.empty() ? "buf" : b->name;
    std::string n = base;
    for (int k = 1; used_buf_.count(n); ++k) n = base + "_" + std::to_string(k);
    used_buf_.insert(n);
    return buf_names_.emplace(b.get(), n).first->second;
  }

  std::string expr(const Expr& e) {
    if (!e.defined()) return "<undefined>";
    if (is_binary(e.kind())) {
      auto ops = binary_operands(e);
      std::string_view op = binary_op_name(e.kind());
      if (e.kind() == ExprKind::kMin || e.kind() == ExprKind::kMax || e.kind() == ExprKind::kFloorDiv ||
          e.kind() == ExprKind::kFloorMod) {
        return fmt::format("{}({}, {})", op, expr(*ops.a), expr(*ops.b));
      }
      return fmt::format("({} {} {})", expr(*ops.a), op, expr(*ops.b));
    }
    switch (e.kind()) {
      case ExprKind::kIntImm: {
        int64_t v = e.as<IntImmNode>()->value;
        if (e.dtype() == DataType::int32()) return std::to_string(v);
        if (e.dtype().is_bool()) return v ? "True" : "False";
        return fmt::format("{}({})", e.dtype().str(), v);
      }
      case ExprKind::kFloatImm: return fmt::format("{}({})", e.dtype().str(), e.as<FloatImmNode>()->value);
      case ExprKind::kStringImm: return quote(e.as<StringImmNode>()->value);
      case ExprKind::kVar: return name_of(e.as<VarNode>());
      case ExprKind::kNot: return "!" + expr(e.as<NotNode>()->a);
      case ExprKind::kSelect: {
        const auto* s = e.as<SelectNode>();
        return fmt::format("select({}, {}, {})", expr(s->cond), expr(s->true_value), expr(s->false_value));
      }
      case ExprKind::kCast: return fmt::format("{}({})", e.dtype().str(), expr(e.as<CastNode>()->value));
      case ExprKind::kBufferLoad: {
        const auto* l = e.as<BufferLoadNode>();
        return fmt::format("{}[{}]", name_of(l->buffer), list(l->indices));
      }
      case ExprKind::kRamp: {
        const auto* r = e.as<RampNode>();
        return fmt::format("ramp({}, {}, {})", expr(r->base), expr(r->stride), r->lanes);
      }
      case ExprKind::kBroadcast: {
        const auto* b = e.as<BroadcastNode>();
        return fmt::format("broadcast({}, {})", expr(b->value), b->lanes);
      }
      case ExprKind::kLet: {
        const auto* l = e.as<LetNode>();
        std::string v = expr(l->value);
        return fmt::format("(let {} = {} in {})", name_of(l->var.get()), v, expr(l->body));
      }
      case ExprKind::kCall: {
        const auto* c = e.as<CallNode>();
        return fmt::format("{}<{}>({})", c->op, c->dtype.str(), list(c->args));
      }
      default: break;
    }
    throw_internal_error("printer: unknown expression kind {}", static_cast<int>(e.kind()));
  }

  std::string list(const std::vector<Expr>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + expr(v[i]);
    return s;
  }

  static std::string quote(const std::string& s) {
    std::string q = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') q += '\\', q += c;
      else if (c == '\n') q += "\\n";
      else if (static_cast<unsigned char>(c) < 0x20) q += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
      else q += c;
    }
    return q + "\"";
  }

  std::string buffer_decl(const Buffer& b) {
    std::string s = fmt::format("{}: {}[{}] {}", name_of(b), b->dtype.str(), list(b->shape), to_string(b->scope));
    if (!b->strides.empty()) s += fmt::format(" strides [{}]", list(b->strides));
    if (!is_const_int(b->elem_offset, 0)) s += fmt::format(" offset {}", expr(b->elem_offset));
    return s;
  }

  void line(int depth, const std::string& text) {
    out.append(static_cast<size_t>(depth) * 2, ' ');
    out += text;
    out += '\n';
  }

  void stmt(const Stmt& s, int d) {
    if (!s.defined()) return;
    switch (s.kind()) {
      case StmtKind::kLetStmt: {
        const auto* l = s.as<LetStmtNode>();
        std::string v = expr(l->value);
        line(d, fmt::format("let {}: {} = {}", name_of(l->var.get()), l->var.dtype().str(), v));
        stmt(l->body, d);
        return;
      }
      case StmtKind::kAttrStmt: {
        const auto* a = s.as<AttrStmtNode>();
        line(d, fmt::format("attr [{}] {} = {}", a->node.defined() ? expr(a->node) : "", quote(a->key), expr(a->value)));
        stmt(a->body, d);
        return;
      }
      case StmtKind::kAssertStmt: {
        const auto* a = s.as<AssertStmtNode>();
        line(d, fmt::format("assert({}, {})", expr(a->cond), quote(a->message)));
        stmt(a->body, d);
        return;
      }
      case StmtKind::kAllocate: {
        const auto* a = s.as<AllocateNode>();
        name_of(a->buffer->data.get());
        line(d, fmt::format("allocate {} {{", buffer_decl(a->buffer)));
        stmt(a->body, d + 1);
        line(d, "}");
        return;
      }
      case StmtKind::kBufferStore: {
        const auto* st = s.as<BufferStoreNode>();
        line(d, fmt::format("{}[{}] = {}", name_of(st->buffer), list(st->indices), expr(st->value)));
        return;
      }
      case StmtKind::kFor: {
        const auto* f = s.as<ForNode>();
        std::string head = fmt::format("for {} in range({}, {})", name_of(f->loop_var.get()), expr(f->min), expr(f->extent));
        if (f->kind == ForKind::kThreadBinding) head += fmt::format(" thread_binding({})", quote(f->thread_tag));
        else if (f->kind != ForKind::kSerial) head += fmt::format(" {}", to_string(f->kind));
        if (f->kind == ForKind::kVirtualThread && !f->thread_tag.empty()) head += fmt::format("({})", quote(f->thread_tag));
        line(d, head + " {");
        stmt(f->body, d + 1);
        line(d, "}");
        return;
      }
      case StmtKind::kIfThenElse: {
        const auto* i = s.as<IfThenElseNode>();
        line(d, fmt::format("if ({}) {{", expr(i->cond)));
        stmt(i->then_case, d + 1);
        if (i->else_case.defined()) {
          line(d, "} else {");
          stmt(i->else_case, d + 1);
        }
        line(d, "}");
        return;
      }
      case StmtKind::kSeqStmt: {
        const auto* q = s.as<SeqStmtNode>();
        if (q->seq.empty()) line(d, "no_op");
        for (const Stmt& c : q->seq) stmt(c, d);
        return;
      }
      case StmtKind::kEvaluate: line(d, expr(s.as<EvaluateNode>()->value)); return;
    }
    throw_internal_error("printer: unknown statement kind {}", static_cast<int>(s.kind()));
  }

  void func(const PrimFunc& f) {
    std::string params;
    for (size_t i = 0; i < f->params.size(); ++i) {
      params += fmt::format("{}{}: {}", i ? ", " : "", name_of(f->params[i].get()), f->params[i].dtype().str());
    }
    std::string head = fmt::format("func {}({})", f->name, params);
    if (!f->attrs.empty()) {
      std::string a;
      for (const auto& [k, v] : f->attrs) a += fmt::format("{}{}: {}", a.empty() ? "" : ", ", k, quote(v));
      head += " attrs {" + a + "}";
    }
    line(0, head + " {");
    for (const auto& [p, b] : f->buffer_map) {
      line(1, fmt::format("buffer {} over {}", buffer_decl(b), name_of(p.get())));
    }
    stmt(f->body, 1);
    line(0, "}");
  }

 private:
  std::map<const VarNode*, std::string> names_;
  std::map<const BufferNode*, std::string> buf_names_;
  std::set<std::string> used_;      // variable names
  std::set<std::string> used_buf_;  // buffer names (a separate namespace: `A[i]` vs `A`)
};

}  // namespace

std::string to_text(const Expr& e) {
  Printer p;
  return p.expr(e);
}

std::string to_text(const Stmt& s) {
  Printer p;
  p.stmt(s, 0);
  return p.out;
}

std::string to_text(const PrimFunc& f) {
  Printer p;
  p.func(f);
  return p.out;
}

std::string to_text(const IRModule& m) {
  std::string s;
  for (size_t i = 0; i < m.functions().size(); ++i) {
    if (i) s += '\n';
    s += to_text(m.functions()[i]);
  }
  return s;
}

}  // namespace tessel::tir
