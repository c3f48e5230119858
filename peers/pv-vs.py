#!/usr/bin/env python3
"""pipespeed pv against pv 1.12 (the reference) and uutils cat, same run.

Usage: peers/pv-vs.py [--runs N] [--size SIZE] [--pv112 PATH] [--pv16 PATH]
                      [--monitored CMD] [--limit-seconds S] [--why N]

Every case runs `SRC | X | reader`: SRC is `uutils cat F` (F cached as
read back), reader `pipe_ref read --splice` (it times its own transfer).
The middles X alternate run by run, flipping the order every round; a
figure is the median over the runs, a ratio the median of the run-by-run
ratios (both sides of a ratio ran in the same round, back to back).
Beside each middle: its CPU seconds (user + system, from wait4) per GiB.
The 1-minute load is printed with every run.

  pv 1.12 -q, pipespeed pv -q, uutils cat   targets: pipespeed >= 1.0x pv 1.12
                                            and >= 1.0x uutils cat
  pv 1.6 -q (Debian's, --pv16; '' leaves it out)
  pipespeed pv -f -prtb 2>FILE (pv 1.12's beside it)   target: within 10% of -q
  pipespeed pv -q -M both -- CMD, and CMD bare (--monitored, default cat)
                                            target: within 10% of CMD bare;
                                            left out, said, while refused
  late source: `sh -c 'sleep 0.2; exec uutils cat F'`, a source that grows
    its pipe only after the middle has started (pv 1.12 -q, pipespeed pv
    -q); its figure leaves out the 0.2 s the reader's clock ran meanwhile
  -L 100M over a file sized for S seconds, timed from outside: pipespeed
    and pv 1.12, off by how much

--why N: N more runs of pv 1.12 and pipespeed pv in the middle, each
under `perf record -a` of fcntl and splice (root): how many bytes a
splice of the middle moved, what size the middle found its input pipe
at its start (F_GETPIPE_SZ) and how long before or after the source grew
it (F_SETPIPE_SZ), and on which CPU each made that call.
"""
import os
import re
import shlex
import shutil
import statistics
import subprocess
import time

from benchlib import (DATA, alternate, header, load, medians, middle_run, pair_ratios,
                      parse_size, prepare, shown, shown_cmd, spread, timed_gib_s)

GIB = 1 << 30
# How long the late source waits before it starts (and grows its pipe):
# pv 1.12 and pipespeed pv take a few milliseconds to start.
LATE_SLEEP = 0.2


def options():
    import argparse
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=9)
    p.add_argument("--size", default="4G")
    p.add_argument("--pv112", default=os.environ.get("PIPESPEED_PV"),
                   help="pv 1.12 (default $PIPESPEED_PV)")
    p.add_argument("--pv16", default=shutil.which("pv") or "",
                   help="Debian's pv 1.6 (default: pv on PATH; '' leaves it out)")
    p.add_argument("--monitored", default="cat", help="the command -M both runs")
    p.add_argument("--limit-seconds", type=float, default=5.0, help="0: no -L case")
    p.add_argument("--why", type=int, default=0, metavar="N")
    args = p.parse_args()
    if not args.pv112:
        p.error("give pv 1.12's binary: --pv112 PATH, or PIPESPEED_PV")
    args.size, args.text_size = parse_size(args.size), parse_size("1M")
    return args


def version(cmd):
    out = subprocess.run([cmd, "--version"], capture_output=True, text=True).stdout
    return out.splitlines()[0].split(" - ")[0].strip() if out else "?"


def monitor_works(ps, monitored):
    """Whether `pipespeed pv -q -M both -- CMD` runs CMD between its
    input and output (not yet, while -M is only parsed)."""
    try:
        got = subprocess.run([ps, "pv", "-q", "-M", "both", "--"] + shlex.split(monitored),
                             input=b"abc\n", capture_output=True, timeout=10)
    except subprocess.TimeoutExpired:
        return False
    return got.returncode == 0 and got.stdout == b"abc\n"


def main():
    args = options()
    t = prepare(args)
    ps = t["pipespeed_bin"]
    uutils = shlex.split(t["uutils"])
    src = uutils + [t["big"]]
    late = ["sh", "-c", f"sleep {LATE_SLEEP}; exec {t['uutils']} {shlex.quote(t['big'])}"]
    reader = [t["pipe_ref"], "read", "--splice", "--bytes", str(args.size)]
    err = os.path.join(DATA, "pv-stderr")
    pv112 = args.pv112
    header("pv-vs.py", args)
    # Paths inside the repository relative to its root, the pv binaries
    # by their version: the output names no directory of this machine.
    print(f"pv 1.12: {version(pv112)}" + (f"; pv 1.6: {version(args.pv16)}" if args.pv16 else ""))
    late_shown = ["sh", "-c", f"sleep {LATE_SLEEP}; exec {shown_cmd(src)}"]
    print(f"SRC: {shown_cmd(src)}; reader: {shown_cmd(reader)}; "
          f"late SRC: {shlex.join(late_shown)}; FILE: {shown(err)}")
    print()
    # name -> (source, middle, stderr file or None)
    cases = {
        "pv 1.12 -q": (src, [pv112, "-q"], None),
        "pipespeed pv -q": (src, [ps, "pv", "-q"], None),
        "uutils cat": (src, uutils, None),
    }
    if args.pv16:
        cases["pv 1.6 -q"] = (src, [args.pv16, "-q"], None)
    cases["pv 1.12 -f -prtb 2>FILE"] = (src, [pv112, "-f", "-prtb"], err)
    cases["pipespeed pv -f -prtb 2>FILE"] = (src, [ps, "pv", "-f", "-prtb"], err)
    monitored = shlex.split(args.monitored)
    m_key = f"pipespeed pv -q -M both -- {args.monitored}"
    if monitor_works(ps, args.monitored):
        cases[f"{args.monitored} (bare)"] = (src, monitored, None)
        cases[m_key] = (src, [ps, "pv", "-q", "-M", "both", "--"] + monitored, None)
    else:
        print(f"-M case left out: `{shown(ps)} pv -q -M both -- {args.monitored}` does not yet run "
              f"{args.monitored} between its input and output here\n")
    cases["late: pv 1.12 -q"] = (late, [pv112, "-q"], None)
    cases["late: pipespeed pv -q"] = (late, [ps, "pv", "-q"], None)

    loads = {k: [] for k in cases}
    cpu = {k: [] for k in cases}

    def measure(k):
        source, mid, stderr = cases[k]
        loads[k].append(load())
        gib_s, seconds = middle_run(source, mid, reader, stderr)
        if source is late:
            # The reader's clock ran while the source slept: not counted.
            gib_s = args.size / GIB / (args.size / GIB / gib_s - LATE_SLEEP)
        cpu[k].append(seconds / (args.size / GIB))
        return gib_s

    s = alternate(args.runs, list(cases), measure)
    m = medians(s)
    ours = "pipespeed pv -q"

    def ratio(a, b):
        return statistics.median(pair_ratios(s, a, b))

    print("| middle X in `SRC \\| X \\| reader` | median GiB/s | runs' range | "
          "CPU s/GiB of X | pipespeed pv -q over it |")
    print("|---|---:|---:|---:|---:|")
    for k in cases:
        if k.startswith("late"):
            continue
        over = f"{ratio(ours, k):.2f}" if k != ours else "1.00"
        print(f"| {k} | {m[k]:.2f} | {spread(s[k])} | {statistics.median(cpu[k]):.3f} | {over} |")
    print()
    print("| late SRC (grows its pipe after X started) \\| X | median GiB/s | runs' range | CPU s/GiB of X |")
    print("|---|---:|---:|---:|")
    for k in cases:
        if k.startswith("late"):
            print(f"| {k} | {m[k]:.2f} | {spread(s[k])} | {statistics.median(cpu[k]):.3f} |")
    print()
    print("Per run, GiB/s (1-minute load before it):")
    for k in cases:
        print(f"  {k}: " + " ".join(f"{x:.2f}({l})" for x, l in zip(s[k], loads[k])))
    print()

    targets = [f"-q over pv 1.12 -q: {ratio(ours, 'pv 1.12 -q'):.2f}x (>= 1.0)",
               f"over uutils cat: {ratio(ours, 'uutils cat'):.2f}x (>= 1.0)",
               f"-f -prtb over -q: {(ratio('pipespeed pv -f -prtb 2>FILE', ours) - 1) * 100:+.1f}% "
               "(within 10%)"]
    if m_key in cases:
        targets.append(f"-M both -- {args.monitored} over {args.monitored}: "
                       f"{(ratio(m_key, f'{args.monitored} (bare)') - 1) * 100:+.1f}% (within 10%)")
    targets.append(f"late source: {ratio('late: pipespeed pv -q', 'late: pv 1.12 -q'):.2f}x "
                   "pv 1.12")
    print("targets: " + "; ".join(targets))

    if args.limit_seconds > 0:
        limit_case(args, t, ps, pv112)
    if args.why > 0:
        why(args.why, src, reader, {"pv 1.12 -q": [pv112, "-q"], ours: [ps, "pv", "-q"]},
            args.size)


def limit_case(args, t, ps, pv112):
    limit = 100 << 20
    size = int(limit * args.limit_seconds)
    limited = os.path.join(DATA, f"limit-{size}")
    if not os.path.exists(limited) or os.path.getsize(limited) != size:
        os.system(f"head -c {size} {t['big']} > {limited}")
    tools = {"pipespeed pv": f"{ps} pv", "pv 1.12": pv112}
    s = alternate(max(1, args.runs // 3), list(tools),
                  lambda k: timed_gib_s(f"{tools[k]} -q -L 100M {limited} > /dev/null",
                                        size) * 1024)
    print()
    print(f"| `-L 100M` over {args.limit_seconds:g} s | median MiB/s | off by |")
    print("|---|---:|---:|")
    for k, v in medians(s).items():
        print(f"| {k} | {v:.1f} | {(v / 100 - 1) * 100:+.1f}% |")


EVENTS = "syscalls:sys_enter_fcntl,syscalls:sys_exit_fcntl,syscalls:sys_enter_splice"
F_SETPIPE_SZ, F_GETPIPE_SZ = 0x407, 0x408
LINE = re.compile(r"\s*(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s*(.*)")


def why(runs, src, reader, middles, size):
    """The middle's splices and its start against the source's, from
    `perf record -a` (system-wide: the source's calls too)."""
    if os.geteuid() != 0 or not shutil.which("perf"):
        print("\n--why left out: it needs root and perf")
        return
    rec = os.path.join(DATA, "pv-why.perf")
    print()
    print(f"--why: `perf record -a -e {EVENTS}` around each run")
    print()
    print("| run | X | GiB/s | load | X's splices | KiB a splice | X's input pipe at its "
          "first F_GETPIPE_SZ | SRC's F_SETPIPE_SZ | CPU of X, SRC then |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---|")
    names = list(middles)
    for i in range(runs):
        for k in names if i % 2 == 0 else names[::-1]:
            perf = subprocess.Popen(["perf", "record", "-q", "-a", "-e", EVENTS, "-o", rec],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1.0)  # perf has opened its events
            pids, before = [], load()
            gib_s, _ = middle_run(src, middles[k], reader, pids=pids)
            perf.send_signal(2)
            perf.wait()
            print(f"| {i + 1} | {k} | {gib_s:.2f} | {before} | " + " | ".join(start_of(rec, *pids[:2], size)) + " |")


def start_of(rec, src_pid, mid_pid, size):
    """From a perf record: the middle's splices and bytes a splice (the
    run's size over the count), the size of its first F_GETPIPE_SZ on fd
    0, when the source's first F_SETPIPE_SZ on its fd 1 came relative to
    it, and both calls' CPUs."""
    out = subprocess.run(["perf", "script", "-i", rec, "-F", "pid,cpu,time,event,trace"],
                         capture_output=True, text=True).stdout
    splices, asked, seen, src_at = 0, None, None, None
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        pid, cpu, at, event, trace = int(m[1]), m[2], float(m[3]), m[4], m[5]
        if pid == mid_pid and event == "syscalls:sys_enter_splice":
            splices += 1
        elif pid == mid_pid and seen is None and event == "syscalls:sys_enter_fcntl":
            asked = (at, cpu) if f"fd: 0x00000000, cmd: 0x{F_GETPIPE_SZ:08x}" in trace else None
        elif pid == mid_pid and asked and seen is None and event == "syscalls:sys_exit_fcntl":
            seen = (int(trace.split()[-1], 16), *asked)
        elif (pid == src_pid and src_at is None and event == "syscalls:sys_enter_fcntl"
              and f"fd: 0x00000001, cmd: 0x{F_SETPIPE_SZ:08x}" in trace):
            src_at = (at, cpu)
    per = f"{size / 1024 / splices:.0f}" if splices else "-"
    if seen is None:
        return [str(splices), per, "never asked", "-", "-"]
    when = "never" if src_at is None else (
        f"{(src_at[0] - seen[1]) * 1e3:+.2f} ms" + (" (after)" if src_at[0] > seen[1] else " (before)"))
    return [str(splices), per, f"{seen[0] >> 10} KiB", when,
            f"{seen[2]}, {src_at[1] if src_at else '-'}"]


if __name__ == "__main__":
    main()
