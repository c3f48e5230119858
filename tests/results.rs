//! Result files are written whole or not at all: a run that fails, or is
//! killed before its first run ends, leaves an older result as it was, no
//! temporary file beside it, and no process of the run behind it. (One
//! stopped later writes what it measured, marked interrupted:
//! tests/interrupt.rs.)

#![allow(clippy::unwrap_used)]

use crate::common;
use common::fifo::{mkfifo, read_fifo};

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
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
    let mut cmd = common::catchable(EXE);
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

/// The shortest measuring run, for the tests of where its files go.
const QUICK: [&str; 5] = ["latency", "--duration", "0.05", "--warmup", "0"];

/// Waits for `child` and its output, or kills it and fails: a command
/// that hangs fails its test rather than the whole run. The bound is a
/// hang's, far above any run's length, not a timing.
fn finish(mut child: Child, what: &str) -> Output {
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{what}: hung; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn quick(dir: &Path, args: &[&str]) -> Child {
    Command::new(EXE)
        .args(QUICK)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_fifo_s_reader_gets_the_whole_result_and_then_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("ff");
    mkfifo(&fifo);
    let reader = read_fifo(&fifo);
    let out = finish(quick(dir.path(), &["--json", "ff"]), "--json FIFO");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let got = reader.join().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&got)
        .unwrap_or_else(|e| panic!("the reader got {} bytes, not a result: {e}", got.len()));
    assert_eq!(json["schema"], "pipespeed.latency/2");
    assert!(
        rustix::fs::stat(&fifo).unwrap().st_mode & 0o170000 == 0o010000,
        "the FIFO was replaced"
    );
}

#[test]
fn a_fifo_without_a_reader_is_refused_before_the_run_not_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    mkfifo(dir.path().join("ff"));
    let out = finish(
        quick(dir.path(), &["--json", "ff"]),
        "--json FIFO, no reader",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "pipespeed: cannot write ff: no process has this FIFO open for reading \
         (start its reader first)\n"
    );
    assert!(out.stdout.is_empty(), "nothing was measured");
}

#[test]
fn sigterm_ends_a_write_to_a_fifo_that_is_not_read() {
    use rustix::fs::{Mode, OFlags, open};
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("ff");
    mkfifo(&fifo);
    // A reader that never reads, its FIFO one page big: the chart (more
    // than a page) fills it and the rest waits.
    let reader = open(&fifo, OFlags::RDONLY | OFlags::NONBLOCK, Mode::empty()).unwrap();
    let size = rustix::pipe::fcntl_setpipe_size(&reader, 4096).unwrap();
    let child = quick(dir.path(), &["--svg", "ff"]);
    let deadline = Instant::now() + Duration::from_secs(60);
    while rustix::io::ioctl_fionread(&reader).unwrap() < size as u64 {
        assert!(Instant::now() < deadline, "the chart never filled the FIFO");
        sleep(Duration::from_millis(20));
    }
    kill_process(Pid::from_raw(child.id() as i32).unwrap(), Signal::TERM).unwrap();
    let out = finish(child, "a write to a FIFO nobody reads, after SIGTERM");
    assert_eq!(out.status.code(), Some(143));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "pipespeed: cannot write ff: interrupted by SIGTERM\n"
    );
}

#[test]
fn dev_stdout_is_standard_output_written_where_it_points() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("log"), "LOG\n").unwrap();
    let run = format!("\"$P\" {} --json /dev/stdout", QUICK.join(" "));
    let out = common::sh(dir.path(), &format!("{run} >> log && {run} > out.txt"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    // The table went to stderr, as with `-`; each file holds results only.
    assert_eq!(err.matches("\nround trip: ").count(), 2, "{err}");
    let log = std::fs::read_to_string(dir.path().join("log")).unwrap();
    let json = log.strip_prefix("LOG\n").expect(">> log appends");
    serde_json::from_str::<serde_json::Value>(json).unwrap();
    let out_txt = std::fs::read(dir.path().join("out.txt")).unwrap();
    serde_json::from_slice::<serde_json::Value>(&out_txt).unwrap();
}

#[test]
fn a_size_limit_leaves_the_older_result_and_no_temporary_file() {
    let dir = with_old_results();
    let out = common::sh(
        dir.path(),
        &format!(
            "ulimit -f 1; exec \"$P\" {} --json r.json --csv r.csv",
            QUICK.join(" ")
        ),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err, "pipespeed: cannot write r.json: File too large\n");
    assert_untouched(dir.path(), "under ulimit -f 1");
}

#[test]
fn a_replaced_result_keeps_its_mode_owner_and_hard_links() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    for name in ["private.json", "linked.csv", "theirs.svg"] {
        std::fs::write(path(name), OLD).unwrap();
    }
    std::fs::set_permissions(path("private.json"), PermissionsExt::from_mode(0o600)).unwrap();
    std::fs::set_permissions(path("theirs.svg"), PermissionsExt::from_mode(0o664)).unwrap();
    std::fs::hard_link(path("linked.csv"), path("other-name.csv")).unwrap();
    let root = rustix::process::geteuid().is_root();
    if root {
        std::os::unix::fs::chown(path("theirs.svg"), Some(65534), Some(65534)).unwrap();
    }
    let args = [
        "--json",
        "private.json",
        "--csv",
        "linked.csv",
        "--svg",
        "theirs.svg",
    ];
    let out = finish(quick(dir.path(), &args), "replacing results");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta = |name: &str| std::fs::metadata(path(name)).unwrap();
    assert_eq!(meta("private.json").mode() & 0o7777, 0o600);
    assert_ne!(std::fs::read_to_string(path("private.json")).unwrap(), OLD);
    // Both names still one file, holding the new result.
    assert_eq!(meta("linked.csv").nlink(), 2);
    assert_eq!(meta("linked.csv").ino(), meta("other-name.csv").ino());
    assert!(
        std::fs::read_to_string(path("other-name.csv"))
            .unwrap()
            .starts_with("size")
    );
    assert_eq!(meta("theirs.svg").mode() & 0o7777, 0o664);
    if root {
        assert_eq!(
            (meta("theirs.svg").uid(), meta("theirs.svg").gid()),
            (65534, 65534)
        );
    } else {
        common::skip(
            "root",
            "only root can give a file to another user to see it kept",
        );
    }
    assert_eq!(
        names_in(dir.path()),
        ["linked.csv", "other-name.csv", "private.json", "theirs.svg"]
    );
}

#[test]
fn a_symbolic_link_planted_in_a_sticky_directory_is_not_followed() {
    if !rustix::process::geteuid().is_root() {
        // Planting needs a link of another user's.
        common::skip("root", "only root can make a link owned by another user");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sticky = dir.path().join("tmp");
    std::fs::create_dir(&sticky).unwrap();
    std::fs::set_permissions(&sticky, PermissionsExt::from_mode(0o1777)).unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, OLD).unwrap();
    let link = sticky.join("r.json");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).unwrap();
    let out = finish(
        quick(dir.path(), &["--json", "tmp/r.json"]),
        "a planted link",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "pipespeed: cannot write tmp/r.json: it goes through a symbolic link of uid 65534 \
         in the sticky directory tmp, which is not followed (see protected_symlinks in \
         proc_sys_fs(5))\n"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), OLD);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // Root's own link there is followed, and its target replaced.
    std::os::unix::fs::lchown(&link, Some(0), Some(0)).unwrap();
    let out = finish(
        quick(dir.path(), &["--json", "tmp/r.json"]),
        "root's own link",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_ne!(std::fs::read_to_string(&victim).unwrap(), OLD);
    assert_eq!(names_in(&sticky), ["r.json"]);
}

#[test]
fn a_hard_link_planted_in_a_sticky_directory_is_not_written_through() {
    if !rustix::process::geteuid().is_root() {
        // The attack is root's: writing in place through a link another
        // user made to a file of root's.
        common::skip(
            "root",
            "only root can be shown writing through a link to its file",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sticky = dir.path().join("tmp");
    std::fs::create_dir(&sticky).unwrap();
    std::fs::set_permissions(&sticky, PermissionsExt::from_mode(0o1777)).unwrap();
    // Root's file, root's directory: a link anyone could make with
    // fs.protected_hardlinks at 0 (`ln /etc/shadow /tmp/r.json`).
    let victim = dir.path().join("victim");
    std::fs::write(&victim, OLD).unwrap();
    std::fs::set_permissions(&victim, PermissionsExt::from_mode(0o600)).unwrap();
    std::fs::hard_link(&victim, sticky.join("r.json")).unwrap();
    let out = finish(
        quick(dir.path(), &["--json", "tmp/r.json"]),
        "a planted hard link",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "pipespeed: cannot write tmp/r.json: it has 2 hard links and is in a sticky directory \
         writable by all, where anyone may have made one; it is not written in place (see \
         protected_hardlinks in proc_sys_fs(5))\n"
    );
    assert!(out.stdout.is_empty(), "refused before measuring");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), OLD);
    assert_eq!(names_in(&sticky), ["r.json"]);
}

#[test]
fn a_writable_result_in_a_directory_we_cannot_write_is_written_in_place() {
    if !rustix::process::geteuid().is_root() {
        common::skip(
            "root",
            "only root can give nobody a file in root's directory",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), PermissionsExt::from_mode(0o755)).unwrap();
    let result = dir.path().join("r.json");
    std::fs::write(&result, OLD).unwrap();
    std::os::unix::fs::chown(&result, Some(65534), Some(65534)).unwrap();
    let ino = std::fs::metadata(&result).unwrap().ino();
    let child = Command::new(EXE)
        .args(QUICK)
        .args(["--json", "r.json"])
        .current_dir(dir.path())
        .uid(65534)
        .gid(65534)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn();
    let child = match child {
        Ok(child) => child,
        Err(e) => {
            // A clone under a directory closed to nobody.
            common::skip("nobody", &format!("nobody cannot run {EXE}: {e}"));
            return;
        }
    };
    let out = finish(child, "nobody's result in root's directory");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let json = std::fs::read(&result).unwrap();
    let json: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(json["schema"], "pipespeed.latency/2");
    let meta = std::fs::metadata(&result).unwrap();
    assert_eq!((meta.ino(), meta.uid()), (ino, 65534), "written in place");
    assert_eq!(names_in(dir.path()), ["r.json"]);
}

#[test]
fn one_file_named_for_two_results_is_refused_before_the_run() {
    // `--json r --csv r` (or a second name of it, a hard link) would
    // leave only the last result written: a mistake said at once, with
    // nothing written. Two results into /dev/null stay allowed.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("old"), "OLD\n").unwrap();
    std::fs::hard_link(dir.path().join("old"), dir.path().join("link")).unwrap();
    for (json, csv) in [("r", "r"), ("r", "./r"), ("old", "link")] {
        let out = finish(quick(dir.path(), &["--json", json, "--csv", csv]), json);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "--json {json} --csv {csv}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("names the same file as"), "{err}");
        assert!(!dir.path().join("r").exists(), "--json {json} --csv {csv}");
        let old = std::fs::read_to_string(dir.path().join("old")).unwrap();
        assert_eq!(old, "OLD\n");
    }
    let out = finish(
        quick(dir.path(), &["--json", "/dev/null", "--csv", "/dev/null"]),
        "/dev/null twice",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether a result document holds a measured run: a `runs` list that
/// is not empty, anywhere in it (a rung's, a size's, a cell's, a row's
/// metric's).
fn holds_a_run(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Object(map) => map.iter().any(|(key, v)| {
            (key == "runs" && v.as_array().is_some_and(|runs| !runs.is_empty())) || holds_a_run(v)
        }),
        serde_json::Value::Array(items) => items.iter().any(holds_a_run),
        _ => false,
    }
}

/// A result is replaced only by a result that measured something, by
/// every measuring command: under descriptor limits low enough to fail
/// every run and high enough to measure some, each command's files are
/// either the older ones, untouched, or a result with measured runs.
/// The issue's case (latency under `ulimit -n 6`) fails and keeps them.
#[test]
fn a_result_that_measured_nothing_never_replaces_an_older_one() {
    let commands: [&[&str]; 4] = [
        &["latency", "--round-trips", "300", "--sizes", "1"],
        &["contend", "--duration", "0.05"],
        &[
            "ipc",
            "--mechanisms",
            "pipe",
            "--sizes",
            "4K",
            "--duration",
            "0.02",
        ],
        &["bench", "--rungs", "write-read", "--bytes", "1M"],
    ];
    for args in commands {
        for limit in 5..=10 {
            let dir = with_old_results();
            let script = format!(
                "ulimit -n {limit}; exec \"$P\" {} --runs 1 --warmup-runs 1 \
                 --json r.json --csv r.csv",
                args.join(" ")
            );
            let out = common::sh(dir.path(), &script);
            let err = String::from_utf8_lossy(&out.stderr);
            let what = format!("{args:?} under ulimit -n {limit}");
            assert!(!err.contains("panicked"), "{what}: {err}");
            let json = std::fs::read_to_string(dir.path().join("r.json")).unwrap();
            if json == OLD {
                assert_untouched(dir.path(), &what);
                continue;
            }
            let value: serde_json::Value = serde_json::from_str(&json).unwrap();
            assert!(holds_a_run(&value), "{what}: replaced by nothing: {err}");
            assert!(
                args[0] != "latency" || limit != 6,
                "{what}: measured: {err}"
            );
        }
    }
}

/// A file size limit that a measurement's own scratch file passes (the
/// ring's memfd of `ipc --mechanisms shm`, an `O_TMPFILE` of `bench
/// --zero-copy`) is an error of that run, said, with status 1, not a
/// death by SIGXFSZ (status 153, nothing said); an older result stays.
#[test]
fn a_file_size_limit_is_an_error_not_a_death_by_sigxfsz() {
    let commands: [&[&str]; 2] = [
        &[
            "ipc",
            "--mechanisms",
            "shm",
            "--sizes",
            "64K",
            "--runs",
            "1",
            "--warmup-runs",
            "1",
        ],
        &[
            "bench",
            "--zero-copy",
            "--runs",
            "1",
            "--warmup-runs",
            "1",
            "--bytes",
            "1M",
        ],
    ];
    for args in commands {
        let dir = with_old_results();
        let script = format!(
            "trap - XFSZ; ulimit -f 1; exec \"$P\" {} --json r.json --csv r.csv",
            args.join(" ")
        );
        let out = common::sh(dir.path(), &script);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        // The table says which run failed and why, or stderr which
        // result file could not be written.
        let said = format!("{}{err}", String::from_utf8_lossy(&out.stdout));
        assert!(said.contains("File too large"), "{args:?}: {said}");
        assert_untouched(dir.path(), &format!("{args:?} under ulimit -f 1"));
    }
}
