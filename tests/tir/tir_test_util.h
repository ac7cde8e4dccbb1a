// Helpers of the TIR tests: golden text files (regenerate with TESSEL_UPDATE_GOLDEN=1 and review
// the diff) and TVM's CompareBeforeAfter style for transforms: build `before`, apply the pass,
// build `expected` by hand and compare them structurally (variables matched by binding place).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "compiler/tir/printer.h"
#include "compiler/tir/util.h"
#include "compiler/tir/verifier.h"

namespace tessel::tir::testing {

/// Compares `text` with tests/golden/<dir>/<name> byte for byte.
inline void expect_golden_in(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = std::string(TESSEL_SOURCE_DIR) + "/tests/golden/" + dir + "/" + name;
  if (const char* u = std::getenv("TESSEL_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    std::ofstream(path, std::ios::binary) << text;
  }
  std::ifstream f(path, std::ios::binary);
  ASSERT_TRUE(f.good()) << "missing golden file " << path << " (TESSEL_UPDATE_GOLDEN=1 writes it)";
  std::stringstream want;
  want << f.rdbuf();
  EXPECT_EQ(text, want.str()) << "golden mismatch with " << path;
}

/// Compares `text` with tests/golden/tir/<name>.
inline void expect_golden(const std::string& name, const std::string& text) { expect_golden_in("tir", name, text); }

/// A pass's before/after golden: tests/golden/tir/<name> holds "// before\n", the function
/// before the pass, "// after <pass>\n" and the function after it (printer.h's text).
inline void expect_before_after_golden(const std::string& name, const std::string& pass, const PrimFunc& before,
                                       const PrimFunc& after) {
  expect_golden(name, "// before\n" + to_text(before) + "// after " + pass + "\n" + to_text(after));
}

/// `after` must be well formed and structurally equal to `expected`.
inline void expect_same_func(const PrimFunc& after, const PrimFunc& expected) {
  std::vector<std::string> errs = verify(after);
  EXPECT_TRUE(errs.empty()) << "not well formed:\n" << to_text(after) << (errs.empty() ? "" : errs[0]);
  EXPECT_TRUE(structural_equal(after, expected)) << "after the pass:\n"
                                                 << to_text(after) << "expected:\n"
                                                 << to_text(expected);
}

/// Statement form (free variables of both sides are matched consistently).
inline void expect_same_stmt(const Stmt& after, const Stmt& expected) {
  EXPECT_TRUE(structural_equal(after, expected, /*map_free_vars=*/true)) << "after the pass:\n"
                                                                         << to_text(after) << "expected:\n"
                                                                         << to_text(expected);
}

}  // namespace tessel::tir::testing
