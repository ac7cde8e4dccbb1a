// sim/common: DRAM, bounded queues, token-protocol rules, program loader.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>

#include <string>
#include <vector>

#include "isa/spec.h"
#include "sim/common/program_loader.h"
#include "sim/common/queues.h"

namespace tessel::sim {
namespace {

using isa::DepFlags;
using isa::MemType;
using isa::Module;
using isa::Opcode;
using isa::TokenQueue;
using ::testing::HasSubstr;

TEST(Dram, ReadWriteAndRange) {
  Dram d(64);
  const uint8_t src[4] = {1, 2, 3, 4};
  d.write(60, src, 4);
  uint8_t dst[4] = {};
  d.read(60, dst, 4);
  EXPECT_EQ(dst[3], 4);
  EXPECT_EQ(d.data()[61], 2);
  try {
    d.write(61, src, 4);
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(std::string(e.what()),
                HasSubstr("dram write out of range: bytes [61, 65) but dram holds 64 bytes"));
  }
  EXPECT_THROW(d.read(UINT64_MAX, dst, 2), UserError);  // no wrap-around
}

TEST(BoundedQueue, FifoOrderAcrossWrapAround) {
  BoundedQueue<int> q(3);
  for (int round = 0; round < 5; ++round) {
    q.push(round * 10);
    q.push(round * 10 + 1);
    EXPECT_EQ(q.size(), 2u);
    EXPECT_EQ(q.front(), round * 10);
    q.pop();
    EXPECT_EQ(q.front(), round * 10 + 1);
    q.pop();
    EXPECT_TRUE(q.empty());
  }
  q.push(1);
  q.push(2);
  q.push(3);
  EXPECT_TRUE(q.full());
  EXPECT_THROW(q.push(4), InternalError);
  q.clear();
  EXPECT_TRUE(q.empty());
  EXPECT_THROW(q.pop(), InternalError);
}

// The capacity is a limit, not an allocation: a queue of the largest legal CMD_QUEUE_DEPTH
// (2^24) holds storage for the entries actually queued, and keeps FIFO order while it grows
// with entries wrapped around its ring.
TEST(BoundedQueue, StorageFollowsTheEntriesNotTheCapacity) {
  BoundedQueue<std::array<uint64_t, 8>> big(1u << 24);
  EXPECT_EQ(big.capacity(), 1u << 24);
  EXPECT_EQ(big.allocated(), 0u);
  for (uint64_t i = 0; i < 7; ++i) big.push({i});
  EXPECT_LE(big.allocated(), 8u);
  EXPECT_FALSE(big.full());

  BoundedQueue<int> q(100);
  int next_in = 0, next_out = 0;
  for (int round = 0; round < 40; ++round) {
    for (int k = 0; k < 3 && !q.full(); ++k) q.push(next_in++);  // grows while wrapped
    EXPECT_EQ(q.front(), next_out);
    q.pop();
    ++next_out;
  }
  while (!q.full()) q.push(next_in++);
  EXPECT_EQ(q.size(), 100u);
  EXPECT_EQ(q.allocated(), 100u);  // never more than the capacity
  EXPECT_THROW(q.push(0), InternalError);
  while (!q.empty()) {
    EXPECT_EQ(q.front(), next_out++);
    q.pop();
  }
  EXPECT_EQ(next_out, next_in);
}

TEST(TokenCounter, Bounds) {
  TokenCounter t(2);
  EXPECT_TRUE(t.empty());
  t.push();
  t.push();
  EXPECT_TRUE(t.full());
  EXPECT_THROW(t.push(), InternalError);
  t.pop();
  EXPECT_EQ(t.count(), 1u);
}

TEST(TokenRules, QueuesOfEachModule) {
  EXPECT_EQ(pop_queue(Module::kLoad, false), TokenQueue::kG2L);
  EXPECT_EQ(pop_queue(Module::kLoad, true), std::nullopt);
  EXPECT_EQ(push_queue(Module::kLoad, false), TokenQueue::kL2G);
  EXPECT_EQ(pop_queue(Module::kCompute, true), TokenQueue::kL2G);
  EXPECT_EQ(pop_queue(Module::kCompute, false), TokenQueue::kS2G);
  EXPECT_EQ(push_queue(Module::kCompute, true), TokenQueue::kG2L);
  EXPECT_EQ(push_queue(Module::kCompute, false), TokenQueue::kG2S);
  EXPECT_EQ(pop_queue(Module::kStore, true), TokenQueue::kG2S);
  EXPECT_EQ(push_queue(Module::kStore, true), TokenQueue::kS2G);
  EXPECT_EQ(push_queue(Module::kStore, false), std::nullopt);

  const TokenPorts p = token_ports(isa::make_gemm(0, 1, 1, 1, 0, 0, 0, 0, 0, 0, false,
                                                  DepFlags{true, true, true, true}),
                                   5);
  ASSERT_EQ(p.n_pops, 2u);
  EXPECT_EQ(p.pops[0], TokenQueue::kL2G);
  EXPECT_EQ(p.pops[1], TokenQueue::kS2G);
  ASSERT_EQ(p.n_pushes, 2u);
  EXPECT_EQ(p.pushes[0], TokenQueue::kG2L);
  EXPECT_EQ(p.pushes[1], TokenQueue::kG2S);
  try {
    token_ports(isa::make_noop(Module::kStore, DepFlags{false, true, false, false}), 12);
    ADD_FAILURE() << "no error";
  } catch (const SimError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("store module: insn 12 (STORE OUT) sets pop_next"));
  }
  EXPECT_EQ(describe(isa::make_alu(isa::AluOp::kShr, 0, 1, 1, 1, 0, 0, 0, 0)), "ALU SHR");
  EXPECT_EQ(describe(isa::make_gemm(0, 1, 1, 1, 0, 0, 0, 0, 0, 0, true)), "GEMM reset");
  EXPECT_EQ(describe(isa::make_mem(Opcode::kLoad, MemType::kAcc8, 0, 0, 1, 1, 1)), "LOAD ACC_8BIT");
}

isa::Program small_program() {
  isa::Program p;
  p.name = "small";
  const size_t s = p.add_segment("inp", isa::SegmentKind::kInput, 64);
  for (int k = 0; k < 64; ++k) p.image[p.segments[s].offset_bytes + k] = uint8_t(k + 1);
  p.add_segment("out", isa::SegmentKind::kOutput, 32);
  // INP element 0 of the first segment; OUT element 4096/16 = 256 (start of "out").
  p.insns.push_back(isa::make_mem(Opcode::kLoad, MemType::kInp, 0, 0, 1, 4, 4));
  p.insns.push_back(isa::make_mem(Opcode::kStore, MemType::kOut, 0, 256, 1, 2, 2));
  p.insns.push_back(isa::make_finish());
  return p;
}

TEST(ProgramLoader, PlacesImageAndRelocatedStream) {
  const isa::Program p = small_program();
  const ProgramLayout l = default_layout(p, 8192);
  EXPECT_EQ(l.image_base, 8192u);
  EXPECT_EQ(l.insn_addr, 8192u + 8192u);  // image of two 4096-byte segments
  // The 48 instruction bytes round up to a whole 4096-byte page (bus words past the stream).
  EXPECT_EQ(l.dram_bytes, 8192u + 8192u + 4096u);
  Dram d(l.dram_bytes);
  const LoadedProgram at = load_program(d, p, 8192);
  EXPECT_EQ(at.insn_addr, l.insn_addr);
  EXPECT_EQ(at.insn_count, 3u);
  EXPECT_EQ(d.data()[8192], 1);
  EXPECT_EQ(d.data()[8192 + 63], 64);
  const isa::IsaSpec spec(p.config);
  const isa::Instruction ld = spec.decode(isa::IsaSpec::from_bytes(d.data() + at.insn_addr));
  const isa::Instruction st = spec.decode(isa::IsaSpec::from_bytes(d.data() + at.insn_addr + 16));
  EXPECT_EQ(ld.dram_base, 8192u / 16);        // INP elements are 16 bytes
  EXPECT_EQ(st.dram_base, 256u + 8192u / 16); // OUT elements are 16 bytes
  EXPECT_EQ(read_segment(d, p, "inp", 8192)[5], 6);
}

TEST(ProgramLoader, Errors) {
  const isa::Program p = small_program();
  Dram d(1 << 16);
  EXPECT_THAT([&] { load_program(d, p, 100, 40960); },
              ::testing::ThrowsMessage<UserError>(HasSubstr("image base 100 is not a multiple of 4096")));
  EXPECT_THAT([&] { load_program(d, p, 0, 40968); },
              ::testing::ThrowsMessage<UserError>(HasSubstr("instruction address 40968 is not a multiple of 16")));
  EXPECT_THAT([&] { load_program(d, p, 0, 4096); },
              ::testing::ThrowsMessage<UserError>(HasSubstr("overlap the program image bytes [0, 8192)")));
  Dram small(8192);
  EXPECT_THAT([&] { load_program(small, p, 0); },
              ::testing::ThrowsMessage<UserError>(HasSubstr("dram of 8192 bytes cannot hold program 'small' (12288 bytes needed)")));
}

}  // namespace
}  // namespace tessel::sim
