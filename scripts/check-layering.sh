#!/usr/bin/env bash
# Checks the one-way rule of ../shared/DESIGN.md section 2: a room may include only itself and the
# rooms below it. Prints every violation (file:line: room -> included room) and exits 1 if any.
#   support <- isa <- sim <- runtime <- compiler <- tools
# tests/, bench/, examples/, fuzz/ may include everything; hw/ holds SystemVerilog (no C++).
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2
declare -A allowed=(
  [support]="support"
  [isa]="support isa"
  [sim]="support isa sim"
  [runtime]="support isa sim runtime"
  [compiler]="support isa sim runtime compiler"
  [tools]="support isa sim runtime compiler tools"
)
rooms="support isa sim runtime compiler tools"
bad=0
for room in $rooms; do
  [ -d "$room" ] || continue
  while IFS= read -r hit; do
    file=${hit%%:*}; rest=${hit#*:}; line=${rest%%:*}; inc=${rest#*:}
    target=$(sed -E 's/.*#include[[:space:]]*"([^/"]+)\/.*/\1/' <<<"$inc")
    case " $rooms " in *" $target "*) ;; *) continue ;; esac
    case " ${allowed[$room]} " in
      *" $target "*) ;;
      *) echo "$file:$line: $room may not include $target ($inc)"; bad=1 ;;
    esac
  done < <(grep -rnE '^[[:space:]]*#include[[:space:]]*"[^"]+/' "$room" --include='*.h' --include='*.cc' --include='*.cpp' --include='*.hpp' 2>/dev/null)
done
# sim never links runtime/compiler, runtime never links compiler: check the CMake arrows too.
for pair in "sim:tessel_runtime" "sim:tessel_compiler" "runtime:tessel_compiler" "isa:tessel_sim" "isa:tessel_runtime" "support:tessel_isa"; do
  room=${pair%%:*}; lib=${pair#*:}
  if grep -rn --include=CMakeLists.txt -E "target_link_libraries\([^)]*\b${lib}\b" "$room" >/dev/null 2>&1; then
    grep -rn --include=CMakeLists.txt -E "target_link_libraries\([^)]*\b${lib}\b" "$room" | sed "s/^/cmake arrow points up: /"
    bad=1
  fi
done
[ $bad -eq 0 ] && echo "layering: ok (rooms: $rooms)"
exit $bad
