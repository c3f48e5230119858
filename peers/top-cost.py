#!/usr/bin/env python3
"""What watching costs: a fast pipeline's throughput without `pipespeed top`,
with it watching at --interval 1 and at --interval 0.1, in alternating order.

The pipeline is `pipespeed write --bytes SIZE | pipespeed read --json -`
(read and write system calls, the ladder's first rung): read reports the
GiB/s of the whole transfer. top is started on the reader's PID as soon as
the pipeline is, and probes it 20 times a window (every 50 ms at 1 s, 5 ms
at 0.1 s). Each round runs the three in a rotated order; the ratios are
watched / unwatched within a round, and the medians over rounds are printed.

Usage: peers/top-cost.py [--rounds 7] [--size 8G] [--bin target/release/pipespeed]
                         [--write-args '--vmsplice ...'] [--read-args '--splice ...']
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(binary, size, interval, write_args, read_args):
    """One transfer; `interval` None: unwatched. Returns GiB/s."""
    # The reader's result goes to a file: a pipe back to this script would
    # make the script a stage of the pipeline top watches.
    with tempfile.TemporaryFile() as result:
        writer = subprocess.Popen([binary, "write", "--bytes", size, *write_args], stdout=subprocess.PIPE,
                                  stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        reader = subprocess.Popen([binary, "read", "--json", "-", *read_args], stdin=writer.stdout,
                                  stdout=result, stderr=subprocess.DEVNULL)
        writer.stdout.close()
        top = None
        if interval is not None:
            top = subprocess.Popen([binary, "top", "--interval", interval, str(reader.pid)],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        reader.wait()
        writer.wait()
        if top is not None:
            top.wait()
        result.seek(0)
        return json.loads(result.read())["gib_s"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--size", default="8G")
    p.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "pipespeed"))
    p.add_argument("--write-args", default="", help="more options of write (--vmsplice ...)")
    p.add_argument("--read-args", default="", help="more options of read (--splice ...)")
    args = p.parse_args()
    wargs, rargs = args.write_args.split(), args.read_args.split()
    kinds = [None, "1", "0.1"]
    names = {None: "unwatched", "1": "top --interval 1", "0.1": "top --interval 0.1"}
    figures = {k: [] for k in kinds}
    ratios = {k: [] for k in kinds[1:]}
    for r in range(args.rounds):
        order = kinds[r % 3:] + kinds[:r % 3]
        got = {}
        for k in order:
            got[k] = run(args.bin, args.size, k, wargs, rargs)
            figures[k].append(got[k])
        for k in kinds[1:]:
            ratios[k].append(got[k] / got[None])
        print(f"round {r + 1} ({', '.join(names[k] for k in order)}): " +
              ", ".join(f"{names[k]} {got[k]:.2f}" for k in kinds), flush=True)
        time.sleep(0.5)
    print(f"\n{args.rounds} rounds of {args.size} (write {args.write_args or '-'}, "
          f"read {args.read_args or '-'}), GiB/s medians:")
    for k in kinds:
        print(f"  {names[k]:<20} {statistics.median(figures[k]):6.2f}  "
              f"(runs {min(figures[k]):.2f}-{max(figures[k]):.2f})")
    for k in kinds[1:]:
        rs = ratios[k]
        print(f"  {names[k]} / unwatched: median {statistics.median(rs):.3f} "
              f"(rounds {min(rs):.3f}-{max(rs):.3f})")


if __name__ == "__main__":
    main()
