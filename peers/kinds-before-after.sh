#!/bin/bash
# Two builds of pipespeed measured side by side with their own measuring
# commands: the ladder, latency and ipc, each run by OLD and NEW in
# alternating order ROUNDS times, every pair judged by NEW's `compare`
# (its bootstrap interval of each ratio, and its noise warning).
#
# Usage: peers/kinds-before-after.sh OLD_BIN NEW_BIN [ROUNDS] [OUTDIR]
set -eu
old=$1 new=$2 rounds=${3:-2} out=${4:-$(mktemp -d)}
mkdir -p "$out"
declare -A cmd=(
  [bench]="bench --rungs write-read,vmsplice-splice,tuned --placement-runs 0 --seed 1"
  [latency]="latency --sizes 1,4K,64K"
  [ipc]="ipc --mechanisms pipe,unix-stream,shm --sizes 4K,64K --metrics throughput --seed 1"
)
for kind in bench latency ipc; do
  for round in $(seq "$rounds"); do
    order="old new"
    [ $((round % 2)) -eq 0 ] && order="new old"
    for side in $order; do
      bin=$old; [ "$side" = new ] && bin=$new
      $bin ${cmd[$kind]} --json "$out/$kind-$side-$round.json" > /dev/null 2>&1
    done
    echo "== $kind, round $round (order: $order): ${cmd[$kind]}"
    "$new" compare "$out/$kind-old-$round.json" "$out/$kind-new-$round.json" 2>&1 |
      grep -v '^$' | grep -v '^pipespeed compare:' || true
  done
done
echo "files in $out"
