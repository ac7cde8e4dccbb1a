// Shared helpers of the ISA tests: the configurations every property test runs on and a seeded
// random instruction generator whose values fit the fields of a given IsaSpec.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "isa/config.h"
#include "isa/instruction.h"
#include "isa/spec.h"

namespace tessel::isa::test {

struct NamedConfig {
  std::string label;
  HwConfig cfg;
};

/// default 1x16; 1x8x8 (LOG_BLOCK=3, buffers scaled to keep 128-bit fields); batch 2;
/// wide INP (INP depth 4096: GEMM src factors widen to 12 bits, WGT factors move and narrow);
/// 1x32 blocks with every buffer larger in bytes than the default.
inline std::vector<NamedConfig> test_configs() {
  std::vector<NamedConfig> v;
  v.push_back({"default", HwConfig{}});
  HwConfig b8 = HwConfig::from_json(
      R"({"LOG_BLOCK": 3, "LOG_INP_BUFF_SIZE": 14, "LOG_WGT_BUFF_SIZE": 16, "LOG_ACC_BUFF_SIZE": 16})");
  v.push_back({"block8", b8});
  v.push_back({"batch2", HwConfig::from_json(R"({"LOG_BATCH": 1})")});
  v.push_back({"wide_inp", HwConfig::from_json(R"({"LOG_INP_BUFF_SIZE": 16, "LOG_WGT_BUFF_SIZE": 17})")});
  v.push_back({"block32", HwConfig::from_json(
                              R"({"LOG_BLOCK": 5, "LOG_INP_BUFF_SIZE": 17, "LOG_WGT_BUFF_SIZE": 19,
                                  "LOG_ACC_BUFF_SIZE": 18})")});
  return v;
}

/// Uniform value in [0, 2^bits).
inline uint32_t rand_bits(std::mt19937_64& rng, uint32_t bits) {
  return static_cast<uint32_t>(rng() & ((uint64_t{1} << bits) - 1));
}

/// Width of a field of `spec` by name.
inline uint32_t width_of(const IsaSpec& spec, Format f, const char* name) { return spec.field(f, name).width; }

/// A random instruction of a random opcode; every field of its format random within its width,
/// every other field zero (as decode() leaves it).
inline Instruction random_insn(std::mt19937_64& rng, const IsaSpec& spec) {
  Instruction in;
  in.opcode = static_cast<Opcode>(rng() % 5);
  in.dep.pop_prev = rng() & 1;
  in.dep.pop_next = rng() & 1;
  in.dep.push_prev = rng() & 1;
  in.dep.push_next = rng() & 1;
  switch (in.opcode) {
    case Opcode::kLoad:
    case Opcode::kStore:
      in.mem_type = static_cast<MemType>(rng() % 6);
      in.sram_base = rand_bits(rng, 16);
      in.dram_base = rand_bits(rng, 32);
      in.y_size = rand_bits(rng, 16);
      in.x_size = rand_bits(rng, 16);
      in.x_stride = rand_bits(rng, 16);
      in.y_pad_0 = rand_bits(rng, 4);
      in.y_pad_1 = rand_bits(rng, 4);
      in.x_pad_0 = rand_bits(rng, 4);
      in.x_pad_1 = rand_bits(rng, 4);
      break;
    case Opcode::kGemm:
    case Opcode::kAlu: {
      const Format f = in.opcode == Opcode::kGemm ? Format::kGemm : Format::kAlu;
      in.reset = rng() & 1;
      in.uop_bgn = rand_bits(rng, width_of(spec, f, "uop_bgn"));
      in.uop_end = rand_bits(rng, width_of(spec, f, "uop_end"));
      in.iter_out = rand_bits(rng, 14);
      in.iter_in = rand_bits(rng, 14);
      in.dst_factor_out = rand_bits(rng, width_of(spec, f, "dst_factor_out"));
      in.dst_factor_in = rand_bits(rng, width_of(spec, f, "dst_factor_in"));
      in.src_factor_out = rand_bits(rng, width_of(spec, f, "src_factor_out"));
      in.src_factor_in = rand_bits(rng, width_of(spec, f, "src_factor_in"));
      if (f == Format::kGemm) {
        in.wgt_factor_out = rand_bits(rng, width_of(spec, f, "wgt_factor_out"));
        in.wgt_factor_in = rand_bits(rng, width_of(spec, f, "wgt_factor_in"));
      } else {
        in.alu_op = static_cast<AluOp>(rng() % 5);
        in.use_imm = rng() & 1;
        in.imm = static_cast<int32_t>(rand_bits(rng, 16)) - 32768;
      }
      break;
    }
    case Opcode::kFinish:
      break;
  }
  return in;
}

inline Uop random_uop(std::mt19937_64& rng, const IsaSpec& spec) {
  return Uop{rand_bits(rng, width_of(spec, Format::kUop, "dst_idx")),
             rand_bits(rng, width_of(spec, Format::kUop, "src_idx")),
             rand_bits(rng, width_of(spec, Format::kUop, "wgt_idx"))};
}

}  // namespace tessel::isa::test
