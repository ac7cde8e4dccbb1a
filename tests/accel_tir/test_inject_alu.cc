// inject_alu: element-wise acc loop nests under pragma_alu -> accel.alu_uop kernels with the ALU
// opcode, immediate or vector operand; other forms and immediates that do not fit are user errors.
#include <gtest/gtest.h>

#include "compiler/backend/accel/tir/inject_alu.h"
#include "compiler/tir/printer.h"
#include "compiler/tir/transforms/renew_defs.h"
#include "tests/accel_tir/accel_tir_test_util.h"
#include "tests/tir/tir_test_util.h"

namespace tessel::compiler::accel_tir::testing {
namespace {

using isa::AluOp;
using isa::Module;
using tir::ForKind;

Stmt loop(const Var& v, int extent, Stmt body) { return tir::for_loop(v, 0, extent, ForKind::kSerial, body); }
Stmt pragma(Stmt body) { return tir::attr_stmt(Expr(), std::string(ta::kPragmaAlu), 1, body); }

/// The loop variables of one nest (each nest binds its own).
struct Vars {
  Var r{"r"}, j{"j"}, l{"l"};
};

struct Acc {
  Buffer acc{"acc_buf", DataType::int32(), {2, 2, 1, 16}, MemScope::kAcc};
  Buffer acc2{"acc2_buf", DataType::int32(), {4, 1, 16}, MemScope::kAcc};
  tir::PrimFunc func(Stmt body) const {
    return tir::PrimFunc("alu", {}, {}, tir::allocate(acc, tir::allocate(acc2, body)));
  }
  Expr x(const Vars& v) const { return tir::buffer_load(acc, {v.r, v.j, 0, v.l}); }
  Expr y(const Vars& v) const { return tir::buffer_load(acc2, {v.r * 2 + v.j, 0, v.l}); }
  /// pragma_alu { for r < 2, j < 2, l < 16: acc[r, j, 0, l] = value }
  Stmt nest(const Vars& v, Expr value) const {
    return pragma(loop(v.r, 2, loop(v.j, 2, loop(v.l, 16, tir::buffer_store(acc, value, {v.r, v.j, 0, v.l})))));
  }
  Stmt want(const Vars& v, AluOp op, bool use_imm, int32_t imm, bool vector = false) const {
    Expr dst = ta::sram_ptr(isa::HwConfig{}, acc, v.r * 2 + v.j, 1, 3);
    Expr src = vector ? ta::sram_ptr(isa::HwConfig{}, acc2, v.r * 2 + v.j, 1, 1) : dst;
    Stmt u = ta::alu_uop(op, use_imm, imm, dst, src);
    return ta::coproc_scope(Module::kCompute,
                            tir::attr_stmt(Expr(), std::string(ta::kUopKernel), 1, loop(v.r, 2, loop(v.j, 2, u))));
  }
};

Expr call2(std::string_view op, Expr a, Expr b) { return tir::call(DataType::int32(), std::string(op), {a, b}); }

TEST(InjectAlu, OpcodesImmediatesAndVectorOperands) {
  Acc a;
  std::vector<Vars> v(9);
  const std::vector<Stmt> before = {
      a.nest(v[0], a.x(v[0]) + 256),
      a.nest(v[1], call2(tir::intrin::kShiftRight, a.x(v[1]), 9)),
      a.nest(v[2], tir::max(a.x(v[2]), -128)),
      a.nest(v[3], tir::min(127, a.x(v[3]))),
      a.nest(v[4], a.x(v[4]) - 5),
      a.nest(v[5], call2(tir::intrin::kShiftLeft, a.x(v[5]), 2)),
      a.nest(v[6], a.x(v[6]) * 3),
      a.nest(v[7], a.y(v[7]) + a.x(v[7])),
      a.nest(v[8], a.x(v[8]) * a.y(v[8])),
  };
  const std::vector<Stmt> want = {
      a.want(v[0], AluOp::kAdd, true, 256),      a.want(v[1], AluOp::kShr, true, 9),
      a.want(v[2], AluOp::kMax, true, -128),     a.want(v[3], AluOp::kMin, true, 127),
      a.want(v[4], AluOp::kAdd, true, -5),       a.want(v[5], AluOp::kShr, true, -2),
      a.want(v[6], AluOp::kMul, true, 3),        a.want(v[7], AluOp::kAdd, false, 0, true),
      a.want(v[8], AluOp::kMul, false, 0, true),
  };
  const tir::PrimFunc after = inject_alu(a.func(tir::seq(before)), isa::HwConfig{});
  tir::testing::expect_same_func(after, a.func(tir::seq(want)));
  expect_golden("inject_alu_ops.ir", tir::to_text(after));
}

TEST(InjectAlu, ElementFollowsTheConfig) {
  // LOG_BATCH=1: an acc element is 2x16 (32 values); one loop over rows
  isa::HwConfig cfg;
  cfg.log_batch = 1;
  Buffer acc("acc_buf", DataType::int32(), {3, 2, 16}, MemScope::kAcc);
  Var r("r"), bb("bb"), l("l");
  Stmt nest = pragma(loop(
      r, 2,
      loop(bb, 2, loop(l, 16, tir::buffer_store(acc, tir::buffer_load(acc, {r + 1, bb, l}) + 1, {r + 1, bb, l})))));
  auto fn = [&](Stmt b) { return tir::PrimFunc("alu", {}, {}, tir::allocate(acc, b)); };
  Expr dst = ta::sram_ptr(cfg, acc, r + 1, 1, 3);
  Stmt want = ta::coproc_scope(
      Module::kCompute,
      tir::attr_stmt(Expr(), std::string(ta::kUopKernel), 1, loop(r, 2, ta::alu_uop(AluOp::kAdd, true, 1, dst, dst))));
  tir::testing::expect_same_func(inject_alu(fn(nest), cfg), fn(want));
  // on the default configuration (1x16 elements) bb is a second kernel loop over rows
  Expr dst1 = ta::sram_ptr(isa::HwConfig{}, acc, r * 2 + bb + 2, 1, 3);
  Stmt want1 = ta::coproc_scope(Module::kCompute,
                                tir::attr_stmt(Expr(), std::string(ta::kUopKernel), 1,
                                               loop(r, 2, loop(bb, 2, ta::alu_uop(AluOp::kAdd, true, 1, dst1, dst1)))));
  tir::testing::expect_same_func(inject_alu(fn(nest), isa::HwConfig{}), fn(want1));
}

TEST(InjectAlu, OutOfPlaceUpdateIsZeroAddThenTheOp) {
  // acc[r, j, 0, l] = acc2[r * 2 + j, 0, l] * 3: MUL acc by 0, ADD acc2 into it, MUL it by 3
  Acc a;
  Vars v;
  const tir::PrimFunc after = inject_alu(a.func(a.nest(v, a.y(v) * 3)), isa::HwConfig{});
  const isa::HwConfig cfg;
  Expr dst = ta::sram_ptr(cfg, a.acc, v.r * 2 + v.j, 1, 3);
  Expr src = ta::sram_ptr(cfg, a.acc2, v.r * 2 + v.j, 1, 1);
  auto kernel = [&](AluOp op, bool use_imm, int32_t imm, Expr s) {
    return ta::coproc_scope(Module::kCompute,
                            tir::attr_stmt(Expr(), std::string(ta::kUopKernel), 1,
                                           loop(v.r, 2, loop(v.j, 2, ta::alu_uop(op, use_imm, imm, dst, s)))));
  };
  tir::testing::expect_same_func(
      after, a.func(tir::seq({kernel(AluOp::kMul, true, 0, dst), tir::transforms::renew_defs(kernel(AluOp::kAdd, false, 0, src)),
                              tir::transforms::renew_defs(kernel(AluOp::kMul, true, 3, dst))})));
}

TEST(InjectAlu, FormsTheAluCannotRunAreUserErrors) {
  Acc a;
  const isa::HwConfig cfg;
  Vars v;
  auto run = [&](Expr value) { inject_alu(a.func(a.nest(v, value)), cfg); };
  EXPECT_EQ(user_error([&] { run(a.x(v) + 40000); }),
            "the pragma_alu nest at loop 'r': the immediate 40000 does not fit the 16-bit signed ALU immediate "
            "field [-32768, 32767]");
  EXPECT_EQ(user_error([&] { run(a.x(v) - (-32768)); }),
            "the pragma_alu nest at loop 'r': the immediate 32768 does not fit the 16-bit signed ALU immediate "
            "field [-32768, 32767]");
  EXPECT_EQ(user_error([&] { run(tir::buffer_load(a.acc2, {v.r, 0, v.l}) + tir::buffer_load(a.acc, {v.r, v.j, 0, 0})); }),
            "the pragma_alu nest at loop 'r': (acc2_buf[r, 0, l] + acc_buf[r, j, 0, 0]) reads 'acc_buf' at other "
            "indices than it stores (an out-of-place update must read other acc buffers)");
  EXPECT_EQ(user_error([&] { run(tir::cast(DataType::int32(), tir::buffer_load(Buffer("g", DataType::int8(), {64}), {v.l})) + 1); }),
            "the pragma_alu nest at loop 'r': (int32(g[l]) + 1) reads neither the stored element of 'acc_buf' nor "
            "another acc buffer (dst = a op v with op +, *, max, min, shift_right (or a - imm, shift_left(a, imm)), a "
            "the stored element or an acc load, and v an immediate or an acc load)");
  EXPECT_EQ(user_error([&] { run(a.x(v) - a.y(v)); }),
            "the pragma_alu nest at loop 'r': (acc_buf[r, j, 0, l] - acc2_buf[((r * 2) + j), 0, l]) subtracts a "
            "non-constant (the ALU has no vector subtraction)");
  EXPECT_EQ(user_error([&] { run(tir::floordiv(a.x(v), 2)); }),
            "the pragma_alu nest at loop 'r': floordiv(acc_buf[r, j, 0, l], 2) is not an ALU operation (dst = a op v "
            "with op +, *, max, min, shift_right (or a - imm, shift_left(a, imm)), a the stored element or an acc "
            "load, and v an immediate or an acc load)");
  EXPECT_EQ(user_error([&] {
              run(a.x(v) + tir::buffer_load(a.acc2, {v.r, 0, v.l * 2}));
            }),
            "loop 'l' of the pragma_alu nest at loop 'r': the operand 'acc2_buf' steps by 2, but the innermost loops "
            "must walk one 1x16 local.acc_buffer element contiguously (step 1 here)");
  Buffer g("g8", DataType::int8(), {16});
  EXPECT_EQ(user_error([&] {
              inject_alu(
                  tir::PrimFunc(
                      "f", {}, {},
                      tir::allocate(
                          g, pragma(loop(v.l, 16, tir::buffer_store(g, tir::make_const(DataType::int8(), 0), {v.l}))))),
                  cfg);
            }),
            "the pragma_alu nest at loop 'l' stores into global buffer 'g8' of int8; the ALU updates int32 acc-scope "
            "buffers");
}

}  // namespace
}  // namespace tessel::compiler::accel_tir::testing
