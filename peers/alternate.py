#!/usr/bin/env python3
"""Alternating pairs of any commands as cat, from a file or in a pipe's middle.

Usage: peers/alternate.py RUNS file|pipe [--data=FILE] NAME=COMMAND...

  file   COMMAND F | pipe_ref read --splice          (COMMAND gets F as its last argument)
  pipe   uutils cat F | COMMAND | pipe_ref read --splice

Every run, each command once, the order flipped every run; prints each
command's median GiB/s and the median of its run-by-run ratios to the
first command, with the 1-minute load before and after. Needs what
peers/cat-vs.py prepares (target/bench-data, target/peers, target/uutils);
F is the 4 GiB file, or FILE (a small one shows start-up costs: the
reader's clock starts before cat's first byte). e.g.
  peers/alternate.py 9 file uutils="target/uutils/bin/coreutils cat" \\
      mid="target/cat-loops mid 1048576 1048576" full="target/cat-loops full 1048576 1048576"
"""
import os
import statistics
import subprocess
import sys

from benchlib import DATA, TARGET, gib_s_of_reader, load, pair_ratios


def main():
    if len(sys.argv) < 4 or sys.argv[2] not in ("file", "pipe"):
        sys.exit(__doc__)
    runs, kind = int(sys.argv[1]), sys.argv[2]
    specs = sys.argv[3:]
    big = os.path.join(DATA, "zero-4294967296")
    if specs and specs[0].startswith("--data="):
        big = specs.pop(0).split("=", 1)[1]
    named = dict(spec.split("=", 1) for spec in specs)
    reader = f"{TARGET}/peers/pipe_ref read --splice --bytes {os.path.getsize(big)}"
    uutils = f"{TARGET}/uutils/bin/coreutils cat"
    samples = {name: [] for name in named}
    print(f"# peers/alternate.py {' '.join(sys.argv[1:3])}; {os.path.getsize(big) >> 20} MiB; "
          f"load {load()}")
    for i in range(runs):
        order = list(named) if i % 2 == 0 else list(reversed(named))
        for name in order:
            cmd = named[name]
            line = f"{cmd} {big} | {reader}" if kind == "file" else f"{uutils} {big} | {cmd} | {reader}"
            samples[name].append(gib_s_of_reader(line))
    first = next(iter(named))
    print(f"# load after {load()}")
    for name, figures in samples.items():
        ratio = statistics.median(pair_ratios(samples, name, first))
        print(f"{name:>12} {statistics.median(figures):6.2f} GiB/s  {ratio:.3f} x {first}  "
              f"[{' '.join(f'{x:.1f}' for x in figures)}]")


if __name__ == "__main__":
    main()
