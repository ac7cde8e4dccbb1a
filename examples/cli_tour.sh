#!/usr/bin/env bash
# Example: a tour of the `tessel` command line (run from the repository root).
#   bash examples/cli_tour.sh [path/to/tessel]
set -euo pipefail
TESSEL=${1:-build/tools/tessel}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

echo "== the hardware configuration (VTA's default 1x16_i8w8a32_15_15_18_17)"
"$TESSEL" config --print

echo "== assemble a hand-written GEMM tile, disassemble it, run it on both simulators"
"$TESSEL" asm tests/golden/tools/gemm_tile.s -o "$TMP/gemm_tile.bin"
"$TESSEL" disasm "$TMP/gemm_tile.bin"
for sim in fsim cycle; do
  "$TESSEL" sim tests/golden/tools/gemm_tile.s --sim "$sim" \
    --segment inp=tests/golden/tools/gemm_tile_inp.bin --segment wgt=tests/golden/tools/gemm_tile_wgt.bin \
    --alloc out=16 --dump-segment "out=$TMP/out_$sim.bin"
done
cmp <(head -c 16 "$TMP/out_fsim.bin") <(head -c 16 "$TMP/out_cycle.bin")
echo "fsim and cycle stored the same 16 bytes"

echo "== compile a keyword-spotting model and run it on the cycle-level simulator"
"$TESSEL" compile models/mlperf-tiny/kws01_dscnn_int8_qdq.onnx -o "$TMP/kws.tsx"
"$TESSEL" run models/mlperf-tiny/kws01_dscnn_int8_qdq.onnx \
  --input data/reference/inputs/kws_sample6_f32_1x1x49x10.bin --sim cycle \
  --output "$TMP/kws_out.npy" --report-json "$TMP/kws_report.json" | tee "$TMP/run.txt"
grep -q "right" "$TMP/run.txt"
echo "tour done"
