// Fuzz target: the executable loader (runtime/executable.h, the .tsx format). Input: the bytes of
// an executable file. Properties: Executable::deserialize ends in a named error or an
// Executable; one that loads serialises to bytes that load and serialise to the same bytes; its
// tensors' sizes are computable (TensorDesc::size_bytes) and its Programs pass through the
// verifier and (bounded) fsim contracts of fuzz_util.h.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "runtime/executable.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  constexpr const char* kTarget = "tsx";
  const std::vector<uint8_t> bytes(data, data + size);
  runtime::Executable exe;
  if (!fuzz::expect_clean(kTarget, [&] { exe = runtime::Executable::deserialize(bytes); })) return 0;
  std::vector<uint8_t> once, twice;
  const bool round_trip = fuzz::expect_clean(kTarget, [&] {
    once = exe.serialize();
    twice = runtime::Executable::deserialize(once).serialize();
  });
  if (!round_trip) fuzz::fail(kTarget, "a loaded executable does not serialise and load again");
  if (once != twice) fuzz::fail(kTarget, "serialize(deserialize(serialize(e))) != serialize(e)");
  for (const runtime::TensorDesc& t : exe.tensors)
    if (!fuzz::expect_clean(kTarget, [&] { (void)t.size_bytes(); }))
      fuzz::fail(kTarget, "a loaded executable holds a tensor whose size is not computable");
  for (const isa::Program& p : exe.programs) fuzz::verify_and_run(kTarget, p);
  return 0;
}
