#!/usr/bin/env bash
# Measures `pipespeed latency` against `perf bench sched pipe` on the same
# machine, in the same session, alternating the two tools, and prints the
# medians side by side as a markdown table; then busy waiting against blocking.
#
# Usage: peers/latency-vs-perf.sh [--runs N] [--loops N] [--cpus A,B]
#   --runs   alternating runs per tool per case (default 7)
#   --loops  round trips per run, for both tools (default 100000; perf's own
#            default of 1000000 takes ~10 s per run at 10 us a round trip)
#   --cpus   the two CPUs of the two-CPU cases; the same-CPU cases use A
#            (default 0,1)
# Quick check of the script itself: --runs 1 --loops 2000.
# Exits nonzero if any run failed (the others still run).
#
# What is compared. perf bench sched pipe does `loops` round trips of a 4-byte
# int: one side writes then reads, the other reads then writes (perf's
# tools/perf/bench/sched-pipe.c), so its "usecs/op" is microseconds per ROUND
# TRIP: wall time from before the fork (or pthread_create) to after waitpid
# (or pthread_join), divided by loops. pipespeed is run with 4-byte messages
# and the same number of round trips, after 1000 warm-up round trips, and its
# figure is 1e6 / round_trips_per_s: the measured wall time divided by the
# round trips, the same kind of mean as perf's. perf cannot pin its two tasks,
# so both tools run under the same taskset mask and pipespeed is told
# --placement unpinned: the scheduler places both the same way.
set -euo pipefail

cmdline="$(printf '%q ' "$0" "$@")"
runs=7 loops=100000 cpus=0,1
usage() { sed -n '/^# Usage/,/^# Exits/s/^# \{0,1\}//p' "$0" >&2; exit "${1:-2}"; }
while (($#)); do
  case "$1" in
    --runs) runs="${2:?}"; shift 2 ;;
    --loops) loops="${2:?}"; shift 2 ;;
    --cpus) cpus="${2:?}"; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "unknown argument: $1" >&2; usage ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "--runs must be a positive integer" >&2; exit 2; }
[[ "$loops" =~ ^[1-9][0-9]*$ ]] || { echo "--loops must be a positive integer" >&2; exit 2; }
[[ "$cpus" =~ ^([0-9]+),([0-9]+)$ ]] || { echo "--cpus must be A,B" >&2; exit 2; }
cpu_a=${BASH_REMATCH[1]} cpu_b=${BASH_REMATCH[2]}
[[ $cpu_a != "$cpu_b" ]] || { echo "--cpus needs two different CPUs" >&2; exit 2; }

if ! command -v perf >/dev/null; then
  echo "perf not found: install it with 'apt-get install linux-perf' (Debian) and run again" >&2
  exit 2
fi
if ! perf bench sched pipe -l 10 >/dev/null 2>&1; then
  echo "'perf bench sched pipe' does not run here: $(perf bench sched pipe -l 10 2>&1 | tail -1)" >&2
  exit 2
fi

# Build first so compile time never lands inside a measurement.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
(cd "$root" && cargo build --release --quiet)
ours="$root/target/release/pipespeed"

tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
failed=0

# pipespeed: prints microseconds per round trip (1e6 / round_trips_per_s).
ours_once() { # mask args...
  local mask=$1; shift
  if ! taskset -c "$mask" "$ours" latency --sizes 4 --round-trips "$loops" --warmup 1000 \
      --runs 1 --csv "$tmp/out.csv" "$@" >/dev/null 2>"$tmp/err"; then
    echo "pipespeed latency $* under taskset -c $mask failed: $(tail -1 "$tmp/err")" >&2
    return 1
  fi
  # Column 5 of the one data row is round_trips_per_s.
  awk -F, 'NR == 2 { printf "%.3f\n", 1e6 / $5 }' "$tmp/out.csv"
}

# perf: prints its usecs/op (microseconds per round trip).
perf_once() { # mask args...
  local mask=$1; shift
  if ! taskset -c "$mask" perf bench sched pipe -l "$loops" "$@" >"$tmp/perf" 2>&1; then
    echo "perf bench sched pipe $* under taskset -c $mask failed: $(tail -1 "$tmp/perf")" >&2
    return 1
  fi
  awk '$2 == "usecs/op" { printf "%.3f\n", $1 }' "$tmp/perf"
}

median() { # values...
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
    END { if (NR == 0) print "-"; else if (NR % 2) printf "%.2f", v[(NR + 1) / 2];
          else printf "%.2f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# The cases: name, taskset mask, pipespeed flags, perf flags.
names=("processes, CPUs $cpu_a,$cpu_b" "threads, CPUs $cpu_a,$cpu_b" "processes, CPU $cpu_a only"
       "threads, CPU $cpu_a only")
masks=("$cpu_a,$cpu_b" "$cpu_a,$cpu_b" "$cpu_a" "$cpu_a")
ours_flags=("--processes" "--threads" "--processes" "--threads")
perf_flags=("" "-T" "" "-T")
# Busy against blocking, pinned to the two CPUs: mode flags.
busy_modes=("--processes" "--threads")

declare -A ours_runs perf_runs block_runs busy_runs
for ((i = 1; i <= runs; i++)); do
  for c in "${!names[@]}"; do
    m=${masks[$c]}
    # Alternate which tool goes first, so a drift in the machine is shared.
    if ((i % 2)); then order=(ours perf); else order=(perf ours); fi
    for tool in "${order[@]}"; do
      if [[ $tool == ours ]]; then
        if v=$(ours_once "$m" ${ours_flags[$c]} --placement unpinned --wait block); then
          ours_runs[$c]+="$v "; else failed=1; fi
      else
        # shellcheck disable=SC2086 # perf_flags may be empty
        if v=$(perf_once "$m" ${perf_flags[$c]}); then perf_runs[$c]+="$v "; else failed=1; fi
      fi
    done
  done
  for b in "${!busy_modes[@]}"; do
    pin=(--cpus "$cpu_a,$cpu_b" ${busy_modes[$b]})
    if v=$(ours_once "$cpu_a,$cpu_b" "${pin[@]}" --wait block); then
      block_runs[$b]+="$v "; else failed=1; fi
    if v=$(ours_once "$cpu_a,$cpu_b" "${pin[@]}" --wait busy); then
      busy_runs[$b]+="$v "; else failed=1; fi
  done
  echo "run $i of $runs done" >&2
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-";
                                           else printf "%.2f", a / b }'; }
verdict() { # value op limit
  awk -v v="$1" -v op="$2" -v l="$3" 'BEGIN { if (v == "-") print "-";
    else if ((op == "<=" && v <= l) || (op == ">=" && v >= l)) print "yes"; else print "NO" }'
}

echo "# $cmdline"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ); kernel: $(uname -r); cpu: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
echo "perf: $(perf --version); pipespeed: $("$ours" --version)"
echo "$runs alternating runs per tool per case, $loops round trips of 4 bytes per run;"
echo "pipespeed --placement unpinned --wait block, both tools under the same taskset mask"
echo
echo "| case | pipespeed median us/round trip | perf median us/op (= round trip) | ratio (pipespeed/perf) | within 1.1x |"
echo "|---|---:|---:|---:|:---:|"
for c in "${!names[@]}"; do
  # shellcheck disable=SC2086 # word-split the run lists
  o=$(median ${ours_runs[$c]:-}); p=$(median ${perf_runs[$c]:-}); r=$(ratio "$o" "$p")
  echo "| ${names[$c]} | $o | $p | $r | $(verdict "$r" "<=" 1.1) |"
done
echo
echo "| pipespeed, pinned to CPUs $cpu_a and $cpu_b | block median us/round trip | busy median us/round trip | busy speed-up (block/busy) | at least 2x |"
echo "|---|---:|---:|---:|:---:|"
for b in "${!busy_modes[@]}"; do
  # shellcheck disable=SC2086
  k=$(median ${block_runs[$b]:-}); s=$(median ${busy_runs[$b]:-}); r=$(ratio "$k" "$s")
  echo "| ${busy_modes[$b]#--} | $k | $s | $r | $(verdict "$r" ">=" 2) |"
done
echo
echo "Per-run us/round trip, in run order:"
for c in "${!names[@]}"; do
  echo "- ${names[$c]}: pipespeed ${ours_runs[$c]:-none}| perf ${perf_runs[$c]:-none}"
done
for b in "${!busy_modes[@]}"; do
  echo "- ${busy_modes[$b]#--} pinned: block ${block_runs[$b]:-none}| busy ${busy_runs[$b]:-none}"
done
exit "$failed"
