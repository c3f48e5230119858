#!/usr/bin/env python3
"""`pipespeed ipc` throughput against peers/ipc_ref.c, the same loop in plain C.

Usage: peers/ipc-vs-ref.py [--runs 7] [--sizes 64K] [--mechanisms pipe,unix-stream,tcp,shm]
                           [--bytes 1G] [--cpus 0,1] [--pipespeed PATH] [--no-memcpy]
                           [--timeout 120] [--dry-run]
  --runs        runs per tool per case, alternating (default 7)
  --sizes       message sizes, comma-separated, K/M suffix (default 64K)
  --mechanisms  subset of pipe,unix-stream,tcp,shm (default: all four)
  --bytes       bytes sent per run by both tools, K/M/G suffix (default 1G); both
                round it up to a whole number of messages
  --cpus        sender CPU, receiver CPU (default 0,1)
  --pipespeed   an existing pipespeed binary (default: cargo build --release, then
                target/release/pipespeed)
  --memcpy / --no-memcpy   second part (on by default): the shm ring at 64 KiB
                messages against the ladder's memcpy rung, alternating; target
                shm/memcpy >= 0.80
  --timeout     seconds a single run may take before it is killed (default 120); a
                run killed is counted and skipped, three stop the case
  --dry-run     print the commands, run nothing
Exits 1 if any run failed or timed out (the other cases still run), 2 on bad usage
or when the pipespeed binary has no `ipc` subcommand.

What is compared, per mechanism and size: ipc_ref (built here into
target/peers/ipc_ref with `cc -O2 -Wall`) and `pipespeed ipc --metrics throughput`,
both with the sender pinned to CPU A and the receiver to CPU B, both sending
--bytes in messages of the size, both timing the receiver from its first
receive to its last over the bytes after the first receive. The tools take
turns, the order flipped every run (AB BA AB ...), so a drift of the machine
hits both; the table gives medians, their ratio and each tool's min-max,
then every run in run order. A pipespeed run is one measured run
(--runs 1 --max-runs 1) and its figure is rows[0].throughput.gib_s.runs[0]
of its --json file (runs_gib_s[0] in a pipespeed.ipc/1 file); pipespeed
makes a short warm-up run of its own first (fresh processes, about 1000
messages), ipc_ref none.

The memcpy part alternates `pipespeed bench --rungs memcpy --runs 1
--placement-runs 0 --cpus A,B` (its figure: rungs[0].gib_s.median; the rung
copies a 256 KiB buffer into another, in one thread on bench's reader CPU, B,
for about 0.4 s; the ring's producer copies on CPU A)
with `pipespeed ipc --mechanisms shm --sizes 64K` as above. bench refuses
--runs together with --max-runs; its --runs sets both, so it gets --runs 1 only.
"""
import argparse
import datetime
import json
import os
import re
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile

from benchlib import ROOT, TARGET, parse_size, shown

MECHANISMS = ["pipe", "unix-stream", "tcp", "shm"]
SIZE_RE = re.compile(r"^[0-9]+[KMG]?$")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(__doc__.splitlines()[2:]))
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--sizes", default="64K")
    p.add_argument("--mechanisms", default=",".join(MECHANISMS))
    p.add_argument("--bytes", default="1G")
    p.add_argument("--cpus", default="0,1")
    p.add_argument("--pipespeed")
    p.add_argument("--memcpy", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--timeout", type=float, default=120)
    p.add_argument("--dry-run", action="store_true")
    a = p.parse_args()
    a.sizes = a.sizes.split(",")
    a.mechanisms = a.mechanisms.split(",")
    if a.runs < 1:
        p.error("--runs must be 1 or more")
    for s in a.sizes + [a.bytes]:
        # ipc_ref's parser takes digits and one optional K/M/G, nothing else.
        if not SIZE_RE.match(s) or parse_size(s) == 0:
            p.error(f"bad size {s!r}: digits and an optional K, M or G, more than 0")
    for m in a.mechanisms:
        if m not in MECHANISMS:
            p.error(f"unknown mechanism {m!r}: one of {','.join(MECHANISMS)}")
    m = re.match(r"^([0-9]+),([0-9]+)$", a.cpus)
    if not m or m[1] == m[2]:
        p.error("--cpus must be two different CPUs, A,B")
    return a


class RunFailed(Exception):
    pass


class TimedOut(RunFailed):
    """A run killed at --timeout: a hung end, most likely."""


class Unavailable(RunFailed):
    """pipespeed says the measurement is not possible on this machine."""


def run(cmd, timeout):
    """Runs cmd (a list) in a session of its own; returns its stdout. A run
    past `timeout` seconds is killed with its children (a hung receiver)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise TimedOut(f"timed out after {timeout:g} s (killed): {shlex.join(cmd)}")
    if proc.returncode != 0:
        last = (err.strip().splitlines() or ["(no message)"])[-1]
        raise RunFailed(f"exit {proc.returncode}: {last}: {shlex.join(cmd)}")
    return out


class Tools:
    def __init__(self, args, tmp):
        self.args, self.tmp = args, tmp
        self.ref = os.path.join(TARGET, "peers", "ipc_ref")
        self.exe = args.pipespeed or os.path.join(TARGET, "release", "pipespeed")
        self.json = os.path.join(tmp, "out.json")

    def ref_cmd(self, mech, size):
        return [self.ref, mech, size, self.args.bytes, "--cpus", self.args.cpus]

    def ipc_cmd(self, mech, size):
        return [self.exe, "ipc", "--mechanisms", mech, "--sizes", size, "--metrics", "throughput",
                "--runs", "1", "--max-runs", "1", "--cpus", self.args.cpus,
                "--bytes", self.args.bytes, "--json", self.json]

    def memcpy_cmd(self):
        return [self.exe, "bench", "--rungs", "memcpy", "--runs", "1", "--placement-runs", "0",
                "--cpus", self.args.cpus, "--json", self.json]

    def ref_once(self, mech, size):
        out = run(self.ref_cmd(mech, size), self.args.timeout)
        m = re.match(r"^([0-9.]+) GiB/s$", out.strip())
        if not m:
            raise RunFailed(f"ipc_ref printed {out.strip()!r}")
        return float(m[1])

    def _json(self, cmd):
        if os.path.exists(self.json):
            os.unlink(self.json)
        run(cmd, self.args.timeout)
        with open(self.json) as f:
            return json.load(f)

    def ipc_once(self, mech, size):
        doc = self._json(self.ipc_cmd(mech, size))
        rows = doc.get("rows") or []
        if len(rows) != 1:
            raise RunFailed(f"pipespeed ipc wrote {len(rows)} rows, expected 1")
        row = rows[0]
        if row.get("mechanism") != mech or row.get("size") != parse_size(size):
            raise RunFailed(f"pipespeed ipc's row is {row.get('mechanism')} {row.get('size')}, "
                            f"expected {mech} {parse_size(size)}")
        tp = row.get("throughput") or {}
        if tp.get("status") == "unavailable":
            raise Unavailable(f"pipespeed ipc: throughput unavailable: {tp.get('reason')}")
        if tp.get("status") != "ok":
            raise RunFailed(f"pipespeed ipc: throughput {tp.get('status')}: {tp.get('reason')}")
        # pipespeed.ipc/2 nests the rates in a series; /1 had them flat.
        runs = (tp.get("gib_s") or {}).get("runs") or tp.get("runs_gib_s") or []
        if len(runs) != 1:
            raise RunFailed(f"pipespeed ipc: {len(runs)} throughput runs, expected 1")
        return runs[0]

    def memcpy_once(self):
        doc = self._json(self.memcpy_cmd())
        rung = doc["rungs"][0]
        if rung.get("name") != "memcpy" or rung.get("status") != "ok":
            raise RunFailed(f"pipespeed bench: rung {rung.get('name')} {rung.get('status')}: "
                            f"{rung.get('reason')}")
        return rung["gib_s"]["median"]


def alternate(runs, measures):
    """measures: {name: thunk}. Runs each `runs` times, the order flipped
    every run. A run that times out is counted and skipped (up to 3); any
    other failure stops the case. Returns (samples, failures), the
    failures exceptions, the last one the one that stopped it if any."""
    names = list(measures)
    samples = {n: [] for n in names}
    failures = []
    for i in range(runs):
        for n in names if i % 2 == 0 else reversed(names):
            try:
                samples[n].append(measures[n]())
            except TimedOut as e:
                failures.append(TimedOut(f"{n}, run {i + 1}: {e}"))
                print(f"  {failures[-1]}", file=sys.stderr)
                if len(failures) == 3:
                    return samples, failures
            except RunFailed as e:
                return samples, failures + [e]
            except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
                return samples, failures + [RunFailed(f"{n}, run {i + 1}: {type(e).__name__}: {e}")]
        print(f"  run {i + 1} of {runs} done", file=sys.stderr)
    return samples, failures


def outcome(failures):
    """The verdict cell and the note of a case with `failures`."""
    if all(isinstance(e, Unavailable) for e in failures):
        return "unavailable", f"; unavailable: {failures[-1]}"
    hung = sum(isinstance(e, TimedOut) for e in failures)
    word = f"FAILED ({hung} timed out)" if hung else "FAILED"
    return word, "".join(f"; FAILED: {e}" for e in failures)


def fmt(x):
    return "-" if x is None else f"{x:.2f}" if x >= 0.1 else f"{x:.3g}"


def listed(v):
    return " ".join(fmt(x) for x in v) or "none"


def med(v):
    return statistics.median(v) if v else None


def span(v):
    return f"{fmt(min(v))}-{fmt(max(v))}" if v else "-"


def ratio(a, b):
    return a / b if a is not None and b else None


def tool_version(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout
        return "; ".join(line.strip() for line in out.splitlines() if line.strip())
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"({e})"


def main():
    args = parse_args()
    print("# peers/ipc-vs-ref.py " + shlex.join(sys.argv[1:]))
    # Run in the repository's root, relative paths: the line printed
    # below names no directory of this machine.
    build_ref = ["cc", "-O2", "-Wall", "-o", os.path.join("target", "peers", "ipc_ref"),
                 os.path.join("peers", "ipc_ref.c")]
    build_ours = ["cargo", "build", "--release", "--quiet"]
    with tempfile.TemporaryDirectory(prefix="ipc-vs-ref.") as tmp:
        t = Tools(args, tmp)
        if args.dry_run:
            print("would run, in the repository's root:")
            print("  " + shlex.join(build_ref))
            if not args.pipespeed:
                print("  " + shlex.join(build_ours))
            for mech in args.mechanisms:
                for size in args.sizes:
                    print(f"  {args.runs} times each, alternating:")
                    print("    " + shlex.join(t.ref_cmd(mech, size)))
                    print("    " + shlex.join(t.ipc_cmd(mech, size)))
            if args.memcpy:
                print(f"  {args.runs} times each, alternating:")
                print("    " + shlex.join(t.memcpy_cmd()))
                print("    " + shlex.join(t.ipc_cmd("shm", "64K")))
            return 0

        # Build first so that compile time never lands inside a measurement.
        os.makedirs(os.path.join(TARGET, "peers"), exist_ok=True)
        subprocess.run(build_ref, check=True, cwd=ROOT)
        if not args.pipespeed:
            subprocess.run(build_ours, check=True, cwd=ROOT)
        if subprocess.run([t.exe, "ipc", "--help"], capture_output=True).returncode != 0:
            print(f"{t.exe} has no `ipc` subcommand (`{t.exe} ipc --help` fails)", file=sys.stderr)
            return 2

        cpu_a, cpu_b = args.cpus.split(",")
        model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                      if l.startswith("model name")), "?")
        print(f"date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%dT%H:%M:%SZ}; "
              f"kernel: {os.uname().release}; cpu: {model}; {os.cpu_count()} CPUs")
        print(f"pipespeed: {tool_version([t.exe, '--version'])} ({shown(t.exe)})")
        print(f"ipc_ref: {shlex.join(build_ref)}; "
              f"load average at the start: {os.getloadavg()[0]:.2f}")
        print(f"sender on CPU {cpu_a}, receiver on CPU {cpu_b}; {args.bytes} bytes per run; "
              f"{args.runs} runs per tool per case, alternating, the order flipped every run")
        print()

        failed, rows, details = False, [], []
        for mech in args.mechanisms:
            for size in args.sizes:
                print(f"{mech} {size}:", file=sys.stderr)
                s, why = alternate(args.runs, {
                    "ipc_ref": lambda m=mech, z=size: t.ref_once(m, z),
                    "pipespeed": lambda m=mech, z=size: t.ipc_once(m, z),
                })
                r, o = s["ipc_ref"], s["pipespeed"]
                q = ratio(med(o), med(r))
                verdict = "-" if q is None else "yes" if q >= 0.95 else "NO"
                note = ""
                if why:
                    verdict, note = outcome(why)
                    failed |= verdict != "unavailable"
                    print(f"{verdict} {mech} {size}: {why[-1]}", file=sys.stderr)
                rows.append(f"| {mech} | {size} | {fmt(med(r))} | {fmt(med(o))} | {fmt(q)} "
                            f"| {span(r)} | {span(o)} | {len(r)}, {len(o)} | {verdict} |")
                details.append(f"{mech} {size}: ipc_ref {listed(r)} "
                               f"| pipespeed {listed(o)}{note}")

        print("| mechanism | size | ipc_ref median GiB/s | pipespeed median GiB/s "
              "| ratio (pipespeed/ref) | ipc_ref min-max | pipespeed min-max | runs (ref, ours) "
              "| ratio >= 0.95 |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|:---:|")
        print("\n".join(rows))

        if args.memcpy:
            print("memcpy vs shm 64K:", file=sys.stderr)
            s, why = alternate(args.runs, {
                "memcpy": t.memcpy_once,
                "shm": lambda: t.ipc_once("shm", "64K"),
            })
            c, m = s["memcpy"], s["shm"]
            q = ratio(med(m), med(c))
            verdict = "-" if q is None else "yes" if q >= 0.80 else "NO"
            note = ""
            if why:
                verdict, note = outcome(why)
                failed |= verdict != "unavailable"
                print(f"{verdict} memcpy part: {why[-1]}", file=sys.stderr)
            print()
            print(f"The shm ring at 64 KiB messages against the ladder's memcpy rung "
                  f"(bench --rungs memcpy, on CPU {cpu_b}, bench's reader CPU):")
            print()
            print("| pipespeed bench memcpy median GiB/s | pipespeed ipc shm 64K median GiB/s "
                  "| ratio (shm/memcpy) | memcpy min-max | shm min-max | runs (memcpy, shm) "
                  "| ratio >= 0.80 |")
            print("|---:|---:|---:|---:|---:|---:|:---:|")
            print(f"| {fmt(med(c))} | {fmt(med(m))} | {fmt(q)} | {span(c)} | {span(m)} "
                  f"| {len(c)}, {len(m)} | {verdict} |")
            details.append(f"memcpy vs shm 64K: memcpy {listed(c)} "
                           f"| shm {listed(m)}{note}")

        print()
        print(f"load average at the end: {os.getloadavg()[0]:.2f}")
        print("Per-run GiB/s, in run order:")
        for d in details:
            print(f"- {d}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
