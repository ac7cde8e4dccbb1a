#!/usr/bin/env bash
# Tessel demo for a fresh Debian machine: installs the dependencies (Debian packages only),
# builds the `tessel` command line (Release, Ninja, ccache when present) and classifies the
# bundled cat photo with the int8 MobileNetV2 on the cycle-level simulator of the accelerator.
#
#   bash scripts/demo.sh            # build dir: build/ (override with TESSEL_BUILD_DIR)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

BUILD=${TESSEL_BUILD_DIR:-build}
JOBS=${TESSEL_JOBS:-$(nproc)}

bash scripts/install-deps.sh
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD" --target tessel -j "$JOBS"

echo
echo "+ tessel run models/onnx-zoo/mobilenetv2-12-int8.onnx --input data/reference/inputs/imagenet_cat_f32_1x3x224x224.bin --sim cycle"
"$BUILD/tools/tessel" run models/onnx-zoo/mobilenetv2-12-int8.onnx \
  --input data/reference/inputs/imagenet_cat_f32_1x3x224x224.bin --sim cycle
