//! A meter stopped by SIGINT, SIGTERM or SIGHUP removes what it made (the `-P`
//! pidfile, its control socket, `-c`'s row counter), says so in one line
//! and exits 32, as pv 1.12 does; a meter that finds the socket of a dead
//! one removes it.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process};

use super::stdio::reference_pv;
use super::{EXE, stderr};

/// Waits up to 20 s for `ready`.
fn wait_for(what: &str, ready: impl Fn() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < Duration::from_secs(20), "{what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits up to 20 s for `child` to end, killing it after that.
fn ended(mut child: Child) -> std::process::Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("the meter did not end on the signal");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

/// `program args -P DIR/pid` on an input that never ends (a pipe held
/// open), with `XDG_RUNTIME_DIR` its own directory, started.
fn meter(program: &str, args: &[&str], dir: &Path) -> (Child, std::process::ChildStdin) {
    let mut child = super::common::catchable(program)
        .args(args)
        .arg("-P")
        .arg(dir.join("pid"))
        .env("XDG_RUNTIME_DIR", dir.join("run"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = child.stdin.take().unwrap();
    (child, input)
}

fn signal(child: &Child, signal: Signal) {
    kill_process(Pid::from_child(child), signal).unwrap();
}

#[test]
fn sigint_sigterm_and_sighup_remove_the_pidfile_socket_and_counter_and_exit_32() {
    let cases = [
        (Signal::INT, "Interrupt"),
        (Signal::TERM, "Terminated"),
        (Signal::HUP, "Hangup"),
    ];
    for (sig, words) in cases {
        for args in [&["pv", "-q"][..], &["pv", "-c", "-f", "-i", "0.1"]] {
            let dir = tempfile::tempdir().unwrap();
            let run = dir.path().join("run");
            std::fs::create_dir(&run).unwrap();
            // The socket of a meter that died without removing it.
            let sockets = run.join("pipespeed-pv");
            std::fs::create_dir(&sockets).unwrap();
            // Private, or the meter passes it over.
            std::fs::set_permissions(&sockets, std::fs::Permissions::from_mode(0o700)).unwrap();
            let mut gone = Command::new("true").spawn().unwrap();
            gone.wait().unwrap();
            let stale = sockets.join(format!("{}.sock", gone.id()));
            std::fs::write(&stale, "").unwrap();
            let (mut child, input) = meter(EXE, args, dir.path());
            let socket = sockets.join(format!("{}.sock", child.id()));
            let pidfile = dir.path().join("pid");
            wait_for("the meter's pidfile and socket", || {
                pidfile.exists() && socket.exists()
            });
            assert!(!stale.exists(), "{args:?}: a dead meter's socket stayed");
            // With -f, the signal comes once the meter's line is drawn: the
            // words must still be on a line of their own.
            let mut drawn = Vec::new();
            if args.contains(&"-f") {
                let mut err = child.stderr.take().unwrap();
                let mut byte = [0u8; 1];
                while !drawn.ends_with(b"]") {
                    assert_eq!(err.read(&mut byte).unwrap(), 1, "{args:?}: no line drawn");
                    drawn.push(byte[0]);
                }
                child.stderr = Some(err);
            }
            signal(&child, sig);
            let mut out = ended(child);
            drop(input);
            drawn.append(&mut out.stderr);
            out.stderr = drawn;
            let what = format!("{sig:?} {args:?}: {}", stderr(&out));
            assert_eq!(out.status.code(), Some(32), "{what}");
            let last = stderr(&out)
                .rsplit(['\r', '\n'])
                .find(|l| !l.is_empty())
                .unwrap_or_default()
                .to_owned();
            assert_eq!(
                last,
                format!("pipespeed pv: interrupted by a signal: {words}"),
                "{what}"
            );
            assert!(!pidfile.exists(), "{what}: the pidfile stayed");
            // Nothing left of the meter: no socket, no row counter.
            let left: Vec<_> = std::fs::read_dir(&run)
                .unwrap()
                .chain(std::fs::read_dir(&sockets).unwrap())
                .map(|e| e.unwrap().file_name())
                .filter(|n| n != "pipespeed-pv")
                .collect();
            assert!(left.is_empty(), "{what}: {left:?} stayed");
        }
    }
}

#[test]
fn pv_1_12_removes_its_pidfile_and_exits_32_too() {
    let Some(theirs) = reference_pv() else {
        return;
    };
    for sig in [Signal::INT, Signal::TERM, Signal::HUP] {
        let dir = tempfile::tempdir().unwrap();
        let (child, input) = meter(&theirs, &["-q"], dir.path());
        let pidfile = dir.path().join("pid");
        wait_for("pv 1.12's pidfile", || {
            std::fs::read_to_string(&pidfile).is_ok_and(|t| t.ends_with('\n'))
        });
        signal(&child, sig);
        let out = ended(child);
        drop(input);
        assert_eq!(out.status.signal(), None, "{sig:?}");
        assert_eq!(out.status.code(), Some(32), "{sig:?}");
        assert!(!pidfile.exists(), "{sig:?}");
        assert!(
            stderr(&out).starts_with("pv: interrupted by a signal: "),
            "{sig:?}: {}",
            stderr(&out)
        );
    }
}

/// A FIFO named by `-o` waits for its reader (as in pv); a signal ends
/// the wait: status 32. (The pidfile is written once the targets are
/// open, so there is none yet to remove.)
#[test]
fn a_signal_ends_the_wait_for_a_fifos_reader() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    crate::common::fifo::mkfifo(&fifo);
    std::fs::create_dir(dir.path().join("run")).unwrap();
    let (child, input) = meter(EXE, &["pv", "-q", "-o", fifo.to_str().unwrap()], dir.path());
    // Waiting in open(2) for a reader (`wait_for_partner` in the kernel's
    // fs/pipe.c): the signal comes then; or at once where no thread's
    // wchan can be read (then the wait cannot be seen, and the signal may
    // come before it); or after 20 s whatever the meter is doing, so that
    // the meter never outlives the test.
    let tasks = format!("/proc/{}/task", child.id());
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        let wchans: Vec<String> = std::fs::read_dir(&tasks)
            .map(|tasks| {
                tasks
                    .flatten()
                    .filter_map(|t| std::fs::read_to_string(t.path().join("wchan")).ok())
                    .collect()
            })
            .unwrap_or_default();
        if wchans.is_empty() || wchans.iter().any(|w| w == "wait_for_partner") {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    signal(&child, Signal::TERM);
    let out = ended(child);
    drop(input);
    assert_eq!(out.status.code(), Some(32), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "pipespeed pv: interrupted by a signal: Terminated\n"
    );
}

/// `-d` with `-P`: the pidfile holds the ID while the watch runs, and a
/// signal ends the watch and removes it.
#[test]
fn a_watch_holds_its_pidfile_and_a_signal_removes_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, "watched\n").unwrap();
    let mut watched = Command::new("sleep")
        .arg("60")
        .stdin(std::fs::File::open(&file).unwrap())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let target = format!("{}:0", watched.id());
    std::fs::create_dir(dir.path().join("run")).unwrap();
    let (child, input) = meter(EXE, &["pv", "-q", "-d", &target], dir.path());
    let pidfile = dir.path().join("pid");
    let pid = format!("{}\n", child.id());
    wait_for("the watch's pidfile", || {
        std::fs::read_to_string(&pidfile).is_ok_and(|t| t == pid)
    });
    signal(&child, Signal::TERM);
    let out = ended(child);
    drop(input);
    watched.kill().unwrap();
    watched.wait().unwrap();
    assert_eq!(out.status.code(), Some(32), "{}", stderr(&out));
    assert!(!pidfile.exists());
}

/// Two signals in quick succession (issue 36): the second must not skip
/// the clean-up the first started. Both files go, and the status is the
/// first signal's 32.
#[test]
fn a_second_signal_still_removes_the_pidfile_and_socket() {
    for (first, second) in [
        (Signal::TERM, Signal::HUP),
        (Signal::INT, Signal::TERM),
        (Signal::HUP, Signal::INT),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        std::fs::create_dir(&run).unwrap();
        let (child, input) = meter(EXE, &["pv", "-q"], dir.path());
        let socket = run
            .join("pipespeed-pv")
            .join(format!("{}.sock", child.id()));
        let pidfile = dir.path().join("pid");
        // The pidfile holds the ID once pv has made both (as a script
        // waiting for it reads it).
        wait_for("the meter's pidfile and socket", || {
            std::fs::read_to_string(&pidfile).is_ok_and(|id| id.ends_with('\n')) && socket.exists()
        });
        signal(&child, first);
        signal(&child, second);
        let out = ended(child);
        drop(input);
        let what = format!("{first:?} then {second:?}: {}", stderr(&out));
        assert!(!pidfile.exists(), "{what}: the pidfile stayed");
        assert!(!socket.exists(), "{what}: the socket stayed");
        assert_eq!(out.status.code(), Some(32), "{what}");
    }
}

/// A meter held where it cannot look at its flag (`-d @FIFO` waiting for
/// the list's writer in open(2)) still ends at a second signal, at once,
/// with the first signal's 32 and its pidfile removed: a second signal
/// that only repeated the first left it alive past any number of them.
#[test]
fn a_second_signal_ends_a_meter_held_in_a_blocking_call() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("list");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let pidfile = dir.path().join("pid");
    let list = format!("@{}", fifo.display());
    let child = super::common::catchable(EXE)
        .args(["pv", "-q", "-d", &list, "-P"])
        .arg(&pidfile)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Give it time to block in open(2) of the FIFO.
    std::thread::sleep(Duration::from_millis(500));
    signal(&child, Signal::TERM);
    std::thread::sleep(Duration::from_millis(200));
    signal(&child, Signal::TERM);
    let start = Instant::now();
    let mut child = child;
    while child.try_wait().unwrap().is_none() && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let alive = child.try_wait().unwrap().is_none();
    if alive {
        let _ = child.kill();
    }
    let out = child.wait_with_output().unwrap();
    assert!(!alive, "alive 5 s after a second SIGTERM");
    assert_eq!(out.status.code(), Some(32), "{}", stderr(&out));
    assert!(!pidfile.exists(), "the pidfile stayed");
}
