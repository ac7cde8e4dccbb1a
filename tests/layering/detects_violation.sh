#!/usr/bin/env bash
# Builds a scratch tree in which sim/ includes runtime/ and expects the layering check to fail
# and to name the file.
set -u
checker=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/sim" "$tmp/runtime"
printf '#include "runtime/device.h"\n' > "$tmp/sim/bad.cc"
printf '#include "isa/config.h"\n' > "$tmp/runtime/good.cc"
out=$(bash "$checker" "$tmp"); rc=$?
[ $rc -eq 1 ] || { echo "expected exit 1, got $rc: $out"; exit 1; }
grep -q 'sim/bad.cc:1: sim may not include runtime' <<<"$out" || { echo "unexpected output: $out"; exit 1; }
grep -q 'good.cc' <<<"$out" && { echo "flagged a legal include: $out"; exit 1; }
echo "ok"
