#!/usr/bin/env bash
# Does `compare` call noise a change, and does it call a real one? Pairs
# of separate default runs of one binary, one after the other (issue 38):
#
#   peers/noise-pairs.sh collect DIR [PIPESPEED] [PAIRS]
#   peers/noise-pairs.sh judge DIR [PIPESPEED] [PAIRS]
#
# collect runs, PAIRS times (default 10), interleaved: two default ladders
# (ladder-aN, ladder-bN), two default latencies and contends, the
# write-read rung with the kernel's default pipe and with --pipe-size 4K
# (wr-defaultN, wr-4kN), and a default ladder beside `stress-ng --cpu 2`
# (ladder-stressN). Run it on a quiet machine: nothing else running.
# judge compares each pair and counts the rows called faster or slower:
#   same binary, quiet (ladder, latency, contend): should be 0 every pair;
#   4K pipe against the default: write-read called slower every pair;
#   ladder beside stress-ng against ladder-aN: some row called slower,
#   none faster, every pair.
# PIPESPEED defaults to target/release/pipespeed.
set -euo pipefail
what=${1:?collect or judge}
dir=${2:?a directory for the results}
exe=$(realpath "${3:-target/release/pipespeed}")
pairs=${4:-10}
mkdir -p "$dir"
cd "$dir"

collect() {
  command -v stress-ng >/dev/null || { echo "needs stress-ng" >&2; exit 2; }
  local stress=""
  trap '[ -n "$stress" ] && kill "$stress" 2>/dev/null; true' EXIT
  for i in $(seq "$pairs"); do
    echo "== pair $i $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
    for side in a b; do "$exe" --json "ladder-$side$i.json" >"ladder-$side$i.txt" 2>&1; done
    for side in a b; do "$exe" latency --json "latency-$side$i.json" >"latency-$side$i.txt" 2>&1; done
    for side in a b; do "$exe" contend --json "contend-$side$i.json" >"contend-$side$i.txt" 2>&1; done
    "$exe" bench --rungs write-read --json "wr-default$i.json" >"wr-default$i.txt" 2>&1
    "$exe" bench --rungs write-read --pipe-size 4K --json "wr-4k$i.json" >"wr-4k$i.txt" 2>&1
    stress-ng --cpu 2 --timeout 600 >/dev/null 2>&1 & stress=$!
    sleep 1
    "$exe" --json "ladder-stress$i.json" >"ladder-stress$i.txt" 2>&1
    kill "$stress"; wait "$stress" 2>/dev/null || true; stress=""
  done
  echo "== done $(date -u +%T)"
}

# The rows of `compare BASE NEW` whose verdict is VERDICT (faster or slower).
called() {
  COLUMNS=250 "$exe" compare "$1" "$2" 2>/dev/null | grep -c " $3\$" || true
}

judge() {
  printf '%-26s %5s %8s %8s\n' "pair" "#" "faster" "slower"
  for i in $(seq "$pairs"); do
    for kind in ladder latency contend; do
      printf '%-26s %5s %8s %8s\n' "$kind a vs b (same)" "$i" \
        "$(called "$kind-a$i.json" "$kind-b$i.json" faster)" \
        "$(called "$kind-a$i.json" "$kind-b$i.json" slower)"
    done
    printf '%-26s %5s %8s %8s\n' "write-read default vs 4K" "$i" \
      "$(called "wr-default$i.json" "wr-4k$i.json" faster)" \
      "$(called "wr-default$i.json" "wr-4k$i.json" slower)"
    printf '%-26s %5s %8s %8s\n' "ladder a vs stress-ng" "$i" \
      "$(called "ladder-a$i.json" "ladder-stress$i.json" faster)" \
      "$(called "ladder-a$i.json" "ladder-stress$i.json" slower)"
  done
}

case $what in
  collect) collect ;;
  judge) judge ;;
  *) echo "collect or judge, not $what" >&2; exit 2 ;;
esac
