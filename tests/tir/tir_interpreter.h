// A reference interpreter of TIR statements for the transform tests: it runs a statement (or a
// PrimFunc's body) against integer memories and is the oracle the passes are checked against
// (before and after a pass must leave the same buffer contents). Independent of
// compiler/tir/arith on purpose.
//
// What it runs: For of every kind (serially, in index order), LetStmt, AttrStmt (its body),
// AssertStmt (std::logic_error when the condition is false), IfThenElse, SeqStmt, Allocate
// (zero-filled memory for the body), BufferStore, and Evaluate of an immediate (a no-op) or of a
// call with a handler registered by on_call() (tests model DMA copies that way).
// Expressions: integer and bool values of any lane count (Ramp, Broadcast, vector loads and
// stores lane by lane), exact int64 arithmetic (floordiv/floormod round toward negative infinity,
// div/mod truncate), casts and stores wrap to the target type, Let and LetStmt (scalar or
// vector variables), Select (a scalar condition evaluates only the chosen side), likely(), the shift
// and bitwise_and intrinsics. Floats, handles outside calls and unknown calls throw
// std::logic_error.
//
// Memory: one int64 vector per data variable, in elements of the buffer type. An access with one
// index per dimension reads element elem_offset + sum(index_j * stride_j) (the buffer's strides or
// compact row-major); a single index into a buffer of more (or zero) dimensions is a flat offset
// from the start of the data (the form storage_flatten produces). Every access is bounds-checked.
// A buffer first touched without memory gets zero-filled memory of its span (its shape must be
// constant). tir.access_ptr(data, offset, extent, mask) offsets count from the start of the data.
//
// Strict mode (set_strict; the te and topi tests use it on lowered functions): memory made by an
// Allocate must be written before it is read, an access with one index per dimension must keep
// every index inside its dimension's extent, and a buffer without memory is an error instead of
// being zero-filled. run_buffers() runs a PrimFunc on parameter contents given by buffer name.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "compiler/tir/function.h"
#include "compiler/tir/intrinsics.h"
#include "tir_eval.h"

namespace tessel::tir::testing {

/// One lane of a BufferStore as record_stores() keeps it: the buffer's name, the access's
/// indices as written (before flattening) and the stored (wrapped) value.
struct StoreRecord {
  std::string buffer;
  std::vector<int64_t> indices;
  int64_t value;
  friend bool operator==(const StoreRecord&, const StoreRecord&) = default;
  friend bool operator<(const StoreRecord& a, const StoreRecord& b) {
    return std::tie(a.buffer, a.indices, a.value) < std::tie(b.buffer, b.indices, b.value);
  }
};

class Interpreter {
 public:
  /// Lane values of one expression (size 1 for scalars).
  using Value = std::vector<int64_t>;
  /// Runs an Evaluate(call) whose op has a handler.
  using CallHandler = std::function<void(Interpreter&, const CallNode*)>;

  /// A region named by a tir.access_ptr call.
  struct Region {
    const VarNode* data = nullptr;
    int64_t offset = 0;
    int64_t extent = 0;
    int64_t mask = 0;
  };

  /// Gives scalar variable `v` (a size parameter, say) the value `x`.
  void bind(const Var& v, int64_t x) { env_[v.get()] = x; }
  /// Registers the handler of calls named `op`.
  void on_call(std::string_view op, CallHandler h) { handlers_[std::string(op)] = std::move(h); }
  /// From now on appends every BufferStore lane to `*out` in execution order (nullptr stops).
  void record_stores(std::vector<StoreRecord>* out) { records_ = out; }
  /// Turns strict mode (see the top of this file) on or off.
  void set_strict(bool on) { strict_ = on; }

  /// The memory behind `data` (created empty when absent).
  std::vector<int64_t>& memory(const Var& data) { return mem_[data.get()]; }
  /// Zero-filled memory of the buffer's span (constant shape, strides and offset required).
  std::vector<int64_t>& alloc(const Buffer& b) {
    std::vector<int64_t>& m = mem_[b->data.get()];
    m.assign(static_cast<size_t>(span(b)), 0);
    return m;
  }
  /// Memory of the buffer's span filled with a deterministic pattern of small signed values
  /// (wrapped to the buffer type).
  std::vector<int64_t>& fill_pattern(const Buffer& b, int64_t seed) {
    std::vector<int64_t>& m = alloc(b);
    for (size_t i = 0; i < m.size(); ++i) m[i] = wrap(b->dtype, (static_cast<int64_t>(i) * 7 + seed * 13) % 23 - 11);
    return m;
  }

  /// The number of elements a buffer's accesses can reach: elem_offset + 1 +
  /// sum((shape_j - 1) * stride_j), or 0 for an empty shape.
  int64_t span(const Buffer& b) {
    std::vector<Expr> strides = b.effective_strides();
    int64_t last = scalar(b->elem_offset);
    for (size_t j = 0; j < b->shape.size(); ++j) {
      int64_t n = scalar(b->shape[j]);
      if (n <= 0) return 0;
      last += (n - 1) * scalar(strides[j]);
    }
    return last + 1;
  }

  /// Lane values of `e`.
  Value eval(const Expr& e) {
    auto ops = binary_operands(e);
    if (ops.a) {
      Value a = eval(*ops.a), b = eval(*ops.b);
      if (a.size() != b.size()) throw std::logic_error("lane mismatch in a binary operation");
      Value r(a.size());
      for (size_t i = 0; i < a.size(); ++i) r[i] = binary(e.kind(), a[i], b[i]);
      if (e.dtype().is_integer()) {
        for (int64_t& x : r) x = wrap(e.dtype(), x);
      }
      return r;
    }
    switch (e.kind()) {
      case ExprKind::kIntImm: return {e.as<IntImmNode>()->value};
      case ExprKind::kVar: {
        if (e.dtype().is_vector()) {
          auto vt = vec_env_.find(e.as<VarNode>());
          if (vt == vec_env_.end()) throw std::logic_error("unbound vector variable " + e.as<VarNode>()->name);
          return vt->second;
        }
        auto it = env_.find(e.as<VarNode>());
        if (it == env_.end()) throw std::logic_error("unbound variable " + e.as<VarNode>()->name);
        return {it->second};
      }
      case ExprKind::kNot: {
        Value a = eval(e.as<NotNode>()->a);
        for (int64_t& x : a) x = !x;
        return a;
      }
      case ExprKind::kSelect: {
        const auto* s = e.as<SelectNode>();
        Value c = eval(s->cond);
        // A scalar condition evaluates only the chosen side (topi's padding reads out of bounds on
        // the other); a vector condition evaluates both.
        if (c.size() == 1) return eval(c[0] ? s->true_value : s->false_value);
        Value t = eval(s->true_value), f = eval(s->false_value);
        for (size_t i = 0; i < t.size(); ++i) t[i] = c[c.size() == 1 ? 0 : i] ? t[i] : f[i];
        return t;
      }
      case ExprKind::kCast: {
        Value v = eval(e.as<CastNode>()->value);
        for (int64_t& x : v) x = wrap(e.dtype(), x);
        return v;
      }
      case ExprKind::kRamp: {
        const auto* r = e.as<RampNode>();
        int64_t base = scalar(r->base), stride = scalar(r->stride);
        Value v(static_cast<size_t>(r->lanes));
        for (int i = 0; i < r->lanes; ++i) v[static_cast<size_t>(i)] = base + i * stride;
        return v;
      }
      case ExprKind::kBroadcast: {
        const auto* b = e.as<BroadcastNode>();
        return Value(static_cast<size_t>(b->lanes), scalar(b->value));
      }
      case ExprKind::kLet: {
        const auto* l = e.as<LetNode>();
        Value v = eval(l->value);
        if (v.size() != 1) {
          ScopedVector bound(vec_env_, l->var.get(), std::move(v));
          return eval(l->body);
        }
        Scoped bound(env_, l->var.get(), v[0]);
        return eval(l->body);
      }
      case ExprKind::kBufferLoad: {
        const auto* l = e.as<BufferLoadNode>();
        std::vector<int64_t> pos = positions(l->buffer, l->indices);
        ensure_memory(l->buffer);
        Value v(pos.size());
        for (size_t i = 0; i < pos.size(); ++i) v[i] = load(l->buffer->data.get(), pos[i]);
        return v;
      }
      case ExprKind::kCall: {
        const auto* c = e.as<CallNode>();
        if (c->op == intrin::kLikely) return eval(c->args[0]);
        if (c->op == intrin::kShiftRight || c->op == intrin::kShiftLeft || c->op == intrin::kBitwiseAnd) {
          Value a = eval(c->args[0]), b = eval(c->args[1]);
          for (size_t i = 0; i < a.size(); ++i) {
            if (c->op != intrin::kBitwiseAnd && (b[i] < 0 || b[i] >= 64)) {
              throw std::logic_error("shift by " + std::to_string(b[i]));
            }
            if (c->op == intrin::kShiftRight) a[i] >>= b[i];
            else if (c->op == intrin::kShiftLeft) a[i] = wrap(e.dtype(), static_cast<int64_t>(static_cast<uint64_t>(a[i]) << b[i]));
            else a[i] &= b[i];
          }
          return a;
        }
        throw std::logic_error("cannot evaluate call " + c->op);
      }
      default: throw std::logic_error("cannot evaluate expression kind " + std::to_string(static_cast<int>(e.kind())));
    }
  }

  /// The value of a scalar expression.
  int64_t scalar(const Expr& e) {
    Value v = eval(e);
    if (v.size() != 1) throw std::logic_error("expected a scalar");
    return v[0];
  }

  /// The region of a tir.access_ptr call.
  Region region(const Expr& ptr) {
    const auto* c = ptr.as<CallNode>();
    if (!c || c->op != intrin::kAccessPtr || c->args.size() != 4) throw std::logic_error("not an access_ptr");
    const auto* data = c->args[0].as<VarNode>();
    if (!data) throw std::logic_error("access_ptr of a non-variable");
    return Region{data, scalar(c->args[1]), scalar(c->args[2]), scalar(c->args[3])};
  }
  /// The memory behind a data variable that already has memory.
  std::vector<int64_t>& memory_at(const VarNode* data) {
    auto it = mem_.find(data);
    if (it == mem_.end()) throw std::logic_error("no memory for " + data->name);
    return it->second;
  }
  /// Element `flat` of the memory behind `data` (bounds-checked; in strict mode an element of an
  /// Allocate's memory must have been written).
  int64_t load(const VarNode* data, int64_t flat) {
    std::vector<int64_t>& m = memory_at(data);
    size_t p = checked(data->name, m, flat);
    auto w = written_.find(data);
    if (w != written_.end() && !w->second[p]) {
      throw std::logic_error("read of unwritten element " + std::to_string(flat) + " of " + data->name);
    }
    return m[p];
  }
  /// Stores `v` (unwrapped) into element `flat` of the memory behind `data` (bounds-checked).
  void store(const VarNode* data, int64_t flat, int64_t v) {
    std::vector<int64_t>& m = memory_at(data);
    size_t p = checked(data->name, m, flat);
    m[p] = v;
    auto w = written_.find(data);
    if (w != written_.end()) w->second[p] = true;
  }

  void run(const Stmt& s) {
    switch (s.kind()) {
      case StmtKind::kFor: {
        const auto* f = s.as<ForNode>();
        int64_t mn = scalar(f->min), ext = scalar(f->extent);
        for (int64_t i = mn; i < mn + ext; ++i) {
          Scoped bound(env_, f->loop_var.get(), i);
          run(f->body);
        }
        return;
      }
      case StmtKind::kIfThenElse: {
        const auto* i = s.as<IfThenElseNode>();
        if (scalar(i->cond)) run(i->then_case);
        else if (i->else_case.defined()) run(i->else_case);
        return;
      }
      case StmtKind::kSeqStmt:
        for (const Stmt& x : s.as<SeqStmtNode>()->seq) run(x);
        return;
      case StmtKind::kLetStmt: {
        const auto* l = s.as<LetStmtNode>();
        Value v = eval(l->value);
        if (v.size() != 1) {
          ScopedVector bound(vec_env_, l->var.get(), std::move(v));
          run(l->body);
          return;
        }
        Scoped bound(env_, l->var.get(), v[0]);
        run(l->body);
        return;
      }
      case StmtKind::kAttrStmt: run(s.as<AttrStmtNode>()->body); return;
      case StmtKind::kAssertStmt: {
        const auto* a = s.as<AssertStmtNode>();
        if (!scalar(a->cond)) throw std::logic_error("assertion failed: " + a->message);
        run(a->body);
        return;
      }
      case StmtKind::kAllocate: {
        const auto* a = s.as<AllocateNode>();
        const VarNode* d = a->buffer->data.get();
        if (mem_.count(d)) throw std::logic_error("allocate of live memory " + d->name);
        alloc(a->buffer);
        if (strict_) written_[d].assign(mem_[d].size(), false);
        run(a->body);
        mem_.erase(d);
        written_.erase(d);
        return;
      }
      case StmtKind::kBufferStore: {
        const auto* b = s.as<BufferStoreNode>();
        Value v = eval(b->value);
        std::vector<int64_t> pos = positions(b->buffer, b->indices);
        if (v.size() != pos.size()) throw std::logic_error("store lanes differ from index lanes");
        ensure_memory(b->buffer);
        for (size_t i = 0; i < pos.size(); ++i) store(b->buffer->data.get(), pos[i], wrap(b->buffer->dtype, v[i]));
        ++stores_;
        if (records_) record(b, v);
        return;
      }
      case StmtKind::kEvaluate: {
        const Expr& v = s.as<EvaluateNode>()->value;
        if (v.as<IntImmNode>()) return;
        const auto* c = v.as<CallNode>();
        auto it = c ? handlers_.find(c->op) : handlers_.end();
        if (it == handlers_.end()) throw std::logic_error("cannot run evaluate of " + (c ? c->op : std::string("an expression")));
        it->second(*this, c);
        return;
      }
    }
  }

  /// Binds the function's scalar parameters from `scalars` (by parameter name) and runs its body.
  void run(const PrimFunc& f, const std::map<std::string, int64_t>& scalars = {}) {
    for (const Var& p : f->params) {
      if (p.dtype().is_handle()) continue;
      auto it = scalars.find(p.name());
      if (it == scalars.end()) throw std::logic_error("no value for parameter " + p.name());
      bind(p, it->second);
    }
    run(f->body);
  }

  /// Runs `f`'s body with its parameter buffers' contents given by buffer name (each exactly the
  /// buffer's span); returns every parameter buffer's contents after the run, by name.
  /// std::logic_error for a buffer without contents or with the wrong element count.
  std::map<std::string, std::vector<int64_t>> run_buffers(const PrimFunc& f,
                                                          std::map<std::string, std::vector<int64_t>> contents) {
    for (const auto& [param, buf] : f->buffer_map) {
      auto it = contents.find(buf->name);
      if (it == contents.end()) throw std::logic_error("no contents for buffer " + buf->name);
      if (static_cast<int64_t>(it->second.size()) != span(buf)) {
        throw std::logic_error("buffer " + buf->name + " needs " + std::to_string(span(buf)) + " elements");
      }
      mem_[buf->data.get()] = std::move(it->second);
    }
    run(f->body);
    std::map<std::string, std::vector<int64_t>> out;
    for (const auto& [param, buf] : f->buffer_map) out[buf->name] = mem_.at(buf->data.get());
    return out;
  }

  /// BufferStores executed so far (each vector store counts once).
  int64_t stores() const { return stores_; }

  /// `x` wrapped to an integer or bool type.
  static int64_t wrap(DataType t, int64_t x) {
    if (t.is_bool()) return x != 0;
    if (!t.is_integer()) throw std::logic_error("non-integer type " + t.str());
    if (t.bits >= 64) return x;
    uint64_t mask = (uint64_t{1} << t.bits) - 1;
    uint64_t u = static_cast<uint64_t>(x) & mask;
    if (t.is_int() && (u >> (t.bits - 1))) return static_cast<int64_t>(u) - static_cast<int64_t>(mask) - 1;
    return static_cast<int64_t>(u);
  }

 private:
  // Binds a variable for a scope and restores what it shadowed.
  struct Scoped {
    Scoped(Env& env, const VarNode* v, int64_t x) : env_(env), v_(v) {
      auto it = env.find(v);
      if (it != env.end()) old_ = it->second, had_ = true;
      env[v] = x;
    }
    ~Scoped() {
      if (had_) env_[v_] = old_;
      else env_.erase(v_);
    }
    Env& env_;
    const VarNode* v_;
    int64_t old_ = 0;
    bool had_ = false;
  };

  // The same for a vector variable (a vectorised let).
  struct ScopedVector {
    ScopedVector(std::map<const VarNode*, Value>& env, const VarNode* v, Value x) : env_(env), v_(v) {
      if (env.count(v)) throw std::logic_error("vector let rebinds " + v->name);
      env[v] = std::move(x);
    }
    ~ScopedVector() { env_.erase(v_); }
    std::map<const VarNode*, Value>& env_;
    const VarNode* v_;
  };

  static int64_t binary(ExprKind k, int64_t a, int64_t b) {
    switch (k) {
      case ExprKind::kAdd: return a + b;
      case ExprKind::kSub: return a - b;
      case ExprKind::kMul: return a * b;
      case ExprKind::kDiv:
      case ExprKind::kMod:
      case ExprKind::kFloorDiv:
      case ExprKind::kFloorMod:
        if (b == 0) throw std::logic_error("division by zero");
        if (k == ExprKind::kDiv) return a / b;
        if (k == ExprKind::kMod) return a % b;
        if (k == ExprKind::kFloorDiv) return ref_floordiv(a, b);
        return ref_floormod(a, b);
      case ExprKind::kMin: return std::min(a, b);
      case ExprKind::kMax: return std::max(a, b);
      case ExprKind::kEQ: return a == b;
      case ExprKind::kNE: return a != b;
      case ExprKind::kLT: return a < b;
      case ExprKind::kLE: return a <= b;
      case ExprKind::kGT: return a > b;
      case ExprKind::kGE: return a >= b;
      case ExprKind::kAnd: return a && b;
      case ExprKind::kOr: return a || b;
      default: throw std::logic_error("not a binary kind");
    }
  }

  // Flat element positions (one per lane) of an access.
  std::vector<int64_t> positions(const Buffer& b, const std::vector<Expr>& indices) {
    std::vector<Value> idx;
    size_t lanes = 1;
    for (const Expr& i : indices) {
      idx.push_back(eval(i));
      lanes = std::max(lanes, idx.back().size());
    }
    auto lane = [&](const Value& v, size_t l) { return v.size() == 1 ? v[0] : v.at(l); };
    std::vector<int64_t> pos(lanes);
    if (indices.size() == 1 && b.ndim() != 1) {
      for (size_t l = 0; l < lanes; ++l) pos[l] = lane(idx[0], l);
      return pos;
    }
    if (indices.size() != b.ndim()) throw std::logic_error("wrong index count for " + b->name);
    if (strict_) {
      for (size_t j = 0; j < idx.size(); ++j) {
        int64_t ext = scalar(b->shape[j]);
        for (int64_t i : idx[j]) {
          if (i < 0 || i >= ext) {
            throw std::logic_error("buffer " + b->name + ": index " + std::to_string(i) + " of dimension " +
                                   std::to_string(j) + " outside [0, " + std::to_string(ext) + ")");
          }
        }
      }
    }
    std::vector<Expr> strides = b.effective_strides();
    int64_t off = scalar(b->elem_offset);
    for (size_t l = 0; l < lanes; ++l) {
      int64_t p = off;
      for (size_t j = 0; j < idx.size(); ++j) p += lane(idx[j], l) * scalar(strides[j]);
      pos[l] = p;
    }
    return pos;
  }

  // Appends the lanes of a store to records_.
  void record(const BufferStoreNode* b, const Value& v) {
    std::vector<Value> idx;
    for (const Expr& i : b->indices) idx.push_back(eval(i));
    for (size_t l = 0; l < v.size(); ++l) {
      StoreRecord r{b->buffer->name, {}, wrap(b->buffer->dtype, v[l])};
      for (const Value& i : idx) r.indices.push_back(i.size() == 1 ? i[0] : i.at(l));
      records_->push_back(std::move(r));
    }
  }

  // Gives a buffer first touched without memory zero-filled memory (an error in strict mode).
  void ensure_memory(const Buffer& b) {
    if (mem_.count(b->data.get())) return;
    if (strict_) throw std::logic_error("buffer " + b->name + " accessed outside its allocation");
    alloc(b);
  }

  static size_t checked(const std::string& name, const std::vector<int64_t>& m, int64_t p) {
    if (p < 0 || p >= static_cast<int64_t>(m.size())) {
      throw std::logic_error("access of " + name + " at " + std::to_string(p) + " outside its " +
                             std::to_string(m.size()) + " elements");
    }
    return static_cast<size_t>(p);
  }

  Env env_;
  std::map<const VarNode*, Value> vec_env_;
  std::map<const VarNode*, std::vector<int64_t>> mem_;
  std::map<const VarNode*, std::vector<bool>> written_;  // Allocate memory in strict mode
  std::map<std::string, CallHandler> handlers_;
  std::vector<StoreRecord>* records_ = nullptr;
  bool strict_ = false;
  int64_t stores_ = 0;
};

/// A test handler for a call `op(dst_ptr, src_ptr)`: copies min(extents) elements from the source
/// region to the destination region (a stand-in for a DMA load or store).
inline void copy_call(Interpreter& in, const CallNode* c) {
  if (c->args.size() < 2) throw std::logic_error("copy call needs two access_ptr arguments");
  Interpreter::Region dst = in.region(c->args[0]), src = in.region(c->args[1]);
  if (!(dst.mask & 2) || !(src.mask & 1)) throw std::logic_error("copy call with the wrong access masks");
  std::vector<int64_t>& d = in.memory_at(dst.data);
  std::vector<int64_t>& s = in.memory_at(src.data);
  int64_t n = std::min(dst.extent, src.extent);
  for (int64_t i = 0; i < n; ++i) {
    int64_t di = dst.offset + i, si = src.offset + i;
    if (di < 0 || si < 0 || di >= static_cast<int64_t>(d.size()) || si >= static_cast<int64_t>(s.size())) {
      throw std::logic_error("copy call outside its memory");
    }
    d[static_cast<size_t>(di)] = s[static_cast<size_t>(si)];
  }
}

/// Runs `s` on `in` (test.copy handled by copy_call) with buffer k of `bufs` filled by
/// fill_pattern(bufs[k], first_seed + k); returns the buffers' contents after the run, in order.
inline std::vector<std::vector<int64_t>> run_on_patterns(const Stmt& s, const std::vector<Buffer>& bufs,
                                                         int64_t first_seed = 1, Interpreter in = Interpreter()) {
  in.on_call("test.copy", copy_call);
  for (size_t k = 0; k < bufs.size(); ++k) in.fill_pattern(bufs[k], first_seed + static_cast<int64_t>(k));
  in.run(s);
  std::vector<std::vector<int64_t>> out;
  for (const Buffer& b : bufs) out.push_back(in.memory(b->data));
  return out;
}

}  // namespace tessel::tir::testing
