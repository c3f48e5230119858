#!/usr/bin/env python3
"""pipespeed cat against uutils cat and GNU cat, side by side, same run.

Usage: peers/cat-vs.py [--runs N] [--size SIZE] [--text-size SIZE]
                       [--cases LIST] [--before BINARY] [--skip-gnu] [--gnu PATH]

Cases (the targets of issue 39, each >= 1.0x GNU cat; --cases picks some,
by key):
  file-pipe   X F | pipe_ref read --splice
  pipe-pipe   uutils F | X | pipe_ref read --splice
  file-file   X F > F2 (same filesystem), each after a sync
  small       cd S && X 00000 ... 09999 | pipe_ref read --splice
              (10,000 files of 1-64 KiB, sizes drawn with a fixed seed)
  zero        X /dev/zero | pipe_ref read --splice --bytes SIZE (the
              reader stops after SIZE bytes, as head -c does)
  fifo        uutils F > FIFO & X FIFO | pipe_ref read --splice
  socket      X F > one end of a Unix stream socket pair, pipe_ref read
              (read(2): splice cannot go from a socket to /dev/null) on
              the other
  n           X -n T > /dev/null (text file)
  rss         X F | reader, peak resident memory   target <= GNU cat + 4 MiB

GNU cat is --gnu, else target/references/bin/gnu12-cat (GNU coreutils
9.12, fetched by scripts/references.sh gnu-9.12), else /usr/bin/cat.

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
uutils cat 0.12.0 is fetched by `scripts/references.sh uutils` if missing;
the C references are built from peers/*.c (peers/build.sh).
"""
import os
import random
import shlex
import socket
import statistics
import subprocess
import sys

from benchlib import (DATA, TARGET, alternate, data_args, gib_s_of_reader, header, load,
                      max_rss_kib, medians, pair_ratios, prepare, print_samples, sh, timed_gib_s)

CASES = ["file-pipe", "pipe-pipe", "file-file", "small", "zero", "fifo", "socket", "n", "rss"]
SMALL_FILES = 10_000


def small_files():
    """10,000 files of 1-64 KiB under target/bench-data/small (made once),
    put in the page cache as read back; returns the directory, the names
    and their total size."""
    d = os.path.join(DATA, "small")
    names = [f"{i:05}" for i in range(SMALL_FILES)]
    rng = random.Random(39)
    sizes = [rng.randint(1 << 10, 64 << 10) for _ in names]
    if not all(os.path.exists(os.path.join(d, n)) and os.path.getsize(os.path.join(d, n)) == z
               for n, z in zip(names, sizes)):
        os.makedirs(d, exist_ok=True)
        for n, z in zip(names, sizes):
            with open(os.path.join(d, n), "wb") as f:
                f.write(os.urandom(z))
    for n in names:
        fd = os.open(os.path.join(d, n), os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    sh(f"cd {d} && cat {' '.join(names)} > /dev/null")
    return d, names, sum(sizes)


def to_socket(cmd, reader):
    """Runs `cmd` (a list) with its stdout one end of a Unix stream socket
    pair, `reader` (a list) reading the other end; returns the reader's
    GiB/s."""
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    r = subprocess.Popen(reader, stdin=b, stdout=subprocess.PIPE, text=True)
    w = subprocess.Popen(cmd, stdout=a)
    a.close()
    b.close()
    out = r.communicate()[0]
    if w.wait() != 0 or r.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} > socket: status {w.returncode}, {r.returncode}")
    return float(out.split()[0])


def options(p):
    p.add_argument("--cases", default=",".join(CASES),
                   help="comma-separated keys among " + ", ".join(CASES))
    p.add_argument("--before", help="another pipespeed binary, run as a fourth tool")
    p.add_argument("--skip-gnu", action="store_true",
                   help="leave GNU cat out: only with file-pipe, pipe-pipe")
    p.add_argument("--gnu", help="GNU cat to compare with")
    p.add_argument("--pipespeed", help="the pipespeed binary to measure (default: a release "
                   "build of this tree, made first)")


def main():
    args = data_args(__doc__, options)
    cases = args.cases.split(",")
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        sys.exit(f"cat-vs.py: unknown case {', '.join(unknown)} (known: {', '.join(CASES)})")
    if args.skip_gnu and set(cases) - {"file-pipe", "pipe-pipe"}:
        sys.exit("cat-vs.py: --skip-gnu: only file-pipe and pipe-pipe have another reference")
    t = prepare(args)
    reference = os.path.join(TARGET, "references", "bin", "gnu12-cat")
    t["gnu"] = args.gnu or (shlex.quote(reference) if os.access(reference, os.X_OK)
                            else "/usr/bin/cat")
    t["pipespeed"] = t["pipespeed_bin"] + " cat"
    tools = ["pipespeed", "uutils"] + ([] if args.skip_gnu else ["gnu"])
    if args.before:
        t["before"] = os.path.abspath(args.before) + " cat"
        tools.append("before")
    reader = f"{t['pipe_ref']} read --splice --bytes {args.size}"
    big, text = t["big"], t["text"]
    out = os.path.join(DATA, "copy-out")

    header("cat-vs.py", args)
    print(f"GNU: {subprocess.run([t['gnu'], '--version'], capture_output=True, text=True).stdout.splitlines()[0]}")
    print()
    rows = []

    def measure(case, measure_one):
        before = load()
        s = alternate(args.runs, tools, measure_one)
        print(f"  {case}: load {before} -> {load()}", file=sys.stderr)
        return s

    def row(case, samples, unit, target, higher_is_better=True):
        med = medians(samples)
        ref = "uutils" if args.skip_gnu else "gnu"
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
        row("file -> pipe", s, "GiB/s", 1.0)

    if "pipe-pipe" in cases:
        s = measure("pipe -> pipe",
                    lambda k: gib_s_of_reader(f"{t['uutils']} {big} | {t[k]} | {reader}"))
        row("pipe -> pipe (uutils F \\| X \\| reader)", s, "GiB/s", 1.0)

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
        row("file -> file", s, "GiB/s", 1.0)

    if "small" in cases:
        d, names, total = small_files()
        small_reader = f"{t['pipe_ref']} read --splice --bytes {total}"
        s = measure("small files",
                    lambda k: gib_s_of_reader(f"cd {d} && {t[k]} {' '.join(names)} | {small_reader}"))
        row(f"{SMALL_FILES} files of 1-64 KiB -> pipe", s, "GiB/s", 1.0)

    if "zero" in cases:
        s = measure("/dev/zero", lambda k: gib_s_of_reader(f"{t[k]} /dev/zero | {reader}"))
        row("/dev/zero -> pipe (reader stops)", s, "GiB/s", 1.0)

    if "fifo" in cases:
        fifo = os.path.join(DATA, "cat-fifo")
        if not os.path.exists(fifo):
            os.mkfifo(fifo)
        s = measure("fifo", lambda k: gib_s_of_reader(
            f"{t['uutils']} {big} > {fifo} & {t[k]} {fifo} | {reader}; wait"))
        row("FIFO (uutils F > FIFO) -> pipe", s, "GiB/s", 1.0)

    if "socket" in cases:
        socket_reader = [t["pipe_ref"], "read", "--bytes", str(args.size)]
        s = measure("socket", lambda k: to_socket(t[k].split() + [big], socket_reader))
        row("file -> stream socket", s, "GiB/s", 1.0)

    if "n" in cases:
        s = measure("-n", lambda k: timed_gib_s(f"{t[k]} -n {text} > /dev/null", args.text_size))
        row("-n text -> /dev/null", s, "GiB/s", 1.0)

    if "rss" in cases:
        s = measure("max RSS",
                    lambda k: max_rss_kib(f"{t[k]} {big} | {reader} >/dev/null") / 1024)
        row("max RSS, file -> pipe", s, "MiB", 4.0, higher_is_better=False)

    names = {"pipespeed": "pipespeed", "uutils": "uutils", "gnu": "GNU", "before": "before"}
    before = " | pipespeed / before" if args.before else ""
    print(f"| case | {' | '.join(names[k] for k in tools)} | unit | pipespeed ratio "
          f"(median of pairs){before} | target met |")
    print("|---|" + "---:|" * len(tools) + "---|---:|" + ("---:|" if args.before else "") + "---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
