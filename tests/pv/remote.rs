//! `-R` and `-Q`: one live meter changed and asked by another process.

use std::io::Read;

use super::*;

/// A meter copying a pipe at a slow rate, with its display on a pipe, and
/// a way to feed it.
struct Live {
    child: std::process::Child,
    input: Option<std::process::ChildStdin>,
}

impl Live {
    fn start(args: &[&str]) -> Live {
        let mut child = pv(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let input = child.stdin.take();
        Live { child, input }
    }

    fn pid(&self) -> String {
        self.child.id().to_string()
    }

    /// Sends `bytes`, ends the input and returns the meter's stderr once
    /// it has finished, and whether it succeeded.
    fn finish(mut self, bytes: &[u8]) -> (bool, String) {
        let mut input = self.input.take().unwrap();
        input.write_all(bytes).unwrap();
        drop(input);
        let mut err = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        (self.child.wait().unwrap().success(), err)
    }
}

/// Waits until the meter of `pid` answers a query (its listener is up).
fn wait_for_meter(pid: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let out = pv(&["-Q", pid]).output().unwrap();
        if out.status.success() {
            return String::from_utf8(out.stdout).unwrap();
        }
        assert!(Instant::now() < deadline, "{}", stderr(&out));
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn another_process_changes_the_display_and_lifts_the_rate_limit() {
    let meter = Live::start(&["-f", "-b", "-i", "0.05", "-L", "1000"]);
    let pid = meter.pid();
    let answer = wait_for_meter(&pid);
    assert!(answer.ends_with("B\n"), "{answer:?}");
    let changed = pv(&["-R", &pid, "-N", "remote", "-F", "%N %b"])
        .output()
        .unwrap();
    assert!(changed.status.success(), "{}", stderr(&changed));
    // 1 MiB at 1000 bytes a second would take 17 minutes: the new limit
    // lets it end at once. Every -R says the whole display (pv 1.12).
    let lifted = pv(&["-R", &pid, "-L", "1G", "-N", "remote", "-F", "%N %b"])
        .output()
        .unwrap();
    assert!(lifted.status.success(), "{}", stderr(&lifted));
    let start = Instant::now();
    let (ok, err) = meter.finish(&data(1 << 20));
    assert!(ok, "{err}");
    assert!(start.elapsed() < Duration::from_secs(60));
    let last = err
        .split(['\r', '\n'])
        .rfind(|l| !l.trim().is_empty())
        .unwrap();
    assert_eq!(last.trim_end(), "   remote: 1.00MiB");
}

/// pv 1.12: every `-R` says the whole display, pv's default (`-p -t -e
/// -r -b`, no name, no format) when it names no item: pv's own suite
/// ("Transfer: --remote") sends `-a`, then `-L 10M`, and needs two line
/// lengths however the first line and the `-a` race.
#[test]
fn a_change_that_names_no_item_sets_the_default_display_back() {
    let meter = Live::start(&["-f", "-N", "before", "-a", "-i", "0.05", "-L", "1000"]);
    let pid = meter.pid();
    wait_for_meter(&pid);
    let lifted = pv(&["-R", &pid, "-L", "1G"]).output().unwrap();
    assert!(lifted.status.success(), "{}", stderr(&lifted));
    let (ok, err) = meter.finish(&data(1 << 20));
    assert!(ok, "{err}");
    let last = err
        .split(['\r', '\n'])
        .rfind(|l| !l.trim().is_empty())
        .unwrap();
    assert!(last.starts_with("1.00MiB 0:00:"), "{last:?}");
    assert!(!last.contains("before"), "{last:?}");
}

#[test]
fn a_query_prints_the_meters_line() {
    let meter = Live::start(&["-q", "-b", "-L", "100K"]);
    let pid = meter.pid();
    let answer = wait_for_meter(&pid);
    assert_eq!(answer.lines().count(), 1, "{answer:?}");
    let (ok, _) = meter.finish(&[]);
    assert!(ok);
}

#[test]
fn no_meter_at_a_pid_is_one_line_and_status_1() {
    // A process that is surely gone: a child that has been waited for.
    let mut gone = Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let pid = gone.id().to_string();
    for args in [&["-R", pid.as_str(), "-L", "1M"][..], &["-Q", pid.as_str()]] {
        let out = pv(args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = stderr(&out);
        assert_eq!(err, format!("pipespeed pv: pid {pid}: No such process\n"));
    }
    // A live process that is no meter.
    let me = std::process::id().to_string();
    let out = pv(&["-Q", &me]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!("pipespeed pv: -Q {me}: not a meter of this user\n")
    );
}
