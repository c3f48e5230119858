#!/usr/bin/env bash
# The default run as a newcomer sees it: how long it takes, how many lines
# it prints, how wide its widest line is and what its answer says, on an
# idle machine, with `stress-ng --cpu 1` beside it, and on one CPU
# (taskset -c 0), in a terminal of COLUMNS columns.
#
#   peers/first-screen.sh [PIPESPEED] [ROUNDS] [CONDITIONS] [COLUMNS]
#
# PIPESPEED defaults to target/release/pipespeed, ROUNDS to 2, CONDITIONS
# to "quiet load one-cpu", COLUMNS to 80 (the text is laid out for it, as
# for a terminal that wide). Each run's whole text is kept in
# target/first-screen/CONDITION-ROUND.txt.
set -euo pipefail
exe=${1:-target/release/pipespeed}
rounds=${2:-2}
conditions=${3:-quiet load one-cpu}
columns=${4:-80}
out=target/first-screen
mkdir -p "$out"
command -v stress-ng >/dev/null || { echo "needs stress-ng (apt-get install stress-ng)" >&2; exit 2; }
stress=""
trap '[ -n "$stress" ] && kill "$stress" 2>/dev/null; true' EXIT
echo "# peers/first-screen.sh $exe $rounds \"$conditions\" $columns"
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
    COLUMNS=$columns "${run[@]}" >"$file" 2>/dev/null || echo "(exit status $?)"
    end=$(date +%s.%N)
    if [ -n "$stress" ]; then kill "$stress" 2>/dev/null || true; wait "$stress" 2>/dev/null || true; stress=""; fi
    printf '\n## %s, round %s: %.1f s, %s lines, the widest %s columns of %s\n' "$cond" "$round" \
      "$(echo "$end - $start" | bc)" "$(wc -l <"$file")" \
      "$(awk '{ n = length($0); if (n > w) w = n } END { print w + 0 }' "$file")" "$columns"
    sed -n '/^baseline:/,/^$/p' "$file"
  done
done
