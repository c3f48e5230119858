#!/bin/bash
# The ramp check: ipc shm 4K with its JSON read by python3 from a pipe,
# the adaptive warm-up (default) against one warm-up run, alternated.
B=${1:-target/release/pipespeed}
for i in 1 2 3 4 5; do
  for mode in default "--warmup-runs 1"; do
    w=""; [ "$mode" != default ] && w="$mode"
    $B ipc --mechanisms shm --sizes 4K --metrics throughput --runs 5 --max-runs 5 --cpus 0,1 --bytes 1G $w --json - 2>/dev/null | python3 -c '
import json,sys,statistics
d=json.load(sys.stdin)["rows"][0]["throughput"]["gib_s"]["runs"]
m=statistics.median(d[2:])
print("'"$mode"'".ljust(16), [round(x,1) for x in d], "first two / median of rest: %.2f %.2f" % (d[0]/m, d[1]/m))'
  done
done
