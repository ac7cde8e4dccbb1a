// TIR statements: immutable nodes behind `Stmt` handles (see expr.h for the conventions).
//
//   LetStmt      let var = value; body
//   AttrStmt     an annotation of `body`: key, the node it is about (a Var, or null) and a value,
//                e.g. ("virtual_thread", vt, 2), ("pragma_dma_copy", x, 1), ("coproc_scope", -, 2)
//   AssertStmt   check cond at run time (message names the failure), then body
//   Allocate     a buffer (scope, dtype, constant shape) live for body
//   BufferStore  buffer[indices] = value
//   For          loop_var in [min, min + extent) with a kind: serial, parallel, vectorized,
//                unrolled, thread-binding (thread_tag names the GPU axis) or virtual-thread
//   IfThenElse   if (cond) then_case else else_case (else optional)
//   SeqStmt      statements in order
//   Evaluate     an expression for its effect (an intrinsic call: DMA copy, GEMM, ALU, sync)
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/tir/expr.h"

namespace tessel::tir {

enum class StmtKind : uint8_t {
  kLetStmt,
  kAttrStmt,
  kAssertStmt,
  kAllocate,
  kBufferStore,
  kFor,
  kIfThenElse,
  kSeqStmt,
  kEvaluate,
};

struct StmtNode {
  explicit StmtNode(StmtKind k) : kind(k) {}
  virtual ~StmtNode() = default;
  StmtNode(const StmtNode&) = delete;
  StmtNode& operator=(const StmtNode&) = delete;
  const StmtKind kind;
};

/// A handle to an immutable statement node; may be null.
class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(std::shared_ptr<const StmtNode> n) : node_(std::move(n)) {}
  bool defined() const { return node_ != nullptr; }
  const StmtNode* get() const { return node_.get(); }
  const StmtNode* operator->() const { return node_.get(); }
  StmtKind kind() const { return node_->kind; }
  template <typename T>
  const T* as() const {
    return node_ && node_->kind == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
  }
  bool same_as(const Stmt& o) const { return node_ == o.node_; }

 private:
  std::shared_ptr<const StmtNode> node_;
};

/// Loop kinds (TVM's ForKind plus Halide's vectorized/unrolled and VTA's virtual threads).
enum class ForKind : uint8_t {
  kSerial,
  kParallel,        ///< iterations may run on different CPU threads
  kVectorized,      ///< constant extent; becomes Ramp/Broadcast lanes (transforms/vectorize)
  kUnrolled,        ///< constant extent; replicated (transforms/unroll)
  kThreadBinding,   ///< bound to a GPU axis named by thread_tag ("blockIdx.x", "threadIdx.y")
  kVirtualThread,   ///< interleaved copies (transforms/inject_virtual_thread)
};
std::string_view to_string(ForKind k);

struct LetStmtNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kLetStmt;
  LetStmtNode(Var v, Expr val, Stmt b) : StmtNode(kKind), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
  const Var var;
  const Expr value;
  const Stmt body;
};
struct AttrStmtNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kAttrStmt;
  AttrStmtNode(Expr n, std::string k, Expr v, Stmt b)
      : StmtNode(kKind), node(std::move(n)), key(std::move(k)), value(std::move(v)), body(std::move(b)) {}
  const Expr node;  ///< what the attribute is about (usually a Var); may be null
  const std::string key;
  const Expr value;
  const Stmt body;
};
struct AssertStmtNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kAssertStmt;
  AssertStmtNode(Expr c, std::string m, Stmt b) : StmtNode(kKind), cond(std::move(c)), message(std::move(m)), body(std::move(b)) {}
  const Expr cond;
  const std::string message;
  const Stmt body;
};
struct AllocateNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kAllocate;
  AllocateNode(Buffer buf, Stmt b) : StmtNode(kKind), buffer(std::move(buf)), body(std::move(b)) {}
  const Buffer buffer;  ///< its data var is defined inside body
  const Stmt body;
};
struct BufferStoreNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kBufferStore;
  BufferStoreNode(Buffer buf, Expr v, std::vector<Expr> i)
      : StmtNode(kKind), buffer(std::move(buf)), value(std::move(v)), indices(std::move(i)) {}
  const Buffer buffer;
  const Expr value;
  const std::vector<Expr> indices;
};
struct ForNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kFor;
  ForNode(Var v, Expr mn, Expr ext, ForKind k, Stmt b, std::string tag)
      : StmtNode(kKind), loop_var(std::move(v)), min(std::move(mn)), extent(std::move(ext)), kind(k), body(std::move(b)), thread_tag(std::move(tag)) {}
  const Var loop_var;
  const Expr min, extent;
  const ForKind kind;
  const Stmt body;
  /// kThreadBinding: the GPU axis; kVirtualThread: "" (a vthread: threads share what does not
  /// depend on them) or "cthread" (every allocation inside is per thread,
  /// transforms/inject_virtual_threads.h); else ""
  const std::string thread_tag;
};
struct IfThenElseNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kIfThenElse;
  IfThenElseNode(Expr c, Stmt t, Stmt e) : StmtNode(kKind), cond(std::move(c)), then_case(std::move(t)), else_case(std::move(e)) {}
  const Expr cond;
  const Stmt then_case;
  const Stmt else_case;  ///< may be null
};
struct SeqStmtNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kSeqStmt;
  explicit SeqStmtNode(std::vector<Stmt> s) : StmtNode(kKind), seq(std::move(s)) {}
  const std::vector<Stmt> seq;
};
struct EvaluateNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kEvaluate;
  explicit EvaluateNode(Expr v) : StmtNode(kKind), value(std::move(v)) {}
  const Expr value;
};

// ---- constructors (type-checked; InternalError on a mismatch) ----

Stmt let_stmt(Var var, Expr value, Stmt body);
Stmt attr_stmt(Expr node, std::string key, Expr value, Stmt body);
Stmt assert_stmt(Expr cond, std::string message, Stmt body);
Stmt allocate(Buffer buffer, Stmt body);
/// buffer[indices] = value; value has the buffer's dtype (with the index lanes).
Stmt buffer_store(Buffer buffer, Expr value, std::vector<Expr> indices);
/// A loop; min and extent have the loop variable's (integer) type.
Stmt for_loop(Var var, Expr min, Expr extent, ForKind kind, Stmt body, std::string thread_tag = "");
Stmt if_then_else(Expr cond, Stmt then_case, Stmt else_case = Stmt());
/// A sequence; nested sequences are flattened and null statements dropped. One statement is
/// returned as itself; none gives an empty SeqStmt (a no-op).
Stmt seq(std::vector<Stmt> stmts);
Stmt evaluate(Expr value);
/// The no-op statement (an empty SeqStmt).
Stmt no_op();
/// True for an empty SeqStmt or Evaluate of an immediate.
bool is_no_op(const Stmt& s);

}  // namespace tessel::tir
