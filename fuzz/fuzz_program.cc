// Fuzz target: the binary Program loader, the stream verifier and fsim (isa/program.h,
// isa/verifier.h, sim/fsim). Input: a serialised Program ("TSLPROG1"). Properties: a Program that
// deserialises serialises to bytes that deserialise and serialise to the same bytes again; the
// verifier reports instead of throwing; a Program it accepts runs on fsim (bounded: at most 4096
// instructions, 64 MiB of DRAM and 2^22 element operations, see fuzz_util.h) under both
// schedules with the same DRAM result.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "isa/program.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  constexpr const char* kTarget = "program";
  const std::vector<uint8_t> bytes(data, data + size);
  isa::Program p;
  if (!fuzz::expect_clean(kTarget, [&] { p = isa::Program::deserialize(bytes); })) return 0;
  std::vector<uint8_t> once, twice;
  const bool round_trip = fuzz::expect_clean(kTarget, [&] {
    once = p.serialize();
    twice = isa::Program::deserialize(once).serialize();
  });
  if (!round_trip) fuzz::fail(kTarget, "a deserialised Program does not serialise and deserialise again");
  if (once != twice) fuzz::fail(kTarget, "serialize(deserialize(serialize(p))) != serialize(p)");
  fuzz::verify_and_run(kTarget, p);
  return 0;
}
