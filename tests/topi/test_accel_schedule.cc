// compiler/topi/accel: the GEMM intrinsic and the schedule templates for packed conv2d, packed
// dense and the residual qadd on the default configuration (lowered TIR goldens), the sizes of
// their knob spaces, and the UserErrors for knob values that do not fit the scratchpads; every
// point of the small layers' spaces run on the tir reference interpreter (accel.gemm_uop executed on the
// scratchpad buffers it points at) against runtime/qnn.h bit for bit.
#include <algorithm>

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/backend/accel/tir/accel_tir.h"
#include "compiler/te/lower.h"
#include "compiler/tir/printer.h"
#include "compiler/tir/verifier.h"
#include "compiler/topi/accel/schedule.h"
#include "compiler/target/accel_intrin.h"
#include "runtime/device.h"
#include "support/error.h"
#include "tests/te/te_test_util.h"
#include "tests/tir/tir_test_util.h"
#include "tests/topi/topi_test_util.h"

namespace tessel::topi::accel {
namespace {

using te::testing::user_error_of;
using tir::DataType;

std::vector<tir::Expr> S(std::initializer_list<int64_t> l) {
  std::vector<tir::Expr> v;
  for (int64_t x : l) v.push_back(tir::Expr(x));
  return v;
}

/// The point of `space` with the given inner sizes of its splits and knob values (by name).
te::ConfigEntity pick(const te::ConfigSpace& space, const std::map<std::string, int64_t>& want) {
  for (int64_t i = 0; i < space.size(); ++i) {
    te::ConfigEntity e = space.get(i);
    bool ok = true;
    for (const te::SubSpace& sub : space.subspaces()) {
      auto it = want.find(sub.name);
      if (it == want.end()) continue;
      const int64_t v = sub.kind == te::KnobKind::kSplit ? e.split(sub.name)[1] : e.knob(sub.name);
      ok = ok && v == it->second;
    }
    if (ok) return e;
  }
  ADD_FAILURE() << "no such point";
  return space.get(0);
}

RequantParams small_rq() {
  RequantParams rq;
  rq.multiplier = {1 << 10};
  rq.round = {1 << 13};
  rq.shift = {14};
  rq.out_add = {-3};
  return rq;
}

Conv2dLayer small_conv() {
  Conv2dLayer l;
  l.x = te::placeholder(S({1, 2, 4, 4, 1, 16}), DataType::int8(), "x");
  l.w = te::placeholder(S({2, 2, 3, 3, 16, 16}), DataType::int8(), "w");
  l.attrs.pad_top = l.attrs.pad_left = l.attrs.pad_bottom = l.attrs.pad_right = 1;
  l.rq = small_rq();
  return l;
}

int64_t divisors(int64_t n) {
  int64_t c = 0;
  for (int64_t d = 1; d <= n; ++d) c += n % d == 0;
  return c;
}

TEST(TopiAccelSchedule, Conv2dGolden) {
  const isa::HwConfig hw;
  Conv2dLayer l = small_conv();
  te::ConfigSpace space;
  conv2d_config_space(l, space);
  EXPECT_EQ(space.size(), divisors(2) * divisors(4) * divisors(4) * divisors(2) * 2);
  const te::ConfigEntity cfg = pick(space, {{"tile_oc", 1}, {"tile_h", 2}, {"tile_w", 4}, {"tile_ic", 1}, {"oc_nthread", 2}});
  ScheduledOp op = schedule_conv2d(l, hw, cfg);
  tir::PrimFunc f = lower_template(op, "conv2d");
  EXPECT_TRUE(tir::verify(f).empty());
  tir::testing::expect_golden_in("topi", "accel_conv2d.tir", tir::to_text(f));
}

TEST(TopiAccelSchedule, DenseGolden) {
  const isa::HwConfig hw;
  DenseLayer l;
  l.x = te::placeholder(S({1, 4, 1, 16}), DataType::int8(), "x");
  l.w = te::placeholder(S({4, 4, 16, 16}), DataType::int8(), "w");
  l.rq = small_rq();
  te::ConfigSpace space;
  dense_config_space(l, space);
  EXPECT_EQ(space.size(), divisors(4) * divisors(4) * 2);
  const te::ConfigEntity cfg = pick(space, {{"tile_oc", 2}, {"tile_ic", 2}, {"oc_nthread", 1}});
  ScheduledOp op = schedule_dense(l, hw, cfg);
  tir::PrimFunc f = lower_template(op, "dense");
  EXPECT_TRUE(tir::verify(f).empty());
  tir::testing::expect_golden_in("topi", "accel_dense.tir", tir::to_text(f));
}

TEST(TopiAccelSchedule, QaddGolden) {
  const isa::HwConfig hw;
  QaddLayer l;
  l.a = te::placeholder(S({1, 2, 4, 4, 1, 16}), DataType::int8(), "a");
  l.b = te::placeholder(S({1, 2, 4, 4, 1, 16}), DataType::int8(), "b");
  l.a_zero_point = 3;
  l.a_multiplier = 3;
  l.b_zero_point = -2;
  l.b_multiplier = 5;
  l.rq.round = {2};
  l.rq.shift = {2};
  l.rq.out_add = {1};
  te::ConfigSpace space;
  qadd_config_space(l, space);
  EXPECT_EQ(space.size(), divisors(4));
  ScheduledOp op = schedule_qadd(l, hw, pick(space, {{"tile_h", 2}}));
  tir::PrimFunc f = lower_template(op, "qadd");
  EXPECT_TRUE(tir::verify(f).empty());
  tir::testing::expect_golden_in("topi", "accel_qadd.tir", tir::to_text(f));
}

TEST(TopiAccelSchedule, KnobValuesThatDoNotFit) {
  const isa::HwConfig hw;
  Conv2dLayer l;
  l.x = te::placeholder(S({1, 8, 32, 32, 1, 16}), DataType::int8(), "x");
  l.w = te::placeholder(S({8, 8, 3, 3, 16, 16}), DataType::int8(), "w");
  l.attrs.pad_top = l.attrs.pad_left = l.attrs.pad_bottom = l.attrs.pad_right = 1;
  l.rq = small_rq();
  te::ConfigSpace space;
  conv2d_config_space(l, space);
  EXPECT_EQ(space.size(), divisors(8) * divisors(32) * divisors(32) * divisors(8) * 2);
  EXPECT_EQ(user_error_of([&] {
              schedule_conv2d(l, hw, pick(space, {{"tile_oc", 1}, {"tile_h", 32}, {"tile_w", 32}, {"tile_ic", 8}, {"oc_nthread", 1}}));
            }),
            "conv2d template: local.inp_buffer needs 9248 rows for knobs tile_ic=8, tile_h=32, tile_w=32 (input window "
            "34 x 34), capacity 2048 rows");
  {
    Conv2dLayer big;
    big.x = te::placeholder(S({1, 16, 8, 8, 1, 16}), DataType::int8(), "x");
    big.w = te::placeholder(S({16, 16, 3, 3, 16, 16}), DataType::int8(), "w");
    big.attrs.pad_top = big.attrs.pad_left = big.attrs.pad_bottom = big.attrs.pad_right = 1;
    big.rq = small_rq();
    te::ConfigSpace bs;
    conv2d_config_space(big, bs);
    EXPECT_EQ(user_error_of([&] {
                schedule_conv2d(big, hw, pick(bs, {{"tile_oc", 16}, {"tile_h", 1}, {"tile_w", 1}, {"tile_ic", 16}, {"oc_nthread", 1}}));
              }),
              "conv2d template: local.wgt_buffer needs 2304 rows for knobs oc_nthread=1, tile_oc=16, tile_ic=16 (kernel 3 "
              "x 3), capacity 1024 rows");
  }
  EXPECT_EQ(user_error_of([&] {
              schedule_conv2d(l, hw, pick(space, {{"tile_oc", 4}, {"tile_h", 32}, {"tile_w", 16}, {"tile_ic", 1}, {"oc_nthread", 2}}));
            }),
            "conv2d template: local.acc_buffer needs 4096 rows for knobs oc_nthread=2, tile_oc=4, tile_h=32, tile_w=16 (1 "
            "acc buffers), capacity 2048 rows");
  EXPECT_EQ(user_error_of([&] {
              schedule_conv2d(l, hw, pick(space, {{"tile_oc", 8}, {"tile_h", 1}, {"tile_w", 1}, {"tile_ic", 1}, {"oc_nthread", 2}}));
            }),
            "conv2d template: knob oc_nthread=2 does not divide the 1 outer channel-block iterations (tile_oc=8)");
  RequantParams pc = small_rq();
  pc.shift = {1, 2};
  l.rq = pc;
  EXPECT_EQ(user_error_of([&] { schedule_conv2d(l, hw, space.get(0)); }),
            "conv2d template: requantize requant: shift has 2 entries, expected 1 or 128 (channels)");
  // the constants' rows count: a per-channel multiplier (tile_oc rows per thread), a wide
  // clamp bound (one row) and the zero-point border tensor (one more tile)
  l.rq = small_rq();
  l.rq.multiplier.assign(128, 1 << 10);
  l.rq.multiplier[5] = 1 << 20;
  l.rq.acc_max = {1 << 20};
  const te::ConfigEntity fits =
      pick(space, {{"tile_oc", 4}, {"tile_h", 8}, {"tile_w", 16}, {"tile_ic", 1}, {"oc_nthread", 2}});
  EXPECT_NO_THROW(schedule_conv2d(l, hw, fits));  // 2 * 4 * 128 + 2 * 4 + 1 = 1033 rows
  l.x_zero_point = 3;
  EXPECT_EQ(user_error_of([&] { schedule_conv2d(l, hw, fits); }),
            "conv2d template: x_zero_point 3 needs the weights' values: w_values has 0 entries, w w has 147456 "
            "elements");
  l.w_values.assign(147456, 1);
  EXPECT_EQ(user_error_of([&] { schedule_conv2d(l, hw, fits); }),
            "conv2d template: local.acc_buffer needs 2057 rows for knobs oc_nthread=2, tile_oc=4, tile_h=8, "
            "tile_w=16 (1 acc buffers, 1 zero-point init buffer, 1 channel constants, 1 uniform constants), "
            "capacity 2048 rows");
  l.x_zero_point = 200;
  EXPECT_EQ(user_error_of([&] { schedule_conv2d(l, hw, fits); }),
            "conv2d template: x_zero_point 200 is outside [-128, 127]");
  l.x_zero_point = 0;
  l.bias.assign(20, 0);
  EXPECT_EQ(user_error_of([&] { schedule_conv2d(l, hw, fits); }),
            "conv2d template: bias has 20 entries, expected 128 (output channels: 8 blocks of 16)");
}


/// The interpreter with accel.gemm_uop: dst, src and wgt are access_ptr element offsets of the
/// acc, inp and wgt buffers (the first values of B x BO, B x BI, BO x BI blocks).
tir::testing::Interpreter gemm_interpreter(const isa::HwConfig& hw) {
  tir::testing::Interpreter in;
  in.set_strict(true);
  const int64_t bb = hw.batch(), bi = hw.block_in(), bo = hw.block_out();
  in.on_call(compiler::target::accel::kGemmUop, [=](tir::testing::Interpreter& it, const tir::CallNode* c) {
    auto ptr = [&](const tir::Expr& e) {
      const auto* p = e.as<tir::CallNode>();
      EXPECT_TRUE(p && p->op == tir::intrin::kAccessPtr);
      return std::make_pair(p->args[0].as<tir::VarNode>(), it.scalar(p->args[1]));
    };
    const auto dst = ptr(c->args[1]);
    const bool reset = it.scalar(c->args[0]) != 0;
    for (int64_t b = 0; b < bb; ++b) {
      for (int64_t o = 0; o < bo; ++o) {
        const int64_t d = dst.second + b * bo + o;
        int64_t acc = 0;
        if (!reset) {
          const auto src = ptr(c->args[2]), wgt = ptr(c->args[3]);
          acc = it.load(dst.first, d);
          for (int64_t i = 0; i < bi; ++i) {
            acc += it.load(src.first, src.second + b * bi + i) * it.load(wgt.first, wgt.second + o * bi + i);
          }
        }
        it.store(dst.first, d, static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(acc))));
      }
    }
  });
  return in;
}

runtime::Requant per_tensor_requant() {
  runtime::Requant rq;
  rq.multiplier = {1000};
  rq.shift = {12};
  rq.out_zero_point = -5;
  return rq;
}

/// The template points the accelerator build rejected: "<point>: <UserError>" (each test that
/// builds points asserts it stays empty: every point of a template's space must build).
std::vector<std::string>& rejected_points() {
  static std::vector<std::string> v;
  return v;
}

/// Builds a template instance for the accelerator (lower_template, then build_accel_program with the int8 inputs as INP/WGT, or ACC_8BIT for `acc8_inputs`, int32 ones as ACC, and the
/// output as OUT, each in its own segment) and runs it on fsim with the inputs' int8 contents;
/// returns the output's contents, or nullopt (the point recorded in rejected_points()) when the
/// build throws a UserError.
std::optional<testing::Data> run_on_fsim(const isa::HwConfig& hw, const ScheduledOp& op,
                                         const std::vector<testing::Data>& inputs, bool acc8_inputs,
                                         const std::string& point) {
  std::vector<compiler::accel_tir::SegmentSpec> segs;
  for (size_t i = 0; i + 1 < op.args.size(); ++i) {
    // int32 arguments (the qadd's constant rows) are ACC elements; int8 ones INP/WGT or ACC_8BIT
    const bool wide = op.args[i].dtype() == DataType::int32();
    const isa::MemType t = wide          ? isa::MemType::kAcc
                           : acc8_inputs ? isa::MemType::kAcc8
                           : i == 0      ? isa::MemType::kInp
                                         : isa::MemType::kWgt;
    segs.push_back({op.args[i].name(), op.args[i].name(), isa::SegmentKind::kInput, 0, t});
  }
  segs.push_back({op.out.name(), op.out.name(), isa::SegmentKind::kOutput, 0, isa::MemType::kOut});
  isa::Program prog;
  try {
    prog = compiler::accel_tir::build_accel_program(lower_template(op, "f"), hw, segs);
  } catch (const UserError& e) {
    rejected_points().push_back(point + ": " + e.what());
    return std::nullopt;
  }
  auto dev = runtime::Device::create("fsim", prog.config, runtime::dram_bytes_for({prog}));
  const runtime::LoadedProgram lp = dev->load(prog);
  for (size_t i = 0; i + 1 < op.args.size(); ++i) {
    if (op.args[i].dtype() == DataType::int32()) {
      const std::vector<int32_t> words = testing::to<int32_t>(inputs[i]);
      dev->copy_to_device(lp.segment_addr(prog, op.args[i].name()), words.data(), words.size() * sizeof(int32_t));
      continue;
    }
    const std::vector<int8_t> bytes = testing::to<int8_t>(inputs[i]);
    dev->copy_to_device(lp.segment_addr(prog, op.args[i].name()), bytes.data(), bytes.size());
  }
  dev->submit(lp);
  dev->wait();
  std::vector<int8_t> got(testing::elements(op.out));
  dev->copy_from_device(got.data(), lp.segment_addr(prog, op.out.name()), got.size());
  dev->unload(lp);
  return testing::from(got);
}

/// Runs a template instance on the interpreter, and built for the accelerator on fsim (the two
/// must agree); returns the interpreter's output contents.
testing::Data run_instance(const isa::HwConfig& hw, const ScheduledOp& op, const std::vector<testing::Data>& inputs,
                           const std::string& point, bool acc8_inputs = false) {
  // Both forms: as lowered, and with the ALU steps in place and the GEMM kernels marked.
  tir::PrimFunc lowered = te::lower(op.schedule, op.args, "f");
  tir::PrimFunc f = mark_gemm_kernels(alu_in_place(lowered));
  EXPECT_TRUE(tir::verify(f).empty());
  std::map<std::string, testing::Data> bufs;
  for (size_t i = 0; i + 1 < op.args.size(); ++i) bufs[op.args[i].name()] = inputs[i];
  bufs[op.out.name()] = testing::Data(testing::elements(op.out), 0);
  tir::testing::Interpreter in = gemm_interpreter(hw), before = gemm_interpreter(hw);
  testing::Data got = in.run_buffers(f, bufs).at(op.out.name());
  EXPECT_EQ(before.run_buffers(lowered, bufs).at(op.out.name()), got);
  if (const std::optional<testing::Data> dev = run_on_fsim(hw, op, inputs, acc8_inputs, point)) {
    EXPECT_EQ(*dev, got) << point << " on fsim";
  }
  return got;
}

/// Asserts that no template point was rejected by the accelerator build (and clears the list).
void expect_every_point_built() {
  std::string all;
  for (const std::string& r : rejected_points()) all += r + "\n";
  EXPECT_TRUE(rejected_points().empty()) << rejected_points().size() << " points rejected:\n" << all;
  rejected_points().clear();
}

TEST(TopiAccelSchedule, Conv2dEveryPointMatchesQconv2d) {
  const isa::HwConfig hw;
  std::mt19937 rng(41);
  Conv2dLayer l;
  l.x = te::placeholder(S({1, 2, 5, 4, 1, 16}), DataType::int8(), "x");
  l.w = te::placeholder(S({2, 2, 3, 3, 16, 16}), DataType::int8(), "w");
  l.attrs.stride_h = 1;
  l.attrs.pad_top = 1;
  l.attrs.pad_left = 2;
  l.attrs.pad_bottom = 0;
  l.attrs.pad_right = 1;
  const runtime::Requant rq = per_tensor_requant();
  l.rq = testing::params_of(rq, 32);
  // NCHW data: 1 x 30 channels (two blocks of 16, the last one padded), weights 20 x 30.
  const int64_t ic = 30, oc = 20;
  runtime::QConv2dParams p;
  p.ic = ic;
  p.ih = 5;
  p.iw = 4;
  p.oc = oc;
  p.kh = p.kw = 3;
  p.pad_top = 1;
  p.pad_left = 2;
  p.pad_right = 1;
  p.rq = rq;
  const testing::Data xv = testing::random_data(rng, static_cast<size_t>(ic * 5 * 4), -128, 127);
  const testing::Data wv = testing::random_data(rng, static_cast<size_t>(oc * ic * 9), -128, 127);
  const auto x8 = testing::to<int8_t>(xv), w8 = testing::to<int8_t>(wv);
  std::vector<int32_t> bias(static_cast<size_t>(oc), 0);
  std::vector<int8_t> want(static_cast<size_t>(oc * p.oh() * p.ow()));
  runtime::qconv2d_reference(p, x8.data(), w8.data(), bias.data(), want.data());
  std::vector<int8_t> xp(2 * 16 * 5 * 4), wp(2 * 16 * 2 * 16 * 9);
  runtime::cpu::pack_nchwnc(x8.data(), 1, ic, 5, 4, 1, 16, xp.data());
  runtime::cpu::pack_nchwnc(w8.data(), oc, ic, 3, 3, 16, 16, wp.data());
  te::ConfigSpace space;
  conv2d_config_space(l, space);
  int ran = 0;
  for (int64_t i = 0; i < space.size(); ++i) {
    const te::ConfigEntity cfg = space.get(i);
    if (cfg.split("tile_oc")[0] % cfg.knob("oc_nthread") != 0) continue;
    const auto got = testing::to<int8_t>(run_instance(hw, schedule_conv2d(l, hw, cfg), {testing::from(xp), testing::from(wp)}, cfg.to_json()));
    std::vector<int8_t> unpacked(want.size());
    runtime::cpu::unpack_nchwnc(got.data(), 1, oc, p.oh(), p.ow(), 1, 16, unpacked.data());
    EXPECT_EQ(unpacked, want) << cfg.to_json();
    ++ran;
  }
  // oh 4, ow 5: 2 * 3 * 2 * 2 * 2 points; oc_nthread 2 needs two outer channel blocks (tile_oc 1)
  EXPECT_EQ(ran, 2 * 3 * 2 * 2 * 2 - 3 * 2 * 2);
  expect_every_point_built();
}

/// Dense on every point, with the one-limb chain and with a low limb (whose copy of the
/// clamped accumulator stays out of place).
class DenseEveryPoint : public ::testing::TestWithParam<bool> {};

TEST_P(DenseEveryPoint, MatchesQconv2d) {
  const isa::HwConfig hw;
  std::mt19937 rng(43);
  const int64_t k = 40, n = 60;
  DenseLayer l;
  l.x = te::placeholder(S({1, 3, 1, 16}), DataType::int8(), "x");
  l.w = te::placeholder(S({4, 3, 16, 16}), DataType::int8(), "w");
  runtime::Requant rq = per_tensor_requant();
  if (GetParam()) {
    rq.low_multiplier = {{77}};
    rq.low_shift = {{3}};
  }
  l.rq = testing::params_of(rq, 64);
  ASSERT_EQ(l.rq.low.size(), GetParam() ? 1u : 0u);
  runtime::QConv2dParams p;
  p.ic = k;
  p.ih = p.iw = 1;
  p.oc = n;
  p.rq = rq;
  const testing::Data xv = testing::random_data(rng, static_cast<size_t>(k), -128, 127);
  const testing::Data wv = testing::random_data(rng, static_cast<size_t>(n * k), -128, 127);
  const auto x8 = testing::to<int8_t>(xv), w8 = testing::to<int8_t>(wv);
  std::vector<int32_t> bias(static_cast<size_t>(n), 0);
  std::vector<int8_t> want(static_cast<size_t>(n));
  runtime::qconv2d_reference(p, x8.data(), w8.data(), bias.data(), want.data());
  std::vector<int8_t> xp(48), wp(64 * 48);
  runtime::cpu::pack_nchwnc(x8.data(), 1, k, 1, 1, 1, 16, xp.data());
  runtime::cpu::pack_nchwnc(w8.data(), n, k, 1, 1, 16, 16, wp.data());
  te::ConfigSpace space;
  dense_config_space(l, space);
  int ran = 0;
  for (int64_t i = 0; i < space.size(); ++i) {
    const te::ConfigEntity cfg = space.get(i);
    if (cfg.split("tile_oc")[0] % cfg.knob("oc_nthread") != 0) continue;
    const auto got = testing::to<int8_t>(run_instance(hw, schedule_dense(l, hw, cfg), {testing::from(xp), testing::from(wp)}, cfg.to_json()));
    std::vector<int8_t> unpacked(want.size());
    runtime::cpu::unpack_nchwnc(got.data(), 1, n, 1, 1, 1, 16, unpacked.data());
    EXPECT_EQ(unpacked, want) << cfg.to_json();
    ++ran;
  }
  EXPECT_EQ(ran, 3 * 2 * 2 - 2);  // tile_oc 1, 2, 4; oc_nthread 2 needs an even outer count
  expect_every_point_built();
  // In place except the limb's copy: the accumulator and (with the limb) one more acc buffer.
  const tir::PrimFunc f = lower_template(schedule_dense(l, hw, space.get(0)), "dense");
  int acc_buffers = 0;
  std::function<void(const tir::Stmt&)> walk = [&](const tir::Stmt& st) {
    if (st.kind() == tir::StmtKind::kAllocate) {
      const auto* a = st.as<tir::AllocateNode>();
      acc_buffers += a->buffer->scope == tir::MemScope::kAcc;
      walk(a->body);
    } else if (st.kind() == tir::StmtKind::kFor) {
      walk(st.as<tir::ForNode>()->body);
    } else if (st.kind() == tir::StmtKind::kAttrStmt) {
      walk(st.as<tir::AttrStmtNode>()->body);
    } else if (st.kind() == tir::StmtKind::kSeqStmt) {
      for (const tir::Stmt& x : st.as<tir::SeqStmtNode>()->seq) walk(x);
    }
  };
  walk(f->body);
  EXPECT_EQ(acc_buffers, GetParam() ? 2 : 1);
}

INSTANTIATE_TEST_SUITE_P(TopiAccelSchedule, DenseEveryPoint, ::testing::Values(false, true));

TEST(TopiAccelSchedule, QaddEveryPointMatchesRequantChain) {
  const isa::HwConfig hw;
  std::mt19937 rng(47);
  QaddLayer l;
  l.a = te::placeholder(S({1, 2, 6, 3, 1, 16}), DataType::int8(), "a");
  l.b = te::placeholder(S({1, 2, 6, 3, 1, 16}), DataType::int8(), "b");
  l.a_zero_point = 4;
  l.a_multiplier = 300;
  l.b_zero_point = -7;
  l.b_multiplier = 170;
  runtime::Requant rq;
  rq.shift = {9};
  rq.out_zero_point = 2;
  l.rq = testing::params_of(rq, 1);
  const runtime::RequantChannel ch = runtime::requant_channel(rq, 0);
  const testing::Data av = testing::random_data(rng, 576, -128, 127), bv = testing::random_data(rng, 576, -128, 127);
  testing::Data want;
  for (size_t i = 0; i < av.size(); ++i) {
    want.push_back(ch.apply(static_cast<int32_t>((av[i] - 4) * 300 + (bv[i] + 7) * 170)));
  }
  te::ConfigSpace space;
  qadd_config_space(l, space);
  for (int64_t i = 0; i < space.size(); ++i) {
    EXPECT_EQ(run_instance(hw, schedule_qadd(l, hw, space.get(i)), {av, bv}, space.get(i).to_json(), true), want)
        << space.get(i).to_json();
  }
  expect_every_point_built();
}

/// The general scheme (compiler/passes/qadd_scheme.h): multipliers and round term beyond the
/// ALU's 16-bit immediate become int32 constants of one acc element, loaded once at the root and
/// read as vector operands; every point of the space gives the int32 chain's value.
TEST(TopiAccelSchedule, QaddWideSchemeConstantsInAcc) {
  const isa::HwConfig hw;
  std::mt19937 rng(53);
  QaddLayer l;
  l.a = te::placeholder(S({1, 2, 4, 3, 1, 16}), DataType::int8(), "a");
  l.b = te::placeholder(S({1, 2, 4, 3, 1, 16}), DataType::int8(), "b");
  l.a_zero_point = -5;
  l.a_multiplier = 1812345;  // mobilenetv2's range: 1.8e5 .. 2e6
  l.b_zero_point = 9;
  l.b_multiplier = 183211;
  l.rq.round = {1 << 20};
  l.rq.shift = {21};
  l.rq.out_add = {-3};
  l.rq.clip_lo = -3;  // a fused relu
  const testing::Data av = testing::random_data(rng, 384, -128, 127), bv = testing::random_data(rng, 384, -128, 127);
  testing::Data want;
  for (size_t i = 0; i < av.size(); ++i) {
    const int64_t x = (av[i] + 5) * 1812345 + (bv[i] - 9) * 183211 + (1 << 20);
    want.push_back(std::clamp<int64_t>((x >> 21) - 3, -3, 127));
  }
  te::ConfigSpace space;
  qadd_config_space(l, space);
  for (int64_t i = 0; i < space.size(); ++i) {
    const ScheduledOp op = schedule_qadd(l, hw, space.get(i));
    // a_multiplier, b_multiplier, round: three constants, each one acc element of its value
    ASSERT_EQ(op.constants.size(), 3u);
    EXPECT_EQ(op.constants[0].tensor.name(), "qadd.a_multiplier");
    EXPECT_EQ(op.constants[1].tensor.name(), "qadd.b_multiplier");
    EXPECT_EQ(op.constants[2].tensor.name(), "qadd.round");
    EXPECT_EQ(op.constants[2].values, std::vector<int32_t>(16, 1 << 20));
    ASSERT_EQ(op.args.size(), 6u);  // a, b, the constants, the output
    std::vector<testing::Data> inputs = {av, bv};
    for (const ChannelConstant& c : op.constants) inputs.push_back(testing::from(c.values));
    EXPECT_EQ(run_instance(hw, op, inputs, space.get(i).to_json(), true), want) << space.get(i).to_json();
  }
  // the lowered form: constants copied once at the root, then MUL/ADD read their acc rows
  const ScheduledOp op = schedule_qadd(l, hw, pick(space, {{"tile_h", 2}}));
  tir::PrimFunc f = lower_template(op, "qadd");
  EXPECT_TRUE(tir::verify(f).empty());
  tir::testing::expect_golden_in("topi", "accel_qadd_wide.tir", tir::to_text(f));
}

/// A row that does not fit ACC names the constants among the rows it needs.
TEST(TopiAccelSchedule, QaddWideRowsCountTheConstants) {
  const isa::HwConfig hw;  // 2048 acc rows
  QaddLayer l;
  l.a = te::placeholder(S({1, 1, 2, 1024, 1, 16}), DataType::int8(), "a");
  l.b = te::placeholder(S({1, 1, 2, 1024, 1, 16}), DataType::int8(), "b");
  l.a_multiplier = 100000;
  l.rq.shift = {16};
  te::ConfigSpace space;
  qadd_config_space(l, space);
  EXPECT_EQ(user_error_of([&] { schedule_qadd(l, hw, pick(space, {{"tile_h", 1}})); }),
            "qadd template: local.acc_buffer needs 2049 rows for knobs tile_h=1 (1024 rows per stage, 2 acc "
            "buffers, 1 constant rows), capacity 2048 rows");
}

/// A quantised layer in NCHW terms for the bias / zero-point / per-channel tests.
struct QLayer {
  int64_t ic = 16, ih = 1, iw = 1, oc = 16, kh = 1, kw = 1, sh = 1, sw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  int32_t zx = 0;
  size_t limbs = 0;
  bool dense = false;
};

/// A per-channel requantisation with wide values: multipliers beyond the 16-bit immediate on
/// every third channel (with a larger shift), a per-channel accumulator offset, a clamp whose
/// bounds are wide one-entry values and `limbs` per-channel low limbs.
runtime::Requant wide_requant(std::mt19937& rng, int64_t oc, size_t limbs) {
  runtime::Requant rq;
  std::uniform_int_distribution<int32_t> narrow(1 << 10, 1 << 14), wide(1 << 17, 1 << 19), off(-4000, 4000);
  rq.multiplier.clear();
  rq.shift.clear();
  rq.acc_offset.clear();
  for (int64_t c = 0; c < oc; ++c) {
    const bool w = c % 3 == 1;
    rq.multiplier.push_back(w ? wide(rng) : narrow(rng));
    rq.shift.push_back(w ? 27 : 20);
    rq.acc_offset.push_back(off(rng));
  }
  rq.acc_min = {-300000};
  rq.acc_max = {280000};
  for (size_t j = 0; j < limbs; ++j) {
    std::uniform_int_distribution<int32_t> lm(0, (1 << 9) - 1);
    std::vector<int32_t> m, sh;
    for (int64_t c = 0; c < oc; ++c) {
      m.push_back(lm(rng));
      sh.push_back(9);
    }
    rq.low_multiplier.push_back(m);
    rq.low_shift.push_back(sh);
  }
  rq.out_zero_point = -6;
  rq.clip_lo = -110;
  rq.clip_hi = 117;
  EXPECT_EQ(runtime::requant_problem(rq, oc), "");
  return rq;
}

/// Runs every point of the template's space for `q` (with per-channel wide requantisation,
/// bias and the input zero point) on the interpreter and fsim and compares each with
/// runtime/qnn.h's qconv2d_reference (which runtime/cpu's qconv2d must match too); returns the
/// points run and the kinds of the constants of the first one.
struct EveryPointResult {
  int ran = 0;
  std::vector<ChannelConstant::Kind> kinds;
};
EveryPointResult every_point_matches_reference(const QLayer& q, uint32_t seed) {
  const isa::HwConfig hw;
  std::mt19937 rng(seed);
  const int64_t bi = hw.block_in(), bo = hw.block_out();
  const int64_t icb = (q.ic + bi - 1) / bi, ocb = (q.oc + bo - 1) / bo;
  runtime::QConv2dParams p;
  p.ic = q.ic;
  p.ih = q.ih;
  p.iw = q.iw;
  p.oc = q.oc;
  p.kh = q.kh;
  p.kw = q.kw;
  p.stride_h = q.sh;
  p.stride_w = q.sw;
  p.pad_top = q.pt;
  p.pad_left = q.pl;
  p.pad_bottom = q.pb;
  p.pad_right = q.pr;
  p.in_zero_point = q.zx;
  p.rq = wide_requant(rng, q.oc, q.limbs);
  const testing::Data xv = testing::random_data(rng, static_cast<size_t>(q.ic * q.ih * q.iw), -128, 127);
  const testing::Data wv = testing::random_data(rng, static_cast<size_t>(q.oc * q.ic * q.kh * q.kw), -9, 9);
  const auto x8 = testing::to<int8_t>(xv), w8 = testing::to<int8_t>(wv);
  std::vector<int32_t> bias;
  std::uniform_int_distribution<int32_t> bd(-6000, 6000);
  for (int64_t o = 0; o < q.oc; ++o) bias.push_back(bd(rng));
  const int64_t oh = p.oh(), ow = p.ow();
  std::vector<int8_t> want(static_cast<size_t>(q.oc * oh * ow)), cpu(want.size());
  runtime::qconv2d_reference(p, x8.data(), w8.data(), bias.data(), want.data());
  runtime::cpu::qconv2d(p, x8.data(), w8.data(), bias.data(), cpu.data());
  EXPECT_EQ(cpu, want) << "runtime/cpu qconv2d differs from qconv2d_reference";
  // not all saturated: the layer exercises the chain
  int inside = 0;
  for (int8_t v : want) inside += v > p.rq.clip_lo && v < p.rq.clip_hi;
  EXPECT_GT(inside, static_cast<int>(want.size()) / 2);

  std::vector<int8_t> xp(static_cast<size_t>(icb * bi * q.ih * q.iw)),
      wp(static_cast<size_t>(ocb * bo * icb * bi * q.kh * q.kw));
  runtime::cpu::pack_nchwnc(x8.data(), 1, q.ic, q.ih, q.iw, 1, bi, xp.data());
  runtime::cpu::pack_nchwnc(w8.data(), q.oc, q.ic, q.kh, q.kw, bo, bi, wp.data());
  std::vector<int32_t> bias_p(bias);
  bias_p.resize(static_cast<size_t>(ocb * bo), 0);
  const RequantParams rq = testing::params_of(p.rq, ocb * bo, q.oc);
  te::ConfigSpace space;
  Conv2dLayer cl;
  DenseLayer dl;
  if (q.dense) {
    dl.x = te::placeholder(S({1, icb, 1, bi}), DataType::int8(), "x");
    dl.w = te::placeholder(S({ocb, icb, bo, bi}), DataType::int8(), "w");
    dl.rq = rq;
    dl.bias = bias_p;
    dl.x_zero_point = q.zx;
    dl.w_values = wp;
    dense_config_space(dl, space);
  } else {
    cl.x = te::placeholder(S({1, icb, q.ih, q.iw, 1, bi}), DataType::int8(), "x");
    cl.w = te::placeholder(S({ocb, icb, q.kh, q.kw, bo, bi}), DataType::int8(), "w");
    cl.attrs.stride_h = q.sh;
    cl.attrs.stride_w = q.sw;
    cl.attrs.pad_top = q.pt;
    cl.attrs.pad_left = q.pl;
    cl.attrs.pad_bottom = q.pb;
    cl.attrs.pad_right = q.pr;
    cl.rq = rq;
    cl.bias = bias_p;
    cl.x_zero_point = q.zx;
    cl.w_values = wp;
    conv2d_config_space(cl, space);
  }
  EveryPointResult r;
  for (int64_t i = 0; i < space.size(); ++i) {
    const te::ConfigEntity cfg = space.get(i);
    if (cfg.split("tile_oc")[0] % cfg.knob("oc_nthread") != 0) continue;
    const ScheduledOp op = q.dense ? schedule_dense(dl, hw, cfg) : schedule_conv2d(cl, hw, cfg);
    if (r.ran == 0) {
      for (const ChannelConstant& c : op.constants) r.kinds.push_back(c.kind);
    }
    std::vector<testing::Data> inputs = {testing::from(xp), testing::from(wp)};
    for (const ChannelConstant& c : op.constants) inputs.push_back(testing::from(c.values));
    const auto got = testing::to<int8_t>(run_instance(hw, op, inputs, cfg.to_json()));
    std::vector<int8_t> unpacked(want.size());
    runtime::cpu::unpack_nchwnc(got.data(), 1, q.oc, oh, ow, 1, bo, unpacked.data());
    EXPECT_EQ(unpacked, want) << cfg.to_json();
    ++r.ran;
  }
  expect_every_point_built();
  return r;
}

using Kind = ChannelConstant::Kind;

/// 3x3, padding on every side and an input zero point: the border tensor (with the bias and
/// the per-channel offsets folded into it), then the clamp's wide bounds (uniform), and the
/// per-channel multiplier, round and shift; two input and two output blocks (the last ones
/// padded).
TEST(TopiAccelRequant, Conv3x3PaddedZeroPointEveryPoint) {
  QLayer q;
  q.ic = 30;
  q.ih = 5;
  q.iw = 4;
  q.oc = 20;
  q.kh = q.kw = 3;
  q.pt = q.pl = q.pb = q.pr = 1;
  q.zx = 11;
  const EveryPointResult r = every_point_matches_reference(q, 61);
  // tile_oc 1, 2 (x2 threads for 1) x tile_h 1, 5 x tile_w 1, 2, 4 x tile_ic 1, 2
  EXPECT_EQ(r.ran, 3 * 2 * 3 * 2);
  EXPECT_EQ(r.kinds, (std::vector<Kind>{Kind::kElement, Kind::kUniform, Kind::kUniform, Kind::kChannel,
                                        Kind::kChannel, Kind::kChannel, Kind::kChannel}));
}

/// Stride 2 with asymmetric padding (none on the left: the window still reaches the right
/// border), one low limb, a negative zero point.
TEST(TopiAccelRequant, Conv3x3Stride2LowLimbEveryPoint) {
  QLayer q;
  q.ic = 16;
  q.ih = 7;
  q.iw = 6;
  q.oc = 40;
  q.kh = q.kw = 3;
  q.sh = q.sw = 2;
  q.pt = 1;
  q.pb = 1;
  q.pr = 1;
  q.zx = -13;
  q.limbs = 1;
  const EveryPointResult r = every_point_matches_reference(q, 67);
  // oh 4, ow 3; tile_oc 1, 3 (1 and 3 outer blocks: 2 threads for none) x 3 x 2 x 1 x 2 - ...
  EXPECT_EQ(r.ran, 2 * 3 * 2);
  ASSERT_FALSE(r.kinds.empty());
  EXPECT_EQ(r.kinds.front(), Kind::kElement);
}

/// 1x1 without padding: the zero point is per channel only, folded with the bias into the
/// per-channel accumulator offset (no border tensor).
TEST(TopiAccelRequant, Conv1x1ZeroPointFoldedEveryPoint) {
  QLayer q;
  q.ic = 20;
  q.ih = 3;
  q.iw = 4;
  q.oc = 24;
  q.zx = -128;
  const EveryPointResult r = every_point_matches_reference(q, 71);
  EXPECT_EQ(r.ran, 3 * 2 * 3 * 2);  // tile_oc 1 (x2 threads), 2; 2 x 3 x 2
  // acc_offset (bias, zero point and offset), acc_min, acc_max, multiplier, round, shift, out_add
  EXPECT_EQ(r.kinds, (std::vector<Kind>{Kind::kChannel, Kind::kUniform, Kind::kUniform, Kind::kChannel,
                                        Kind::kChannel, Kind::kChannel, Kind::kChannel}));
}

/// 3x3 without padding: no window touches the padding, so no border tensor either.
TEST(TopiAccelRequant, Conv3x3UnpaddedZeroPointEveryPoint) {
  QLayer q;
  q.ic = 16;
  q.ih = 5;
  q.iw = 6;
  q.oc = 16;
  q.kh = q.kw = 3;
  q.zx = 5;
  q.limbs = 2;
  const EveryPointResult r = every_point_matches_reference(q, 73);
  EXPECT_EQ(r.ran, 1 * 2 * 3 * 1 * 1);  // oh 3, ow 4
  ASSERT_FALSE(r.kinds.empty());
  EXPECT_EQ(r.kinds.front(), Kind::kChannel);
  EXPECT_EQ(std::count(r.kinds.begin(), r.kinds.end(), Kind::kElement), 0);
}

/// Dense: bias and zero point in the per-channel offset, per-channel wide requantisation with a
/// low limb.
TEST(TopiAccelRequant, DenseZeroPointBiasEveryPoint) {
  QLayer q;
  q.ic = 40;
  q.oc = 60;
  q.zx = 19;
  q.limbs = 1;
  q.dense = true;
  const EveryPointResult r = every_point_matches_reference(q, 79);
  EXPECT_EQ(r.ran, 3 * 2 * 2 - 2);
  ASSERT_FALSE(r.kinds.empty());
  EXPECT_EQ(r.kinds.front(), Kind::kChannel);
}

/// The lowered form of a padded layer with a zero point: the border tensor copied with every
/// tile, the channel constants at the channel tile loop (inside the virtual thread), the wide
/// clamp bounds once at the root.
TEST(TopiAccelRequant, Conv2dConstantsGolden) {
  const isa::HwConfig hw;
  Conv2dLayer l = small_conv();
  l.rq.multiplier = {1000, 70000};
  l.rq.multiplier.resize(32, 1200);
  l.rq.acc_max = {100000};
  l.bias.assign(32, 7);
  l.x_zero_point = 4;
  l.w_values.assign(2 * 2 * 9 * 16 * 16, 1);
  te::ConfigSpace space;
  conv2d_config_space(l, space);
  const ScheduledOp op =
      schedule_conv2d(l, hw, pick(space, {{"tile_oc", 1}, {"tile_h", 2}, {"tile_w", 4}, {"tile_ic", 1}, {"oc_nthread", 2}}));
  ASSERT_EQ(op.constants.size(), 3u);
  EXPECT_EQ(op.constants[0].tensor.name(), "conv2d.zp_init");
  EXPECT_EQ(op.constants[1].tensor.name(), "requant.acc_max");
  EXPECT_EQ(op.constants[2].tensor.name(), "requant.multiplier");
  // border: 4 * 32 (two input blocks of 16 ones) * padded taps, plus the bias 7 and the
  // per-channel addend -4 * 9 * 32; corner (0, 0) has 5 padded taps
  EXPECT_EQ(op.constants[0].values[0], 4 * 32 * 5 + 7 - 4 * 9 * 32);
  EXPECT_EQ(op.constants[0].values[16 * 5], 7 - 4 * 9 * 32);  // (1, 1): inside
  // packed [2][1][16]: block 0 lane 1 is 70000
  EXPECT_EQ(op.constants[2].values[1], 70000);
  EXPECT_EQ(op.constants[2].values[16], 1200);
  tir::PrimFunc f = lower_template(op, "conv2d");
  EXPECT_TRUE(tir::verify(f).empty());
  tir::testing::expect_golden_in("topi", "accel_conv2d_constants.tir", tir::to_text(f));
}

}  // namespace
}  // namespace tessel::topi::accel
