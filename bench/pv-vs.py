#!/usr/bin/env python3
"""pipespeed pv against Debian's pv and uutils cat, side by side, same run.

Usage: bench/pv-vs.py [--runs N] [--size SIZE] [--limit-seconds S]

Cases (the targets of the pv issue), source `uutils cat F` (F cached),
reader `pipe_ref read --splice`:
  quiet          src | X -q | reader          target >= 5x pv, >= 0.9x uutils cat as X
  bare splice    src | splice_cat_ref /dev/stdin 1M | reader: the bare
                 syscall loop on the shell's 64 KiB pipes, for what bounds pv
  display on     src | X -f -prtb 2>FILE | reader, and -F '%b %r %t'
                 target within 10% of -q
  pv symlink     src | pv -q | reader with pv a symlink to pipespeed
                 target as fast as pipespeed pv -q
  rate limit     X -q -L 100M G > /dev/null, G sized for S seconds   target within 5% of 100 MiB/s
"""
import argparse
import os
import shutil
import sys

from benchlib import (DATA, alternate, gib_s_of_reader, header, medians, parse_size,
                      prepare, print_samples, timed_gib_s)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--size", default="4G")
    p.add_argument("--limit-seconds", type=float, default=5.0)
    args = p.parse_args()
    args.size, args.text_size = parse_size(args.size), parse_size("1M")
    if not shutil.which("pv"):
        sys.exit("pv is not installed: apt-get install pv")
    t = prepare(args)
    ps = t["pipespeed_bin"]
    reader = f"{t['pipe_ref']} read --splice --bytes {args.size}"
    src = f"{t['uutils']} {t['big']}"
    err = os.path.join(DATA, "pv-stderr")
    # The binary called pv: a symlink, as a user would install it.
    link_dir = os.path.join(DATA, "pv-link")
    os.makedirs(link_dir, exist_ok=True)
    link = os.path.join(link_dir, "pv")
    if os.path.islink(link):
        os.remove(link)
    os.symlink(os.path.abspath(ps), link)
    header("pv-vs.py", args)
    # The version only: the banner's copyright line is pv's, not ours.
    print(f"pv: {os.popen('pv --version').readline().split(' - ')[0].strip()}")
    print()
    rows = []

    middles = {
        "pipespeed pv -q": f"{ps} pv -q",
        "pv -q": "pv -q",
        "uutils cat": t["uutils"],
        "splice_cat_ref /dev/stdin 1M": f"{t['splice_cat_ref']} /dev/stdin {1 << 20}",
        "pipespeed pv -f -prtb 2>FILE": f"{ps} pv -f -prtb 2>{err}",
        "pipespeed pv -f -F '%b %r %t' 2>FILE": f"{ps} pv -f -F '%b %r %t' 2>{err}",
        "pv (symlink to pipespeed) -q": f"{link} -q",
    }
    s = alternate(args.runs, list(middles),
                  lambda k: gib_s_of_reader(f"{src} | {middles[k]} | {reader}"))
    print_samples("middle", s)
    m = medians(s)
    ours = m["pipespeed pv -q"]
    # The machine drifts between rounds; the ratio within each round
    # (both pipelines run back to back) shows how far that moves the target.
    per_round = sorted(a / b for a, b in zip(s["pipespeed pv -q"], s["pv -q"]))
    for k in middles:
        rows.append(f"| `uutils cat F \\| {k} \\| reader` | {m[k]:.2f} GiB/s | {ours / m[k]:.2f} |")

    limit = 100 << 20
    size = int(limit * args.limit_seconds)
    limited = os.path.join(DATA, f"limit-{size}")
    if not os.path.exists(limited) or os.path.getsize(limited) != size:
        os.system(f"head -c {size} {t['big']} > {limited}")
    s = alternate(max(1, args.runs // 2), ["pipespeed", "pv"],
                  lambda k: timed_gib_s(f"{ps if k == 'pipespeed' else ''} pv -q -L 100M {limited} > /dev/null",
                                        size) * 1024)
    print_samples("limit", s)
    m2 = medians(s)

    print("| pipeline | median | pipespeed pv -q over it |")
    print("|---|---:|---:|")
    print("\n".join(rows))
    print()
    print(f"| `-L 100M` over {args.limit_seconds:g} s | median MiB/s | off by |")
    print("|---|---:|---:|")
    for k, v in m2.items():
        print(f"| {k} | {v:.1f} | {(v / 100 - 1) * 100:+.1f}% |")
    print()
    print("pipespeed pv -q / pv -q within each round: "
          + " ".join(f"{r:.1f}" for r in per_round))
    print()
    fmt_key = "pipespeed pv -f -F '%b %r %t' 2>FILE"
    print(f"targets: -q >= 5x pv: {ours / m['pv -q']:.1f}x; >= 1.0x uutils cat: "
          f"{ours / m['uutils cat']:.2f}x; display on within 10% of -q: "
          f"-prtb {(m['pipespeed pv -f -prtb 2>FILE'] / ours - 1) * 100:+.1f}%, "
          f"-F '%b %r %t' {(m[fmt_key] / ours - 1) * 100:+.1f}%; "
          f"pv symlink / pipespeed pv: {m['pv (symlink to pipespeed) -q'] / ours:.2f}; "
          f"-L 100M within 5%: {(m2['pipespeed'] / 100 - 1) * 100:+.1f}%")


if __name__ == "__main__":
    main()
