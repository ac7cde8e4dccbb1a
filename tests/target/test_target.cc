#include <gtest/gtest.h>

#include "compiler/target/accel_intrin.h"
#include "compiler/target/target.h"
#include "compiler/tir/printer.h"
#include "compiler/tir/util.h"
#include "support/error.h"

namespace tessel::compiler::target {
namespace {

TEST(Target, CpuFeatureListsRoundTrip) {
  CpuFeatures f = CpuFeatures::parse("fma,avx2,avx512_vnni");
  EXPECT_TRUE(f.avx2 && f.fma && f.avx512_vnni);
  EXPECT_FALSE(f.avx512f);
  EXPECT_EQ(f.str(), "avx2,fma,avx512_vnni");  // declaration order
  EXPECT_EQ(f.vector_bits(), 256);
  EXPECT_EQ(CpuFeatures::parse("avx512f,avx512bw").vector_bits(), 512);
  EXPECT_EQ(CpuFeatures::parse("").vector_bits(), 128);
  EXPECT_EQ(CpuFeatures::parse(CpuFeatures::detect().str()), CpuFeatures::detect());
  try {
    CpuFeatures::parse("avx2,sse9");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown cpu feature 'sse9'"), std::string::npos) << e.what();
  }
}

TEST(Target, HostDetectionIsConsistent) {
  // Whatever this machine is (the CI CPU changes from day to day), the derived facts hold.
  CpuFeatures f = CpuFeatures::detect();
  if (f.amx_int8) {
    EXPECT_TRUE(f.amx_tile);
  }
  if (f.avx512f && f.avx512bw) {
    EXPECT_EQ(f.vector_bits(), 512);
  } else if (f.avx2) {
    EXPECT_EQ(f.vector_bits(), 256);
  }
  if (f.avx512_vnni) {
    EXPECT_TRUE(f.avx512f) << "the OS saves ZMM state whenever AVX-512 VNNI counts";
  }
#if defined(__x86_64__)
  EXPECT_TRUE(f.sse4_2) << "every x86-64 machine this project runs on has SSE4.2";
#endif
}

TEST(Target, ParsesAndPrints) {
  EXPECT_EQ(Target::parse("accel").str(), "accel 1x16_i8w8a32_15_15_18_17");
  EXPECT_EQ(Target::parse("cpu -mattr=avx2,fma").str(), "cpu -mattr=avx2,fma");
  EXPECT_EQ(Target::parse("cpu").cpu, CpuFeatures::detect());
  EXPECT_EQ(Target::parse("gpu").str(), "gpu -api=opencl");
  EXPECT_EQ(Target::parse("gpu -api=cuda").str(), "gpu -api=cuda -sm=70");
  EXPECT_EQ(Target::parse("gpu -api=cuda -sm=80").gpu.sm, 80);
  for (const char* bad : {"", "tpu", "cpu -mattr=avx3", "cpu -O3", "gpu -api=metal", "gpu -api=cuda -sm=x",
                          "gpu -sm=80", "accel extra"}) {
    EXPECT_THROW(Target::parse(bad), UserError) << bad;
  }
  isa::HwConfig bad_cfg;
  bad_cfg.log_inp_buff_size = 2;
  EXPECT_THROW(Target::make_accel(bad_cfg), UserError);
}

TEST(AccelIntrin, ScopesFollowTheConfiguration) {
  isa::HwConfig cfg;  // 1x16, 32 KiB INP, 256 KiB WGT, 128 KiB ACC, 32 KiB UOP
  accel::ScopeInfo inp = accel::scope_info(cfg, tir::MemScope::kInp);
  EXPECT_EQ(inp.depth, 2048);
  EXPECT_EQ(inp.rows, 1);
  EXPECT_EQ(inp.cols, 16);
  EXPECT_EQ(inp.elem_bytes, 16);
  accel::ScopeInfo wgt = accel::scope_info(cfg, tir::MemScope::kWgt);
  EXPECT_EQ(wgt.depth, 1024);
  EXPECT_EQ(wgt.elem_bytes, 256);
  accel::ScopeInfo acc = accel::scope_info(cfg, tir::MemScope::kAcc);
  EXPECT_EQ(acc.depth, 2048);
  EXPECT_EQ(acc.dtype, tir::DataType::int32());
  EXPECT_EQ(accel::scope_info(cfg, tir::MemScope::kUop).depth, 8192);
  cfg.log_batch = 1;
  EXPECT_EQ(accel::scope_info(cfg, tir::MemScope::kInp).rows, 2);
  EXPECT_EQ(accel::scope_info(cfg, tir::MemScope::kInp).depth, 1024);
  EXPECT_THROW(accel::scope_info(cfg, tir::MemScope::kGlobal), UserError);
  EXPECT_THROW(accel::scope_info(cfg, tir::MemScope::kShared), UserError);
}

TEST(AccelIntrin, BuildersRecordAccessesAndCheckScopes) {
  const isa::HwConfig cfg;  // access_ptr offsets in elements: 16 per inp row and per INP element
  tir::Buffer inp("inp", tir::DataType::int8(), {64}, tir::MemScope::kInp);
  tir::Buffer acc("acc", tir::DataType::int32(), {64}, tir::MemScope::kAcc);
  tir::Buffer dram("data", tir::DataType::int8(), {1024});
  tir::Stmt ld = accel::dma_load(cfg, isa::MemType::kInp, inp, 0, dram, 16, 4, 8, 14, 1, 0, 1, 1);
  EXPECT_EQ(tir::to_text(ld),
            "accel.dma_load<int32>(2, tir.access_ptr<handle>(inp, 0, 800, 2), tir.access_ptr<handle>(data, 256, 896, 1), "
            "4, 8, 14, 1, 0, 1, 1)\n");
  tir::BufferAccess a = tir::buffer_access(ld);
  EXPECT_TRUE(a.writes.count(inp->data.get()));
  EXPECT_TRUE(a.reads.count(dram->data.get()));
  EXPECT_THROW(accel::dma_load(cfg, isa::MemType::kWgt, inp, 0, dram, 0, 1, 1, 1), InternalError);
  EXPECT_THROW(accel::dma_load(cfg, isa::MemType::kOut, acc, 0, dram, 0, 1, 1, 1), InternalError);
  EXPECT_THROW(accel::dma_store(cfg, inp, 0, dram, 0, 1, 1, 1), InternalError);
  EXPECT_THROW(accel::alu_uop(isa::AluOp::kAdd, true, 40000, 0, 0), InternalError);
  EXPECT_THROW(accel::dep_push(isa::Module::kLoad, isa::Module::kStore), InternalError);
  EXPECT_EQ(tir::to_text(accel::coproc_scope(isa::Module::kCompute, accel::dep_pop(isa::Module::kLoad, isa::Module::kCompute))),
            "attr [] \"accel.coproc_scope\" = 2\naccel.dep_pop<int32>(1, 2)\n");
}

}  // namespace
}  // namespace tessel::compiler::target
