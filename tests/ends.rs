//! The blog's two ends guarded, through the binary: `write` refuses an
//! output it would fill or flood for ever, `read` names an input that is
//! not a pipe, a busy-looping end that may share its CPU says how to pin
//! it, `read`'s results go to a file or `-` as every command's do, and
//! `--verbose` reads as words. Behaviour, never speed.

#![allow(clippy::unwrap_used)]

use std::fs;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::process::{Child, Command, Output, Stdio};

use crate::common;

const EXE: &str = env!("CARGO_BIN_EXE_pipespeed");

fn pipespeed(args: &[&str]) -> Command {
    let mut cmd = Command::new(EXE);
    cmd.args(args);
    cmd
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Asserts the refusal of an endless `write` to `what`: one line naming
/// standard output and the cause, the two ways out, status 2.
fn assert_refused(out: &Output, what: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert_eq!(err.lines().count(), 1, "{what}: not one line: {err:?}");
    assert!(err.starts_with("pipespeed: write: "), "{err}");
    assert!(
        err.contains(&format!("standard output is {what}")),
        "{what}: {err}"
    );
    assert!(err.contains("--bytes SIZE"), "{err}");
    assert!(
        err.contains("pipe it: pipespeed write | pipespeed read"),
        "{err}"
    );
}

/// A `write` without `--bytes` never stops: into a regular file it fills
/// the disk. Refused before a byte is written; with `--bytes` it writes
/// exactly that.
#[test]
fn an_endless_write_to_a_regular_file_is_refused_before_any_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.out");
    fs::write(&path, "old").unwrap();
    // The size limit kills (SIGXFSZ) a writer that would fill the disk.
    let out = common::sh(dir.path(), "ulimit -f 1024; exec \"$P\" write >> t.out");
    assert_refused(&out, "a regular file");
    assert_eq!(fs::read(&path).unwrap(), b"old", "something was written");
    for method in [&[][..], &["--vmsplice"][..]] {
        let file = fs::File::create(&path).unwrap();
        let args = [&["write", "--bytes", "100K"][..], method].concat();
        let out = pipespeed(&args).stdout(file).output().unwrap();
        if method.is_empty() {
            assert!(out.status.success(), "{}", stderr(&out));
            assert_eq!(fs::read(&path).unwrap(), vec![b'X'; 100 << 10]);
        } else {
            // vmsplice needs a pipe: an error of the run, not a refusal.
            assert_ne!(out.status.code(), Some(2), "{}", stderr(&out));
        }
    }
}

/// On a terminal it would print without end (56 MB a second measured).
#[test]
fn an_endless_write_to_a_terminal_is_refused_and_prints_nothing() {
    let (controller, terminal) = common::pty();
    let mut child = pipespeed(&["write"])
        .stdout(terminal)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Returns at the first bytes printed, or at the hangup when the
    // writer has gone without printing.
    let mut first = [0u8; 4096];
    if let Ok(n @ 1..) = rustix::io::read(&controller, &mut first) {
        child.kill().unwrap();
        child.wait().unwrap();
        panic!("printed {:?}", String::from_utf8_lossy(&first[..n]));
    }
    let out = child.wait_with_output().unwrap();
    assert_refused(&out, "a terminal");
    // With --bytes, the terminal gets them.
    let (controller, terminal) = common::pty();
    let out = pipespeed(&["write", "--bytes", "10"])
        .stdout(terminal.try_clone().unwrap())
        .output()
        .unwrap();
    drop(terminal);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(common::read_until_hangup(controller), b"XXXXXXXXXX");
}

/// Waits until `child` has written something (`wchar` of /proc/PID/io
/// counts write(2)), failing if it exits first; then kills it.
fn assert_writes_until_killed(mut child: Child, what: &str) {
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            panic!("{what}: ended ({status}) before writing: {err}");
        }
        let io = fs::read_to_string(format!("/proc/{}/io", child.id())).unwrap_or_default();
        let wchar: u64 = io
            .lines()
            .find_map(|l| l.strip_prefix("wchar: "))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        if wchar > 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// A character device that is not a terminal (/dev/null) and a socket
/// take an endless stream as a pipe does: a consumer reads them.
#[test]
fn an_endless_write_to_dev_null_or_a_socket_goes_on() {
    let null = fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .unwrap();
    let child = pipespeed(&["write"])
        .stdout(null)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert_writes_until_killed(child, "/dev/null");
    let (mut ours, theirs) = UnixStream::pair().unwrap();
    let child = pipespeed(&["write"])
        .stdout(std::os::fd::OwnedFd::from(theirs))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut some = [0u8; 4096];
    ours.read_exact(&mut some).unwrap();
    assert_eq!(some, [b'X'; 4096]);
    drop(ours);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
}

/// `pipespeed read OPTIONS` with `input` as stdin.
fn read_from(args: &[&str], input: impl Into<Stdio>) -> Output {
    pipespeed(&[&["read"][..], args].concat())
        .stdin(input)
        .output()
        .unwrap()
}

/// A pipe holding `bytes` bytes and then its end (a writer with
/// `--bytes`): (the writer, its stdout to give a reader).
fn writer(bytes: &str) -> (Child, Stdio) {
    let mut w = pipespeed(&["write", "--bytes", bytes])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let out = w.stdout.take().unwrap();
    (w, Stdio::from(out))
}

/// `read < FILE` measures the page cache (or /dev/zero), not a pipe: it
/// says so on stderr, names it in its line, and its JSON and CSV say
/// what stdin was.
#[test]
fn read_names_an_input_that_is_not_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("in");
    fs::write(&file, vec![0u8; 1 << 20]).unwrap();
    let open = || fs::File::open(&file).unwrap();
    let zero = || fs::File::open("/dev/zero").unwrap();
    for (input, name, field) in [
        (open(), "a regular file", "file"),
        (zero(), "a character device", "char-device"),
    ] {
        let out = read_from(&["--bytes", "1M"], input);
        assert!(out.status.success(), "{}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!(
                "pipespeed read: standard input is {name}, not a pipe"
            )),
            "{err}"
        );
        let line = stdout(&out);
        assert!(
            line.ends_with(&format!("(1MiB read from {name}, not a pipe)\n")),
            "{line}"
        );
        let input = if field == "file" { open() } else { zero() };
        let out = read_from(&["--bytes", "1M", "--json"], input);
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["input"], field, "{json}");
        let input = if field == "file" { open() } else { zero() };
        let out = read_from(&["--bytes", "1M", "--csv"], input);
        let csv = stdout(&out);
        assert_eq!(csv.trim().split(',').count(), 14, "{csv}");
        assert!(csv.trim().ends_with(&format!(",{field}")), "{csv}");
    }
    // A pipe: nothing said, the blog's line, "input": "pipe".
    let (mut w, input) = writer("64K");
    let out = read_from(&["--bytes", "64K", "--buf-size", "64K"], input);
    w.wait().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    assert!(
        stdout(&out).ends_with(", 64KiB buffer, 1 iterations (64KiB piped)\n"),
        "{}",
        stdout(&out)
    );
    let (mut w, input) = writer("64K");
    let out = read_from(&["--bytes", "64K", "--json"], input);
    w.wait().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["input"], "pipe", "{json}");
}

/// Runs `args` from a thread allowed only `cpus` (a child inherits its
/// parent thread's affinity), with stdin and stdout on /dev/null.
fn on_cpus(cpus: &[usize], args: &[&str]) -> Output {
    let cpus = cpus.to_vec();
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    std::thread::spawn(move || {
        let mut set = rustix::thread::CpuSet::new();
        for &cpu in &cpus {
            set.set(cpu);
        }
        rustix::thread::sched_setaffinity(None, &set).unwrap();
        Command::new(EXE)
            .args(&args)
            .stdin(fs::File::open("/dev/zero").unwrap())
            .stdout(
                fs::OpenOptions::new()
                    .write(true)
                    .open("/dev/null")
                    .unwrap(),
            )
            .output()
            .unwrap()
    })
    .join()
    .unwrap()
}

const HINT: &str = "busy-looping unpinned on";

/// The blog's busy-looping pair needs a CPU each: on two CPUs the
/// scheduler may put both ends on one, where they spin against each
/// other (0.3 GiB/s measured, 6.1 pinned). An unpinned busy end allowed
/// at most 2 CPUs says how to pin; pinned, blocking, or with 3 CPUs or
/// more, it says nothing.
#[test]
fn a_busy_end_that_may_share_its_cpu_says_how_to_pin_it() {
    let cpus = pipespeed::sys::available_cpus().unwrap();
    let write = ["write", "--busy-loop", "--bytes", "64K"];
    let read = ["read", "--busy_loop", "--bytes", "64K"];
    let one = &cpus[..1];
    for (args, end) in [(&write, "write"), (&read, "read")] {
        let out = on_cpus(one, &args[..]);
        assert!(out.status.success(), "{}", stderr(&out));
        let err = stderr(&out);
        let hint = err.lines().find(|l| l.contains(HINT)).unwrap_or_else(|| {
            panic!("{end} on one CPU: no hint: {err:?}");
        });
        assert!(
            hint.starts_with(&format!("pipespeed {end}: busy-looping unpinned on 1 CPU")),
            "{hint}"
        );
        assert!(hint.contains("drop --busy-loop"), "{hint}");
        // Pinned: nothing.
        let cpu = one[0].to_string();
        let pinned = [&args[..], &["--cpu", &cpu]].concat();
        let out = on_cpus(one, &pinned);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(!stderr(&out).contains(HINT), "{}", stderr(&out));
        // Blocking: nothing.
        let blocking: Vec<&str> = args
            .iter()
            .copied()
            .filter(|a| !a.contains("busy"))
            .collect();
        let out = on_cpus(one, &blocking);
        assert!(!stderr(&out).contains(HINT), "{}", stderr(&out));
    }
    if cpus.len() < 2 {
        common::skip("cpus", "one CPU: the two-CPU hint is not checked");
        return;
    }
    let two = &cpus[..2];
    for (args, end) in [(&write, "write"), (&read, "read")] {
        let out = on_cpus(two, &args[..]);
        let err = stderr(&out);
        let hint = err.lines().find(|l| l.contains(HINT)).unwrap_or_else(|| {
            panic!("{end} on two CPUs: no hint: {err:?}");
        });
        assert_eq!(
            hint,
            format!(
                "pipespeed {end}: busy-looping unpinned on 2 CPUs: the two ends may share one \
                 and spin against each other; pin them: pipespeed write --cpu {} ... | \
                 pipespeed read --cpu {} ...",
                two[0], two[1]
            )
        );
    }
    if cpus.len() < 3 {
        common::skip("cpus", "fewer than 3 CPUs: the silence on 3 is not checked");
        return;
    }
    for args in [&write, &read] {
        let out = on_cpus(&cpus[..3], &args[..]);
        assert!(!stderr(&out).contains(HINT), "{}", stderr(&out));
    }
}

/// `--json [FILE]` and `--csv [FILE]`: alone, standard output as before;
/// with `-`, the same; with a path, the file, the line on stdout.
#[test]
fn read_writes_its_results_to_a_file_or_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("r.json");
    let csv_path = dir.path().join("r.csv");
    for json in [&["--json"][..], &["--json", "-"]] {
        let (mut w, input) = writer("64K");
        let out = read_from(&[&["--bytes", "64K"][..], json].concat(), input);
        w.wait().unwrap();
        assert!(out.status.success(), "{json:?}: {}", stderr(&out));
        let value: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{json:?}: {e}: {}", stdout(&out)));
        assert_eq!(value["bytes"], 64 << 10);
        assert_eq!(stdout(&out).lines().count(), 1, "one JSON line");
    }
    let (mut w, input) = writer("64K");
    let out = read_from(
        &[
            "--bytes",
            "64K",
            "--json",
            json_path.to_str().unwrap(),
            "--csv",
            csv_path.to_str().unwrap(),
        ],
        input,
    );
    w.wait().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("GiB/s, 256KiB buffer"),
        "{}",
        stdout(&out)
    );
    let value: serde_json::Value = serde_json::from_slice(&fs::read(&json_path).unwrap()).unwrap();
    assert_eq!(value["bytes"], 64 << 10);
    let csv = fs::read_to_string(&csv_path).unwrap();
    assert!(csv.starts_with(|c: char| c.is_ascii_digit()), "{csv}");
    assert!(csv.trim().ends_with(",pipe"), "{csv}");
    assert!(stderr(&out).contains("wrote"), "{}", stderr(&out));
    // The CSV on stdout, the JSON in a file.
    let (mut w, input) = writer("64K");
    let out = read_from(
        &[
            "--bytes",
            "64K",
            "--csv",
            "-",
            "--json",
            json_path.to_str().unwrap(),
        ],
        input,
    );
    w.wait().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).trim().split(',').count(),
        14,
        "{}",
        stdout(&out)
    );
    // Two results on standard output: refused before reading.
    let out = read_from(&["--bytes", "64K", "--json", "--csv"], Stdio::null());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("standard output"), "{}", stderr(&out));
}

/// Nothing is truncated before the command knows it may: a result file
/// that cannot be written stops the run before a byte is read, and a run
/// that fails leaves an older result as it was.
#[test]
fn read_leaves_an_older_result_when_it_cannot_measure() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.json");
    fs::write(&old, "{\"old\":1}").unwrap();
    // A path that cannot be written: refused before the pipe is read.
    let (mut ours, theirs) = UnixStream::pair().unwrap();
    ours.write_all(b"untouched").unwrap();
    ours.shutdown(std::net::Shutdown::Write).unwrap();
    let missing = dir.path().join("no/such/dir.json");
    let out = pipespeed(&["read", "--bytes", "9", "--json", missing.to_str().unwrap()])
        .stdin(std::os::fd::OwnedFd::from(theirs))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot write"), "{}", stderr(&out));
    assert!(!missing.exists());
    // A run that fails (--pipe-size on a file that is not a pipe): the
    // old result stays.
    let input = fs::File::open("/dev/zero").unwrap();
    let out = read_from(
        &[
            "--bytes",
            "1M",
            "--pipe-size",
            "64K",
            "--json",
            old.to_str().unwrap(),
        ],
        input,
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(fs::read(&old).unwrap(), b"{\"old\":1}");
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "a file left");
}

/// `--verbose` says the settings in words, not a Rust debug dump.
#[test]
fn verbose_prints_settings_a_user_can_read() {
    let cpu = pipespeed::sys::available_cpus().unwrap()[0].to_string();
    let out = pipespeed(&[
        "write",
        "--verbose",
        "--vmsplice",
        "--buf-size",
        "64K",
        "--bytes",
        "1",
        "--cpu",
        &cpu,
    ])
    .stdout(Stdio::piped())
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "pipespeed write: vmsplice, buffer 64KiB (2 halves of 32KiB in separate mappings, \
             at offset 16), pipe 32KiB (one half), blocking, stop after 1B, pinned to CPU {cpu}\n"
        )
    );
    let (mut w, input) = writer("1M");
    let out = read_from(
        &[
            "--verbose",
            "--splice",
            "--bytes",
            "1M",
            "--pipe-size",
            "128K",
            "--busy-loop",
            "--cpu",
            &cpu,
        ],
        input,
    );
    w.wait().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "pipespeed read: splice to /dev/null, 256KiB a call, pipe 128KiB, busy loop, \
             stop after 1MiB, pinned to CPU {cpu}\n"
        )
    );
}

/// The CSV's last column and the JSON's `input` are the same names.
#[test]
fn the_input_kinds_have_one_name_in_json_and_csv() {
    use pipespeed::bench::reader::Input;
    for input in [
        Input::Pipe,
        Input::File,
        Input::Socket,
        Input::Terminal,
        Input::CharDevice,
        Input::BlockDevice,
        Input::Other,
    ] {
        assert_eq!(serde_json::to_value(input).unwrap(), input.name());
    }
}
