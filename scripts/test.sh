#!/usr/bin/env bash
# Builds everything and runs the whole test suite (unit, golden, error, conformance, e2e, example)
# on a fresh Debian machine: installs the dependencies, configures (Release, Ninja, ccache when
# present), builds all targets, then `ctest --output-on-failure -j2` with a per-test and an
# overall timeout.
#
#   bash scripts/test.sh            # build dir: build/ (override with TESSEL_BUILD_DIR)
#   bash scripts/test.sh -L e2e     # extra arguments go to ctest
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

BUILD=${TESSEL_BUILD_DIR:-build}
JOBS=${TESSEL_JOBS:-$(nproc)}
PER_TEST_TIMEOUT=${TESSEL_TEST_TIMEOUT:-900}
TOTAL_TIMEOUT=${TESSEL_SUITE_TIMEOUT:-3600}

bash scripts/install-deps.sh
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD" -j "$JOBS"
timeout "$TOTAL_TIMEOUT" ctest --test-dir "$BUILD" --output-on-failure -j2 --timeout "$PER_TEST_TIMEOUT" "$@"
