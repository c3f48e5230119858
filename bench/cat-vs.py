#!/usr/bin/env python3
"""pipespeed cat against uutils cat and GNU cat, side by side, same run.

Usage: bench/cat-vs.py [--runs N] [--size SIZE] [--text-size SIZE] [--tool cat|pv]

Cases (the targets of the cat issue):
  file -> pipe   X F | pipe_ref read --splice          target >= 1.0x uutils cat
  pipe -> pipe   uutils F | X | pipe_ref read --splice target >= 1.0x uutils cat as X
  file -> file   X F > F2 (same filesystem)           target >= 1.0x GNU cat
  -n             X -n T > /dev/null (text file)       target >= 1.0x GNU cat
  max RSS        X F | reader, peak resident memory   target <= GNU cat + 4 MiB

Runs alternate the tools, flipping the order every run, and report medians.
The data file (default 4 GiB) is made once under target/bench-data and read
once before measuring, so that every run reads from the page cache.
uutils cat 0.12.0 is installed into target/uutils with cargo if missing;
the C references are built from ../shared/peers.
"""
import argparse
import os
import resource
import shlex
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.path.join(ROOT, "target")
DATA = os.path.join(TARGET, "bench-data")


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=True, check=True, **kw)


def prepare(args):
    sh(f"cd {ROOT} && cargo build --release --quiet")
    peers = os.path.join(TARGET, "peers")
    sh(f"{ROOT}/../shared/peers/build.sh {peers} >/dev/null")
    uutils = os.path.join(TARGET, "uutils", "bin", "coreutils")
    if not os.access(uutils, os.X_OK):
        print("installing uutils cat 0.12.0 into target/uutils (about a minute)", file=sys.stderr)
        sh(f"cargo install --quiet coreutils --version 0.12.0 --no-default-features "
           f"--features cat --root {TARGET}/uutils")
    os.makedirs(DATA, exist_ok=True)
    big = os.path.join(DATA, f"zero-{args.size}")
    if not os.path.exists(big) or os.path.getsize(big) != args.size:
        # Real blocks, not a sparse file: holes are read differently.
        sh(f"head -c {args.size} /dev/urandom > {big}.tmp && mv {big}.tmp {big}")
    text = os.path.join(DATA, f"text-{args.text_size}")
    if not os.path.exists(text) or os.path.getsize(text) != args.text_size:
        # Lines of varied length, a few blank and tabbed ones.
        with open(text + ".tmp", "wb") as f:
            i, n = 0, 0
            while n < args.text_size:
                line = (b"\n" if i % 17 == 0 else
                        b"line %d\tof some text, %s\n" % (i, b"x" * (i % 61)))
                f.write(line)
                n += len(line)
                i += 1
            f.truncate(args.text_size)
        os.rename(text + ".tmp", text)
    for path in (big, text):
        sh(f"cat {path} > /dev/null")
    return {
        "pipespeed": f"{TARGET}/release/pipespeed cat",
        "uutils": f"{uutils} cat",
        "gnu": "/usr/bin/cat",
        "pipe_ref": f"{peers}/pipe_ref",
        "big": big,
        "text": text,
    }


def gib_s_of_reader(cmd):
    """Runs a pipeline ending in pipe_ref read; returns its GiB/s."""
    out = sh(cmd, capture_output=True, text=True, executable="/bin/bash").stdout
    return float(out.split()[0])


def timed_gib_s(cmd, size):
    t0 = time.perf_counter()
    sh(cmd, executable="/bin/bash")
    return size / (time.perf_counter() - t0) / (1 << 30)


def max_rss_kib(cmd):
    """Peak RSS of the first command of `cmd` (run under GNU time)."""
    out = subprocess.run(f"/usr/bin/time -f %M {cmd}", shell=True, check=True,
                         capture_output=True, text=True, executable="/bin/bash")
    return int(out.stderr.strip().splitlines()[-1])


def alternate(runs, tools, measure):
    """Runs measure(tool) for every tool, `runs` times, flipping the order."""
    samples = {t: [] for t in tools}
    for i in range(runs):
        order = tools if i % 2 == 0 else list(reversed(tools))
        for t in order:
            samples[t].append(measure(t))
    return samples


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--size", default="4G")
    p.add_argument("--text-size", default="512M")
    args = p.parse_args()
    args.size, args.text_size = parse_size(args.size), parse_size(args.text_size)
    t = prepare(args)
    reader = f"{t['pipe_ref']} read --splice --bytes {args.size}"
    big, text = t["big"], t["text"]
    out = os.path.join(DATA, "copy-out")
    tools = ["pipespeed", "uutils", "gnu"]

    print("# bench/cat-vs.py " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
    print(f"kernel {os.uname().release}; {os.cpu_count()} CPUs; "
          f"pipe-max-size {open('/proc/sys/fs/pipe-max-size').read().strip()}; "
          f"file {args.size >> 20} MiB, text {args.text_size >> 20} MiB, cached; {args.runs} runs each")
    print(f"GNU: {subprocess.run(['/usr/bin/cat', '--version'], capture_output=True, text=True).stdout.splitlines()[0]}")
    print()
    rows = []

    def row(case, samples, ref, unit, target, higher_is_better=True):
        med = {k: statistics.median(v) for k, v in samples.items()}
        ratio = med["pipespeed"] / med[ref]
        ok = ratio >= target if higher_is_better else med["pipespeed"] <= med[ref] + target
        cells = " | ".join(f"{med[k]:.2f}" if k in med else "-" for k in tools)
        rows.append(f"| {case} | {cells} | {unit} | {ratio:.2f} vs {ref} | {'yes' if ok else 'NO'} |")
        for k, v in samples.items():
            print(f"  {case} {k}: " + " ".join(f"{x:.2f}" for x in v), file=sys.stderr)

    s = alternate(args.runs, tools, lambda k: gib_s_of_reader(f"{t[k]} {big} | {reader}"))
    row("file -> pipe", s, "uutils", "GiB/s", 1.0)

    s = alternate(args.runs, tools,
                  lambda k: gib_s_of_reader(f"{t['uutils']} {big} | {t[k]} | {reader}"))
    row("pipe -> pipe (uutils F \\| X \\| reader)", s, "uutils", "GiB/s", 1.0)

    def file_to_file(k):
        if os.path.exists(out):
            os.unlink(out)
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
