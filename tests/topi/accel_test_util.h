// Helpers of the accelerator template tests (test_accel_schedule.cc, test_accel_requant.cc): a
// knob point by its values, the small layers of the goldens, the tir interpreter with
// accel.gemm_uop, and a template instance run on the interpreter (as lowered and after
// alu_in_place / mark_gemm_kernels) and, built with build_accel_program, on fsim.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/backend/accel/tir/accel_tir.h"
#include "compiler/target/accel_intrin.h"
#include "compiler/te/lower.h"
#include "compiler/tir/verifier.h"
#include "compiler/topi/accel/schedule.h"
#include "runtime/device.h"
#include "support/error.h"
#include "tests/tir/tir_test_util.h"
#include "tests/topi/topi_test_util.h"

namespace tessel::topi::accel::accel_testing {

using tir::DataType;
namespace data = topi::testing;

inline std::vector<tir::Expr> S(std::initializer_list<int64_t> l) {
  std::vector<tir::Expr> v;
  for (int64_t x : l) v.push_back(tir::Expr(x));
  return v;
}

/// The point of `space` with the given inner sizes of its splits and knob values (by name).
inline te::ConfigEntity pick(const te::ConfigSpace& space, const std::map<std::string, int64_t>& want) {
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

inline RequantParams small_rq() {
  RequantParams rq;
  rq.multiplier = {1 << 10};
  rq.round = {1 << 13};
  rq.shift = {14};
  rq.out_add = {-3};
  return rq;
}

inline Conv2dLayer small_conv() {
  Conv2dLayer l;
  l.x = te::placeholder(S({1, 2, 4, 4, 1, 16}), DataType::int8(), "x");
  l.w = te::placeholder(S({2, 2, 3, 3, 16, 16}), DataType::int8(), "w");
  l.attrs.pad_top = l.attrs.pad_left = l.attrs.pad_bottom = l.attrs.pad_right = 1;
  l.rq = small_rq();
  return l;
}

inline int64_t divisors(int64_t n) {
  int64_t c = 0;
  for (int64_t d = 1; d <= n; ++d) c += n % d == 0;
  return c;
}

/// The interpreter with accel.gemm_uop: dst, src and wgt are access_ptr element offsets of the
/// acc, inp and wgt buffers (the first values of B x BO, B x BI, BO x BI blocks).
inline tir::testing::Interpreter gemm_interpreter(const isa::HwConfig& hw) {
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

inline runtime::Requant per_tensor_requant() {
  runtime::Requant rq;
  rq.multiplier = {1000};
  rq.shift = {12};
  rq.out_zero_point = -5;
  return rq;
}

/// The template points the accelerator build rejected: "<point>: <UserError>" (each test that
/// builds points asserts it stays empty: every point of a template's space must build).
inline std::vector<std::string>& rejected_points() {
  static std::vector<std::string> v;
  return v;
}

/// Builds a template instance for the accelerator (lower_template, then build_accel_program with the int8 inputs as INP/WGT, or ACC_8BIT for `acc8_inputs`, int32 ones as ACC, and the
/// output as OUT, each in its own segment) and runs it on fsim with the inputs' int8 contents;
/// returns the output's contents, or nullopt (the point recorded in rejected_points()) when the
/// build throws a UserError.
inline std::optional<data::Data> run_on_fsim(const isa::HwConfig& hw, const ScheduledOp& op,
                                         const std::vector<data::Data>& inputs, bool acc8_inputs,
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
      const std::vector<int32_t> words = data::to<int32_t>(inputs[i]);
      dev->copy_to_device(lp.segment_addr(prog, op.args[i].name()), words.data(), words.size() * sizeof(int32_t));
      continue;
    }
    const std::vector<int8_t> bytes = data::to<int8_t>(inputs[i]);
    dev->copy_to_device(lp.segment_addr(prog, op.args[i].name()), bytes.data(), bytes.size());
  }
  dev->submit(lp);
  dev->wait();
  std::vector<int8_t> got(data::elements(op.out));
  dev->copy_from_device(got.data(), lp.segment_addr(prog, op.out.name()), got.size());
  dev->unload(lp);
  return data::from(got);
}

/// Runs a template instance on the interpreter, and built for the accelerator on fsim (the two
/// must agree); returns the interpreter's output contents.
inline data::Data run_instance(const isa::HwConfig& hw, const ScheduledOp& op, const std::vector<data::Data>& inputs,
                           const std::string& point, bool acc8_inputs = false) {
  // Both forms: as lowered, and with the ALU steps in place and the GEMM kernels marked.
  tir::PrimFunc lowered = te::lower(op.schedule, op.args, "f");
  tir::PrimFunc f = mark_gemm_kernels(alu_in_place(lowered));
  EXPECT_TRUE(tir::verify(f).empty());
  std::map<std::string, data::Data> bufs;
  for (size_t i = 0; i + 1 < op.args.size(); ++i) bufs[op.args[i].name()] = inputs[i];
  bufs[op.out.name()] = data::Data(data::elements(op.out), 0);
  tir::testing::Interpreter in = gemm_interpreter(hw), before = gemm_interpreter(hw);
  data::Data got = in.run_buffers(f, bufs).at(op.out.name());
  EXPECT_EQ(before.run_buffers(lowered, bufs).at(op.out.name()), got);
  if (const std::optional<data::Data> dev = run_on_fsim(hw, op, inputs, acc8_inputs, point)) {
    EXPECT_EQ(*dev, got) << point << " on fsim";
  }
  return got;
}

/// Asserts that no template point was rejected by the accelerator build (and clears the list).
inline void expect_every_point_built() {
  std::string all;
  for (const std::string& r : rejected_points()) all += r + "\n";
  EXPECT_TRUE(rejected_points().empty()) << rejected_points().size() << " points rejected:\n" << all;
  rejected_points().clear();
}

}  // namespace tessel::topi::accel::accel_testing
