#!/usr/bin/env bash
# Where the writer's buffer starts changes vmsplice's speed: page-aligned
# halves (--buf-offset 0) against halves 16 bytes past a page boundary, where
# malloc puts them (--buf-offset 16, the default, as in the blog and pipe_ref).
# Alternates the two, on the same CPUs, and prints both medians and the ratio.
#
# Usage: peers/buf-offset.sh [--runs N] [--bytes SIZE] [--cpus W,R]
set -euo pipefail
runs=7 bytes=4G cpus=0,1
while (($#)); do
  case "$1" in
    --runs) runs="${2:?}"; shift 2 ;;
    --bytes) bytes="${2:?}"; shift 2 ;;
    --cpus) cpus="${2:?}"; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--bytes SIZE] [--cpus W,R]" >&2; exit 2 ;;
  esac
done
wcpu=${cpus%,*} rcpu=${cpus#*,}
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
(cd "$root" && cargo build --release --quiet)
ps="$root/target/release/pipespeed"

one() { # offset reader-flags...
  local off=$1; shift
  "$ps" write --cpu "$wcpu" --vmsplice --buf-offset "$off" |
    "$ps" read --cpu "$rcpu" --bytes "$bytes" --json "$@" |
    python3 -c 'import json,sys; print("%.2f" % json.load(sys.stdin)["gib_s"])'
}
median() { python3 -c 'import statistics,sys; print("%.2f" % statistics.median(map(float, sys.argv[1:])))' "$@"; }

echo "# peers/buf-offset.sh --runs $runs --bytes $bytes --cpus $cpus"
echo "kernel $(uname -r); pipe-max-size $(cat /proc/sys/fs/pipe-max-size); 256 KiB buffer, 128 KiB pipe"
echo
echo "| reader | page-aligned (--buf-offset 0) GiB/s | malloc'd (--buf-offset 16) GiB/s | ratio |"
echo "|---|---:|---:|---:|"
for reader in read splice; do
  flags=(); [[ $reader == splice ]] && flags=(--splice)
  a=() b=()
  for ((i = 0; i < runs; i++)); do
    a+=("$(one 0 "${flags[@]}")")
    b+=("$(one 16 "${flags[@]}")")
  done
  ma=$(median "${a[@]}") mb=$(median "${b[@]}")
  echo "| vmsplice -> $reader | $ma | $mb | $(python3 -c "print('%.2f' % ($mb / $ma))") |"
done
