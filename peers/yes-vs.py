#!/usr/bin/env python3
"""pipespeed yes against GNU coreutils 9.12 yes, in alternating pairs.

Usage: peers/yes-vs.py [--runs N] [--bytes N] [--seconds S] [--kinds K,...]
                       [--pipespeed BINARY] [--gnu BINARY] [--peers DIR]

Three reader kinds:
  splice   YES | pipe_ref read --splice --bytes N   (pipe_ref's GiB/s)
  read     YES | pipe_ref read --bytes N            (pipe_ref's GiB/s)
  null     YES > /dev/null for S seconds (default 3), the bytes counted
           by the kernel: bpftrace sums the results of every write,
           writev, pwrite64, splice and sendfile the yes process makes
           with its standard output (descriptor 1, /dev/null) as the
           output, at the syscalls' exit tracepoints, for S seconds
           from when the probes are attached; GiB/s = that sum / S.
           The same count for both (GNU 9.12 yes vmsplices into a pipe
           of its own and splices that into /dev/null: the splices are
           counted, the vmsplices into its own pipe are not; pipespeed
           writes). /proc/PID/io's wchar does not count spliced bytes.
           Needs root and bpftrace; without it: "skipped: bpftrace not
           installed".
Each run runs both, the order flipped every run; prints each one's median
GiB/s and the median of the run-by-run ratios pipespeed / GNU, with the
1-minute load before and after. pipe_ref: `peers/build.sh DIR` (DIR given
as --peers, default target/peers); GNU 9.12 yes: --gnu, default
target/references/bin/gnu12-yes (`scripts/references.sh gnu-9.12`).
"""
import argparse
import os
import shlex
import shutil
import signal
import statistics
import subprocess

from benchlib import TARGET, gib_s_of_reader, load, pair_ratios, shown


# Bytes a process (pid $1) gives its descriptor 1, summed at the exits of
# the syscalls that write one, for `$2` seconds after attaching.
NULL_PROBES = r"""
tracepoint:syscalls:sys_enter_write, tracepoint:syscalls:sys_enter_pwrite64
/pid == $1 && args->fd == 1/ { @out[tid] = 1; }
tracepoint:syscalls:sys_enter_writev
/pid == $1 && args->fd == 1/ { @out[tid] = 1; }
tracepoint:syscalls:sys_enter_splice /pid == $1 && args->fd_out == 1/ { @out[tid] = 1; }
tracepoint:syscalls:sys_enter_sendfile64 /pid == $1 && args->out_fd == 1/ { @out[tid] = 1; }
tracepoint:syscalls:sys_exit_write, tracepoint:syscalls:sys_exit_pwrite64,
tracepoint:syscalls:sys_exit_writev, tracepoint:syscalls:sys_exit_splice,
tracepoint:syscalls:sys_exit_sendfile64
/@out[tid]/ { if (args->ret > 0) { @bytes = sum(args->ret); } delete(@out[tid]); }
BEGIN { @bytes = sum(0); }
interval:s:$2 { print(@bytes); exit(); }
"""


def gib_s_into_dev_null(cmd, seconds):
    """Runs `cmd` with stdout /dev/null; returns the GiB/s bpftrace counted
    into it over `seconds` (the count printed at the interval, not the
    one bpftrace dumps on exit). bpftrace 0.17 sometimes aborts while it
    attaches: up to three tries, each with a fresh process."""
    for attempt in range(3):
        with open(os.devnull, "wb") as null:
            tool = subprocess.Popen(cmd, stdout=null)
        try:
            run = subprocess.run(["bpftrace", "-q", "-e", NULL_PROBES, str(tool.pid), str(seconds)],
                                 capture_output=True, text=True)
        finally:
            tool.send_signal(signal.SIGTERM)
            tool.wait()
        counted = [line for line in run.stdout.splitlines() if line.startswith("@bytes:")]
        if run.returncode == 0 and counted:
            return int(counted[0].split()[1]) / seconds / (1 << 30)
    raise RuntimeError(f"bpftrace failed three times: {run.stderr.strip()}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--bytes", type=int, default=4 << 30)
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--kinds", default="splice,read,null")
    ap.add_argument("--pipespeed", default=os.path.join(TARGET, "release", "pipespeed"))
    ap.add_argument("--gnu", default=os.path.join(TARGET, "references", "bin", "gnu12-yes"))
    ap.add_argument("--peers", default=os.path.join(TARGET, "peers"))
    a = ap.parse_args()
    yeses = {"pipespeed": [a.pipespeed, "yes"], "gnu": [a.gnu]}
    ref = os.path.join(a.peers, "pipe_ref")
    print(f"# peers/yes-vs.py: {shown(a.pipespeed)} yes vs {shown(a.gnu)}; "
          f"{a.runs} alternating pairs of {a.bytes >> 20} MiB; "
          f"load {load()}")
    for kind in a.kinds.split(","):
        if kind == "null" and not shutil.which("bpftrace"):
            print("null    skipped: bpftrace not installed")
            continue
        samples = {name: [] for name in yeses}
        for i in range(a.runs):
            order = list(yeses) if i % 2 == 0 else list(yeses)[::-1]
            for name in order:
                cmd = yeses[name]
                if kind == "null":
                    samples[name].append(gib_s_into_dev_null(cmd, a.seconds))
                    continue
                flag = " --splice" if kind == "splice" else ""
                line = shlex.join(cmd) + f" | {shlex.quote(ref)} read{flag} --bytes {a.bytes}"
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
