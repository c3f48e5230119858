"""What the comparison scripts in peers/ share: building the tools and
the references, the cached data files, and alternating, timed runs."""
import argparse
import os
import shlex
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.path.join(ROOT, "target")
DATA = os.path.join(TARGET, "bench-data")


def shown(path):
    """`path` as the scripts print it: relative to the repository's root
    when inside it (`target/release/pipespeed`), so that an output quoted
    in docs/ names no directory of the machine it ran on."""
    rel = os.path.relpath(path, ROOT)
    return path if rel == ".." or rel.startswith("../") else rel


def shown_cmd(cmd):
    """A command line (a list) as printed, its paths `shown`."""
    return shlex.join(shown(a) if os.path.isabs(a) else a for a in cmd)


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def data_args(doc, more=None):
    """The options of the scripts that read the cached data files: --runs,
    --size (the big file) and --text-size, sizes parsed; `more(parser)`
    adds a script's own."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--size", default="4G")
    p.add_argument("--text-size", default="512M")
    if more:
        more(p)
    args = p.parse_args()
    args.size, args.text_size = parse_size(args.size), parse_size(args.text_size)
    return args


def reference(name, program):
    """The path of `program` among the references that
    `scripts/references.sh NAME` fetches into target/references/bin/
    (cached: a second call fetches nothing), quoted for a shell line."""
    path = os.path.join(TARGET, "references", "bin", program)
    if not os.access(path, os.X_OK):
        print(f"fetching {name} into target/references (scripts/references.sh {name})",
              file=sys.stderr)
        subprocess.run([os.path.join(ROOT, "scripts", "references.sh"), name],
                       check=True, stdout=subprocess.DEVNULL)
    return shlex.quote(path)


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=True, check=True, **kw)


def prepare(args):
    """Builds pipespeed and the references, makes the data files, warms the
    page cache; returns the commands and paths."""
    binary = getattr(args, "pipespeed", None)
    if not binary:
        sh(f"cd {ROOT} && cargo build --release --quiet")
    peers = os.path.join(TARGET, "peers")
    subprocess.run([os.path.join(ROOT, "peers", "build.sh"), peers], check=True,
                   stdout=subprocess.DEVNULL)
    uutils_cat = reference("uutils", "uutils-cat")
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
        cache_as_read(path)
    return {
        "pipespeed_bin": os.path.abspath(binary) if binary else f"{TARGET}/release/pipespeed",
        "uutils": uutils_cat,
        "gnu": "/usr/bin/cat",
        "pipe_ref": f"{peers}/pipe_ref",
        "splice_cat_ref": f"{peers}/splice_cat_ref",
        "big": big,
        "text": text,
    }


def cache_as_read(path):
    """Puts `path` in the page cache as reading it from the disk does:
    dropped from the cache first (written out, then POSIX_FADV_DONTNEED),
    then read once. The same bytes left in the cache by the writer sit
    in 4 KiB folios; read back, readahead gives them large ones, and every
    splice of them looks up far fewer folios: uutils cat into a pipe went
    1.62x faster on a file read back than on the same bytes as written
    (docs/cat.md). Without this, a run measured whichever the file's
    history left."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    sh(f"cat {path} > /dev/null")


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




def medians(samples):
    return {k: statistics.median(v) for k, v in samples.items()}


def pair_ratios(samples, a, b):
    """a's figure over b's, run by run: each pair ran back to back, so a
    load that came and went touches both of a pair."""
    return [x / y for x, y in zip(samples[a], samples[b])]


def load():
    """The 1-minute load average, to print beside a figure: another
    build on the machine shows here."""
    return open("/proc/loadavg").read().split()[0]


def print_samples(case, samples):
    for k, v in samples.items():
        print(f"  {case} {k}: " + " ".join(f"{x:.2f}" for x in v), file=sys.stderr)


def header(script, args):
    print(f"# peers/{script} " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
    print(f"kernel {os.uname().release}; {os.cpu_count()} CPUs; "
          f"pipe-max-size {open('/proc/sys/fs/pipe-max-size').read().strip()}; "
          f"file {args.size >> 20} MiB, text {args.text_size >> 20} MiB, cached as read back; "
          f"{args.runs} runs each")


def middle_run(src, mid, reader, stderr=None, pids=None):
    """Runs `src | mid | reader`, three argument lists started without a
    shell (so their pids are known); returns the reader's GiB/s (its
    `pipe_ref read` line) and the middle's user + system CPU seconds, from
    wait4 (the kernel adds the children the middle waited for: a
    monitored command's time counts). `stderr`: a path for the middle's
    standard error; `pids`: a list the three pids are appended to."""
    err = open(stderr, "wb") if stderr else None
    try:
        a = subprocess.Popen(src, stdout=subprocess.PIPE)
        b = subprocess.Popen(mid, stdin=a.stdout, stdout=subprocess.PIPE, stderr=err)
        c = subprocess.Popen(reader, stdin=b.stdout, stdout=subprocess.PIPE, text=True)
    finally:
        if err:
            err.close()
    a.stdout.close()
    b.stdout.close()
    if pids is not None:
        pids.extend(p.pid for p in (a, b, c))
    out = c.stdout.read()
    c.stdout.close()
    cpu = None
    for p, name in ((a, src), (b, mid), (c, reader)):
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            raise RuntimeError(f"{shlex.join(name)}: exit status {p.returncode}")
        if p is b:
            cpu = usage.ru_utime + usage.ru_stime
    return float(out.split()[0]), cpu


def spread(values):
    """'min-max' of a list of figures."""
    return f"{min(values):.2f}-{max(values):.2f}"
