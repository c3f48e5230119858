#!/usr/bin/env bash
# What bounds `uutils cat F | MIDDLE | pipe_ref read --splice`? Runs each
# named middle once per round, RUNS rounds, and prints each one's median
# GiB/s and its runs. Needs the files peers/pv-vs.py prepares
# (target/bench-data, target/peers, target/uutils) and a release build.
# Usage: peers/middle-loop.sh RUNS NAME=COMMAND...   (empty COMMAND: no middle)
# e.g.   peers/middle-loop.sh 7 none= pv="pv -q" ours="target/release/pipespeed pv -q"
set -eu  # not pipefail: the reader stops at --bytes and may leave a writer a SIGPIPE
cd "$(dirname "$0")/.."
cc -O2 -o target/splice-middle peers/splice-middle.c
F=target/bench-data/zero-4294967296
R="target/peers/pipe_ref read --splice --bytes 4G"
U="target/uutils/bin/coreutils cat"
runs=$1
shift
declare -A res
for _ in $(seq "$runs"); do
  for spec in "$@"; do
    name=${spec%%=*} cmd=${spec#*=}
    if [ -z "$cmd" ]; then
      v=$($U $F | $R | cut -d' ' -f1)
    else
      v=$($U $F | eval "$cmd" | $R | cut -d' ' -f1)
    fi
    res[$name]="${res[$name]:-} $v"
  done
done
for spec in "$@"; do
  name=${spec%%=*}
  # shellcheck disable=SC2086
  median=$(printf '%s\n' ${res[$name]} | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  echo "$name: median $median [${res[$name]} ]"
done
