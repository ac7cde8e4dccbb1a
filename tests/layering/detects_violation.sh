#!/usr/bin/env bash
# The layering check must catch each kind of violation and name it, and pass legal trees:
#  1. a scratch tree in which sim/ includes runtime/ (include rule);
#  2. scratch target graphs: the compiler reaching a simulator through the runtime's device
#     library, the compiler linking SystemC, sim linking runtime, a library including a header
#     of a library it does not link;
#     a legal graph (the compiler on the runtime's core, a compiler/autotune target on the
#     simulators) passes;
#  3. the real tree and its configured graph with one planted edge (the accelerator backend
#     linking the cycle simulator) fails, and passes without it.
# usage: detects_violation.sh CHECKER [SOURCE_DIR GRAPH]
set -u
checker=$1
src=${2:-}
real_graph=${3:-}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# expect RC GREP_PATTERN ARGS...: the checker exits RC and its output matches the pattern.
expect() {
  local want=$1 pattern=$2; shift 2
  out=$(bash "$checker" "$@"); rc=$?
  [ "$rc" -eq "$want" ] || fail "expected exit $want, got $rc for $*: $out"
  grep -qE -- "$pattern" <<<"$out" || fail "expected /$pattern/ for $*: $out"
}

# 1. includes
mkdir -p "$tmp/inc/sim" "$tmp/inc/runtime"
printf '#include "runtime/device.h"\n' > "$tmp/inc/sim/bad.cc"
printf '#include "isa/config.h"\n' > "$tmp/inc/runtime/good.cc"
expect 1 'sim/bad.cc:1: sim may not include runtime' "$tmp/inc"
grep -q 'good.cc' <<<"$out" && fail "flagged a legal include: $out"

# 2. link targets of a scratch tree: name, type, folder, links, sources (tab-separated)
t=$tmp/tree
mkdir -p "$t/isa" "$t/sim" "$t/runtime" "$t/compiler/backend/accel" "$t/compiler/autotune"
printf 'int a();\n' > "$t/isa/config.h"; printf '#include "isa/config.h"\n' > "$t/isa/config.cc"
printf '#include "isa/config.h"\n' > "$t/sim/fsim.cc"
printf 'int q();\n' > "$t/runtime/qnn.h"; printf '#include "runtime/qnn.h"\n' > "$t/runtime/qnn.cc"
printf '#include "isa/config.h"\n' > "$t/runtime/device.cc"
printf '#include "runtime/qnn.h"\n' > "$t/compiler/backend/accel/plan.cc"
printf '#include "isa/config.h"\n' > "$t/compiler/driver.cc"
printf '#include "isa/config.h"\n' > "$t/compiler/autotune/measure.cc"
graph() {  # graph FILE LINES...: one line per argument, fields separated by '|'
  local f=$1; shift; : > "$f"
  for line in "$@"; do tr '|' '\t' <<<"$line" >> "$f"; done
}
base=("tessel_isa|STATIC_LIBRARY|isa|fmt::fmt|isa/config.cc"
      "tessel_sim|STATIC_LIBRARY|sim|tessel_isa|sim/fsim.cc"
      "tessel_runtime_core|STATIC_LIBRARY|runtime|tessel_isa;\$<LINK_ONLY:ZLIB::ZLIB>|runtime/qnn.cc"
      "tessel_runtime|STATIC_LIBRARY|runtime|tessel_runtime_core;tessel_sim|runtime/device.cc")
good=("${base[@]}"
      "tessel_accel_backend|STATIC_LIBRARY|compiler/backend/accel|tessel_runtime_core|compiler/backend/accel/plan.cc"
      "tessel_compiler|STATIC_LIBRARY|compiler|tessel_accel_backend;tessel_isa|compiler/driver.cc"
      "tessel_autotune|STATIC_LIBRARY|compiler/autotune|tessel_compiler;tessel_runtime|compiler/autotune/measure.cc")
graph "$tmp/good.tsv" "${good[@]}"
expect 0 '^layering: ok' --graph "$tmp/good.tsv" "$t"

# the compiler links the device library, which links the simulator
graph "$tmp/sim.tsv" "${base[@]}" \
  "tessel_accel_backend|STATIC_LIBRARY|compiler/backend/accel|tessel_runtime_core|compiler/backend/accel/plan.cc" \
  "tessel_compiler|STATIC_LIBRARY|compiler|tessel_accel_backend;tessel_runtime|compiler/driver.cc"
expect 1 '^link: tessel_compiler \(compiler\) links tessel_sim \(sim\) through tessel_compiler -> tessel_runtime -> tessel_sim: compiler may not link sim$' \
  --graph "$tmp/sim.tsv" "$t"
grep -q 'tessel_accel_backend' <<<"$out" && fail "flagged a legal target: $out"

# the compiler links SystemC itself (a simulator's library)
graph "$tmp/systemc.tsv" "${base[@]}" \
  "tessel_accel_backend|STATIC_LIBRARY|compiler/backend/accel|tessel_runtime_core;PkgConfig::SYSTEMC|compiler/backend/accel/plan.cc"
expect 1 '^link: tessel_accel_backend \(compiler/backend/accel\) links PkgConfig::SYSTEMC \(sim\): compiler may not link sim$' \
  --graph "$tmp/systemc.tsv" "$t"

# sim links runtime (an arrow pointing up)
graph "$tmp/up.tsv" "${good[@]}" "tessel_fsim_extra|STATIC_LIBRARY|sim|tessel_sim;tessel_runtime_core|"
expect 1 '^link: tessel_fsim_extra \(sim\) links tessel_runtime_core \(runtime\): sim may not link runtime$' \
  --graph "$tmp/up.tsv" "$t"

# the accelerator backend includes runtime/qnn.h (tessel_runtime_core's) without linking it
graph "$tmp/under.tsv" "${base[@]}" \
  "tessel_accel_backend|STATIC_LIBRARY|compiler/backend/accel|tessel_isa|compiler/backend/accel/plan.cc" \
  "tessel_compiler|STATIC_LIBRARY|compiler|tessel_accel_backend;tessel_isa|compiler/driver.cc"
expect 1 '^link: tessel_accel_backend \(compiler/backend/accel\) uses tessel_runtime_core \(compiler/backend/accel/plan.cc:1 includes runtime/qnn.h\) but does not link it$' \
  --graph "$tmp/under.tsv" "$t"

# 3. the real tree with a planted edge
if [ -n "$src" ] && [ -n "$real_graph" ]; then
  expect 0 '^layering: ok' --graph "$real_graph" "$src"
  awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "tessel_accel_backend" { $4 = $4 ";tessel_sim_cycle" } { print }' \
    "$real_graph" > "$tmp/planted.tsv"
  cmp -s "$real_graph" "$tmp/planted.tsv" && fail "no tessel_accel_backend line in $real_graph"
  expect 1 '^link: tessel_accel_backend \(compiler/backend/accel\) links tessel_sim_cycle \(sim/cycle\): compiler may not link sim$' \
    --graph "$tmp/planted.tsv" "$src"
fi
echo "ok"
