//! `pipespeed contend` through the binary, in runs of a fraction of a
//! second: behaviour (every message checked, the JSON's shape, no worker
//! or memory hog left behind, one-line errors), never speed.

#![allow(clippy::unwrap_used)]

use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common;

const EXE: &str = env!("CARGO_BIN_EXE_pipespeed");

/// `pipespeed contend ARGS` at the width of text that goes to a pipe
/// (100), whatever `COLUMNS` the test run inherits.
fn contend(args: &[&str]) -> Command {
    let mut cmd = common::catchable(EXE);
    cmd.arg("contend").args(args).env_remove("COLUMNS");
    cmd
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `contend ARGS --json FILE`; fails the test unless it succeeds.
fn run_json(args: &[&str]) -> (Value, Output) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.json");
    let out = contend(args).arg("--json").arg(&path).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}\n{}",
        text(&out.stderr),
        text(&out.stdout)
    );
    let json = std::fs::read_to_string(&path).unwrap();
    (serde_json::from_str(&json).unwrap(), out)
}

fn verify_of(doc: &Value) -> &Value {
    let v = &doc["rows"][0]["verify"];
    assert!(v.is_object(), "no verify report in {doc}");
    v
}

#[test]
fn every_message_arrives_once_at_atomic_and_interleaving_sizes_in_threads_and_processes() {
    for mode in [None, Some("--processes")] {
        for size in ["1K", "64K"] {
            let mut args = vec!["--writers", "2", "--readers", "2", "--msg-size", size];
            args.extend(["--duration", "0.2", "--verify"]);
            args.extend(mode);
            let (doc, out) = run_json(&args);
            let v = verify_of(&doc);
            assert_eq!(v["ok"], true, "{args:?}: {v}");
            assert!(v["messages_sent"].as_u64().unwrap() > 0, "{v}");
            assert_eq!(v["messages_received"], v["messages_sent"], "{v}");
            for field in ["lost", "duplicated", "unexpected", "bad_cells", "reordered"] {
                assert_eq!(v[field], 0, "{args:?}: {field} in {v}");
            }
            let atomic = size == "1K";
            assert_eq!(doc["atomic"], atomic);
            if atomic {
                assert_eq!(v["interleavings"], 0, "{v}");
                assert_eq!(v["split_messages"], 0, "torn: {v}");
            }
            let stdout = text(&out.stdout);
            assert!(stdout.contains("verify 2x2: ok"), "{stdout}");
            // The verify line as one, unwrapped.
            let flat = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
            if !atomic {
                assert!(
                    flat.contains("messages larger than PIPE_BUF may interleave"),
                    "{stdout}"
                );
            }
            let mode_name = if mode.is_some() {
                "processes"
            } else {
                "threads"
            };
            assert_eq!(doc["mode"], mode_name);
        }
    }
}

#[test]
fn one_writer_never_interleaves_and_many_may_without_failing() {
    // A small pipe makes large writes block half-way, where they could
    // interleave.
    let (doc, _) = run_json(&[
        "--writers",
        "1",
        "--readers",
        "3",
        "--pipe-size",
        "16K",
        "--duration",
        "0.2",
        "--verify",
    ]);
    let v = verify_of(&doc);
    assert_eq!(
        (v["ok"].clone(), v["interleavings"].clone()),
        (Value::from(true), 0.into()),
        "{v}"
    );
    let (doc, _) = run_json(&[
        "--writers",
        "5",
        "--readers",
        "1",
        "--pipe-size",
        "16K",
        "--duration",
        "0.2",
        "--verify",
    ]);
    assert_eq!(verify_of(&doc)["ok"], true, "{doc}");
}

fn assert_latency(l: &Value) {
    let field = |k: &str| {
        l[k].as_f64()
            .unwrap_or_else(|| panic!("{k} missing in {l}"))
    };
    let ordered = ["p50", "p90", "p99", "p999", "max"].map(field);
    assert!(ordered.windows(2).all(|w| w[0] <= w[1]), "not ordered: {l}");
    assert!(ordered[0] > 0.0, "{l}");
    assert!(field("mean") <= field("max"), "{l}");
    for k in ["p50", "p90", "p99", "p999", "max"] {
        assert!(l[k].is_u64(), "{k} is not an integer: {l}");
    }
}

#[test]
fn the_json_has_every_documented_field_with_its_type() {
    let (doc, _) = run_json(&["--writers", "2", "--duration", "0.1", "--runs", "2"]);
    assert_eq!(doc["schema"], "pipespeed.contend/2");
    assert!(doc["pipespeed_version"].is_string());
    assert!(doc["system"]["kernel"].is_string() && doc["system"]["cpus_allowed"].is_array());
    assert_eq!(doc["mode"], "threads");
    assert_eq!(doc["placement"]["kind"], "unpinned");
    for k in [
        "pipe_size",
        "pipe_size_requested",
        "msg_size",
        "runs_per_cell",
        "max_runs_per_cell",
        "seed",
    ] {
        assert!(doc[k].is_u64(), "{k}: {doc}");
    }
    assert_eq!(doc["msg_size"], 65536);
    assert_eq!(doc["pipe_size_requested"], 1 << 20);
    assert!(doc["pipe_size_clamped"].is_boolean() && doc["atomic"].is_boolean());
    assert_eq!(doc["duration_s"], 0.1);
    assert!(doc["memory_pressure"].is_null());
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(
        (row["writers"].as_u64(), row["readers"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(row["status"], "ok");
    assert!(row["reason"].is_null());
    assert!(row["warmup_writes_per_s"].as_f64().unwrap() > 0.0, "{row}");
    let writes = &row["writes_per_s"];
    for k in ["median", "min", "max"] {
        assert!(writes[k].as_f64().unwrap() > 0.0, "{k}: {row}");
    }
    for k in ["mib_per_s", "seconds"] {
        assert!(row[k].as_f64().unwrap() > 0.0, "{k}: {row}");
    }
    assert!(writes["min"].as_f64() <= writes["max"].as_f64());
    assert_eq!(writes["runs"].as_array().unwrap().len(), 2, "{writes}");
    assert_eq!(writes["noise"].as_array().unwrap().len(), 2, "{writes}");
    assert!(writes["spread"]["noisy"].is_boolean(), "{writes}");
    assert_eq!(
        writes["diagnosis"].is_object(),
        writes["spread"]["noisy"] == true,
        "a diagnosis exactly when noisy: {writes}"
    );
    assert_eq!(
        (
            doc["runs_per_cell"].as_u64(),
            doc["max_runs_per_cell"].as_u64()
        ),
        (Some(2), Some(2))
    );
    assert!(doc["noise"]["runs"].as_u64().unwrap() >= 2, "{doc}");
    assert!(row["verify"].is_null());
    assert_latency(&row["write_latency_ns"]);
    assert_latency(&row["read_latency_ns"]);
    let runs = row["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for run in runs {
        assert_eq!(run["bytes"], run["bytes_read"], "{run}");
        assert_eq!(
            run["bytes"].as_u64().unwrap(),
            run["messages"].as_u64().unwrap() * 65536
        );
        assert!(run["read_calls"].as_u64().unwrap() > 0);
        assert!(run["seconds"].as_f64().unwrap() > 0.0);
        assert_latency(&run["write_latency_ns"]);
    }
}

#[test]
fn the_sweep_runs_pipe_bench_s_grid_and_the_csv_has_a_row_per_run() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("out.csv");
    let csv_arg = csv.to_str().unwrap();
    let (doc, out) = run_json(&[
        "--sweep",
        "--runs",
        "1",
        "--duration",
        "0.05",
        "--msg-size",
        "4K",
        "--csv",
        csv_arg,
    ]);
    let cells: Vec<_> = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["writers"].as_u64().unwrap(),
                r["readers"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        cells,
        [
            (1, 1),
            (1, 5),
            (1, 10),
            (2, 1),
            (2, 5),
            (2, 10),
            (5, 1),
            (5, 5),
            (5, 10)
        ]
    );
    let csv = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<_> = csv.lines().collect();
    assert_eq!(lines.len(), 10, "{csv}");
    assert!(lines[0].starts_with("writers,readers,run,mode,"), "{csv}");
    assert!(lines[9].starts_with("5,10,1,threads,4096,"), "{csv}");
    let stdout = text(&out.stdout);
    assert!(stdout.contains("writes are atomic"), "{stdout}");
}

#[test]
fn the_table_states_mode_pipe_size_and_placement() {
    let cpu = pipespeed::sys::available_cpus().unwrap()[0].to_string();
    let cpus = format!("{cpu},{cpu}");
    let out = contend(&[
        "--duration",
        "0.05",
        "--pipe-size",
        "64K",
        "--cpus",
        &cpus,
        "--processes",
    ])
    .output()
    .unwrap();
    // The header as one line, unwrapped.
    let stdout = text(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.starts_with("contend: processes, 64KiB messages"),
        "{stdout}"
    );
    assert!(stdout.contains("pipe 64KiB (asked 64KiB)"), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "writers pinned to CPU {cpu}, readers to CPU {cpu}"
        )),
        "{stdout}"
    );
    let out = contend(&["--duration", "0.05"]).output().unwrap();
    assert!(text(&out.stdout).contains("unpinned"));
}

/// The PIDs of live worker processes (writers, readers, memory hogs) that
/// process `parent` started, found by their command line.
fn workers_of(parent: u32) -> Vec<(u32, String)> {
    let marker = format!("\"parent\":{parent}");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        // A zombie has an empty command line: it is dead, only unreaped.
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let args: Vec<String> = cmdline.split(|&b| b == 0).map(text).collect();
        if args.iter().any(|a| a == "worker") && args.iter().any(|a| a.contains(&marker)) {
            let role = if args.iter().any(|a| a.contains("memory-hog")) {
                "hog"
            } else {
                "end"
            };
            found.push((pid, role.to_string()));
        }
    }
    found
}

fn wait_until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_with_timeout(child: &mut Child, timeout: Duration) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            panic!("contend did not end within {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A `PATH` with `env` (which [`common::catchable`] starts the command
/// with) and no stress-ng: `--memory-pressure` then runs pipespeed's hogs.
fn path_without_stress_ng() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let env = on_path("env").expect("env on PATH");
    std::os::unix::fs::symlink(env, dir.path().join("env")).unwrap();
    dir
}

/// The first `name` in the test run's `PATH`.
fn on_path(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// Pipespeed's hogs, tiny, whether stress-ng is installed or not (the
/// tests that use them put a `PATH` without it).
const TINY_PRESSURE: [&str; 5] = [
    "--memory-pressure",
    "--pressure-share",
    "0.2",
    "--pressure-workers",
    "2",
];

#[test]
fn memory_pressure_is_reported_and_no_hog_outlives_the_command() {
    let mut args = vec!["--duration", "0.2"];
    args.extend(TINY_PRESSURE);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.json");
    let no_stress_ng = path_without_stress_ng();
    let child = contend(&args)
        .env("PATH", no_stress_ng.path())
        .arg("--json")
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(workers_of(pid), [], "hogs left behind");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let p = &doc["memory_pressure"];
    assert_eq!(p["workers"], 2, "{p}");
    assert_eq!(p["hogs_running_at_end"], 2, "{p}");
    assert!(p["bytes_total"].as_u64().unwrap() > 0, "{p}");
    assert!(p["bytes_per_worker"].as_u64().unwrap() * 2 == p["bytes_total"].as_u64().unwrap());
    assert!(
        p["happened"].is_boolean() && p["capped"].is_boolean(),
        "{p}"
    );
    assert!(p["reclaim"]["pgscan"].is_u64(), "{p}");
    assert!(p["hog_cpu_s"].as_f64().unwrap() >= 0.0, "{p}");
    assert!(p["ready_s"].as_f64().unwrap() > 0.0, "{p}");
    assert!(p["while_filling"]["happened"].is_boolean(), "{p}");
    assert_eq!(p["by"], "pipespeed hogs", "{p}");
    assert!(p["command"].is_null(), "{p}");
    assert!(
        text(&out.stdout).contains("memory pressure: 2 pipespeed hogs")
            && text(&out.stdout).contains("no stress-ng on PATH"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn an_interrupt_mid_run_stops_every_worker_and_hog() {
    for (mode, signal, status) in [
        (None, rustix::process::Signal::INT, 130),
        (Some("--processes"), rustix::process::Signal::INT, 130),
        (Some("--processes"), rustix::process::Signal::TERM, 143),
    ] {
        let mut args = vec!["--duration", "60", "--writers", "2", "--readers", "2"];
        args.extend(TINY_PRESSURE);
        args.extend(mode);
        let no_stress_ng = path_without_stress_ng();
        let mut child = contend(&args)
            .env("PATH", no_stress_ng.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let wanted = if mode.is_some() { 6 } else { 2 };
        wait_until("the hogs and workers", Duration::from_secs(30), || {
            workers_of(pid).len() >= wanted
        });
        let target = rustix::process::Pid::from_raw(pid as i32).unwrap();
        rustix::process::kill_process(target, signal).unwrap();
        let got = wait_with_timeout(&mut child, Duration::from_secs(20));
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert_eq!(got.code(), Some(status), "{mode:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("pipespeed: interrupted by SIG")
                && stderr.contains("nothing was measured, no file written"),
            "{stderr}"
        );
        assert_eq!(
            workers_of(pid),
            [],
            "{mode:?}: left behind after {signal:?}"
        );
    }
}

#[test]
fn killing_the_command_outright_takes_its_hogs_with_it() {
    let mut args = vec!["--duration", "60", "--processes"];
    args.extend(TINY_PRESSURE);
    let no_stress_ng = path_without_stress_ng();
    let mut child = contend(&args)
        .env("PATH", no_stress_ng.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    wait_until("the hogs and workers", Duration::from_secs(30), || {
        workers_of(pid).len() >= 4
    });
    child.kill().unwrap(); // SIGKILL: no handler, no unwinding.
    child.wait().unwrap();
    wait_until("the parent-death signal", Duration::from_secs(10), || {
        workers_of(pid).is_empty()
    });
}

/// Asserts a one-line error, with the given status, mentioning `needle`.
fn assert_one_line_error(args: &[&str], code: i32, needle: &str) {
    let out = contend(args).output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: not one line: {err:?}");
    assert!(err.starts_with("pipespeed: "), "{err}");
    assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
    assert!(out.stdout.is_empty(), "{args:?}");
}

#[test]
fn bad_options_are_one_line_errors_with_status_2() {
    let not_allowed = format!("{},1000", pipespeed::sys::available_cpus().unwrap()[0]);
    let cases: &[(&[&str], &str)] = &[
        (&["--writers", "0"], "--writers"),
        (&["--readers", "many"], "--readers"),
        (&["--writers", "5000"], "from 1 to 4096"),
        (&["--msg-size", "12Q"], "suffix"),
        (&["--msg-size", "0"], "message size"),
        (&["--msg-size", "1G"], "message size"),
        (&["--duration", "0"], "duration"),
        (&["--duration", "soon"], "duration"),
        (&["--runs", "0"], "--runs"),
        (&["--min-runs", "0"], "--min-runs"),
        (&["--max-runs", "1001"], "--max-runs"),
        (&["--runs", "3", "--max-runs", "4"], "cannot be used"),
        (
            &["--min-runs", "4", "--max-runs", "3"],
            "--max-runs 3 is below --min-runs 4",
        ),
        (&["--verify", "--msg-size", "100"], "multiple of 16"),
        (&["--sweep", "--writers", "2"], "cannot be used"),
        (&["--pressure-share", "5"], "--memory-pressure"),
        (&["--memory-pressure", "--pressure-share", "0"], "share"),
        (&["--memory-pressure", "--pressure-share", "150%"], "share"),
        (
            &["--memory-pressure", "--pressure-workers", "0"],
            "--pressure-workers",
        ),
        (&["--cpus", "0"], "two CPUs"),
        (
            &["--pipe-bench", "-", "--duration", "2.5"],
            "--pipe-bench needs a whole --duration",
        ),
        (
            &["--pipe-bench", "-", "--duration", "0.5"],
            "--pipe-bench needs a whole --duration",
        ),
        (
            &["--cpus", &not_allowed],
            "CPU 1000 is not one this process may use",
        ),
        (
            &["--cpus", "0,4000"],
            "'4000' is not a CPU number from 0 to 1023",
        ),
        (&["--bogus"], "--bogus"),
    ];
    for (args, needle) in cases {
        assert_one_line_error(args, 2, needle);
    }
}

#[test]
fn a_pipe_size_beyond_the_limit_is_refused_naming_it() {
    let max: usize = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let size = (max * 4).to_string();
    let out = contend(&["--pipe-size", &size, "--duration", "0.05"])
        .output()
        .unwrap();
    if out.status.success() {
        // CAP_SYS_RESOURCE goes beyond the limit.
        return;
    }
    assert_one_line_error(
        &["--pipe-size", &size, "--duration", "0.05"],
        2,
        "pipe-max-size",
    );
}

#[test]
fn a_bad_worker_description_is_an_error_not_a_panic() {
    let out = Command::new(EXE)
        .args(["worker", "{not json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("not a worker description"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_failing_cell_is_named_and_the_others_are_still_written() {
    // With 20 descriptors, the worker processes of 1 writer x 1 reader
    // start, and those of 5 x 10 cannot (two descriptors per worker).
    // Which cell is the first to fail depends on how many descriptors the
    // test harness left open, so the test finds it in the result.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let out = Command::new("sh")
        .args(["-c", "ulimit -n 20 && exec \"$0\" \"$@\"", EXE, "contend"])
        .args([
            "--sweep",
            "--processes",
            "--runs",
            "1",
            "--duration",
            "0.02",
        ])
        .args(["--msg-size", "4K", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 9, "every cell has its row");
    assert_eq!(rows[0]["status"], "ok", "{}", rows[0]);
    assert_eq!(rows[0]["runs"].as_array().unwrap().len(), 1);
    assert_eq!(
        rows[8]["status"], "failed",
        "5 x 10 needs 30 descriptors: {}",
        rows[8]
    );
    let first = rows
        .iter()
        .find(|r| r["status"] == "failed")
        .expect("a failed row");
    for row in rows {
        match row["status"].as_str().unwrap() {
            "ok" => assert_eq!(row["runs"].as_array().unwrap().len(), 1, "{row}"),
            "failed" => assert!(
                row["reason"]
                    .as_str()
                    .unwrap()
                    .contains("Too many open files"),
                "{row}"
            ),
            other => panic!("unexpected status {other}: {row}"),
        }
    }
    let counted = |n: &Value, noun: &str| match n.as_u64() {
        Some(1) => format!("1 {noun}"),
        _ => format!("{n} {noun}s"),
    };
    let cell = format!(
        "{} x {}: ",
        counted(&first["writers"], "writer"),
        counted(&first["readers"], "reader")
    );
    let last = stderr.lines().last().unwrap_or("");
    assert!(
        last.starts_with(&format!("pipespeed: contend: {cell}"))
            && last.contains("Too many open files"),
        "{stderr}"
    );
    let stdout = text(&out.stdout);
    let mark = format!("{}x{}: failed: ", first["writers"], first["readers"]);
    assert!(stdout.contains(&mark), "{stdout}");
}

#[test]
fn the_default_text_fits_80_and_120_columns_and_ends_with_the_verdict() {
    for columns in ["80", "120"] {
        let out = contend(&["--duration", "0.02", "--runs", "1"])
            .env("COLUMNS", columns)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        let stdout = text(&out.stdout);
        common::assert_fits(&stdout, columns.parse().unwrap());
        let verdict = stdout.trim_end().rsplit("\n\n").next().unwrap();
        assert!(
            verdict.starts_with("rate:       1 writer x 1 reader: "),
            "{stdout}"
        );
        assert!(verdict.lines().count() <= 6, "{stdout}");
    }
}

/// stress-ng's processes (the program and its `stress-ng-vm` workers)
/// started by a command run with `PIPESPEED_TEST_TAG=tag`: stress-ng
/// inherits the environment (its workers write their titles over theirs,
/// so they are found as its descendants).
fn stress_ng_tagged(tag: &str) -> Vec<u32> {
    let wanted = format!("PIPESPEED_TEST_TAG={tag}");
    let mut all = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let Some((comm, rest)) = stat.split_once(" (").and_then(|(_, r)| r.rsplit_once(") "))
        else {
            continue;
        };
        let ppid: u32 = rest
            .split(' ')
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        if comm.starts_with("stress-ng") {
            all.push((pid, ppid));
        }
    }
    let mut found: Vec<u32> = all
        .iter()
        .map(|&(pid, _)| pid)
        .filter(|pid| {
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            environ.split(|&b| b == 0).any(|v| v == wanted.as_bytes())
        })
        .collect();
    let mut i = 0;
    while let Some(&parent) = found.get(i) {
        let below = all.iter().filter(|&&(_, ppid)| ppid == parent);
        let below: Vec<u32> = below.map(|&(pid, _)| pid).collect();
        found.extend(
            below
                .into_iter()
                .filter(|p| !found.contains(p))
                .collect::<Vec<_>>(),
        );
        i += 1;
    }
    found
}

/// A running command, interrupted and waited for if the test fails
/// before it ends (so its stress-ng does not outlive the test).
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let pid = rustix::process::Pid::from_raw(self.0.id() as i32).unwrap();
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
            let _ = self.0.wait();
        }
    }
}

/// The PIDs of `pids` that are still stress-ng processes, zombies
/// included.
fn stress_ng_still(pids: &[u32]) -> Vec<u32> {
    pids.iter()
        .copied()
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            stat.contains("(stress-ng")
        })
        .collect()
}

/// stress-ng on PATH, else a skip said on stderr (a failure with
/// `PIPESPEED_REQUIRE_STRESS_NG=1`).
fn stress_ng_installed() -> bool {
    let found = on_path("stress-ng").is_some();
    if !found {
        common::skip("stress_ng", "stress-ng is not on PATH");
    }
    found
}

/// A tag no other run has.
fn unique_tag() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    format!("{}-{}", std::process::id(), t.as_nanos())
}

#[test]
fn memory_pressure_is_stress_ng_with_pipe_bench_s_arguments_and_none_outlives_the_run() {
    if !stress_ng_installed() {
        return;
    }
    let tag = unique_tag();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.json");
    // pipe_bench's arguments, 80% of memory: the run is kept short.
    let mut child = Running(
        contend(&["--duration", "0.2", "--runs", "3", "--memory-pressure"])
            .env("PIPESPEED_TEST_TAG", &tag)
            .arg("--json")
            .arg(&path)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut seen = std::collections::BTreeSet::new();
    let start = Instant::now();
    while child.0.try_wait().unwrap().is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "contend did not end"
        );
        seen.extend(stress_ng_tagged(&tag));
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut out_text = Vec::new();
    std::io::Read::read_to_end(&mut child.0.stdout.take().unwrap(), &mut out_text).unwrap();
    let mut err_text = Vec::new();
    std::io::Read::read_to_end(&mut child.0.stderr.take().unwrap(), &mut err_text).unwrap();
    let status = child.0.wait().unwrap();
    let out = Output {
        status,
        stdout: out_text,
        stderr: err_text,
    };
    assert!(out.status.success(), "{}", text(&out.stderr));
    // stress-ng and at least one worker were seen during the run...
    assert!(seen.len() >= 2, "stress-ng not seen running: {seen:?}");
    // ...and none is left, not even unreaped.
    let seen: Vec<u32> = seen.into_iter().collect();
    assert_eq!(
        stress_ng_still(&seen),
        Vec::<u32>::new(),
        "stress-ng left behind"
    );
    assert_eq!(
        stress_ng_tagged(&tag),
        Vec::<u32>::new(),
        "stress-ng left behind"
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let p = &doc["memory_pressure"];
    assert!(p["by"].as_str().unwrap().starts_with("stress-ng "), "{p}");
    let args: Vec<&str> = p["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(args.join(" "), "--vm 4 --vm-bytes 80% --vm-method all");
    assert_eq!(p["workers"], 4, "{p}");
    assert_eq!(p["hogs_running_at_end"], 4, "{p}");
    assert!(p["hog_cpu_s"].as_f64().unwrap() > 0.0, "{p}");
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("memory pressure: stress-ng ")
            && stdout.contains("--vm 4 --vm-bytes 80% --vm-method all"),
        "{stdout}"
    );
}

#[test]
fn an_interrupt_stops_stress_ng_and_its_workers() {
    if !stress_ng_installed() {
        return;
    }
    let tag = unique_tag();
    let mut child = Running(
        contend(&["--duration", "60", "--memory-pressure"])
            .env("PIPESPEED_TEST_TAG", &tag)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // stress-ng, its 4 instances and their 4 workers.
    let mut seen = Vec::new();
    wait_until("stress-ng's workers", Duration::from_secs(30), || {
        seen = stress_ng_tagged(&tag);
        seen.len() >= 9
    });
    let target = rustix::process::Pid::from_raw(child.0.id() as i32).unwrap();
    rustix::process::kill_process(target, rustix::process::Signal::INT).unwrap();
    let got = wait_with_timeout(&mut child.0, Duration::from_secs(20));
    assert_eq!(got.code(), Some(130));
    // Killed at once by the interrupt (SIGKILL to the group), the
    // workers may still be freeing their memory, and are left to init to
    // reap: they must be gone soon.
    wait_until(
        "stress-ng and its workers gone",
        Duration::from_secs(10),
        || stress_ng_still(&seen).is_empty(),
    );
}

/// Issue 39: the kernel's pipe_bench (`PIPESPEED_PIPE_BENCH`, which
/// .ci/run builds) and `contend --pipe-bench` on the same cell, both
/// read by the one parser: the same config line, the same keys in the
/// same order, bounds of log2 buckets both, pipespeed's exact
/// percentiles and its runs after them; and compare reads the two.
#[test]
fn pipe_bench_s_log_and_contend_s_in_its_format_read_alike() {
    use pipespeed::bench::contend::pipe_bench::parse;
    let dir = tempfile::tempdir().unwrap();
    let Some(pipe_bench) = common::pipe_bench(dir.path()) else {
        return;
    };
    let theirs = Command::new(&pipe_bench)
        .args(["-w", "1", "-r", "1", "-d", "1"])
        .output()
        .unwrap();
    assert!(theirs.status.success(), "{}", text(&theirs.stderr));
    let theirs = text(&theirs.stdout);
    let ours_file = dir.path().join("ours.log");
    let ours = contend(&["--duration", "1", "--runs", "3", "--warmup-runs", "1"])
        .arg("--pipe-bench")
        .arg(&ours_file)
        .output()
        .unwrap();
    assert_eq!(ours.status.code(), Some(0), "{}", text(&ours.stderr));
    let ours = std::fs::read_to_string(&ours_file).unwrap();
    let (a, b) = (parse(&theirs).unwrap(), parse(&ours).unwrap());
    assert_eq!((a.cells.len(), b.cells.len()), (1, 1), "{theirs}\n{ours}");
    let (a, b) = (&a.cells[0], &b.cells[0]);
    let config = |t: &str| {
        t.lines()
            .find(|l| l.starts_with("config: "))
            .unwrap()
            .to_owned()
    };
    assert_eq!(config(&theirs), config(&ours));
    let keys = |t: &str| -> Vec<String> {
        (t.lines())
            .filter_map(|l| l.split_once(':').map(|(k, _)| k.to_owned()))
            .collect()
    };
    let (their_keys, our_keys) = (keys(&theirs), keys(&ours));
    assert_eq!(their_keys[..], our_keys[..their_keys.len()], "{ours}");
    assert_eq!(
        our_keys[their_keys.len()..],
        ["runs", "lat_p50_ns_exact", "lat_p99_ns_exact"]
    );
    for cell in [a, b] {
        for bound in [cell.lat_p50_ns_upper, cell.lat_p99_ns_upper] {
            assert!((bound + 1).is_power_of_two(), "{bound}: not a log2 bound");
        }
        assert!(cell.lat_p50_ns_upper <= cell.lat_p99_ns_upper);
        assert!(cell.writes_total > 0 && cell.writes_per_s > 0);
    }
    assert_eq!(a.exact, None);
    let exact = b.exact.unwrap();
    assert_eq!(exact.runs, 3);
    assert!(0 < exact.lat_p50_ns && exact.lat_p50_ns <= exact.lat_p99_ns);
    // compare reads both: one run a side, no verdict.
    let theirs_file = dir.path().join("theirs.log");
    std::fs::write(&theirs_file, &theirs).unwrap();
    let out = Command::new(EXE)
        .arg("compare")
        .args([&theirs_file, &ours_file])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(table.contains("? 1 run"), "{table}");
}
