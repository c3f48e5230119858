#!/usr/bin/env python3
"""pipespeed tee against uutils tee 0.12 and GNU tee, side by side, same run.

Usage: peers/tee-vs.py [--runs N] [--size SIZE] [--dir DIR] [--gnu PATH]

Cases (the targets of the tee issue, #27), the stream coming from a pipe
(`uutils cat F |`, which splices a cached file at 50+ GiB/s):
  two files      uutils cat F | X DIR/o1 DIR/o2 | reader     stdout a pipe, two files
  two pipes      uutils cat F | X FIFO | reader, FIFO read by a second reader
The reader is `pipe_ref read --splice` (../shared/peers). A run is the
whole pipeline's wall time, both readers and both files done; the files are
removed and the dirty pages written back (sync) before each run, so that
every run starts alike. Targets: >= 1.0x uutils tee and >= 5x GNU tee,
median of --runs (7) alternating runs (the order flips every run).

GNU tee is --gnu, else target/anchors/gnu-tee (9.10, made by
../shared/anchors/sid-anchors.sh), else /usr/bin/tee. uutils coreutils 0.12.0
(cat and tee) is installed into target/uutils-tee with cargo if missing.
"""
import argparse
import os
import subprocess
import sys

from benchlib import (DATA, ROOT, TARGET, alternate, medians, parse_size, prepare,
                      print_samples, sh, timed_gib_s)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--size", default="4G")
    p.add_argument("--dir", default=DATA, help="where the two files go (default target/bench-data)")
    p.add_argument("--gnu", help="GNU tee to compare with")
    args = p.parse_args()
    args.size = parse_size(args.size)
    args.text_size = 1 << 20
    t = prepare(args)
    uutils = os.path.join(TARGET, "uutils-tee", "bin", "coreutils")
    if not os.access(uutils, os.X_OK):
        print("installing uutils cat and tee 0.12.0 into target/uutils-tee (about a minute)",
              file=sys.stderr)
        sh(f"cargo install --quiet coreutils --version 0.12.0 --no-default-features "
           f"--features cat,tee --root {TARGET}/uutils-tee")
    anchor = os.path.join(TARGET, "anchors", "gnu-tee")
    gnu = args.gnu or (anchor if os.access(anchor, os.X_OK) else "/usr/bin/tee")
    tools = {"pipespeed": f"{t['pipespeed_bin']} tee", "uutils": f"{uutils} tee", "gnu": gnu}
    source = f"{uutils} cat {t['big']}"
    reader = f"{t['pipe_ref']} read --splice --bytes {args.size}"
    o1, o2 = os.path.join(args.dir, "tee-o1"), os.path.join(args.dir, "tee-o2")
    fifo = os.path.join(DATA, "tee-fifo")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)

    def fresh():
        for f in (o1, o2):
            if os.path.exists(f):
                os.unlink(f)
        os.sync()

    def two_files(k):
        fresh()
        return timed_gib_s(f"{source} | {tools[k]} {o1} {o2} | {reader} >/dev/null", args.size)

    def two_pipes(k):
        fresh()
        return timed_gib_s(f"{reader} < {fifo} >/dev/null & {source} | {tools[k]} {fifo} "
                           f"| {reader} >/dev/null; wait", args.size)

    gnu_version = subprocess.run([gnu, "--version"], capture_output=True, text=True).stdout
    fs = subprocess.run(["stat", "-f", "-c", "%T", args.dir], capture_output=True,
                        text=True).stdout.strip()
    print(f"# peers/tee-vs.py " + " ".join(sys.argv[1:]))
    print(f"kernel {os.uname().release}; {os.cpu_count()} CPUs; "
          f"pipe-max-size {open('/proc/sys/fs/pipe-max-size').read().strip()}; "
          f"stream {args.size >> 20} MiB; files on {fs} ({args.dir}); {args.runs} runs each; "
          f"load {os.getloadavg()[0]:.2f}")
    print(f"GNU: {gnu_version.splitlines()[0]}")
    print()
    rows = []
    names = list(tools)
    for case, measure in [("stdout pipe + two files", two_files), ("two pipes", two_pipes)]:
        samples = alternate(args.runs, names, measure)
        print_samples(case, samples)
        med = medians(samples)
        vs_u = med["pipespeed"] / med["uutils"]
        vs_g = med["pipespeed"] / med["gnu"]
        cells = " | ".join(f"{med[k]:.2f}" for k in names)
        met = "yes" if vs_u >= 1.0 and vs_g >= 5.0 else "NO"
        rows.append(f"| {case} | {cells} | {vs_u:.2f}x | {vs_g:.1f}x | {met} |")
    fresh()
    print("| case (GiB/s) | pipespeed | uutils | GNU | vs uutils | vs GNU | target met |")
    print("|---|---:|---:|---:|---:|---:|---|")
    print("\n".join(rows))
    print(f"load {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
