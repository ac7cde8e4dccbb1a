// The accelerator's residual add (compiler/driver/lower_qadd.h): random shapes, scales and zero
// points (with and without relu), their exact schemes (compiler/passes/qadd_scheme.h) lowered
// through the topi qadd template and the accelerator's TIR passes, run on every device kind this
// build has (fsim, cycle, and rtl when built) and compared bit for bit with the CPU's qadd kernel
// on the unpacked tensors; the Program's form (segments, constants, one STORE per tile) and its
// cycles against the stream cost model; determinism; errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "compiler/backend/accel/stream_cost.h"
#include "compiler/driver/lower_qadd.h"
#include "isa/config.h"
#include "runtime/cpu/kernels.h"
#include "tests/common/cpu_qadd.h"
#include "runtime/device.h"
#include "support/error.h"

namespace tessel::compiler::driver {
namespace {

struct Case {
  std::vector<int64_t> shape;
  passes::QaddQuant q;
};

/// The CPU kernel on NCHW a and b.
std::vector<int8_t> cpu_qadd(const Case& c, const std::vector<int8_t>& a, const std::vector<int8_t>& b) {
  return ::tessel::testing::cpu_qadd(c.shape, {c.q.a_scale, c.q.a_zero_point}, {c.q.b_scale, c.q.b_zero_point},
                                   {c.q.y_scale, c.q.y_zero_point}, c.q.relu, a, b);
}

std::vector<int8_t> pack(const std::vector<int8_t>& x, const std::vector<int64_t>& s, const isa::HwConfig& cfg) {
  const int64_t bn = cfg.batch(), bc = cfg.block_out();
  std::vector<int8_t> p(static_cast<size_t>((s[0] + bn - 1) / bn * bn * ((s[1] + bc - 1) / bc * bc) * s[2] * s[3]));
  runtime::cpu::pack_nchwnc(x.data(), s[0], s[1], s[2], s[3], bn, bc, p.data());
  return p;
}

struct RunOut {
  std::vector<int8_t> y;  ///< unpacked
  uint64_t cycles = 0;
};

RunOut run_on(const std::string& kind, const isa::Program& prog, const Case& c, const std::vector<int8_t>& pa,
              const std::vector<int8_t>& pb, size_t y_elems) {
  auto dev = runtime::Device::create(kind, prog.config, runtime::dram_bytes_for({prog}));
  const runtime::LoadedProgram lp = dev->load(prog);
  dev->copy_to_device(lp.segment_addr(prog, kQaddSegA), pa.data(), pa.size());
  dev->copy_to_device(lp.segment_addr(prog, kQaddSegB), pb.data(), pb.size());
  dev->submit(lp);
  RunOut out;
  out.cycles = dev->wait().cycles;
  std::vector<int8_t> packed(pa.size());
  dev->copy_from_device(packed.data(), lp.segment_addr(prog, kQaddSegOut), packed.size());
  dev->unload(lp);
  out.y.resize(y_elems);
  const isa::HwConfig& cfg = prog.config;
  runtime::cpu::unpack_nchwnc(packed.data(), c.shape[0], c.shape[1], c.shape[2], c.shape[3], cfg.batch(),
                              cfg.block_out(), out.y.data());
  return out;
}

std::vector<std::pair<std::string, isa::HwConfig>> configs() {
  std::vector<std::pair<std::string, isa::HwConfig>> v;
  for (const char* name : {"default", "1x8x8", "batch2"}) {
    v.emplace_back(name, isa::HwConfig::from_file(std::string(TESSEL_SOURCE_DIR) + "/hw/configs/" + name + ".json"));
  }
  return v;
}

/// Checks one case on every device kind (`rtl` only when `with_rtl`); returns the cycles.
uint64_t check_case(const Case& c, const isa::HwConfig& cfg, const std::string& what, bool with_rtl,
                    std::mt19937& rng) {
  const passes::QaddSchemeResult r = passes::find_qadd_scheme(c.q);
  EXPECT_TRUE(r.scheme) << what << ": " << r.reason;
  if (!r.scheme) return 0;
  QaddAccelLayer l;
  l.name = "add";
  l.shape = c.shape;
  l.a_zero_point = c.q.a_zero_point;
  l.b_zero_point = c.q.b_zero_point;
  l.scheme = *r.scheme;
  const accel::LoweredLayer low = lower_qadd_layer(l, cfg);
  const isa::Program& prog = low.program;
  // segments: the operands, the constants only for values beyond the 16-bit immediate
  const bool wide = !r.scheme->fits_imm16();
  bool has_const = false;
  for (const isa::Segment& s : prog.segments) has_const = has_const || s.name == "const";
  // (folding the zero points into the round term can widen it: constants without a wide scheme)
  if (wide) {
    EXPECT_TRUE(has_const) << what;
  }
  EXPECT_EQ(has_const, low.schedule.find(" 0 int32 constant rows") == std::string::npos) << what << low.schedule;
  size_t n = 1;
  for (int64_t d : c.shape) n *= static_cast<size_t>(d);
  std::uniform_int_distribution<int> byte(-128, 127);
  std::vector<int8_t> a(n), b(n);
  for (int8_t& x : a) x = static_cast<int8_t>(byte(rng));
  for (int8_t& x : b) x = static_cast<int8_t>(byte(rng));
  const std::vector<int8_t> want = cpu_qadd(c, a, b);
  const std::vector<int8_t> pa = pack(a, c.shape, cfg), pb = pack(b, c.shape, cfg);
  uint64_t cycles = 0;
  for (const std::string& kind : runtime::Device::kinds()) {
    if (kind == "rtl" && !with_rtl) continue;
    const RunOut o = run_on(kind, prog, c, pa, pb, n);
    EXPECT_EQ(o.y, want) << what << " on " << kind << " (schedule " << low.schedule << ")";
    if (kind == "cycle") {
      cycles = o.cycles;
      // the stream cost model that chose the schedule gives the cycle model's count
      EXPECT_EQ(static_cast<int64_t>(o.cycles), low.est_cycles) << what;
    }
  }
  return cycles;
}

TEST(LowerQadd, RandomShapesAndScalesBitExactOnEveryDevice) {
  std::mt19937 rng(20261203);
  std::uniform_real_distribution<float> log_scale(-6.0f, -1.0f);
  std::uniform_int_distribution<int> zp(-60, 60), c_dist(1, 40), h_dist(1, 7), w_dist(1, 13);
  int wide = 0, narrow = 0, ran = 0, no_scheme = 0;
  for (const auto& [cname, cfg] : configs()) {
    for (int t = 0; t < 8; ++t) {
      Case c;
      c.shape = {cfg.batch() == 2 ? 2 : 1, c_dist(rng), h_dist(rng), w_dist(rng)};
      c.q = {std::exp2(log_scale(rng)), std::exp2(log_scale(rng)), std::exp2(log_scale(rng)), zp(rng), zp(rng), zp(rng),
             t % 3 == 1};
      if (t == 0) {  // an integer ratio: small multipliers, immediates only
        c.q.a_scale = 0.5f;
        c.q.b_scale = 0.75f;
        c.q.y_scale = 0.25f;
      }
      const passes::QaddSchemeResult r = passes::find_qadd_scheme(c.q);
      if (!r.scheme) {
        ++no_scheme;
        continue;
      }
      (r.scheme->fits_imm16() ? narrow : wide) += 1;
      const std::string what = fmt::format("{} case {} shape [{}]", cname, t, fmt::join(c.shape, ","));
      // the rtl is slow: its first two cases on each configuration
      check_case(c, cfg, what, t < 2, rng);
      ++ran;
    }
  }
  EXPECT_GE(ran, 20);
  EXPECT_GE(wide, 10);  // most random scale ratios need int32 constants
  EXPECT_GE(narrow, 3);
  std::printf("[ qadd ] %d cases (%d with int32 constants, %d immediates only), %d without a scheme, on %s\n", ran,
              wide, narrow, no_scheme, fmt::format("{}", fmt::join(runtime::Device::kinds(), ", ")).c_str());
}

/// A mobilenetv2-like residual add: 24 channels (the second block of 16 half padding), 56 x 56.
TEST(LowerQadd, MobilenetSizedAddAndItsSchedule) {
  const isa::HwConfig cfg;
  Case c;
  c.shape = {1, 24, 56, 56};
  c.q = {0.0321f, 0.0457f, 0.0518f, -3, 7, -11, false};
  std::mt19937 rng(5);
  const uint64_t cycles = check_case(c, cfg, "mobilenet-sized", false, rng);
  EXPECT_GT(cycles, 0u);
  QaddAccelLayer l;
  l.name = "add";
  l.shape = c.shape;
  l.a_zero_point = c.q.a_zero_point;
  l.b_zero_point = c.q.b_zero_point;
  l.scheme = *passes::find_qadd_scheme(c.q).scheme;
  const accel::LoweredLayer a = lower_qadd_layer(l, cfg), b = lower_qadd_layer(l, cfg);
  EXPECT_EQ(a.program.serialize(), b.program.serialize());  // deterministic
  EXPECT_EQ(a.schedule, b.schedule);
  // one STORE per tile (tiles = channel blocks x H / tile_h) and two operand loads; the no-ops
  // of the token ending move nothing
  int64_t stores = 0, acc8 = 0, acc = 0;
  for (const isa::Instruction& in : a.program.insns) {
    const bool moves = in.x_size > 0 && in.y_size > 0;
    stores += in.opcode == isa::Opcode::kStore && moves;
    acc8 += in.opcode == isa::Opcode::kLoad && in.mem_type == isa::MemType::kAcc8 && moves;
    acc += in.opcode == isa::Opcode::kLoad && in.mem_type == isa::MemType::kAcc && moves;
  }
  EXPECT_NE(a.schedule.find(fmt::format("({} tiles)", stores)), std::string::npos) << a.schedule;
  EXPECT_EQ(acc8, 2 * stores);  // both operands of every tile
  EXPECT_EQ(acc, 3);            // the multipliers and the round term, once
  EXPECT_NE(a.schedule.find("3 int32 constant rows"), std::string::npos) << a.schedule;
  std::printf("[ qadd ] 1x24x56x56: %s, %zu instructions, %llu cycles\n", a.schedule.c_str(), a.program.insns.size(),
              static_cast<unsigned long long>(cycles));
}

TEST(LowerQadd, Errors) {
  const isa::HwConfig cfg;
  QaddAccelLayer l;
  l.name = "add7";
  l.shape = {1, 16, 4};
  EXPECT_THROW(
      {
        try {
          lower_qadd_layer(l, cfg);
        } catch (const UserError& e) {
          EXPECT_STREQ(e.what(), "qadd 'add7': the accelerator adds 4-D tensors, got shape [1, 16, 4]");
          throw;
        }
      },
      UserError);
  // a row too wide for ACC (2 x 1100 rows): no tile_h fits
  l.shape = {1, 16, 2, 1100};
  l.scheme.shift = 1;
  l.scheme.a_multiplier = 1;
  l.scheme.b_multiplier = 1;
  EXPECT_THROW(
      {
        try {
          lower_qadd_layer(l, cfg);
        } catch (const UserError& e) {
          EXPECT_NE(std::string(e.what()).find("qadd 'add7' cannot be lowered for the accelerator: no tile_h of 2 fits"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      UserError);
}

}  // namespace
}  // namespace tessel::compiler::driver
