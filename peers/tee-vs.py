#!/usr/bin/env python3
"""pipespeed tee against uutils tee 0.12 and GNU tee, side by side, same run.

Usage: peers/tee-vs.py [--runs N] [--size SIZE] [--dir DIR] [--gnu PATH]
                       [--skip-gnu] [--shapes LIST]

Shapes (the targets of issue 39: >= 1.0x uutils tee 0.12 in each), the
stream coming from a pipe (`uutils cat F |`, which splices a cached file
at 50+ GiB/s); --shapes picks some, by key:
  one-file    uutils cat F | X DIR/o1 | reader            stdout a pipe, one file
  two-pipes   uutils cat F | X FIFO | reader, FIFO read by a second reader
  two-files   uutils cat F | X DIR/o1 DIR/o2 | reader     stdout a pipe, two files
  null        uutils cat F | X /dev/null | reader         stdout a pipe, /dev/null
The reader is `pipe_ref read --splice` (peers/pipe_ref.c). A run is the
whole pipeline's wall time, both readers and all files done; the files are
removed and the dirty pages written back (sync) before each run, so that
every run starts alike. Ratios are the medians of the run-by-run ratios
of --runs (7) alternating runs (the order flips every run).

GNU tee is --gnu, else target/references/bin/gnu-tee (9.10, fetched by
scripts/references.sh gnu-9.10), else /usr/bin/tee. uutils coreutils 0.12.0
(cat and tee) is fetched by `scripts/references.sh uutils` if missing.
"""
import argparse
import os
import shlex
import statistics
import subprocess
import sys

from benchlib import (DATA, TARGET, alternate, medians, pair_ratios, parse_size, prepare,
                      print_samples, reference, sh, timed_gib_s)

SHAPES = ["one-file", "two-pipes", "two-files", "null"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--size", default="4G")
    p.add_argument("--dir", default=DATA, help="where the two files go (default target/bench-data)")
    p.add_argument("--gnu", help="GNU tee to compare with")
    p.add_argument("--pipespeed", help="the pipespeed binary to measure (default: a release "
                   "build of this tree, made first)")
    p.add_argument("--skip-gnu", action="store_true",
                   help="leave GNU tee out (it reads and writes 8 KiB at a time: slow)")
    p.add_argument("--shapes", default=",".join(SHAPES),
                   help="comma-separated keys among " + ", ".join(SHAPES))
    args = p.parse_args()
    shapes = args.shapes.split(",")
    unknown = [c for c in shapes if c not in SHAPES]
    if unknown:
        sys.exit(f"tee-vs.py: unknown shape {', '.join(unknown)} (known: {', '.join(SHAPES)})")
    args.size = parse_size(args.size)
    args.text_size = 1 << 20
    t = prepare(args)
    gnu_tee = os.path.join(TARGET, "references", "bin", "gnu-tee")
    gnu = args.gnu or (shlex.quote(gnu_tee) if os.access(gnu_tee, os.X_OK)
                       else "/usr/bin/tee")
    tools = {"pipespeed": f"{t['pipespeed_bin']} tee", "uutils": reference("uutils", "uutils-tee")}
    if not args.skip_gnu:
        tools["gnu"] = gnu
    source = f"{t['uutils']} {t['big']}"
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

    def one_file(k):
        fresh()
        return timed_gib_s(f"{source} | {tools[k]} {o1} | {reader} >/dev/null", args.size)

    def two_files(k):
        fresh()
        return timed_gib_s(f"{source} | {tools[k]} {o1} {o2} | {reader} >/dev/null", args.size)

    def null(k):
        return timed_gib_s(f"{source} | {tools[k]} /dev/null | {reader} >/dev/null", args.size)

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
    if not args.skip_gnu:
        print(f"GNU: {gnu_version.splitlines()[0]}")
    print()
    rows = []
    names = list(tools)
    cases = {"one-file": ("stdout pipe + one file", one_file),
             "two-pipes": ("two pipes", two_pipes),
             "two-files": ("stdout pipe + two files", two_files),
             "null": ("stdout pipe + /dev/null", null)}
    for key in shapes:
        case, measure = cases[key]
        samples = alternate(args.runs, names, measure)
        print_samples(case, samples)
        med = medians(samples)
        vs_u = statistics.median(pair_ratios(samples, "pipespeed", "uutils"))
        cells = " | ".join(f"{med[k]:.2f}" for k in names)
        vs_g = ("" if args.skip_gnu else
                f" {statistics.median(pair_ratios(samples, 'pipespeed', 'gnu')):.1f}x |")
        met = "yes" if vs_u >= 1.0 else "NO"
        rows.append(f"| {case} | {cells} | {vs_u:.3f}x |{vs_g} {met} |")
    fresh()
    gnu_cols = ("", "") if args.skip_gnu else (" GNU |", " vs GNU |")
    print(f"| case (GiB/s) | pipespeed | uutils |{gnu_cols[0]} vs uutils |{gnu_cols[1]} "
          f"target met |")
    print("|---|---:|---:|" + ("" if args.skip_gnu else "---:|") + "---:|"
          + ("" if args.skip_gnu else "---:|") + "---|")
    print("\n".join(rows))
    print(f"load {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
