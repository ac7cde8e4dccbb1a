// Hand-written dependency-token streams shared by the verifier's error tests (tests/isa) and the
// verifier-vs-simulator agreement test (tests/compiler), as assembler text (isa/asm.h).
#pragma once

namespace tessel::testing {

/// Load pushes two l2g tokens and compute two g2l tokens before either pops: with one-token
/// queues both block on their second push (a deadlock); with two-token queues the stream is legal.
inline constexpr const char* kTwoTokensEachWayBeforeAnyPop = R"(LOAD INP sram=0 dram=0 y=0 x=0 stride=0 deps=push_next
LOAD INP sram=0 dram=0 y=0 x=0 stride=0 deps=push_next
LOAD INP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_next
LOAD INP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_next|push_next
LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=push_prev
LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=push_prev
LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev
LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev
LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev
FINISH
)";

/// A compute instruction that pops l2g and pushes g2l starts only when g2l has room (as in fsim
/// and the cycle model): its own pop cannot make room for the load module's blocked push first.
/// Deadlocks at TOKEN_QUEUE_DEPTH=1, runs at 2.
inline constexpr const char* kPopMakesRoomOnlyAfterItsStart = R"(LOAD INP sram=0 dram=0 y=0 x=0 stride=0 deps=push_next
LOAD INP sram=0 dram=0 y=0 x=0 stride=0 deps=push_next
LOAD INP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_next
LOAD INP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_next
LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=push_prev
LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev|push_prev
LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev
FINISH
)";

/// The first STORE waits for a g2s token that the GEMM after the second STORE pushes: with a
/// one-entry command queue, fetch cannot get past the second STORE (a deadlock); with two, it runs.
inline constexpr const char* kStoreTokenAfterSecondStore = R"(STORE OUT sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev
STORE OUT sram=0 dram=0 y=0 x=0 stride=0 deps=push_prev
GEMM uop=0:0 iter=0,0 dst=0,0 src=0,0 wgt=0,0 deps=push_next
FINISH deps=pop_next
)";

}  // namespace tessel::testing
