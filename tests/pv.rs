//! `pipespeed pv` through the binary: the bytes always arrive whole, and
//! the display says what pv's says. Behaviour only, never speed.

#![allow(clippy::unwrap_used)]

use std::fs::File;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use common::{SIZES, pty, read_until_hangup};

mod counts;
mod display;
mod dropin;
mod messages;
mod monitor;
mod pv112;
mod records;
mod remote;
mod signals;
mod splice;
mod stdio;
mod targets;
mod transfer;

const EXE: &str = env!("CARGO_BIN_EXE_pipespeed");

fn data(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i % 251) as u8 ^ (i >> 12) as u8)
        .collect()
}

fn pv(args: &[&str]) -> Command {
    let mut cmd = Command::new(EXE);
    cmd.arg("pv").args(args);
    cmd
}

/// Runs `pv args` with `input` on a pipe as stdin.
fn pv_piped(args: &[&str], input: &[u8]) -> Output {
    run_piped(pv(args), input)
}

/// Runs `cmd` with `input` on a pipe as stdin.
fn run_piped(mut cmd: Command, input: &[u8]) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}

fn file_with(bytes: &[u8]) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(bytes).unwrap();
    f
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn bytes_out_equal_bytes_in_for_every_option_set_and_input() {
    let option_sets: [&[&str]; 7] = [
        &["-q"],
        &["-f", "-prtb", "-i", "0.05"],
        &["-n", "-f"],
        &["-C", "-q"],
        &["-l", "-f"],
        &["-B", "4K", "-q"],
        &["-L", "100M", "-q"],
    ];
    for options in option_sets {
        for len in SIZES {
            let input = data(len);
            // From a pipe.
            let out = pv_piped(options, &input);
            assert!(out.status.success(), "{options:?} {len}: {}", stderr(&out));
            assert!(out.stdout == input, "{options:?}, {len} bytes from a pipe");
            // From a file, and the same file twice with stdin between.
            let f = file_with(&input);
            let name = f.path().to_str().unwrap();
            let args = [options, &[name, "-", name]].concat();
            let out = pv_piped(&args, b"--stdin--");
            assert!(out.status.success(), "{options:?} {len}: {}", stderr(&out));
            let want = [&input[..], b"--stdin--", &input[..]].concat();
            assert!(out.stdout == want, "{options:?}, {len} bytes from files");
        }
    }
}

#[test]
fn quiet_shows_nothing_and_stderr_off_a_terminal_shows_nothing_without_f() {
    for options in [&["-q"][..], &[][..], &["-prtb"][..]] {
        let out = pv_piped(options, &data(100_000));
        assert!(out.stderr.is_empty(), "{options:?}: {}", stderr(&out));
    }
}

#[test]
fn numeric_mode_prints_percentages_then_a_final_100() {
    let input = data(3 * 1024 * 1024);
    let f = file_with(&input);
    let out = pv(&[
        "-n",
        "-f",
        "-L",
        "8M",
        "-i",
        "0.1",
        f.path().to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert!(out.status.success());
    let numbers: Vec<u64> = stderr(&out).lines().map(|l| l.parse().unwrap()).collect();
    assert!(numbers.len() >= 3, "{numbers:?}");
    assert!(numbers.windows(2).all(|w| w[0] <= w[1]), "{numbers:?}");
    assert_eq!(numbers.last(), Some(&100));
    assert!(numbers[0] < 100, "{numbers:?}");
}

#[test]
fn numeric_mode_with_timer_and_bytes_ends_at_the_total() {
    let input = data(1024 * 1024 + 1);
    let out = pv_piped(&["-n", "-f", "-t", "-b"], &input);
    let last = stderr(&out).lines().last().unwrap().to_string();
    let (secs, bytes) = last.split_once(' ').unwrap();
    assert!(secs.parse::<f64>().unwrap() >= 0.0);
    assert!(
        secs.contains('.') && secs.split('.').nth(1).unwrap().len() == 4,
        "{last}"
    );
    assert_eq!(bytes.parse::<usize>().unwrap(), input.len());
}

#[test]
fn line_mode_counts_lines_exactly() {
    let mut text = Vec::new();
    for i in 0..12345 {
        writeln!(text, "line {i}").unwrap();
    }
    text.extend_from_slice(b"no newline at the end");
    let out = pv_piped(&["-l", "-n", "-b", "-f"], &text);
    assert!(out.stdout == text);
    assert_eq!(stderr(&out).lines().last(), Some("12345"));
}

#[test]
fn stop_at_size_stops_exactly_there() {
    let input = data(1024 * 1024 + 1);
    for stop in ["1", "4097", "65535", "1M"] {
        for extra in [&[][..], &["-L", "50M"][..], &["-C"][..]] {
            let args = [&["-q", "-S", "-s", stop][..], extra].concat();
            let out = pv_piped(&args, &input);
            let n = pipespeed::units::parse_size(stop).unwrap() as usize;
            assert!(
                out.stdout == input[..n],
                "-S -s {stop} {extra:?}: {} bytes",
                out.stdout.len()
            );
        }
    }
    let refused = pv(&["-S"]).output().unwrap();
    assert_eq!(
        refused.status.code(),
        Some(2),
        "-S needs -s: {}",
        stderr(&refused)
    );
}

#[test]
fn a_rate_limit_holds_the_rate_down() {
    let input = data(2 * 1024 * 1024);
    let t0 = Instant::now();
    let out = pv_piped(&["-q", "-L", "8M"], &input);
    let took = t0.elapsed();
    assert!(out.stdout == input);
    // One burst (a tenth of a second's worth) may go at once; the rest at
    // 8 MiB/s takes at least (2 - 0.8) / 8 s.
    assert!(took >= Duration::from_millis(150), "{took:?}");
}

#[test]
fn a_closed_reader_ends_pv_quietly() {
    let input = data(8 * 1024 * 1024);
    let f = file_with(&input);
    let (reader, writer) = rustix::pipe::pipe().unwrap();
    drop(reader);
    let out = pv(&["-f", f.path().to_str().unwrap()])
        .stdout(Stdio::from(writer))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(!err.contains("failed") && !err.contains("error"), "{err}");
}

#[test]
fn an_unreadable_file_is_reported_and_the_others_still_copied() {
    let a = file_with(b"first\n");
    let b = file_with(b"second\n");
    let out = pv(&[
        "-q",
        a.path().to_str().unwrap(),
        "/nonexistent/x",
        b.path().to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert_eq!(out.stdout, b"first\nsecond\n");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "pipespeed pv: /nonexistent/x: No such file or directory\n"
    );
    // pv 1.12's words for a directory.
    let dir = pv(&["-q", "/"]).output().unwrap();
    assert_eq!(dir.status.code(), Some(16));
    assert_eq!(stderr(&dir), "pipespeed pv: /: Is a directory\n");
}

#[test]
fn a_full_output_is_a_write_failure() {
    let f = file_with(&data(100_000));
    let out = pv(&["-q", f.path().to_str().unwrap()])
        .stdout(File::options().write(true).open("/dev/full").unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(16));
    assert_eq!(
        stderr(&out),
        "pipespeed pv: write failed: No space left on device\n"
    );
}

#[test]
fn bad_options_and_sizes_give_one_line_and_status_2() {
    for args in [
        &["-s", "12Q"][..],
        &["-L", "fast"][..],
        &["-i", "-1"][..],
        &["--bogus"][..],
    ] {
        let out = pv(args).stdin(Stdio::null()).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("pipespeed: "), "{err}");
    }
}

#[test]
fn on_a_terminal_the_bar_rate_and_eta_are_drawn_to_its_width() {
    let input = data(3 * 1024 * 1024);
    let f = file_with(&input);
    let (controller, terminal) = pty();
    let mut child = pv(&["-L", "2M", "-i", "0.2", f.path().to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::from(OwnedFd::from(terminal)))
        .spawn()
        .unwrap();
    let reader = std::thread::spawn(move || read_until_hangup(controller));
    assert!(child.wait().unwrap().success());
    let screen = String::from_utf8(reader.join().unwrap()).unwrap();
    // Lines are redrawn with a carriage return; the terminal turns the
    // last newline into CR LF.
    let updates: Vec<&str> = screen
        .split(['\r', '\n'])
        .filter(|l| !l.is_empty())
        .collect();
    assert!(updates.len() >= 3, "{screen:?}");
    for line in &updates {
        assert_eq!(line.chars().count(), 100, "{line:?}");
    }
    let first = updates[0];
    assert!(
        first.contains("0:00:00") && first.contains("iB/s]"),
        "{first:?}"
    );
    assert!(
        first.contains("=>") && first.contains("% ETA 0:00:0"),
        "{first:?}"
    );
    let last = updates.last().unwrap();
    assert!(
        last.contains("3.00MiB") && last.contains("=>] 100%"),
        "{last:?}"
    );
}

#[test]
fn the_finish_time_is_shown_with_capital_i() {
    let out = pv_piped(
        &["-f", "-I", "-s", "3M", "-L", "8M", "-i", "0.1"],
        &data(3 * 1024 * 1024),
    );
    let err = stderr(&out);
    let first = err.split('\r').find(|l| !l.is_empty()).unwrap();
    // pv's label: `ETA` and the local time.
    let fin = first
        .split("ETA ")
        .nth(1)
        .unwrap_or_else(|| panic!("{first:?}"));
    let hms: Vec<u32> = fin.trim().split(':').map(|n| n.parse().unwrap()).collect();
    assert!(
        hms.len() == 3 && hms[0] < 24 && hms[1] < 60 && hms[2] < 60,
        "{first:?}"
    );
}

#[test]
fn watching_another_process_follows_its_position_until_it_closes() {
    let f = file_with(&data(2 * 1024 * 1024));
    // A slow reader of the file: pv itself, rate-limited, with one more
    // regular file open on descriptor 9, as a descriptor the test run
    // inherited reaches it (`/usr/bin/time -o FILE cargo test` leaves
    // FILE open, and Command passes it down).
    let other = file_with(b"not the file watched");
    let mut slow = Command::new("sh")
        .args(["-c", r#"exec 9<"$1"; exec "$0" pv -q -L 1M "$2""#, EXE])
        .arg(other.path())
        .arg(f.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = slow.id().to_string();
    // The descriptor it opened the file on, found by what it links to:
    // `-d PID` would watch every regular file it holds, as pv 1.12 does.
    let opened = || {
        std::fs::read_dir(format!("/proc/{pid}/fd"))
            .ok()?
            .filter_map(Result::ok)
            .find(|fd| std::fs::read_link(fd.path()).is_ok_and(|p| p == f.path()))
            .map(|fd| fd.file_name().to_string_lossy().into_owned())
    };
    let t0 = Instant::now();
    let fd = loop {
        if let Some(fd) = opened() {
            break fd;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "pv never opened its file"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    let target = format!("{pid}:{fd}");
    let out = pv(&["-d", &target, "-n", "-f", "-i", "0.1"])
        .output()
        .unwrap();
    assert!(slow.wait().unwrap().success());
    assert!(out.status.success(), "{}", stderr(&out));
    // A line a frame; once the descriptor is closed, its row blanked
    // (80 columns off a terminal), as pv 1.12 leaves it.
    let numbers = crate::common::watched_numbers(&stderr(&out));
    assert!(numbers.len() >= 2, "{numbers:?}");
    assert!(numbers.windows(2).all(|w| w[0] <= w[1]), "{numbers:?}");
    assert!(numbers.iter().any(|&n| n > 0 && n < 100), "{numbers:?}");
    let missing = pv(&["-d", "999999999:3"]).output().unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("pid 999999999: No such process"));
}

#[test]
fn several_meters_with_c_keep_their_own_lines() {
    let f = file_with(&data(2 * 1024 * 1024));
    let (controller, terminal) = pty();
    let script =
        r#""$EXE" pv -c -f -L 8M -i 0.1 -N one "$F" | "$EXE" pv -c -f -i 0.1 -N two > /dev/null"#;
    let mut child = Command::new("sh")
        .args(["-c", script])
        .env("EXE", EXE)
        .env("F", f.path())
        .stderr(Stdio::from(OwnedFd::from(terminal)))
        .spawn()
        .unwrap();
    let reader =
        std::thread::spawn(move || String::from_utf8(read_until_hangup(controller)).unwrap());
    assert!(child.wait().unwrap().success());
    let screen = reader.join().unwrap();
    // One meter has the first row and draws in place; the other draws a
    // line down and comes back up, every time. Which is which depends on
    // which started first.
    let moves = |name: &str| -> Vec<bool> {
        screen
            .split('\r')
            .filter(|draw| draw.contains(name))
            .map(|draw| draw.contains("\x1b[1A"))
            .collect()
    };
    let (one, two) = (moves("one: "), moves("two: "));
    assert!(!one.is_empty() && !two.is_empty(), "{screen:?}");
    assert!(one.iter().all(|&m| m == one[0]), "{screen:?}");
    assert!(two.iter().all(|&m| m == two[0]), "{screen:?}");
    assert_ne!(one[0], two[0], "{screen:?}");
}

#[test]
fn an_input_that_is_the_output_is_refused_with_status_4() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    std::fs::write(&path, b"grows forever if copied onto itself\n").unwrap();
    let out = pv(&["-q", path.to_str().unwrap()])
        .stdout(File::options().append(true).open(&path).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "pipespeed pv: {}: input file is also the output\n",
            path.display()
        )
    );
    assert_eq!(std::fs::read(&path).unwrap().len(), 36);
}

#[test]
fn with_capital_w_nothing_shows_before_the_first_byte() {
    // A producer that waits before sending anything.
    let mut producer = Command::new("sh")
        .args(["-c", "sleep 0.5; printf hello"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let out = pv(&["-f", "-W", "-n", "-b", "-i", "0.1"])
        .stdin(producer.stdout.take().unwrap())
        .output()
        .unwrap();
    producer.wait().unwrap();
    assert_eq!(out.stdout, b"hello");
    // Without -W, the first updates would say 0.
    let lines: Vec<&str> = std::str::from_utf8(&out.stderr).unwrap().lines().collect();
    assert!(
        !lines.is_empty() && lines.iter().all(|l| *l == "5"),
        "{lines:?}"
    );
}

/// `ulimit -f` on the `-U` store, SIGXFSZ left at its default: the
/// write fails with EFBIG (pipespeed ignores SIGXFSZ), "write failed",
/// status 16, as docs/pv.md says; not a death by SIGXFSZ (153).
#[test]
fn a_store_past_the_file_size_limit_is_a_write_failure_not_a_signal_death() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), vec![b'x'; 100_000]).unwrap();
    let script = "trap - XFSZ; ulimit -f 1; \"$P\" pv -q -U s f >out; echo $? >&2";
    let out = common::sh(dir.path(), script);
    assert_eq!(
        stderr(&out),
        "pipespeed pv: s: write failed: File too large\n16\n"
    );
}
