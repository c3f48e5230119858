#!/usr/bin/env bash
# Runs the blog's pipe ladder with pipespeed and with the C reference pipe_ref
# (peers/pipe_ref.c: the same bare syscalls, nothing else) on the same
# machine, in the same session, and prints the medians side by side.
#
# Usage: peers/ladder-vs-pipe_ref.sh [--runs N] [--bytes SIZE] [--cpus W,R] [--rungs a,b,...]
#   --runs   runs per tool per rung (default 7)
#   --bytes  bytes the reader consumes per run, K/M/G suffix (default 4G, except
#            write-read and vmsplice-read, which default to 1G: they only reach
#            about 0.5-3 GiB/s on a small VM and 4G would take minutes per rung).
#            Given explicitly, it applies to every rung.
#   --cpus   writer CPU, reader CPU (default 0,1)
#   --rungs  subset of: write-read vmsplice-read vmsplice-splice vmsplice-splice-huge
#            vmsplice-splice-huge-busy tuned (default: all, in that order)
# PIPE_REF=/path/to/pipe_ref uses an existing reference binary instead of building one.
# Exits nonzero if any run failed (the failing rung is reported, the others still run).
set -euo pipefail

cmdline="$(printf '%q ' "$0" "$@")"
runs=7 bytes="" cpus=0,1
all_rungs=(write-read vmsplice-read vmsplice-splice vmsplice-splice-huge vmsplice-splice-huge-busy tuned)
rungs=("${all_rungs[@]}")
usage() { sed -n '/^# Usage/,/^# Exits/s/^# \{0,1\}//p' "$0" >&2; exit "${1:-2}"; }
while (($#)); do
  case "$1" in
    --runs) runs="${2:?}"; shift 2 ;;
    --bytes) bytes="${2:?}"; shift 2 ;;
    --cpus) cpus="${2:?}"; shift 2 ;;
    --rungs) IFS=, read -r -a rungs <<<"${2:?}"; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "unknown argument: $1" >&2; usage ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "--runs must be a positive integer" >&2; exit 2; }
# pipe_ref's parser only takes digits plus one optional K/M/G, so insist on that form.
[[ -z "$bytes" || "$bytes" =~ ^[0-9]+[KMG]?$ ]] || { echo "--bytes must look like 64M, 4G, ..." >&2; exit 2; }
[[ "$cpus" =~ ^([0-9]+),([0-9]+)$ ]] || { echo "--cpus must be W,R" >&2; exit 2; }
wcpu=${BASH_REMATCH[1]} rcpu=${BASH_REMATCH[2]}

# Flags per rung: ours (pipespeed) and ref (pipe_ref), writer and reader.
# pipespeed accepts pipe_ref's spellings (--huge, --busy, --buf) as aliases.
declare -A W R
W[write-read]="";                         R[write-read]=""
W[vmsplice-read]="--vmsplice";            R[vmsplice-read]=""
W[vmsplice-splice]="--vmsplice";          R[vmsplice-splice]="--splice"
W[vmsplice-splice-huge]="--vmsplice --huge"; R[vmsplice-splice-huge]="--splice"
W[vmsplice-splice-huge-busy]="--vmsplice --huge --busy"; R[vmsplice-splice-huge-busy]="--splice --busy"
W[tuned]="--vmsplice --huge --busy --buf 2M"; R[tuned]="--splice --busy --buf 1M"
for r in "${rungs[@]}"; do [[ -v "W[$r]" ]] || { echo "unknown rung: $r" >&2; exit 2; }; done
rung_bytes() { case "$1" in write-read|vmsplice-read) echo "${bytes:-1G}" ;; *) echo "${bytes:-4G}" ;; esac; }

# Build both tools first so compile time never lands inside a measurement.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
(cd "$root" && cargo build --release --quiet)
ours="$root/target/release/pipespeed"
if [[ -n "${PIPE_REF:-}" ]]; then ref="$PIPE_REF"
else "$root/peers/build.sh" "$root/target/peers" >/dev/null; ref="$root/target/peers/pipe_ref"; fi
[[ -x "$ref" ]] || { echo "pipe_ref not executable: $ref" >&2; exit 2; }

tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT

# One run of one tool; prints the GiB/s value, or returns 1 with the reason in $tmp/why.
# Success is judged by the reader: the writer only ends because the reader closed the
# pipe (exit 0 on EPIPE, or 141 if SIGPIPE got it first), so those two are fine; any
# other writer status is a real failure (e.g. F_SETPIPE_SZ above pipe-max-size), which
# would otherwise show up as a bogus rate from a reader that saw early EOF.
run_once() { # tool rung
  local tool=$1 rung=$2 b; b=$(rung_bytes "$2")
  local -a st
  set +e +o pipefail  # we inspect every stage ourselves
  if [[ $tool == ours ]]; then
    "$ours" write --cpu "$wcpu" ${W[$rung]} 2>"$tmp/werr" |
      "$ours" read --cpu "$rcpu" --bytes "$b" --json ${R[$rung]} >"$tmp/out" 2>"$tmp/rerr"
  else
    taskset -c "$wcpu" "$ref" write ${W[$rung]} 2>"$tmp/werr" |
      taskset -c "$rcpu" "$ref" read --bytes "$b" ${R[$rung]} >"$tmp/out" 2>"$tmp/rerr"
  fi
  st=("${PIPESTATUS[@]}")
  set -e -o pipefail
  local val=""
  if [[ $tool == ours ]]; then
    val=$(python3 -c 'import json,sys; print("%.6f" % json.load(sys.stdin)["gib_s"])' <"$tmp/out" 2>/dev/null || true)
  else
    val=$(sed -n 's/^\([0-9.]*\) GiB\/s$/\1/p' "$tmp/out")
  fi
  if [[ ${st[1]} -ne 0 || -z "$val" || ( ${st[0]} -ne 0 && ${st[0]} -ne 141 ) ]]; then
    printf '%s: writer exit %s, reader exit %s; stdout: %s; stderr: %s\n' "$tool" "${st[0]}" "${st[1]}" \
      "$(tr '\n' ' ' <"$tmp/out")" "$(cat "$tmp/werr" "$tmp/rerr" | tr '\n' ' ')" >"$tmp/why"
    return 1
  fi
  echo "$val"
}

stats() { python3 -c 'import statistics,sys; print("%.2f" % statistics.median(map(float, sys.argv[1:])))' "$@"; }
fmt() { python3 -c 'import sys; print(" ".join("%.2f" % float(v) for v in sys.argv[1:]))' "$@"; }

echo "# $cmdline"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ); kernel: $(uname -r); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo "THP: $(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled); pipe-max-size: $(cat /proc/sys/fs/pipe-max-size); writer CPU $wcpu, reader CPU $rcpu; $runs runs per tool"
echo "bytes per run: ${bytes:-4G (write-read and vmsplice-read: 1G)}"
echo
rows=() details=() failed=0
for rung in "${rungs[@]}"; do
  a=() b=() why=""
  for ((i = 0; i < runs; i++)); do
    # Alternate ours/ref, flipping the order every other pair, so drift hits both alike.
    if ((i % 2 == 0)); then order=(ours ref); else order=(ref ours); fi
    for tool in "${order[@]}"; do
      echo "  $rung run $((i + 1))/$runs: $tool" >&2
      if ! v=$(run_once "$tool" "$rung"); then why="$(cat "$tmp/why")"; break; fi
      if [[ $tool == ours ]]; then a+=("$v"); else b+=("$v"); fi
    done
    if [[ -n "$why" ]]; then break; fi  # one failure is enough to report the rung
  done
  if [[ -n "$why" ]]; then
    failed=1
    echo "FAILED $rung: $why" >&2
    rows+=("| $rung | FAILED | FAILED | - | ok before failure: ${#a[@]} ours, ${#b[@]} ref |")
    details+=("$rung: FAILED: $why")
    continue
  fi
  ma=$(stats "${a[@]}") mb=$(stats "${b[@]}")
  ratio=$(python3 -c 'import sys; a,b=map(float,sys.argv[1:]); print("%.2f" % (a/b) if b else "inf")' "$ma" "$mb")
  rows+=("| $rung | $ma | $mb | $ratio | $runs |")
  details+=("$rung ($(rung_bytes "$rung")): pipespeed $(fmt "${a[@]}") | pipe_ref $(fmt "${b[@]}")")
done

echo "| rung | pipespeed median GiB/s | pipe_ref median GiB/s | ratio (pipespeed/pipe_ref) | runs |"
echo "|---|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
echo
echo "Per-run GiB/s, in run order:"
printf -- '- %s\n' "${details[@]}"
exit "$failed"
