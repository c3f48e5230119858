#!/usr/bin/env python3
"""pipespeed yes against GNU coreutils 9.12 yes, in alternating pairs.

Usage: peers/yes-vs.py [--runs N] [--bytes N]
                       [--pipespeed BINARY] [--gnu BINARY] [--peers DIR]

Two reader kinds:
  splice   YES | pipe_ref read --splice --bytes N   (pipe_ref's GiB/s)
  read     YES | pipe_ref read --bytes N            (pipe_ref's GiB/s)
Not /dev/null: GNU 9.12 yes reaches it by vmsplice and splice through a
pipe of its own, which /proc/PID/io's wchar does not count, and nothing
else here counts a process's bytes into /dev/null without slowing it.
Each run runs both, the order flipped every run; prints each one's median
GiB/s and the median of the run-by-run ratios pipespeed / GNU, with the
1-minute load before and after. pipe_ref: `bash ../shared/peers/build.sh
DIR` (DIR given as --peers, default target/peers); GNU 9.12 yes:
`../shared/anchors/sid-anchors.sh DIR` (DIR/gnu12-yes, default
target/anchors/gnu12-yes).
"""
import argparse
import os
import statistics

from benchlib import TARGET, gib_s_of_reader, load, pair_ratios, shown


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--bytes", type=int, default=4 << 30)
    ap.add_argument("--pipespeed", default=os.path.join(TARGET, "release", "pipespeed"))
    ap.add_argument("--gnu", default=os.path.join(TARGET, "anchors", "gnu12-yes"))
    ap.add_argument("--peers", default=os.path.join(TARGET, "peers"))
    a = ap.parse_args()
    yeses = {"pipespeed": [a.pipespeed, "yes"], "gnu": [a.gnu]}
    ref = os.path.join(a.peers, "pipe_ref")
    print(f"# peers/yes-vs.py: {shown(a.pipespeed)} yes vs {shown(a.gnu)}; "
          f"{a.runs} alternating pairs of {a.bytes >> 20} MiB; "
          f"load {load()}")
    for kind in ("splice", "read"):
        samples = {name: [] for name in yeses}
        for i in range(a.runs):
            order = list(yeses) if i % 2 == 0 else list(yeses)[::-1]
            for name in order:
                cmd = yeses[name]
                flag = " --splice" if kind == "splice" else ""
                line = " ".join(cmd) + f" | {ref} read{flag} --bytes {a.bytes}"
                samples[name].append(gib_s_of_reader(line))
        med = {k: statistics.median(v) for k, v in samples.items()}
        ratio = statistics.median(pair_ratios(samples, "pipespeed", "gnu"))
        print(f"{kind:7} pipespeed {med['pipespeed']:6.2f} GiB/s  GNU 9.12 "
              f"{med['gnu']:6.2f} GiB/s  ratio {ratio:.3f}x "
              f"(runs: {' '.join(f'{x:.1f}' for x in samples['pipespeed'])} | "
              f"{' '.join(f'{x:.1f}' for x in samples['gnu'])})")
    print(f"# load after {load()}")


if __name__ == "__main__":
    main()
