// Fuzz target: the assembler (isa/asm.h). Input: assembler text. The text is parsed; a listing
// with a `.config` directive is assembled for that configuration, one without for the default.
// Properties: an assembled Program serialises; disassemble() of it assembles back to the same
// bytes (the round trip isa/asm.h documents); and the verifier and fsim hold their contracts on
// it (fuzz_util.h, verify_and_run): the assembler is the most direct way to reach the verifier
// and the simulator with structured streams.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "isa/asm.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  constexpr const char* kTarget = "asm";
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  isa::Program p;
  const bool ok = fuzz::expect_clean(kTarget, [&] {
    const isa::AsmListing listing = isa::parse_asm(text);
    p = isa::assemble(text, listing.config.value_or(isa::HwConfig{}));
  });
  if (!ok) return 0;
  std::vector<uint8_t> bytes, again;
  std::string listing;
  const bool round_trip = fuzz::expect_clean(kTarget, [&] {
    bytes = p.serialize();
    listing = isa::disassemble(p);
    again = isa::assemble(listing, p.config, "asm").serialize();
  });
  if (!round_trip) fuzz::fail(kTarget, "an assembled Program does not serialise, disassemble or reassemble");
  if (bytes != again)
    fuzz::fail(kTarget, "assemble(disassemble(p)) serialises differently from p; listing:\n" + listing);
  fuzz::verify_and_run(kTarget, p);
  return 0;
}
