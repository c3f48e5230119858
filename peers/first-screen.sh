#!/usr/bin/env bash
# The default run as a newcomer sees it: how long it takes, how many lines
# it prints and what its verdict says, on an idle machine, with
# `stress-ng --cpu 1` beside it, and on one CPU (taskset -c 0).
#
#   peers/first-screen.sh [PIPESPEED] [ROUNDS] [CONDITIONS]
#
# PIPESPEED defaults to target/release/pipespeed, ROUNDS to 2, CONDITIONS
# to "quiet load one-cpu". Each run's whole text is kept in
# target/first-screen/CONDITION-ROUND.txt.
set -euo pipefail
exe=${1:-target/release/pipespeed}
rounds=${2:-2}
conditions=${3:-quiet load one-cpu}
out=target/first-screen
mkdir -p "$out"
command -v stress-ng >/dev/null || { echo "needs stress-ng (apt-get install stress-ng)" >&2; exit 2; }
stress=""
trap '[ -n "$stress" ] && kill "$stress" 2>/dev/null; true' EXIT
echo "# peers/first-screen.sh $exe $rounds \"$conditions\""
echo "date: $(date -u +%FT%TZ); kernel: $(uname -r); $("$exe" --version | head -2 | tr '\n' ' ')"
for round in $(seq "$rounds"); do
  for cond in $conditions; do
    file="$out/$cond-$round.txt"
    run=("$exe")
    case $cond in
      load) stress-ng --cpu 1 --timeout 300s >/dev/null 2>&1 & stress=$!; sleep 1 ;;
      one-cpu) run=(taskset -c 0 "$exe") ;;
      quiet) ;;
      *) echo "unknown condition $cond" >&2; exit 2 ;;
    esac
    start=$(date +%s.%N)
    "${run[@]}" >"$file" 2>/dev/null || echo "(exit status $?)"
    end=$(date +%s.%N)
    if [ -n "$stress" ]; then kill "$stress" 2>/dev/null || true; wait "$stress" 2>/dev/null || true; stress=""; fi
    printf '\n## %s, round %s: %.1f s, %s lines\n' "$cond" "$round" \
      "$(echo "$end - $start" | bc)" "$(wc -l <"$file")"
    sed -n '/^baseline:/,/^$/p' "$file"
  done
done
