//! Result files are written whole or not at all: a run that fails, or is
//! killed before its first run ends, leaves an older result as it was, no
//! temporary file beside it, and no process of the run behind it. (One
//! stopped later writes what it measured, marked interrupted:
//! tests/interrupt.rs.)

#![allow(clippy::unwrap_used)]

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process};

const EXE: &str = env!("CARGO_BIN_EXE_pipespeed");
const OLD: &str = "{\"old\":1}\n";

/// Short runs of each measuring command, writing `--json r.json`.
const RUNS: [&[&str]; 3] = [
    &[
        "bench",
        "--rungs",
        "write-read",
        "--runs",
        "2",
        "--bytes",
        "1M",
    ],
    &["latency", "--duration", "0.05", "--warmup", "0"],
    &["contend", "--duration", "0.05"],
];

/// Long runs of each, to be killed in the middle.
const LONG_RUNS: [&[&str]; 4] = [
    &[
        "bench",
        "--rungs",
        "write-read",
        "--runs",
        "3",
        "--run-seconds",
        "2",
    ],
    &["latency", "--duration", "5"],
    &["contend", "--duration", "5"],
    &["contend", "--duration", "5", "--processes"],
];

/// A directory holding an older `r.json` and `r.csv`.
fn with_old_results() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in ["r.json", "r.csv"] {
        std::fs::write(dir.path().join(name), OLD).unwrap();
    }
    dir
}

/// Asserts that the older results are there, unchanged, alone.
fn assert_untouched(dir: &Path, what: &str) {
    for name in ["r.json", "r.csv"] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        assert_eq!(text, OLD, "{what}: {name} changed");
    }
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["r.csv", "r.json"], "{what}: files left beside them");
}

fn command(args: &[&str], dir: &Path) -> Command {
    let mut cmd = Command::new(EXE);
    cmd.args(args)
        .args(["--json", "r.json", "--csv", "r.csv"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

#[test]
fn a_run_that_fails_on_one_output_leaves_the_older_results_as_they_were() {
    for args in RUNS {
        let dir = with_old_results();
        let out = command(args, dir.path())
            .args(["--svg", "/nonexistent-dir/x.svg"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("cannot write /nonexistent-dir/x.svg"), "{err}");
        assert_untouched(dir.path(), &format!("{args:?}"));
    }
}

/// The processes of group `pgid` that have not exited (zombies waiting
/// for a reaper have).
fn live_members(pgid: u32) -> Vec<String> {
    let mut live = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...: comm may hold spaces.
        let Some(after) = stat.rsplit_once(") ").map(|(_, rest)| rest) else {
            continue;
        };
        let fields: Vec<&str> = after.split_whitespace().collect();
        if fields.get(2) == Some(&pgid.to_string().as_str()) && fields[0] != "Z" {
            live.push(stat);
        }
    }
    live
}

#[test]
fn a_run_killed_by_sigterm_leaves_the_older_results_and_no_process() {
    for args in LONG_RUNS {
        let dir = with_old_results();
        let mut child = command(args, dir.path()).process_group(0).spawn().unwrap();
        sleep(Duration::from_millis(700));
        let pid = Pid::from_raw(child.id() as i32).unwrap();
        kill_process(pid, Signal::TERM).unwrap();
        let status = child.wait().unwrap();
        assert!(!status.success(), "{args:?}: {status:?}");
        assert_untouched(dir.path(), &format!("{args:?} killed"));
        // The ends die with the run: give the kernel a moment to deliver.
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut live = live_members(child.id());
        while !live.is_empty() && Instant::now() < deadline {
            sleep(Duration::from_millis(50));
            live = live_members(child.id());
        }
        assert!(live.is_empty(), "{args:?}: still running: {live:?}");
    }
}

#[test]
fn a_run_out_of_file_descriptors_leaves_the_older_results_as_they_were() {
    for args in RUNS {
        let dir = with_old_results();
        let script = format!(
            "ulimit -n 5; exec \"$P\" {} --json r.json --csv r.csv",
            args.join(" ")
        );
        let out = Command::new("sh")
            .args(["-c", &script])
            .env("P", EXE)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert_untouched(dir.path(), &format!("{args:?} under ulimit -n 5"));
    }
}

/// The children of `pid` whose command line contains `needle`.
fn children_with(pid: u32, needle: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let (Ok(stat), Ok(cmdline)) = (
            std::fs::read_to_string(entry.path().join("stat")),
            std::fs::read(entry.path().join("cmdline")),
        ) else {
            continue;
        };
        let Some(after) = stat.rsplit_once(") ").map(|(_, rest)| rest) else {
            continue;
        };
        let ppid = after.split_whitespace().nth(1);
        if ppid == Some(pid.to_string().as_str())
            && String::from_utf8_lossy(&cmdline).contains(needle)
        {
            found.push(stat.split(' ').next().unwrap().parse().unwrap());
        }
    }
    found
}

#[test]
fn readers_that_die_make_contend_fail_with_a_message_not_end_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(EXE)
        .args([
            "contend",
            "--processes",
            "--readers",
            "2",
            "--duration",
            "5",
        ])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut readers = Vec::new();
    while readers.len() < 2 && Instant::now() < deadline {
        sleep(Duration::from_millis(100));
        readers = children_with(child.id(), "\"role\":\"contend-reader\"");
    }
    assert_eq!(readers.len(), 2, "the readers never started");
    sleep(Duration::from_millis(300));
    for reader in readers {
        let _ = kill_process(Pid::from_raw(reader).unwrap(), Signal::KILL);
    }
    let status = child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    // The writers' broken pipe is not our stdout's: a failure, said.
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.starts_with("pipespeed: "), "{err}");
}
