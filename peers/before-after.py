#!/usr/bin/env python3
"""Two builds of pipespeed side by side: cat and pv in a pipeline, pairs alternated.

Usage: peers/before-after.py OLD_BIN NEW_BIN FILE [--runs N] [--repeat K]

FILE (cached) is read K times by the source; the reader is NEW_BIN's
`read --splice`. Cases: `X pv -q` and `X cat` in the middle of
`NEW cat FILE... | X ... | reader`, and `X cat FILE...` as the source.
Prints each case's medians and the median of new/old per pair (the
machine drifts between pairs; the ratio within a pair is what counts).
"""
import argparse
import os
import statistics
import subprocess
import time


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("file")
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--repeat", type=int, default=1)
    a = p.parse_args()
    files = " ".join([a.file] * a.repeat)
    size = os.path.getsize(a.file) * a.repeat
    reader = f"{a.new} read --splice --bytes {size}"
    cases = {
        "X pv -q (middle)": lambda b: f"{a.new} cat {files} | {b} pv -q | {reader}",
        "X cat (middle)": lambda b: f"{a.new} cat {files} | {b} cat | {reader}",
        "X cat FILE (source)": lambda b: f"{b} cat {files} | {reader}",
    }
    print(f"before-after.py: {a.old} vs {a.new}, {size / 2**30:.1f} GiB, {a.runs} pairs")
    for name, cmd in cases.items():
        got = {"old": [], "new": []}
        for i in range(a.runs):
            order = [("old", a.old), ("new", a.new)]
            for key, binary in order if i % 2 == 0 else order[::-1]:
                start = time.perf_counter()
                subprocess.run(cmd(binary), shell=True, check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                got[key].append(size / (time.perf_counter() - start) / 2**30)
        ratios = [n / o for n, o in zip(got["new"], got["old"])]
        print(f"{name}: old median {statistics.median(got['old']):.2f} GiB/s, "
              f"new {statistics.median(got['new']):.2f}, new/old per pair median "
              f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})")


if __name__ == "__main__":
    main()
