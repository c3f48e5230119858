#!/usr/bin/env python3
"""How long `pipespeed compare` takes for rows of many runs.

Usage: peers/compare-runs.py [N ...]   (default: 10 100 1000)

For each N, writes two copies of tests/fixtures/compare/bench-base.json
whose measured rungs have N runs each (uniform draws in [1, 2) GiB/s), and
times `pipespeed compare` on them with the release build (median of 3).
"""
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXE = os.path.join(ROOT, "target", "release", "pipespeed")


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [10, 100, 1000]
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    with open(os.path.join(ROOT, "tests", "fixtures", "compare", "bench-base.json")) as f:
        base = json.load(f)
    random.seed(1)
    print("| runs per row | rows | seconds (median of 3) | status |")
    print("|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            paths = []
            for side in ("a", "b"):
                doc = json.loads(json.dumps(base))
                rows = 0
                for rung in doc["rungs"]:
                    # pipespeed.bench/2 nests the runs in a series;
                    # /1 (the fixture) has them loose.
                    series = rung.get("gib_s") or rung
                    key = "runs" if "gib_s" in rung else "runs_gib_s"
                    if series.get(key):
                        series[key] = [random.uniform(1, 2) for _ in range(n)]
                        rows += 1
                # Named relative to the directory compare runs in, so
                # that a refusal quotes no directory of this machine.
                path = f"{side}-{n}.json"
                with open(os.path.join(tmp, path), "w") as f:
                    json.dump(doc, f)
                paths.append(path)
            times, status = [], ""
            for _ in range(3):
                start = time.monotonic()
                p = subprocess.run([EXE, "compare", *paths], capture_output=True, text=True, cwd=tmp)
                times.append(time.monotonic() - start)
                status = "compared" if p.returncode == 0 else p.stderr.strip().split(": ", 1)[-1]
            print(f"| {n} | {rows} | {statistics.median(times):.2f} | {status} |")


if __name__ == "__main__":
    main()
