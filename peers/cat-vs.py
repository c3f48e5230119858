#!/usr/bin/env python3
"""pipespeed cat against uutils cat and GNU cat, side by side, same run.

Usage: peers/cat-vs.py [--runs N] [--size SIZE] [--text-size SIZE]
                       [--cases LIST] [--before BINARY] [--skip-gnu]

Cases (the targets of the cat issue; --cases picks some, by key):
  file-pipe   X F | pipe_ref read --splice          target >= 1.05x uutils cat
  pipe-pipe   uutils F | X | pipe_ref read --splice target >= 1.05x uutils cat as X
  file-file   X F > F2 (same filesystem), each after a sync   target >= 1.0x GNU cat
  n           X -n T > /dev/null (text file)       target >= 1.0x GNU cat
  rss         X F | reader, peak resident memory   target <= GNU cat + 4 MiB

Runs alternate the tools, flipping the order every run. Each run is a
pair (or a triple): the ratio column is the median of the run-by-run
ratios, pipespeed over the reference of the same run, so that a load
that comes and goes touches both sides of a ratio; the medians of each
tool's figures are shown too. The 1-minute load is printed before and
after each case.

--before BINARY adds another pipespeed binary (a build from before a
change) as a fourth tool, with the ratio pipespeed / before.

The data file (default 4 GiB) is made once under target/bench-data and read
once before measuring, so that every run reads from the page cache.
uutils cat 0.12.0 is installed into target/uutils with cargo if missing;
the C references are built from ../shared/peers.
"""
import os
import statistics
import subprocess
import sys

from benchlib import (DATA, alternate, data_args, gib_s_of_reader, header, load, max_rss_kib,
                      medians, pair_ratios, prepare, print_samples, timed_gib_s)

CASES = ["file-pipe", "pipe-pipe", "file-file", "n", "rss"]


def options(p):
    p.add_argument("--cases", default=",".join(CASES),
                   help="comma-separated keys among " + ", ".join(CASES))
    p.add_argument("--before", help="another pipespeed binary, run as a fourth tool")
    p.add_argument("--skip-gnu", action="store_true",
                   help="leave GNU cat out (2 s a run at 4 GiB): only with file-pipe, pipe-pipe")


def main():
    args = data_args(__doc__, options)
    cases = args.cases.split(",")
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        sys.exit(f"cat-vs.py: unknown case {', '.join(unknown)} (known: {', '.join(CASES)})")
    if args.skip_gnu and set(cases) - {"file-pipe", "pipe-pipe"}:
        sys.exit("cat-vs.py: --skip-gnu: file-file, n and rss are measured against GNU cat")
    t = prepare(args)
    t["pipespeed"] = t["pipespeed_bin"] + " cat"
    tools = ["pipespeed", "uutils"] + ([] if args.skip_gnu else ["gnu"])
    if args.before:
        t["before"] = os.path.abspath(args.before) + " cat"
        tools.append("before")
    reader = f"{t['pipe_ref']} read --splice --bytes {args.size}"
    big, text = t["big"], t["text"]
    out = os.path.join(DATA, "copy-out")

    header("cat-vs.py", args)
    print(f"GNU: {subprocess.run(['/usr/bin/cat', '--version'], capture_output=True, text=True).stdout.splitlines()[0]}")
    print()
    rows = []

    def measure(case, measure_one):
        before = load()
        s = alternate(args.runs, tools, measure_one)
        print(f"  {case}: load {before} -> {load()}", file=sys.stderr)
        return s

    def row(case, samples, ref, unit, target, higher_is_better=True):
        med = medians(samples)
        ratio = statistics.median(pair_ratios(samples, "pipespeed", ref))
        ok = ratio >= target if higher_is_better else med["pipespeed"] <= med[ref] + target
        cells = " | ".join(f"{med[k]:.2f}" if k in med else "-" for k in tools)
        than_before = (f" | {statistics.median(pair_ratios(samples, 'pipespeed', 'before')):.3f}"
                       if args.before else "")
        rows.append(f"| {case} | {cells} | {unit} | {ratio:.3f} vs {ref}{than_before} | "
                    f"{'yes' if ok else 'NO'} |")
        print_samples(case, samples)

    if "file-pipe" in cases:
        s = measure("file -> pipe",
                    lambda k: gib_s_of_reader(f"{t[k]} {big} | {reader}"))
        row("file -> pipe", s, "uutils", "GiB/s", 1.05)

    if "pipe-pipe" in cases:
        s = measure("pipe -> pipe",
                    lambda k: gib_s_of_reader(f"{t['uutils']} {big} | {t[k]} | {reader}"))
        row("pipe -> pipe (uutils F \\| X \\| reader)", s, "uutils", "GiB/s", 1.05)

    def file_to_file(k):
        if os.path.exists(out):
            os.unlink(out)
        # Each copy starts with nothing dirty: the last one's pages are on
        # disk, and the filesystem can give the new file large extents.
        os.sync()
        return timed_gib_s(f"{t[k]} {big} > {out}", args.size)
    if "file-file" in cases:
        s = measure("file -> file", file_to_file)
        os.unlink(out)
        row("file -> file", s, "gnu", "GiB/s", 1.0)

    if "n" in cases:
        s = measure("-n", lambda k: timed_gib_s(f"{t[k]} -n {text} > /dev/null", args.text_size))
        row("-n text -> /dev/null", s, "gnu", "GiB/s", 1.0)

    if "rss" in cases:
        s = measure("max RSS",
                    lambda k: max_rss_kib(f"{t[k]} {big} | {reader} >/dev/null") / 1024)
        row("max RSS, file -> pipe", s, "gnu", "MiB", 4.0, higher_is_better=False)

    names = {"pipespeed": "pipespeed", "uutils": "uutils", "gnu": "GNU", "before": "before"}
    before = " | pipespeed / before" if args.before else ""
    print(f"| case | {' | '.join(names[k] for k in tools)} | unit | pipespeed ratio "
          f"(median of pairs){before} | target met |")
    print("|---|" + "---:|" * len(tools) + "---|---:|" + ("---:|" if args.before else "") + "---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
