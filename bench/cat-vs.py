#!/usr/bin/env python3
"""pipespeed cat against uutils cat and GNU cat, side by side, same run.

Usage: bench/cat-vs.py [--runs N] [--size SIZE] [--text-size SIZE]

Cases (the targets of the cat issue):
  file -> pipe   X F | pipe_ref read --splice          target >= 1.0x uutils cat
  pipe -> pipe   uutils F | X | pipe_ref read --splice target >= 1.0x uutils cat as X
  file -> file   X F > F2 (same filesystem), each after a sync   target >= 1.0x GNU cat
  -n             X -n T > /dev/null (text file)       target >= 1.0x GNU cat
  max RSS        X F | reader, peak resident memory   target <= GNU cat + 4 MiB

Runs alternate the tools, flipping the order every run, and report medians.
The data file (default 4 GiB) is made once under target/bench-data and read
once before measuring, so that every run reads from the page cache.
uutils cat 0.12.0 is installed into target/uutils with cargo if missing;
the C references are built from ../shared/peers.
"""
import os
import subprocess
import sys

from benchlib import (DATA, alternate, data_args, gib_s_of_reader, header, max_rss_kib, medians,
                      prepare, print_samples, timed_gib_s)

def main():
    args = data_args(__doc__)
    t = prepare(args)
    t["pipespeed"] = t["pipespeed_bin"] + " cat"
    reader = f"{t['pipe_ref']} read --splice --bytes {args.size}"
    big, text = t["big"], t["text"]
    out = os.path.join(DATA, "copy-out")
    tools = ["pipespeed", "uutils", "gnu"]

    header("cat-vs.py", args)
    print(f"GNU: {subprocess.run(['/usr/bin/cat', '--version'], capture_output=True, text=True).stdout.splitlines()[0]}")
    print()
    rows = []

    def row(case, samples, ref, unit, target, higher_is_better=True):
        med = medians(samples)
        ratio = med["pipespeed"] / med[ref]
        ok = ratio >= target if higher_is_better else med["pipespeed"] <= med[ref] + target
        cells = " | ".join(f"{med[k]:.2f}" if k in med else "-" for k in tools)
        rows.append(f"| {case} | {cells} | {unit} | {ratio:.2f} vs {ref} | {'yes' if ok else 'NO'} |")
        print_samples(case, samples)

    s = alternate(args.runs, tools, lambda k: gib_s_of_reader(f"{t[k]} {big} | {reader}"))
    row("file -> pipe", s, "uutils", "GiB/s", 1.0)

    s = alternate(args.runs, tools,
                  lambda k: gib_s_of_reader(f"{t['uutils']} {big} | {t[k]} | {reader}"))
    row("pipe -> pipe (uutils F \\| X \\| reader)", s, "uutils", "GiB/s", 1.0)

    def file_to_file(k):
        if os.path.exists(out):
            os.unlink(out)
        # Each copy starts with nothing dirty: the last one's pages are on
        # disk, and the filesystem can give the new file large extents.
        os.sync()
        return timed_gib_s(f"{t[k]} {big} > {out}", args.size)
    s = alternate(args.runs, tools, file_to_file)
    os.unlink(out)
    row("file -> file", s, "gnu", "GiB/s", 1.0)

    s = alternate(args.runs, tools, lambda k: timed_gib_s(f"{t[k]} -n {text} > /dev/null", args.text_size))
    row("-n text -> /dev/null", s, "gnu", "GiB/s", 1.0)

    s = alternate(args.runs, tools,
                  lambda k: max_rss_kib(f"{t[k]} {big} | {reader} >/dev/null") / 1024)
    row("max RSS, file -> pipe", s, "gnu", "MiB", 4.0, higher_is_better=False)

    print("| case | pipespeed | uutils | GNU | unit | pipespeed ratio | target met |")
    print("|---|---:|---:|---:|---|---:|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
