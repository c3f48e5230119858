//! SIGINT and SIGTERM in the middle of a measurement: the children
//! stopped, the part measured printed and written, marked interrupted,
//! and the status 128 + the signal.

#![allow(clippy::unwrap_used)]

use std::collections::HashSet;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common;

const EXE: &str = env!("CARGO_BIN_EXE_pipespeed");

/// The PIDs whose parent is `pid`, from /proc.
fn children_of(pid: u32) -> HashSet<u32> {
    let mut found = HashSet::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces, so from the last ')'.
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        let ppid: u32 = after.split(' ').nth(1).unwrap().parse().unwrap();
        if ppid == pid {
            found.insert(child);
        }
    }
    found
}

/// Whether `pid` still runs (exists and is not a zombie).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            let after = &stat[stat.rfind(')').unwrap() + 2..];
            !after.starts_with('Z')
        })
        .unwrap_or(false)
}

/// Runs `pipespeed ARGS --json FILE`, sends it `signal` once `children`
/// child processes have been seen (so many that a measured run has
/// ended), and checks what it leaves: status `expected`, a table, the file
/// marked interrupted, no child alive. Returns the file's document and
/// what was printed on stdout.
fn interrupt(
    args: &[&str],
    children: usize,
    signal: rustix::process::Signal,
    expected: i32,
) -> (serde_json::Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("result.json");
    let bench = common::catchable(EXE)
        .args(args)
        .arg("--json")
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = bench.id();
    // Wait until a measured run has ended: its children came and went.
    let start = Instant::now();
    let mut seen = HashSet::new();
    while seen.len() < children {
        seen.extend(children_of(pid));
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{} of {children} children seen",
            seen.len()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let target = rustix::process::Pid::from_raw(pid as i32).unwrap();
    rustix::process::kill_process(target, signal).unwrap();
    let out = bench.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(expected), "{stderr}");
    assert!(stderr.contains("pipespeed: interrupted by SIG"), "{stderr}");
    assert!(!stdout.is_empty(), "a table");
    let value: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(value["interrupted"], true);
    // Nothing of the run survives it.
    let deadline = Instant::now() + Duration::from_secs(5);
    while seen.iter().any(|&p| alive(p)) {
        assert!(Instant::now() < deadline, "still running: {seen:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    (value, stdout.into_owned())
}

fn interrupt_bench(signal: rustix::process::Signal, expected: i32) {
    let args = [
        "bench",
        // One warm-up run per row, so that the children counted below
        // are the runs the comments say.
        "--warmup-runs",
        "1",
        "--rungs",
        "write-read,vmsplice-read",
        "--runs",
        "200",
        "--bytes",
        "32M",
        "--placement-runs",
        "0",
    ];
    // Four warm-ups (each rung with its ends on two CPUs and on one; on a
    // machine of one CPU, two warm-ups and more measured runs), a
    // measured run, two ends each, and the next run's.
    let (value, stdout) = interrupt(&args, 12, signal, expected);
    // The partial table.
    assert!(
        stdout.contains("interrupted: only the runs made before the signal"),
        "{stdout}"
    );
    assert!(
        stdout.contains("write-read") && stdout.contains("vs baseline"),
        "{stdout}"
    );
    // The file holds the runs made, none failed by the signal.
    let runs: usize = value["rungs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert_ne!(r["status"], "failed", "{r}");
            r["gib_s"]["runs"].as_array().unwrap().len()
        })
        .sum();
    assert!((1..400).contains(&runs), "{runs} runs");
}

#[test]
fn sigint_stops_bench_with_its_partial_table_and_files() {
    interrupt_bench(rustix::process::Signal::INT, 130);
}

#[test]
fn sigterm_stops_bench_the_same_way() {
    interrupt_bench(rustix::process::Signal::TERM, 143);
}

#[test]
fn sighup_stops_bench_the_same_way() {
    // A closed terminal or an ssh session that drops: the children and
    // the scratch files go as they do on SIGINT (status 128 + 1).
    interrupt_bench(rustix::process::Signal::HUP, 129);
}

#[test]
fn sigint_stops_latency_with_the_sizes_measured() {
    let args = [
        "latency",
        // One warm-up run per row, so that the children counted below
        // are the runs the comments say.
        "--warmup-runs",
        "1",
        "--sizes",
        "1,64,4K,64K",
        "--runs",
        "20",
        "--duration",
        "0.1",
    ];
    // A ponger per run, after a warm-up run of each of the 4 sizes: the
    // sixth one means the first measured run ended.
    let (value, stdout) = interrupt(&args, 6, rustix::process::Signal::INT, 130);
    assert!(stdout.contains("p50"), "{stdout}");
    let rows = value["rows"].as_array().unwrap().len();
    assert!((1..4).contains(&rows), "{rows} sizes");
}

#[test]
fn sigterm_stops_contend_with_the_cells_measured() {
    let args = [
        "contend",
        // One warm-up run per row, so that the children counted below
        // are the runs the comments say.
        "--warmup-runs",
        "1",
        "--writers",
        "1",
        "--readers",
        "1",
        "--duration",
        "0.2",
        "--runs",
        "30",
        "--processes",
    ];
    // A writer and a reader per run: the warm-up run's two, then two
    // measured runs' (the first has ended when the second's are seen).
    let (value, stdout) = interrupt(&args, 6, rustix::process::Signal::TERM, 143);
    assert!(stdout.contains("writes/s"), "{stdout}");
    let runs = value["rows"][0]["runs"].as_array().unwrap().len();
    assert!((1..30).contains(&runs), "{runs} runs");
}

#[test]
fn sigint_stops_ipc_with_the_runs_made_and_kills_every_end() {
    let args = [
        "ipc",
        // One warm-up run per row, so that the children counted below
        // are the runs the comments say.
        "--warmup-runs",
        "1",
        "--mechanisms",
        "pipe,shm,unix-dgram,mqueue",
        "--sizes",
        "4K",
        "--runs",
        "200",
        "--max-runs",
        "200",
        "--duration",
        "0.05",
    ];
    // The warm-ups' two ends each, then measured runs: 12 children mean
    // a measured run has ended.
    let (value, stdout) = interrupt(&args, 12, rustix::process::Signal::INT, 130);
    assert!(
        stdout.contains("interrupted: only the runs made before the signal"),
        "{stdout}"
    );
    let mut runs = 0;
    for row in value["rows"].as_array().unwrap() {
        for metric in ["throughput", "latency"] {
            // The run the signal cut short is dropped, not failed.
            assert_ne!(row[metric]["status"], "failed", "{row}");
            runs += row[metric]["runs"].as_array().unwrap().len();
        }
    }
    assert!((1..1600).contains(&runs), "{runs} runs");
}

/// Every mechanism of `ipc` ends within a bound of SIGINT, SIGTERM or
/// SIGHUP, whenever it comes: a round trip's pinger is a thread of ours,
/// and a ponger killed by the signal never wakes one waiting on a futex
/// (shm, shm-spin) or a datagram (unix-dgram). The bound is 2 s;
/// 5 s here, for a loaded machine (a hang lasted the ends' 30 s silence).
#[test]
fn every_ipc_mechanism_ends_soon_after_a_signal() {
    use rustix::process::Signal;
    use std::os::unix::process::ExitStatusExt;
    const MECHANISMS: [&str; 13] = [
        "pipe",
        "pipe-splice",
        "fifo",
        "unix-stream",
        "unix-seqpacket",
        "unix-dgram",
        "tcp",
        "tcp-zerocopy",
        "mqueue",
        "shm",
        "shm-spin",
        "io-uring",
        "io-uring-splice",
    ];
    let signals = [(Signal::INT, 130), (Signal::TERM, 143), (Signal::HUP, 129)];
    let mut slow = Vec::new();
    for (i, mechanism) in MECHANISMS.iter().enumerate() {
        for (j, &(signal, status)) in signals.iter().enumerate() {
            // Two moments per pair, spread over the warm-up and the
            // measured runs of both metrics.
            for delay_ms in [80 + 40 * ((i + j) % 4), 260 + 60 * ((i + 2 * j) % 4)] {
                let mut ipc = common::catchable(EXE)
                    .args(["ipc", "--mechanisms", mechanism, "--sizes", "4K"])
                    .args(["--runs", "40", "--max-runs", "40", "--warmup-runs", "1"])
                    .args(["--duration", "0.02", "--placement", "unpinned"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                std::thread::sleep(Duration::from_millis(delay_ms as u64));
                let target = rustix::process::Pid::from_raw(ipc.id() as i32).unwrap();
                let sent = Instant::now();
                rustix::process::kill_process(target, signal).unwrap();
                let ended = loop {
                    if let Some(status) = ipc.try_wait().unwrap() {
                        break Some(status);
                    }
                    if sent.elapsed() > Duration::from_secs(5) {
                        break None;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                };
                let what = format!("{mechanism}, {signal:?} after {delay_ms} ms");
                match ended {
                    None => {
                        let _ = ipc.kill();
                        let _ = ipc.wait();
                        slow.push(what);
                    }
                    Some(ended) => {
                        let out = ipc.wait_with_output().unwrap();
                        let stderr = String::from_utf8_lossy(&out.stderr);
                        // Done before the signal came (an unavailable
                        // mechanism ends at once): status 0, or 3; or
                        // killed by it before its handler was installed.
                        let done = matches!(ended.code(), Some(0 | 3));
                        let early = ended.signal() == Some(signal.as_raw());
                        assert!(
                            ended.code() == Some(status) || done || early,
                            "{what}: {ended:?}: {stderr}"
                        );
                    }
                }
            }
        }
    }
    assert!(slow.is_empty(), "alive 5 s after the signal: {slow:?}");
}
