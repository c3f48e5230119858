//! What the parent hands down: standard descriptors it closed and a
//! `SIGPIPE` it ignored are seen as such, and treated as GNU cat treats
//! them, though the Rust runtime reopens closed descriptors on /dev/null
//! and ignores `SIGPIPE` before `main`.
//!
//! The shell does the closing (`>&-`) and the ignoring (`trap '' PIPE`,
//! which `exec` keeps), as a user's shell or systemd would.

#![allow(clippy::unwrap_used)]

use std::process::{Command, Output};

use crate::common;
use common::sh;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A directory holding `f` (a short text) and `big` (more than a pipe
/// holds, so a reader that goes away is noticed).
fn files() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), "hi\n").unwrap();
    std::fs::write(dir.path().join("big"), vec![b'x'; 4 << 20]).unwrap();
    dir
}

/// Whether `cat` is GNU's, to compare with.
fn gnu_cat() -> bool {
    let gnu = Command::new("cat")
        .arg("--version")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains("GNU coreutils"));
    if !gnu {
        common::skip(
            "gnu_cat",
            "the comparison with GNU cat needs GNU cat, and none is installed",
        );
    }
    gnu
}

/// `pipespeed cat` and GNU cat given the same descriptors by the shell:
/// `(stdout, stderr, status)` with GNU's program name replaced by ours.
fn cat_cases() -> [(&'static str, &'static str, &'static str, i32); 5] {
    [
        // (redirection and operands, stdout, stderr, status)
        ("f >&-", "", "standard output: Bad file descriptor\n", 1),
        (
            "- f <&-",
            "hi\n",
            "-: Bad file descriptor\nP: closing standard input: Bad file descriptor\n",
            1,
        ),
        (
            "<&-",
            "",
            "-: Bad file descriptor\nP: closing standard input: Bad file descriptor\n",
            1,
        ),
        ("f <&-", "hi\n", "", 0),
        ("f 2>&-", "hi\n", "", 0),
    ]
}

#[test]
fn closed_standard_descriptors_are_reported_as_gnu_cat_reports_them() {
    let dir = files();
    for (args, stdout, stderr_text, status) in cat_cases() {
        let out = sh(dir.path(), &format!("\"$P\" cat {args}"));
        let expected = stderr_text
            .lines()
            .map(|line| match line.strip_prefix("P: ") {
                Some(rest) => format!("pipespeed cat: {rest}\n"),
                None => format!("pipespeed cat: {line}\n"),
            })
            .collect::<String>();
        assert_eq!(String::from_utf8_lossy(&out.stdout), stdout, "cat {args}");
        assert_eq!(stderr(&out), expected, "cat {args}");
        assert_eq!(out.status.code(), Some(status), "cat {args}");
        if gnu_cat() {
            let gnu = sh(dir.path(), &format!("cat {args}"));
            assert_eq!(gnu.stdout, out.stdout, "GNU cat {args}");
            assert_eq!(
                stderr(&gnu).replace("cat: ", "pipespeed cat: "),
                expected,
                "GNU cat {args}"
            );
            assert_eq!(gnu.status.code(), Some(status), "GNU cat {args}");
        }
    }
}

/// A name that leads to a standard descriptor the parent closed does not
/// exist, as in GNU cat (coreutils 9.10 and 9.1): the Rust runtime put
/// /dev/null on the descriptor, and opening `/dev/stdin` reached it, so
/// `cat /dev/stdin <&-` printed nothing and exited 0.
#[test]
fn a_name_of_a_closed_standard_descriptor_does_not_exist() {
    let dir = files();
    for (name, closed) in [
        ("/dev/stdin", "<&-"),
        ("/proc/self/fd/0", "<&-"),
        ("/dev/fd/0", "<&-"),
        ("in", "<&-"),
        ("/dev/stderr", "2>&-"),
    ] {
        std::os::unix::fs::symlink("/dev/stdin", dir.path().join("in")).ok();
        let script = format!("\"$P\" cat {name} f {closed}");
        let out = sh(dir.path(), &script);
        assert_eq!(String::from_utf8_lossy(&out.stdout), "hi\n", "{script}");
        let expected = if closed == "2>&-" {
            String::new()
        } else {
            format!("pipespeed cat: {name}: No such file or directory\n")
        };
        assert_eq!(stderr(&out), expected, "{script}");
        assert_eq!(out.status.code(), Some(1), "{script}");
        if gnu_cat() {
            let gnu = sh(dir.path(), &format!("cat {name} f {closed}"));
            assert_eq!(
                stderr(&gnu).replace("cat: ", "pipespeed cat: "),
                expected,
                "GNU cat {name} {closed}"
            );
            assert_eq!(gnu.status.code(), Some(1), "GNU cat {name} {closed}");
        }
    }
    // What is open is still found, /dev/null too though it stands in for
    // the closed stdin.
    for script in [
        "\"$P\" cat /dev/null /proc/self/fd/3 3<f <&-",
        "\"$P\" cat /dev/stdin <f 2>&-",
    ] {
        let out = sh(dir.path(), script);
        assert_eq!(String::from_utf8_lossy(&out.stdout), "hi\n", "{script}");
        assert_eq!(stderr(&out), "", "{script}");
        assert_eq!(out.status.code(), Some(0), "{script}");
    }
}

#[test]
fn a_standard_output_on_dev_null_is_not_taken_for_a_closed_one() {
    let dir = files();
    let out = sh(
        dir.path(),
        "\"$P\" cat f >/dev/null && \"$P\" write --bytes 1M >/dev/null",
    );
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_command_whose_standard_output_is_closed_fails_before_doing_anything() {
    let dir = files();
    for (script, name) in [
        ("\"$P\" write --bytes 1M >&-", "standard output"),
        (
            "\"$P\" write --bytes 1K | \"$P\" read --bytes 1K >&-",
            "standard output",
        ),
        ("\"$P\" read --bytes 1K <&-", "standard input"),
        (
            "\"$P\" compare nosuch.json nosuch.json >&-",
            "standard output",
        ),
        ("\"$P\" --help >&-", "standard output"),
        ("\"$P\" latency --help >&-", "standard output"),
    ] {
        let out = sh(dir.path(), script);
        assert_eq!(out.status.code(), Some(1), "{script}: {}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!("pipespeed: {name}: Bad file descriptor\n"),
            "{script}"
        );
    }
}

#[test]
fn an_ignored_sigpipe_stays_ignored_and_a_gone_reader_is_a_write_error() {
    let dir = files();
    for options in ["", "-n"] {
        // cat's status is printed by the group it runs in.
        let script = format!(
            "trap '' PIPE; {{ \"$P\" cat {options} big; echo \"cat=$?\" >&2; }} | head -c1 >/dev/null"
        );
        let cat = sh(dir.path(), &script);
        assert_eq!(
            stderr(&cat),
            "pipespeed cat: write error: Broken pipe\ncat=1\n",
            "cat {options}"
        );
    }
    // Not ignored: death by SIGPIPE, quietly (status 141 in the shell).
    let cat = sh(
        dir.path(),
        "{ \"$P\" cat big; echo \"cat=$?\" >&2; } | head -c1 >/dev/null",
    );
    assert_eq!(stderr(&cat), "cat=141\n");
    if gnu_cat() {
        let gnu = sh(
            dir.path(),
            "trap '' PIPE; { cat big; echo \"cat=$?\" >&2; } | head -c1 >/dev/null",
        );
        assert_eq!(stderr(&gnu), "cat: write error: Broken pipe\ncat=1\n");
    }
}

#[test]
fn an_ignored_sigterm_stays_ignored_by_contend() {
    let dir = files();
    // `trap '' TERM` is kept by exec: contend starts with SIGTERM ignored,
    // as under nohup-like supervisors; the signal must change nothing.
    let out = sh(
        dir.path(),
        "trap '' TERM INT; \"$P\" contend --duration 1 --json r.json & pid=$!; \
         sleep 0.5; kill -TERM $pid; kill -INT $pid; wait $pid; echo \"status=$?\" >&2",
    );
    let err = stderr(&out);
    assert!(err.ends_with("status=0\n"), "{err}");
    assert!(dir.path().join("r.json").exists(), "{err}");
}
