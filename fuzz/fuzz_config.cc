// Fuzz target: the hardware-configuration parser (isa/config.h, HwConfig::from_json).
// Input: JSON text. Properties: a configuration that parses is valid, serialises and parses back
// to an equal HwConfig, has a name and a label, and yields an ISA field table (IsaSpec) whose
// encoding of FINISH decodes back to FINISH.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_util.h"
#include "isa/config.h"
#include "isa/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  constexpr const char* kTarget = "config";
  const std::string text(reinterpret_cast<const char*>(data), size);
  isa::HwConfig cfg;
  if (!fuzz::expect_clean(kTarget, [&] { cfg = isa::HwConfig::from_json(text); })) return 0;
  isa::HwConfig back;
  const bool round_trip = fuzz::expect_clean(kTarget, [&] {
    cfg.validate();
    back = isa::HwConfig::from_json(cfg.to_json());
  });
  if (!round_trip) fuzz::fail(kTarget, "a parsed configuration does not validate or parse back from to_json()");
  if (!(back == cfg)) fuzz::fail(kTarget, "from_json(to_json(c)) != c for " + cfg.to_json());
  if (cfg.name().empty() || cfg.label().empty()) fuzz::fail(kTarget, "empty name() or label()");
  const bool spec_ok = fuzz::expect_clean(kTarget, [&] {
    const isa::IsaSpec spec(cfg);
    isa::Instruction finish;
    finish.opcode = isa::Opcode::kFinish;
    if (!(spec.decode(spec.encode(finish)) == finish))
      fuzz::fail(kTarget, "FINISH does not decode back to itself under " + cfg.label());
  });
  if (!spec_ok) fuzz::fail(kTarget, "IsaSpec rejects a valid configuration " + cfg.label());
  return 0;
}
