//! The watchdog of every measurement, through the binary: a worker
//! stopped with SIGSTOP makes no progress, and the run fails within the
//! stall timeout, naming the worker and its state, instead of hanging.
//!
//! The waits are generous (a loaded machine, one CPU): what is checked
//! is that the command ends long before its runs would have, never how
//! fast.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const EXE: &str = env!("CARGO_BIN_EXE_pipespeed");

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Kills the command (and a worker it left stopped) if the test fails
/// before it ends.
struct Reaper(Child, Option<u32>);

impl Drop for Reaper {
    fn drop(&mut self) {
        if let Some(pid) = self.1 {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .stderr(Stdio::null())
                .status();
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The live worker process of `parent` whose spec names `role`.
fn worker(parent: u32, role: &str) -> Option<u32> {
    let (marker, role) = (format!("\"parent\":{parent}"), format!("\"{role}\""));
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid = entry.file_name().to_string_lossy().parse::<u32>().ok()?;
            let cmdline = text(&std::fs::read(format!("/proc/{pid}/cmdline")).ok()?);
            (cmdline.contains(&marker) && cmdline.contains(&role)).then_some(pid)
        })
}

fn state(pid: u32) -> Option<String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("State:"))
        .map(|s| s.trim().to_string())
}

fn wait_until<T>(what: &str, timeout: Duration, mut found: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(value) = found() {
            return value;
        }
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts `args` (with `--json FILE --stall-timeout 1`), stops its
/// worker of `role` with SIGSTOP, and returns how it ended, how long
/// after the stop, its table and stderr, and its JSON (none when nothing
/// was measured: a failed result never replaces an older one).
fn stop_a_worker(
    args: &[&str],
    role: &str,
    json: &Path,
) -> (ExitStatus, Duration, String, Option<Value>) {
    let child = Command::new(EXE)
        .args(args)
        .args(["--stall-timeout", "1", "--json"])
        .arg(json)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reaper = Reaper(child, None);
    let parent = reaper.0.id();
    // A worker found may end before the signal (a short warm-up run):
    // then the next one is stopped.
    let pid = wait_until(role, Duration::from_secs(60), || {
        let pid = worker(parent, role)?;
        Command::new("kill")
            .args(["-STOP", &pid.to_string()])
            .stderr(Stdio::null())
            .status()
            .unwrap();
        reaper.1 = Some(pid);
        for _ in 0..100 {
            match state(pid) {
                Some(s) if s.starts_with('T') => return Some(pid),
                Some(_) => std::thread::sleep(Duration::from_millis(10)),
                None => return None,
            }
        }
        None
    });
    let stopped = Instant::now();
    let status = wait_until("the command to end", Duration::from_secs(60), || {
        reaper.0.try_wait().unwrap()
    });
    let took = stopped.elapsed();
    let mut stderr = String::new();
    std::io::Read::read_to_string(reaper.0.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    let mut table = String::new();
    std::io::Read::read_to_string(reaper.0.stdout.as_mut().unwrap(), &mut table).unwrap();
    // The watchdog killed it: nothing is left stopped.
    assert_eq!(state(pid), None, "the stopped {role} outlived the command");
    let doc = std::fs::read_to_string(json)
        .ok()
        .map(|text| serde_json::from_str(&text).unwrap());
    (status, took, table + &stderr, doc)
}

/// The stall record of row `r`, checked: the stopped worker first, in
/// state T.
fn check_stall(r: &Value, label: &str) {
    assert_eq!(r["status"], "failed", "{r}");
    let stall = &r["stall"];
    assert_eq!(stall["timeout_s"], 1.0, "{stall}");
    let first = &stall["tasks"][0];
    assert_eq!(first["label"], label, "{stall}");
    assert_eq!(first["state"], "T (stopped)", "{stall}");
    // Named first because stopped, it may have stopped after the others
    // began to wait for it.
    assert!(first["no_progress_s"].as_f64().unwrap() > 0.0, "{stall}");
    assert!(first["pid"].as_u64().is_some(), "{stall}");
    // Root reads the stack; anyone else is told why not.
    let unreadable = first["stack_unreadable"].as_str();
    let frames = first["stack"].as_array().unwrap().len();
    assert!((frames > 0) != unreadable.is_some(), "{stall}");
}

#[test]
fn contend_a_worker_process_stopped_with_sigstop_fails_the_run_naming_it_and_its_state() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let args = [
        "contend",
        "--processes",
        "--writers",
        "1",
        "--readers",
        "1",
        "--duration",
        "60",
        "--runs",
        "1",
        "--warmup-runs",
        "1",
    ];
    let (status, took, stderr, doc) = stop_a_worker(&args, "contend-writer", &json);
    // The runs would last 80 s; the stall is seen within about a second.
    assert!(took < Duration::from_secs(30), "took {took:?}: {stderr}");
    assert_eq!(status.code(), Some(1), "{stderr}");
    let line = stderr.lines().last().unwrap_or_default();
    assert!(
        line.starts_with("pipespeed: contend: 1 writer x 1 reader: writer 0 stalled: ")
            && line.contains("state T (stopped)"),
        "{stderr}"
    );
    // Nothing was measured: no result file (the stall in a result file:
    // bench's test, where memcpy is measured).
    assert!(doc.is_none(), "nothing was measured, yet written: {doc:?}");
}

#[test]
fn latency_a_ponger_stopped_with_sigstop_fails_the_size_naming_it_and_its_state() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let args = [
        "latency",
        "--sizes",
        "64",
        "--duration",
        "60",
        "--runs",
        "1",
        "--warmup-runs",
        "1",
    ];
    let (status, took, stderr, doc) = stop_a_worker(&args, "ponger", &json);
    assert!(took < Duration::from_secs(30), "took {took:?}: {stderr}");
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the ponger stalled: ") && stderr.contains("state T (stopped)"),
        "{stderr}"
    );
    // Nothing was measured: no result file (the stall in a result file:
    // bench's test, where memcpy is measured).
    assert!(doc.is_none(), "nothing was measured, yet written: {doc:?}");
}

#[test]
fn bench_a_writer_stopped_with_sigstop_fails_the_rung_naming_it_and_its_state() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let args = [
        "bench",
        // memcpy is measured, so a result file is written.
        "--rungs",
        "memcpy,write-read",
        "--bytes",
        "4G",
        "--runs",
        "1",
        "--warmup-runs",
        "1",
        "--placement-runs",
        "0",
        // One placement: the rung is not run again in another.
        "--no-pin",
    ];
    let (status, took, stderr, doc) = stop_a_worker(&args, "writer", &json);
    assert!(took < Duration::from_secs(30), "took {took:?}: {stderr}");
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("1 of 2 rungs failed: write-read"),
        "{stderr}"
    );
    let doc = doc.expect("memcpy was measured: a result file");
    let rungs = doc["rungs"].as_array().unwrap();
    let rung = rungs.iter().find(|r| r["name"] == "write-read").unwrap();
    // The table (stdout) and the JSON say why.
    let reason = rung["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("the writer stalled: ") && reason.contains("state T (stopped)"),
        "{reason}"
    );
    check_stall(rung, "the writer");
    let tasks = rung["stall"]["tasks"].as_array().unwrap();
    assert!(
        tasks.iter().any(|t| t["label"] == "the reader"),
        "{tasks:?}"
    );
}

#[test]
fn ipc_a_sender_stopped_with_sigstop_fails_the_row_naming_it_and_its_state() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let args = [
        "ipc",
        "--mechanisms",
        "pipe",
        "--sizes",
        "64K",
        "--metrics",
        "throughput",
        "--bytes",
        "1T",
        "--runs",
        "1",
        "--warmup-runs",
        "1",
    ];
    let (status, took, stderr, doc) = stop_a_worker(&args, "sender", &json);
    assert!(took < Duration::from_secs(30), "took {took:?}: {stderr}");
    assert_eq!(status.code(), Some(1), "{stderr}");
    // The table says why.
    assert!(
        stderr.contains("the ipc sender stalled: ") && stderr.contains("state T (stopped)"),
        "{stderr}"
    );
    // Nothing was measured: no result file (the stall in a result file:
    // bench's test, where memcpy is measured).
    assert!(doc.is_none(), "nothing was measured, yet written: {doc:?}");
}

#[test]
fn ipc_a_ponger_stopped_with_sigstop_fails_the_round_trips_naming_it_and_its_state() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let args = [
        "ipc",
        "--mechanisms",
        "pipe",
        "--sizes",
        "64",
        "--metrics",
        "latency",
        "--duration",
        "60",
        "--runs",
        "1",
        "--warmup-runs",
        "1",
    ];
    let (status, took, stderr, doc) = stop_a_worker(&args, "ponger", &json);
    assert!(took < Duration::from_secs(30), "took {took:?}: {stderr}");
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the ipc ponger stalled: ") && stderr.contains("state T (stopped)"),
        "{stderr}"
    );
    // Nothing was measured: no result file (the stall in a result file:
    // bench's test, where memcpy is measured).
    assert!(doc.is_none(), "nothing was measured, yet written: {doc:?}");
}
