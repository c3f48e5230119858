//! Every number pv takes, at the edges of the integer types: a normal run
//! or a one-line error with pv's status, never a signal, a panic (101), an
//! abort or a hang.

use std::os::unix::fs::symlink;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{EXE, stderr};

/// 0, 1, 2^31, 2^32, 2^63 and 2^64 - 1.
const EDGES: [&str; 6] = [
    "0",
    "1",
    "2147483648",
    "4294967296",
    "9223372036854775808",
    "18446744073709551615",
];

/// Runs `pv args` (the binary called `pv`, so usage errors are pv's 64)
/// on one byte of input; its status, stdout and stderr, or a failure if
/// it runs 30 s (a hang: the run itself takes at most a second or two).
fn run(pv: &std::path::Path, args: &[&str]) -> (std::process::ExitStatus, Vec<u8>, String) {
    let mut child = Command::new(pv)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(
        child
            .stdin
            .take()
            .map(|mut i| std::io::Write::write_all(&mut i, b"a")),
    );
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(30) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("pv {args:?} still ran after 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    (out.status, out.stdout, err)
}

#[test]
fn every_number_at_the_edges_runs_or_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let pv = dir.path().join("pv");
    symlink(EXE, &pv).unwrap();
    // Descriptors 0-2 on /dev/null: no file to watch.
    let mut idle = Command::new("sleep")
        .arg("60")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let idle_pid = idle.id().to_string();
    for value in EDGES {
        let watch_fd = format!("{idle_pid}:{value}");
        let watch_pid = format!("{value}:999999");
        let cases: Vec<(Vec<&str>, &[i32])> = vec![
            (vec!["-f", "-p", "-w", value], &[0, 64]),
            (vec!["-f", "-p", "-H", value], &[0, 64]),
            (vec!["-f", "-A", value], &[0, 64]),
            (vec!["-f", "-i", value], &[0, 64]),
            (vec!["-f", "-D", value], &[0, 64]),
            (vec!["-f", "-m", value], &[0, 64]),
            (vec!["-f", "-p", "-s", value], &[0, 64]),
            (vec!["-f", "-S", "-s", value], &[0, 64]),
            (vec!["-q", "-L", value], &[0, 64]),
            (vec!["-f", "-l", "-L", value], &[0, 64]),
            // 64 also for a buffer the system cannot give.
            (vec!["-q", "-B", value], &[0, 64]),
            (vec!["-q", "-E", "-Z", value], &[0, 64]),
            // 1: no meter there; 64: not a process ID.
            (vec!["-R", value, "-L", "1"], &[1, 64]),
            (vec!["-Q", value], &[1, 64]),
            // 2: nothing to watch there.
            (vec!["-d", &watch_fd], &[2, 64]),
            (vec!["-d", &watch_pid], &[2, 64]),
        ];
        for (args, allowed) in cases {
            let (status, stdout, err) = run(&pv, &args);
            assert_eq!(status.signal(), None, "pv {args:?}: {err}");
            let code = status.code().unwrap();
            assert!(allowed.contains(&code), "pv {args:?}: {code}: {err}");
            let copies = !matches!(args[0], "-R" | "-Q" | "-d");
            if code == 0 && copies {
                assert_eq!(stdout, b"a", "pv {args:?}");
            }
            if code != 0 {
                assert!(
                    err.starts_with("pv: ") && err.lines().count() == 1,
                    "pv {args:?}: {err:?}"
                );
            }
        }
    }
    idle.kill().unwrap();
    idle.wait().unwrap();
}

#[test]
fn the_width_is_capped_and_the_interval_held_to_a_tenth_of_a_second() {
    // 2^63 columns: pv 1.12 draws at most 4095 (its line is cut there).
    let out = super::pv(&["-f", "-p", "-w", "9223372036854775807"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let line = stderr(&out);
    assert_eq!(line.trim_end_matches(['\r', '\n']).chars().count(), 4095);
    // A nanosecond interval is a tenth of a second: a transfer of about a
    // second draws a bounded number of frames (at most one per 0.1 s, and
    // never the thousands a nanosecond would give).
    let mut producer = Command::new("sh")
        .args(["-c", "printf a; sleep 1; printf b"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let out = super::pv(&["-f", "-b", "-i", "0.000000001"])
        .stdin(producer.stdout.take().unwrap())
        .output()
        .unwrap();
    let took = start.elapsed().as_secs_f64();
    producer.wait().unwrap();
    assert_eq!(out.stdout, b"ab");
    let frames = out.stderr.iter().filter(|&&b| b == b'\r').count();
    assert!(
        (frames as f64) <= took / 0.1 + 2.0,
        "{frames} frames in {took:.2} s"
    );
}

/// `-n` with a size far below the count: pv 1.12 caps the percentage at
/// 100000 (issue 36: `pv -n -s 1000` of 3 MB said 300000).
#[test]
fn a_numeric_percentage_stops_at_100000() {
    let input = super::file_with(&vec![b'x'; 3_000_000]);
    let out = super::pv(&["-n", "-s", "1000", input.path().to_str().unwrap()])
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).lines().last(),
        Some("100000"),
        "{}",
        stderr(&out)
    );
}

/// `-l` without `-s`, every input a regular file: pv 1.12 counts their
/// lines first, so `-n` ends at 100 (issue 36: ours ended at "2", no size
/// set). An input on a pipe leaves the size unknown, as in pv 1.12.
#[test]
fn line_mode_counts_the_lines_of_regular_files_for_its_size() {
    let lines: String = (1..=1000).map(|i| format!("{i}\n")).collect();
    let input = super::file_with(lines.as_bytes());
    let name = input.path().to_str().unwrap();
    let last = |out: &std::process::Output| {
        assert!(out.status.success(), "{}", stderr(out));
        stderr(out).lines().last().map(str::to_owned)
    };
    let two = super::pv(&["-n", "-l", name, name])
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(last(&two).as_deref(), Some("100"), "{}", stderr(&two));
    // stdin a regular file counts too.
    let stdin = super::pv(&["-n", "-l", name, "-"])
        .stdin(std::fs::File::open(name).unwrap())
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(last(&stdin).as_deref(), Some("100"), "{}", stderr(&stdin));
    // -0 counts its own separator.
    let nuls = super::file_with(&b"a\0b\0c\0".repeat(100));
    let out = super::pv(&["-n", "-0", nuls.path().to_str().unwrap()])
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(last(&out).as_deref(), Some("100"), "{}", stderr(&out));
    // A pipe among the inputs: no size, as a pipe alone (pv 1.12: "2").
    let unknown = super::run_piped(super::pv(&["-n", "-l"]), lines.as_bytes());
    let piped = super::run_piped(super::pv(&["-n", "-l", name, "-"]), lines.as_bytes());
    assert_eq!(last(&piped), last(&unknown), "{}", stderr(&piped));
}
