#!/usr/bin/env bash
# Checks `pipespeed contend` against the ladder, in the same session: 1 writer and
# 1 reader with 64 KiB messages against the write-read rung of `pipespeed bench`
# with a 64 KiB buffer, alternating the two; then pipe_bench's grid (writers 1,2,5
# x readers 1,5,10) with and without --memory-pressure, as the pipe page-pool RFC
# reported it. Prints two markdown tables.
#
# Usage: peers/contend-vs-ladder.sh [--runs N] [--duration SECS] [--pipe-size SIZE]
#          [--cpus W,R|none] [--sweep-duration SECS] [--pressure-share PCT] [--no-sweep]
#   --runs            alternations of bench and contend for table 1 (default 5)
#   --duration        seconds per contend run, and bench's --run-seconds (default 3)
#   --pipe-size       pipe size for both tools, K/M suffix (default 1M); bench's
#                     write-read rung takes it through its --pipe-size
#   --cpus            writer CPU and reader CPU for both tools in table 1, or none to
#                     leave both unpinned (default 0,1, bench's own default)
#   --sweep-duration  seconds per cell of the grid (default 5, as the RFC); the grid
#                     runs unpinned, as pipe_bench does, with the same --pipe-size
#   --pressure-share  share of MemAvailable the memory hogs take (default 80, the most
#                     contend allows; 4 hogs, as stress-ng --vm 4 --vm-bytes 80%)
#   --no-sweep        table 1 only
# Quick check of the script itself: --runs 1 --duration 0.3 --sweep-duration 0.2
#   --pressure-share 1
# Exits nonzero if any run failed (the others still run).
#
# Units: bench reports GiB/s, contend MiB/s; both are turned into MiB/s here.
# contend's rate is over its measured time (first write started to last write
# returned); bench's over the reader's time from its first transfer to its last.
# Both write 64 KiB per write(2) from a buffer 16 bytes past a page boundary and
# read 64 KiB per read(2) into a page-aligned buffer.
set -euo pipefail

cmdline="$(printf '%q ' "$0" "$@")"
runs=5 duration=3 pipe_size=1M cpus=0,1 sweep_duration=5 share=80 sweep=1
usage() { sed -n '/^# Usage/,/^# Exits/s/^# \{0,1\}//p' "$0" >&2; exit "${1:-2}"; }
while (($#)); do
  case "$1" in
    --runs) runs="${2:?}"; shift 2 ;;
    --duration) duration="${2:?}"; shift 2 ;;
    --pipe-size) pipe_size="${2:?}"; shift 2 ;;
    --cpus) cpus="${2:?}"; shift 2 ;;
    --sweep-duration) sweep_duration="${2:?}"; shift 2 ;;
    --pressure-share) share="${2:?}"; shift 2 ;;
    --no-sweep) sweep=0; shift ;;
    -h|--help) usage 0 ;;
    *) echo "unknown argument: $1" >&2; usage ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "--runs must be a positive integer" >&2; exit 2; }
number='^([0-9]+\.?[0-9]*|\.[0-9]+)$'
[[ "$duration" =~ $number ]] || { echo "--duration must be seconds, e.g. 3 or 0.5" >&2; exit 2; }
[[ "$sweep_duration" =~ $number ]] || { echo "--sweep-duration must be seconds" >&2; exit 2; }
[[ "$share" =~ $number ]] || { echo "--pressure-share must be a percentage" >&2; exit 2; }
[[ "$pipe_size" =~ ^[0-9]+[KMG]?$ ]] || { echo "--pipe-size must look like 64K or 1M" >&2; exit 2; }
if [[ "$cpus" == none ]]; then
  bench_place=(--no-pin) contend_place=() placement="unpinned"
elif [[ "$cpus" =~ ^[0-9]+,[0-9]+$ ]]; then
  bench_place=(--cpus "$cpus") contend_place=(--cpus "$cpus")
  placement="writer(s) on CPU ${cpus%,*}, reader(s) on CPU ${cpus#*,}"
else
  echo "--cpus must be W,R or none" >&2; exit 2
fi

# Build first so compile time never lands inside a measurement.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
(cd "$root" && cargo build --release --quiet)
ours="$root/target/release/pipespeed"

tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
failed=0

# json FILE EXPR: prints EXPR evaluated on the document `d` (Python).
json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
# stats V...: "median min max" of the values.
stats() { python3 -c 'import statistics as s,sys; v=[float(x) for x in sys.argv[1:]]; print(s.median(v), min(v), max(v))' "$@"; }

bench_mib=() threads_mib=() procs_mib=()
bench_pipe="?" contend_pipe="?"
for ((i = 1; i <= runs; i++)); do
  if "$ours" bench --rungs write-read --buf-size 64K --pipe-size "$pipe_size" --runs 1 \
      --run-seconds "$duration" "${bench_place[@]}" --json "$tmp/bench.json" >/dev/null 2>"$tmp/err"; then
    bench_mib+=("$(json "$tmp/bench.json" 'd["rungs"][0]["gib_s"]["median"] * 1024')")
    bench_pipe="$(json "$tmp/bench.json" 'd["rungs"][0]["pipe_size"]')"
  else
    echo "bench run $i failed: $(tail -1 "$tmp/err")" >&2; failed=1
  fi
  for mode in threads processes; do
    flag=(); [[ $mode == processes ]] && flag=(--processes)
    # One measured run per alternation (the warm-up run before it is not
    # recorded): the alternation is the repetition.
    if "$ours" contend --runs 1 --msg-size 64K --pipe-size "$pipe_size" --duration "$duration" \
        "${contend_place[@]}" "${flag[@]}" --json "$tmp/contend.json" >/dev/null 2>"$tmp/err"; then
      value="$(json "$tmp/contend.json" 'd["rows"][0]["mib_per_s"]')"
      contend_pipe="$(json "$tmp/contend.json" 'd["pipe_size"]')"
      if [[ $mode == threads ]]; then threads_mib+=("$value"); else procs_mib+=("$value"); fi
    else
      echo "contend ($mode) run $i failed: $(tail -1 "$tmp/err")" >&2; failed=1
    fi
  done
done

echo "<!-- $cmdline -->"
echo "<!-- $(uname -r), $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ) -->"
echo
echo "1 writer, 1 reader, 64 KiB per write and per read, $placement; pipe size asked"
echo "$pipe_size (granted: bench $bench_pipe, contend $contend_pipe bytes); $runs alternating"
echo "runs of ${duration} s each."
echo
echo "| | bench write-read | contend 1x1, threads | contend 1x1, processes |"
echo "| --- | --- | --- | --- |"
if ((${#bench_mib[@]} && ${#threads_mib[@]} && ${#procs_mib[@]})); then
  read -r bm blo bhi < <(stats "${bench_mib[@]}")
  read -r tm tlo thi < <(stats "${threads_mib[@]}")
  read -r pm plo phi < <(stats "${procs_mib[@]}")
  printf '| median MiB/s | %.0f | %.0f | %.0f |\n' "$bm" "$tm" "$pm"
  printf '| min - max MiB/s | %.0f - %.0f | %.0f - %.0f | %.0f - %.0f |\n' \
    "$blo" "$bhi" "$tlo" "$thi" "$plo" "$phi"
  python3 -c 'import sys; b,t,p=map(float,sys.argv[1:]); print(f"| ratio to bench | 1.00 | {t/b:.2f} | {p/b:.2f} |")' "$bm" "$tm" "$pm"
else
  echo "| (no complete set of runs) | | | |"
fi

if ((sweep)); then
  sweep_ok=1
  for case in plain pressure; do
    extra=(); [[ $case == pressure ]] && extra=(--memory-pressure --pressure-share "$share")
    if ! "$ours" contend --sweep --runs 1 --msg-size 64K --pipe-size "$pipe_size" \
        --duration "$sweep_duration" "${extra[@]}" --json "$tmp/$case.json" >/dev/null 2>"$tmp/err"; then
      echo "contend --sweep ($case) failed: $(tail -1 "$tmp/err")" >&2; failed=1 sweep_ok=0
    fi
  done
  echo
  if ((sweep_ok)); then
    echo "pipe_bench's grid, threads, unpinned, 64 KiB messages, ${sweep_duration} s per cell,"
    echo "without and with memory hogs (p99 write latency in microseconds)."
    echo
    python3 - "$tmp/plain.json" "$tmp/pressure.json" <<'PY'
import json, sys
plain, hot = (json.load(open(p)) for p in sys.argv[1:3])
print("| writers | readers | writes/s | p99 write us | writes/s, pressure | p99 write us, pressure | writes/s change |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for a, b in zip(plain["rows"], hot["rows"]):
    # pipespeed.contend/2: writes_per_s is a series; its median is the rate.
    wa, wb = a["writes_per_s"]["median"] or 0, b["writes_per_s"]["median"] or 0
    change = (wb / wa - 1) * 100 if wa else float("nan")
    print(f'| {a["writers"]} | {a["readers"]} | {wa:.0f} | '
          f'{a["write_latency_ns"]["p99"] / 1e3:.1f} | {wb:.0f} | '
          f'{b["write_latency_ns"]["p99"] / 1e3:.1f} | {change:+.1f}% |')
p = hot["memory_pressure"]
def evidence(e):
    r = e.get("reclaim") or {}
    psi = e.get("psi_some_stall_us")
    return (f'pressure seen: {"yes" if e["happened"] else "NO"} '
            f'(PSI some stall {"n/a" if psi is None else f"{psi / 1e6:.2f} s"}, '
            f'pgscan {r.get("pgscan", "n/a")}, allocstall {r.get("allocstall", "n/a")})')
busy = p["hog_cpu_s"] / p["seconds"] if p["seconds"] else 0
print()
print(f'Memory hogs: {p["workers"]} x {p["bytes_per_worker"] / 2**30:.2f} GiB '
      f'({p["share_percent"]}% of MemAvailable {p["mem_available_bytes"] / 2**30:.1f} GiB'
      f'{", capped" if p["capped"] else ""}), ready after {p["ready_s"]:.0f} s, '
      f'{p["hogs_running_at_end"]} running at the end, busy on {busy:.2f} CPUs during the grid. '
      f'During the grid ({p["seconds"]:.0f} s): {evidence(p)}. '
      f'While filling: {evidence(p["while_filling"])}.')
PY
  fi
fi
exit "$failed"
