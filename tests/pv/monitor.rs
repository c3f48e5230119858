//! `pv -M`: a command run with its standard input, output or both piped
//! through the meter. Every byte arrives once and in order, the command's
//! status is pv's, a signal to pv reaches the command, and the display
//! has one line a side, the output side's with the ratio.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process};

use super::stdio::reference_pv;
use super::*;

/// `pv` named pv (a symlink to the binary in a directory of its own),
/// so that it speaks pv's statuses; the directory goes with it.
fn named_pv() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let pv = dir.path().join("pv");
    symlink(EXE, &pv).unwrap();
    (dir, pv)
}

#[test]
fn every_byte_goes_through_the_command_whichever_side_is_metered() {
    for len in [0, 1, 64 * 1024 + 1, 8 << 20] {
        let input = data(len);
        for side in ["both", "in", "out", "2", "0", "1"] {
            let out = pv_piped(&["-q", "-M", side, "--", "cat"], &input);
            assert!(out.status.success(), "-M {side}, {len}: {}", stderr(&out));
            assert!(out.stdout == input, "-M {side}: {len} bytes changed");
            assert!(out.stderr.is_empty(), "-M {side}: {}", stderr(&out));
        }
    }
}

#[test]
fn the_transfer_modifiers_apply_to_the_metered_sides() {
    let input = data(100_000);
    // -S -s: each side stops at the size; -C: read/write; -l: lines.
    let out = pv_piped(&["-q", "-S", "-s", "1000", "-M", "in", "--", "cat"], &input);
    assert_eq!(out.stdout, &input[..1000], "{}", stderr(&out));
    for extra in [&["-C"][..], &["-l"], &["-L", "100M"], &["-B", "4K"]] {
        let args = [&["-q", "-M", "both"][..], extra, &["--", "cat"]].concat();
        let out = pv_piped(&args, &input);
        assert!(out.status.success(), "{extra:?}: {}", stderr(&out));
        assert!(out.stdout == input, "{extra:?}: the bytes changed");
    }
}

#[test]
fn an_unmetered_output_still_goes_to_o_or_nowhere_with_x() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("o");
    let out = pv_piped(
        &["-q", "-M", "in", "-o", file.to_str().unwrap(), "--", "cat"],
        b"hi\n",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read(&file).unwrap(), b"hi\n");
    assert!(out.stdout.is_empty());
    let out = pv_piped(&["-q", "-X", "-M", "in", "--", "cat"], b"hi\n");
    assert!(out.status.success() && out.stdout.is_empty(), "{out:?}");
}

#[test]
fn the_commands_status_is_pvs_and_a_signal_is_128_plus_its_number() {
    let out = pv_piped(&["-q", "-M", "both", "--", "sh", "-c", "exit 3"], b"x");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let out = pv_piped(&["-q", "-M", "both", "--", "sh", "-c", "kill -9 $$"], b"x");
    assert_eq!(out.status.code(), Some(137), "{}", stderr(&out));
    let out = pv_piped(&["-q", "-M", "out", "--", "sh", "-c", "exit 255"], b"");
    assert_eq!(out.status.code(), Some(255), "{}", stderr(&out));
}

#[test]
fn a_command_that_cannot_run_is_said_in_one_line_127_or_126() {
    let missing = "pipespeed-no-such-command";
    // A PATH of directories anyone may search: one that `nobody` may not
    // (root's own) makes execvp(3) say EACCES, and so 126, as env(1).
    let mut cmd = pv(&["-q", "-M", "both", "--", missing]);
    cmd.env("PATH", "/usr/bin:/bin");
    let out = run_piped(cmd, b"");
    assert_eq!(out.status.code(), Some(127));
    assert_eq!(
        stderr(&out),
        format!("pipespeed pv: cannot run {missing}: No such file or directory\n")
    );
    let out = pv_piped(&["-q", "-M", "both", "--", "/"], b"");
    assert_eq!(out.status.code(), Some(126));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
}

#[test]
fn a_command_that_stops_reading_ends_the_input_side_quietly() {
    let input = data(4 << 20);
    let out = pv_piped(&["-q", "-M", "both", "--", "head", "-c", "10"], &input);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(out.stdout, &input[..10]);
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    // Its status is still the one passed on.
    let script = "head -c 10 >/dev/null; exit 7";
    let out = pv_piped(&["-q", "-M", "in", "--", "sh", "-c", script], &input);
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
}

#[test]
fn an_exited_command_that_nobody_reads_for_ends_pv_without_waiting_for_input() {
    // Our standard input never ends: pv 1.12 waits for it; nobody could
    // read what came, so pv ends with the command.
    let mut child = pv(&["-q", "-M", "in", "--", "sh", "-c", "exit 4"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _held = child.stdin.take();
    let status = waited(&mut child, Duration::from_secs(20));
    assert_eq!(status.code(), Some(4));
    // The same with both sides metered and a display drawn: the drawing
    // thread once waited for ever for the abandoned input side.
    for args in [&["-f", "-M", "both"][..], &["-f", "-n", "-M", "in"]] {
        let mut child = pv(&[args, &["--", "sh", "-c", "exit 4"]].concat())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let _held = child.stdin.take();
        let start = Instant::now();
        let status = waited(&mut child, Duration::from_secs(20));
        assert_eq!(status.code(), Some(4), "{args:?}");
        assert!(start.elapsed() < Duration::from_secs(10), "{args:?}");
    }
}

/// A signal that comes once the command has exited, while a background
/// child of it still holds its standard output, ends pv (128 + N) rather
/// than waiting for that child.
#[test]
fn a_signal_after_the_command_exited_ends_the_wait_for_its_output() {
    let mut child = crate::common::catchable(EXE)
        .args([
            "pv",
            "-q",
            "-M",
            "out",
            "--",
            "sh",
            "-c",
            "sleep 15 & echo hi",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    kill_process(Pid::from_child(&child), Signal::TERM).unwrap();
    let start = Instant::now();
    let status = waited(&mut child, Duration::from_secs(20));
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(status.code(), Some(128 + 15));
}

#[test]
fn what_a_background_child_writes_after_the_command_exits_is_kept() {
    let script = "echo first; (sleep 0.3; echo last) &";
    let out = pv_piped(&["-q", "-M", "out", "--", "sh", "-c", script], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(out.stdout, b"first\nlast\n");
}

/// Waits for `child` at most `limit`, killing it past that.
fn waited(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            panic!("pv -M did not end");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits up to 20 s for `path` to hold a line.
fn written(path: &Path) -> String {
    let start = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "never written");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn sigterm_to_pv_reaches_the_command_and_pv_exits_with_its_status() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    for (signal, name) in [
        (Signal::TERM, "TERM"),
        (Signal::INT, "INT"),
        (Signal::HUP, "HUP"),
    ] {
        let _ = std::fs::remove_file(&pid_file);
        // The shell waits in `wait`, which a trapped signal interrupts;
        // its sleep holds none of the pipes (and may be gone already: the
        // signal goes to the command's whole group).
        let script = format!(
            "trap 'kill $! 2>/dev/null; echo got {name} >&2; exit 5' {name}; \
             sleep 60 </dev/null >/dev/null & echo $$ > {}; wait",
            pid_file.display()
        );
        let mut child = crate::common::catchable(EXE)
            .args(["pv", "-q", "-M", "both", "--", "sh", "-c", &script])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let _held = child.stdin.take();
        let shell: i32 = written(&pid_file).trim().parse().unwrap();
        kill_process(Pid::from_child(&child), signal).unwrap();
        let status = waited(&mut child, Duration::from_secs(20));
        let out = child.wait_with_output().unwrap();
        assert_eq!(status.code(), Some(5), "{name}: {}", stderr(&out));
        assert_eq!(stderr(&out), format!("got {name}\n"));
        // Reaped: no zombie, nothing left running.
        assert!(!Path::new(&format!("/proc/{shell}")).exists(), "{name}");
    }
}

#[test]
fn both_sides_are_drawn_on_a_terminal_the_output_side_with_the_ratio() {
    let (controller, terminal) = pty();
    let input = data(100_000);
    let f = file_with(&input);
    let mut child = pv(&["-M", "both", "-i", "100", "--", "cat"])
        .stdin(File::open(f.path()).unwrap())
        .stdout(Stdio::null())
        .stderr(terminal)
        .spawn()
        .unwrap();
    // Read while it draws: what is left unread when the terminal closes
    // is lost.
    let reader = std::thread::spawn(move || read_until_hangup(controller));
    assert!(child.wait().unwrap().success());
    let screen = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    // The last frame: below the last return to the first row.
    let last = screen.rsplit("\x1b[A").next().unwrap();
    let lines: Vec<&str> = last.split("\r\n").collect();
    assert_eq!(lines.len(), 3, "two lines and nothing after: {screen:?}");
    // The input side's size is its file's.
    assert!(lines[0].starts_with("97.7KiB 0:00:0"), "{screen:?}");
    assert!(lines[0].contains("100%"), "{screen:?}");
    assert!(lines[1].starts_with("97.7KiB 0:00:0"), "{screen:?}");
    assert!(!lines[0].contains(":1"), "the input side has no ratio");
    assert!(lines[1].trim_end().ends_with("] 1:1"), "{screen:?}");
    assert_eq!(lines[2], "");
}

/// Runs `program args` with `input` piped in, stdout thrown away: its
/// stderr and status.
fn said(program: &Path, args: &[&str], input: &[u8]) -> (String, Option<i32>) {
    let mut cmd = Command::new(program);
    cmd.args(args);
    let out = run_piped(cmd, input);
    (stderr(&out), out.status.code())
}

#[test]
fn messages_statuses_and_numbers_are_pv_1_12s() {
    let Some(reference) = reference_pv() else {
        return;
    };
    let (_dir, ours) = named_pv();
    let input = data(100_000);
    let cases: [&[&str]; 5] = [
        // No command: pv's words and status (64).
        &["-q", "-M", "both"],
        // -n with -b: the last line of each side, the ratio after the
        // output side's (an interval long enough that no other comes).
        &["-n", "-b", "-i", "100", "-M", "both", "--", "cat"],
        &["-n", "-b", "-i", "100", "-M", "in", "--", "cat"],
        // One -F for both sides; two: the first the input side's.
        &["-f", "-F", "%b", "-i", "100", "-M", "both", "--", "cat"],
        &[
            "-f",
            "-F",
            "<%b>",
            "-F",
            "%b %{ratio}",
            "-i",
            "100",
            "-M",
            "both",
            "--",
            "cat",
        ],
    ];
    for args in cases {
        let theirs = said(Path::new(&*reference), args, &input);
        assert_eq!(said(&ours, args, &input), theirs, "pv {args:?}");
    }
}

#[test]
fn after_a_signal_pv_does_not_wait_for_input_a_background_child_would_read() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    // The background cat keeps reading the command's standard input
    // after the shell has exited; pv's own input never ends.
    let script = format!(
        "trap 'exit 5' TERM; exec 3<&0; cat <&3 >/dev/null 3<&- & \
         echo $$ > {}; wait",
        pid_file.display()
    );
    let mut child = crate::common::catchable(EXE)
        .args(["pv", "-q", "-M", "in", "--", "sh", "-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _held = child.stdin.take();
    written(&pid_file);
    kill_process(Pid::from_child(&child), Signal::TERM).unwrap();
    let status = waited(&mut child, Duration::from_secs(20));
    assert_eq!(status.code(), Some(5));
}

#[test]
fn a_reader_that_goes_away_cuts_the_command_off_as_a_pipeline_does() {
    use std::io::Read;
    let mut child = pv(&["-q", "-M", "out", "--", "yes"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 4];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    assert_eq!(&first, b"y\ny\n");
    // Its stdout dropped: pv's write fails, pv closes the command's
    // pipe, and `yes` dies of SIGPIPE, as in `yes | head -1`.
    let status = waited(&mut child, Duration::from_secs(20));
    let out = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(128 + libc::SIGPIPE), "{}", stderr(&out));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}

/// A second signal ends pv at once (128 + N): the command goes with it,
/// not left running without its parent (here one that ignores SIGTERM).
#[test]
fn a_second_signal_takes_the_command_with_pv() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let script = format!(
        "trap '' TERM; echo $$ > {}; exec sleep 30",
        pid_file.display()
    );
    let mut child = crate::common::catchable(EXE)
        .args(["pv", "-q", "-M", "out", "--", "sh", "-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let command: i32 = written(&pid_file).trim().parse().unwrap();
    let pv_pid = Pid::from_child(&child);
    kill_process(pv_pid, Signal::TERM).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    kill_process(pv_pid, Signal::TERM).unwrap();
    let status = waited(&mut child, Duration::from_secs(20));
    assert_eq!(status.code(), Some(128 + 15));
    // Gone, or a zombie its new parent has yet to reap.
    let start = Instant::now();
    let gone = loop {
        let stat = std::fs::read_to_string(format!("/proc/{command}/stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|s| s.split_whitespace().next());
        if matches!(state, None | Some("Z")) {
            break true;
        }
        if start.elapsed() > Duration::from_secs(5) {
            break false;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    if !gone {
        let _ = kill_process(Pid::from_raw(command).unwrap(), Signal::KILL);
    }
    assert!(gone, "the command {command} is still running");
}

/// The state letter of process `pid` in /proc, `None` once it is gone.
fn state(pid: &str) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')')
        .next()
        .and_then(|s| s.split_whitespace().next())
        .map(str::to_owned)
}

/// A signal to pv ends it within a second or so (issue 36: it waited for
/// the command's child, `sleep 30`, and a second signal left that child
/// running): the command's whole process group is signalled, then
/// killed, and the command reaped; nothing of it is left running.
#[test]
fn a_signal_ends_pv_and_the_commands_children_at_once() {
    for signal in [Signal::TERM, Signal::INT, Signal::HUP] {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let script = format!("echo $$ > {}; sleep 30; true", pid_file.display());
        let mut child = crate::common::catchable(EXE)
            .args(["pv", "-q", "-M", "both", "--", "sh", "-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let shell = written(&pid_file).trim().to_owned();
        // The shell's child, the sleep, once it is started.
        let children = format!("/proc/{shell}/task/{shell}/children");
        let start = Instant::now();
        let sleep = loop {
            let text = std::fs::read_to_string(&children).unwrap_or_default();
            if let Some(pid) = text.split_whitespace().next() {
                break pid.to_owned();
            }
            assert!(start.elapsed() < Duration::from_secs(20), "no sleep");
            std::thread::sleep(Duration::from_millis(10));
        };
        let sent = Instant::now();
        kill_process(Pid::from_child(&child), signal).unwrap();
        let status = waited(&mut child, Duration::from_secs(20));
        let took = sent.elapsed();
        // pv has signalled and killed the group before it exits; the
        // sleep dies when it next runs, which on one busy CPU may come a
        // little after pv's exit (once, in CI's one-CPU pass, it had not).
        let deadline = Instant::now() + Duration::from_secs(2);
        let left = loop {
            let left = state(&sleep);
            if matches!(left.as_deref(), None | Some("Z")) || Instant::now() >= deadline {
                break left;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        if !matches!(left.as_deref(), None | Some("Z")) {
            let _ = kill_process(Pid::from_raw(sleep.parse().unwrap()).unwrap(), Signal::KILL);
        }
        let out = child.wait_with_output().unwrap();
        let what = format!("{signal:?}: {}", stderr(&out));
        assert!(took < Duration::from_secs(2), "{what}: pv took {took:?}");
        assert!(
            matches!(left.as_deref(), None | Some("Z")),
            "{what}: the command's sleep {sleep} was left running"
        );
        assert_eq!(state(&shell), None, "{what}: the shell was not reaped");
        // The shell died of the signal sent on to it: 128 + N.
        assert_eq!(status.code(), Some(128 + signal.as_raw()), "{what}");
    }
}
