// allocate_scratchpads: scratchpad Allocate nodes -> SRAM rows (accel.sram_base attributes),
// stack-like reuse of sibling allocations, row counts per configuration, capacity errors.
#include <gtest/gtest.h>

#include "compiler/backend/accel/tir/allocate_scratchpads.h"
#include "compiler/backend/accel/tir/common.h"
#include "compiler/tir/printer.h"
#include "tests/accel_tir/accel_tir_test_util.h"

namespace tessel::compiler::accel_tir::testing {
namespace {

/// seq(alloc a (inp, 32 rows) { alloc b (inp, 16 rows) { alloc w (wgt) { x } } }, alloc c (inp, 8
/// rows) { x }, alloc l (local) { x }, alloc acc (acc int32, 4 elements of 1x16) { x })
struct Fixture {
  Buffer a{"a_buf", DataType::int8(), {32, 1, 16}, MemScope::kInp};
  Buffer b{"b_buf", DataType::int8(), {16, 1, 16}, MemScope::kInp};
  Buffer w{"w_buf", DataType::int8(), {3, 16, 16}, MemScope::kWgt};
  Buffer c{"c_buf", DataType::int8(), {8, 1, 16}, MemScope::kInp};
  Buffer l{"l_buf", DataType::int32(), {7}, MemScope::kLocal};
  Buffer acc{"acc_buf", DataType::int32(), {4, 1, 16}, MemScope::kAcc};
  tir::PrimFunc func() const {
    Stmt x = tir::evaluate(0);
    Stmt body = tir::seq({tir::allocate(a, tir::allocate(b, tir::allocate(w, x))), tir::allocate(c, x),
                          tir::allocate(l, x), tir::allocate(acc, x)});
    return tir::PrimFunc("f", {}, {}, body);
  }
};

TEST(AllocateScratchpads, RowsAndReuse) {
  Fixture fx;
  const tir::PrimFunc out = allocate_scratchpads(fx.func(), isa::HwConfig{});
  const auto p = sram_placements(out->body);
  ASSERT_EQ(p.size(), 5u);  // the local buffer gets none
  EXPECT_EQ(p.at(fx.a->data.get()).row, 0);
  EXPECT_EQ(p.at(fx.b->data.get()).row, 32);  // nested: after a
  EXPECT_EQ(p.at(fx.w->data.get()).row, 0);   // its own scratchpad
  EXPECT_EQ(p.at(fx.c->data.get()).row, 0);   // sibling of a: a's rows are free again
  EXPECT_EQ(p.at(fx.acc->data.get()).row, 0);
  EXPECT_EQ(p.count(fx.l->data.get()), 0u);
  expect_golden("allocate_scratchpads.ir", tir::to_text(out));
}

TEST(AllocateScratchpads, RowCountsFollowTheConfig) {
  // an ACC element is BATCH x BLOCK_OUT int32: 64 bytes by default, 32 with LOG_BLOCK 3, 128
  // with LOG_BATCH 1; the buffer holds 4*16 int32 = 256 bytes
  const Buffer acc("acc_buf", DataType::int32(), {4, 1, 16}, MemScope::kAcc);
  const Buffer acc2("acc2", DataType::int32(), {1}, MemScope::kAcc);
  const Stmt body = tir::allocate(acc, tir::allocate(acc2, tir::evaluate(0)));
  const tir::PrimFunc f("f", {}, {}, body);
  const int64_t want[3] = {4, 8, 2};
  int i = 0;
  for (const auto& [name, cfg] : test_configs()) {
    const auto p = sram_placements(allocate_scratchpads(f, cfg)->body);
    EXPECT_EQ(p.at(acc2->data.get()).row, want[i]) << name;  // acc2 starts after acc's rows
    ++i;
  }
}

TEST(AllocateScratchpads, OverCapacityNamesBufferRowsNeededAndAvailable) {
  const isa::HwConfig cfg;  // INP depth 2048
  const Buffer big("big", DataType::int8(), {3000, 1, 16}, MemScope::kInp);
  EXPECT_EQ(
      user_error([&] {
        allocate_scratchpads(tir::PrimFunc("f", {}, {}, tir::allocate(big, tir::evaluate(0))), cfg);
      }),
      "scratchpad local.inp_buffer over capacity: buffer 'big' needs 3000 rows at row 0, 2048 of 2048 rows "
      "available");
  const Buffer a("a", DataType::int8(), {1500, 1, 16}, MemScope::kInp);
  const Buffer b("b", DataType::int8(), {600, 1, 16}, MemScope::kInp);
  const tir::PrimFunc nested("f", {}, {}, tir::allocate(a, tir::allocate(b, tir::evaluate(0))));
  EXPECT_EQ(
      user_error([&] { allocate_scratchpads(nested, cfg); }),
      "scratchpad local.inp_buffer over capacity: buffer 'b' needs 600 rows at row 1500, 548 of 2048 rows "
      "available");
  // siblings reuse rows, so the same two buffers fit side by side in a sequence
  const tir::PrimFunc siblings(
      "f", {}, {}, tir::seq({tir::allocate(a, tir::evaluate(0)), tir::allocate(b, tir::evaluate(0))}));
  EXPECT_NO_THROW(allocate_scratchpads(siblings, cfg));
  // the matmul's ping-pong buffers: 2 threads * tn 4 * kb rows of WGT (1024 rows by default)
  MatmulSpec s;
  s.ping_pong = true;
  s.tm = 4;
  s.tn = 4;
  s.k = 16 * 128;  // 1024 rows: fits exactly
  EXPECT_NO_THROW(allocate_scratchpads(make_matmul_tir(cfg, s).func, cfg));
  s.k = 16 * 160;  // 1280 rows
  EXPECT_EQ(
      user_error([&] { allocate_scratchpads(make_matmul_tir(cfg, s).func, cfg); }),
      "scratchpad local.wgt_buffer over capacity: buffer 'w_buf' needs 1280 rows at row 0, 1024 of 1024 rows "
      "available");
}

TEST(AllocateScratchpads, NonConstantShapeIsAUserError) {
  const Var n("n");
  const Buffer a("a", DataType::int8(), {n, 1, 16}, MemScope::kInp);
  EXPECT_EQ(user_error([&] {
              allocate_scratchpads(tir::PrimFunc("f", {n}, {}, tir::allocate(a, tir::evaluate(0))),
                                   isa::HwConfig{});
            }),
            "buffer 'a' has a non-constant shape ((n * 16) elements)");
}

}  // namespace
}  // namespace tessel::compiler::accel_tir::testing
