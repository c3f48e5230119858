//! The size arithmetic, as a property: every buffer, message and count
//! option of every measuring command (bench and its --scan, write, read,
//! latency, contend, ipc, compare) at the edges of the integers (0, 1,
//! 2^31, 2^32, 2^63, 2^64-1 and 2^64) either measures, in a run made
//! short by tiny --bytes and --duration, or is refused with one
//! `pipespeed: ` line and status 2: never a signal, a panic (101) or an
//! abort (134). pv's options are tests/pv's.
//!
//! Each run is killed after [`DEADLINE`], which fails the test: a value
//! that makes a run endless is a defect too.

#![allow(clippy::unwrap_used)]

use std::fs::File;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const EXE: &str = env!("CARGO_BIN_EXE_pipespeed");

/// The values every option is given.
const EDGES: [&str; 7] = [
    "0",
    "1",
    "2147483648",
    "4294967296",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
];

/// Where the value goes in a case's arguments.
const V: &str = "\u{0}";

/// How long one run may take (a debug build, two CPUs shared with other
/// work): far more than any of them needs.
const DEADLINE: Duration = Duration::from_secs(60);

/// What a run reads.
#[derive(Clone, Copy)]
enum Input {
    Null,
    /// A pipe of zeros without end.
    Zeros,
    /// A file of 64 KiB.
    Short,
}

/// One option of one command, with the value at `V`.
struct Case {
    args: &'static [&'static str],
    input: Input,
    /// Statuses it may end with besides 0 and 2: 1 for a reader whose
    /// input ends before its --bytes; 3 for what this machine cannot do.
    also: &'static [i32],
}

const fn case(args: &'static [&'static str]) -> Case {
    Case {
        args,
        input: Input::Null,
        also: &[],
    }
}

const BENCH: &[&str] = &["bench", "--rungs", "write-read", "--placement-runs", "0"];

fn cases() -> Vec<Case> {
    let mut cases = vec![
        // write: stdout is a pipe read to 1 MiB, then closed.
        case(&["write", "--bytes", "64K", "--buf-size", V]),
        case(&[
            "write",
            "--bytes",
            "64K",
            "--buf-size",
            V,
            "--buf-offset",
            "1",
        ]),
        case(&["write", "--bytes", "64K", "--vmsplice", "--buf-size", V]),
        case(&["write", "--bytes", "64K", "--pipe-size", V]),
        case(&["write", "--bytes", "64K", "--buf-offset", V]),
        case(&[
            "write",
            "--bytes",
            "64K",
            "--vmsplice",
            "--unsafe-early-reuse",
            V,
        ]),
        case(&["write", "--bytes", V]),
        case(&["write", "--verify", "--bytes", V]),
        // A CPU the process may not use (1 on one CPU): status 1.
        Case {
            args: &["write", "--bytes", "64K", "--cpu", V],
            input: Input::Null,
            also: &[1],
        },
    ];
    for args in [
        &["read", "--bytes", "64K", "--buf-size", V][..],
        &[
            "read",
            "--bytes",
            "64K",
            "--buf-size",
            V,
            "--buf-offset",
            "1",
        ],
        &["read", "--bytes", "64K", "--splice", "--buf-size", V],
        &["read", "--bytes", "64K", "--buf-offset", V],
    ] {
        cases.push(Case {
            args,
            input: Input::Zeros,
            also: &[],
        });
    }
    // A pipe already fuller than the size asked refuses it (EBUSY): an
    // error of the run, status 1.
    cases.push(Case {
        args: &["read", "--bytes", "64K", "--pipe-size", V],
        input: Input::Zeros,
        also: &[1],
    });
    cases.push(Case {
        args: &["read", "--bytes", V],
        input: Input::Short,
        also: &[1],
    });
    let bench: &[&[&str]] = &[
        &["--runs", "1", "--bytes", "64K", "--buf-size", V],
        &["--runs", "1", "--bytes", "64K", "--pipe-size", V],
        &["--runs", V, "--bytes", "64K"],
        &["--min-runs", V, "--max-runs", "1", "--bytes", "64K"],
        &["--max-runs", V, "--min-runs", "1", "--bytes", "64K"],
        &["--runs", "1", "--bytes", "64K", "--seed", V],
        &["--runs", "1", "--bytes", "64K", "--warmup-runs", V],
        &[
            "--runs",
            "1",
            "--bytes",
            "64K",
            "--scan",
            "buf-size=4K,\u{0}",
        ],
        &[
            "--runs",
            "1",
            "--bytes",
            "64K",
            "--scan",
            "pipe-size=\u{0},4K",
        ],
    ];
    for rest in bench {
        let args: Vec<&str> = BENCH.iter().chain(rest.iter()).copied().collect();
        cases.push(case(args.leak()));
    }
    // --placement-runs and --bytes: the first through a rung that ends
    // fast, the second through one moving page references (GiB in a
    // fraction of a second), which this machine may refuse (3).
    cases.push(case(&[
        "bench",
        "--rungs",
        "write-read",
        "--runs",
        "1",
        "--bytes",
        "4K",
        "--placement-runs",
        V,
    ]));
    cases.push(Case {
        also: &[3],
        ..case(&[
            "bench",
            "--rungs",
            "vmsplice-splice",
            "--placement-runs",
            "0",
            "--runs",
            "1",
            "--bytes",
            V,
        ])
    });
    cases.extend([
        case(&[
            "latency",
            "--threads",
            "--duration",
            "0.01",
            "--warmup",
            "0",
            "--runs",
            "1",
            "--sizes",
            V,
        ]),
        case(&[
            "latency",
            "--threads",
            "--duration",
            "0.01",
            "--warmup",
            "0",
            "--runs",
            "1",
            "--sizes",
            "1",
            "--warmup-runs",
            V,
        ]),
        case(&[
            "latency",
            "--duration",
            "0.01",
            "--warmup",
            "0",
            "--runs",
            "1",
            "--sizes",
            V,
        ]),
        case(&[
            "latency",
            "--threads",
            "--warmup",
            "0",
            "--runs",
            "1",
            "--round-trips",
            V,
        ]),
        case(&[
            "latency",
            "--threads",
            "--duration",
            "0.01",
            "--runs",
            "1",
            "--warmup",
            V,
        ]),
        case(&[
            "latency",
            "--threads",
            "--duration",
            "0.01",
            "--warmup",
            "0",
            "--runs",
            V,
        ]),
        case(&["contend", "--duration", "0.01", "--writers", V]),
        case(&["contend", "--duration", "0.01", "--readers", V]),
        case(&["contend", "--duration", "0.01", "--msg-size", V]),
        case(&[
            "contend",
            "--duration",
            "0.01",
            "--processes",
            "--msg-size",
            V,
        ]),
        case(&["contend", "--duration", "0.01", "--pipe-size", V]),
        case(&["contend", "--duration", "0.01", "--runs", V]),
        // Without --memory-pressure, refused whatever the count: the
        // count's own check comes first.
        case(&["contend", "--duration", "0.01", "--pressure-workers", V]),
    ]);
    const IPC: &[&str] = &[
        "ipc",
        "--mechanisms",
        "pipe",
        "--metrics",
        "throughput",
        "--duration",
        "0.01",
    ];
    let ipc: &[&[&str]] = &[
        &["--runs", "1", "--sizes", V],
        &["--runs", "1", "--sizes", "64K", "--bytes", V],
        &["--runs", V, "--sizes", "4K"],
        &["--runs", "1", "--max-runs", V, "--sizes", "4K"],
        &["--runs", "1", "--sizes", "4K", "--seed", V],
    ];
    for rest in ipc {
        let args: Vec<&str> = IPC.iter().chain(rest.iter()).copied().collect();
        cases.push(case(args.leak()));
    }
    cases.push(Case {
        also: &[3],
        ..case(&[
            "ipc",
            "--mechanisms",
            "pipe",
            "--metrics",
            "latency",
            "--duration",
            "0.01",
            "--runs",
            "1",
            "--sizes",
            V,
        ])
    });
    cases.extend([
        case(&["compare", "RESULT", "RESULT", "--resamples", V]),
        case(&["compare", "RESULT", "RESULT", "--seed", V]),
    ]);
    cases
}

/// How a run ended, and what it said.
struct Ran {
    /// Killed at [`DEADLINE`].
    late: bool,
    signal: Option<i32>,
    code: Option<i32>,
    stdout: usize,
    stderr: String,
}

/// Runs pipespeed with `args`, reading `input`; stdout is read to 1 MiB,
/// then closed (a writer then sees its reader go). Killed at [`DEADLINE`].
fn run(args: &[String], input: Input, dir: &Path) -> Ran {
    let stdin = match input {
        Input::Null => Stdio::null(),
        Input::Zeros => {
            // A pipe, as the reader's input is: zeros until it goes away.
            let (rx, tx) = std::io::pipe().unwrap();
            std::thread::spawn(move || {
                let mut tx = tx;
                let zeros = vec![0u8; 64 << 10];
                while std::io::Write::write_all(&mut tx, &zeros).is_ok() {}
            });
            rx.into()
        }
        Input::Short => File::open(dir.join("64K")).unwrap().into(),
    };
    let mut child = Command::new(EXE)
        .args(args)
        .process_group(0)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let stdout = std::thread::spawn(move || {
        let mut buf = vec![0; 64 << 10];
        let mut total = 0;
        while total < 1 << 20 {
            match out.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
        total
    });
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = err.read_to_string(&mut text);
        text
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > DEADLINE {
            // Its group: a measurement's children hold the pipes open.
            let _ = rustix::process::kill_process_group(
                rustix::process::Pid::from_child(&child),
                rustix::process::Signal::KILL,
            );
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Ran {
        late: start.elapsed() > DEADLINE,
        signal: status.signal(),
        code: status.code(),
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

/// What is wrong with how a run ended, if anything.
fn judge(case: &Case, args: &[String], ran: &Ran) -> Option<String> {
    let line = args.join(" ");
    let said = ran.stderr.trim_end();
    match (ran.signal, ran.code) {
        _ if ran.late => Some(format!("{line}: still ran after {DEADLINE:?}:\n{said}")),
        (Some(signal), _) => Some(format!("{line}: killed by signal {signal}:\n{said}")),
        (None, Some(2)) => {
            let lines: Vec<&str> = said.lines().collect();
            let one = lines.len() == 1 && lines[0].starts_with("pipespeed: ");
            (!one).then(|| format!("{line}: status 2 without a one-line error:\n{said}"))
        }
        (None, Some(0)) if args[0] != "write" && ran.stdout == 0 => {
            Some(format!("{line}: status 0 and nothing printed:\n{said}"))
        }
        (None, Some(code)) if code == 0 || case.also.contains(&code) => said
            .contains("panicked")
            .then(|| format!("{line}: panicked:\n{said}")),
        (None, code) => Some(format!("{line}: status {code:?}:\n{said}")),
    }
}

#[test]
fn every_size_and_count_measures_or_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("64K"), vec![0u8; 64 << 10]).unwrap();
    // compare's two results: a short latency run.
    let result = dir.path().join("result.json");
    let made = Command::new(EXE)
        .args([
            "latency",
            "--threads",
            "--duration",
            "0.01",
            "--warmup",
            "0",
        ])
        .args(["--runs", "2", "--json"])
        .arg(&result)
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let runs: Vec<(Case, Vec<String>)> = cases()
        .into_iter()
        .flat_map(|case| {
            EDGES
                .map(|edge| {
                    let args = case
                        .args
                        .iter()
                        .map(|a| match *a {
                            "RESULT" => result.display().to_string(),
                            a => a.replace(V, edge),
                        })
                        .collect();
                    (
                        Case {
                            args: case.args,
                            input: case.input,
                            also: case.also,
                        },
                        args,
                    )
                })
                .into_iter()
                .collect::<Vec<_>>()
        })
        .collect();
    // Two at a time: most runs are refused at once, the rest short.
    let next = AtomicUsize::new(0);
    let wrong = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while let Some((case, args)) = runs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let ran = run(args, case.input, dir.path());
                    if let Some(why) = judge(case, args, &ran) {
                        wrong.lock().unwrap().push(why);
                    }
                }
            });
        }
    });
    let wrong = wrong.into_inner().unwrap();
    assert!(
        wrong.is_empty(),
        "{} of {} runs ended badly:\n\n{}",
        wrong.len(),
        runs.len(),
        wrong.join("\n\n")
    );
}

#[test]
fn cpu_numbers_past_the_affinity_mask_are_bad_usage() {
    // The kernel's mask holds 1024 CPUs: a larger number is a mistake in
    // the command line (status 2), not a failure to pin (status 1).
    for (args, cpu) in [
        (&["write", "--bytes", "1K", "--cpu"][..], "1024"),
        (&["read", "--bytes", "1K", "--cpu"], "18446744073709551615"),
        (
            &["latency", "--threads", "--round-trips", "10", "--cpus"],
            "0,4096",
        ),
        (&["contend", "--duration", "0.01", "--cpus"], "0,4096"),
        (&["ipc", "--sizes", "4K", "--cpus"], "0,4096"),
        (&["bench", "--rungs", "write-read", "--cpus"], "0,4096"),
    ] {
        let out = Command::new(EXE)
            .args(args)
            .arg(cpu)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?} {cpu}: {stderr}");
        assert!(
            stderr.contains("is not a CPU number from 0 to 1023") && stderr.lines().count() == 1,
            "{args:?} {cpu}: {stderr}"
        );
    }
}

/// One rule of suffixes for pipespeed's own sizes, GNU's (`head -c`):
/// `K`, `KiB` 1024, `KB` 1000; `write --bytes` writes exactly that many.
#[test]
fn kb_is_1000_bytes_and_k_and_kib_1024_in_write_and_read() {
    for (bytes, n) in [
        ("10KB", 10_000),
        ("10kB", 10_000),
        ("10K", 10_240),
        ("10KiB", 10_240),
        ("1MB", 1_000_000),
        ("1000B", 1000),
    ] {
        let out = Command::new(EXE)
            .args(["write", "--bytes", bytes])
            .stdout(Stdio::piped())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{bytes}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.stdout.len(), n, "write --bytes {bytes}");
        let mut read = Command::new(EXE)
            .args(["read", "--json", "--bytes", bytes])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        use std::io::Write;
        let mut stdin = read.stdin.take().unwrap();
        let _ = stdin.write_all(&vec![0u8; n + 4096]);
        drop(stdin);
        let out = read.wait_with_output().unwrap();
        let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(result["bytes"], n as u64, "read --bytes {bytes}: {result}");
    }
    let out = Command::new(EXE)
        .args(["write", "--bytes", "10Q"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("KB, MB, GB or TB"), "{err}");
}
