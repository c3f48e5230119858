#!/bin/bash
# The screens docs/top.md shows: three pipelines run under
# `pipespeed top --run`, each printing its windows (plain lines: not a
# terminal) and its summary. Usage: peers/top-screens.sh [PIPESPEED]
set -eu
p=${1:-$(dirname "$0")/../target/release/pipespeed}
p=$(realpath "$p")
run() {
  { echo "\$ pipespeed top --run '$1'"; "$p" top --run "$1"; } | sed "s|$p|pipespeed|g"
  echo
}
# A CPU-bound stage in the middle.
run "head -c 100M /dev/urandom | gzip -1 | wc -c >/dev/null"
# A rate-limited meter at almost no CPU.
run "head -c 150M /dev/zero | pv -q -L 50M | cat >/dev/null"
# Stages that splice: their rates estimated from their neighbours.
run "$p write --bytes 16G | $p cat | $p read >/dev/null"
