// tessel-isagen: writes (or checks) the artefacts generated from the ISA field tables:
// hw/generated/tessel_isa_pkg_<config>.sv and docs/isa.md.
//
//   tessel-isagen [--config FILE.json] [--out ROOT] [--check]
//
// --config: a VTA-style config (default: Tessel's default, VTA's 1x16_i8w8a32_15_15_18_17).
// --out:    the folder the paths are relative to (default: the current folder).
// --check:  compare instead of writing; exit 1 and list the files that differ.
// Exit status: 0 success, 1 drift (--check), 2 bad usage or error.
#include <cstdio>
#include <string>

#include "isa/gen/isagen.h"
#include "support/error.h"

int main(int argc, char** argv) {
  using namespace tessel;
  std::string config_path, root = ".";
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--config" || a == "--out") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tessel-isagen: %s needs a value\n", a.c_str());
        return 2;
      }
      (a == "--config" ? config_path : root) = argv[++i];
    } else if (a == "--check") {
      check = true;
    } else if (a == "--help" || a == "-h") {
      std::printf("usage: tessel-isagen [--config FILE.json] [--out ROOT] [--check]\n");
      return 0;
    } else {
      std::fprintf(stderr, "tessel-isagen: unknown argument '%s' (usage: tessel-isagen [--config FILE.json] "
                           "[--out ROOT] [--check])\n", a.c_str());
      return 2;
    }
  }
  try {
    const isa::HwConfig cfg = config_path.empty() ? isa::HwConfig{} : isa::HwConfig::from_file(config_path);
    if (check) {
      const auto drift = isa::gen::check_all(cfg, root);
      for (const auto& d : drift) std::fprintf(stderr, "tessel-isagen: %s\n", d.c_str());
      if (!drift.empty()) {
        std::fprintf(stderr, "tessel-isagen: regenerate with: tessel-isagen --out <repository root>\n");
        return 1;
      }
      std::printf("tessel-isagen: generated files for %s are up to date\n", cfg.name().c_str());
      return 0;
    }
    isa::gen::write_all(cfg, root);
    for (const auto& f : isa::gen::generate_all(cfg)) std::printf("wrote %s/%s\n", root.c_str(), f.path.c_str());
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "tessel-isagen: %s\n", e.what());
    return 2;
  }
}
